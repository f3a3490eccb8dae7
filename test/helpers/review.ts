// A review queue record for the store-level review tests (a judge-less queue of one evaluator).
import { reviewId } from '../../src/review/ids.ts';
import type { ReviewQueueRecord } from '../../src/review/types.ts';

export function reviewQueueRecord(name: string): ReviewQueueRecord {
  const now = new Date().toISOString();
  return {
    id: reviewId('rvq'),
    org_id: 'org_x',
    name,
    judge_id: null,
    evaluator_ids: ['evl_x'],
    annotators_per_item: 2,
    lease_seconds: 600,
    sources: {},
    show_justification: false,
    created_at: now,
    updated_at: now,
  };
}
