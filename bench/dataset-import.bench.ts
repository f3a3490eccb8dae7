// Dataset import: 100,000 JSONL lines streamed to a Tribunal server process (as `npm start` runs it)
// on each store; prints items per second and the server's RSS growth over idle (goal: +100 MB at
// most, issue 14). The reference is the same import's line count at the JSON body limit: a body
// read whole could hold only ~1 MiB.
//
//   node --import tsx bench/dataset-import.bench.ts            # JSON store, then PostgreSQL if reachable
//   DATASET_IMPORT_LINES=100000 DATASET_IMPORT_FILLER=1000 node --import tsx bench/dataset-import.bench.ts
import { measureImport } from '../test/helpers/dataset-import.ts';
import { startInstance } from '../test/helpers/instances.ts';
import { envNumber } from './harness.ts';

const lines = envNumber('DATASET_IMPORT_LINES', 100_000);
const filler = envNumber('DATASET_IMPORT_FILLER', 1000);

async function run(store: 'json' | 'postgres'): Promise<void> {
  // One 100 MB upload takes longer than the default TRIBUNAL_REQUEST_TIMEOUT (30 s, a slow-upload
  // guard for the whole server): a deployment that takes files this large raises it (README).
  const env: Record<string, string> = { TRIBUNAL_REQUEST_TIMEOUT: '600s' };
  if (store === 'postgres') {
    const { createTestSchema } = await import('../test/helpers/postgres.ts');
    env.TRIBUNAL_STORE = 'postgres';
    env.DATABASE_URL = (await createTestSchema('trb_bench')).url;
  }
  const server = await startInstance(env);
  try {
    const key = (await server.request('POST', '/create-demo-user/')).body.api_key as string;
    await measureImport(server.url, server.child.pid!, key, 200, 10); // warm-up
    const r = await measureImport(server.url, server.child.pid!, key, lines, filler);
    if (r.status !== 201 || r.body.created !== lines) throw new Error(`import answered ${r.status}: ${JSON.stringify(r.body).slice(0, 300)}\n${server.output().slice(-2000)}`);
    const mb = (n: number) => (n / 1048576).toFixed(0);
    console.log(
      `${store.padEnd(8)} ${lines} lines (${mb(lines * (filler + 60))} MB): ${(lines / r.seconds).toFixed(0)} items/s, ${r.seconds.toFixed(1)} s; ` +
        `server RSS idle ${mb(r.idleRss)} MB, peak ${mb(r.peakRss)} MB (+${mb(r.peakRss - r.idleRss)} MB; goal +100 MB)`,
    );
  } finally {
    await server.stop();
  }
}

await run('json');
try {
  await run('postgres');
} catch (err) {
  console.log(`postgres skipped: ${(err as Error).message}`);
}
