// The Store interface: everything Tribunal keeps. Two implementations (JSON files, PostgreSQL)
// pass one contract test suite (test/store-contract.ts). Stores know nothing of callers or HTTP;
// visibility is expressed as data in the filters so that SQL can apply it in the query.
import type { ApiKey, Dataset, DatasetItem, DatasetItemInput, Evaluator, EvaluatorResult, ExecutionLog, Judge, JudgeGeneration, Model, Organization, Project } from '../schemas.ts';
import type { Annotation, CalibrationRun } from '../schemas/calibration.ts';
import type { ClaimTokenRecord, SyntheticDataRecord } from './surface-types.ts';
import type { FileStore } from './file-types.ts';
export type { AttachmentType, FileRecord, FileStore } from './file-types.ts';
export type { ClaimTokenRecord, SyntheticDataRecord, SyntheticSample } from './surface-types.ts';
import type { BudgetCap, BudgetCounter, BudgetKey, BudgetScope } from './budget-types.ts';
export type { BudgetCap, BudgetCounter, BudgetKey, BudgetScope } from './budget-types.ts';
import type { ProviderBatchPatch, ProviderBatchRecord } from './provider-batch-types.ts';
export type { ProviderBatchPatch, ProviderBatchRecord, ProviderBatchState } from './provider-batch-types.ts';
import type { BatchExecutionRecord, BatchFilter, BatchPatch, BatchRowQuery, BatchRowRecord, BatchRowScores } from './batch-types.ts';
export { rowScores, type BatchExecutionRecord, type BatchFilter, type BatchPatch, type BatchRowQuery, type BatchRowRecord, type BatchRowScores } from './batch-types.ts';

export type ApiKeyRecord = ApiKey & { org_id: string; hash: string };
export type ProjectRecord = Project & { org_id: string };
/**
 * org_id is null for the shipped presets. `requires_request`, `requires_turns` and `critical` are absent on evaluators
 * (and versions) stored before they existed; absent reads as false (evaluatorToWire).
 */
export type EvaluatorRecord = Omit<Evaluator, 'requires_request' | 'requires_turns' | 'critical'> & {
  org_id: string | null;
  requires_request?: boolean;
  requires_turns?: boolean;
  critical?: boolean;
};
/** `generation` is absent on judges stored before the field existed; it reads as null (judgeToWire). */
export type JudgeRecord = Omit<Judge, 'generation'> & { org_id: string; generation?: JudgeGeneration | null };
export type ExecutionLogRecord = ExecutionLog & { org_id: string };
/** `item_count` is kept by the store: what a caller gives on create is ignored. */
export type DatasetRecord = Dataset & { org_id: string };
/** `turns`/`system_prompt` are absent on items stored before conversations were accepted; absent reads as null (itemToWire). */
export type DatasetItemRecord = Omit<DatasetItem, 'turns' | 'system_prompt'> & { turns?: DatasetItem['turns']; system_prompt?: DatasetItem['system_prompt'] };

export interface DatasetFilter {
  org_id: string;
  project_id?: string;
  name?: string;
  search?: string;
}

/** Items are paged in insertion order; `after` is the position (`last`) of the previous page's end. */
export interface ItemPageQuery {
  limit: number;
  after?: number;
}
export interface ItemPage {
  items: DatasetItemRecord[];
  /** The position of the last item, present when there may be more. */
  last?: number;
}
/** `api_key_encrypted` is the key sealed with TRIBUNAL_SECRET_KEY (secret-box.ts); null = no key. */
/** `supports_attachments` is absent in records stored before it (read as false). */
export type ModelRecord = Omit<Model, 'supports_attachments'> & { org_id: string; api_key_encrypted: string | null; supports_attachments?: boolean };

export type AnnotationRecord = Annotation & { org_id: string };
/** Annotations of one organization; every field given must match. Dates are ISO-8601 instants, inclusive. */
export interface AnnotationFilter {
  org_id: string;
  execution_log_id?: string;
  evaluator_id?: string;
  judge_id?: string;
  date_from?: string;
  date_to?: string;
}
/** `previous_metrics` is never stored: it is read from the previous run. */
export type CalibrationRunRecord = Omit<CalibrationRun, 'previous_metrics'> & { org_id: string };
export interface CalibrationRunFilter {
  org_id: string;
  judge_id?: string;
  /** Runs of this single evaluator (evaluator_id on the run). */
  evaluator_id?: string;
  /** Runs that measured this evaluator, alone or in a judge (any entry of evaluator_versions). */
  measures_evaluator_id?: string;
  dataset_id?: string;
  status?: CalibrationRun['status'];
}

/** Newest first: created_at desc, then id desc. `after` is the last item of the previous page. */
export interface PageQuery {
  limit: number;
  after?: { created_at: string; id: string };
}
export interface Page<T> {
  items: T[];
  /** Present when there may be more items. */
  last?: { created_at: string; id: string };
}

/** What a caller may see: its own org's resources, plus public ones when include_public. */
export interface Visible {
  org_id: string;
  include_public: boolean;
  /** issue 26: the shipped presets (no organization) even when include_public is false. */
  include_presets?: boolean;
}

export interface EvaluatorFilter extends Visible {
  project_id?: string;
  search?: string;
  name?: string;
  is_preset?: boolean;
}

export interface JudgeFilter extends Visible {
  project_id?: string;
  search?: string;
  name?: string;
}

export interface LogFilter {
  org_id: string;
  /** Only the rows of this batch run. */
  batch_execution_id?: string;
  /** true: only rows of batch runs; false: only runs of their own (issue 26 item 7: the judge page's chart). */
  in_batch?: boolean;
  /** h-proxy: only logs of this type (judge, evaluator, comparison, proxy). */
  type?: string;
  judge_id?: string;
  evaluator_id?: string;
  project_id?: string;
  min_score?: number;
  max_score?: number;
  min_cost?: number;
  max_cost?: number;
  /** Every tag must be present on the log. */
  tags?: string[];
  session_id?: string;
  user_id?: string;
  /** Logs of this OpenTelemetry trace / span (online evaluation, issue 28). */
  trace_id?: string;
  span_id?: string;
  date_from?: string;
  date_to?: string;
}

/** Log fields whose known values can be listed (GET /v1/execution-logs/session-ids/ and /user-ids/). */
export type LogValueField = 'session_id' | 'user_id';
/** Values in bytewise ascending order (PostgreSQL's "C" collation): those after `after`, starting with `starts_with`. */
export interface ValueQuery {
  limit: number;
  after?: string;
  starts_with?: string;
}

export interface Store {
  readonly kind: 'json' | 'postgres';
  init(): Promise<void>;
  close(): Promise<void>;
  /** Throws when the store cannot be reached. */
  ping(): Promise<void>;

  createOrganization(org: Organization): Promise<void>;
  getOrganization(id: string): Promise<Organization | null>;
  findOrganizationByName(name: string): Promise<Organization | null>;

  /** Demo organizations created before `createdBefore` (ISO-8601), oldest first, at most `limit`. */
  listDemoOrganizations(createdBefore: string, limit: number): Promise<Organization[]>;
  /** Deletes an organization and everything it owns: keys, projects, evaluators, judges (every version), logs. */
  purgeOrganization(orgId: string): Promise<void>;

  createApiKey(key: ApiKeyRecord): Promise<void>;
  getApiKeyByPrefix(prefix: string): Promise<ApiKeyRecord | null>;
  getApiKey(id: string): Promise<ApiKeyRecord | null>;
  listApiKeys(orgId: string, page: PageQuery): Promise<Page<ApiKeyRecord>>;
  updateApiKey(id: string, patch: Partial<Pick<ApiKeyRecord, 'revoked_at' | 'last_used_at'>>): Promise<ApiKeyRecord | null>;

  /** Fails with a conflict error when the org already has a default project and this one is default too. */
  createProject(project: ProjectRecord): Promise<void>;
  getProject(id: string): Promise<ProjectRecord | null>;
  getDefaultProject(orgId: string): Promise<ProjectRecord | null>;
  listProjects(orgId: string, page: PageQuery): Promise<Page<ProjectRecord>>;

  /** Stores version 1 (or the given version, for presets) and its snapshot. Names are unique per org. */
  createEvaluator(evaluator: EvaluatorRecord): Promise<void>;
  getEvaluator(id: string): Promise<EvaluatorRecord | null>;
  getEvaluatorVersion(id: string, version: number): Promise<EvaluatorRecord | null>;
  listEvaluatorVersions(id: string): Promise<EvaluatorRecord[]>;
  listEvaluators(filter: EvaluatorFilter, page: PageQuery): Promise<Page<EvaluatorRecord>>;
  /** Replaces the latest version when it is still `expectedVersion`; false when someone else won. */
  updateEvaluator(next: EvaluatorRecord, expectedVersion: number): Promise<boolean>;
  deleteEvaluator(id: string): Promise<boolean>;

  createJudge(judge: JudgeRecord): Promise<void>;
  getJudge(id: string): Promise<JudgeRecord | null>;
  getJudgeVersion(id: string, version: number): Promise<JudgeRecord | null>;
  listJudgeVersions(id: string): Promise<JudgeRecord[]>;
  listJudges(filter: JudgeFilter, page: PageQuery): Promise<Page<JudgeRecord>>;
  updateJudge(next: JudgeRecord, expectedVersion: number): Promise<boolean>;
  deleteJudge(id: string): Promise<boolean>;
  /** Judges (any org) whose latest version applies this evaluator. */
  findJudgesUsingEvaluator(evaluatorId: string): Promise<Array<{ id: string; name: string; org_id: string }>>;

  /** Names are unique per org. */
  createModel(model: ModelRecord): Promise<void>;
  getModel(id: string): Promise<ModelRecord | null>;
  getModelByName(orgId: string, name: string): Promise<ModelRecord | null>;
  listModels(orgId: string, page: PageQuery): Promise<Page<ModelRecord>>;
  /** Replaces the stored record (same id); false when it is gone. */
  updateModel(model: ModelRecord): Promise<boolean>;
  deleteModel(id: string): Promise<boolean>;

  appendExecutionLog(log: ExecutionLogRecord): Promise<void>;
  getExecutionLog(id: string): Promise<ExecutionLogRecord | null>;
  listExecutionLogs(filter: LogFilter, page: PageQuery): Promise<Page<ExecutionLogRecord>>;
  /** Distinct non-null values of a log field among one organization's logs; `more` when a next page may exist. */
  listLogValues(orgId: string, field: LogValueField, query: ValueQuery): Promise<{ values: string[]; more: boolean }>;

  /** Names are unique per org. */
  createDataset(dataset: DatasetRecord): Promise<void>;
  getDataset(id: string): Promise<DatasetRecord | null>;
  listDatasets(filter: DatasetFilter, page: PageQuery): Promise<Page<DatasetRecord>>;
  updateDataset(id: string, patch: { name?: string; description?: string; updated_at: string }): Promise<DatasetRecord | null>;
  /** Deletes the dataset and every item in it (logs of runs over it stay). */
  deleteDataset(id: string): Promise<boolean>;
  /** Appends items in the given order, all or none; false when the dataset does not exist. */
  addDatasetItems(datasetId: string, items: DatasetItemRecord[]): Promise<boolean>;
  getDatasetItem(datasetId: string, itemId: string): Promise<DatasetItemRecord | null>;
  listDatasetItems(datasetId: string, page: ItemPageQuery): Promise<ItemPage>;
  /** Replaces an item (same id, same position); false when it does not exist. */
  updateDatasetItem(datasetId: string, item: DatasetItemRecord): Promise<boolean>;
  deleteDatasetItem(datasetId: string, itemId: string): Promise<boolean>;

  // The result cache (engine/result-cache.ts): evaluator results by key, per organization, bounded.
  /** The result stored under this organization's key, or null; a hit counts as a use (least recently used goes first). */
  getCachedResult(orgId: string, key: string): Promise<EvaluatorResult | null>;
  /** Stores (or replaces) the result; then at most `maxEntries` entries remain in the store, the least recently used evicted. */
  putCachedResult(orgId: string, key: string, result: EvaluatorResult, maxEntries: number): Promise<void>;
  /** One annotation per (execution log, evaluator): a second is a conflict (annotation_exists). */
  createAnnotation(annotation: AnnotationRecord): Promise<void>;
  getAnnotation(id: string): Promise<AnnotationRecord | null>;
  listAnnotations(filter: AnnotationFilter, page: PageQuery): Promise<Page<AnnotationRecord>>;
  /** Replaces the stored record (same id); false when it is gone. */
  updateAnnotation(annotation: AnnotationRecord): Promise<boolean>;
  deleteAnnotation(id: string): Promise<boolean>;

  createCalibrationRun(run: CalibrationRunRecord): Promise<void>;
  getCalibrationRun(id: string): Promise<CalibrationRunRecord | null>;
  listCalibrationRuns(filter: CalibrationRunFilter, page: PageQuery): Promise<Page<CalibrationRunRecord>>;
  /** Replaces the stored record (same id); false when it is gone. */
  updateCalibrationRun(run: CalibrationRunRecord): Promise<boolean>;

  /** Stores a batch run, with the items given in the request (inline runs) in their order. */
  createBatchExecution(batch: BatchExecutionRecord, items?: DatasetItemInput[]): Promise<void>;
  getBatchExecution(id: string): Promise<BatchExecutionRecord | null>;
  /** Newest first. */
  listBatchExecutions(filter: BatchFilter, page: PageQuery): Promise<Page<BatchExecutionRecord>>;
  /** Every run still queued or running, in any organization (resumed at start-up). */
  listUnfinishedBatchExecutions(): Promise<BatchExecutionRecord[]>;
  /** Sets the fields given; null when the run is unknown or `if_status` did not hold. */
  updateBatchExecution(id: string, patch: BatchPatch): Promise<BatchExecutionRecord | null>;
  /**
   * Records one finished row and counts it (done when it has a score, failed otherwise; its cost
   * is added), atomically. False, changing nothing, when the row at this position exists already.
   */
  recordBatchRow(batchId: string, row: BatchRowRecord): Promise<boolean>;
  listBatchRows(batchId: string, query: BatchRowQuery): Promise<{ items: BatchRowRecord[]; last?: number }>;
  /** The same pages, each row cut to its scores (`rowScores`): what comparisons, summaries and the runner read. */
  listBatchRowScores(batchId: string, query: BatchRowQuery): Promise<{ items: BatchRowScores[]; last?: number }>;
  /** Items given in the request of an inline run: `count` from position `from`. */
  getBatchItems(batchId: string, from: number, count: number): Promise<DatasetItemInput[]>;

  /** Attachments (h-attach; store/file-types.ts): bytes and metadata per organization, purged with it. */
  readonly files: FileStore;
  // Claim tokens and synthetic data (room surface, issue 30; store/surface-types.ts)
  /** A token is stored by its hash; a second with the same hash is a conflict. */
  createClaimToken(token: ClaimTokenRecord): Promise<void>;
  getClaimToken(tokenHash: string): Promise<ClaimTokenRecord | null>;
  /** Marks the token used, only when it is not yet: false (changing nothing) when it was used already or is unknown. */
  useClaimToken(tokenHash: string, usedAt: string, usedByOrgId: string): Promise<boolean>;
  /** Stores (or replaces) a judge's synthetic data, one per judge. */
  putSyntheticData(record: SyntheticDataRecord): Promise<void>;
  getSyntheticData(judgeId: string): Promise<SyntheticDataRecord | null>;
  /** Every generation still pending, in any organization (resumed at start-up). */
  listPendingSyntheticData(): Promise<SyntheticDataRecord[]>;
  // Budgets (room h-cost, src/budgets/): cost caps and the spend counted against them.
  /**
   * Atomically adds `amount` to the counter's reserved USD when spent + reserved is below `cap`
   * (the counter starts at 0); answers the counter after, or null (changing nothing) when not below.
   */
  reserveBudget(key: BudgetKey, amount: number, cap: number): Promise<BudgetCounter | null>;
  /** Atomically takes `reserved` off the counter's reservations and adds `spent` to what it spent (the counter starts at 0). */
  settleBudget(key: BudgetKey, reserved: number, spent: number): Promise<void>;
  /** Counters of one organization (or every one when org_id is absent), in one period when given. */
  listBudgetCounters(filter: { org_id?: string; period?: string; scope?: BudgetScope }): Promise<BudgetCounter[]>;
  /** Sets (or, with cap_usd null, removes) the cap of one scope. */
  setBudgetCap(cap: Omit<BudgetCap, 'cap_usd'> & { cap_usd: number | null }): Promise<void>;
  listBudgetCaps(orgId: string): Promise<BudgetCap[]>;
  // Provider batches of runs in mode provider_batch (issue 32, src/batch/provider-*.ts); durable before answered.
  createProviderBatch(record: ProviderBatchRecord): Promise<void>;
  updateProviderBatch(id: string, patch: ProviderBatchPatch): Promise<ProviderBatchRecord | null>;
  /** A run's provider batches, oldest first. */
  listProviderBatches(batchId: string): Promise<ProviderBatchRecord[]>;
}

/** Why a write was refused as a conflict: data, so that both stores report the same thing. */
export type ConflictReason =
  | { kind: 'name_taken'; resource: 'evaluator' | 'judge' | 'project' | 'dataset' | 'model'; name: string }
  | { kind: 'default_project_exists' }
  | { kind: 'key_prefix_taken' }
  | { kind: 'annotation_exists'; execution_log_id: string; evaluator_id: string }
  | {
      kind: 'id_taken';
      resource:
        | 'organization'
        | 'api_key'
        | 'project'
        | 'evaluator'
        | 'judge'
        | 'execution_log'
        | 'dataset'
        | 'dataset_item'
        | 'model'
        | 'batch_execution'
        | 'annotation'
        | 'calibration_run';
      id: string;
    };

/** A plain statement of the reason; the domain writes what the caller is told (domain/conflicts.ts). */
export function describeConflict(reason: ConflictReason): string {
  switch (reason.kind) {
    case 'name_taken':
      return `${reason.resource === 'evaluator' ? 'an evaluator' : `a ${reason.resource}`} named ${JSON.stringify(reason.name)} already exists in this organization`;
    case 'default_project_exists':
      return 'the organization already has a default project';
    case 'key_prefix_taken':
      return 'an API key with this prefix exists';
    case 'annotation_exists':
      return `execution log ${reason.execution_log_id} already has an annotation for evaluator ${reason.evaluator_id}`;
    case 'id_taken':
      return `${reason.resource.replace('_', ' ')} ${reason.id} exists`;
  }
}

/** Thrown by stores for unique-name and similar constraint violations. */
export class StoreConflictError extends Error {
  constructor(readonly reason: ConflictReason) {
    super(describeConflict(reason));
    this.name = 'StoreConflictError';
  }
}

/** Thrown by stores when the backing database cannot be reached. */
export class StoreUnavailableError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'StoreUnavailableError';
  }
}

/** Newest-first ordering shared by every store: created_at desc, id desc. */
export function newestFirst(a: { created_at: string; id: string }, b: { created_at: string; id: string }): number {
  if (a.created_at !== b.created_at) return a.created_at < b.created_at ? 1 : -1;
  return a.id < b.id ? 1 : a.id > b.id ? -1 : 0;
}

/** True when `item` comes strictly after the cursor position in newest-first order. */
export function isAfter(item: { created_at: string; id: string }, after: { created_at: string; id: string }): boolean {
  return newestFirst(after, item) < 0;
}
