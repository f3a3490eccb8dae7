// The PostgreSQL store: the same Store contract as the JSON store, for several instances on one
// database. The schema comes from src/store/migrations (see migrate-schema.ts), applied at init.
//
// The store is its parts (one per resource, postgres/*.ts, each over the shared connection of
// postgres/connection.ts), assembled here as the JSON store assembles its own (compose.ts), plus
// the bulk import that `tribunal migrate --from json` uses, which is not part of the contract.
// - Filtered and sorted fields are real columns; document-shaped parts are JSON documents (`json`,
//   which keeps key order); fields a record has beyond the known columns go to `extra` and come back
//   unchanged.
// - Every write is one statement or one transaction, committed before the call returns: an
//   acknowledged write is durable. Optimistic updates are `UPDATE ... WHERE version = expected`.
import type { Organization } from '../schemas.ts';
import { composed } from './compose.ts';
import type { BudgetStore } from './parts/budgets.ts';
import { pgApiKeys, pgOrganizations, pgProjects } from './postgres/accounts.ts';
import { pgBatches } from './postgres/batches.ts';
import { batchWrites } from './postgres/batch-writes.ts';
import { pgBudgets } from './postgres/budgets.ts';
import { pgCalibration } from './postgres/calibration.ts';
import { PgConnection, type PostgresStoreOptions } from './postgres/connection.ts';
import { pgDatasets } from './postgres/datasets.ts';
import { evaluatorTable, pgEvaluators } from './postgres/evaluators.ts';
import { PgFiles } from './postgres/files.ts';
import { judgeTable, pgJudges } from './postgres/judges.ts';
import { getExecutionLogs, importExecutionLogs, pgLogs, pgResultCache } from './postgres/logs.ts';
import { pgModels } from './postgres/models.ts';
import { pgProviderBatches } from './postgres/provider-batches.ts';
import { pgSurface } from './postgres/surface.ts';
import { StoreConflictError, type ApiKeyRecord, type EvaluatorRecord, type ExecutionLogRecord, type JudgeRecord, type ProjectRecord, type Store } from './types.ts';

// What callers outside the store use (the CLI, the log benchmark, tests), from where they always came.
export { logPageQuery, logWhere } from './postgres/codecs.ts';
export { describeUrl, type PostgresStoreOptions } from './postgres/connection.ts';

/** Every resource part of the store, over one connection. */
const partsOver = (db: PgConnection, budgets: BudgetStore, writes = batchWrites(db)) => ({
  ...pgOrganizations(db),
  ...pgApiKeys(db),
  ...pgProjects(db),
  ...pgEvaluators(db),
  ...pgJudges(db),
  ...pgModels(db),
  ...pgLogs(db, writes.appendLog),
  ...pgResultCache(db),
  ...pgDatasets(db),
  ...pgBatches(db, writes.recordRow),
  ...pgCalibration(db),
  ...pgSurface(db),
  ...budgets,
  ...pgProviderBatches(db),
  files: new PgFiles(
    (sql, params) => db.query(sql, params),
    (sql, params) => db.write(sql, params),
  ),
});

export class PostgresStore extends composed<ReturnType<typeof partsOver>>() implements Store {
  readonly kind = 'postgres' as const;
  private readonly db: PgConnection;
  private readonly stopBudgetHolds: () => void;

  constructor(opts: PostgresStoreOptions) {
    const db = new PgConnection(opts);
    const budgets = pgBudgets(db);
    super(partsOver(db, budgets.part));
    this.db = db;
    this.stopBudgetHolds = budgets.stop;
  }

  /** The pool, for the rooms that keep their own tables in the same database (review, traces, the batch queue). */
  get pool() {
    return this.db.pool;
  }
  init() {
    return this.db.init();
  }
  close() {
    this.stopBudgetHolds();
    return this.db.close();
  }
  ping() {
    return this.db.ping();
  }
  /** Raw SQL for tools (migration checks, the benchmark); not used by the server. */
  sql(text: string, params: unknown[] = []) {
    return this.db.sql(text, params);
  }

  // Bulk import (tribunal migrate --from json): not part of the Store contract.

  /**
   * Inserts what is not there yet (by id). Answers how many rows were new, and why any record could
   * not be copied (its name or prefix is taken by another row).
   */
  async importRecords(
    kind: 'organizations' | 'api_keys' | 'projects',
    records: Array<Organization | ApiKeyRecord | ProjectRecord>,
  ): Promise<{ copied: number; refused: string[] }> {
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
  importVersioned(
    kind: 'evaluator' | 'judge',
    latest: EvaluatorRecord | JudgeRecord,
    versions: Array<EvaluatorRecord | JudgeRecord>,
  ): Promise<{ latest: boolean; versions: number }> {
    return kind === 'evaluator'
      ? evaluatorTable(this.db).importWithHistory(latest as EvaluatorRecord, versions as EvaluatorRecord[])
      : judgeTable(this.db).importWithHistory(latest as JudgeRecord, versions as JudgeRecord[]);
  }

  /** Several logs by id (those that exist), for verification. */
  getExecutionLogs(ids: string[]): Promise<ExecutionLogRecord[]> {
    return getExecutionLogs(this.db, ids);
  }

  /** Inserts logs in multi-row statements, skipping ids already present; answers how many were new. */
  importExecutionLogs(logs: ExecutionLogRecord[]): Promise<number> {
    return importExecutionLogs(this.db, logs);
  }
}
