// Evaluation rules (SPEC section 14): which received spans a judge or evaluator scores, how many,
// and the durable work queue of sampled spans. One store interface, a JSON and a PostgreSQL
// implementation (src/store/json-eval-rules.ts, src/store/postgres/eval-rules.ts).
import { z } from 'zod';
import { ExtractorRule } from '../extract/rules.ts';

export const FilterCondition = z
  .object({
    field: z.string().min(1).max(500).describe('service.name, span.name, span.kind, status, or any span attribute key (e.g. gen_ai.operation.name)'),
    op: z.enum(['eq', 'ne', 'in', 'contains', 'exists', 'gt', 'lt']),
    value: z
      .union([z.string(), z.number(), z.boolean(), z.array(z.union([z.string(), z.number(), z.boolean()]))])
      .optional()
      .describe('not needed for exists; a list for in'),
  })
  .strict();
export type FilterCondition = z.infer<typeof FilterCondition>;

export const Budget = z
  .object({
    max_runs_per_day: z.number().int().min(0).optional().describe('runs queued per UTC day at most; spans beyond are skipped (budget_exhausted)'),
    max_cost_usd_per_day: z.number().min(0).optional().describe('judging cost per UTC day at most; once reached, spans are skipped (budget_exhausted)'),
  })
  .strict();

export const RuleFields = {
  name: z.string().trim().min(1).max(200),
  judge_id: z.string().min(1).nullable().optional().describe('the judge to run (give this or evaluator_id)'),
  evaluator_id: z.string().min(1).nullable().optional().describe('the evaluator to run (give this or judge_id)'),
  scope: z
    .enum(['span', 'trace', 'session'])
    .describe('span: each matching span; trace: the matching spans of a trace as one conversation; session: the spans sharing session.id / gen_ai.conversation.id'),
  filter: z.array(FilterCondition).max(50).describe('all conditions must hold'),
  sampling_rate: z.number().min(0).max(1).describe('share of traces judged, decided by the trace id alone (two rules at 0.1 pick the same traces)'),
  delay_seconds: z.number().int().min(0).max(86_400).describe('wait this long after the last matching span (trace and session scope: the quiet period)'),
  budget: Budget.nullable().optional(),
  active: z.boolean(),
  extractor: ExtractorRule.nullable().optional(),
  queue_limit: z.number().int().min(1).max(1_000_000).describe('sampled units waiting at most; beyond, shed by shed_policy (counted as skipped)'),
  shed_policy: z.enum(['drop_oldest', 'drop_newest']).describe('which waiting unit gives way when the queue is full'),
};

export const RuleStatus = z.object({
  matched: z.number().int(),
  sampled: z.number().int(),
  queued: z.number().int(),
  running: z.number().int(),
  done: z.number().int(),
  failed: z.number().int(),
  skipped: z.record(z.string(), z.number().int()).describe('by reason: not_sampled, budget_exhausted, shed_oldest, shed_newest, unreadable_<reason>, target_deleted'),
  oldest_queued_age_s: z.number().nullable().describe('age of the oldest unit waiting (its delay included); null when none waits'),
  backlog: z.boolean().describe('true when units wait longer than delay_seconds + 60 s: the queue is not keeping up'),
});
export type RuleStatus = z.infer<typeof RuleStatus>;

export const EvaluationRule = z.object({
  id: z.string(),
  ...RuleFields,
  judge_id: z.string().nullable(),
  evaluator_id: z.string().nullable(),
  budget: Budget.nullable(),
  extractor: ExtractorRule.nullable(),
  created_at: z.string(),
  updated_at: z.string(),
});
export type EvaluationRule = z.infer<typeof EvaluationRule>;
export type RuleRecord = EvaluationRule & { org_id: string; key_id: string };

/** One unit of work: a span, a trace or a session of a rule, judged once. */
export interface EvalJob {
  /** rule id + the unit (span: trace:span; trace: trace; session: session id). */
  id: string;
  org_id: string;
  rule_id: string;
  scope: 'span' | 'trace' | 'session';
  trace_id: string;
  span_id: string | null;
  session_id: string | null;
  state: 'queued' | 'running';
  created_at: string;
  /** Not before this instant (the rule's delay; pushed back while a trace or session is not quiet). */
  run_after: string;
  /** While running: another worker may take it after this instant (its worker died). */
  lease_until: string | null;
  attempts: number;
}

/**
 * Counters added in the same write as the queue change (so a crash cannot queue a span uncounted):
 * `always` in every case, `queued` when the unit joins the queue; a unit already waiting adds
 * skipped:merged, one shed adds skipped:shed_newest.
 */
export interface EnqueueCounts {
  always: Record<string, number>;
  queued: Record<string, number>;
}

export type EnqueueOutcome = 'queued' | 'waiting' | 'shed_newest' | 'shed_oldest';

export interface RuleStore {
  createRule(r: RuleRecord): Promise<void>;
  getRule(id: string): Promise<RuleRecord | null>;
  listRules(orgId: string): Promise<RuleRecord[]>;
  /** Every rule of every organization (/metrics). */
  listAllRules(): Promise<RuleRecord[]>;
  updateRule(r: RuleRecord): Promise<boolean>;
  deleteRule(id: string): Promise<boolean>;
  /** Adds `n` to named counters of a rule (matched, sampled, done, failed, skipped:<reason>, day:<date>:runs ...). */
  count(ruleId: string, counts: Record<string, number>): Promise<void>;
  counters(ruleId: string): Promise<Record<string, number>>;
  /**
   * Queues a unit unless it waits already (then its run_after moves to the later of the two: a trace
   * not yet quiet). When the rule has `limit` units waiting, sheds by `policy`. Answers what happened.
   */
  enqueue(job: EvalJob, limit: number, policy: 'drop_oldest' | 'drop_newest', counts?: EnqueueCounts): Promise<EnqueueOutcome>;
  /**
   * `enqueue` for several units of one rule in one store write (one transaction on PostgreSQL), in
   * order, with exactly the outcomes and counts the same calls one by one would give.
   */
  enqueueMany(ruleId: string, items: Array<{ job: EvalJob; counts: EnqueueCounts }>, limit: number, policy: 'drop_oldest' | 'drop_newest'): Promise<EnqueueOutcome[]>;
  /**
   * Whether a claimed unit may have been judged before (its result linked, its finish not kept): then
   * the worker looks for the linked result first. PostgreSQL keeps every claim and finish, so only a
   * unit taken again (attempts > 1) may; the JSON store also says so of the units it read at start.
   */
  mayHaveRun(job: EvalJob): boolean;
  /** Takes up to `n` due units (queued and due, or running with an expired lease), leased until `leaseUntil`. */
  claim(n: number, now: string, leaseUntil: string): Promise<EvalJob[]>;
  /** Removes the unit and counts its outcome, at once; false when it was not there (another worker finished it). */
  finish(jobId: string, counts: Record<string, number>): Promise<boolean>;
  /**
   * Puts a running unit back in the queue until `runAfter`, its attempt not counted (its spans' content
   * may still be on its way, e.g. GenAI log records); false when it was not running here any more.
   */
  postpone(jobId: string, runAfter: string): Promise<boolean>;
  /**
   * The rule's counters and its queue's state read together, as of one moment: a unit that finishes
   * meanwhile is either still queued or running, or counted, never neither (the rule's status).
   */
  progress(ruleId: string): Promise<{ counters: Record<string, number>; queue: QueueStats }>;
}

export type QueueStats = { queued: number; running: number; oldest_queued_at: string | null };
