// Execution logs: read and filter. Logs belong to the organization that ran them, always private.
import { notFound, validationError } from '../errors.ts';
import type { ExecutionLog } from '../schemas.ts';
import type { ExecutionLogRecord, LogFilter } from '../store/types.ts';
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

export interface LogQuery {
  judge_id?: string;
  evaluator_id?: string;
  project_id?: string;
  min_score?: number;
  max_score?: number;
  min_cost?: number;
  max_cost?: number;
  tags?: string[] | string;
  date_from?: string;
  date_to?: string;
  limit?: number;
  cursor?: string;
}

/** Accepts a date (2026-11-21, the whole day) or a date-time; answers an ISO-8601 UTC instant. */
function instant(field: string, value: string, endOfDay: boolean): string {
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
  const tags = typeof q.tags === 'string' ? q.tags.split(',') : q.tags;
  const filter: LogFilter = {
    org_id: ctx.caller.org.id,
    judge_id: q.judge_id,
    evaluator_id: q.evaluator_id,
    project_id: q.project_id,
    min_score: q.min_score,
    max_score: q.max_score,
    min_cost: q.min_cost,
    max_cost: q.max_cost,
    tags: tags?.map((t) => t.trim()).filter(Boolean),
    date_from: q.date_from ? instant('date_from', q.date_from, false) : undefined,
    date_to: q.date_to ? instant('date_to', q.date_to, true) : undefined,
  };
  if (filter.date_from && filter.date_to && filter.date_from > filter.date_to) {
    throw validationError('date_from is after date_to.', [{ field: 'date_from', message: 'after date_to' }]);
  }
  const page = await ctx.store.listExecutionLogs(filter, pageQuery(q, ctx.config.limits.pageSize));
  return toPage(page, logToWire);
}
