// Memory under a lasting backlog (issue 28): spans arrive at MEM_RATE/s, a rule samples MEM_SAMPLING
// of them, and the judge (the fake model, MEM_MODEL_MS per call, TRIBUNAL_BATCH_CONCURRENCY units at
// once) takes far fewer than arrive, so the rule's queue fills to MEM_QUEUE_LIMIT and sheds the
// oldest, counted. Spans leave with a short retention (MEM_RETENTION), as they would with the size
// cap, so what is measured is what the backlog holds. Every tenth of MEM_SECONDS (default 600: ten
// minutes) prints RSS and heap (after a forced GC when run with --expose-gc) with the rule's counts;
// the reference is the same process's reading at the middle of the run, once the queue is full and
// retention has begun: flat means the end is within a few per cent of the middle.
//
//   node --expose-gc --import tsx bench/trace-backlog-memory.bench.ts   MEM_SECONDS=600 MEM_RATE=100 MEM_SAMPLING=0.5
//   TRIBUNAL_TEST_STORE=postgres node --expose-gc --import tsx bench/trace-backlog-memory.bench.ts
import { sendPaced, startRuleRig } from './trace-load.ts';

const SECONDS = Number(process.env.MEM_SECONDS ?? 600);
const RATE = Number(process.env.MEM_RATE ?? 100);
const SAMPLING = Number(process.env.MEM_SAMPLING ?? 0.5);
const MODEL_MS = Number(process.env.MEM_MODEL_MS ?? 1000);
const CONCURRENCY = process.env.MEM_CONCURRENCY ?? '2';
const QUEUE_LIMIT = Number(process.env.MEM_QUEUE_LIMIT ?? 500);
const RETENTION = process.env.MEM_RETENTION ?? '60s';

const gc = (globalThis as { gc?: () => void }).gc;
const mb = (n: number) => (n / 1e6).toFixed(1);

interface Reading {
  at_s: number;
  rss: number;
  heap: number;
  matched: number;
  line: string;
}

async function main() {
  const { rig, ruleId } = await startRuleRig(
    { TRIBUNAL_BATCH_CONCURRENCY: CONCURRENCY, TRIBUNAL_TRACE_RETENTION: RETENTION },
    { sampling_rate: SAMPLING, delay_seconds: 0, queue_limit: QUEUE_LIMIT, shed_policy: 'drop_oldest' },
  );
  rig.fake.setLatency(MODEL_MS);
  const readings: Reading[] = [];
  const read = async (atS: number) => {
    // The fake model keeps every request it was sent (for tests' assertions): not Tribunal's memory.
    rig.fake.resetStats();
    rig.fake.forgetCache();
    gc?.();
    const m = process.memoryUsage();
    const s = (await rig.get(`/v1/evaluation-rules/${ruleId}/`)).body.status;
    const line = `t=${atS.toFixed(0).padStart(4)}s  rss ${mb(m.rss)} MB  heap ${mb(m.heapUsed)} MB  matched ${s.matched}  done ${s.done}  queued ${s.queued}  running ${s.running}  shed_oldest ${s.skipped.shed_oldest ?? 0}  oldest queued ${s.oldest_queued_age_s?.toFixed(1) ?? '-'} s`;
    console.log(line);
    readings.push({ at_s: atS, rss: m.rss, heap: m.heapUsed, matched: s.matched, line });
  };
  try {
    console.log(
      `store: ${rig.server.store.kind}, ${RATE} spans/s for ${SECONDS}s, sampling ${SAMPLING}, judge ${MODEL_MS} ms x ${CONCURRENCY} at once, queue_limit ${QUEUE_LIMIT} (drop_oldest), retention ${RETENTION}${gc ? '' : ' (no --expose-gc: heap read without a forced GC)'}`,
    );
    await read(0);
    let next = 1;
    let reading: Promise<void> | null = null;
    await sendPaced(rig, RATE, SECONDS, (ms) => {
      // A reading every tenth of the run, taken beside the sender (which keeps its schedule).
      if (!reading && ms >= (next * SECONDS * 1000) / 10) {
        next++;
        reading = read(ms / 1000).finally(() => (reading = null));
      }
    });
    await reading;
    if (readings[readings.length - 1].at_s < SECONDS * 0.99) await read(SECONDS);
    const mid = readings.reduce((best, r) => (Math.abs(r.at_s - SECONDS / 2) < Math.abs(best.at_s - SECONDS / 2) ? r : best));
    const end = readings[readings.length - 1];
    const status = (await rig.get(`/v1/evaluation-rules/${ruleId}/`)).body.status;
    const counted =
      status.done +
      status.failed +
      status.queued +
      status.running +
      Object.entries(status.skipped as Record<string, number>)
        .filter(([k]) => k !== 'not_sampled')
        .reduce((a, [, n]) => a + n, 0);
    console.log(`start: ${readings[0].line}`);
    console.log(`middle: ${mid.line}`);
    console.log(`end: ${end.line}`);
    console.log(`end / middle: rss ${(end.rss / mid.rss).toFixed(2)}x, heap ${(end.heap / mid.heap).toFixed(2)}x (flat: about 1.00)`);
    // Every span sent matches the rule: matched / elapsed is the rate the server took them in (the
    // sender keeps at most 8 requests open, so a slow receiver slows it).
    console.log(`spans taken in: ${(end.matched / end.at_s).toFixed(1)} per second of ${RATE} sent per second (until the end reading)`);
    console.log(`every sampled span counted once: sampled ${status.sampled}, done+failed+queued+running+skipped ${counted}`);
  } finally {
    await rig.close();
  }
}

await main();
