// The Store interface: everything Tribunal keeps, composed of one part per resource (store/parts/).
// Two implementations (JSON files, PostgreSQL) pass one contract test suite (test/store-contract.ts),
// each assembled from parts of the same names. Stores know nothing of callers or HTTP; visibility is
// expressed as data in the filters so that SQL can apply it in the query.
import type { ApiKeyStore, OrganizationStore, ProjectStore } from './parts/accounts.ts';
import type { AnnotationStore, CalibrationStore } from './parts/calibration.ts';
import type { BatchStore, ProviderBatchStore } from './parts/batches.ts';
import type { BudgetStore } from './parts/budgets.ts';
import type { DatasetStore } from './parts/datasets.ts';
import type { FilesPart } from './parts/files.ts';
import type { LogStore, ResultCacheStore } from './parts/logs.ts';
import type { ModelStore } from './parts/models.ts';
import type { SurfaceStore } from './parts/surface.ts';
import type { EvaluatorStore, JudgeStore } from './parts/versioned.ts';
export type { AttachmentType, FileRecord, FileStore } from './file-types.ts';
export type { ClaimTokenRecord, SyntheticDataRecord, SyntheticSample } from './surface-types.ts';
export type { BudgetCap, BudgetCounter, BudgetKey, BudgetScope, RowSpend } from './budget-types.ts';
export type { ProviderBatchPatch, ProviderBatchRecord, ProviderBatchState } from './provider-batch-types.ts';
export { rowScores, type BatchExecutionRecord, type BatchFilter, type BatchPatch, type BatchRowQuery, type BatchRowRecord, type BatchRowScores } from './batch-types.ts';
export { isAfter, newestFirst, type Page, type PageQuery, type Visible } from './parts/page.ts';
export type { ApiKeyRecord, ApiKeyStore, OrganizationStore, ProjectRecord, ProjectStore } from './parts/accounts.ts';
export type { EvaluatorFilter, EvaluatorRecord, EvaluatorStore, JudgeFilter, JudgeRecord, JudgeStore } from './parts/versioned.ts';
export type { ModelRecord, ModelStore } from './parts/models.ts';
export type { ExecutionLogRecord, LogFilter, LogStore, LogValueField, ResultCacheStore, ValueQuery } from './parts/logs.ts';
export type { DatasetFilter, DatasetItemRecord, DatasetRecord, DatasetStore, ItemPage, ItemPageQuery } from './parts/datasets.ts';
export type { AnnotationFilter, AnnotationRecord, AnnotationStore, CalibrationRunFilter, CalibrationRunRecord, CalibrationStore } from './parts/calibration.ts';
export type { BatchStore, ProviderBatchStore } from './parts/batches.ts';
export type { BudgetStore } from './parts/budgets.ts';
export type { FilesPart } from './parts/files.ts';
export type { SurfaceStore } from './parts/surface.ts';

/** What every store does besides keeping resources: open, close, answer a health check. */
export interface StoreLifecycle {
  readonly kind: 'json' | 'postgres';
  init(): Promise<void>;
  close(): Promise<void>;
  /** Throws when the store cannot be reached. */
  ping(): Promise<void>;
}

/** The whole store: its lifecycle and every resource part. A new resource is a new part here. */
export interface Store
  extends StoreLifecycle,
    OrganizationStore,
    ApiKeyStore,
    ProjectStore,
    EvaluatorStore,
    JudgeStore,
    ModelStore,
    LogStore,
    DatasetStore,
    ResultCacheStore,
    AnnotationStore,
    CalibrationStore,
    BatchStore,
    FilesPart,
    SurfaceStore,
    BudgetStore,
    ProviderBatchStore {}

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
