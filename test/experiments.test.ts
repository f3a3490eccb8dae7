// Experiments (SPEC section 9): the pure statistics of src/batch/experiments.ts against values
// computed independently (each expected value says where it comes from), and the REST endpoint
// GET /v1/judges/batch-executions/compare/ against real batch runs on the fake model.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startServerWithFakeModel } from './helpers/execute.ts';
import { toolAnswer, type FakeAnthropic, type FakeRequest } from './helpers/fake-anthropic.ts';
import type { TestServer } from './helpers/server.ts';
import { collectRows, compareRuns, mulberry32, pairedBootstrap, pairRuns, quantileSorted, regressions, type ExperimentRow } from '../src/batch/experiments.ts';

const row = (position: number, item_id: string | null, scores: Record<string, number | null>, score?: number | null): ExperimentRow => {
  const values = Object.values(scores).filter((s): s is number => typeof s === 'number');
  return {
    position,
    item_id,
    execution_log_id: `log_${item_id ?? position}`,
    score: score !== undefined ? score : values.length ? values.reduce((x, y) => x + y, 0) / values.length : null,
    evaluator_results: Object.entries(scores).map(([id, s]) => ({ evaluator_id: id, evaluator_name: id.toUpperCase(), score: s })),
  };
};

// The data set of the Python reference below: a_i = (7i mod 11)/10, b_i = (5i mod 13)/12, i = 0..39.
const N = 40;
const A_SCORES = Array.from({ length: N }, (_, i) => ((i * 7) % 11) / 10);
const B_SCORES = Array.from({ length: N }, (_, i) => ((i * 5) % 13) / 12);

describe('experiments: statistics', () => {
  it('mulberry32 gives the published sequence', () => {
    // Source: mulberry32 re-implemented in Python with arbitrary-precision integers (mod 2^32),
    // seed 1: 0.6270739405881613, 0.002735721180215478, 0.5274470399599522 (the values widely
    // quoted for the JavaScript original).
    const r = mulberry32(1);
    assert.deepEqual([r(), r(), r()], [0.6270739405881613, 0.002735721180215478, 0.5274470399599522]);
  });

  it('quantiles interpolate as numpy does', () => {
    // numpy.quantile([1, 2, 3, 4], [0.025, 0.5, 0.975]) = [1.075, 2.5, 3.925]
    const s = Float64Array.from([1, 2, 3, 4]);
    assert.ok(Math.abs(quantileSorted(s, 0.025) - 1.075) < 1e-12);
    assert.equal(quantileSorted(s, 0.5), 2.5);
    assert.ok(Math.abs(quantileSorted(s, 0.975) - 3.925) < 1e-12);
  });

  it('means, delta, wins, ties and the bootstrap interval match an independent Python computation', () => {
    const a = collectRows(A_SCORES.map((s, i) => row(i, `it${i}`, { e1: s })));
    const b = collectRows(B_SCORES.map((s, i) => row(i, `it${i}`, { e1: s })));
    const c = compareRuns(a, b, { resamples: 2000, seed: 1 });
    const e = c.evaluators[0];
    // Source: test/helpers/experiments-reference.py (numpy 2.4): d = b - a; mean(a) = 0.505, mean(b) = 0.4875,
    // mean(d) = -0.0175; wins_a = sum(d < -1e-9) = 23, wins_b = sum(d > 1e-9) = 16, ties = 1;
    // bootstrap: 2000 resamples, indexes int(mulberry32(1)() * 40) drawn in order, 40 per resample,
    // numpy.quantile(means, [0.025, 0.975]) = [-0.14666666666666667, 0.10791666666666666].
    assert.equal(e.n, 40);
    assert.ok(Math.abs(e.mean_a! - 0.505) < 1e-12);
    assert.ok(Math.abs(e.mean_b! - 0.4875) < 1e-12);
    assert.ok(Math.abs(e.delta! - -0.0175) < 1e-12);
    assert.deepEqual([e.wins_a, e.wins_b, e.ties], [23, 16, 1]);
    assert.ok(Math.abs(e.ci_low! - -0.14666666666666667) < 1e-12, String(e.ci_low));
    assert.ok(Math.abs(e.ci_high! - 0.10791666666666666) < 1e-12, String(e.ci_high));
    assert.equal(e.verdict, 'unclear');
    assert.equal(c.pairs, 40);
    // Reproducible: the same seed gives the same interval; another seed another one.
    assert.deepEqual(compareRuns(a, b, { seed: 1 }).evaluators[0], e);
    assert.notEqual(compareRuns(a, b, { seed: 2 }).evaluators[0].ci_low, e.ci_low);
  });

  it('two pairs {0, 1}: the resampled means are 0, 0.5, 1 with 1/4, 1/2, 1/4, so the interval is [0, 1]', () => {
    // Source: the exact bootstrap distribution of the mean of two values (by hand); with 2,000
    // resamples about 500 fall on each end, so the 2.5% and 97.5% quantiles are exactly 0 and 1.
    const [[low, high]] = pairedBootstrap(Float64Array.from([0, 1]), 2, 1, { resamples: 2000, seed: 7 });
    assert.deepEqual([low, high], [0, 1]);
  });

  it('a constant difference has a zero-width interval, and a clear drop is a regression', () => {
    const a = collectRows(Array.from({ length: 30 }, (_, i) => row(i, `it${i}`, { good: 0.8, same: 0.5 })));
    const b = collectRows(Array.from({ length: 30 }, (_, i) => row(i, `it${i}`, { good: 0.6, same: 0.5 })));
    const c = compareRuns(a, b);
    const good = c.evaluators.find((e) => e.evaluator_id === 'good')!;
    const same = c.evaluators.find((e) => e.evaluator_id === 'same')!;
    // By hand: every difference is 0.6 - 0.8 = -0.2, so every resampled mean is -0.2.
    assert.ok(Math.abs(good.ci_low! + 0.2) < 1e-12 && Math.abs(good.ci_high! + 0.2) < 1e-12);
    assert.equal(good.verdict, 'regressed');
    assert.deepEqual([good.wins_a, good.wins_b, good.ties], [30, 0, 0]);
    assert.deepEqual([same.ci_low, same.ci_high, same.ties, same.verdict], [0, 0, 30, 'unclear']);
    assert.deepEqual(regressions(c), ['GOOD']);
    // The row score (mean of both evaluators): 0.65 -> 0.55, by hand.
    assert.ok(Math.abs(c.overall.delta! + 0.1) < 1e-12);
  });

  it('resamples the same items for every column: six columns with gaps give what each gives alone', () => {
    // The draws depend only on the seed and n, so a column's interval must not depend on which
    // other columns (more than the four of one fused pass, gaps included) are computed with it.
    const n = 300;
    const k = 6;
    const diffs = new Float64Array(n * k);
    for (let i = 0; i < n; i++) for (let c = 0; c < k; c++) diffs[i * k + c] = (i * (c + 3)) % 7 === 0 && c % 2 ? NaN : (((i * 13 + c * 5) % 17) - 8) / 10;
    const together = pairedBootstrap(diffs, n, k, { resamples: 500, seed: 9 });
    for (let c = 0; c < k; c++) {
      const alone = pairedBootstrap(
        Float64Array.from({ length: n }, (_, i) => diffs[i * k + c]),
        n,
        1,
        { resamples: 500, seed: 9 },
      );
      assert.deepEqual(together[c], alone[0], `column ${c}`);
    }
    // A column whose values are all equal (gaps aside) has a zero-width interval; one with no value at all, none.
    const gappy = Float64Array.from({ length: 50 }, (_, i) => (i % 3 ? 0.25 : NaN));
    assert.deepEqual(pairedBootstrap(gappy, 50, 1)[0], [0.25, 0.25]);
    assert.ok(pairedBootstrap(new Float64Array(10).fill(NaN), 10, 1)[0].every(Number.isNaN));
  });

  it('agrees with the normal approximation on 2,000 pairs', () => {
    // d_i = ((37 i) mod 101) / 100 - 0.4. numpy: mean(d) = 0.099915, std(d, ddof=1) = 0.291689...;
    // mean +- 1.96 sd / sqrt(2000) = [0.087131, 0.112699]. The percentile bootstrap of a mean is
    // this interval up to O(1/sqrt(resamples)) noise: within 0.002 at each end.
    const n = 2000;
    const d = Float64Array.from({ length: n }, (_, i) => ((37 * i) % 101) / 100 - 0.4);
    const mean = d.reduce((x, y) => x + y, 0) / n;
    assert.ok(Math.abs(mean - 0.099915) < 1e-9, `mean ${mean}`);
    const [[low, high]] = pairedBootstrap(d, n, 1, { resamples: 2000, seed: 3 });
    assert.ok(Math.abs(low - 0.087131) < 0.002, `low ${low}`);
    assert.ok(Math.abs(high - 0.112699) < 0.002, `high ${high}`);
  });

  it('pairs by item id whatever the order, leaves unmatched rows out, and skips missing scores', () => {
    const a = collectRows([row(0, 'x', { e: 0.2 }), row(1, 'y', { e: 0.4 }), row(2, 'z', { e: null }, null), row(3, 'only-a', { e: 1 })]);
    const b = collectRows([row(0, 'z', { e: 0.9 }), row(1, 'y', { e: 0.4 }), row(2, 'x', { e: 1 }), row(3, 'only-b', { e: 0 })]);
    const p = pairRuns(a, b, 'item_id');
    assert.deepEqual([...p.a], [0, 1, 2]);
    assert.deepEqual([...p.b], [2, 1, 0]);
    assert.deepEqual([p.unpairedA, p.unpairedB], [1, 1]);
    const c = compareRuns(a, b, { top: 5 });
    const e = c.evaluators[0];
    // By hand: pairs x (0.2 -> 1) and y (0.4 -> 0.4); z has no score in a.
    assert.equal(e.n, 2);
    assert.ok(Math.abs(e.delta! - 0.4) < 1e-12);
    assert.deepEqual([e.wins_a, e.wins_b, e.ties], [0, 1, 1]);
    // Moved most: only x changed (z has no row score in a, y did not move).
    assert.deepEqual(
      c.moved.map((m) => [m.item_id, m.position_a, m.position_b, m.execution_log_id_a]),
      [['x', 0, 2, 'log_x']],
    );
    assert.ok(Math.abs(c.moved[0].delta - 0.8) < 1e-12);
  });

  it('pairs by position, and reports evaluators only one run has', () => {
    const a = collectRows([row(0, null, { e: 0.1, old: 1 }), row(1, null, { e: 0.9, old: 1 })]);
    const b = collectRows([row(0, null, { e: 0.5, new: 0 }), row(1, null, { e: 0.2, new: 0 })]);
    const c = compareRuns(a, b, { by: 'position' });
    assert.equal(c.pairs, 2);
    assert.deepEqual(
      c.evaluators.map((e) => e.evaluator_id),
      ['e'],
    );
    assert.deepEqual(c.only_in_a, [{ evaluator_id: 'old', evaluator_name: 'OLD' }]);
    assert.deepEqual(c.only_in_b, [{ evaluator_id: 'new', evaluator_name: 'NEW' }]);
    // By hand: differences +0.4 and -0.7; the one that moved most is position 1.
    assert.deepEqual([c.evaluators[0].wins_a, c.evaluators[0].wins_b], [1, 1]);
    assert.equal(c.moved[0].position_a, 1);
    // By item id, rows without one never pair.
    assert.equal(compareRuns(a, b, { by: 'item_id' }).pairs, 0);
    assert.equal(compareRuns(a, b, { by: 'item_id' }).evaluators[0].verdict, 'no_pairs');
  });
});

describe('experiments: GET /v1/judges/batch-executions/compare/', () => {
  let fake: FakeAnthropic;
  let server: TestServer;
  let key: string;
  let judgeId: string;
  let datasetId: string;
  let itemIds: string[];
  const get = (path: string, k = key) => server.request('GET', path, { key: k });
  const compare = (a: string, b: string, k = key) => get(`/v1/judges/batch-executions/compare/?a=${a}&b=${b}`, k);

  /** Scores by evaluator (its name is in the system prompt) and item (its response "answer N" in the prompt). */
  const scoring = (score: (evaluator: string, item: number) => number) =>
    fake.respondWith((req: FakeRequest) => {
      const evaluator = /Name: (.+)/.exec(req.system)?.[1] ?? '';
      const item = Number(/answer (\d+)/.exec(req.prompt)?.[1] ?? -1);
      return toolAnswer({ justification: 'fake', score: score(evaluator.trim(), item) });
    });

  async function run(body: Record<string, unknown>, wait = true): Promise<string> {
    const started = await server.request('POST', `/v1/judges/${judgeId}/batch-execute/`, { key, body });
    assert.equal(started.status, 202, JSON.stringify(started.body));
    const id = started.body.batch_execution_id as string;
    for (let i = 0; wait && i < 300; i++) {
      const b = await get(`/v1/judges/batch-executions/${id}/`);
      if (['completed', 'failed', 'cancelled'].includes(b.body.status)) return id;
      await new Promise((r) => setTimeout(r, 50));
    }
    if (wait) throw new Error(`batch ${id} did not end`);
    return id;
  }

  before(async () => {
    ({ fake, server } = await startServerWithFakeModel({ TRIBUNAL_RATE_LIMIT: '100000' }));
    key = (await server.demoUser()).api_key;
    const judge = await server.request('POST', '/v1/judges/', {
      key,
      body: { name: 'experiment judge', intent: 'Support answers.', evaluator_ids: ['Answer Relevance', 'Clarity'] },
    });
    judgeId = judge.body.id;
    datasetId = (await server.request('POST', '/v1/datasets/', { key, body: { name: 'experiment set' } })).body.id;
    const items = Array.from({ length: 8 }, (_, i) => ({ request: `question ${i}`, response: `answer ${i}` }));
    itemIds = (await server.request('POST', `/v1/datasets/${datasetId}/items/`, { key, body: { items } })).body.ids;
  });
  after(async () => {
    await server?.close();
    await fake?.close();
  });

  let runA: string;
  let runB: string;

  it('pairs two runs over a dataset item by item; the values are those computed by hand', async () => {
    scoring((evaluator) => (evaluator === 'Clarity' ? 0.5 : 0.6));
    runA = await run({ dataset_id: datasetId });
    // Run B: Answer Relevance rises by 0.2 on items 0..3, Clarity stays.
    scoring((evaluator, item) => (evaluator === 'Clarity' ? 0.5 : item < 4 ? 0.8 : 0.6));
    runB = await run({ dataset_id: datasetId });
    const res = await compare(runA, runB);
    assert.equal(res.status, 200, JSON.stringify(res.body));
    const c = res.body;
    assert.equal(c.paired_by, 'item_id');
    assert.equal(c.pairs, 8);
    assert.deepEqual([c.a.id, c.b.id, c.a.dataset_id], [runA, runB, datasetId]);
    const ar = c.evaluators.find((e: { evaluator_name: string }) => e.evaluator_name === 'Answer Relevance');
    const cl = c.evaluators.find((e: { evaluator_name: string }) => e.evaluator_name === 'Clarity');
    // By hand: A = 0.6 everywhere; B = (4 x 0.8 + 4 x 0.6) / 8 = 0.7; delta 0.1; B wins 4, 4 ties.
    assert.ok(Math.abs(ar.mean_a - 0.6) < 1e-9 && Math.abs(ar.mean_b - 0.7) < 1e-9 && Math.abs(ar.delta - 0.1) < 1e-9);
    assert.deepEqual([ar.n, ar.wins_a, ar.wins_b, ar.ties], [8, 0, 4, 4]);
    // The resampled mean is 0.025 k with k ~ Binomial(8, 1/2) draws of +0.2: P(k <= 0) = 0.4% and
    // P(k <= 1) = 3.5%, so the 2.5% quantile is k = 1 (0.025); symmetrically the 97.5% one is k = 7
    // (0.175). With 2,000 resamples the quantiles fall well inside those groups.
    assert.ok(Math.abs(ar.ci_low - 0.025) < 1e-9 && Math.abs(ar.ci_high - 0.175) < 1e-9, JSON.stringify(ar));
    assert.equal(ar.verdict, 'improved');
    assert.deepEqual([cl.delta, cl.ci_low, cl.ci_high, cl.ties, cl.verdict], [0, 0, 0, 8, 'unclear']);
    // The items that moved are items 0..3, with both logs.
    assert.deepEqual(new Set(c.moved.map((m: { item_id: string }) => m.item_id)), new Set(itemIds.slice(0, 4)));
    const log = await get(`/v1/execution-logs/${c.moved[0].execution_log_id_b}/`);
    assert.equal(log.body.batch_execution_id, runB);
    // The same two runs give the same answer (seeded bootstrap).
    assert.deepEqual((await compare(runA, runB)).body, c);
  });

  it('refuses runs not over the same dataset (400), unknown or foreign runs (404), runs still going (409)', async () => {
    scoring(() => 0.5);
    const other = (await server.request('POST', '/v1/datasets/', { key, body: { name: 'other set' } })).body.id;
    await server.request('POST', `/v1/datasets/${other}/items/`, { key, body: { items: [{ response: 'answer 0' }] } });
    const runOther = await run({ dataset_id: other });
    const different = await compare(runA, runOther);
    assert.equal(different.status, 400);
    assert.equal(different.body.code, 'validation_error');
    assert.match(different.body.detail, /not over the same dataset/);
    const inline = await run({ items: [{ response: 'answer 0' }, { response: 'answer 1' }] });
    assert.equal((await compare(runA, inline)).status, 400);
    // Two runs over given items pair by position.
    const inline2 = await run({ items: [{ response: 'answer 0' }, { response: 'answer 1' }, { response: 'answer 2' }] });
    const byPosition = await compare(inline, inline2);
    assert.equal(byPosition.status, 200, JSON.stringify(byPosition.body));
    assert.deepEqual([byPosition.body.paired_by, byPosition.body.pairs, byPosition.body.unpaired_b], ['position', 2, 1]);

    assert.equal((await compare(runA, runA)).status, 400);
    const missing = await get(`/v1/judges/batch-executions/compare/?a=${runA}`);
    assert.equal(missing.status, 400);
    assert.equal(missing.body.code, 'validation_error');
    const unknown = await compare(runA, 'bat_00000000000000000000000000000000');
    assert.equal(unknown.status, 404);
    assert.equal(unknown.body.code, 'not_found');
    const stranger = (await server.demoUser()).api_key;
    assert.equal((await compare(runA, runB, stranger)).status, 404, 'another organization sees none of them');

    fake.setLatency(3000);
    try {
      const running = await run({ dataset_id: datasetId }, false);
      const busy = await compare(runA, running);
      assert.equal(busy.status, 409);
      assert.equal(busy.body.code, 'conflict');
      assert.match(busy.body.detail, /compare the runs once both have ended/);
      assert.equal((await server.request('POST', `/v1/judges/batch-executions/${running}/cancel/`, { key, body: {} })).status, 200);
    } finally {
      fake.setLatency(0);
    }
  });
});
