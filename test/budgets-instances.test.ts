// Budgets across instances (room h-cost): two servers, each with its own PostgreSQL pool on one
// database, race runs against one org's daily cap. Counting is atomic in the database, so together
// they pass the cap by no more than one run each, every admitted run is counted, and every refused
// one called no model. PostgreSQL only: run with TRIBUNAL_TEST_STORE=postgres (skipped otherwise).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { PostgresStore } from '../src/store/postgres-store.ts';
import { startFakeAnthropic, toolAnswer } from './helpers/fake-anthropic.ts';
import { DUMMY_KEY, evaluatorBody, TEST_MODEL } from './helpers/execute.ts';
import { createTestSchema } from './helpers/postgres.ts';
import { startTestServer } from './helpers/server.ts';

const PG = process.env.TRIBUNAL_TEST_STORE === 'postgres';
const CALL_USD = 0.0045;

describe('budgets shared by two instances on PostgreSQL', () => {
  it('two instances racing on one org cap overspend together by at most one run each', { skip: !PG && 'PostgreSQL only (TRIBUNAL_TEST_STORE=postgres)' }, async (t) => {
    const schema = await createTestSchema();
    const fake = await startFakeAnthropic();
    // Every call takes a little while, so that many runs are in flight at once on both instances.
    fake.respondWith(() => toolAnswer({ justification: 'Fine.', score: 0.7 }, { usage: { input_tokens: 1000, output_tokens: 100 }, delayMs: 30 }));
    const stores = [new PostgresStore({ connectionString: schema.url, poolMax: 8 }), new PostgresStore({ connectionString: schema.url, poolMax: 8 })];
    const env = { ANTHROPIC_API_KEY: DUMMY_KEY, ANTHROPIC_BASE_URL: fake.url, TRIBUNAL_MODEL: TEST_MODEL, TRIBUNAL_RATE_LIMIT: '100000', TRIBUNAL_MODEL_CONCURRENCY: '64' };
    const servers: Awaited<ReturnType<typeof startTestServer>>[] = [];
    try {
      for (const store of stores) {
        await store.init();
        servers.push(await startTestServer(env, { store }));
      }
      const [a, b] = servers;
      const demo = await a.demoUser();
      const ev = (await a.request('POST', '/v1/evaluators/', { key: demo.api_key, body: evaluatorBody() })).body;
      // Room for five runs of $0.0045; 40 runs race for it, 20 through each instance.
      const cap = 5 * CALL_USD;
      await stores[0].setBudgetCap({ org_id: demo.organization_id, scope: 'org', scope_id: demo.organization_id, period: 'daily', cap_usd: cap });
      fake.resetStats();
      const runs = Array.from({ length: 40 }, (_, i) =>
        (i % 2 ? b : a).request('POST', `/v1/evaluators/${ev.id}/execute/`, { key: demo.api_key, body: { request: `q${i}`, response: `a${i}` } }),
      );
      const answers = await Promise.all(runs);
      const ok = answers.filter((r) => r.status === 200).length;
      const refused = answers.filter((r) => r.status === 429 && r.body.code === 'budget_exceeded').length;
      t.diagnostic(`admitted ${ok}, refused ${refused}`);
      assert.equal(ok + refused, 40, JSON.stringify(answers.filter((r) => r.status !== 200 && r.status !== 429).map((r) => r.body)));
      // Each admitted run saw spent + reserved below the cap (its estimate reserved atomically): five
      // runs fit, plus at most one per instance admitted just under the cap.
      assert.ok(ok >= 1 && ok <= 5 + 2, `admitted ${ok}`);
      assert.equal(fake.requests.length, ok, 'a refused run called no model');
      const [counter] = await stores[1].listBudgetCounters({ org_id: demo.organization_id, scope: 'org' });
      assert.equal(Math.round(counter.spent_usd * 1e9), Math.round(ok * CALL_USD * 1e9), 'every admitted run is counted');
      assert.equal(counter.reserved_usd, 0, 'every reservation settled');
      assert.ok(counter.spent_usd <= cap + 2 * CALL_USD + 1e-9, `spent ${counter.spent_usd} against a cap of ${cap}`);
      // Reservations use an estimate that can exceed a run's real cost, so the race may leave room
      // for a run or two more: take it one run at a time until refused, never far past the cap.
      const once = (s: (typeof servers)[number]) => s.request('POST', `/v1/evaluators/${ev.id}/execute/`, { key: demo.api_key, body: { request: 'q', response: 'a' } });
      for (let more = 0; ; more++) {
        const r = await once(servers[more % 2]);
        if (r.status === 429) break;
        assert.equal(r.status, 200, JSON.stringify(r.body));
        assert.ok(more < 5, 'a run was admitted with the cap already spent');
      }
      const [after] = await stores[0].listBudgetCounters({ org_id: demo.organization_id, scope: 'org' });
      assert.ok(after.spent_usd <= cap + 2 * CALL_USD + 1e-9, `spent ${after.spent_usd} against a cap of ${cap}`);
      // Now at the cap: both instances refuse.
      for (const s of servers) assert.equal((await once(s)).status, 429);
    } finally {
      for (const s of servers) await s.close();
      await Promise.all(stores.map((s) => s.close()));
      await fake.close();
      await schema.drop();
    }
  });
});
