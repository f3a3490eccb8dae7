// Store parts for the versioned resources, evaluators and judges: every update keeps a snapshot, and
// both backends write them through one helper each (json-versioned.ts, postgres/versioned.ts).
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
  getJudge(id: string): Promise<JudgeRecord | null>;
  getJudgeVersion(id: string, version: number): Promise<JudgeRecord | null>;
  listJudgeVersions(id: string): Promise<JudgeRecord[]>;
  listJudges(filter: JudgeFilter, page: PageQuery): Promise<Page<JudgeRecord>>;
  updateJudge(next: JudgeRecord, expectedVersion: number): Promise<boolean>;
  deleteJudge(id: string): Promise<boolean>;
  /** Judges (any org) whose latest version applies this evaluator. */
  findJudgesUsingEvaluator(evaluatorId: string): Promise<Array<{ id: string; name: string; org_id: string }>>;
}
