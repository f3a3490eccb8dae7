// Issue 24, item 3 (h-harden): per-organization quotas on datasets, stored items (added, imported,
// copied), batch runs in flight and batch rows per day; over a limit is a 413/429 that names the
// limit, checked before anything is stored. TRIBUNAL_TEST_STORE=postgres runs it on PostgreSQL.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { evaluatorBody, startScoringRig, type ScoringRig } from './helpers/execute.ts';

const items = (n: number) => Array.from({ length: n }, (_, i) => ({ request: `q ${i}`, response: `a ${i}` }));

describe('per-organization quotas (demo limits set low)', () => {
  let rig: ScoringRig;
  const env = {
    TRIBUNAL_DEMO_QUOTA_ITEMS: '50',
    TRIBUNAL_DEMO_QUOTA_DATASETS: '3',
    TRIBUNAL_DEMO_QUOTA_RUNNING_BATCHES: '1',
    TRIBUNAL_DEMO_QUOTA_ROWS_PER_DAY: '12',
    TRIBUNAL_RATE_LIMIT: '100000',
  };
  const countItems = async (id: string) => (await rig.get(`/v1/datasets/${id}/`)).body.item_count as number;
  const importLines = async (id: string, n: number) => {
    const res = await fetch(`${rig.server.url}/v1/datasets/${id}/items/import/`, {
      method: 'POST',
      headers: { authorization: `Api-Key ${rig.key}`, 'content-type': 'application/x-ndjson' },
      body: items(n)
        .map((i) => JSON.stringify(i))
        .join('\n'),
    });
    return { status: res.status, body: (await res.json()) as any };
  };

  before(async () => {
    rig = await startScoringRig(env);
  });
  after(() => rig.close());

  test('items: a request over the limit stores nothing; an import stops at the limit and says what it stored', async () => {
    const a = (await rig.post('/v1/datasets/', { name: 'quota-a' })).body.id;
    assert.equal((await rig.post(`/v1/datasets/${a}/items/`, { items: items(40) })).status, 201);
    const over = await rig.post(`/v1/datasets/${a}/items/`, { items: items(20) });
    assert.equal(over.status, 413, JSON.stringify(over.body));
    assert.equal(over.body.limit, 'items');
    assert.match(over.body.detail, /TRIBUNAL_DEMO_QUOTA_ITEMS/);
    assert.equal(await countItems(a), 40, 'nothing of the refused request was stored');
    const imported = await importLines(a, 30);
    assert.equal(imported.status, 413, JSON.stringify(imported.body));
    assert.equal(imported.body.created, 10);
    assert.equal(await countItems(a), 50);
    const again = await importLines(a, 5);
    assert.equal(again.status, 413);
    assert.equal(await countItems(a), 50);
  });

  test('datasets: the one over the limit is refused with the limit named', async () => {
    // quota-a exists; two more reach 3.
    for (const name of ['quota-b', 'quota-c']) assert.equal((await rig.post('/v1/datasets/', { name })).status, 201);
    const over = await rig.post('/v1/datasets/', { name: 'quota-d' });
    assert.equal(over.status, 413, JSON.stringify(over.body));
    assert.equal(over.body.limit, 'datasets');
    assert.match(over.body.detail, /TRIBUNAL_DEMO_QUOTA_DATASETS=3/);
  });

  test('batch runs: one in flight at a time, and rows per day', async () => {
    const ev = await rig.createEvaluator(evaluatorBody());
    const judge = await rig.createJudge({ name: 'quota judge', intent: 'grade', evaluator_ids: [ev.id] });
    rig.fake.setLatency(400);
    const first = await rig.post(`/v1/judges/${judge.id}/batch-execute/`, { items: items(4) });
    assert.equal(first.status, 202, JSON.stringify(first.body));
    const second = await rig.post(`/v1/judges/${judge.id}/batch-execute/`, { items: items(2) });
    assert.equal(second.status, 429, JSON.stringify(second.body));
    assert.equal(second.body.limit, 'running_batches');
    assert.match(second.body.detail, /TRIBUNAL_DEMO_QUOTA_RUNNING_BATCHES=1/);
    rig.fake.setLatency(0);
    for (const deadline = Date.now() + 30_000; ; ) {
      const b = await rig.get(`/v1/judges/batch-executions/${first.body.batch_execution_id}/`);
      if (['completed', 'failed', 'cancelled'].includes(b.body.status)) break;
      if (Date.now() > deadline) throw new Error(`the run is still ${JSON.stringify(b.body)}`);
      await new Promise((r) => setTimeout(r, 50));
    }
    // 4 rows today; 9 more would pass 12.
    const tooMany = await rig.post(`/v1/judges/${judge.id}/batch-execute/`, { items: items(9) });
    assert.equal(tooMany.status, 429, JSON.stringify(tooMany.body));
    assert.equal(tooMany.body.limit, 'rows_per_day');
    const listed = await rig.get('/v1/judges/batch-executions/');
    assert.equal(listed.body.results.length, 1, 'the refused runs were not stored');
    assert.equal((await rig.post(`/v1/judges/${judge.id}/batch-execute/`, { items: items(8) })).status, 202, '4 + 8 = 12 is within the limit');
  });
});
