// The per-key limiter (src/http/rate-limits.ts) counts in the same store as express-rate-limit and
// must answer as it did: the same IETF draft-7 headers on every request, 429 with Retry-After over
// the limit. Checked side by side against express-rate-limit itself with the same settings.
import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { after, before, test } from 'node:test';
import express from 'express';
import { rateLimit } from 'express-rate-limit';
import { startTestServer, type TestServer } from './helpers/server.ts';

let server: TestServer;
let key: string;
let reference: ReturnType<ReturnType<typeof express>['listen']>;
let referenceUrl: string;

before(async () => {
  server = await startTestServer({ TRIBUNAL_RATE_LIMIT: '3', TRIBUNAL_RATE_WINDOW: '90s' });
  key = (await server.demoUser()).api_key;
  const app = express();
  app.use(rateLimit({ windowMs: 90_000, limit: 3, standardHeaders: 'draft-7', legacyHeaders: false, keyGenerator: () => 'one-key', validate: { keyGeneratorIpFallback: false } }));
  app.get('/', (_req, res) => res.json({ ok: true }));
  reference = app.listen(0, '127.0.0.1');
  await new Promise((r) => reference.once('listening', r));
  referenceUrl = `http://127.0.0.1:${(reference.address() as AddressInfo).port}/`;
});
after(async () => {
  reference.close();
  await server.close();
});

const reset = (header: string | null) => Number(/reset=(\d+)/.exec(header ?? '')?.[1]);

test('the same headers as express-rate-limit, request by request, and the same 429 past the limit', async () => {
  for (let i = 1; i <= 4; i++) {
    const ours = await server.request('GET', '/v1/judges/', { key });
    const theirs = await fetch(referenceUrl);
    assert.equal(ours.headers.get('ratelimit-policy'), theirs.headers.get('ratelimit-policy'), `request ${i}`);
    assert.equal(ours.headers.get('ratelimit')?.replace(/reset=\d+/, ''), theirs.headers.get('ratelimit')?.replace(/reset=\d+/, ''), `request ${i}`);
    assert.ok(Math.abs(reset(ours.headers.get('ratelimit')) - reset(theirs.headers.get('ratelimit'))) <= 1, `request ${i}: reset`);
    assert.equal(ours.status, i <= 3 ? 200 : 429, `request ${i}`);
    assert.equal(theirs.status, ours.status, `request ${i}`);
  }
  const over = await server.request('GET', '/v1/judges/', { key });
  assert.equal(over.body.code, 'rate_limited');
  const retryAfter = Number(over.headers.get('retry-after'));
  assert.ok(retryAfter >= 1 && retryAfter <= 90, `Retry-After ${retryAfter}`);
  assert.match(over.headers.get('ratelimit') ?? '', /^limit=3, remaining=0, reset=\d+$/);
});
