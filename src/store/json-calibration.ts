// The JSON store's annotations and calibration runs: two tables of db.json ("annotations",
// "calibration_runs", keyed by id; absent in files written before them). An organization holds
// hundreds to thousands of each, so filters are plain scans of one table.
import { clone, createdWithin, matchesGiven, pageNewestFirst } from './json-data.ts';
import type { AnnotationStore, CalibrationStore } from './parts/calibration.ts';
import { StoreConflictError, type AnnotationRecord, type CalibrationRunRecord } from './types.ts';

type Tables = { annotations: Record<string, AnnotationRecord>; calibration_runs: Record<string, CalibrationRunRecord> };

/** The annotation and calibration parts of the JSON store, over their tables (read late: init loads db.json) and the commit. */
export function jsonCalibration(tables: () => Tables, save: () => Promise<void>): AnnotationStore & CalibrationStore {
  /** Replaces a record that is there; false when it is gone. */
  const replace = async <R extends { id: string }>(table: Record<string, R>, record: R) => {
    if (!table[record.id]) return false;
    table[record.id] = clone(record);
    await save();
    return true;
  };
  return {
    async createAnnotation(a) {
      const table = tables().annotations;
      if (table[a.id]) throw new StoreConflictError({ kind: 'id_taken', resource: 'annotation', id: a.id });
      if (Object.values(table).some((x) => x.execution_log_id === a.execution_log_id && x.evaluator_id === a.evaluator_id)) {
        throw new StoreConflictError({ kind: 'annotation_exists', execution_log_id: a.execution_log_id, evaluator_id: a.evaluator_id });
      }
      table[a.id] = clone(a);
      await save();
    },
    async getAnnotation(id) {
      return clone(tables().annotations[id] ?? null);
    },
    listAnnotations: async (f, page) =>
      pageNewestFirst(tables().annotations, (a) => a.org_id === f.org_id && matchesGiven(f, a, ['execution_log_id', 'evaluator_id', 'judge_id']) && createdWithin(f, a), page),
    updateAnnotation: (a) => replace(tables().annotations, a),
    async deleteAnnotation(id) {
      const table = tables().annotations;
      if (!table[id]) return false;
      delete table[id];
      await save();
      return true;
    },

    async createCalibrationRun(r) {
      const table = tables().calibration_runs;
      if (table[r.id]) throw new StoreConflictError({ kind: 'id_taken', resource: 'calibration_run', id: r.id });
      table[r.id] = clone(r);
      await save();
    },
    async getCalibrationRun(id) {
      return clone(tables().calibration_runs[id] ?? null);
    },
    listCalibrationRuns: async (f, page) =>
      pageNewestFirst(
        tables().calibration_runs,
        (r) =>
          r.org_id === f.org_id &&
          matchesGiven(f, r, ['judge_id', 'evaluator_id', 'dataset_id', 'status']) &&
          (f.measures_evaluator_id === undefined || r.evaluator_versions.some((v) => v.evaluator_id === f.measures_evaluator_id)),
        page,
      ),
    updateCalibrationRun: (r) => replace(tables().calibration_runs, r),
  };
}
