// The PostgreSQL store's row codecs and SQL builders: how each record maps to columns and back,
// text escaping, and the WHERE/ORDER clauses of pages and log filters.
import type { Organization } from '../../schemas.ts';
import type { ApiKeyRecord, EvaluatorRecord, ExecutionLogRecord, JudgeRecord, LogFilter, LogValueField, Page, PageQuery, ProjectRecord, ValueQuery } from '../types.ts';

export type Row = Record<string, any>;

// PostgreSQL text cannot hold the NUL character (U+0000), which JSON text and so the JSON store can.
// Text values are escaped on the way in and unescaped on the way out, with a private-use character
// as the escape: NUL -> ESC "0", ESC -> ESC ESC. The mapping is one-to-one, leaves every string
// without those two characters unchanged, and keeps equality and substring search working. JSON
// documents need none of this: `json` keeps \u0000 escapes as written.
export const ESC = '\u{F0000}';
export const NEEDS_ESCAPE = /[\u0000\u{F0000}]/u;
export function encodeText(s: string): string {
  return NEEDS_ESCAPE.test(s) ? s.replace(/[\u0000\u{F0000}]/gu, (c) => (c === ESC ? ESC + ESC : `${ESC}0`)) : s;
}
export function decodeText(s: string): string {
  return s.includes(ESC) ? s.replace(/\u{F0000}(\u{F0000}|0)/gu, (_, c: string) => (c === ESC ? ESC : '\u0000')) : s;
}
export const encodeParam = (v: unknown): unknown =>
  typeof v === 'string' ? encodeText(v) : Array.isArray(v) && v.every((x) => typeof x === 'string') ? v.map((x) => encodeText(x as string)) : v;
/** Text columns and text[] columns come back unescaped; json columns arrive parsed and are left alone. */
export const TEXT_ARRAY_COLUMNS = new Set(['tags', 'evaluator_ids']);
export function decodeRow(row: Row): Row {
  for (const [k, v] of Object.entries(row)) {
    if (typeof v === 'string') row[k] = decodeText(v);
    else if (TEXT_ARRAY_COLUMNS.has(k) && Array.isArray(v)) row[k] = v.map((x) => (typeof x === 'string' ? decodeText(x) : x));
  }
  return row;
}
export const iso = (d: Date | null): string | null => (d === null ? null : d.toISOString());
/** A JSON document parameter: serialized as is (never text-escaped, see encodeText). */
export class JsonParam {
  constructor(private readonly value: unknown) {}
  toPostgres(): string {
    return JSON.stringify(this.value ?? null);
  }
}
export const json = (v: unknown) => new JsonParam(v);

/** Fields of `record` that have no column: kept in `extra`. */
export function extraOf(record: object, columns: readonly string[]): JsonParam {
  const extra: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(record)) if (!columns.includes(k) && v !== undefined) extra[k] = v;
  return json(extra);
}

// Column lists, in insert order. Each table's row <-> record mapping lives beside its list.

export const ORG_COLUMNS = ['id', 'name', 'is_demo', 'created_at'] as const;
export const orgFromRow = (r: Row): Organization => ({ ...r.extra, id: r.id, name: r.name, is_demo: r.is_demo, created_at: iso(r.created_at)! });

export const KEY_COLUMNS = ['id', 'org_id', 'name', 'prefix', 'hash', 'created_at', 'expires_at', 'last_used_at', 'revoked_at'] as const;
export const keyFromRow = (r: Row): ApiKeyRecord => ({
  ...r.extra,
  id: r.id,
  org_id: r.org_id,
  name: r.name,
  prefix: r.prefix,
  hash: r.hash,
  created_at: iso(r.created_at)!,
  expires_at: iso(r.expires_at),
  last_used_at: iso(r.last_used_at),
  revoked_at: iso(r.revoked_at),
});

export const PROJECT_COLUMNS = ['id', 'org_id', 'name', 'description', 'is_default', 'created_at'] as const;
export const projectFromRow = (r: Row): ProjectRecord => ({
  ...r.extra,
  id: r.id,
  org_id: r.org_id,
  name: r.name,
  description: r.description,
  is_default: r.is_default,
  created_at: iso(r.created_at)!,
});

export const EVALUATOR_COLUMNS = [
  'id',
  'org_id',
  'name',
  'intent',
  'rubric',
  'requires_contexts',
  'requires_expected_output',
  'demonstrations',
  'model',
  'visibility',
  'is_preset',
  'project_id',
  'version',
  'created_at',
  'updated_at',
] as const;
export const evaluatorValues = (e: EvaluatorRecord) => [
  e.id,
  e.org_id,
  e.name,
  e.intent,
  e.rubric,
  e.requires_contexts,
  e.requires_expected_output,
  json(e.demonstrations),
  e.model,
  e.visibility,
  e.is_preset,
  e.project_id,
  e.version,
  e.created_at,
  e.updated_at,
  extraOf(e, EVALUATOR_COLUMNS),
];
export const evaluatorFromRow = (r: Row): EvaluatorRecord => recordFromRow(r, EVALUATOR_COLUMNS);
/** Insert (and update) order: the columns, then extra. */
export const EVALUATOR_INSERT_COLUMNS = [...EVALUATOR_COLUMNS, 'extra'];

export const JUDGE_COLUMNS = ['id', 'org_id', 'name', 'intent', 'stage', 'visibility', 'project_id', 'evaluators', 'version', 'created_at', 'updated_at'] as const;
export const judgeValues = (j: JudgeRecord) => [
  j.id,
  j.org_id,
  j.name,
  j.intent,
  j.stage,
  j.visibility,
  j.project_id,
  json(j.evaluators),
  j.evaluators.map((e) => e.id),
  j.version,
  j.created_at,
  j.updated_at,
  extraOf(j, JUDGE_COLUMNS),
];
export const judgeFromRow = (r: Row): JudgeRecord => recordFromRow(r, JUDGE_COLUMNS);
/** Insert (and update) order: judgeValues's, with evaluator_ids (migration 003's filter column) after the evaluators. */
export const JUDGE_INSERT_COLUMNS = [...JUDGE_COLUMNS.slice(0, 8), 'evaluator_ids', ...JUDGE_COLUMNS.slice(8), 'extra'];

/**
 * A record whose fields are its columns, in column order, after what `extra` kept; timestamps
 * (created_at, updated_at) come back as ISO-8601 text, as they were written.
 */
export function recordFromRow<T>(r: Row, columns: readonly string[]): T {
  const record: Row = { ...r.extra };
  for (const c of columns) record[c] = r[c] instanceof Date ? iso(r[c]) : r[c];
  return record as T;
}

export const LOG_COLUMNS = [
  'id',
  'org_id',
  'type',
  'judge_id',
  'judge_name',
  'judge_version',
  'evaluator_id',
  'evaluator_name',
  'evaluator_version',
  'project_id',
  'request',
  'response',
  'contexts',
  'expected_output',
  'user_id',
  'tags',
  'evaluator_results',
  'score',
  'cost_usd',
  'latency_ms',
  'created_at',
] as const;
/**
 * Insert order: LOG_COLUMNS, then evaluator_ids, session_id, batch_execution_id (migration 008, likewise), trace_id and span_id (migration 020, likewise) and extra. session_id is a filter column
 * only (migration 005): the record's own session_id travels in extra, so a record reads back exactly
 * as written (absent, null or a value), as from the JSON store.
 */
export const LOG_INSERT_COLUMNS = [...LOG_COLUMNS, 'evaluator_ids', 'session_id', 'batch_execution_id', 'trace_id', 'span_id', 'extra'];
export function logEvaluatorIds(log: Pick<ExecutionLogRecord, 'evaluator_id' | 'evaluator_results'>): string[] {
  const ids = new Set<string>();
  if (log.evaluator_id) ids.add(log.evaluator_id);
  for (const r of log.evaluator_results) ids.add(r.evaluator_id);
  return [...ids];
}
export const logValues = (l: ExecutionLogRecord) => [
  l.id,
  l.org_id,
  l.type,
  l.judge_id,
  l.judge_name,
  l.judge_version,
  l.evaluator_id,
  l.evaluator_name,
  l.evaluator_version,
  l.project_id,
  l.request,
  l.response,
  l.contexts === null || l.contexts === undefined ? null : json(l.contexts),
  l.expected_output,
  l.user_id,
  l.tags,
  json(l.evaluator_results),
  l.score,
  l.cost_usd,
  l.latency_ms,
  l.created_at,
  logEvaluatorIds(l),
  l.session_id ?? null,
  l.batch_execution_id ?? null,
  l.trace_id ?? null,
  l.span_id ?? null,
  extraOf(l, LOG_COLUMNS),
];
export const logFromRow = (r: Row): ExecutionLogRecord => ({
  ...r.extra,
  id: r.id,
  org_id: r.org_id,
  type: r.type,
  judge_id: r.judge_id,
  judge_name: r.judge_name,
  judge_version: r.judge_version,
  evaluator_id: r.evaluator_id,
  evaluator_name: r.evaluator_name,
  evaluator_version: r.evaluator_version,
  project_id: r.project_id,
  request: r.request,
  response: r.response,
  contexts: r.contexts,
  expected_output: r.expected_output,
  user_id: r.user_id,
  tags: r.tags,
  evaluator_results: r.evaluator_results,
  score: r.score,
  cost_usd: r.cost_usd,
  latency_ms: r.latency_ms,
  created_at: iso(r.created_at)!,
});

export const placeholders = (count: number, offset = 0) => Array.from({ length: count }, (_, i) => `$${i + 1 + offset}`).join(', ');

/** Builds `WHERE ... ORDER BY created_at DESC, id DESC LIMIT n+1` for a newest-first page. */
export class PageSql {
  readonly where: string[] = [];
  readonly params: unknown[] = [];
  /** Adds a parameter and answers its placeholder. */
  p(value: unknown): string {
    this.params.push(value);
    return `$${this.params.length}`;
  }
  sql(table: string, page: PageQuery): string {
    if (page.after) this.where.push(`(created_at, id) < (${this.p(page.after.created_at)}::timestamptz, ${this.p(page.after.id)}::text)`);
    const where = this.where.length ? `WHERE ${this.where.join(' AND ')}` : '';
    return `SELECT * FROM ${table} ${where} ORDER BY created_at DESC, id DESC LIMIT ${this.p(page.limit + 1)}`;
  }
}

export function toPage<T extends { created_at: string; id: string }>(rows: Row[], page: PageQuery, fromRow: (r: Row) => T): Page<T> {
  const items = rows.slice(0, page.limit).map(fromRow);
  const lastItem = items[items.length - 1];
  return { items, last: rows.length > page.limit && lastItem ? { created_at: lastItem.created_at, id: lastItem.id } : undefined };
}

/** The log filter as SQL over real columns; each clause has an index (see migrations/001_initial.sql). */
export function logFilterSql(q: PageSql, f: LogFilter): void {
  q.where.push(`org_id = ${q.p(f.org_id)}`);
  if (f.judge_id !== undefined) q.where.push(`judge_id = ${q.p(f.judge_id)}`);
  if (f.evaluator_id !== undefined) q.where.push(`evaluator_ids @> ARRAY[${q.p(f.evaluator_id)}::text]`);
  if (f.project_id !== undefined) q.where.push(`project_id = ${q.p(f.project_id)}`);
  if (f.min_score !== undefined) q.where.push(`score >= ${q.p(f.min_score)}`);
  if (f.max_score !== undefined) q.where.push(`score <= ${q.p(f.max_score)}`);
  if (f.min_cost !== undefined) q.where.push(`cost_usd >= ${q.p(f.min_cost)}`);
  if (f.max_cost !== undefined) q.where.push(`cost_usd <= ${q.p(f.max_cost)}`);
  if (f.tags?.length) q.where.push(`tags @> ${q.p(f.tags)}::text[]`);
  if (f.session_id !== undefined) q.where.push(`session_id = ${q.p(f.session_id)}`);
  if (f.batch_execution_id !== undefined) q.where.push(`batch_execution_id = ${q.p(f.batch_execution_id)}`);
  if (f.in_batch !== undefined) q.where.push(f.in_batch ? 'batch_execution_id IS NOT NULL' : 'batch_execution_id IS NULL');
  if (f.user_id !== undefined) q.where.push(`user_id = ${q.p(f.user_id)}`);
  if (f.trace_id !== undefined) q.where.push(`trace_id = ${q.p(f.trace_id)}`); // migration 020
  if (f.span_id !== undefined) q.where.push(`span_id = ${q.p(f.span_id)}`);
  if (f.type !== undefined) q.where.push(`type = ${q.p(f.type)}`); // h-proxy (migration 012)
  if (f.date_from !== undefined) q.where.push(`created_at >= ${q.p(f.date_from)}::timestamptz`);
  if (f.date_to !== undefined) q.where.push(`created_at <= ${q.p(f.date_to)}::timestamptz`);
}

/** The log filter's WHERE clause and parameters alone (counting in the benchmark). */
export function logWhere(filter: LogFilter): { where: string; params: unknown[] } {
  const q = new PageSql();
  logFilterSql(q, filter);
  return { where: q.where.join(' AND '), params: q.params };
}

/** The SQL and parameters of a log page query, for EXPLAIN in the benchmark. */
export function logPageQuery(filter: LogFilter, page: PageQuery): { sql: string; params: unknown[] } {
  const q = new PageSql();
  logFilterSql(q, filter);
  const inner = q.sql('execution_logs', page).replace('SELECT *', 'SELECT id, created_at');
  // Find the page's ids first (from an index alone where one covers every filter), then read
  // just those rows whole.
  return { sql: `SELECT l.* FROM execution_logs l JOIN (${inner}) p USING (id) ORDER BY p.created_at DESC, p.id DESC`, params: q.params };
}

export function visibilitySql(q: PageSql, f: { org_id: string; include_public: boolean; include_presets?: boolean }): void {
  // include_presets (issue 26): the shipped presets, which belong to no organization.
  if (f.include_public) q.where.push(`(org_id = ${q.p(f.org_id)} OR visibility = 'public')`);
  else q.where.push(f.include_presets ? `(org_id = ${q.p(f.org_id)} OR org_id IS NULL)` : `org_id = ${q.p(f.org_id)}`);
}

export function searchSql(q: PageSql, search: string | undefined, columns: string[]): void {
  if (!search) return;
  const needle = q.p(search);
  q.where.push(`(${columns.map((c) => `strpos(lower(${c}), lower(${needle})) > 0`).join(' OR ')})`);
}

/** LIKE pattern for "starts with `prefix`": the prefix's own %, _ and \\ match only themselves. */
export const startsWithPattern = (prefix: string) => `${prefix.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;

/**
 * Distinct values of a log column for one organization, bytewise ascending, after `after`, by the
 * partial indexes of migration 005 (the C collation lets a LIKE prefix use them).
 */
export function logValuesQuery(orgId: string, field: LogValueField, query: ValueQuery): { sql: string; params: unknown[] } {
  const params: unknown[] = [orgId];
  const p = (v: unknown) => (params.push(v), `$${params.length}`);
  const column = `${field} COLLATE "C"`;
  // user_id predates the 200-character limit: the index covers the values that fit it.
  const where = [`org_id = $1`, `${field} IS NOT NULL`, ...(field === 'user_id' ? ['length(user_id) <= 200'] : [])];
  if (query.starts_with) where.push(`${column} LIKE ${p(startsWithPattern(query.starts_with))}`);
  if (query.after !== undefined) where.push(`${column} > ${p(query.after)}`);
  return { sql: `SELECT DISTINCT ${column} AS value FROM execution_logs WHERE ${where.join(' AND ')} ORDER BY 1 LIMIT ${p(query.limit + 1)}`, params };
}

/** Tables whose rows carry org_id and leave with their organization (purgeOrganization), children first. */
export const ORG_TABLES = [
  'annotations',
  'calibration_runs',
  'batch_executions',
  'datasets',
  'execution_logs',
  'judges',
  'evaluators',
  'projects',
  'api_keys',
  'models',
  'result_cache',
  'budget_caps',
  'budget_counters',
  'budget_holds',
  'provider_batches',
  'files',
] as const;
