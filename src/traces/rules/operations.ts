// REST-only operations on evaluation rules (SPEC section 14): /v1/evaluation-rules/. Never
// registered with MCP.
import { z } from 'zod';
import { READ, WRITE } from '../../operations/annotations.ts';
import { defineTool } from '../../tool.ts';
import { backfillRule, createRule, deleteRule, getOwnRule, ruleToWire, testRule, updateRule } from './domain.ts';
import { EvaluationRule, RuleFields, RuleStatus } from './types.ts';

const RuleOut = EvaluationRule.extend({ status: RuleStatus });
const ruleId = z.string().min(1).max(200).describe('id of the evaluation rule');
const optionalFields = {
  judge_id: RuleFields.judge_id,
  evaluator_id: RuleFields.evaluator_id,
  scope: RuleFields.scope.optional().describe('default span'),
  filter: RuleFields.filter.optional().describe('default: every span'),
  sampling_rate: RuleFields.sampling_rate.optional().describe('default 1'),
  delay_seconds: RuleFields.delay_seconds.optional().describe('default 0'),
  budget: RuleFields.budget,
  active: RuleFields.active.optional().describe('default true'),
  extractor: RuleFields.extractor,
  queue_limit: RuleFields.queue_limit.optional().describe('default 10000'),
  shed_policy: RuleFields.shed_policy.optional().describe('default drop_oldest'),
};

export const listEvaluationRulesOperation = defineTool({
  name: 'list_evaluation_rules',
  title: 'List evaluation rules',
  description: "Your organization's evaluation rules, newest first, each with its live status.",
  input: z.object({}),
  output: z.object({ results: z.array(RuleOut), next_cursor: z.null() }),
  annotations: READ,
  handler: async (_input, ctx) => {
    const { ruleStoreOf } = await import('./store.ts');
    const rules = await (await ruleStoreOf(ctx.store)).listRules(ctx.caller.org.id);
    return { results: await Promise.all(rules.map((r) => ruleToWire(ctx, r))), next_cursor: null };
  },
});

export const createEvaluationRuleOperation = defineTool({
  name: 'create_evaluation_rule',
  title: 'Create an evaluation rule',
  description: 'Judge received spans online: which spans (filter), how many (sampling_rate, budget), with which judge or evaluator.',
  input: z.object({ name: RuleFields.name, ...optionalFields }),
  output: RuleOut,
  annotations: WRITE,
  handler: async (input, ctx) => ruleToWire(ctx, await createRule(ctx, input as never)),
});

export const getEvaluationRuleOperation = defineTool({
  name: 'get_evaluation_rule',
  title: 'One evaluation rule with its status',
  description: 'An evaluation rule and its status: matched, sampled, queued, running, done, failed, skipped by reason, oldest_queued_age_s.',
  input: z.object({ rule_id: ruleId }),
  output: RuleOut,
  annotations: READ,
  handler: async ({ rule_id }, ctx) => ruleToWire(ctx, await getOwnRule(ctx, rule_id)),
});

export const updateEvaluationRuleOperation = defineTool({
  name: 'update_evaluation_rule',
  title: 'Edit an evaluation rule',
  description: 'Change any field of a rule; its counters go on from where they were.',
  input: z.object({ rule_id: ruleId, name: RuleFields.name.optional(), ...optionalFields }),
  output: RuleOut,
  annotations: WRITE,
  handler: async ({ rule_id, ...patch }, ctx) => ruleToWire(ctx, await updateRule(ctx, rule_id, patch as never)),
});

export const deleteEvaluationRuleOperation = defineTool({
  name: 'delete_evaluation_rule',
  title: 'Delete an evaluation rule',
  description: 'Deletes the rule and its waiting work; results already written (execution logs) stay.',
  input: z.object({ rule_id: ruleId }),
  output: z.object({ deleted: z.literal(true), id: z.string() }),
  annotations: { ...WRITE, idempotentHint: true },
  handler: async ({ rule_id }, ctx) => {
    await deleteRule(ctx, rule_id);
    return { deleted: true as const, id: rule_id };
  },
});

export const testEvaluationRuleOperation = defineTool({
  name: 'test_evaluation_rule',
  title: 'Test an evaluation rule on stored spans',
  description: 'Runs the rule on the latest matching stored spans and shows what would be extracted and judged (no model call, no log).',
  input: z.object({ rule_id: ruleId, limit: z.number().int().min(1).max(50).optional().describe('spans to show, default 5') }),
  output: z.object({
    matched_spans: z.number().int(),
    results: z.array(
      z.object({
        trace_id: z.string(),
        span_id: z.string(),
        span_name: z.string(),
        service_name: z.string().nullable(),
        sampled: z.boolean().describe('whether the sampling rate picks this trace'),
        would_judge: z.record(z.string(), z.unknown()).nullable().describe('the inputs of the run (request/response, turns, contexts...)'),
        reason: z.string().nullable().describe('why nothing would be judged'),
      }),
    ),
  }),
  annotations: READ,
  handler: async ({ rule_id, limit }, ctx) => testRule(ctx, await getOwnRule(ctx, rule_id), limit ?? 5),
});

export const backfillEvaluationRuleOperation = defineTool({
  name: 'backfill_evaluation_rule',
  title: 'Judge stored spans of a period as a batch run',
  description: 'Judges the stored spans received in [date_from, date_to) that the rule matches and samples, as a batch run (poll it at /v1/judges/batch-executions/{id}/).',
  input: z.object({ rule_id: ruleId, date_from: z.string().datetime({ offset: true }), date_to: z.string().datetime({ offset: true }) }),
  output: z.object({ batch_execution_id: z.string(), items: z.number().int(), matched: z.number().int(), skipped: z.record(z.string(), z.number().int()) }),
  annotations: { ...WRITE, openWorldHint: true },
  handler: async ({ rule_id, date_from, date_to }, ctx) => backfillRule(ctx, await getOwnRule(ctx, rule_id), new Date(date_from).toISOString(), new Date(date_to).toISOString()),
});
