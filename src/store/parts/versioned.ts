// Store parts for the versioned resources, evaluators and judges: every update keeps a snapshot, and
// both backends keep them through one helper each (json-versioned.ts, postgres/versioned.ts) that
// evaluatorPart and judgePart name as the Store methods.
import type { Evaluator, Judge, JudgeGeneration } from '../../schemas.ts';
import type { Page, PageQuery, Visible } from './page.ts';

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

export interface EvaluatorStore {
  /** Stores version 1 (or the given version, for presets) and its snapshot. Names are unique per org. */
  createEvaluator(evaluator: EvaluatorRecord): Promise<void>;
  /** The latest version; may be read-only (the JSON store's snapshot): copy it to change it. */
  getEvaluator(id: string): Promise<EvaluatorRecord | null>;
  getEvaluatorVersion(id: string, version: number): Promise<EvaluatorRecord | null>;
  listEvaluatorVersions(id: string): Promise<EvaluatorRecord[]>;
  listEvaluators(filter: EvaluatorFilter, page: PageQuery): Promise<Page<EvaluatorRecord>>;
  /** Replaces the latest version when it is still `expectedVersion`; false when someone else won. */
  updateEvaluator(next: EvaluatorRecord, expectedVersion: number): Promise<boolean>;
  deleteEvaluator(id: string): Promise<boolean>;
}

export interface JudgeStore {
  createJudge(judge: JudgeRecord): Promise<void>;
  /** The latest version; may be read-only (the JSON store's snapshot): copy it to change it. */
  getJudge(id: string): Promise<JudgeRecord | null>;
  getJudgeVersion(id: string, version: number): Promise<JudgeRecord | null>;
  listJudgeVersions(id: string): Promise<JudgeRecord[]>;
  listJudges(filter: JudgeFilter, page: PageQuery): Promise<Page<JudgeRecord>>;
  updateJudge(next: JudgeRecord, expectedVersion: number): Promise<boolean>;
  deleteJudge(id: string): Promise<boolean>;
  /** Judges (any org) whose latest version applies this evaluator. */
  findJudgesUsingEvaluator(evaluatorId: string): Promise<Array<{ id: string; name: string; org_id: string }>>;
}

/**
 * One versioned resource as a backend keeps it (store/json-versioned.ts, store/postgres/versioned.ts):
 * the latest version and every version's snapshot, written together.
 */
export interface Versioned<R, F> {
  create(record: R): Promise<void>;
  get(id: string): Promise<R | null>;
  getVersion(id: string, version: number): Promise<R | null>;
  /** Newest version first. */
  listVersions(id: string): Promise<R[]>;
  list(filter: F, page: PageQuery): Promise<Page<R>>;
  update(next: R, expectedVersion: number): Promise<boolean>;
  delete(id: string): Promise<boolean>;
}

/** The evaluator part of a store, from its backend's versioned table: the names are given once, here. */
export function evaluatorPart(v: Versioned<EvaluatorRecord, EvaluatorFilter>): EvaluatorStore {
  return {
    createEvaluator: (r) => v.create(r),
    getEvaluator: (id) => v.get(id),
    getEvaluatorVersion: (id, version) => v.getVersion(id, version),
    listEvaluatorVersions: (id) => v.listVersions(id),
    listEvaluators: (filter, page) => v.list(filter, page),
    updateEvaluator: (next, expected) => v.update(next, expected),
    deleteEvaluator: (id) => v.delete(id),
  };
}

/** The judge part, likewise; which judges use an evaluator is the backend's own query. */
export function judgePart(v: Versioned<JudgeRecord, JudgeFilter>, findUsing: JudgeStore['findJudgesUsingEvaluator']): JudgeStore {
  return {
    createJudge: (r) => v.create(r),
    getJudge: (id) => v.get(id),
    getJudgeVersion: (id, version) => v.getVersion(id, version),
    listJudgeVersions: (id) => v.listVersions(id),
    listJudges: (filter, page) => v.list(filter, page),
    updateJudge: (next, expected) => v.update(next, expected),
    deleteJudge: (id) => v.delete(id),
    findJudgesUsingEvaluator: findUsing,
  };
}
