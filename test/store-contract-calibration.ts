// The Store contract for annotations and calibration runs, run by defineStoreContract on every store.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { newId } from '../src/ids.ts';
import { StoreConflictError, type AnnotationRecord, type CalibrationRunRecord, type Store } from '../src/store/types.ts';

const at = (ms: number) => new Date(Date.UTC(2026, 0, 1) + ms).toISOString();

export function annotation(orgId: string, over: Partial<AnnotationRecord> = {}): AnnotationRecord {
  return {
    id: newId('ann'),
    org_id: orgId,
    execution_log_id: newId('log'),
    evaluator_id: 'evl_1',
    judge_id: 'jdg_1',
    score: 0.25,
    note: 'misses the date',
    created_at: at(0),
    updated_at: at(0),
    ...over,
  };
}

export function calibrationRun(orgId: string, over: Partial<CalibrationRunRecord> = {}): CalibrationRunRecord {
  return {
    id: newId('cal'),
    org_id: orgId,
    status: 'queued',
    judge_id: 'jdg_1',
    judge_version: 1,
    evaluator_id: null,
    dataset_id: 'dst_1',
    threshold: 0.5,
    batch_execution_id: `bat_${newId('cal').slice(4)}`,
    evaluator_versions: [{ evaluator_id: 'evl_1', evaluator_name: 'Grounded', version: 2 }],
    metrics: null,
    previous_run_id: null,
    created_at: at(0),
    finished_at: null,
    ...over,
  };
}

export function defineCalibrationContract(fresh: () => Promise<Store>): void {
  describe('annotations', () => {
    it('creates, reads, filters, pages newest first, edits and deletes', async () => {
      const store = await fresh();
      const a = annotation('org_a', { created_at: at(1), evaluator_id: 'evl_1', judge_id: 'jdg_1' });
      const b = annotation('org_a', { created_at: at(2), evaluator_id: 'evl_2', judge_id: 'jdg_1', note: null });
      const c = annotation('org_a', { created_at: at(3), evaluator_id: 'evl_1', judge_id: null, execution_log_id: a.execution_log_id.replace('log', 'lgx') });
      const foreign = annotation('org_b', { created_at: at(4) });
      for (const x of [a, b, c, foreign]) await store.createAnnotation(x);
      assert.deepEqual(await store.getAnnotation(a.id), a);
      assert.equal(await store.getAnnotation('ann_missing'), null);
      const ids = async (f: Parameters<Store['listAnnotations']>[0]) => (await store.listAnnotations(f, { limit: 10 })).items.map((x) => x.id);
      assert.deepEqual(await ids({ org_id: 'org_a' }), [c.id, b.id, a.id]);
      assert.deepEqual(await ids({ org_id: 'org_a', evaluator_id: 'evl_1' }), [c.id, a.id]);
      assert.deepEqual(await ids({ org_id: 'org_a', judge_id: 'jdg_1' }), [b.id, a.id]);
      assert.deepEqual(await ids({ org_id: 'org_a', execution_log_id: a.execution_log_id }), [a.id]);
      assert.deepEqual(await ids({ org_id: 'org_a', date_from: at(2), date_to: at(2) }), [b.id]);
      assert.deepEqual(await ids({ org_id: 'org_b' }), [foreign.id]);
      const first = await store.listAnnotations({ org_id: 'org_a' }, { limit: 2 });
      assert.deepEqual(
        first.items.map((x) => x.id),
        [c.id, b.id],
      );
      const second = await store.listAnnotations({ org_id: 'org_a' }, { limit: 2, after: first.last });
      assert.deepEqual(
        second.items.map((x) => x.id),
        [a.id],
      );
      assert.equal(second.last, undefined);

      const edited = { ...a, score: 0.9, note: 'fine after all', updated_at: at(9) };
      assert.equal(await store.updateAnnotation(edited), true);
      assert.deepEqual(await store.getAnnotation(a.id), edited);
      assert.equal(await store.updateAnnotation(annotation('org_a')), false);
      assert.equal(await store.deleteAnnotation(a.id), true);
      assert.equal(await store.deleteAnnotation(a.id), false);
      assert.equal(await store.getAnnotation(a.id), null);
    });

    it('refuses a second annotation of the same result (log, evaluator), and allows it once the first is gone', async () => {
      const store = await fresh();
      const a = annotation('org_a');
      await store.createAnnotation(a);
      await assert.rejects(store.createAnnotation(annotation('org_a', { execution_log_id: a.execution_log_id, evaluator_id: a.evaluator_id })), (err: unknown) => {
        assert.ok(err instanceof StoreConflictError);
        assert.deepEqual(err.reason, { kind: 'annotation_exists', execution_log_id: a.execution_log_id, evaluator_id: a.evaluator_id });
        return true;
      });
      // Another evaluator of the same log is another result.
      await store.createAnnotation(annotation('org_a', { execution_log_id: a.execution_log_id, evaluator_id: 'evl_other' }));
      await store.deleteAnnotation(a.id);
      await store.createAnnotation(annotation('org_a', { execution_log_id: a.execution_log_id, evaluator_id: a.evaluator_id }));
    });
  });

  describe('calibration runs', () => {
    it('creates, reads, filters (judge, evaluator, measured evaluator, dataset, status) and updates', async () => {
      const store = await fresh();
      const r1 = calibrationRun('org_a', { created_at: at(1) });
      const r2 = calibrationRun('org_a', {
        created_at: at(2),
        judge_id: null,
        judge_version: null,
        evaluator_id: 'evl_2',
        evaluator_versions: [{ evaluator_id: 'evl_2', evaluator_name: 'Clear', version: 1 }],
        dataset_id: 'dst_2',
      });
      const r3 = calibrationRun('org_a', {
        created_at: at(3),
        evaluator_versions: [
          { evaluator_id: 'evl_1', evaluator_name: 'Grounded', version: 3 },
          { evaluator_id: 'evl_2', evaluator_name: 'Clear', version: 1 },
        ],
      });
      const foreign = calibrationRun('org_b', { created_at: at(4) });
      for (const r of [r1, r2, r3, foreign]) await store.createCalibrationRun(r);
      assert.deepEqual(await store.getCalibrationRun(r1.id), r1);
      assert.equal(await store.getCalibrationRun('cal_missing'), null);
      await assert.rejects(store.createCalibrationRun(r1), StoreConflictError);
      const ids = async (f: Parameters<Store['listCalibrationRuns']>[0]) => (await store.listCalibrationRuns(f, { limit: 10 })).items.map((x) => x.id);
      assert.deepEqual(await ids({ org_id: 'org_a' }), [r3.id, r2.id, r1.id]);
      assert.deepEqual(await ids({ org_id: 'org_a', judge_id: 'jdg_1' }), [r3.id, r1.id]);
      assert.deepEqual(await ids({ org_id: 'org_a', evaluator_id: 'evl_2' }), [r2.id]);
      assert.deepEqual(await ids({ org_id: 'org_a', measures_evaluator_id: 'evl_2' }), [r3.id, r2.id]);
      assert.deepEqual(await ids({ org_id: 'org_a', dataset_id: 'dst_2' }), [r2.id]);
      assert.deepEqual(await ids({ org_id: 'org_a', status: 'completed' }), []);
      const page = await store.listCalibrationRuns({ org_id: 'org_a' }, { limit: 2 });
      assert.deepEqual(
        (await store.listCalibrationRuns({ org_id: 'org_a' }, { limit: 2, after: page.last })).items.map((x) => x.id),
        [r1.id],
      );

      const done: CalibrationRunRecord = {
        ...r1,
        status: 'completed',
        finished_at: at(8),
        previous_run_id: 'cal_before',
        metrics: [
          {
            evaluator_id: 'evl_1',
            evaluator_name: 'Grounded',
            evaluator_version: 2,
            n: 3,
            mae: 0.1,
            rmse: 0.2,
            pearson: null,
            spearman: 0.5,
            kappa: null,
            accuracy: 1,
            majority_baseline: 1,
            confusion: { tp: 3, fp: 0, tn: 0, fn: 0 },
          },
        ],
      };
      assert.equal(await store.updateCalibrationRun(done), true);
      assert.deepEqual(await store.getCalibrationRun(r1.id), done);
      assert.deepEqual(await ids({ org_id: 'org_a', status: 'completed' }), [r1.id]);
      assert.equal(await store.updateCalibrationRun(calibrationRun('org_a')), false);
    });

    it('leave with their organization', async () => {
      const store = await fresh();
      const orgId = newId('org');
      await store.createOrganization({ id: orgId, name: 'Gone', is_demo: true, created_at: at(0) });
      const a = annotation(orgId);
      const r = calibrationRun(orgId);
      await store.createAnnotation(a);
      await store.createCalibrationRun(r);
      await store.purgeOrganization(orgId);
      assert.equal(await store.getAnnotation(a.id), null);
      assert.equal(await store.getCalibrationRun(r.id), null);
    });
  });
}
