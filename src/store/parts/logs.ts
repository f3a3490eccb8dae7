// Store parts for what runs leave behind: execution logs and the result cache.
import type { EvaluatorResult, ExecutionLog } from '../../schemas.ts';
import type { Page, PageQuery } from './page.ts';

export type ExecutionLogRecord = ExecutionLog & { org_id: string };

export interface LogFilter {
  org_id: string;
  /** Only the rows of this batch run. */
  batch_execution_id?: string;
  /** true: only rows of batch runs; false: only runs of their own (issue 26 item 7: the judge page's chart). */
  in_batch?: boolean;
  /** h-proxy: only logs of this type (judge, evaluator, comparison, proxy). */
  type?: string;
  judge_id?: string;
  evaluator_id?: string;
  project_id?: string;
  min_score?: number;
  max_score?: number;
  min_cost?: number;
  max_cost?: number;
  /** Every tag must be present on the log. */
  tags?: string[];
  session_id?: string;
  user_id?: string;
  /** Logs of this OpenTelemetry trace / span (online evaluation, issue 28). */
  trace_id?: string;
  span_id?: string;
  date_from?: string;
  date_to?: string;
}

/** Log fields whose known values can be listed (GET /v1/execution-logs/session-ids/ and /user-ids/). */
export type LogValueField = 'session_id' | 'user_id';
/** Values in bytewise ascending order (PostgreSQL's "C" collation): those after `after`, starting with `starts_with`. */
export interface ValueQuery {
  limit: number;
  after?: string;
  starts_with?: string;
}

export interface LogStore {
  appendExecutionLog(log: ExecutionLogRecord): Promise<void>;
  /**
   * Optional (the JSON store): appendExecutionLog for a log no caller waits on promptly (an evaluation
   * rule's run): stored at once, it starts no fdatasync of its own but rides the file's next commit;
   * resolves once it is on disk. Without it, appendExecutionLog is used.
   */
  appendExecutionLogCarried?(log: ExecutionLogRecord): Promise<void>;
  getExecutionLog(id: string): Promise<ExecutionLogRecord | null>;
  listExecutionLogs(filter: LogFilter, page: PageQuery): Promise<Page<ExecutionLogRecord>>;
  /** Distinct non-null values of a log field among one organization's logs; `more` when a next page may exist. */
  listLogValues(orgId: string, field: LogValueField, query: ValueQuery): Promise<{ values: string[]; more: boolean }>;
}

/** The result cache (engine/result-cache.ts): evaluator results by key, per organization, bounded. */
export interface ResultCacheStore {
  /** The result stored under this organization's key, or null; a hit counts as a use (least recently used goes first). */
  getCachedResult(orgId: string, key: string): Promise<EvaluatorResult | null>;
  /** Stores (or replaces) the result; then at most `maxEntries` entries remain in the store, the least recently used evicted. */
  putCachedResult(orgId: string, key: string, result: EvaluatorResult, maxEntries: number): Promise<void>;
}
