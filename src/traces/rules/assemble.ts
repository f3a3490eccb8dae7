// A unit of work -> the inputs of one run: a span's extraction, or the matching spans of a trace or
// session merged into one conversation (each exchange in time order; a span whose messages already
// hold the conversation so far replaces it rather than repeating it).
import type { Turn } from '../../schemas.ts';
import { extractSpan, type Extracted } from '../extract/index.ts';
import type { SpanRecord, TraceStore } from '../types.ts';
import { matches, sessionOf } from './match.ts';
import type { EvalJob, RuleRecord } from './types.ts';

/**
 * `recheck`: nothing could be read yet, but a GenAI span arrived within `contentWaitMs`: its content
 * may still be on its way as OTLP log records (sent by their own batching exporter), so the unit is
 * looked at again rather than counted unreadable.
 */
export type Assembled = { ok: true; inputs: Extracted; span: SpanRecord; spans: number } | { ok: false; reason: string; recheck?: boolean };

const mayAwaitContent = (s: SpanRecord, now: number, waitMs: number) => now - Date.parse(s.received_at) < waitMs && Object.keys(s.attributes).some((k) => k.startsWith('gen_ai.'));

const sameTurn = (a: Turn, b: Turn) => a.role === b.role && a.content === b.content;

function merge(parts: Extracted[]): Extracted {
  // One span (every span-scoped unit): its extraction as it is, without building the merged conversation first.
  if (parts.length === 1) return parts[0]!;
  let conv: Turn[] = [];
  let system: string | undefined;
  const contexts: string[] = [];
  for (const p of parts) {
    system ??= p.system_prompt;
    if (p.contexts) contexts.push(...p.contexts);
    const turns = p.turns ?? [...(p.request !== undefined ? [{ role: 'user' as const, content: p.request }] : []), { role: 'assistant' as const, content: p.response }];
    // A later call usually repeats the conversation so far and adds to it; spans that started at the
    // same moment can arrive in either order, so a part the conversation already holds adds nothing.
    const extendsConv = conv.length <= turns.length && conv.every((t, i) => sameTurn(t, turns[i]));
    const heldAlready = turns.length <= conv.length && turns.every((t, i) => sameTurn(t, conv[i]));
    conv = extendsConv ? turns.map((t) => ({ ...t })) : heldAlready ? conv : [...conv, ...turns];
  }
  const last = parts[parts.length - 1];
  const out: Extracted = { source: `${last.source} (${parts.length} spans)`, response: last.response };
  const lastUser = [...conv].reverse().find((t) => t.role === 'user');
  if (lastUser) out.request = lastUser.content;
  if (conv.length && conv[conv.length - 1].role === 'assistant') out.turns = conv;
  if (system !== undefined) out.system_prompt = system;
  if (contexts.length) out.contexts = contexts;
  return out;
}

/**
 * Spans by start, then end. At module level, not a closure made per call: tsx (esbuild keepNames)
 * names every named closure with a defineProperty call, about 2 µs per judged unit (issue 33).
 */
const byStart = (a: SpanRecord, b: SpanRecord) => {
  const sa = BigInt(a.start_time_unix_nano);
  const sb = BigInt(b.start_time_unix_nano);
  return sa < sb ? -1 : sa > sb ? 1 : BigInt(a.end_time_unix_nano) < BigInt(b.end_time_unix_nano) ? -1 : 1;
};

/** `contentWaitMs` (TRIBUNAL_TRACE_CONTENT_WAIT, for the worker; 0 elsewhere): how long a GenAI span's log records are waited for. */
export async function assemble(traces: TraceStore, rule: RuleRecord, job: EvalJob, contentWaitMs = 0): Promise<Assembled> {
  let spans: SpanRecord[];
  if (job.scope === 'span') {
    const s = await traces.getSpan(job.org_id, job.trace_id, job.span_id!);
    spans = s ? [s] : [];
  } else if (job.scope === 'trace') {
    spans = (await traces.getTrace(job.org_id, job.trace_id)).filter((s) => matches(s, rule.filter));
  } else {
    spans = [];
    for (const key of ['session.id', 'gen_ai.conversation.id']) {
      const page = await traces.listTraces({ org_id: job.org_id, attribute: { key, value: job.session_id! } }, { limit: 200 });
      for (const t of page.items) spans.push(...(await traces.getTrace(job.org_id, t.trace_id)).filter((s) => sessionOf(s) === job.session_id && matches(s, rule.filter)));
    }
    const seen = new Set<string>();
    spans = spans.filter((s) => !seen.has(`${s.trace_id}:${s.span_id}`) && seen.add(`${s.trace_id}:${s.span_id}`));
  }
  if (!spans.length) return { ok: false, reason: 'span_gone' };
  if (spans.length > 1) spans.sort(byStart);
  const parts: Extracted[] = [];
  // The spans read, kept as they are extracted (extraction parses the messages: once per span).
  const readable: SpanRecord[] = [];
  let firstReason: string | null = null;
  for (const s of spans) {
    const ex = extractSpan(s, rule.extractor ?? undefined);
    if (ex.ok) {
      parts.push(ex.value);
      readable.push(s);
    } else firstReason ??= ex.reason;
  }
  if (!parts.length) {
    const now = Date.now();
    return { ok: false, reason: `unreadable_${firstReason}`, ...(spans.some((s) => mayAwaitContent(s, now, contentWaitMs)) ? { recheck: true } : {}) };
  }
  return { ok: true, inputs: merge(parts), span: readable[readable.length - 1], spans: parts.length };
}
