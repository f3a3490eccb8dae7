// The span formats Tribunal reads without configuration: the OpenTelemetry GenAI conventions (current
// gen_ai.input/output.messages, the older gen_ai.prompt.N / gen_ai.completion.N attributes and the
// gen_ai.*.message / gen_ai.choice events), OpenInference (input.value, llm.*_messages.*,
// retrieval.documents.*), and the Vercel AI SDK (ai.prompt*, ai.response.*, ai.toolCall.*).
// Each reader answers what it found as messages in and out, or null when the span is not its format.
import type { Turn } from '../../schemas.ts';
import type { SpanRecord } from '../types.ts';
import { jsonOf, textOf, turnOf, turnsOf } from './messages.ts';

export interface Found {
  source: string;
  input: Turn[];
  output: Turn[];
  contexts?: string[];
  tool_call?: { name: string; arguments: string; result: string | null };
  /** Plain text in and out, for spans that carry no messages (OpenInference chains, input.value). */
  request?: string;
  response?: string;
}

type Attrs = Record<string, unknown>;
const str = (v: unknown) => (typeof v === 'string' ? v : v === undefined || v === null ? undefined : JSON.stringify(v));

/** `prefix.N.rest` attributes -> [{rest: value}] by N. */
function indexed(a: Attrs, prefix: string): Attrs[] {
  const out: Attrs[] = [];
  for (const [k, v] of Object.entries(a)) {
    if (!k.startsWith(prefix)) continue;
    const m = /^(\d+)\.(.+)$/.exec(k.slice(prefix.length));
    if (!m) continue;
    (out[Number(m[1])] ??= {})[m[2]] = v;
  }
  return out.filter(Boolean);
}

export function genAiCurrent(s: SpanRecord): Found | null {
  let a: Attrs = s.attributes;
  if (a['gen_ai.input.messages'] === undefined && a['gen_ai.output.messages'] === undefined) {
    // Or on the event that carries the content (gen_ai.client.inference.operation.details).
    const ev = s.events.find((e) => e.attributes['gen_ai.input.messages'] !== undefined || e.attributes['gen_ai.output.messages'] !== undefined);
    if (!ev) return null;
    a = ev.attributes;
  }
  const input = turnsOf(jsonOf(a['gen_ai.input.messages']));
  const system = jsonOf(a['gen_ai.system_instructions']);
  if (system) input.unshift({ role: 'system', content: textOf(system) });
  return { source: 'gen_ai', input, output: turnsOf(jsonOf(a['gen_ai.output.messages'])) };
}

export function genAiLegacy(s: SpanRecord): Found | null {
  const a = s.attributes;
  const prompts = indexed(a, 'gen_ai.prompt.');
  const completions = indexed(a, 'gen_ai.completion.');
  if (prompts.length || completions.length) {
    const toTurn = (x: Attrs, fallback: string) => turnOf({ role: x.role ?? fallback, content: x.content ?? '', tool_calls: jsonOf(x.tool_calls) ?? undefined });
    return {
      source: 'gen_ai_legacy',
      input: prompts.map((p) => toTurn(p, 'user')).filter((t): t is Turn => t !== null),
      output: completions.map((c) => toTurn(c, 'assistant')).filter((t): t is Turn => t !== null),
    };
  }
  // Events: gen_ai.{system,user,assistant,tool}.message and gen_ai.choice; or gen_ai.content.prompt/completion.
  const input: Turn[] = [];
  const output: Turn[] = [];
  for (const e of s.events) {
    const m = /^gen_ai\.(system|user|assistant|tool)\.message$/.exec(e.name);
    if (m) {
      const body = jsonOf(e.attributes['event.body'] ?? e.attributes.body) as Attrs | null;
      const t = turnOf({ role: m[1], ...(body ?? {}), ...e.attributes });
      if (t) input.push(t);
    } else if (e.name === 'gen_ai.choice') {
      // The message is an attribute (span events) or in the body (log records: {index, finish_reason, message}).
      const body = jsonOf(e.attributes['event.body'] ?? e.attributes.body) as Attrs | null;
      const raw = e.attributes.message ?? body?.message;
      const msg = jsonOf(raw) ?? raw;
      const t = turnOf({ role: 'assistant', ...((msg as Attrs) ?? {}) });
      if (t) output.push(t);
    } else if (e.name === 'gen_ai.content.prompt') {
      const p = jsonOf(e.attributes['gen_ai.prompt']);
      if (Array.isArray(p)) input.push(...turnsOf(p));
      else if (typeof e.attributes['gen_ai.prompt'] === 'string') input.push({ role: 'user', content: e.attributes['gen_ai.prompt'] as string });
    } else if (e.name === 'gen_ai.content.completion') {
      const c = jsonOf(e.attributes['gen_ai.completion']);
      if (Array.isArray(c)) output.push(...turnsOf(c).map((t) => ({ ...t, role: 'assistant' as const })));
      else if (typeof e.attributes['gen_ai.completion'] === 'string') output.push({ role: 'assistant', content: e.attributes['gen_ai.completion'] as string });
    }
  }
  return input.length || output.length ? { source: 'gen_ai_legacy', input, output } : null;
}

function oiMessages(a: Attrs, prefix: string): Turn[] {
  return indexed(a, prefix)
    .map((m) => {
      const contents = indexed(m, 'message.contents.')
        .map((c) => c['message_content.text'])
        .filter((x) => typeof x === 'string');
      const calls = indexed(m, 'message.tool_calls.').map((c) => ({
        id: c['tool_call.id'],
        function: { name: c['tool_call.function.name'], arguments: c['tool_call.function.arguments'] ?? '{}' },
      }));
      return turnOf({
        role: m['message.role'],
        content: m['message.content'] ?? contents.join('\n'),
        tool_calls: calls,
        tool_call_id: m['message.tool_call_id'],
        name: m['message.name'],
      });
    })
    .filter((t): t is Turn => t !== null);
}

export function openInference(s: SpanRecord): Found | null {
  const a = s.attributes;
  const keys = Object.keys(a);
  const has = (p: string) => keys.some((k) => k.startsWith(p));
  if (!has('llm.input_messages.') && !has('llm.output_messages.') && a['input.value'] === undefined && !has('retrieval.documents.') && a['openinference.span.kind'] === undefined)
    return null;
  const docs = indexed(a, 'retrieval.documents.')
    .map((d) => d['document.content'])
    .filter((x): x is string => typeof x === 'string');
  const found: Found = { source: 'openinference', input: oiMessages(a, 'llm.input_messages.'), output: oiMessages(a, 'llm.output_messages.') };
  if (docs.length) found.contexts = docs;
  const plain = (v: unknown, mime: unknown) => (typeof v === 'string' ? (mime === 'application/json' ? v : v) : undefined);
  const req = plain(a['input.value'], a['input.mime_type']);
  const res = plain(a['output.value'], a['output.mime_type']);
  if (req !== undefined) found.request = req;
  if (res !== undefined) found.response = res;
  if (typeof a['tool.name'] === 'string')
    found.tool_call = { name: a['tool.name'] as string, arguments: str(a['tool.parameters'] ?? a['input.value']) ?? '{}', result: str(a['output.value']) ?? null };
  return found;
}

export function vercelAi(s: SpanRecord): Found | null {
  const a = s.attributes;
  if (!Object.keys(a).some((k) => k.startsWith('ai.'))) return null;
  const input: Turn[] = [];
  const messages = jsonOf(a['ai.prompt.messages']);
  if (Array.isArray(messages)) input.push(...turnsOf(messages));
  else {
    const prompt = jsonOf(a['ai.prompt']) as Attrs | null;
    if (prompt) {
      if (typeof prompt.system === 'string') input.push({ role: 'system', content: prompt.system });
      if (Array.isArray(prompt.messages)) input.push(...turnsOf(prompt.messages));
      else if (typeof prompt.prompt === 'string') input.push({ role: 'user', content: prompt.prompt });
      else if (Array.isArray(prompt.prompt)) input.push(...turnsOf(prompt.prompt));
    }
  }
  const output: Turn[] = [];
  const text = a['ai.response.text'];
  const calls = jsonOf(a['ai.response.toolCalls']);
  if (typeof text === 'string' || Array.isArray(calls)) {
    const t = turnOf({ role: 'assistant', content: typeof text === 'string' ? text : '', toolCalls: Array.isArray(calls) ? calls : undefined });
    if (t) output.push(t);
  }
  const found: Found = { source: 'vercel_ai', input, output };
  if (typeof a['ai.toolCall.name'] === 'string') {
    found.tool_call = { name: a['ai.toolCall.name'] as string, arguments: str(a['ai.toolCall.args']) ?? '{}', result: str(a['ai.toolCall.result']) ?? null };
  }
  return input.length || output.length || found.tool_call ? found : null;
}

export const READERS = [genAiCurrent, genAiLegacy, openInference, vercelAi];
