// Does a span match a rule's filter, and is its trace in the sample.
import type { Span } from '../types.ts';
import type { FilterCondition } from './types.ts';

function fieldValue(span: Span, field: string): unknown {
  switch (field) {
    case 'service.name':
      return span.service_name ?? span.resource_attributes['service.name'];
    case 'span.name':
      return span.name;
    case 'span.kind':
      return span.kind;
    case 'status':
      return span.status.code;
    default:
      return field in span.attributes ? span.attributes[field] : span.resource_attributes[field];
  }
}

const same = (a: unknown, b: unknown) => a === b || String(a) === String(b);

export function conditionHolds(span: Span, c: FilterCondition): boolean {
  const v = fieldValue(span, c.field);
  switch (c.op) {
    case 'exists':
      return v !== undefined && v !== null;
    case 'eq':
      return v !== undefined && same(v, c.value);
    case 'ne':
      return v === undefined || !same(v, c.value);
    case 'in':
      return v !== undefined && Array.isArray(c.value) && c.value.some((x) => same(v, x));
    case 'contains':
      if (Array.isArray(v)) return v.some((x) => same(x, c.value));
      return typeof v === 'string' && typeof c.value === 'string' && v.includes(c.value);
    case 'gt':
      return v !== undefined && Number(v) > Number(c.value);
    case 'lt':
      return v !== undefined && Number(v) < Number(c.value);
  }
}

export const matches = (span: Span, filter: FilterCondition[]) => filter.every((c) => conditionHolds(span, c));

/**
 * The sampling decision, from the trace id alone: its rightmost 56 bits (the random part of a W3C
 * trace id) as a fraction of 2^56, below the rate. Two rules at the same rate pick the same traces,
 * and a rule at 0.2 picks every trace one at 0.1 picks.
 */
export function sampled(traceId: string, rate: number): boolean {
  if (rate >= 1) return true;
  if (rate <= 0) return false;
  const r = Number(BigInt(`0x${traceId.slice(-14)}`)) / 2 ** 56;
  return r < rate;
}

/** The session a span belongs to (session.id, OpenInference and others; gen_ai.conversation.id, GenAI). */
export function sessionOf(span: Span): string | null {
  for (const k of ['session.id', 'gen_ai.conversation.id', 'ai.telemetry.metadata.sessionId']) {
    const v = span.attributes[k];
    if (typeof v === 'string' && v) return v;
  }
  return null;
}
