// The PostgreSQL store: the same Store contract as the JSON store, for several instances on one
// database.
//
// - The schema comes from src/store/migrations (see migrate-schema.ts), applied at init.
// - Filtered and sorted fields are real columns; document-shaped parts are JSON documents (`json`,
//   which keeps key order); fields a record has beyond the known columns go to `extra` and come back
//   unchanged.
// - Every write is one statement or one transaction, committed before the call returns: an
//   acknowledged write is durable. Optimistic updates are `UPDATE ... WHERE version = expected`.
// - An unreachable database becomes StoreUnavailableError (the server answers 503). The pool opens
//   fresh connections on demand, so the store recovers by itself when the database returns. Reads,
//   and any statement whose connection could not even be opened, are retried briefly first.
import pg from 'pg';
import type { Organization } from '../schemas.ts';
import { migrateSchema } from './migrate-schema.ts';
import {
  StoreConflictError,
  StoreUnavailableError,
  type ApiKeyRecord,
  type ConflictReason,
  type EvaluatorFilter,
  type EvaluatorRecord,
  type ExecutionLogRecord,
  type JudgeFilter,
  type JudgeRecord,
  type LogFilter,
  type Page,
  type PageQuery,
  type ProjectRecord,
  type Store,
} from './types.ts';

export interface PostgresStoreOptions {
  connectionString: string;
  /** Most connections this process opens (default 10). */
  poolMax?: number;
  /** How long a request waits for a connection before the store counts as unavailable (default 5 s). */
  connectTimeoutMs?: number;
  /**
   * How long one statement may wait for its answer before the store counts as unavailable
   * (default 30 s). A database that stopped answering without closing the connection (a hung
   * server, a silent network partition) is noticed this way; every indexed query takes milliseconds.
   */
  queryTimeoutMs?: number;
  /** How long init waits for the database to come up (default 15 s). */
  startupWaitMs?: number;
  /** Run the schema migrations at init (default true). */
  migrate?: boolean;
}

type Row = Record<string, any>;
type Queryable = { query: (sql: string, params?: unknown[]) => Promise<pg.QueryResult<Row>> };

const CONNECTION_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'ENOTFOUND',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EAI_AGAIN',
  'ECONNABORTED',
  '57P01', // admin_shutdown
  '57P02', // crash_shutdown
  '57P03', // cannot_connect_now (starting up, shutting down)
  '53300', // too_many_connections
]);
const CONNECTION_MESSAGES = /Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error|not queryable|Connection closed|read ECONNRESET|Query read timeout/i;

/** True for errors that say the database could not be reached, not that a statement was wrong. */
export function isConnectionError(err: unknown): boolean {
  if (!err || typeof err !== 'object') return false;
  const code = (err as { code?: unknown }).code;
  if (typeof code === 'string' && (CONNECTION_CODES.has(code) || code.startsWith('08'))) return true;
  if (err instanceof AggregateError) return err.errors.some(isConnectionError);
  return CONNECTION_MESSAGES.test((err as Error).message ?? '');
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

// PostgreSQL text cannot hold the NUL character (U+0000), which JSON text and so the JSON store can.
// Text values are escaped on the way in and unescaped on the way out, with a private-use character
// as the escape: NUL -> ESC "0", ESC -> ESC ESC. The mapping is one-to-one, leaves every string
// without those two characters unchanged, and keeps equality and substring search working. JSON
// documents need none of this: `json` keeps \u0000 escapes as written.
const ESC = '\u{F0000}';
const NEEDS_ESCAPE = /[\u0000\u{F0000}]/u;
export function encodeText(s: string): string {
  return NEEDS_ESCAPE.test(s) ? s.replace(/[\u0000\u{F0000}]/gu, (c) => (c === ESC ? ESC + ESC : `${ESC}0`)) : s;
}
export function decodeText(s: string): string {
  return s.includes(ESC) ? s.replace(/\u{F0000}(\u{F0000}|0)/gu, (_, c: string) => (c === ESC ? ESC : '\u0000')) : s;
}
const encodeParam = (v: unknown): unknown =>
  typeof v === 'string' ? encodeText(v) : Array.isArray(v) && v.every((x) => typeof x === 'string') ? v.map((x) => encodeText(x as string)) : v;
/** Text columns and text[] columns come back unescaped; json columns arrive parsed and are left alone. */
const TEXT_ARRAY_COLUMNS = new Set(['tags', 'evaluator_ids']);
function decodeRow(row: Row): Row {
  for (const [k, v] of Object.entries(row)) {
    if (typeof v === 'string') row[k] = decodeText(v);
    else if (TEXT_ARRAY_COLUMNS.has(k) && Array.isArray(v)) row[k] = v.map((x) => (typeof x === 'string' ? decodeText(x) : x));
  }
  return row;
}
const iso = (d: Date | null): string | null => (d === null ? null : d.toISOString());
/** A JSON document parameter: serialized as is (never text-escaped, see encodeText). */
class JsonParam {
  constructor(private readonly value: unknown) {}
  toPostgres(): string {
    return JSON.stringify(this.value ?? null);
  }
}
const json = (v: unknown) => new JsonParam(v);

/** Fields of `record` that have no column: kept in `extra`. */
function extraOf(record: object, columns: readonly string[]): JsonParam {
  const extra: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(record)) if (!columns.includes(k) && v !== undefined) extra[k] = v;
  return json(extra);
}

// Column lists, in insert order. Each table's row <-> record mapping lives beside its list.

const ORG_COLUMNS = ['id', 'name', 'is_demo', 'created_at'] as const;
const orgFromRow = (r: Row): Organization => ({ ...r.extra, id: r.id, name: r.name, is_demo: r.is_demo, created_at: iso(r.created_at)! });

const KEY_COLUMNS = ['id', 'org_id', 'name', 'prefix', 'hash', 'created_at', 'expires_at', 'last_used_at', 'revoked_at'] as const;
const keyFromRow = (r: Row): ApiKeyRecord => ({
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

const PROJECT_COLUMNS = ['id', 'org_id', 'name', 'description', 'is_default', 'created_at'] as const;
const projectFromRow = (r: Row): ProjectRecord => ({
  ...r.extra,
  id: r.id,
  org_id: r.org_id,
  name: r.name,
  description: r.description,
  is_default: r.is_default,
  created_at: iso(r.created_at)!,
});

const EVALUATOR_COLUMNS = [
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
const evaluatorValues = (e: EvaluatorRecord) => [
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
const evaluatorFromRow = (r: Row): EvaluatorRecord => ({
  ...r.extra,
  id: r.id,
  org_id: r.org_id,
  name: r.name,
  intent: r.intent,
  rubric: r.rubric,
  requires_contexts: r.requires_contexts,
  requires_expected_output: r.requires_expected_output,
  demonstrations: r.demonstrations,
  model: r.model,
  visibility: r.visibility,
  is_preset: r.is_preset,
  project_id: r.project_id,
  version: r.version,
  created_at: iso(r.created_at)!,
  updated_at: iso(r.updated_at)!,
});

const JUDGE_COLUMNS = ['id', 'org_id', 'name', 'intent', 'stage', 'visibility', 'project_id', 'evaluators', 'version', 'created_at', 'updated_at'] as const;
const judgeValues = (j: JudgeRecord) => [
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
const judgeFromRow = (r: Row): JudgeRecord => ({
  ...r.extra,
  id: r.id,
  org_id: r.org_id,
  name: r.name,
  intent: r.intent,
  stage: r.stage,
  visibility: r.visibility,
  project_id: r.project_id,
  evaluators: r.evaluators,
  version: r.version,
  created_at: iso(r.created_at)!,
  updated_at: iso(r.updated_at)!,
});

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
/** Insert order: LOG_COLUMNS, then evaluator_ids and extra. */
const LOG_INSERT_COLUMNS = [...LOG_COLUMNS, 'evaluator_ids', 'extra'];
export function logEvaluatorIds(log: Pick<ExecutionLogRecord, 'evaluator_id' | 'evaluator_results'>): string[] {
  const ids = new Set<string>();
  if (log.evaluator_id) ids.add(log.evaluator_id);
  for (const r of log.evaluator_results) ids.add(r.evaluator_id);
  return [...ids];
}
const logValues = (l: ExecutionLogRecord) => [
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
  extraOf(l, LOG_COLUMNS),
];
const logFromRow = (r: Row): ExecutionLogRecord => ({
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

const placeholders = (count: number, offset = 0) => Array.from({ length: count }, (_, i) => `$${i + 1 + offset}`).join(', ');

/** Builds `WHERE ... ORDER BY created_at DESC, id DESC LIMIT n+1` for a newest-first page. */
class PageSql {
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

function toPage<T extends { created_at: string; id: string }>(rows: Row[], page: PageQuery, fromRow: (r: Row) => T): Page<T> {
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

function visibilitySql(q: PageSql, f: { org_id: string; include_public: boolean }): void {
  q.where.push(f.include_public ? `(org_id = ${q.p(f.org_id)} OR visibility = 'public')` : `org_id = ${q.p(f.org_id)}`);
}

function searchSql(q: PageSql, search: string | undefined, columns: string[]): void {
  if (!search) return;
  const needle = q.p(search);
  q.where.push(`(${columns.map((c) => `strpos(lower(${c}), lower(${needle})) > 0`).join(' OR ')})`);
}

export class PostgresStore implements Store {
  readonly kind = 'postgres' as const;
  readonly pool: pg.Pool;
  private closed = false;

  constructor(private readonly opts: PostgresStoreOptions) {
    this.pool = new pg.Pool({
      connectionString: opts.connectionString,
      max: opts.poolMax ?? 10,
      connectionTimeoutMillis: opts.connectTimeoutMs ?? 5000,
      idleTimeoutMillis: 30_000,
      query_timeout: opts.queryTimeoutMs ?? 30_000,
      keepAlive: true,
      keepAliveInitialDelayMillis: 10_000,
      application_name: 'tribunal',
    });
    // A pooled connection that dies while idle (database restart) is dropped by the pool and
    // reported here; without a listener Node would treat it as an uncaught error and exit.
    this.pool.on('error', () => {});
    this.pool.on('connect', (client) => client.on('error', () => {}));
  }

  async init(): Promise<void> {
    const deadline = Date.now() + (this.opts.startupWaitMs ?? 15_000);
    for (let attempt = 0; ; attempt++) {
      let client: pg.PoolClient | undefined;
      try {
        client = await this.pool.connect();
        if (this.opts.migrate !== false) await migrateSchema(client);
        client.release();
        return;
      } catch (err) {
        client?.release(isConnectionError(err) ? (err as Error) : undefined);
        if (!isConnectionError(err)) {
          await this.pool.end().catch(() => {});
          throw err;
        }
        if (Date.now() >= deadline) {
          await this.pool.end().catch(() => {});
          throw new StoreUnavailableError(`Cannot reach PostgreSQL at ${describeUrl(this.opts.connectionString)}: ${(err as Error).message}`, { cause: err });
        }
        if (attempt === 0) console.error(`[tribunal] waiting for PostgreSQL at ${describeUrl(this.opts.connectionString)} (${(err as Error).message})`);
        await sleep(Math.min(200 * 2 ** attempt, 2000));
      }
    }
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.pool.end();
  }

  async ping(): Promise<void> {
    await this.query('SELECT 1', [], { retries: 0 });
  }

  /** Maps a driver error to the store's errors: unreachable -> StoreUnavailableError, unique -> StoreConflictError. */
  private storeError(err: unknown, conflict?: (constraint: string) => ConflictReason): unknown {
    if (err instanceof StoreUnavailableError || err instanceof StoreConflictError) return err;
    if (isConnectionError(err)) return new StoreUnavailableError(`PostgreSQL is unreachable: ${(err as Error).message}`, { cause: err });
    const e = err as { code?: string; constraint?: string };
    if (e.code === '23505' && conflict) return new StoreConflictError(conflict(e.constraint ?? ''));
    return err;
  }

  /** A pooled connection; a failure to connect is retried briefly (nothing was sent yet). */
  private async connect(retries = 2): Promise<pg.PoolClient> {
    if (this.closed) throw new StoreUnavailableError('The store is closed.');
    for (let attempt = 0; ; attempt++) {
      try {
        return await this.pool.connect();
      } catch (err) {
        if (!isConnectionError(err) || attempt >= retries) throw this.storeError(err);
        await sleep(50 * 4 ** attempt);
      }
    }
  }

  /**
   * One statement. `idempotent` statements (reads) are retried on a broken connection, e.g. a pooled
   * connection the database closed on restart; a write is not, since it may have been applied.
   */
  private async query(sql: string, params: unknown[], opts: { idempotent?: boolean; retries?: number; conflict?: (c: string) => ConflictReason } = {}): Promise<pg.QueryResult<Row>> {
    const retries = opts.retries ?? 2;
    for (let attempt = 0; ; attempt++) {
      const client = await this.connect(retries);
      try {
        const result = await client.query(sql, params.map(encodeParam));
        client.release();
        result.rows.forEach(decodeRow);
        return result;
      } catch (err) {
        const broken = isConnectionError(err);
        client.release(broken ? (err as Error) : undefined);
        if (broken && (opts.idempotent ?? true) && attempt < retries) continue;
        throw this.storeError(err, opts.conflict);
      }
    }
  }

  private write(sql: string, params: unknown[], conflict?: (c: string) => ConflictReason) {
    return this.query(sql, params, { idempotent: false, conflict });
  }

  /** Runs `fn` in a transaction; it commits unless `fn` throws or answers `{ rollback: value }`. */
  private async transaction<T>(fn: (c: Queryable) => Promise<T | { rollback: T }>, conflict?: (c: string) => ConflictReason): Promise<T> {
    const client = await this.connect();
    const q: Queryable = {
      query: async (sql: string, params: unknown[] = []) => {
        const result = await client.query(sql, params.map(encodeParam));
        result.rows.forEach(decodeRow);
        return result;
      },
    };
    try {
      await client.query('BEGIN');
      const result = await fn(q);
      if (result && typeof result === 'object' && 'rollback' in result) {
        await client.query('ROLLBACK');
        client.release();
        return (result as { rollback: T }).rollback;
      }
      await client.query('COMMIT');
      client.release();
      return result as T;
    } catch (err) {
      const broken = isConnectionError(err);
      if (!broken) await client.query('ROLLBACK').catch(() => {});
      client.release(broken ? (err as Error) : undefined);
      throw this.storeError(err, conflict);
    }
  }

  private async one<T>(sql: string, params: unknown[], fromRow: (r: Row) => T): Promise<T | null> {
    const { rows } = await this.query(sql, params);
    return rows[0] ? fromRow(rows[0]) : null;
  }

  // Organizations

  async createOrganization(org: Organization): Promise<void> {
    await this.write(
      `INSERT INTO organizations (${ORG_COLUMNS.join(', ')}, extra) VALUES (${placeholders(5)})`,
      [org.id, org.name, org.is_demo, org.created_at, extraOf(org, ORG_COLUMNS)],
      () => ({ kind: 'id_taken', resource: 'organization', id: org.id }),
    );
  }
  getOrganization(id: string) {
    return this.one('SELECT * FROM organizations WHERE id = $1', [id], orgFromRow);
  }
  findOrganizationByName(name: string) {
    // The oldest, as in the JSON store: a name taken twice resolves to the first one made.
    return this.one('SELECT * FROM organizations WHERE name = $1 AND NOT is_demo ORDER BY created_at, id LIMIT 1', [name], orgFromRow);
  }

  async listDemoOrganizations(createdBefore: string, limit: number) {
    const { rows } = await this.query('SELECT * FROM organizations WHERE is_demo AND created_at < $1 ORDER BY created_at, id LIMIT $2', [createdBefore, limit]);
    return rows.map(orgFromRow);
  }
  async purgeOrganization(orgId: string): Promise<void> {
    await this.transaction(async (c) => {
      await c.query('DELETE FROM evaluator_versions WHERE id IN (SELECT id FROM evaluators WHERE org_id = $1)', [orgId]);
      await c.query('DELETE FROM judge_versions WHERE id IN (SELECT id FROM judges WHERE org_id = $1)', [orgId]);
      for (const table of ['execution_logs', 'judges', 'evaluators', 'projects', 'api_keys']) await c.query(`DELETE FROM ${table} WHERE org_id = $1`, [orgId]);
      await c.query('DELETE FROM organizations WHERE id = $1', [orgId]);
    });
  }

  // API keys

  async createApiKey(key: ApiKeyRecord): Promise<void> {
    await this.write(
      `INSERT INTO api_keys (${KEY_COLUMNS.join(', ')}, extra) VALUES (${placeholders(10)})`,
      [key.id, key.org_id, key.name, key.prefix, key.hash, key.created_at, key.expires_at, key.last_used_at, key.revoked_at, extraOf(key, KEY_COLUMNS)],
      (c) => (c === 'api_keys_prefix_key' ? { kind: 'key_prefix_taken' } : { kind: 'id_taken', resource: 'api_key', id: key.id }),
    );
  }
  getApiKeyByPrefix(prefix: string) {
    return this.one('SELECT * FROM api_keys WHERE prefix = $1', [prefix], keyFromRow);
  }
  getApiKey(id: string) {
    return this.one('SELECT * FROM api_keys WHERE id = $1', [id], keyFromRow);
  }
  async listApiKeys(orgId: string, page: PageQuery) {
    const q = new PageSql();
    q.where.push(`org_id = ${q.p(orgId)}`);
    return toPage((await this.query(q.sql('api_keys', page), q.params)).rows, page, keyFromRow);
  }
  async updateApiKey(id: string, patch: Partial<Pick<ApiKeyRecord, 'revoked_at' | 'last_used_at'>>) {
    const sets: string[] = [];
    const params: unknown[] = [id];
    for (const field of ['revoked_at', 'last_used_at'] as const) {
      if (field in patch && patch[field] !== undefined) {
        params.push(patch[field]);
        sets.push(`${field} = $${params.length}`);
      }
    }
    if (!sets.length) return this.getApiKey(id);
    const { rows } = await this.write(`UPDATE api_keys SET ${sets.join(', ')} WHERE id = $1 RETURNING *`, params);
    return rows[0] ? keyFromRow(rows[0]) : null;
  }

  // Projects

  async createProject(project: ProjectRecord): Promise<void> {
    await this.write(
      `INSERT INTO projects (${PROJECT_COLUMNS.join(', ')}, extra) VALUES (${placeholders(7)})`,
      [project.id, project.org_id, project.name, project.description, project.is_default, project.created_at, extraOf(project, PROJECT_COLUMNS)],
      (c): ConflictReason =>
        c === 'projects_one_default'
          ? { kind: 'default_project_exists' }
          : c === 'projects_unique_name'
            ? { kind: 'name_taken', resource: 'project', name: project.name }
            : { kind: 'id_taken', resource: 'project', id: project.id },
    );
  }
  getProject(id: string) {
    return this.one('SELECT * FROM projects WHERE id = $1', [id], projectFromRow);
  }
  getDefaultProject(orgId: string) {
    return this.one('SELECT * FROM projects WHERE org_id = $1 AND is_default', [orgId], projectFromRow);
  }
  async listProjects(orgId: string, page: PageQuery) {
    const q = new PageSql();
    q.where.push(`org_id = ${q.p(orgId)}`);
    return toPage((await this.query(q.sql('projects', page), q.params)).rows, page, projectFromRow);
  }

  // Evaluators

  private evaluatorConflict(e: EvaluatorRecord) {
    return (c: string): ConflictReason => (c === 'evaluators_unique_name' ? { kind: 'name_taken', resource: 'evaluator', name: e.name } : { kind: 'id_taken', resource: 'evaluator', id: e.id });
  }

  async createEvaluator(evaluator: EvaluatorRecord): Promise<void> {
    await this.transaction(async (c) => {
      await c.query(`INSERT INTO evaluators (${EVALUATOR_COLUMNS.join(', ')}, extra) VALUES (${placeholders(16)})`, evaluatorValues(evaluator));
      await c.query('INSERT INTO evaluator_versions (id, version, record) VALUES ($1, $2, $3)', [evaluator.id, evaluator.version, json(evaluator)]);
    }, this.evaluatorConflict(evaluator));
  }
  getEvaluator(id: string) {
    return this.one('SELECT * FROM evaluators WHERE id = $1', [id], evaluatorFromRow);
  }
  getEvaluatorVersion(id: string, version: number) {
    return this.one('SELECT record FROM evaluator_versions WHERE id = $1 AND version = $2', [id, version], (r) => r.record as EvaluatorRecord);
  }
  async listEvaluatorVersions(id: string) {
    const { rows } = await this.query('SELECT record FROM evaluator_versions WHERE id = $1 ORDER BY version DESC', [id]);
    return rows.map((r) => r.record as EvaluatorRecord);
  }
  async listEvaluators(filter: EvaluatorFilter, page: PageQuery) {
    const q = new PageSql();
    visibilitySql(q, filter);
    if (filter.project_id !== undefined) q.where.push(`project_id = ${q.p(filter.project_id)}`);
    if (filter.name !== undefined) q.where.push(`name = ${q.p(filter.name)}`);
    if (filter.is_preset !== undefined) q.where.push(`is_preset = ${q.p(filter.is_preset)}`);
    searchSql(q, filter.search, ['name', 'intent']);
    return toPage((await this.query(q.sql('evaluators', page), q.params)).rows, page, evaluatorFromRow);
  }
  async updateEvaluator(next: EvaluatorRecord, expectedVersion: number): Promise<boolean> {
    const values = evaluatorValues(next);
    const sets = [...EVALUATOR_COLUMNS.slice(1), 'extra'].map((col, i) => `${col} = $${i + 2}`).join(', ');
    return this.transaction(async (c) => {
      const updated = await c.query(`UPDATE evaluators SET ${sets} WHERE id = $1 AND version = $${values.length + 1}`, [...values, expectedVersion]);
      if (updated.rowCount !== 1) return { rollback: false };
      await c.query('INSERT INTO evaluator_versions (id, version, record) VALUES ($1, $2, $3) ON CONFLICT (id, version) DO UPDATE SET record = excluded.record', [
        next.id,
        next.version,
        json(next),
      ]);
      return true;
    }, this.evaluatorConflict(next));
  }
  async deleteEvaluator(id: string): Promise<boolean> {
    return this.transaction(async (c) => {
      const deleted = await c.query('DELETE FROM evaluators WHERE id = $1', [id]);
      await c.query('DELETE FROM evaluator_versions WHERE id = $1', [id]);
      return deleted.rowCount === 1;
    });
  }

  // Judges

  private judgeConflict(j: JudgeRecord) {
    return (c: string): ConflictReason => (c === 'judges_unique_name' ? { kind: 'name_taken', resource: 'judge', name: j.name } : { kind: 'id_taken', resource: 'judge', id: j.id });
  }

  async createJudge(judge: JudgeRecord): Promise<void> {
    await this.transaction(async (c) => {
      await c.query(`INSERT INTO judges (${JUDGE_COLUMNS.slice(0, 8).join(', ')}, evaluator_ids, ${JUDGE_COLUMNS.slice(8).join(', ')}, extra) VALUES (${placeholders(13)})`, judgeValues(judge));
      await c.query('INSERT INTO judge_versions (id, version, record) VALUES ($1, $2, $3)', [judge.id, judge.version, json(judge)]);
    }, this.judgeConflict(judge));
  }
  getJudge(id: string) {
    return this.one('SELECT * FROM judges WHERE id = $1', [id], judgeFromRow);
  }
  getJudgeVersion(id: string, version: number) {
    return this.one('SELECT record FROM judge_versions WHERE id = $1 AND version = $2', [id, version], (r) => r.record as JudgeRecord);
  }
  async listJudgeVersions(id: string) {
    const { rows } = await this.query('SELECT record FROM judge_versions WHERE id = $1 ORDER BY version DESC', [id]);
    return rows.map((r) => r.record as JudgeRecord);
  }
  async listJudges(filter: JudgeFilter, page: PageQuery) {
    const q = new PageSql();
    visibilitySql(q, filter);
    if (filter.project_id !== undefined) q.where.push(`project_id = ${q.p(filter.project_id)}`);
    if (filter.name !== undefined) q.where.push(`name = ${q.p(filter.name)}`);
    searchSql(q, filter.search, ['name', 'intent', "coalesce(stage, '')"]);
    return toPage((await this.query(q.sql('judges', page), q.params)).rows, page, judgeFromRow);
  }
  async updateJudge(next: JudgeRecord, expectedVersion: number): Promise<boolean> {
    const values = judgeValues(next);
    const columns = [...JUDGE_COLUMNS.slice(0, 8), 'evaluator_ids', ...JUDGE_COLUMNS.slice(8), 'extra'];
    const sets = columns
      .slice(1)
      .map((col, i) => `${col} = $${i + 2}`)
      .join(', ');
    return this.transaction(async (c) => {
      const updated = await c.query(`UPDATE judges SET ${sets} WHERE id = $1 AND version = $${values.length + 1}`, [...values, expectedVersion]);
      if (updated.rowCount !== 1) return { rollback: false };
      await c.query('INSERT INTO judge_versions (id, version, record) VALUES ($1, $2, $3) ON CONFLICT (id, version) DO UPDATE SET record = excluded.record', [
        next.id,
        next.version,
        json(next),
      ]);
      return true;
    }, this.judgeConflict(next));
  }
  async deleteJudge(id: string): Promise<boolean> {
    return this.transaction(async (c) => {
      const deleted = await c.query('DELETE FROM judges WHERE id = $1', [id]);
      await c.query('DELETE FROM judge_versions WHERE id = $1', [id]);
      return deleted.rowCount === 1;
    });
  }
  async findJudgesUsingEvaluator(evaluatorId: string) {
    const { rows } = await this.query('SELECT id, name, org_id FROM judges WHERE evaluator_ids @> ARRAY[$1::text] ORDER BY created_at, id', [evaluatorId]);
    return rows.map((r) => ({ id: r.id as string, name: r.name as string, org_id: r.org_id as string }));
  }

  // Execution logs

  async appendExecutionLog(log: ExecutionLogRecord): Promise<void> {
    await this.write(`INSERT INTO execution_logs (${LOG_INSERT_COLUMNS.join(', ')}) VALUES (${placeholders(LOG_INSERT_COLUMNS.length)})`, logValues(log), () => ({ kind: 'id_taken', resource: 'execution_log', id: log.id }));
  }
  getExecutionLog(id: string) {
    return this.one('SELECT * FROM execution_logs WHERE id = $1', [id], logFromRow);
  }
  async listExecutionLogs(filter: LogFilter, page: PageQuery): Promise<Page<ExecutionLogRecord>> {
    const { sql, params } = logPageQuery(filter, page);
    return toPage((await this.query(sql, params)).rows, page, logFromRow);
  }

  // Bulk import (tribunal migrate --from json): not part of the Store contract.

  /**
   * Inserts what is not there yet (by id). Answers how many rows were new, and why any record could
   * not be copied (its name or prefix is taken by another row).
   */
  async importRecords(kind: 'organizations' | 'api_keys' | 'projects', records: Array<Organization | ApiKeyRecord | ProjectRecord>): Promise<{ copied: number; refused: string[] }> {
    let copied = 0;
    const refused: string[] = [];
    for (const r of records) {
      try {
        if (kind === 'organizations') await this.createOrganization(r as Organization);
        else if (kind === 'api_keys') await this.createApiKey(r as ApiKeyRecord);
        else await this.createProject(r as ProjectRecord);
        copied++;
      } catch (err) {
        if (!(err instanceof StoreConflictError)) throw err;
        const existing = kind === 'organizations' ? await this.getOrganization(r.id) : kind === 'api_keys' ? await this.getApiKey(r.id) : await this.getProject(r.id);
        if (!existing) refused.push(`${kind}: ${r.id} not copied: ${err.message}`);
      }
    }
    return { copied, refused };
  }

  /**
   * Imports an evaluator or judge with its whole version history. One whose id exists keeps its
   * latest version; only versions it lacks are added.
   */
  async importVersioned(kind: 'evaluator' | 'judge', latest: EvaluatorRecord | JudgeRecord, versions: Array<EvaluatorRecord | JudgeRecord>): Promise<{ latest: boolean; versions: number }> {
    const table = kind === 'evaluator' ? 'evaluators' : 'judges';
    return this.transaction(
      async (c) => {
        const exists = await c.query(`SELECT 1 FROM ${table} WHERE id = $1`, [latest.id]);
        if (!exists.rowCount) {
          if (kind === 'evaluator') {
            await c.query(`INSERT INTO evaluators (${EVALUATOR_COLUMNS.join(', ')}, extra) VALUES (${placeholders(16)})`, evaluatorValues(latest as EvaluatorRecord));
          } else {
            await c.query(`INSERT INTO judges (${JUDGE_COLUMNS.slice(0, 8).join(', ')}, evaluator_ids, ${JUDGE_COLUMNS.slice(8).join(', ')}, extra) VALUES (${placeholders(13)})`, judgeValues(latest as JudgeRecord));
          }
        }
        let added = 0;
        for (const v of versions.length ? versions : [latest]) {
          const r = await c.query(`INSERT INTO ${kind}_versions (id, version, record) VALUES ($1, $2, $3) ON CONFLICT (id, version) DO NOTHING`, [v.id, v.version, json(v)]);
          added += r.rowCount ?? 0;
        }
        return { latest: !exists.rowCount, versions: added };
      },
      kind === 'evaluator' ? this.evaluatorConflict(latest as EvaluatorRecord) : this.judgeConflict(latest as JudgeRecord),
    );
  }

  /** Several logs by id (those that exist), for verification. */
  async getExecutionLogs(ids: string[]): Promise<ExecutionLogRecord[]> {
    const { rows } = await this.query('SELECT * FROM execution_logs WHERE id = ANY($1::text[])', [ids]);
    return rows.map(logFromRow);
  }

  /** Inserts logs in multi-row statements, skipping ids already present; answers how many were new. */
  async importExecutionLogs(logs: ExecutionLogRecord[]): Promise<number> {
    const perRow = LOG_INSERT_COLUMNS.length;
    const batch = Math.floor(60_000 / perRow);
    let inserted = 0;
    for (let i = 0; i < logs.length; i += batch) {
      const chunk = logs.slice(i, i + batch);
      const rows = chunk.map((_, r) => `(${placeholders(perRow, r * perRow)})`).join(', ');
      const result = await this.write(`INSERT INTO execution_logs (${LOG_INSERT_COLUMNS.join(', ')}) VALUES ${rows} ON CONFLICT (id) DO NOTHING`, chunk.flatMap(logValues));
      inserted += result.rowCount ?? 0;
    }
    return inserted;
  }

  /** Raw SQL for tools (migration checks, the benchmark); not used by the server. */
  sql(text: string, params: unknown[] = []) {
    return this.query(text, params, { idempotent: false });
  }
}

/** The database URL without its password, for messages. */
export function describeUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = '***';
    return u.toString();
  } catch {
    return '(unparseable DATABASE_URL)';
  }
}
