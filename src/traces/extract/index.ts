// A span -> the inputs of a run (request/response, turns, system prompt, contexts, a tool call), or the
// reason it cannot be read. The built-in formats are tried in turn (formats.ts); an extractor rule
// (rules.ts), when given, takes the place of what they found field by field.
import type { Turn } from '../../schemas.ts';
import type { SpanRecord } from '../types.ts';
import { READERS, type Found } from './formats.ts';
import { textOf, turnsOf } from './messages.ts';
import { locate, type ExtractorRule } from './rules.ts';

export interface Extracted {
  source: string;
  request?: string;
  response: string;
  system_prompt?: string;
  turns?: Turn[];
  contexts?: string[];
  tool_call?: { name: string; arguments: string; result: string | null };
  model?: string;
}

export type Extraction = { ok: true; value: Extracted } | { ok: false; reason: 'no_known_format' | 'no_response' | 'extractor_found_nothing' };

const asText = (v: unknown): string | undefined =>
  v === undefined || v === null ? undefined : typeof v === 'string' ? v : Array.isArray(v) || typeof v === 'object' ? textOf(v) || JSON.stringify(v) : String(v);

function fromFound(f: Found): Extracted | null {
  const system = f.input.filter((t) => t.role === 'system');
  const conv = [...f.input.filter((t) => t.role !== 'system'), ...f.output];
  const lastAssistant = [...f.output].reverse().find((t) => t.role === 'assistant');
  const lastUser = [...f.input].reverse().find((t) => t.role === 'user');
  let response = lastAssistant ? lastAssistant.content || (lastAssistant.tool_calls ? JSON.stringify(lastAssistant.tool_calls) : '') : undefined;
  let request = lastUser?.content;
  if (response === undefined && f.response !== undefined) response = f.response;
  if (request === undefined && f.request !== undefined) request = f.request;
  if (f.tool_call && response === undefined) {
    request ??= `Call ${f.tool_call.name} with ${f.tool_call.arguments}`;
    response = f.tool_call.result ?? '';
  }
  if (response === undefined || response === '') return null;
  const out: Extracted = { source: f.source, response };
  if (request !== undefined) out.request = request;
  if (system.length) out.system_prompt = system.map((t) => t.content).join('\n');
  // A conversation (more than one exchange, or tool calls) is judged as turns ending in the answer.
  const multi = conv.filter((t) => t.role === 'user').length > 1 || conv.some((t) => t.role === 'tool' || t.tool_calls);
  if (multi && lastAssistant && conv[conv.length - 1] === lastAssistant) out.turns = conv;
  if (f.contexts?.length) out.contexts = f.contexts;
  if (f.tool_call) out.tool_call = f.tool_call;
  return out;
}

function applyRule(span: SpanRecord, rule: ExtractorRule, base: Extracted | null): Extracted | null {
  const out: Partial<Extracted> = base ? { ...base, source: `${base.source}+extractor` } : { source: 'extractor' };
  const request = rule.request && asText(locate(span, rule.request));
  const response = rule.response && asText(locate(span, rule.response));
  const system = rule.system_prompt && asText(locate(span, rule.system_prompt));
  if (request !== undefined) out.request = request;
  if (response !== undefined) out.response = response;
  if (system !== undefined) out.system_prompt = system;
  if (rule.contexts) {
    const c = locate(span, rule.contexts);
    if (c !== undefined) out.contexts = (Array.isArray(c) ? c : [c]).map((x) => asText(x) ?? '').filter(Boolean);
  }
  if (rule.turns) {
    const t = turnsOf(locate(span, rule.turns));
    if (t.length) out.turns = t;
  }
  if (rule.tool_call) {
    const name = asText(locate(span, rule.tool_call.name));
    if (name) {
      const args = rule.tool_call.arguments ? asText(locate(span, rule.tool_call.arguments)) : undefined;
      const result = rule.tool_call.result ? asText(locate(span, rule.tool_call.result)) : undefined;
      out.tool_call = { name, arguments: args ?? '{}', result: result ?? null };
      if (out.response === undefined && result !== undefined) {
        out.request ??= `Call ${name} with ${args ?? '{}'}`;
        out.response = result;
      }
    }
  }
  if (out.response === undefined && out.turns?.length) out.response = out.turns[out.turns.length - 1].content;
  return out.response ? (out as Extracted) : null;
}

export function extractSpan(span: SpanRecord, rule?: ExtractorRule): Extraction {
  let base: Extracted | null = null;
  let matched = false;
  for (const read of READERS) {
    const found = read(span);
    if (!found) continue;
    matched = true;
    base = fromFound(found);
    if (base) break;
  }
  const model = span.attributes['gen_ai.response.model'] ?? span.attributes['gen_ai.request.model'] ?? span.attributes['llm.model_name'] ?? span.attributes['ai.model.id'];
  if (rule) {
    const r = applyRule(span, rule, base);
    if (!r) return { ok: false, reason: 'extractor_found_nothing' };
    if (typeof model === 'string') r.model = model;
    return { ok: true, value: r };
  }
  if (!base) return { ok: false, reason: matched ? 'no_response' : 'no_known_format' };
  if (typeof model === 'string') base.model = model;
  return { ok: true, value: base };
}
