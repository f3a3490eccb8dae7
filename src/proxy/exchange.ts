// A Chat Completions exchange as a conversation to judge (SPEC sections 10 and 13): the request's
// messages are the turns (system and developer messages the system prompt), the assistant's answer
// (text and tool calls) the judged turn. Streamed answers are put together chunk by chunk.
import type { ModelAttachment } from '../engine/providers/model.ts';
import type { ToolCall, Turn } from '../schemas.ts';
import { messagesAttachments } from './attachments.ts';

type Json = Record<string, any>;

/** Text of an OpenAI content value: a string, or parts (text kept, other parts named). */
export function contentText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content
    .map((part: Json) => {
      if (typeof part === 'string') return part;
      if (typeof part?.text === 'string') return part.text;
      if (typeof part?.refusal === 'string') return part.refusal;
      return `[${typeof part?.type === 'string' ? part.type : 'part'}]`;
    })
    .join('\n');
}

function toolCallsOf(calls: unknown): ToolCall[] | undefined {
  if (!Array.isArray(calls) || !calls.length) return undefined;
  return calls.map((c: Json) => ({
    ...(typeof c?.id === 'string' ? { id: c.id } : {}),
    name: typeof c?.function?.name === 'string' && c.function.name ? c.function.name : typeof c?.type === 'string' ? c.type : 'tool',
    arguments: typeof c?.function?.arguments === 'string' ? c.function.arguments : (c?.function?.arguments ?? ''),
  }));
}

export interface Conversation {
  turns: Turn[];
  system_prompt?: string;
  /** Images and PDFs sent inline (data URLs): the judge model sees them too (attachments.ts). */
  attached?: ModelAttachment[];
}

/** The request's messages as turns; malformed entries are kept as text rather than dropped. */
export function messagesToConversation(messages: unknown): Conversation {
  const turns: Turn[] = [];
  const system: string[] = [];
  for (const m of Array.isArray(messages) ? (messages as Json[]) : []) {
    const role = m?.role;
    const text = contentText(m?.content);
    if (role === 'system' || role === 'developer') system.push(text);
    else if (role === 'assistant') {
      const tool_calls = toolCallsOf(m.tool_calls);
      turns.push({ role: 'assistant', content: text, ...(tool_calls ? { tool_calls } : {}) });
    } else if (role === 'tool' || role === 'function') {
      turns.push({
        role: 'tool',
        content: text,
        ...(typeof m.tool_call_id === 'string' ? { tool_call_id: m.tool_call_id } : {}),
        ...(typeof m.name === 'string' ? { name: m.name } : {}),
      });
    } else turns.push({ role: 'user', content: text, ...(typeof m?.name === 'string' ? { name: m.name } : {}) });
  }
  const attached = messagesAttachments(messages);
  return { turns, ...(system.length ? { system_prompt: system.join('\n\n') } : {}), ...(attached.length ? { attached } : {}) };
}

/** What the upstream answered, whichever way it came. */
export interface Answer {
  content: string;
  tool_calls?: ToolCall[];
  finish_reason: string | null;
  model: string | null;
  input_tokens: number | null;
  output_tokens: number | null;
  cached_tokens: number;
}

export function answerTurn(answer: Answer): Turn {
  return { role: 'assistant', content: answer.content, ...(answer.tool_calls?.length ? { tool_calls: answer.tool_calls } : {}) };
}

function usageOf(usage: Json | undefined): Pick<Answer, 'input_tokens' | 'output_tokens' | 'cached_tokens'> {
  return {
    input_tokens: typeof usage?.prompt_tokens === 'number' ? usage.prompt_tokens : null,
    output_tokens: typeof usage?.completion_tokens === 'number' ? usage.completion_tokens : null,
    cached_tokens: typeof usage?.prompt_tokens_details?.cached_tokens === 'number' ? usage.prompt_tokens_details.cached_tokens : 0,
  };
}

/** The first choice of a non-streamed chat.completion. */
export function completionAnswer(completion: Json): Answer {
  const choice = Array.isArray(completion.choices) ? completion.choices[0] : undefined;
  const message = choice?.message ?? {};
  const tool_calls = toolCallsOf(message.tool_calls);
  return {
    content: contentText(message.content ?? message.refusal ?? ''),
    ...(tool_calls ? { tool_calls } : {}),
    finish_reason: choice?.finish_reason ?? null,
    model: typeof completion.model === 'string' ? completion.model : null,
    ...usageOf(completion.usage),
  };
}

/** Puts a streamed answer together from its chat.completion.chunk events (choice 0). */
export class ChunkAccumulator {
  private content = '';
  private readonly calls: Array<{ id?: string; name: string; arguments: string }> = [];
  private finish: string | null = null;
  private model: string | null = null;
  private usage: Json | undefined;
  /** The first chunk's id, created and model, for the chunks the proxy writes itself. */
  head: { id: string; created: number; model: string } | null = null;

  add(chunk: Json): void {
    if (!this.head && typeof chunk.id === 'string') this.head = { id: chunk.id, created: chunk.created ?? Math.floor(Date.now() / 1000), model: chunk.model ?? '' };
    if (typeof chunk.model === 'string') this.model = chunk.model;
    if (chunk.usage) this.usage = chunk.usage;
    const choice = Array.isArray(chunk.choices) ? chunk.choices.find((c: Json) => (c?.index ?? 0) === 0) : undefined;
    if (!choice) return;
    const delta = choice.delta ?? {};
    if (typeof delta.content === 'string') this.content += delta.content;
    else if (typeof delta.refusal === 'string') this.content += delta.refusal;
    for (const d of Array.isArray(delta.tool_calls) ? delta.tool_calls : []) {
      const i = typeof d.index === 'number' ? d.index : this.calls.length;
      const call = (this.calls[i] ??= { name: '', arguments: '' });
      if (typeof d.id === 'string') call.id = d.id;
      if (typeof d.function?.name === 'string') call.name += d.function.name;
      if (typeof d.function?.arguments === 'string') call.arguments += d.function.arguments;
    }
    if (choice.finish_reason) this.finish = choice.finish_reason;
  }

  answer(): Answer {
    const tool_calls = this.calls.filter(Boolean).map((c) => ({ ...(c.id ? { id: c.id } : {}), name: c.name || 'tool', arguments: c.arguments }));
    return { content: this.content, ...(tool_calls.length ? { tool_calls } : {}), finish_reason: this.finish, model: this.model, ...usageOf(this.usage) };
  }
}
