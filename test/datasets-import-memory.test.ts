// A large JSONL import streams through a real server process in bounded memory (issue 14: RSS within
// +100 MB of idle). 80,000 lines of ~300 bytes (~24 MB, 24x the JSON body limit) here: enough lines
// that a per-line leak shows (a schema compiled per line grew RSS by ~1.5 KB a line); the 100,000-line
// figure is bench/dataset-import.bench.ts. TRIBUNAL_TEST_STORE=postgres runs it on PostgreSQL.
import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { measureImport } from './helpers/dataset-import.ts';
import { startInstance, type Instance } from './helpers/instances.ts';

let server: Instance;
let key: string;

before(async () => {
  // h-harden: 80,000 items with a demo key, over the demo item quota's default.
  const env: Record<string, string> = { TRIBUNAL_DEMO_QUOTA_ITEMS: '1000000' };
  if (process.env.TRIBUNAL_TEST_STORE === 'postgres') {
    const { createTestSchema } = await import('./helpers/postgres.ts');
    env.TRIBUNAL_STORE = 'postgres';
    env.DATABASE_URL = (await createTestSchema()).url;
  }
  server = await startInstance(env);
  key = (await server.request('POST', '/create-demo-user/')).body.api_key;
});
after(() => server?.stop());

it('imports 80,000 JSONL lines (24x the JSON body limit) with the server RSS within +100 MB of idle', async () => {
  // A first small import warms the code paths, so idle is measured with them loaded.
  await measureImport(server.url, server.child.pid!, key, 100, 10);
  const run = await measureImport(server.url, server.child.pid!, key, 80_000, 240);
  assert.equal(run.status, 201, JSON.stringify(run.body));
  assert.equal(run.body.created, 80_000);
  assert.deepEqual(run.body.skipped, []);
  const grewMb = (run.peakRss - run.idleRss) / 1048576;
  assert.ok(grewMb < 100, `server RSS grew ${grewMb.toFixed(0)} MB during the import`);
});
