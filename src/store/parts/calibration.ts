// Store parts for human annotations and calibration runs.
import type { Annotation, CalibrationRun } from '../../schemas/calibration.ts';
import type { Page, PageQuery } from './page.ts';

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

export interface AnnotationStore {
  /** One annotation per (execution log, evaluator): a second is a conflict (annotation_exists). */
  createAnnotation(annotation: AnnotationRecord): Promise<void>;
  getAnnotation(id: string): Promise<AnnotationRecord | null>;
  listAnnotations(filter: AnnotationFilter, page: PageQuery): Promise<Page<AnnotationRecord>>;
  /** Replaces the stored record (same id); false when it is gone. */
  updateAnnotation(annotation: AnnotationRecord): Promise<boolean>;
  deleteAnnotation(id: string): Promise<boolean>;
}

export interface CalibrationStore {
  createCalibrationRun(run: CalibrationRunRecord): Promise<void>;
  getCalibrationRun(id: string): Promise<CalibrationRunRecord | null>;
  listCalibrationRuns(filter: CalibrationRunFilter, page: PageQuery): Promise<Page<CalibrationRunRecord>>;
  /** Replaces the stored record (same id); false when it is gone. */
  updateCalibrationRun(run: CalibrationRunRecord): Promise<boolean>;
}
