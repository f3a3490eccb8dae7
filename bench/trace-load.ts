// Shared by the online-evaluation benches (trace-eval-lag, trace-backlog-memory): a Tribunal server
// whose judge model is the fake Anthropic server, one judge and one span-scope rule on GenAI chat
// spans, and a paced OTLP/protobuf sender that posts `rate` spans per second in 10 batches a second,
// each span its own trace with random ids (so the rule's sampling on the trace id picks ~rate x share).
import { randomBytes } from 'node:crypto';
import http from 'node:http';
import { encodeExportRequest } from '../src/traces/proto.ts';
import { evaluatorBody, type ScoringRig, startScoringRig } from '../test/helpers/execute.ts';

export interface SentSpan {
  trace_id: string;
  span_id: string;
  /** The span's end, ms since the epoch (what the lag is measured from). */
  end_ms: number;
}

/** One export request of `n` GenAI chat spans ending now; answers the body and the spans in it. */
export function chatSpans(n: number): { body: Buffer; spans: SentSpan[] } {
  const endMs = Date.now();
  const end = BigInt(endMs) * 1_000_000n;
  const sent: SentSpan[] = [];
  const spans = [];
  for (let i = 0; i < n; i++) {
    const trace = randomBytes(16);
    const span = randomBytes(8);
    sent.push({ trace_id: trace.toString('hex'), span_id: span.toString('hex'), end_ms: endMs });
    spans.push({
      trace_id: trace,
      span_id: span,
      name: 'chat gpt-4o-mini',
      kind: 3,
      start_time_unix_nano: (end - 400_000_000n).toString(),
      end_time_unix_nano: end.toString(),
      attributes: [
        { key: 'gen_ai.operation.name', value: { string_value: 'chat' } },
        { key: 'gen_ai.request.model', value: { string_value: 'gpt-4o-mini' } },
        { key: 'gen_ai.input.messages', value: { string_value: JSON.stringify([{ role: 'user', parts: [{ type: 'text', content: `What is ${i} + ${i}?` }] }]) } },
        { key: 'gen_ai.output.messages', value: { string_value: JSON.stringify([{ role: 'assistant', parts: [{ type: 'text', content: `${2 * i}.` }] }]) } },
      ],
      status: { code: 1 },
    });
  }
  const body = Buffer.from(
    encodeExportRequest({
      resource_spans: [{ resource: { attributes: [{ key: 'service.name', value: { string_value: 'bench' } }] }, scope_spans: [{ scope: { name: 'bench' }, spans }] }],
    }),
  );
  return { body, spans: sent };
}

/**
 * One export; a connection reset is retried once, as an OTLP exporter retries: a kept-alive socket the
 * server closed while idle (its keep-alive timeout) races with the next request sent on it.
 */
export async function postOtlp(url: string, key: string, body: Buffer, agent: http.Agent): Promise<void> {
  try {
    await postOnce(url, key, body, agent);
  } catch (err) {
    if ((err as { code?: string }).code !== 'ECONNRESET') throw err;
    await postOnce(url, key, body, agent);
  }
}

function postOnce(url: string, key: string, body: Buffer, agent: http.Agent): Promise<void> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      `${url}/otel/v1/traces`,
      { method: 'POST', agent, headers: { 'content-type': 'application/x-protobuf', 'content-length': body.length, authorization: `Bearer ${key}` } },
      (res) => {
        res.resume();
        res.on('end', () => (res.statusCode === 200 ? resolve() : reject(new Error(`OTLP export answered ${res.statusCode}`))));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

/**
 * Posts `rate` spans/s for `seconds` (10 batches a second, on a fixed schedule: a late batch is sent
 * at once, never skipped); `onTick` runs after each batch. Answers every span sent.
 */
export async function sendPaced(rig: ScoringRig, rate: number, seconds: number, onTick?: (elapsedMs: number) => void | Promise<void>): Promise<SentSpan[]> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 4 });
  const perBatch = Math.max(1, Math.round(rate / 10));
  const batches = Math.max(1, Math.round(seconds * 10));
  const sent: SentSpan[] = [];
  const t0 = Date.now();
  const inFlight: Promise<void>[] = [];
  for (let b = 0; b < batches; b++) {
    const wait = t0 + b * 100 - Date.now();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    const { body, spans } = chatSpans(perBatch);
    sent.push(...spans);
    inFlight.push(postOtlp(rig.server.url, rig.key, body, agent));
    if (inFlight.length >= 8) await inFlight.shift();
    await onTick?.(Date.now() - t0);
  }
  await Promise.all(inFlight);
  agent.destroy();
  return sent;
}

/** The rig, a judge on the fake model and an active span rule on chat spans. */
export async function startRuleRig(
  env: Record<string, string>,
  rule: { sampling_rate: number; delay_seconds: number; queue_limit?: number; shed_policy?: 'drop_oldest' | 'drop_newest' },
): Promise<{ rig: ScoringRig; ruleId: string }> {
  const rig = await startScoringRig({ TRIBUNAL_TRACE_MAX_SPANS: '100000000', ...env });
  const ev = await rig.createEvaluator(evaluatorBody());
  const judge = await rig.createJudge({ name: 'Online judge', intent: 'grade answers', evaluator_ids: [ev.id] });
  const created = await rig.post('/v1/evaluation-rules/', {
    name: 'bench rule',
    judge_id: judge.id,
    filter: [{ field: 'gen_ai.operation.name', op: 'eq', value: 'chat' }],
    ...rule,
  });
  if (created.status !== 201) throw new Error(`creating the rule: ${created.status} ${JSON.stringify(created.body)}`);
  return { rig, ruleId: created.body.id };
}

export const percentile = (xs: number[], p: number) => {
  if (!xs.length) return Number.NaN;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)];
};
