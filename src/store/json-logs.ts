// The JSON store's execution logs: logs.jsonl, append-only, with a compact index in memory
// (log-file.ts, log-index.ts). Appends are committed in groups: concurrent appends share one flush.
import type { LogFile } from './log-file.ts';
import type { LogStore } from './parts/logs.ts';
import { StoreConflictError } from './types.ts';

/** What the log part needs of the store: the open file (after init), whether it closed, the group commit. */
export interface LogHost {
  readonly logs: LogFile;
  readonly closed: boolean;
  commitLogs(): Promise<void>;
  /** commitLogs() for a log no caller waits on promptly: joins the next commit, at most CARRY_MS later. */
  carryLogs(): Promise<void>;
  /** commitLogs() for a batch run's log: while such logs come together, joins the next commit, at most BATCH_HOLD_MS later (issue 33). */
  holdLogs(): Promise<void>;
}

export function jsonLogs(host: LogHost): LogStore {
  return {
    async appendExecutionLog(log) {
      if (host.closed) throw new Error('the JSON store is closed');
      if (host.logs.has(log.id)) throw new StoreConflictError({ kind: 'id_taken', resource: 'execution_log', id: log.id });
      // No copy: add() keeps the record only as its JSON line and the index's own values, never the object.
      host.logs.add(log);
      // A batch run's log waits a little for others to share its fdatasync; any other is committed at once (taking those along).
      await (log.batch_execution_id ? host.holdLogs() : host.commitLogs());
    },
    // Listed and read at once; on disk with the next commit of logs.jsonl, within CARRY_MS (issue 33).
    async appendExecutionLogCarried(log) {
      if (host.closed) throw new Error('the JSON store is closed');
      if (host.logs.has(log.id)) throw new StoreConflictError({ kind: 'id_taken', resource: 'execution_log', id: log.id });
      host.logs.add(log);
      await host.carryLogs();
    },
    getExecutionLog: async (id) => host.logs.get(id),
    listExecutionLogs: async (filter, page) => host.logs.list(filter, page),
    listLogValues: async (orgId, field, query) => host.logs.values(orgId, field, query),
  };
}
