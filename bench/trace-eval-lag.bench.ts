// Evaluation lag of online evaluation (issue 28): OTLP spans arrive at LAG_RATE spans/s for
// LAG_SECONDS, a span rule samples LAG_SAMPLING of them (by trace id) with delay_seconds LAG_DELAY,
// and each sampled span is judged by the fake judge model (LAG_MODEL_MS per call). The lag of a span
// is (its evaluation stored - the span's end): the evaluation is linked right after the execution
// log is written, so this is an upper bound on "log written". Printed: p50/p95/max of the lag next to
// the goal delay_seconds + 2 s, and every sampled span's outcome (none may be missing).
//
//   node --import tsx bench/trace-eval-lag.bench.ts   LAG_SECONDS=30 LAG_RATE=200 LAG_SAMPLING=0.1 LAG_DELAY=2 LAG_MODEL_MS=200
//   TRIBUNAL_TEST_STORE=postgres node --import tsx bench/trace-eval-lag.bench.ts   (needs the test database)
import { sampled } from '../src/traces/rules/match.ts';
import { percentile, type SentSpan, sendPaced, startRuleRig } from './trace-load.ts';

const SECONDS = Number(process.env.LAG_SECONDS ?? 30);
const RATE = Number(process.env.LAG_RATE ?? 200);
const SAMPLING = Number(process.env.LAG_SAMPLING ?? 0.1);
const DELAY = Number(process.env.LAG_DELAY ?? 2);
const MODEL_MS = Number(process.env.LAG_MODEL_MS ?? 200);

async function main() {
  const { rig, ruleId } = await startRuleRig({}, { sampling_rate: SAMPLING, delay_seconds: DELAY });
  rig.fake.setLatency(MODEL_MS);
  try {
    const cpu0 = process.cpuUsage();
    const sent = await sendPaced(rig, RATE, SECONDS);
    const cpu = process.cpuUsage(cpu0);
    const want = sent.filter((s) => sampled(s.trace_id, SAMPLING));
    // Wait until every sampled span left the queue (done, failed or skipped), at most delay + 60 s.
    const deadline = Date.now() + (DELAY + 60) * 1000;
    let status: { sampled: number; queued: number; running: number; done: number; failed: number; skipped: Record<string, number> };
    for (;;) {
      status = (await rig.get(`/v1/evaluation-rules/${ruleId}/`)).body.status;
      if ((status.sampled >= want.length && status.queued === 0 && status.running === 0) || Date.now() > deadline) break;
      await new Promise((r) => setTimeout(r, 250));
    }
    const lags: number[] = [];
    const missing: SentSpan[] = [];
    for (const s of want) {
      const t = await rig.get(`/v1/traces/${s.trace_id}/`);
      const ev = (t.body.spans ?? []).flatMap((x: { evaluations: Array<{ created_at: string }> }) => x.evaluations);
      if (ev.length) lags.push((Date.parse(ev[0].created_at) - s.end_ms) / 1000);
      else missing.push(s);
    }
    const goal = DELAY + 2;
    const p95 = percentile(lags, 95);
    console.log(
      `store: ${rig.server.store.kind}, ${RATE} spans/s for ${SECONDS}s (${sent.length} spans), sampling ${SAMPLING}, delay_seconds ${DELAY}, judge model ${MODEL_MS} ms`,
    );
    console.log(`server+client CPU while sending: ${((cpu.user + cpu.system) / 1000 / SECONDS).toFixed(0)} ms per second`);
    console.log(
      `rule status: sampled ${status.sampled} (expected ${want.length}), done ${status.done}, failed ${status.failed}, queued ${status.queued}, running ${status.running}, skipped ${JSON.stringify(status.skipped)}`,
    );
    console.log(
      `lag (evaluation stored - span end) over ${lags.length} spans: p50 ${percentile(lags, 50).toFixed(2)} s, p95 ${p95.toFixed(2)} s, max ${Math.max(...lags).toFixed(2)} s`,
    );
    console.log(`p95 lag / goal (delay_seconds + 2 s = ${goal} s): ${(p95 / goal).toFixed(2)} (target <= 1), ${missing.length} sampled span(s) without an evaluation`);
  } finally {
    await rig.close();
  }
}

await main();
