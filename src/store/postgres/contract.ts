// The PostgreSQL store's Store contract methods: the same contract as the JSON store, for several
// instances on one database.
//
// - Filtered and sorted fields are real columns; document-shaped parts are JSON documents (`json`,
//   which keeps key order); fields a record has beyond the known columns go to `extra` and come back
//   unchanged.
// - Every write is one statement or one transaction, committed before the call returns: an
//   acknowledged write is durable. Optimistic updates are `UPDATE ... WHERE version = expected`.
import type { EvaluatorResult, Organization } from '../../schemas.ts';
import type {
  ApiKeyRecord,
  ConflictReason,
  EvaluatorFilter,
  EvaluatorRecord,
  ExecutionLogRecord,
  JudgeFilter,
  JudgeRecord,
  LogFilter,
  LogValueField,
  ModelRecord,
  Page,
  PageQuery,
  ProjectRecord,
  Store,
  ValueQuery,
} from '../types.ts';
import {
  json,
  extraOf,
  ORG_COLUMNS,
  orgFromRow,
  KEY_COLUMNS,
  keyFromRow,
  PROJECT_COLUMNS,
  projectFromRow,
  EVALUATOR_COLUMNS,
  evaluatorValues,
  evaluatorFromRow,
  JUDGE_COLUMNS,
  judgeValues,
  judgeFromRow,
  LOG_INSERT_COLUMNS,
  logValues,
  logFromRow,
  logValuesQuery,
  placeholders,
  PageSql,
  toPage,
  logPageQuery,
  visibilitySql,
  searchSql,
  ORG_TABLES,
} from './codecs.ts';
import { PgCalibration } from './calibration.ts';
import { PgSurface, SURFACE_TABLES } from './surface.ts';
import { purgeOrgBatchJobs } from './batch-jobs.ts';
import { PgFiles } from './files.ts';
import type { ClaimTokenRecord, SyntheticDataRecord } from '../surface-types.ts';
import { BudgetHolds, pgListBudgetCaps, pgListBudgetCounters, pgReserveBudget, pgSetBudgetCap, pgSettleBudget } from './budgets.ts';
import type { BudgetCap, BudgetKey, BudgetScope, ProviderBatchPatch, ProviderBatchRecord } from '../types.ts';
import { pgCreateProviderBatch, pgListProviderBatches, pgUpdateProviderBatch } from './provider-batches.ts';

export class PostgresContractStore extends PgCalibration implements Store {
  readonly kind = 'postgres' as const;

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
      // h-harden: the queue's jobs hold the runs' item text; they go before the runs do.
      await purgeOrgBatchJobs(c, orgId);
      for (const table of ORG_TABLES) await c.query(`DELETE FROM ${table} WHERE org_id = $1`, [orgId]);
      for (const table of SURFACE_TABLES) await c.query(`DELETE FROM ${table} WHERE org_id = $1`, [orgId]);
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

  // Budgets (room h-cost, postgres/budgets.ts): reservations and settlements are single statements, never retried.
  // Reservations are held by this process (postgres/budgets.ts): one killed mid-run lets go after the lease.
  private budgetHolds?: BudgetHolds;
  private holds = () => (this.budgetHolds ??= BudgetHolds.started((sql, params) => this.write(sql, params), this.budgetLeaseMs)).hold;
  reserveBudget = (key: BudgetKey, amount: number, cap: number) => pgReserveBudget((sql, params) => this.write(sql, params), key, amount, cap, this.holds());
  settleBudget = (key: BudgetKey, reserved: number, spent: number) => pgSettleBudget((sql, params) => this.write(sql, params), key, reserved, spent, this.holds());
  override close = () => (this.budgetHolds?.stop(), super.close());
  listBudgetCounters(filter: { org_id?: string; period?: string; scope?: BudgetScope }) {
    return pgListBudgetCounters((sql, params) => this.query(sql, params), filter);
  }
  setBudgetCap(cap: Omit<BudgetCap, 'cap_usd'> & { cap_usd: number | null }) {
    return pgSetBudgetCap((sql, params) => this.write(sql, params), cap);
  }
  listBudgetCaps(orgId: string) {
    return pgListBudgetCaps((sql, params) => this.query(sql, params), orgId);
  }
  // Provider batches (issue 32, postgres/provider-batches.ts)
  createProviderBatch = (r: ProviderBatchRecord) => pgCreateProviderBatch((sql, params) => this.write(sql, params), r);
  updateProviderBatch = (id: string, patch: ProviderBatchPatch) => pgUpdateProviderBatch((sql, params) => this.write(sql, params), id, patch);
  listProviderBatches = (batchId: string) => pgListProviderBatches((sql, params) => this.query(sql, params), batchId);

  // The result cache (migrations/010_result_cache.sql): a hit takes a new use number; a put evicts
  // every entry maxEntries or more numbers below its own, in the same statement.
  getCachedResult(orgId: string, key: string) {
    return this.one("UPDATE result_cache SET used = nextval('result_cache_use') WHERE org_id = $1 AND key = $2 RETURNING result", [orgId, key], (r) => r.result as EvaluatorResult);
  }
  async putCachedResult(orgId: string, key: string, result: EvaluatorResult, maxEntries: number) {
    await this.write(
      `WITH put AS (
         INSERT INTO result_cache (org_id, key, used, result) VALUES ($1, $2, nextval('result_cache_use'), $3)
         ON CONFLICT (org_id, key) DO UPDATE SET used = EXCLUDED.used, result = EXCLUDED.result, created_at = now()
         RETURNING used)
       DELETE FROM result_cache WHERE used <= (SELECT used FROM put) - $4 AND NOT (org_id = $1 AND key = $2)`,
      [orgId, key, json(result), Math.max(0, maxEntries)],
    );
  }

  // Registered judge models: one JSON document per model, with name and created_at as columns for lookups and pages.

  private modelConflict(m: ModelRecord) {
    return (c: string): ConflictReason =>
      c === 'models_unique_name' ? { kind: 'name_taken', resource: 'model', name: m.name } : { kind: 'id_taken', resource: 'model', id: m.id };
  }
  async createModel(model: ModelRecord): Promise<void> {
    await this.write(
      'INSERT INTO models (id, org_id, name, created_at, record) VALUES ($1, $2, $3, $4, $5)',
      [model.id, model.org_id, model.name, model.created_at, json(model)],
      this.modelConflict(model),
    );
  }
  getModel(id: string) {
    return this.one('SELECT record FROM models WHERE id = $1', [id], (r) => r.record as ModelRecord);
  }
  getModelByName(orgId: string, name: string) {
    return this.one('SELECT record FROM models WHERE org_id = $1 AND name = $2', [orgId, name], (r) => r.record as ModelRecord);
  }
  async listModels(orgId: string, page: PageQuery) {
    const q = new PageSql();
    q.where.push(`org_id = ${q.p(orgId)}`);
    return toPage((await this.query(q.sql('models', page), q.params)).rows, page, (r) => r.record as ModelRecord);
  }
  async updateModel(model: ModelRecord) {
    const { rowCount } = await this.write('UPDATE models SET name = $2, record = $3 WHERE id = $1', [model.id, model.name, json(model)], this.modelConflict(model));
    return (rowCount ?? 0) > 0;
  }
  async deleteModel(id: string) {
    const { rowCount } = await this.write('DELETE FROM models WHERE id = $1', [id]);
    return (rowCount ?? 0) > 0;
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

  protected evaluatorConflict(e: EvaluatorRecord) {
    return (c: string): ConflictReason =>
      c === 'evaluators_unique_name' ? { kind: 'name_taken', resource: 'evaluator', name: e.name } : { kind: 'id_taken', resource: 'evaluator', id: e.id };
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

  protected judgeConflict(j: JudgeRecord) {
    return (c: string): ConflictReason =>
      c === 'judges_unique_name' ? { kind: 'name_taken', resource: 'judge', name: j.name } : { kind: 'id_taken', resource: 'judge', id: j.id };
  }

  async createJudge(judge: JudgeRecord): Promise<void> {
    await this.transaction(async (c) => {
      await c.query(
        `INSERT INTO judges (${JUDGE_COLUMNS.slice(0, 8).join(', ')}, evaluator_ids, ${JUDGE_COLUMNS.slice(8).join(', ')}, extra) VALUES (${placeholders(13)})`,
        judgeValues(judge),
      );
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
    await this.write(`INSERT INTO execution_logs (${LOG_INSERT_COLUMNS.join(', ')}) VALUES (${placeholders(LOG_INSERT_COLUMNS.length)})`, logValues(log), () => ({
      kind: 'id_taken',
      resource: 'execution_log',
      id: log.id,
    }));
  }
  getExecutionLog(id: string) {
    return this.one('SELECT * FROM execution_logs WHERE id = $1', [id], logFromRow);
  }
  async listExecutionLogs(filter: LogFilter, page: PageQuery): Promise<Page<ExecutionLogRecord>> {
    const { sql, params } = logPageQuery(filter, page);
    return toPage((await this.query(sql, params)).rows, page, logFromRow);
  }

  async listLogValues(orgId: string, field: LogValueField, query: ValueQuery): Promise<{ values: string[]; more: boolean }> {
    const { sql, params } = logValuesQuery(orgId, field, query);
    const values = (await this.query(sql, params)).rows.map((r) => r.value as string);
    return { values: values.slice(0, query.limit), more: values.length > query.limit };
  }

  // Attachments (h-attach; postgres/files.ts, migration 018)
  readonly files = new PgFiles(
    (sql, params) => this.query(sql, params),
    (sql, params) => this.write(sql, params),
  );
  // Claim tokens and synthetic data (room surface; postgres/surface.ts)
  private readonly surface = new PgSurface(
    (sql, params) => this.query(sql, params),
    (sql, params) => this.write(sql, params),
  );
  createClaimToken = (t: ClaimTokenRecord) => this.surface.createClaimToken(t);
  getClaimToken = (hash: string) => this.surface.getClaimToken(hash);
  useClaimToken = (hash: string, usedAt: string, orgId: string) => this.surface.useClaimToken(hash, usedAt, orgId);
  putSyntheticData = (r: SyntheticDataRecord) => this.surface.putSyntheticData(r);
  getSyntheticData = (judgeId: string) => this.surface.getSyntheticData(judgeId);
  listPendingSyntheticData = () => this.surface.listPendingSyntheticData();
}
