// REST-only operations of room surface (SPEC section 16): duplicate a judge or an evaluator, run a
// judge by name, claim a demo judge. Never registered with MCP.
import { z } from 'zod';
import { evaluatorToWire } from '../domain/evaluators.ts';
import { assertRunnable, judgeToWire, resolveJudge } from '../domain/judges.ts';
import { Evaluator, ExecutionInputShape, ExecutionResult, Judge } from '../schemas.ts';
import { claimJudge } from '../surface/claim.ts';
import { duplicateEvaluator, duplicateJudge } from '../surface/copy.ts';
import { answerOf } from '../engine/outcome.ts';
import { defineTool } from '../tool.ts';
import { WRITE } from './annotations.ts';

const copyFields = {
  project_id: z.string().optional().describe('project of your organization for the copy; default your default project'),
  name: z.string().min(1).max(200).optional().describe('name of the copy; default "<name> (copy)", numbered when taken'),
};

export const duplicateJudgeOperation = defineTool({
  name: 'duplicate_judge',
  title: 'Duplicate a judge into your organization',
  description: 'Copy a judge you can read (yours or a public one) into your organization as a new private judge (version 1) applying the same evaluators.',
  input: z.object({ judge_id: z.string().min(1).describe('id or exact name of the judge to copy'), ...copyFields }),
  output: Judge,
  annotations: WRITE,
  handler: async ({ judge_id, ...opts }, ctx) => judgeToWire(await duplicateJudge(ctx, judge_id, opts)),
});

export const duplicateEvaluatorOperation = defineTool({
  name: 'duplicate_evaluator',
  title: 'Duplicate an evaluator into your organization',
  description:
    'Copy an evaluator you can read (yours, a preset or a public one) into your organization as a new private evaluator (version 1) with the same rubric, demonstrations and model settings.',
  input: z.object({ evaluator_id: z.string().min(1).describe('id or exact name of the evaluator to copy'), ...copyFields }),
  output: Evaluator,
  annotations: WRITE,
  handler: async ({ evaluator_id, ...opts }, ctx) => evaluatorToWire(await duplicateEvaluator(ctx, evaluator_id, opts)),
});

export const executeJudgeByNameOperation = defineTool({
  name: 'execute_judge_by_name',
  title: 'Run a judge chosen by its exact name',
  description: 'Run the judge named by the `name` query parameter (your own first, then public ones) on the execute body.',
  input: z.object({ name: z.string().min(1).max(200).describe('exact name of the judge (query parameter)'), ...ExecutionInputShape }),
  output: ExecutionResult,
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
  async handler({ name, ...inputs }, ctx) {
    const judge = await resolveJudge(ctx, { name });
    assertRunnable(judge);
    return answerOf(await ctx.engine.runJudge(ctx, judge, inputs));
  },
});

export const claimJudgeOperation = defineTool({
  name: 'claim_judge',
  title: 'Claim a judge made with a demo key',
  description:
    'Move a judge made with a demo key into your organization as private, with its own evaluators, using the claim_token its creation answered. ' +
    'A token works once; a used, expired or unknown token is refused. The judge gets new ids in your organization (previous_judge_id names the demo one).',
  input: z.object({
    claim_token: z.string().min(1).max(200).describe('the claim_token answered when the demo judge was made'),
    project_id: z.string().optional().describe('project of your organization for the judge; default your default project'),
  }),
  output: z.object({
    judge: Judge,
    previous_judge_id: z.string().describe('the id the judge had in the demo organization'),
    evaluators_moved: z.array(z.object({ previous_id: z.string(), id: z.string(), name: z.string() })).describe("the demo organization's evaluators that moved with it"),
  }),
  annotations: WRITE,
  async handler(input, ctx) {
    const result = await claimJudge(ctx, input);
    return { ...result, judge: judgeToWire(result.judge) };
  },
});
