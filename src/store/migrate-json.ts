// `tribunal migrate --from json --to postgres`: copies a JSON data directory into PostgreSQL, then
// reads every record back from PostgreSQL and compares it with the source.
//
// - The JSON store is opened as the CLI (its lock keeps a running server out, and opening it drops
//   a torn last log line exactly as the server would), then its two files are read as they are.
// - Everything is inserted by id and whatever is already there is kept, so a run that was
//   interrupted can simply be run again; a second run copies nothing and verifies everything.
// - Datasets (with their items), batch runs (with their rows and inline items) and calibration runs
//   follow, a page at a time (migrate-runs.ts). The result cache is not copied: it is disposable.
// - The answer counts, per kind, the records in the source, those newly copied, and those verified
//   equal in PostgreSQL. Any difference is listed and makes the command fail.
import { isDeepStrictEqual } from 'node:util';
import fsp from 'node:fs/promises';
import path from 'node:path';
import { isLogRecord } from './json-files.ts';
import { JsonStore } from './json-store.ts';
import type { JsonData } from './json-data.ts';
import { EXTRA_KINDS, ROOM_KINDS, type Counts, type Kind, type MigrateContext, type RoomMigration } from './migrate-context.ts';
import { migrateExtras } from './migrate-extras.ts';
import { migrateRuns, RUN_KINDS } from './migrate-runs.ts';
import { PostgresStore } from './postgres-store.ts';
import { StoreConflictError, type EvaluatorRecord, type ExecutionLogRecord, type JudgeRecord } from './types.ts';

type JsonFile = Partial<JsonData>;

export type { Kind } from './migrate-context.ts';
export const KINDS: Kind[] = [
  'organizations',
  'api_keys',
  'projects',
  'evaluators',
  'evaluator_versions',
  'judges',
  'judge_versions',
  'models',
  'execution_logs',
  'annotations',
  ...RUN_KINDS,
  ...EXTRA_KINDS,
  ...ROOM_KINDS,
];

export interface MigrationReport {
  counts: Counts;
  mismatches: string[];
  /** What was deliberately left behind, and why (leases in flight, queued rule units, reservations). */
  not_copied: string[];
  ok: boolean;
}

export interface MigrateOptions {
  dataDir: string;
  databaseUrl: string;
  /** Progress lines; default none. */
  log?: (line: string) => void;
  /** Logs per INSERT / verification batch, and dataset items and batch rows per page (default 1000). */
  batchSize?: number;
  /** The rooms beside the Store (review queues, evaluation rules, spans): src/cli/migrate-rooms.ts. */
  rooms: RoomMigration;
}

const TIMESTAMP_FIELDS = new Set(['created_at', 'updated_at', 'expires_at', 'last_used_at', 'revoked_at', 'used_at', 'adjudicated_at']);

/**
 * The form a record has once stored: undefined members dropped (as JSON does) and timestamps in
 * the canonical ISO form PostgreSQL answers with. Two records equal in this form hold the same data.
 */
function canonical<T>(record: T): T {
  return JSON.parse(JSON.stringify(record), (key, value) =>
    TIMESTAMP_FIELDS.has(key) && typeof value === 'string' && !Number.isNaN(Date.parse(value)) ? new Date(value).toISOString() : value,
  ) as T;
}

async function readLogs(file: string): Promise<ExecutionLogRecord[]> {
  let text = '';
  try {
    text = await fsp.readFile(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
  const logs: ExecutionLogRecord[] = [];
  // The JSON store was opened first, which cut any torn tail and set bad lines aside (with a
  // warning): those are left out here as they are at start-up.
  for (const line of text.split('\n')) {
    if (!line.trim()) continue;
    let parsed: unknown;
    try {
      parsed = JSON.parse(line);
    } catch {
      continue;
    }
    if (isLogRecord(parsed)) logs.push(parsed as ExecutionLogRecord);
  }
  return logs;
}

const byCreation = <T extends { created_at: string; id: string }>(a: T, b: T) =>
  a.created_at < b.created_at ? -1 : a.created_at > b.created_at ? 1 : a.id < b.id ? -1 : a.id > b.id ? 1 : 0;

export async function migrateJsonToPostgres(opts: MigrateOptions): Promise<MigrationReport> {
  const log = opts.log ?? (() => {});
  const batchSize = opts.batchSize ?? 1000;
  const source = new JsonStore({ dataDir: opts.dataDir, role: 'cli', lockWaitMs: 0 });
  await source.init(); // refuses while a server owns the directory (DataDirLockedError says so)
  let target: PostgresStore | undefined;
  try {
    let db: JsonFile = {};
    try {
      db = JSON.parse(await fsp.readFile(path.join(opts.dataDir, 'db.json'), 'utf8')) as JsonFile;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    }
    const orgs = Object.values(db.organizations ?? {}).sort(byCreation);
    const keys = Object.values(db.api_keys ?? {}).sort(byCreation);
    const projects = Object.values(db.projects ?? {}).sort(byCreation);
    const evaluators = Object.values(db.evaluators ?? {}).sort(byCreation);
    const judges = Object.values(db.judges ?? {}).sort(byCreation);
    // Registered models move with their API keys still sealed: the same TRIBUNAL_SECRET_KEY opens them.
    const models = Object.values(db.models ?? {}).sort(byCreation);
    const evaluatorVersions = (id: string, latest: EvaluatorRecord) => db.evaluator_versions?.[id] ?? [latest];
    const judgeVersions = (id: string, latest: JudgeRecord) => db.judge_versions?.[id] ?? [latest];
    const logs = await readLogs(path.join(opts.dataDir, 'logs.jsonl'));
    // People's annotations of logs move too (datasets, batch and calibration runs: migrate-runs.ts).
    const annotations = Object.values(db.annotations ?? {}).sort(byCreation);
    log(
      `Read ${opts.dataDir}: ${orgs.length} organizations, ${keys.length} API keys, ${projects.length} projects, ${evaluators.length} evaluators, ${judges.length} judges, ${logs.length} execution logs.`,
    );

    target = new PostgresStore({ connectionString: opts.databaseUrl, poolMax: 4 });
    await target.init();

    const counts = Object.fromEntries(KINDS.map((k) => [k, { source: 0, copied: 0, verified: 0 }])) as MigrationReport['counts'];
    const mismatches: string[] = [];
    const notCopied: string[] = [];
    const compare = (kind: Kind, label: string, want: unknown, got: unknown) => {
      if ((got === null || got === undefined) && mismatches.some((m) => m.startsWith(`${kind}: ${label} not copied`))) return;
      if (got === null || got === undefined) mismatches.push(`${kind}: ${label} is missing in PostgreSQL`);
      else if (!isDeepStrictEqual(canonical(got), canonical(want))) mismatches.push(`${kind}: ${label} differs in PostgreSQL`);
      else counts[kind].verified++;
    };
    const t = target;

    // Copy.
    for (const [kind, records] of [
      ['organizations', orgs],
      ['api_keys', keys],
      ['projects', projects],
    ] as const) {
      counts[kind].source = records.length;
      const { copied, refused } = await t.importRecords(kind, records);
      counts[kind].copied = copied;
      mismatches.push(...refused);
    }
    const copyVersioned = async (kind: 'evaluator' | 'judge', latest: EvaluatorRecord | JudgeRecord, versions: Array<EvaluatorRecord | JudgeRecord>) => {
      const [main, history] = kind === 'evaluator' ? (['evaluators', 'evaluator_versions'] as const) : (['judges', 'judge_versions'] as const);
      counts[main].source++;
      counts[history].source += versions.length;
      try {
        const copied = await t.importVersioned(kind, latest, versions);
        counts[main].copied += copied.latest ? 1 : 0;
        counts[history].copied += copied.versions;
      } catch (err) {
        if (!(err instanceof StoreConflictError)) throw err;
        mismatches.push(`${main}: ${latest.id} not copied: ${err.message}`);
      }
    };
    for (const e of evaluators) await copyVersioned('evaluator', e, evaluatorVersions(e.id, e));
    for (const j of judges) await copyVersioned('judge', j, judgeVersions(j.id, j));
    counts.models.source = models.length;
    for (const m of models) {
      try {
        await t.createModel(m);
        counts.models.copied++;
      } catch (err) {
        if (!(err instanceof StoreConflictError)) throw err;
        // Copied by an earlier run (nothing to copy); anything else is a difference.
        if (!isDeepStrictEqual(canonical(await t.getModel(m.id)), canonical(m))) mismatches.push(`models: ${m.id} not copied: ${err.message}`);
      }
    }
    log(
      `Copied ${counts.organizations.copied} organizations, ${counts.api_keys.copied} API keys, ${counts.projects.copied} projects, ${counts.evaluators.copied} evaluators, ${counts.judges.copied} judges.`,
    );
    counts.execution_logs.source = logs.length;
    for (let i = 0; i < logs.length; i += batchSize) {
      counts.execution_logs.copied += await t.importExecutionLogs(logs.slice(i, i + batchSize));
      if (logs.length > batchSize) log(`  execution logs: ${Math.min(i + batchSize, logs.length)} / ${logs.length}`);
    }
    log(`Copied ${counts.execution_logs.copied} execution logs.`);
    counts.annotations.source = annotations.length;
    for (const a of annotations) {
      try {
        await t.createAnnotation(a);
        counts.annotations.copied++;
      } catch (err) {
        if (!(err instanceof StoreConflictError)) throw err;
        // Copied by an earlier run (nothing to copy); anything else is a difference.
        if (!isDeepStrictEqual(canonical(await t.getAnnotation(a.id)), canonical(a))) mismatches.push(`annotations: ${a.id} not copied: ${err.message}`);
      }
    }

    // Verify: read every record back through the store and compare.
    for (const o of orgs) compare('organizations', o.id, o, await t.getOrganization(o.id));
    for (const k of keys) compare('api_keys', k.id, k, await t.getApiKey(k.id));
    for (const p of projects) compare('projects', p.id, p, await t.getProject(p.id));
    for (const e of evaluators) {
      const stored = await t.getEvaluator(e.id);
      // A preset the server already shipped a newer version of keeps that version as its latest.
      if (e.is_preset && stored && stored.version > e.version) counts.evaluators.verified++;
      else compare('evaluators', e.id, e, stored);
      for (const v of evaluatorVersions(e.id, e)) compare('evaluator_versions', `${v.id} v${v.version}`, v, await t.getEvaluatorVersion(v.id, v.version));
    }
    for (const j of judges) {
      compare('judges', j.id, j, await t.getJudge(j.id));
      for (const v of judgeVersions(j.id, j)) compare('judge_versions', `${v.id} v${v.version}`, v, await t.getJudgeVersion(v.id, v.version));
    }
    for (const m of models) compare('models', m.id, m, await t.getModel(m.id));
    for (let i = 0; i < logs.length; i += batchSize) {
      const chunk = logs.slice(i, i + batchSize);
      const stored = new Map((await t.getExecutionLogs(chunk.map((l) => l.id))).map((l) => [l.id, l]));
      for (const l of chunk) compare('execution_logs', l.id, l, stored.get(l.id));
    }
    for (const a of annotations) compare('annotations', a.id, a, await t.getAnnotation(a.id));

    // Datasets, batch runs and calibration runs: copied and verified a page at a time.
    await migrateRuns({
      source,
      target: t,
      orgIds: orgs.map((o) => o.id),
      batchSize,
      counts,
      mismatches,
      compare,
      equal: (a, b) => isDeepStrictEqual(canonical(a), canonical(b)),
      log,
    });
    // This round's tables of db.json, then the rooms beside the Store (their own files).
    const ctx: MigrateContext = {
      dataDir: opts.dataDir,
      source,
      target: t,
      batchSize,
      counts,
      mismatches,
      notCopied,
      compare,
      equal: (a, b) => isDeepStrictEqual(canonical(a), canonical(b)),
      log,
    };
    await migrateExtras(
      ctx,
      db,
      orgs.map((o) => o.id),
    );
    await opts.rooms(ctx);
    const ok = mismatches.length === 0 && KINDS.every((k) => counts[k].verified === counts[k].source);
    return { counts, mismatches, not_copied: notCopied, ok };
  } finally {
    await target?.close();
    await source.close();
  }
}

export function formatReport(report: MigrationReport): string {
  const rows = KINDS.map(
    (k) => `  ${k.padEnd(20)} ${String(report.counts[k].source).padStart(9)} ${String(report.counts[k].copied).padStart(9)} ${String(report.counts[k].verified).padStart(9)}`,
  );
  const head = `  ${'kind'.padEnd(20)} ${'in JSON'.padStart(9)} ${'copied'.padStart(9)} ${'verified'.padStart(9)}`;
  const left = report.not_copied.length ? `\nNot copied, on purpose:\n${report.not_copied.map((m) => `  ${m}`).join('\n')}` : '';
  const tail = report.ok
    ? 'Every record is in PostgreSQL and reads back equal to the JSON data.'
    : `Verification FAILED (${report.mismatches.length} differences):\n${report.mismatches
        .slice(0, 20)
        .map((m) => `  ${m}`)
        .join('\n')}${report.mismatches.length > 20 ? `\n  ... and ${report.mismatches.length - 20} more` : ''}`;
  return `${head}\n${rows.join('\n')}\n${tail}${left}`;
}
