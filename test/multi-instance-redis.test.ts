// Rate limits across instances: with REDIS_URL, a key limited to N requests a window gets N in
// total over both instances. With Redis down the instances keep serving and count per instance;
// when Redis returns, counting is shared again. Redis is reached through a proxy the test can cut.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { startInstance, type Instance } from './helpers/instances.ts';
import { createTestSchema, type TestSchema } from './helpers/postgres.ts';
import { startTcpProxy, type TcpProxy } from './helpers/tcp-proxy.ts';

const LIMIT = 10;

describe('rate limits shared through Redis by two instances', () => {
  let schema: TestSchema;
  let redis: TcpProxy;
  let a: Instance;
  let b: Instance;

  before(async () => {
    schema = await createTestSchema('trb_redis');
    redis = await startTcpProxy({ host: '127.0.0.1', port: 6379 });
    const env = {
      TRIBUNAL_STORE: 'postgres',
      DATABASE_URL: schema.url,
      REDIS_URL: `redis://127.0.0.1:${redis.port}`,
      // Our own counters: other runs on the same Redis never share them.
      TRIBUNAL_REDIS_PREFIX: `tribunal-test:${randomBytes(6).toString('hex')}:`,
      TRIBUNAL_RATE_LIMIT: String(LIMIT),
      TRIBUNAL_RATE_WINDOW: '10m',
      // Longer than the 250 ms default: on a loaded test machine a slow answer would be counted locally
      // (fail open, by design) and the shared total would then exceed N for a reason this test is not about.
      TRIBUNAL_REDIS_TIMEOUT: '1s',
    };
    [a, b] = await Promise.all([startInstance(env), startInstance(env)]);
    await Promise.all([a.waitFor('Redis connected'), b.waitFor('Redis connected')]);
  });

  after(async () => {
    await Promise.all([a?.stop(), b?.stop()]);
    await redis?.close();
    await schema?.drop();
  });

  /** A new key (its own counter), then 3N requests alternating between the instances. */
  async function burst(): Promise<{ ok: number; limited: number; other: number[]; sample429?: { headers: Headers; body: any } }> {
    const demo = await a.request('POST', '/create-demo-user/');
    assert.equal(demo.status, 201, JSON.stringify(demo.body));
    let ok = 0;
    let limited = 0;
    const other: number[] = [];
    let sample429: { headers: Headers; body: any } | undefined;
    for (let i = 0; i < LIMIT * 3; i++) {
      const res = await (i % 2 ? b : a).request('GET', '/v1/projects/', { key: demo.body.api_key });
      if (res.status === 200) ok++;
      else if (res.status === 429) {
        limited++;
        sample429 ??= res;
      } else other.push(res.status);
    }
    return { ok, limited, other, sample429 };
  }

  it('a key limited to N requests gets N in total, not N per instance', async () => {
    const { ok, limited, other, sample429 } = await burst();
    assert.deepEqual({ ok, limited, other }, { ok: LIMIT, limited: LIMIT * 2, other: [] });
    assert.equal(sample429!.headers.get('content-type'), 'application/problem+json; charset=utf-8');
    assert.equal(sample429!.body.code, 'rate_limited');
    assert.ok(Number(sample429!.headers.get('retry-after')) >= 1);
  });

  it('Redis down: both keep serving, counting per instance; shared again once Redis is back', async () => {
    redis.cut();
    await Promise.all([a.waitFor('Redis unreachable'), b.waitFor('Redis unreachable')]);
    const down = await burst();
    assert.deepEqual(down.other, [], 'no request failed because of Redis');
    assert.equal(down.ok, LIMIT * 2, 'per-instance limits: N on each instance');
    for (const inst of [a, b]) {
      assert.equal(inst.child.exitCode, null, 'still running');
      assert.equal((await inst.request('GET', '/healthz')).status, 200);
    }

    redis.restore();
    await Promise.all([a.waitFor('Redis is back', 20_000), b.waitFor('Redis is back', 20_000)]);
    const back = await burst();
    assert.deepEqual({ ok: back.ok, other: back.other }, { ok: LIMIT, other: [] });
  });

  it('Redis hung (connected, never answering): requests are still served, each waiting at most a short timeout', async () => {
    redis.stall();
    try {
      const demo = await a.request('POST', '/create-demo-user/');
      assert.equal(demo.status, 201);
      const statuses = [];
      for (let i = 0; i < 6; i++) statuses.push((await (i % 2 ? b : a).request('GET', '/v1/projects/', { key: demo.body.api_key })).status);
      assert.deepEqual(statuses, [200, 200, 200, 200, 200, 200]);
      // They were counted locally after Redis's answer timed out, not queued behind it.
      await Promise.all([a.waitFor('Redis unreachable (Redis did not answer within 1000 ms)'), b.waitFor('Redis unreachable (Redis did not answer within 1000 ms)')]);
    } finally {
      redis.restore();
    }
  });
});
