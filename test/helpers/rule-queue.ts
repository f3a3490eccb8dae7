// Records for the evaluation rules' queue tests (test/traces-store.test.ts, test/rules-journal.test.ts):
// a span rule with no budget and a span unit of it, queued.
import { DEFAULTS } from '../../src/traces/rules/domain.ts';
import type { EvalJob, RuleRecord } from '../../src/traces/rules/types.ts';

const hex = (n: number, len: number) => n.toString(16).padStart(len, '0');

/** A rule of `org` with a new rule's defaults (span scope, every span, no delay, no budget), 2 units waiting at most; `over` changes any field. */
export function ruleRecord(id: string, org: string, over: Partial<RuleRecord> = {}): RuleRecord {
  const now = new Date().toISOString();
  return {
    id,
    org_id: org,
    key_id: `key_${org}`,
    name: id,
    judge_id: 'jdg_x',
    evaluator_id: null,
    ...DEFAULTS,
    queue_limit: 2,
    created_at: now,
    updated_at: now,
    ...over,
  };
}

/** Unit `n` of a rule (trace n, span n), waiting until `runAfter`, created at `created`. */
export function queuedUnit(org: string, ruleId: string, n: number, runAfter: string, created = runAfter): EvalJob {
  return {
    id: `${ruleId}:${n}`,
    org_id: org,
    rule_id: ruleId,
    scope: 'span',
    trace_id: hex(n, 32),
    span_id: hex(n, 16),
    session_id: null,
    state: 'queued',
    created_at: created,
    run_after: runAfter,
    lease_until: null,
    attempts: 0,
  };
}
