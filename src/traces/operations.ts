// REST-only operations on received traces (SPEC section 14): GET /v1/traces/ and
// GET /v1/traces/{trace_id}/. Never registered with MCP. An organization sees only its own spans.
import { z } from 'zod';
import { pageQuery } from '../domain/pagination.ts';
import { TribunalError, validationError } from '../errors.ts';
import { READ } from '../operations/annotations.ts';
import { PageParams, page } from '../schemas.ts';
import { defineTool } from '../tool.ts';
import { extractSpan } from './extract/index.ts';
import { traceStoreOf } from './store.ts';
import { Span, type SpanRecord } from './types.ts';

const TraceSummary = z.object({
  trace_id: z.string(),
  root_span_name: z.string().nullable().describe('name of the span without a parent; null when it was not received'),
  service_name: z.string().nullable(),
  start_time: z.string(),
  end_time: z.string(),
  span_count: z.number().int(),
  error_count: z.number().int().describe('spans with status error'),
  evaluation_count: z.number().int().describe('evaluation results linked to the trace'),
});

const Evaluation = z.object({
  execution_log_id: z.string(),
  rule_id: z.string().nullable(),
  name: z.string().describe('the judge or evaluator name'),
  score: z.number().nullable(),
  created_at: z.string(),
});

const TraceSpan = Span.extend({
  depth: z.number().int().describe('0 for a root (or a span whose parent was not received), parent depth + 1 otherwise'),
  extracted: z
    .record(z.string(), z.unknown())
    .nullable()
    .describe('what an evaluation would judge from this span (request, response, contexts, turns, tool call), null when nothing was found'),
  unreadable: z.string().nullable().describe('why nothing was extracted (no_known_format, no_response), as a rule counts it (skipped.unreadable_<reason>); null when extracted'),
  evaluations: z.array(Evaluation),
});

const traceId = z
  .string()
  .regex(/^[0-9a-fA-F]{32}$/, 'trace_id is 32 hex digits')
  .describe('32 hex digits');

export const listTracesOperation = defineTool({
  name: 'list_traces',
  title: 'List received traces',
  description: 'Traces received on /otel/v1/traces, newest first; a trace is listed when any of its spans matches every filter.',
  input: z.object({
    service: z.string().optional().describe('resource attribute service.name'),
    span_name: z.string().optional(),
    attribute: z.string().optional().describe('`key` (present) or `key=value` (equal, as text) on a span attribute'),
    date_from: z.string().datetime({ offset: true }).optional().describe('spans started at or after this instant'),
    date_to: z.string().datetime({ offset: true }).optional(),
    has_evaluation: z.boolean().optional().describe('only traces with (true) or without (false) evaluation results'),
    ...PageParams,
  }),
  output: page(TraceSummary),
  annotations: READ,
  handler: async (input, ctx) => {
    const q = pageQuery(input, ctx.config.limits.pageSize);
    const ts = await traceStoreOf(ctx.store);
    let attribute: { key: string; value?: string } | undefined;
    if (input.attribute !== undefined) {
      const eq = input.attribute.indexOf('=');
      attribute = eq < 0 ? { key: input.attribute } : { key: input.attribute.slice(0, eq), value: input.attribute.slice(eq + 1) };
      if (!attribute.key) throw validationError('attribute needs a key: `key` or `key=value`.', [{ field: 'attribute', message: 'empty key' }]);
    }
    const iso = (s?: string) => (s === undefined ? undefined : new Date(s).toISOString());
    const res = await ts.listTraces(
      {
        org_id: ctx.caller.org.id,
        service_name: input.service,
        span_name: input.span_name,
        attribute,
        date_from: iso(input.date_from),
        date_to: iso(input.date_to),
        has_evaluation: input.has_evaluation,
      },
      { limit: q.limit, ...(q.after ? { after: { start_time: q.after.created_at, trace_id: q.after.id } } : {}) },
    );
    return {
      results: res.items,
      next_cursor: res.last ? Buffer.from(JSON.stringify([res.last.start_time, res.last.trace_id])).toString('base64url') : null,
    };
  },
});

/** Spans in tree order (each parent before its children, siblings by start), with depths. */
export function treeOrder(spans: SpanRecord[]): Array<{ span: SpanRecord; depth: number }> {
  const ids = new Set(spans.map((s) => s.span_id));
  const children = new Map<string, SpanRecord[]>();
  const roots: SpanRecord[] = [];
  for (const s of spans) {
    if (s.parent_span_id && ids.has(s.parent_span_id)) children.set(s.parent_span_id, [...(children.get(s.parent_span_id) ?? []), s]);
    else roots.push(s);
  }
  const out: Array<{ span: SpanRecord; depth: number }> = [];
  const walk = (s: SpanRecord, depth: number) => {
    out.push({ span: s, depth });
    for (const c of children.get(s.span_id) ?? []) walk(c, depth + 1);
  };
  for (const r of roots) walk(r, 0);
  return out;
}

export const getTraceOperation = defineTool({
  name: 'get_trace',
  title: 'One trace: its span tree with extracted inputs and evaluations',
  description: 'The spans of one trace in tree order, each with what an evaluation would judge and the evaluation results linked to it.',
  input: z.object({ trace_id: traceId }),
  output: z.object({ trace_id: z.string(), spans: z.array(TraceSpan) }),
  annotations: READ,
  handler: async ({ trace_id }, ctx) => {
    const ts = await traceStoreOf(ctx.store);
    const id = trace_id.toLowerCase();
    const spans = await ts.getTrace(ctx.caller.org.id, id);
    if (!spans.length) throw new TribunalError('not_found', 404, `No trace ${id} in your organization (traces are kept for TRIBUNAL_TRACE_RETENTION).`);
    const evaluations = await ts.listEvaluations(ctx.caller.org.id, id);
    return {
      trace_id: id,
      spans: treeOrder(spans).map(({ span, depth }) => {
        const { org_id: _org, ...wire } = span;
        const ex = extractSpan(span);
        return {
          ...wire,
          depth,
          extracted: ex.ok ? (ex.value as unknown as Record<string, unknown>) : null,
          unreadable: ex.ok ? null : ex.reason,
          evaluations: evaluations
            .filter((e) => e.span_id === span.span_id)
            .map((e) => ({ execution_log_id: e.execution_log_id, rule_id: e.rule_id, name: e.name, score: e.score, created_at: e.created_at })),
        };
      }),
    };
  },
});
