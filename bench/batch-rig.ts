// What the batch benches share (batch.bench.ts, calibration-run.bench.ts): their child servers (the
// fake judge model, and Tribunal on the JSON store or on a fresh schema of the test database), the
// REST calls they make, and putting it all away at the end.
import { serveChild, serveFake, serveTribunal, startChild, stopChildren, type Child } from './harness.ts';

/** In a bench's `--serve` child: `fake <latency>` or `tribunal <fake url> <model concurrency> [database url]`. */
export async function serveBatchChild(): Promise<void> {
  const kind = process.argv[3];
  if (kind === 'fake') return serveChild(() => serveFake(Number(process.argv[4])));
  const pgUrl = process.argv[6];
  const pgEnv: Record<string, string> = pgUrl ? { TRIBUNAL_STORE: 'postgres', DATABASE_URL: pgUrl } : {};
  await serveChild(() => serveTribunal(process.argv[4], { TRIBUNAL_MODEL_CONCURRENCY: process.argv[5], TRIBUNAL_REQUEST_TIMEOUT: '600s', ...pgEnv }));
}

/** A REST call with an API key; a status of 300 or more throws, with the start of the body. */
export async function api(base: string, key: string, method: string, path: string, body?: unknown) {
  const res = await fetch(base + path, {
    method,
    headers: { authorization: `Api-Key ${key}`, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const json = (await res.json()) as any;
  if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${JSON.stringify(json).slice(0, 400)}`);
  return json;
}

export interface BatchRig {
  fake: Child;
  servers: Child[];
}

/**
 * Starts the fake model and `instances` Tribunal servers (one at a time: the first migrates the
 * schema), hands them to `use`, and stops them (and drops the PostgreSQL schema) whatever happens.
 */
export async function withBatchRig(
  self: string,
  opts: { latency: number; concurrency: number; store: string; instances?: number },
  use: (rig: BatchRig) => Promise<void>,
): Promise<void> {
  let fake: Child | undefined;
  const servers: Child[] = [];
  let schema: { url: string; drop(): Promise<void> } | undefined;
  try {
    fake = await startChild(self, 'fake', [String(opts.latency)]);
    if (opts.store === 'postgres') {
      const { createTestSchema } = await import('../test/helpers/postgres.ts');
      schema = await createTestSchema('trb_bench');
    }
    for (let i = 0; i < (opts.instances ?? 1); i++) servers.push(await startChild(self, 'tribunal', [fake.ready.url, String(opts.concurrency), ...(schema ? [schema.url] : [])]));
    await use({ fake, servers });
  } finally {
    stopChildren([...servers, fake]);
    // The servers close their pools on SIGINT; give them a moment before the schema goes.
    if (schema) await new Promise((r) => setTimeout(r, 1000)).then(() => schema!.drop()).catch((err) => console.error(`dropping the bench schema: ${(err as Error).message}`));
  }
}
