// The embedded default store: lowdb on JSON files in one data directory, for one machine.
//
// - db.json holds organizations, keys, projects, evaluators and judges (with every version). It is
//   small; lowdb rewrites it whole on each commit, through a durable adapter (temp file, fsync,
//   rename, fsync of the directory) so a crash leaves either the old or the new file.
// - logs.jsonl holds execution logs, one JSON line each, append-only: appending costs the same
//   with 100 or 100,000 logs already stored. A torn last line (crash mid-append) is dropped at load;
//   any other bad line is skipped and copied aside (json-files.ts), never cut off. Only a compact
//   index of the logs stays in memory (log-index.ts); a log's record is read from its line.
// - Every mutation is applied in memory synchronously (so checks and writes are serialized by the
//   event loop) and then committed; concurrent commits are grouped into one disk write.
// - tribunal.lock keeps a second process out (see lock.ts).
import fs from 'node:fs';
import path from 'node:path';
import { Low } from 'lowdb';
import type { DatasetItemInput, EvaluatorResult, Organization } from '../schemas.ts';
import { assertDbBesideLogs, DurableJsonFile, GroupCommit, removeStaleTempFiles } from './json-files.ts';
import { JsonCalibrationTables } from './json-calibration.ts';
import { JsonBudgetTables, type BudgetTables } from './json-budgets.ts';
import { JsonProviderBatches, type ProviderBatchTables } from './json-provider-batches.ts';
import type { BudgetCap, BudgetKey, BudgetScope, ProviderBatchPatch, ProviderBatchRecord } from './types.ts';
import { JsonBatches } from './json-batches.ts';
import { JsonDatasets } from './json-datasets.ts';
import { LogFile } from './log-file.ts';
import type { ValueField } from './log-index.ts';
import { JsonModelTable } from './json-models.ts';
import { JsonProjectTable } from './json-projects.ts';
import { JsonApiKeyTable } from './json-api-keys.ts';
import { JsonSurfaceTables } from './json-surface.ts';
import { JsonFileTable } from './json-files-table.ts';
import type { ClaimTokenRecord, SyntheticDataRecord } from './surface-types.ts';
import { ResultCacheLru } from './result-cache-lru.ts';
import { DataDirLock, type LockOwner } from './lock.ts';
import { composed } from './compose.ts';
import { jsonVersionedParts } from './json-versioned.ts';
import type { EvaluatorStore, JudgeStore } from './parts/versioned.ts';
import {
  newestFirst,
  StoreConflictError,
  type AnnotationFilter,
  type AnnotationRecord,
  type ApiKeyRecord,
  type CalibrationRunFilter,
  type CalibrationRunRecord,
  type BatchExecutionRecord,
  type BatchFilter,
  type BatchPatch,
  type BatchRowQuery,
  type BatchRowRecord,
  type DatasetFilter,
  type DatasetItemRecord,
  type DatasetRecord,
  type ModelRecord,
  type ExecutionLogRecord,
  type LogFilter,
  type Page,
  type PageQuery,
  type ProjectRecord,
  type ItemPageQuery,
  type Store,
} from './types.ts';

import { clone, emptyData, paginate, withoutPrototypes, type JsonData } from './json-data.ts';

export interface JsonStoreOptions {
  dataDir: string;
  role?: LockOwner['role'];
  /** How long to wait for a CLI that briefly holds the directory. */
  lockWaitMs?: number;
  adminSocket?: string;
}

export class JsonStore extends composed<EvaluatorStore & JudgeStore>() implements Store {
  readonly kind = 'json' as const;
  private db!: Low<JsonData>;
  private lock?: DataDirLock;
  private dbCommit!: GroupCommit;
  private logCommit!: GroupCommit;
  private logs?: LogFile;
  private closed = false;
  readonly closers: Array<() => Promise<void>> = []; // rooms writing into its directory (review queues): closed before the lock goes
  /** Datasets live beside db.json, not in it (json-datasets.ts). */
  private datasets!: JsonDatasets;
  /** Batch runs live beside db.json too (json-batches.ts). */
  private batches!: JsonBatches;

  constructor(private readonly opts: JsonStoreOptions) {
    // Evaluators and judges: one versioned table each (json-versioned.ts), over db.json once init has
    // read it. The parts are made before super() (they are what it assembles), so they reach the
    // store through `self`, set right after and read only when a method runs.
    // biome-ignore lint/complexity/noUselessThisAlias: `this` does not exist yet where the parts are made.
    let self!: JsonStore;
    super(
      jsonVersionedParts(
        () => self.data,
        () => self.save(),
      ),
    );
    self = this;
  }

  get dataDir() {
    return this.opts.dataDir;
  }

  async init(): Promise<void> {
    const dir = this.opts.dataDir;
    fs.mkdirSync(dir, { recursive: true });
    this.lock = await DataDirLock.acquire(dir, this.opts.role ?? 'server', {
      waitMs: this.opts.lockWaitMs ?? 5000,
      adminSocket: this.opts.adminSocket,
    });
    try {
      removeStaleTempFiles(dir);
      assertDbBesideLogs(dir);
      this.db = new Low<JsonData>(new DurableJsonFile<JsonData>(path.join(dir, 'db.json')), emptyData());
      await this.db.read();
      if (!this.db.data) {
        // Written at once, so that a db.json missing beside logs.jsonl always means a lost database.
        this.db.data = emptyData();
        await this.db.write();
      }
      withoutPrototypes(this.db.data);
      this.apiKeys.index();
      this.dbCommit = new GroupCommit(() => this.db.write());
      this.logs = await LogFile.open(path.join(dir, 'logs.jsonl'));
      this.logCommit = new GroupCommit(() => this.logs!.flush());
      this.datasets = new JsonDatasets(path.join(dir, 'datasets'));
      await this.datasets.load();
      this.batches = new JsonBatches(path.join(dir, 'batches'));
      await this.batches.load();
    } catch (err) {
      this.lock.release();
      throw err;
    }
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    // Let writes already acknowledged-to-be be on disk before the files and the lock are let go.
    await Promise.allSettled([this.dbCommit?.commit(), this.logCommit?.commit(), this.datasets?.flush(), this.batches?.flush(), ...this.closers.map((close) => close())]);
    await this.logs?.close();
    this.lock?.release();
  }
  async ping(): Promise<void> {
    if (this.closed) throw new Error('store is closed');
  }

  private get data(): JsonData {
    return this.db.data;
  }

  /** What a table of db.json is given: its part of the data (read late: init loads it) and the commit. */
  private part<T>(pick: (data: JsonData) => T): [() => T, () => Promise<void>] {
    return [() => pick(this.data), () => this.save()];
  }

  private save(): Promise<void> {
    // After close the directory may belong to another process: never write to it again.
    if (this.closed) return Promise.reject(new Error('the JSON store is closed'));
    return this.dbCommit.commit();
  }

  // Organizations
  async createOrganization(org: Organization): Promise<void> {
    this.data.organizations[org.id] = clone(org);
    await this.save();
  }
  async getOrganization(id: string) {
    return clone(this.data.organizations[id] ?? null);
  }
  async findOrganizationByName(name: string) {
    const found = Object.values(this.data.organizations).filter((o) => o.name === name && !o.is_demo);
    found.sort(newestFirst);
    return clone(found[found.length - 1] ?? null);
  }

  async listDemoOrganizations(createdBefore: string, limit: number) {
    const found = Object.values(this.data.organizations).filter((o) => o.is_demo && o.created_at < createdBefore);
    return clone(found.sort(newestFirst).reverse().slice(0, limit));
  }
  async purgeOrganization(orgId: string): Promise<void> {
    const d = this.data;
    this.apiKeys.dropOrganization(orgId);
    for (const table of ['projects', 'evaluators', 'judges'] as const) {
      for (const rec of Object.values(d[table])) if (rec.org_id === orgId) delete d[table][rec.id];
    }
    for (const table of ['evaluator_versions', 'judge_versions'] as const) {
      for (const [id, versions] of Object.entries(d[table])) if (versions[0]?.org_id === orgId) delete d[table][id];
    }
    for (const model of Object.values(d.models!)) if (model.org_id === orgId) delete d.models![model.id];
    for (const table of [this.calibration, this.surface, this.budgets, this.providerBatches, this.files]) table.purgeOrganization(orgId);
    delete d.organizations[orgId];
    this.resultCache.purgeOrganization(orgId);
    await this.datasets.deleteOrg(orgId);
    await this.batches.deleteOrg(orgId);
    // The logs leave the index at once; the file is rewritten inside the log commit.
    const purgedLogs = this.logs!.purgeOrganization(orgId);
    await this.save();
    await this.files.dropBytes(orgId);
    if (purgedLogs) await this.logCommit.commit();
  }

  // The result cache: in memory only (result-cache-lru.ts).
  private readonly resultCache = new ResultCacheLru();
  getCachedResult = async (orgId: string, key: string) => this.resultCache.get(orgId, key);
  putCachedResult = async (orgId: string, key: string, result: EvaluatorResult, maxEntries: number) => this.resultCache.put(orgId, key, result, maxEntries);

  // Registered judge models (json-models.ts)
  private readonly modelTable = new JsonModelTable(...this.part((d) => d.models!));
  createModel = (model: ModelRecord) => this.modelTable.create(model);
  getModel = (id: string) => this.modelTable.get(id);
  getModelByName = (orgId: string, name: string) => this.modelTable.byName(orgId, name);
  listModels = (orgId: string, page: PageQuery) => this.modelTable.list(orgId, (sorted) => paginate(sorted, page));
  updateModel = (model: ModelRecord) => this.modelTable.update(model);
  deleteModel = (id: string) => this.modelTable.delete(id);

  // Annotations and calibration runs (json-calibration.ts)
  private readonly calibration = new JsonCalibrationTables(...this.part((d) => ({ annotations: d.annotations!, calibration_runs: d.calibration_runs! })));
  createAnnotation = (a: AnnotationRecord) => this.calibration.createAnnotation(a);
  getAnnotation = (id: string) => this.calibration.getAnnotation(id);
  listAnnotations = (filter: AnnotationFilter, page: PageQuery) => this.calibration.listAnnotations(filter, (sorted) => paginate(sorted, page));
  updateAnnotation = (a: AnnotationRecord) => this.calibration.updateAnnotation(a);
  deleteAnnotation = (id: string) => this.calibration.deleteAnnotation(id);
  createCalibrationRun = (r: CalibrationRunRecord) => this.calibration.createCalibrationRun(r);
  getCalibrationRun = (id: string) => this.calibration.getCalibrationRun(id);
  listCalibrationRuns = (filter: CalibrationRunFilter, page: PageQuery) => this.calibration.listCalibrationRuns(filter, (sorted) => paginate(sorted, page));
  updateCalibrationRun = (r: CalibrationRunRecord) => this.calibration.updateCalibrationRun(r);

  // Attachments (h-attach): bytes in files/<org>/<id>, metadata in db.json (json-files-table.ts)
  readonly files = new JsonFileTable(() => path.join(this.opts.dataDir, 'files'), ...this.part((d) => d.files!));
  // Claim tokens and synthetic data (room surface; json-surface.ts)
  private readonly surface = new JsonSurfaceTables(...this.part((d) => ({ claim_tokens: d.claim_tokens!, synthetic_data: d.synthetic_data! })));
  createClaimToken = (t: ClaimTokenRecord) => this.surface.createClaimToken(t);
  getClaimToken = (hash: string) => this.surface.getClaimToken(hash);
  useClaimToken = (hash: string, usedAt: string, orgId: string) => this.surface.useClaimToken(hash, usedAt, orgId);
  putSyntheticData = (r: SyntheticDataRecord) => this.surface.putSyntheticData(r);
  getSyntheticData = (judgeId: string) => this.surface.getSyntheticData(judgeId);
  listPendingSyntheticData = () => this.surface.listPendingSyntheticData();
  // Budgets (room h-cost, json-budgets.ts)
  private readonly budgets = new JsonBudgetTables(...this.part((d) => d as BudgetTables));
  reserveBudget = (key: BudgetKey, amount: number, cap: number) => this.budgets.reserve(key, amount, cap);
  settleBudget = (key: BudgetKey, reserved: number, spent: number) => this.budgets.settle(key, reserved, spent);
  listBudgetCounters = (filter: { org_id?: string; period?: string; scope?: BudgetScope }) => this.budgets.list(filter);
  setBudgetCap = (cap: Omit<BudgetCap, 'cap_usd'> & { cap_usd: number | null }) => this.budgets.setCap(cap);
  listBudgetCaps = (orgId: string) => this.budgets.caps(orgId);
  private readonly providerBatches = new JsonProviderBatches(...this.part((d) => d as unknown as ProviderBatchTables)); // issue 32
  createProviderBatch = (r: ProviderBatchRecord) => this.providerBatches.create(r);
  updateProviderBatch = (id: string, patch: ProviderBatchPatch) => this.providerBatches.update(id, patch);
  listProviderBatches = (batchId: string) => this.providerBatches.list(batchId);

  // API keys (json-api-keys.ts)
  private readonly apiKeys = new JsonApiKeyTable(...this.part((d) => d.api_keys));
  createApiKey = (key: ApiKeyRecord) => this.apiKeys.create(key);
  getApiKeyByPrefix = (prefix: string) => this.apiKeys.byPrefixOf(prefix);
  getApiKey = (id: string) => this.apiKeys.get(id);
  listApiKeys = (orgId: string, page: PageQuery) => this.apiKeys.list(orgId, page);
  updateApiKey = (id: string, patch: Partial<Pick<ApiKeyRecord, 'revoked_at' | 'last_used_at'>>) => this.apiKeys.update(id, patch);

  // Projects (json-projects.ts)
  private readonly projectTable = new JsonProjectTable(...this.part((d) => d.projects));
  createProject = (project: ProjectRecord) => this.projectTable.create(project);
  getProject = (id: string) => this.projectTable.get(id);
  getDefaultProject = (orgId: string) => this.projectTable.getDefault(orgId);
  listProjects = (orgId: string, page: PageQuery) => this.projectTable.list(orgId, page);

  // Execution logs
  async appendExecutionLog(log: ExecutionLogRecord): Promise<void> {
    if (this.closed) throw new Error('the JSON store is closed');
    if (this.logs!.has(log.id)) throw new StoreConflictError({ kind: 'id_taken', resource: 'execution_log', id: log.id });
    // No copy: add() keeps the record only as its JSON line and the index's own values, never the object.
    this.logs!.add(log);
    await this.logCommit.commit();
  }
  async getExecutionLog(id: string) {
    return this.logs!.get(id);
  }
  async listExecutionLogs(filter: LogFilter, page: PageQuery): Promise<Page<ExecutionLogRecord>> {
    return this.logs!.list(filter, page);
  }
  async listLogValues(orgId: string, field: ValueField, query: { limit: number; after?: string; starts_with?: string }): Promise<{ values: string[]; more: boolean }> {
    return this.logs!.values(orgId, field, query);
  }

  // Datasets (json-datasets.ts)
  createDataset = (d: DatasetRecord) => this.datasets.create(d);
  getDataset = async (id: string) => this.datasets.get(id);
  listDatasets = async (filter: DatasetFilter, page: PageQuery) => this.datasets.list(filter, page);
  updateDataset = (id: string, patch: { name?: string; description?: string; updated_at: string }) => this.datasets.update(id, patch);
  deleteDataset = (id: string) => this.datasets.delete(id);
  addDatasetItems = (id: string, items: DatasetItemRecord[]) => this.datasets.addItems(id, items);
  getDatasetItem = (id: string, itemId: string) => this.datasets.getItem(id, itemId);
  listDatasetItems = (id: string, page: ItemPageQuery) => this.datasets.listItems(id, page);
  updateDatasetItem = (id: string, item: DatasetItemRecord) => this.datasets.updateItem(id, item);
  deleteDatasetItem = (id: string, itemId: string) => this.datasets.deleteItem(id, itemId);

  // Batch runs (json-batches.ts)
  createBatchExecution = (b: BatchExecutionRecord, items?: DatasetItemInput[]) => this.batches.create(b, items);
  getBatchExecution = async (id: string) => this.batches.get(id);
  listBatchExecutions = async (filter: BatchFilter, page: PageQuery) => this.batches.list(filter, page);
  listUnfinishedBatchExecutions = async () => this.batches.unfinished();
  updateBatchExecution = (id: string, patch: BatchPatch) => this.batches.update(id, patch);
  recordBatchRow = (batchId: string, row: BatchRowRecord) => this.batches.record(batchId, row);
  listBatchRows = (batchId: string, query: BatchRowQuery) => this.batches.listRows(batchId, query);
  listBatchRowScores = (batchId: string, query: BatchRowQuery) => this.batches.listRowScores(batchId, query);
  getBatchItems = (batchId: string, from: number, count: number) => this.batches.items(batchId, from, count);
}
