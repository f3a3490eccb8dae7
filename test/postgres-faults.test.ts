// PostgreSQL going away under load: requests answer 503 problem+json (store_unavailable), /healthz
// says the store is down, the server recovers by itself when the database returns, and every write
// it acknowledged is still there. Three ways down: a private cluster (never the shared one on 5432)
// stopped and started with pg_ctl, the network to the database cut at a proxy, and a proxy that
// keeps connections open but forwards nothing (a hung server or a silent partition).
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { PostgresStore } from '../src/store/postgres-store.ts';
import { startPrivateCluster, type PrivateCluster } from './helpers/private-postgres.ts';
import { createTestSchema, urlWithSchema, type TestSchema } from './helpers/postgres.ts';
import { startTestServer, type TestServer } from './helpers/server.ts';
import { startTcpProxy, type TcpProxy } from './helpers/tcp-proxy.ts';
import { until } from './helpers/wait.ts';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Writers and readers hammering a server; what it acknowledged and what it answered. */
function startLoad(server: TestServer, key: string, workers = 6) {
  const acknowledged: string[] = [];
  const unavailable: Array<{ status: number; type: string | null; body: any }> = [];
  const unexpected: string[] = [];
  let stopped = false;
  let n = 0;
  const worker = async (w: number) => {
    while (!stopped) {
      const write = w % 3 !== 2;
      try {
        const res = write
          ? await server.request('POST', '/v1/projects/', { key, body: { name: `load ${w}-${n++}`, description: 'written under load' } })
          : await server.request('GET', '/v1/projects/?limit=5', { key });
        if (res.status === 201) acknowledged.push(res.body.id);
        else if (res.status === 503) {
          unavailable.push({ status: res.status, type: res.headers.get('content-type'), body: res.body });
          await sleep(10);
        } else if (res.status !== 200) unexpected.push(`${res.status} ${JSON.stringify(res.body)}`);
      } catch (err) {
        unexpected.push(`request failed: ${(err as Error).message}`);
      }
    }
  };
  const running = Promise.all(Array.from({ length: workers }, (_, w) => worker(w)));
  return {
    acknowledged,
    unavailable,
    unexpected,
    async stop() {
      stopped = true;
      await running;
    },
  };
}

/** The scenario both variants share: load, outage, recovery, then every acknowledged write checked. */
async function outageUnderLoad(databaseUrl: string, outage: { down: () => Promise<void>; up: () => Promise<void> }, storeOpts: { queryTimeoutMs?: number } = {}) {
  const store = new PostgresStore({ connectionString: databaseUrl, poolMax: 4, connectTimeoutMs: 1000, ...storeOpts });
  await store.init();
  const server = await startTestServer({}, { store });
  try {
    const demo = await server.demoUser();
    const load = startLoad(server, demo.api_key);
    try {
      await until('writes acknowledged before the outage', () => load.acknowledged.length >= 20);
      await outage.down();
      const beforeDown = load.acknowledged.length;

      await until('requests answered 503 during the outage', () => load.unavailable.length >= 5);
      const health = await server.request('GET', '/healthz');
      assert.equal(health.status, 503);
      assert.deepEqual(health.body.store, { kind: 'postgres', status: 'down' });
      const read = await server.request('GET', '/v1/projects/', { key: demo.api_key });
      assert.equal(read.status, 503);
      assert.equal(read.headers.get('content-type'), 'application/problem+json; charset=utf-8');
      assert.equal(read.body.code, 'store_unavailable');
      for (const u of load.unavailable) {
        assert.equal(u.type, 'application/problem+json; charset=utf-8');
        assert.equal(u.body.code, 'store_unavailable');
        assert.equal(u.body.status, 503);
      }

      await outage.up();
      await until('the server recovers by itself', async () => (await server.request('GET', '/healthz')).status === 200);
      const afterUp = load.acknowledged.length;
      await until('writes acknowledged again', () => load.acknowledged.length >= afterUp + 20);
      assert.ok(afterUp >= beforeDown);
    } finally {
      await load.stop();
    }
    assert.deepEqual(load.unexpected, [], 'only 200/201 and 503 answers, no request failed outright');

    // No acknowledged write was lost.
    const stored = new Set<string>();
    let after: { created_at: string; id: string } | undefined;
    do {
      const page = await store.listProjects(demo.organization_id, { limit: 200, after });
      for (const p of page.items) stored.add(p.id);
      after = page.last;
    } while (after);
    const lost = load.acknowledged.filter((id) => !stored.has(id));
    assert.deepEqual(lost, []);
    assert.ok(load.acknowledged.length >= 40);
  } finally {
    await server.close();
    await store.close();
  }
}

describe('PostgreSQL faults under load', () => {
  let cluster: PrivateCluster | null = null;
  let proxy: TcpProxy | undefined;
  let schema: TestSchema | undefined;
  after(async () => {
    cluster?.destroy();
    await proxy?.close();
    await schema?.drop();
  });

  it('a private PostgreSQL stopped and started: 503 store_unavailable meanwhile, recovery by itself, no acknowledged write lost', async (t) => {
    cluster = await startPrivateCluster();
    if (!cluster) {
      // In CI the machine has PostgreSQL's binaries, so their absence is a failure, not a skip.
      assert.ok(!process.env.CI, 'initdb/pg_ctl are needed to start a private PostgreSQL cluster');
      t.skip('initdb/pg_ctl not available to start a private cluster (the proxy test below still runs)');
      return;
    }
    const c = cluster;
    await outageUnderLoad(c.url, { down: () => c.stop('fast'), up: () => c.start() });
    // A crash this time (no clean shutdown): the same, with crash recovery on start.
    await outageUnderLoad(c.url, { down: () => c.stop('immediate'), up: () => c.start() });
  });

  it('the network to PostgreSQL cut and restored: the same', async () => {
    schema = await createTestSchema('trb_faults');
    proxy = await startTcpProxy({ host: '127.0.0.1', port: 5432 });
    const p = proxy;
    const base = new URL(urlWithSchema(schema.schema));
    base.port = String(p.port);
    await outageUnderLoad(base.toString(), {
      down: async () => p.cut(),
      up: async () => p.restore(),
    });
  });

  it('the database hung (connections open, nothing answered): the same, through the query timeout', async () => {
    const hung = await createTestSchema('trb_faults_hung');
    const p = await startTcpProxy({ host: '127.0.0.1', port: 5432 });
    try {
      const base = new URL(urlWithSchema(hung.schema));
      base.port = String(p.port);
      await outageUnderLoad(base.toString(), { down: async () => p.stall(), up: async () => p.restore() }, { queryTimeoutMs: 1000 });
    } finally {
      await p.close();
      await hung.drop();
    }
  });

  it('an unreachable database at start-up is reported clearly, without a crash', async () => {
    const proxyDown = await startTcpProxy({ host: '127.0.0.1', port: 5432 });
    proxyDown.cut();
    const store = new PostgresStore({ connectionString: `postgres://postgres@127.0.0.1:${proxyDown.port}/test`, startupWaitMs: 300, connectTimeoutMs: 500 });
    try {
      await assert.rejects(store.init(), (err: Error) => {
        assert.equal(err.name, 'StoreUnavailableError');
        assert.match(err.message, /Cannot reach PostgreSQL at postgres:\/\/postgres@127\.0\.0\.1:\d+\/test/);
        return true;
      });
    } finally {
      await proxyDown.close();
    }
  });
});
