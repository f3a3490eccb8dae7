// The JSON store's annotations and calibration runs: two tables of db.json ("annotations",
// "calibration_runs", keyed by id; absent in files written before them). An organization holds
// hundreds to thousands of each, so filters are plain scans of one table.
import { newestFirst, StoreConflictError, type AnnotationFilter, type AnnotationRecord, type CalibrationRunFilter, type CalibrationRunRecord, type Page } from './types.ts';

type Tables = { annotations: Record<string, AnnotationRecord>; calibration_runs: Record<string, CalibrationRunRecord> };
type Paginate = <T extends { created_at: string; id: string }>(sorted: T[]) => Page<T>;

export class JsonCalibrationTables {
  constructor(
    private readonly tables: () => Tables,
    private readonly save: () => Promise<void>,
  ) {}

  async createAnnotation(a: AnnotationRecord): Promise<void> {
    const table = this.tables().annotations;
    if (table[a.id]) throw new StoreConflictError({ kind: 'id_taken', resource: 'annotation', id: a.id });
    if (Object.values(table).some((x) => x.execution_log_id === a.execution_log_id && x.evaluator_id === a.evaluator_id)) {
      throw new StoreConflictError({ kind: 'annotation_exists', execution_log_id: a.execution_log_id, evaluator_id: a.evaluator_id });
    }
    table[a.id] = structuredClone(a);
    await this.save();
  }
  async getAnnotation(id: string): Promise<AnnotationRecord | null> {
    return structuredClone(this.tables().annotations[id] ?? null);
  }
  async listAnnotations(f: AnnotationFilter, paginate: Paginate): Promise<Page<AnnotationRecord>> {
    const rows = Object.values(this.tables().annotations).filter(
      (a) =>
        a.org_id === f.org_id &&
        (f.execution_log_id === undefined || a.execution_log_id === f.execution_log_id) &&
        (f.evaluator_id === undefined || a.evaluator_id === f.evaluator_id) &&
        (f.judge_id === undefined || a.judge_id === f.judge_id) &&
        (f.date_from === undefined || a.created_at >= f.date_from) &&
        (f.date_to === undefined || a.created_at <= f.date_to),
    );
    return paginate(rows.sort(newestFirst));
  }
  async updateAnnotation(a: AnnotationRecord): Promise<boolean> {
    const table = this.tables().annotations;
    if (!table[a.id]) return false;
    table[a.id] = structuredClone(a);
    await this.save();
    return true;
  }
  async deleteAnnotation(id: string): Promise<boolean> {
    const table = this.tables().annotations;
    if (!table[id]) return false;
    delete table[id];
    await this.save();
    return true;
  }

  async createCalibrationRun(r: CalibrationRunRecord): Promise<void> {
    const table = this.tables().calibration_runs;
    if (table[r.id]) throw new StoreConflictError({ kind: 'id_taken', resource: 'calibration_run', id: r.id });
    table[r.id] = structuredClone(r);
    await this.save();
  }
  async getCalibrationRun(id: string): Promise<CalibrationRunRecord | null> {
    return structuredClone(this.tables().calibration_runs[id] ?? null);
  }
  async listCalibrationRuns(f: CalibrationRunFilter, paginate: Paginate): Promise<Page<CalibrationRunRecord>> {
    const rows = Object.values(this.tables().calibration_runs).filter(
      (r) =>
        r.org_id === f.org_id &&
        (f.judge_id === undefined || r.judge_id === f.judge_id) &&
        (f.evaluator_id === undefined || r.evaluator_id === f.evaluator_id) &&
        (f.measures_evaluator_id === undefined || r.evaluator_versions.some((v) => v.evaluator_id === f.measures_evaluator_id)) &&
        (f.dataset_id === undefined || r.dataset_id === f.dataset_id) &&
        (f.status === undefined || r.status === f.status),
    );
    return paginate(rows.sort(newestFirst));
  }
  async updateCalibrationRun(r: CalibrationRunRecord): Promise<boolean> {
    const table = this.tables().calibration_runs;
    if (!table[r.id]) return false;
    table[r.id] = structuredClone(r);
    await this.save();
    return true;
  }

  /** Everything of one organization leaves with it (purgeOrganization). */
  purgeOrganization(orgId: string): void {
    const { annotations, calibration_runs } = this.tables();
    for (const a of Object.values(annotations)) if (a.org_id === orgId) delete annotations[a.id];
    for (const r of Object.values(calibration_runs)) if (r.org_id === orgId) delete calibration_runs[r.id];
  }
}
