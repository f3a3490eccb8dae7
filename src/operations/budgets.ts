// REST-only budget operations (room h-cost, SPEC section 18, docs/COST.md): read the org's caps and
// today's spend; set an evaluator's daily cap. The org's own cap is an administrator's (the admin
// socket / `tribunal keys budget`), never set with an org's key.
import { z } from 'zod';
import { budgetStatus } from '../budgets/budgets.ts';
import { setEvaluatorBudget } from '../budgets/operations.ts';
import { defineTool } from '../tool.ts';
import { READ, WRITE } from './annotations.ts';

const Status = z.object({
  period: z.string().describe('the UTC day the spend is counted in (YYYY-MM-DD)'),
  resets_at: z.string().describe('when daily counters start again (the next UTC midnight)'),
  org: z.object({
    daily_cap_usd: z.number().nullable().describe("the organization's daily cap in USD; null: none"),
    spent_today_usd: z.number().describe('USD spent today by every run of the organization (models without a price count 0)'),
    cap_source: z
      .enum(['organization', 'server_default', 'none'])
      .describe('where the cap comes from: set for this organization by an admin, TRIBUNAL_ORG_DAILY_BUDGET_USD, or none'),
  }),
  evaluators: z.array(z.object({ evaluator_id: z.string(), daily_cap_usd: z.number(), spent_today_usd: z.number() })).describe('evaluators with a daily cap'),
});

export const getBudgetsOperation = defineTool({
  name: 'get_budgets',
  title: "Read your organization's cost caps and today's spend",
  description:
    "The organization's daily cap and what it spent today, and every evaluator's daily cap with its spend. A run that would go over a cap is refused with 429 budget_exceeded.",
  input: z.object({}),
  output: Status,
  annotations: READ,
  handler: async (_input, ctx) => budgetStatus(ctx.store, ctx.config, ctx.caller.org.id),
});

export const setEvaluatorBudgetOperation = defineTool({
  name: 'set_evaluator_budget',
  title: "Set or remove an evaluator's daily cost cap",
  description:
    "Caps what this organization's runs of the evaluator may spend per UTC day (null removes the cap); runs that would go over are refused with 429 budget_exceeded until the reset.",
  input: z.object({
    evaluator_id: z.string().min(1).describe('id or exact name of the evaluator'),
    daily_usd: z.number().finite().min(0).nullable().describe('the daily cap in USD; null removes it'),
  }),
  output: Status,
  annotations: WRITE,
  async handler({ evaluator_id, daily_usd }, ctx) {
    await setEvaluatorBudget(ctx, evaluator_id, daily_usd);
    return budgetStatus(ctx.store, ctx.config, ctx.caller.org.id);
  },
});
