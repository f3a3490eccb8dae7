// The PostgreSQL store's annotations and calibration runs (migrations/009_calibration.sql): one JSON
// document each, with the filtered and sorted fields as columns.
import type { AnnotationFilter, AnnotationRecord, CalibrationRunFilter, CalibrationRunRecord, ConflictReason, Page, PageQuery } from '../types.ts';
import { json, PageSql, toPage } from './codecs.ts';
import type { PgConnection } from './connection.ts';
import type { AnnotationStore, CalibrationStore } from '../parts/calibration.ts';

const annotationConflict =
  (a: AnnotationRecord) =>
  (constraint: string): ConflictReason =>
    constraint === 'annotations_log_evaluator_key'
      ? { kind: 'annotation_exists', execution_log_id: a.execution_log_id, evaluator_id: a.evaluator_id }
      : { kind: 'id_taken', resource: 'annotation', id: a.id };

export const pgCalibration = (db: PgConnection): AnnotationStore & CalibrationStore => ({
  async createAnnotation(a: AnnotationRecord): Promise<void> {
    await db.write(
      'INSERT INTO annotations (id, org_id, execution_log_id, evaluator_id, judge_id, created_at, record) VALUES ($1, $2, $3, $4, $5, $6, $7)',
      [a.id, a.org_id, a.execution_log_id, a.evaluator_id, a.judge_id, a.created_at, json(a)],
      annotationConflict(a),
    );
  },
  getAnnotation(id: string) {
    return db.one('SELECT record FROM annotations WHERE id = $1', [id], (r) => r.record as AnnotationRecord);
  },
  async listAnnotations(f: AnnotationFilter, page: PageQuery): Promise<Page<AnnotationRecord>> {
    const q = new PageSql();
    q.where.push(`org_id = ${q.p(f.org_id)}`);
    if (f.execution_log_id !== undefined) q.where.push(`execution_log_id = ${q.p(f.execution_log_id)}`);
    if (f.evaluator_id !== undefined) q.where.push(`evaluator_id = ${q.p(f.evaluator_id)}`);
    if (f.judge_id !== undefined) q.where.push(`judge_id = ${q.p(f.judge_id)}`);
    if (f.date_from !== undefined) q.where.push(`created_at >= ${q.p(f.date_from)}::timestamptz`);
    if (f.date_to !== undefined) q.where.push(`created_at <= ${q.p(f.date_to)}::timestamptz`);
    return toPage((await db.query(q.sql('annotations', page), q.params)).rows, page, (r) => r.record as AnnotationRecord);
  },
  async updateAnnotation(a: AnnotationRecord): Promise<boolean> {
    const { rowCount } = await db.write('UPDATE annotations SET record = $2 WHERE id = $1', [a.id, json(a)]);
    return (rowCount ?? 0) > 0;
  },
  async deleteAnnotation(id: string): Promise<boolean> {
    const { rowCount } = await db.write('DELETE FROM annotations WHERE id = $1', [id]);
    return (rowCount ?? 0) > 0;
  },

  async createCalibrationRun(r: CalibrationRunRecord): Promise<void> {
    await db.write(
      'INSERT INTO calibration_runs (id, org_id, judge_id, evaluator_id, evaluator_ids, dataset_id, status, created_at, record) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)',
      [r.id, r.org_id, r.judge_id, r.evaluator_id, r.evaluator_versions.map((v) => v.evaluator_id), r.dataset_id, r.status, r.created_at, json(r)],
      () => ({ kind: 'id_taken', resource: 'calibration_run', id: r.id }),
    );
  },
  getCalibrationRun(id: string) {
    return db.one('SELECT record FROM calibration_runs WHERE id = $1', [id], (r) => r.record as CalibrationRunRecord);
  },
  async listCalibrationRuns(f: CalibrationRunFilter, page: PageQuery): Promise<Page<CalibrationRunRecord>> {
    const q = new PageSql();
    q.where.push(`org_id = ${q.p(f.org_id)}`);
    if (f.judge_id !== undefined) q.where.push(`judge_id = ${q.p(f.judge_id)}`);
    if (f.evaluator_id !== undefined) q.where.push(`evaluator_id = ${q.p(f.evaluator_id)}`);
    if (f.measures_evaluator_id !== undefined) q.where.push(`evaluator_ids @> ARRAY[${q.p(f.measures_evaluator_id)}::text]`);
    if (f.dataset_id !== undefined) q.where.push(`dataset_id = ${q.p(f.dataset_id)}`);
    if (f.status !== undefined) q.where.push(`status = ${q.p(f.status)}`);
    return toPage((await db.query(q.sql('calibration_runs', page), q.params)).rows, page, (r) => r.record as CalibrationRunRecord);
  },
  async updateCalibrationRun(r: CalibrationRunRecord): Promise<boolean> {
    const { rowCount } = await db.write('UPDATE calibration_runs SET status = $2, record = $3 WHERE id = $1', [r.id, r.status, json(r)]);
    return (rowCount ?? 0) > 0;
  },
});
