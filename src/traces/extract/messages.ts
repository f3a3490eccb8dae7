// Chat messages in the shapes instrumentations write them (OpenAI's, GenAI's parts, the Vercel AI
// SDK's content parts) -> Tribunal turns.
import type { Turn } from '../../schemas.ts';

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
const ROLES = new Set(['user', 'assistant', 'tool', 'system']);

/** A JSON text or an already-structured value -> the value; null when it is neither. */
export function jsonOf(v: unknown): unknown {
  if (typeof v !== 'string') return v ?? null;
  const t = v.trim();
  if (!t.startsWith('{') && !t.startsWith('[')) return null;
  try {
    return JSON.parse(t);
  } catch {
    return null;
  }
}

/** The text of a message content: a string, OpenAI/Vercel parts ({type:'text', text}), or GenAI parts ({type:'text', content}). */
export function textOf(content: unknown): string {
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) {
    return content
      .map((p) => (typeof p === 'string' ? p : isObj(p) && (p.type === 'text' || p.type === undefined) ? String(p.text ?? p.content ?? '') : ''))
      .filter(Boolean)
      .join('\n');
  }
  if (isObj(content) && typeof content.text === 'string') return content.text;
  return '';
}

function toolCallsOf(m: Obj): Turn['tool_calls'] {
  const calls: NonNullable<Turn['tool_calls']> = [];
  const raw = Array.isArray(m.tool_calls) ? m.tool_calls : Array.isArray(m.toolCalls) ? m.toolCalls : [];
  for (const c of raw) {
    if (!isObj(c)) continue;
    const fn = isObj(c.function) ? c.function : c;
    const name = fn.name ?? c.toolName;
    if (typeof name !== 'string') continue;
    const args = fn.arguments ?? c.args ?? c.input ?? {};
    calls.push({
      ...(typeof c.id === 'string' ? { id: c.id } : typeof c.toolCallId === 'string' ? { id: c.toolCallId } : {}),
      name,
      arguments: typeof args === 'string' ? args : JSON.stringify(args),
    } as never);
  }
  // GenAI parts and Vercel content parts carry tool calls inside the content.
  const parts = Array.isArray(m.parts) ? m.parts : Array.isArray(m.content) ? m.content : [];
  for (const p of parts) {
    if (!isObj(p) || (p.type !== 'tool_call' && p.type !== 'tool-call')) continue;
    const name = p.name ?? p.toolName;
    if (typeof name !== 'string') continue;
    const args = p.arguments ?? p.args ?? p.input ?? {};
    const id = p.id ?? p.toolCallId;
    calls.push({ ...(typeof id === 'string' ? { id } : {}), name, arguments: typeof args === 'string' ? args : JSON.stringify(args) } as never);
  }
  return calls.length ? calls : undefined;
}

/** One message -> a turn; null when it has no known role. */
export function turnOf(m: unknown): Turn | null {
  if (!isObj(m)) return null;
  const role = typeof m.role === 'string' ? m.role.toLowerCase() : '';
  if (!ROLES.has(role)) return null;
  const parts = Array.isArray(m.parts) ? m.parts : undefined;
  let content = parts ? textOf(parts) : textOf(m.content);
  if (role === 'tool' && !content) {
    // GenAI tool_call_response parts and Vercel tool-result parts.
    const src = parts ?? (Array.isArray(m.content) ? m.content : []);
    content = src
      .map((p) => (isObj(p) ? (p.response ?? p.result ?? p.output) : undefined))
      .filter((x) => x !== undefined)
      .map((x) => (typeof x === 'string' ? x : JSON.stringify(x)))
      .join('\n');
  }
  const turn: Turn = { role: role as Turn['role'], content };
  const calls = role === 'assistant' ? toolCallsOf(m) : undefined;
  if (calls) turn.tool_calls = calls;
  if (role === 'tool') {
    const id = m.tool_call_id ?? (parts?.find((p) => isObj(p) && p.id) as Obj | undefined)?.id;
    if (typeof id === 'string') turn.tool_call_id = id;
  }
  if (typeof m.name === 'string') turn.name = m.name;
  return turn;
}

export function turnsOf(list: unknown): Turn[] {
  if (!Array.isArray(list)) return [];
  return list.map(turnOf).filter((t): t is Turn => t !== null);
}
