// The batch run part of the JSON store, as the Store interface has it, over BatchFiles (json-batches.ts).
import type { BatchFiles } from './json-batches.ts';
import type { BatchStore } from './parts/batches.ts';
import type { RowSpend } from './budget-types.ts';

/**
 * The batch run part of the JSON store, over its files (made and loaded by init). A row's spend is
 * counted by `countSpend` (the budgets part) once the row is recorded.
 */
export function jsonBatches(files: () => BatchFiles, countSpend?: (spend: RowSpend) => Promise<void>): BatchStore {
  return {
    createBatchExecution: (b, items) => files().create(b, items),
    getBatchExecution: async (id) => files().get(id),
    getBatchStatus: async (id) => files().status(id),
    peekBatchStatus: (id) => files().status(id),
    peekBatchCounts: (id) => files().counts(id),
    listBatchExecutions: async (filter, page) => files().list(filter, page),
    listUnfinishedBatchExecutions: async () => files().unfinished(),
    updateBatchExecution: (id, patch) => files().update(id, patch),
    async recordBatchRow(batchId, row, spend) {
      const recorded = await files().record(batchId, row);
      if (recorded && spend && countSpend) await countSpend(spend);
      return recorded;
    },
    listBatchRows: (batchId, query) => files().listRows(batchId, query),
    listBatchRowScores: (batchId, query) => files().listRowScores(batchId, query),
    getBatchItems: (batchId, from, count) => files().items(batchId, from, count),
  };
}
