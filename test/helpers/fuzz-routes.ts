// The fuzz's routes of batch runs, experiments, pairwise comparison, annotations, calibration runs and
// registered models (SPEC sections 7-11), and the fixtures they need: a labelled dataset, two
// completed batch runs, an annotation, a completed calibration run and a registered model, all of
// the fuzz's own organization. Each route is drawn with valid ids of these fixtures as often as with
// broken ones, so that the broken query parameter or body field is what the server must refuse.
import assert from 'node:assert/strict';
import { BAD_PERCENT, enc, forgedCursor, mutate, ODD_TEXT, PROTO_NAMES, query, type Rng } from './fuzz-gen.ts';
import type { TestServer } from './server.ts';

export interface NewIds {
  batchId: string;
  /** A second run over the same dataset: with batchId, a pair the experiment compare accepts. */
  batchId2: string;
  itemsBatchId: string;
  datasetId: string;
  itemId: string;
  annotationId: string;
  calibrationRunId: string;
  modelId: string;
}

/** [method, path, body factory (undefined: no body)] */
export type Route = [string, string, () => Record<string, unknown> | undefined];

/** A server setting the model routes need: TRIBUNAL_SECRET_KEY, a dummy 32-byte key (not a secret). */
export const FUZZ_ROUTE_ENV = { TRIBUNAL_SECRET_KEY: Buffer.alloc(32, 7).toString('base64') };

async function waitEnded(server: TestServer, key: string, path: string): Promise<any> {
  for (let i = 0; i < 600; i++) {
    const res = await server.request('GET', path, { key });
    assert.equal(res.status, 200, `${path}: ${JSON.stringify(res.body)}`);
    if (['completed', 'failed', 'cancelled'].includes(res.body.status)) return res.body;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error(`${path} did not end`);
}

export async function makeFixtures(server: TestServer, key: string, base: { judgeId: string; evaluatorId: string; logId: string }): Promise<NewIds> {
  const post = async (path: string, body: unknown) => {
    const res = await server.request('POST', path, { key, body });
    assert.ok(res.status < 300, `${path}: ${res.status} ${JSON.stringify(res.body)}`);
    return res.body;
  };
  const dataset = await post('/v1/datasets/', { name: 'Fuzz labelled' });
  const items = [0.9, 0.2, 0.6].map((s, i) => ({ request: `Q${i}`, response: `A${i}`, expected_scores: { [base.evaluatorId]: s }, metadata: { note: `n${i}` } }));
  const added = await post(`/v1/datasets/${dataset.id}/items/`, { items });
  const batch = await post(`/v1/judges/${base.judgeId}/batch-execute/`, { dataset_id: dataset.id });
  const batch2 = await post(`/v1/judges/${base.judgeId}/batch-execute/`, { dataset_id: dataset.id });
  const itemsBatch = await post(`/v1/judges/${base.judgeId}/batch-execute/`, { items: items.map(({ expected_scores: _e, ...x }) => x) });
  await waitEnded(server, key, `/v1/judges/batch-executions/${batch.batch_execution_id}/`);
  await waitEnded(server, key, `/v1/judges/batch-executions/${itemsBatch.batch_execution_id}/`);
  await waitEnded(server, key, `/v1/judges/batch-executions/${batch2.batch_execution_id}/`);
  const annotation = await post('/v1/annotations/', { execution_log_id: base.logId, evaluator_id: base.evaluatorId, score: 0.4, note: 'fuzz' });
  const run = await post('/v1/calibration-runs/', { judge_id: base.judgeId, dataset_id: dataset.id });
  const calibrated = await waitEnded(server, key, `/v1/calibration-runs/${run.id}/`);
  assert.equal(calibrated.status, 'completed', JSON.stringify(calibrated));
  const model = await post('/v1/models/', { name: 'fuzz-model', provider: 'openai', model: 'm1', base_url: 'http://127.0.0.1:9/v1' });
  return {
    batchId: batch.batch_execution_id,
    batchId2: batch2.batch_execution_id,
    itemsBatchId: itemsBatch.batch_execution_id,
    datasetId: dataset.id,
    itemId: added.ids[0],
    annotationId: annotation.id,
    calibrationRunId: run.id,
    modelId: model.id,
  };
}

/** An id for a path segment or a body field: one of the fixtures (of the right kind or not) or junk. */
function anyId(r: Rng, own: string, ids: NewIds): string {
  return r.pick<() => string>([
    () => own,
    () => own,
    () => r.pick(Object.values(ids)),
    () => r.pick(PROTO_NAMES),
    () => r.pick(BAD_PERCENT),
    () => enc(r.pick(ODD_TEXT)).slice(0, 3000),
    () => own.slice(0, 4) + '0'.repeat(r.int(300)),
  ])();
}

/** A value for a body id field (not URL-encoded). */
function bodyId(r: Rng, own: string, ids: NewIds): unknown {
  return r.pick<() => unknown>([() => own, () => own, () => r.pick(Object.values(ids)), () => r.pick(PROTO_NAMES), () => r.pick(ODD_TEXT), () => 12])();
}

const BATCH_QUERY = ['status', 'dataset_id', 'judge_id', 'a', 'b', 'top', 'execution_log_id', 'evaluator_id', 'threshold'];

export function newRoutes(r: Rng, ids: NewIds, base: { judgeId: string; evaluatorId: string; logId: string }): { reads: Route[]; writes: Route[] } {
  const plausible = [ids.batchId, ids.batchId2, ids.itemsBatchId, ids.datasetId, base.judgeId, base.evaluatorId, base.logId, 'completed', 'running', '5', '0', '2026-01-01'];
  const q = () => query(r, BATCH_QUERY, plausible);
  const batch = () => anyId(r, r.chance(0.5) ? ids.batchId : ids.itemsBatchId, ids);
  const annotation = () => anyId(r, ids.annotationId, ids);
  const calibration = () => anyId(r, ids.calibrationRunId, ids);
  const pair = () => [bodyId(r, ids.batchId, ids), bodyId(r, r.chance(0.7) ? ids.batchId2 : ids.itemsBatchId, ids)].map((x) => enc(String(x)));
  const compareBody = () =>
    mutate(
      r,
      r.chance(0.8)
        ? { request: 'Q?', response_a: 'One answer.', response_b: 'Another answer.' }
        : {
            turns_a: [
              { role: 'user', content: 'hi' },
              { role: 'assistant', content: 'a' },
            ],
            turns_b: [
              { role: 'user', content: 'hi' },
              { role: 'assistant', content: 'b' },
            ],
          },
    );
  const reads: Route[] = [
    ['GET', `/v1/judges/batch-executions/${q()}`, () => undefined],
    ['GET', `/v1/judges/batch-executions/${batch()}/`, () => undefined],
    ['GET', `/v1/judges/batch-executions/${batch()}/results/${q()}`, () => undefined],
    ['GET', `/v1/judges/batch-executions/${batch()}/results/?cursor=${forgedCursor(r)}`, () => undefined],
    ['GET', `/v1/judges/batch-executions/compare/${q()}`, () => undefined],
    (() => {
      const [a, b] = pair();
      return [
        'GET',
        `/v1/judges/batch-executions/compare/?a=${r.chance(0.5) ? a : b}&b=${r.chance(0.5) ? b : a}&top=${r.pick(['3', '0', '-1', '101', '1.5', 'x', ''])}`,
        () => undefined,
      ] as Route;
    })(),
    ['POST', `/v1/judges/${anyId(r, base.judgeId, ids)}/compare/`, compareBody],
    ['POST', `/v1/evaluators/${r.chance(0.3) ? 'Clarity' : anyId(r, base.evaluatorId, ids)}/compare/`, compareBody],
    ['GET', `/v1/annotations/${q()}`, () => undefined],
    ['GET', `/v1/annotations/${annotation()}/`, () => undefined],
    ['GET', `/v1/calibration-runs/${q()}`, () => undefined],
    ['GET', `/v1/calibration-runs/${calibration()}/`, () => undefined],
    ['GET', `/v1/calibration-runs/${calibration()}/items/${q()}`, () => undefined],
    ['GET', `/v1/models/${q()}`, () => undefined],
    ['GET', `/v1/models/${anyId(r, ids.modelId, ids)}/`, () => undefined],
    ['GET', `/v1/datasets/${anyId(r, ids.datasetId, ids)}/items/${q()}`, () => undefined],
  ];
  const writes: Route[] = [
    [
      'POST',
      `/v1/judges/${anyId(r, base.judgeId, ids)}/batch-execute/`,
      () => mutate(r, r.chance(0.5) ? { dataset_id: bodyId(r, ids.datasetId, ids) } : { items: [{ response: 'x' }], tags: ['fuzz'], use_cache: true }),
    ],
    ['POST', `/v1/judges/batch-executions/${batch()}/cancel/`, () => (r.chance(0.5) ? undefined : mutate(r, {}))],
    ['POST', '/v1/annotations/', () => mutate(r, { execution_log_id: bodyId(r, base.logId, ids), evaluator_id: bodyId(r, base.evaluatorId, ids), score: 0.5 })],
    ['PATCH', `/v1/annotations/${annotation()}/`, () => mutate(r, { score: 0.3, note: 'n' })],
    ['DELETE', `/v1/annotations/${r.chance(0.8) ? r.pick([...PROTO_NAMES, ...BAD_PERCENT]) : annotation()}/`, () => undefined],
    [
      'POST',
      `/v1/datasets/${anyId(r, ids.datasetId, ids)}/items/from-annotations/`,
      () => mutate(r, r.chance(0.5) ? { annotation_ids: [bodyId(r, ids.annotationId, ids)] } : { judge_id: bodyId(r, base.judgeId, ids), date_from: '2026-01-01' }),
    ],
    ['POST', '/v1/calibration-runs/', () => mutate(r, { judge_id: bodyId(r, base.judgeId, ids), dataset_id: bodyId(r, ids.datasetId, ids), threshold: 0.5 })],
    [
      'POST',
      `/v1/calibration-runs/${calibration()}/demonstrations/`,
      () => mutate(r, { items: [{ item_id: bodyId(r, ids.itemId, ids), evaluator_id: bodyId(r, base.evaluatorId, ids) }] }),
    ],
    [
      'POST',
      '/v1/models/',
      () => mutate(r, { name: `m ${r.int(1e6)}`, provider: 'openai', model: 'm', base_url: r.pick(['http://127.0.0.1:9/v1', 'ftp://x', 'http://u:p@h/', 'not a url', null]) }),
    ],
    ['PATCH', `/v1/models/${anyId(r, ids.modelId, ids)}/`, () => mutate(r, { max_concurrency: 2, price: { input: 1, output: 2 } })],
    ['DELETE', `/v1/models/${r.pick([...PROTO_NAMES, ...BAD_PERCENT])}/`, () => undefined],
    ['POST', `/v1/models/${r.pick([...PROTO_NAMES, ...BAD_PERCENT, 'nope'])}/verify/`, () => undefined],
  ];
  return { reads, writes };
}

/**
 * Requests another organization makes with this organization's ids: each must be a 404 (never a 200,
 * a 403 that tells the id exists, or a change). `otherDatasetId` is a dataset of that other organization.
 */
export function foreignRequests(ids: NewIds, base: { judgeId: string; evaluatorId: string; logId: string }, otherDatasetId: string): Array<[string, string, unknown?]> {
  return [
    ['GET', `/v1/judges/batch-executions/${ids.batchId}/`],
    ['GET', `/v1/judges/batch-executions/${ids.batchId}/results/`],
    ['POST', `/v1/judges/batch-executions/${ids.batchId}/cancel/`, {}],
    ['GET', `/v1/judges/batch-executions/compare/?a=${ids.batchId}&b=${ids.batchId2}`],
    ['GET', `/v1/annotations/${ids.annotationId}/`],
    ['PATCH', `/v1/annotations/${ids.annotationId}/`, { score: 0 }],
    ['DELETE', `/v1/annotations/${ids.annotationId}/`],
    ['POST', '/v1/annotations/', { execution_log_id: base.logId, evaluator_id: base.evaluatorId, score: 1 }],
    ['POST', `/v1/datasets/${otherDatasetId}/items/from-annotations/`, { annotation_ids: [ids.annotationId] }],
    ['POST', `/v1/datasets/${ids.datasetId}/items/from-annotations/`, { annotation_ids: [ids.annotationId] }],
    ['GET', `/v1/calibration-runs/${ids.calibrationRunId}/`],
    ['GET', `/v1/calibration-runs/${ids.calibrationRunId}/items/`],
    ['POST', `/v1/calibration-runs/${ids.calibrationRunId}/demonstrations/`, { items: [{ item_id: ids.itemId, evaluator_id: base.evaluatorId }] }],
    ['POST', '/v1/calibration-runs/', { evaluator_id: 'Clarity', dataset_id: ids.datasetId }],
    ['GET', `/v1/calibration-runs/?dataset_id=${ids.datasetId}`],
    ['GET', `/v1/models/${ids.modelId}/`],
    ['PATCH', `/v1/models/${ids.modelId}/`, { max_concurrency: 1 }],
    ['POST', `/v1/models/${ids.modelId}/verify/`, {}],
    ['DELETE', `/v1/models/${ids.modelId}/`],
    ['GET', `/v1/datasets/${ids.datasetId}/items/`],
  ];
}
