// Server CPU per graded evaluator: mode provider_batch against a live batch run (issue 32), in the
// same run on the same server. A dataset of N items (default 2,000) x a judge of 3 evaluators is run
// live (the fake Messages API answering at once) and through Message Batches (the fake batches API,
// ended at the second poll), alternating, R rounds each (default 2). The server's CPU
// (process.cpuUsage of its child) over each run, divided by the evaluators it graded; goal: the
// provider_batch figure no higher than the live one (ratio <= 1).
//
//   node --import tsx bench/provider-batch-cpu.bench.ts [--items N] [--rounds R]
//
// The server and the fakes run in child processes of their own (bench/harness.ts). One base URL
// serves both fakes: /v1/messages/batches* goes to the batches fake, the rest to the live one.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { parseArgs } from 'node:util';
import { fileURLToPath } from 'node:url';
import { childCpuMicros, demoWithJudges, runBench, serveChild, serveTribunal, startChild, stopChildren, type Child } from './harness.ts';

const SELF = fileURLToPath(import.meta.url);
const EVALUATORS = ['Answer Relevance', 'Clarity', 'Conciseness'];

/** Both fakes behind one address. */
async function serveFakes(): Promise<{ url: string }> {
  const { startFakeAnthropic, toolAnswer } = await import('../test/helpers/fake-anthropic.ts');
  const { startFakeAnthropicBatches } = await import('../test/helpers/fake-anthropic-batches.ts');
  const answer = { justification: 'The response answers the question directly.', score: 0.8 };
  const live = await startFakeAnthropic({ responder: () => toolAnswer(answer, { usage: { input_tokens: 900, output_tokens: 60 } }) });
  const batches = await startFakeAnthropicBatches();
  batches.respondWith(() => ({ kind: 'succeeded', input: answer, output_tokens: 60 }));
  // The live fake records every request; forget them now and then so that its heap stays flat.
  setInterval(() => live.resetStats(), 5000).unref();
  const front = http.createServer((req, res) => {
    const target = new URL(req.url ?? '/', (req.url ?? '').startsWith('/v1/messages/batches') ? batches.url : live.url);
    const out = http.request(target, { method: req.method, headers: req.headers }, (up) => {
      res.writeHead(up.statusCode ?? 502, up.headers);
      up.pipe(res);
    });
    out.on('error', () => res.destroy());
    req.pipe(out);
  });
  await new Promise<void>((r) => front.listen(0, '127.0.0.1', () => r()));
  return { url: `http://127.0.0.1:${(front.address() as AddressInfo).port}` };
}

if (process.argv[2] === '--serve') {
  if (process.argv[3] === 'fake') await serveChild(serveFakes);
  else await serveChild(() => serveTribunal(process.argv[4], { TRIBUNAL_MODEL_CONCURRENCY: '64', TRIBUNAL_PROVIDER_BATCH_POLL: '200ms', TRIBUNAL_REQUEST_TIMEOUT: '600s' }));
}

const { values } = parseArgs({
  args: process.argv[2] === '--serve' ? [] : process.argv.slice(2),
  options: { items: { type: 'string' }, rounds: { type: 'string' } },
});
const ITEMS = Number(values.items ?? 2000);
const ROUNDS = Number(values.rounds ?? 2);

async function api(base: string, key: string, method: string, path: string, body?: unknown, tries = 3): Promise<any> {
  let res: Response;
  try {
    res = await fetch(base + path, {
      method,
      headers: { authorization: `Api-Key ${key}`, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  } catch (err) {
    // A reused keep-alive connection the server had just closed: a status read is asked again.
    if (method !== 'GET' || tries <= 1) throw err;
    return api(base, key, method, path, body, tries - 1);
  }
  const json = (await res.json()) as any;
  if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${JSON.stringify(json).slice(0, 400)}`);
  return json;
}

/** One run; answers the server's CPU ms per graded evaluator over it. */
async function oneRun(server: Child, key: string, judgeId: string, datasetId: string, mode: 'live' | 'provider_batch'): Promise<number> {
  const base = server.ready.url;
  const before = await childCpuMicros(server.child);
  const { batch_execution_id: id } = await api(base, key, 'POST', `/v1/judges/${judgeId}/batch-execute/`, { dataset_id: datasetId, mode });
  let b: any;
  for (;;) {
    b = await api(base, key, 'GET', `/v1/judges/batch-executions/${id}/`);
    if (['completed', 'failed', 'cancelled'].includes(b.status)) break;
    await new Promise((r) => setTimeout(r, 250));
  }
  if (b.status !== 'completed' || b.failed) throw new Error(`${mode} run ${id} ended ${b.status} with ${b.failed} failed rows: ${b.error ?? ''}`);
  const graded = b.summary.reduce((n: number, e: { n: number }) => n + e.n, 0);
  if (graded !== ITEMS * EVALUATORS.length) throw new Error(`${mode} run graded ${graded} evaluators, not ${ITEMS * EVALUATORS.length}`);
  return ((await childCpuMicros(server.child)) - before) / 1000 / graded;
}

runBench(async () => {
  let fake: Child | undefined;
  let server: Child | undefined;
  try {
    fake = await startChild(SELF, 'fake');
    server = await startChild(SELF, 'tribunal', [fake.ready.url]);
    const base = server.ready.url;
    const { key, judgeIds } = await demoWithJudges(base, { 'bench provider batch': EVALUATORS });
    const dataset = await api(base, key, 'POST', '/v1/datasets/', { name: 'bench provider batch' });
    for (let i = 0; i < ITEMS; i += 1000) {
      const items = Array.from({ length: Math.min(1000, ITEMS - i) }, (_, j) => ({
        request: `Customer question ${i + j}: how do I reset my password?`,
        response: `Answer ${i + j}: open Settings, choose Security, then Reset password and follow the e-mail link.`,
      }));
      await api(base, key, 'POST', `/v1/datasets/${dataset.id}/items/`, { items });
    }
    const live: number[] = [];
    const provider: number[] = [];
    for (let r = 0; r < ROUNDS; r++) {
      // Alternating (live first, then provider first) so that warm-up favours neither.
      const order: Array<'live' | 'provider_batch'> = r % 2 ? ['provider_batch', 'live'] : ['live', 'provider_batch'];
      for (const mode of order) (mode === 'live' ? live : provider).push(await oneRun(server, key, judgeIds[0], dataset.id, mode));
    }
    const f = (xs: number[]) => xs.map((x) => x.toFixed(3)).join(', ');
    const best = (xs: number[]) => Math.min(...xs);
    console.log(`${ITEMS} items x ${EVALUATORS.length} evaluators, ${ROUNDS} round(s) each, server CPU ms per graded evaluator:`);
    console.log(`  live batch run:            ${f(live)}`);
    console.log(`  provider_batch run:        ${f(provider)}`);
    console.log(`ratio provider_batch / live (best of each): ${(best(provider) / best(live)).toFixed(2)} (goal <= 1)`);
  } finally {
    stopChildren([server, fake]);
  }
});
