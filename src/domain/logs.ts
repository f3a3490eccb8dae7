// Execution logs: read and filter. Logs belong to the organization that ran them, always private.
import { z } from 'zod';
import { notFound, validationError } from '../errors.ts';
import { ExecutionLog, PageParams } from '../schemas.ts';
import type { ExecutionLogRecord, LogFilter, LogValueField } from '../store/types.ts';
import type { RequestContext } from '../context.ts';
import { pageQuery, toPage } from './pagination.ts';
import { checkProjectFilter } from './projects.ts';

type Ctx = Pick<RequestContext, 'store' | 'caller' | 'config'>;

export const logToWire = ({ org_id: _org, ...wire }: ExecutionLogRecord): ExecutionLog => wire;

export async function getLog(ctx: Ctx, id: string): Promise<ExecutionLog> {
  const log = await ctx.store.getExecutionLog(id);
  if (!log || log.org_id !== ctx.caller.org.id) throw notFound('Execution log', id);
  return logToWire(log);
}

/** The log filters, as list_execution_logs takes them (its input schema is this one). */
export const LogQuery = z.object({
  judge_id: z.string().optional().describe('only runs of this judge (its id or exact name)'),
  evaluator_id: z.string().optional().describe('only runs in which this evaluator scored, alone or in a judge (its id or exact name)'),
  project_id: z.string().optional().describe('only runs filed under this project'),
  min_score: z.number().min(0).max(1).optional().describe('only runs whose mean score is at least this'),
  max_score: z.number().min(0).max(1).optional().describe('only runs whose mean score is at most this'),
  min_cost: z.number().min(0).optional().describe('only runs that cost at least this many USD'),
  max_cost: z.number().min(0).optional().describe('only runs that cost at most this many USD'),
  tags: z.array(z.string()).optional().describe('only runs carrying every one of these tags'),
  session_id: z.string().optional().describe('only runs of this session (the session_id given at run time)'),
  batch_execution_id: z.string().optional().describe('only the rows of this batch run'),
  in_batch: z.boolean().optional().describe('true: only rows of batch runs; false: only runs made on their own (REST, MCP, proxy, online rules)'),
  user_id: z.string().optional().describe('only runs for this end user (the user_id given at run time)'),
  trace_id: z.string().optional().describe('only runs that judged a span of this OpenTelemetry trace (32 hex digits)'),
  span_id: z.string().optional().describe('only runs that judged this span (16 hex digits)'),
  type: ExecutionLog.shape.type.optional().describe('only logs of this type: judge, evaluator, comparison, or proxy (exchanges judged by the judge proxy)'), // h-proxy
  date_from: z.string().optional().describe('only runs at or after this date (2026-11-21) or ISO-8601 date-time'),
  date_to: z.string().optional().describe('only runs at or before this date (inclusive, whole day) or ISO-8601 date-time'),
  ...PageParams,
});
export type LogQuery = z.infer<typeof LogQuery>;

/** Accepts a date (2026-11-21, the whole day) or a date-time; answers an ISO-8601 UTC instant. */
export function instant(field: string, value: string, endOfDay: boolean): string {
  const dateOnly = /^\d{4}-\d{2}-\d{2}$/.test(value);
  const parsed = new Date(dateOnly ? `${value}T00:00:00.000Z` : value);
  const year = parsed.getUTCFullYear();
  if (Number.isNaN(parsed.getTime()) || year < 1 || year > 9999) {
    throw validationError(`${field} must be a date (2026-11-21) or an ISO-8601 date-time.`, [{ field, message: 'not a date' }]);
  }
  if (dateOnly && endOfDay) parsed.setUTCDate(parsed.getUTCDate() + 1), parsed.setUTCMilliseconds(-1);
  return parsed.toISOString();
}

export async function listLogs(ctx: Ctx, q: LogQuery) {
  const range = (lo: number | undefined, hi: number | undefined, name: string) => {
    if (lo !== undefined && hi !== undefined && lo > hi) {
      throw validationError(`min_${name} (${lo}) is greater than max_${name} (${hi}).`, [{ field: `min_${name}`, message: `greater than max_${name}` }]);
    }
  };
  range(q.min_score, q.max_score, 'score');
  range(q.min_cost, q.max_cost, 'cost');
  await checkProjectFilter(ctx, q.project_id);
  const filter: LogFilter = {
    org_id: ctx.caller.org.id,
    judge_id: q.judge_id,
    evaluator_id: q.evaluator_id,
    project_id: q.project_id,
    min_score: q.min_score,
    max_score: q.max_score,
    min_cost: q.min_cost,
    max_cost: q.max_cost,
    tags: q.tags?.map((t) => t.trim()).filter(Boolean),
    session_id: q.session_id,
    batch_execution_id: q.batch_execution_id,
    in_batch: q.in_batch,
    user_id: q.user_id,
    // Ids are stored lowercase (OTLP's hex form); an id pasted in capitals finds them too.
    trace_id: q.trace_id?.toLowerCase(),
    span_id: q.span_id?.toLowerCase(),
    type: q.type,
    date_from: q.date_from ? instant('date_from', q.date_from, false) : undefined,
    date_to: q.date_to ? instant('date_to', q.date_to, true) : undefined,
  };
  if (filter.date_from && filter.date_to && filter.date_from > filter.date_to) {
    throw validationError('date_from is after date_to.', [{ field: 'date_from', message: 'after date_to' }]);
  }
  const page = await ctx.store.listExecutionLogs(filter, pageQuery(q, ctx.config.limits.pageSize));
  return toPage(page, logToWire);
}

/** The known values of a log field (session ids, user ids), by prefix, a page at a time. */
export const LogValuesQuery = z.object({
  starts_with: z.string().max(200).optional().describe('only values that start with this text (case-sensitive)'),
  ...PageParams,
});
export type LogValuesQuery = z.infer<typeof LogValuesQuery>;

const badValueCursor = () =>
  validationError('cursor is not a cursor this server issued: pass `next_cursor` from the previous page unchanged.', [{ field: 'cursor', message: 'invalid cursor' }]);

/** Values come in bytewise order; the cursor is the last value of the page, base64url. */
export async function listLogValues(ctx: Ctx, field: LogValueField, q: LogValuesQuery): Promise<{ results: string[]; next_cursor: string | null }> {
  const { limit } = pageQuery({ limit: q.limit }, ctx.config.limits.pageSize);
  let after: string | undefined;
  if (q.cursor) {
    const decoded = Buffer.from(q.cursor, 'base64url').toString('utf8');
    if (!decoded.startsWith('v:') || decoded.length > 202) throw badValueCursor();
    after = decoded.slice(2);
  }
  const { values, more } = await ctx.store.listLogValues(ctx.caller.org.id, field, { limit, after, starts_with: q.starts_with || undefined });
  const last = values[values.length - 1];
  return { results: values, next_cursor: more && last !== undefined ? Buffer.from(`v:${last}`).toString('base64url') : null };
}
