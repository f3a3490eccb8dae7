// The PostgreSQL store's evaluation rules, counters and work queue (migrations/013_traces.sql), over
// the store's pool. Queue changes of one rule hold its rule row (FOR UPDATE), so the queue limit holds
// with several instances; units are claimed with FOR UPDATE SKIP LOCKED, so each is taken by one worker.
import type pg from 'pg';
import type { EnqueueCounts, EnqueueOutcome, EvalJob, QueueStats, RuleRecord, RuleStore } from '../../traces/rules/types.ts';
import { StoreUnavailableError } from '../types.ts';
import { isConnectionError } from './connection.ts';

const mapError = (err: unknown) => (isConnectionError(err) ? new StoreUnavailableError(`PostgreSQL is unreachable: ${(err as Error).message}`, { cause: err }) : err);
const jobOf = (r: { record: EvalJob; state: string; lease_until: Date | null; run_after: Date }): EvalJob => ({
  ...r.record,
  state: r.state as EvalJob['state'],
  lease_until: r.lease_until ? new Date(r.lease_until).toISOString() : null,
  run_after: new Date(r.run_after).toISOString(),
});

/** A rule's queue in one row of evaluation_jobs aggregates (progress). */
const QUEUE_COLUMNS = `count(*) FILTER (WHERE state = 'queued')::int AS queued, count(*) FILTER (WHERE state = 'running')::int AS running,
  min(created_at) FILTER (WHERE state = 'queued') AS oldest`;
const queueOf = (r: { queued: number; running: number; oldest: Date | null }): QueueStats => ({
  queued: r.queued,
  running: r.running,
  oldest_queued_at: r.oldest ? new Date(r.oldest).toISOString() : null,
});

export class PgRuleStore implements RuleStore {
  constructor(private readonly pool: pg.Pool) {}

  private async q(sql: string, params: unknown[] = []) {
    try {
      return await this.pool.query(sql, params);
    } catch (err) {
      throw mapError(err);
    }
  }
  private async tx<T>(fn: (c: pg.PoolClient) => Promise<T>): Promise<T> {
    let c: pg.PoolClient;
    try {
      c = await this.pool.connect();
    } catch (err) {
      throw mapError(err);
    }
    try {
      await c.query('BEGIN');
      const out = await fn(c);
      await c.query('COMMIT');
      c.release();
      return out;
    } catch (err) {
      await c.query('ROLLBACK').catch(() => {});
      c.release(isConnectionError(err) ? (err as Error) : undefined);
      throw mapError(err);
    }
  }
  private static countSql(c: pg.PoolClient | pg.Pool, ruleId: string, counts: Record<string, number>) {
    const keys = Object.keys(counts);
    if (!keys.length) return Promise.resolve();
    return c.query(
      `INSERT INTO evaluation_rule_counts (rule_id, key, n) SELECT $1, k, n FROM unnest($2::text[], $3::float8[]) AS t(k, n)
       ON CONFLICT (rule_id, key) DO UPDATE SET n = evaluation_rule_counts.n + EXCLUDED.n`,
      [ruleId, keys, keys.map((k) => counts[k])],
    );
  }

  async createRule(r: RuleRecord) {
    await this.q('INSERT INTO evaluation_rules (id, org_id, created_at, record) VALUES ($1, $2, $3, $4)', [r.id, r.org_id, r.created_at, JSON.stringify(r)]);
  }
  async getRule(id: string) {
    const { rows } = await this.q('SELECT record FROM evaluation_rules WHERE id = $1', [id]);
    return (rows[0]?.record as RuleRecord | undefined) ?? null;
  }
  async listRules(orgId: string) {
    const { rows } = await this.q('SELECT record FROM evaluation_rules WHERE org_id = $1 ORDER BY created_at DESC, id DESC', [orgId]);
    return rows.map((r) => r.record as RuleRecord);
  }
  async listAllRules() {
    const { rows } = await this.q('SELECT record FROM evaluation_rules ORDER BY id');
    return rows.map((r) => r.record as RuleRecord);
  }
  async updateRule(r: RuleRecord) {
    const { rowCount } = await this.q('UPDATE evaluation_rules SET record = $2 WHERE id = $1', [r.id, JSON.stringify(r)]);
    return (rowCount ?? 0) > 0;
  }
  async deleteRule(id: string) {
    return this.tx(async (c) => {
      const { rowCount } = await c.query('DELETE FROM evaluation_rules WHERE id = $1', [id]);
      await c.query('DELETE FROM evaluation_jobs WHERE rule_id = $1', [id]);
      await c.query('DELETE FROM evaluation_rule_counts WHERE rule_id = $1', [id]);
      return (rowCount ?? 0) > 0;
    });
  }
  async count(ruleId: string, counts: Record<string, number>) {
    try {
      await PgRuleStore.countSql(this.pool, ruleId, counts);
    } catch (err) {
      throw mapError(err);
    }
  }
  async counters(ruleId: string) {
    const { rows } = await this.q('SELECT key, n FROM evaluation_rule_counts WHERE rule_id = $1', [ruleId]);
    return Object.fromEntries(rows.map((r) => [r.key as string, Number(r.n)]));
  }

  async enqueue(job: EvalJob, limit: number, policy: 'drop_oldest' | 'drop_newest', counts: EnqueueCounts = { always: {}, queued: {} }) {
    return this.tx(async (c) => {
      await c.query('SELECT 1 FROM evaluation_rules WHERE id = $1 FOR UPDATE', [job.rule_id]);
      await PgRuleStore.countSql(c, job.rule_id, counts.always);
      const existing = await c.query('SELECT state FROM evaluation_jobs WHERE id = $1', [job.id]);
      if (existing.rowCount) {
        await c.query(`UPDATE evaluation_jobs SET run_after = GREATEST(run_after, $2::timestamptz) WHERE id = $1 AND state = 'queued'`, [job.id, job.run_after]);
        await PgRuleStore.countSql(c, job.rule_id, { 'skipped:merged': 1 });
        return 'waiting' as const;
      }
      const waiting = Number((await c.query(`SELECT count(*) AS n FROM evaluation_jobs WHERE rule_id = $1 AND state = 'queued'`, [job.rule_id])).rows[0].n);
      let outcome: 'queued' | 'shed_oldest' = 'queued';
      if (waiting >= limit) {
        if (policy === 'drop_newest') {
          await PgRuleStore.countSql(c, job.rule_id, { 'skipped:shed_newest': 1 });
          return 'shed_newest' as const;
        }
        await c.query(`DELETE FROM evaluation_jobs WHERE id = (SELECT id FROM evaluation_jobs WHERE rule_id = $1 AND state = 'queued' ORDER BY created_at, id LIMIT 1)`, [
          job.rule_id,
        ]);
        await PgRuleStore.countSql(c, job.rule_id, { 'skipped:shed_oldest': 1 });
        outcome = 'shed_oldest';
      }
      await c.query('INSERT INTO evaluation_jobs (id, rule_id, state, created_at, run_after, lease_until, record) VALUES ($1, $2, $3, $4, $5, NULL, $6)', [
        job.id,
        job.rule_id,
        'queued',
        job.created_at,
        job.run_after,
        JSON.stringify(job),
      ]);
      await PgRuleStore.countSql(c, job.rule_id, counts.queued);
      return outcome;
    });
  }

  async enqueueMany(ruleId: string, items: Array<{ job: EvalJob; counts: EnqueueCounts }>, limit: number, policy: 'drop_oldest' | 'drop_newest') {
    if (!items.length) return [];
    // The calls one by one, played in memory against what the queue holds (its waiting count and the
    // units already there), then written at once: a few statements for the whole batch.
    const planned = await this.tx(async (c) => {
      await c.query('SELECT 1 FROM evaluation_rules WHERE id = $1 FOR UPDATE', [ruleId]);
      const ids = [...new Set(items.map((i) => i.job.id))];
      const there = new Map<string, string>();
      for (const r of (await c.query('SELECT id, state FROM evaluation_jobs WHERE id = ANY($1::text[])', [ids])).rows) there.set(r.id as string, r.state as string);
      let older = Number((await c.query(`SELECT count(*) AS n FROM evaluation_jobs WHERE rule_id = $1 AND state = 'queued'`, [ruleId])).rows[0].n);
      const counts: Record<string, number> = {};
      const add = (more: Record<string, number>) => {
        for (const [k, n] of Object.entries(more)) counts[k] = (counts[k] ?? 0) + n;
      };
      const fresh: EvalJob[] = [];
      const merged = new Map<string, string>();
      let dropOlder = 0;
      let mergedIntoQueue = false;
      const outcomes: EnqueueOutcome[] = [];
      for (const { job, counts: more } of items) {
        add(more.always);
        const pending = fresh.find((j) => j.id === job.id);
        if (pending || there.has(job.id)) {
          add({ 'skipped:merged': 1 });
          if (pending && job.run_after > pending.run_after) pending.run_after = job.run_after;
          if (!pending && there.get(job.id) === 'queued') {
            mergedIntoQueue = true;
            if (job.run_after > (merged.get(job.id) ?? '')) merged.set(job.id, job.run_after);
          }
          outcomes.push('waiting');
          continue;
        }
        let outcome: EnqueueOutcome = 'queued';
        if (older + fresh.length >= limit) {
          if (policy === 'drop_newest') {
            add({ 'skipped:shed_newest': 1 });
            outcomes.push('shed_newest');
            continue;
          }
          // The oldest waiting unit gives way: one the queue held (older than this batch), else this batch's first.
          if (older > 0) {
            older--;
            dropOlder++;
          } else fresh.shift();
          add({ 'skipped:shed_oldest': 1 });
          outcome = 'shed_oldest';
        }
        fresh.push({ ...job });
        add(more.queued);
        outcomes.push(outcome);
      }
      // A unit merged into and also among the oldest shed: the order matters, so the calls go one by one.
      if (mergedIntoQueue && dropOlder) return null;
      if (dropOlder) {
        await c.query(`DELETE FROM evaluation_jobs WHERE id IN (SELECT id FROM evaluation_jobs WHERE rule_id = $1 AND state = 'queued' ORDER BY created_at, id LIMIT $2)`, [
          ruleId,
          dropOlder,
        ]);
      }
      if (merged.size) {
        await c.query(
          `UPDATE evaluation_jobs j SET run_after = GREATEST(j.run_after, u.r) FROM unnest($1::text[], $2::timestamptz[]) AS u(id, r) WHERE j.id = u.id AND j.state = 'queued'`,
          [[...merged.keys()], [...merged.values()]],
        );
      }
      if (fresh.length) {
        await c.query(
          `INSERT INTO evaluation_jobs (id, rule_id, state, created_at, run_after, lease_until, record)
           SELECT id, $1, 'queued', c, r, NULL, rec FROM unnest($2::text[], $3::timestamptz[], $4::timestamptz[], $5::json[]) AS t(id, c, r, rec)`,
          [ruleId, fresh.map((j) => j.id), fresh.map((j) => j.created_at), fresh.map((j) => j.run_after), fresh.map((j) => JSON.stringify(j))],
        );
      }
      await PgRuleStore.countSql(c, ruleId, counts);
      return outcomes;
    });
    if (planned) return planned;
    const outcomes: EnqueueOutcome[] = [];
    for (const { job, counts } of items) outcomes.push(await this.enqueue(job, limit, policy, counts));
    return outcomes;
  }

  /** Every claim and finish is committed: only a unit taken again may have been judged before. */
  mayHaveRun(job: EvalJob): boolean {
    return job.attempts > 1;
  }

  async claim(n: number, now: string, leaseUntil: string) {
    const { rows } = await this.q(
      `UPDATE evaluation_jobs j SET state = 'running', lease_until = $2::timestamptz,
              record = jsonb_set(j.record::jsonb, '{attempts}', to_jsonb(coalesce((j.record->>'attempts')::int, 0) + 1))::json
       WHERE j.id IN (SELECT id FROM evaluation_jobs
                      WHERE (state = 'queued' AND run_after <= $1::timestamptz) OR (state = 'running' AND lease_until <= $1::timestamptz)
                      ORDER BY run_after LIMIT $3 FOR UPDATE SKIP LOCKED)
       RETURNING j.record, j.state, j.lease_until, j.run_after`,
      [now, leaseUntil, n],
    );
    return rows.map((r) => jobOf(r as never));
  }
  async finish(jobId: string, counts: Record<string, number>) {
    return this.tx(async (c) => {
      const { rows } = await c.query('DELETE FROM evaluation_jobs WHERE id = $1 RETURNING rule_id', [jobId]);
      if (!rows[0]) return false;
      await PgRuleStore.countSql(c, rows[0].rule_id as string, counts);
      return true;
    });
  }
  async postpone(jobId: string, runAfter: string) {
    const { rowCount } = await this.q(
      `UPDATE evaluation_jobs j SET state = 'queued', lease_until = NULL, run_after = $2::timestamptz,
              record = jsonb_set(j.record::jsonb, '{attempts}', to_jsonb(GREATEST(coalesce((j.record->>'attempts')::int, 0) - 1, 0)))::json
       WHERE j.id = $1 AND j.state = 'running'`,
      [jobId, runAfter],
    );
    return (rowCount ?? 0) > 0;
  }
  // One statement, so one snapshot: read apart, a unit finishing between the two reads (its job deleted
  // and its outcome counted in one transaction) could be missing from both.
  async progress(ruleId: string) {
    const { rows } = await this.q(
      `SELECT (SELECT coalesce(json_object_agg(key, n), '{}'::json) FROM evaluation_rule_counts WHERE rule_id = $1) AS counters, ${QUEUE_COLUMNS}
       FROM evaluation_jobs WHERE rule_id = $1`,
      [ruleId],
    );
    const counters = Object.fromEntries(Object.entries(rows[0].counters as Record<string, string | number>).map(([k, n]) => [k, Number(n)]));
    return { counters, queue: queueOf(rows[0]) };
  }
}
