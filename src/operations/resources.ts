// REST-only operations on judges, evaluators and projects: version history, deletes, project
// creation. They are definitions like the 14 tools (validated and size-limited by invokeTool) but are
// never registered with MCP: an agent has no delete tools (SPEC section 3).
import { z } from 'zod';
import { deleteEvaluator, evaluatorToWire, getVisibleEvaluator } from '../domain/evaluators.ts';
import { deleteJudge, getVisibleJudge, judgeToWire } from '../domain/judges.ts';
import { createProject } from '../domain/projects.ts';
import { Evaluator, Judge, Project } from '../schemas.ts';
import { defineTool, type ToolAnnotations } from '../tool.ts';

const READ: ToolAnnotations = { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false };
const WRITE: ToolAnnotations = { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false };

const JudgeId = z.object({ judge_id: z.string().min(1).describe('id of the judge') });
const EvaluatorId = z.object({ evaluator_id: z.string().min(1).describe('id of the evaluator') });
export const Deleted = z.object({ deleted: z.literal(true), id: z.string() });

export const listJudgeVersions = defineTool({
  name: 'list_judge_versions',
  title: 'Every version of a judge, newest first',
  description: 'Every version of a judge, newest first (readable wherever the judge is).',
  input: JudgeId,
  output: z.object({ results: z.array(Judge) }),
  annotations: READ,
  async handler({ judge_id }, ctx) {
    await getVisibleJudge(ctx, judge_id);
    return { results: (await ctx.store.listJudgeVersions(judge_id)).map(judgeToWire) };
  },
});

export const listEvaluatorVersions = defineTool({
  name: 'list_evaluator_versions',
  title: 'Every version of an evaluator, newest first',
  description: 'Every version of an evaluator, newest first (readable wherever the evaluator is).',
  input: EvaluatorId,
  output: z.object({ results: z.array(Evaluator) }),
  annotations: READ,
  async handler({ evaluator_id }, ctx) {
    await getVisibleEvaluator(ctx, evaluator_id);
    return { results: (await ctx.store.listEvaluatorVersions(evaluator_id)).map(evaluatorToWire) };
  },
});

export const deleteJudgeOperation = defineTool({
  name: 'delete_judge',
  title: 'Delete a judge (REST and web only; never MCP). Its execution logs stay.',
  description: 'Delete a judge. Its execution logs stay.',
  input: JudgeId,
  output: Deleted,
  annotations: WRITE,
  async handler({ judge_id }, ctx) {
    await deleteJudge(ctx, judge_id);
    return { deleted: true as const, id: judge_id };
  },
});

export const deleteEvaluatorOperation = defineTool({
  name: 'delete_evaluator',
  title: 'Delete an evaluator that no judge uses (REST and web only; never MCP)',
  description: 'Delete an evaluator that no judge uses.',
  input: EvaluatorId,
  output: Deleted,
  annotations: WRITE,
  async handler({ evaluator_id }, ctx) {
    await deleteEvaluator(ctx, evaluator_id);
    return { deleted: true as const, id: evaluator_id };
  },
});

export const createProjectOperation = defineTool({
  name: 'create_project',
  title: 'Create a project',
  description: 'Create a project in your organization.',
  input: z.object({
    name: z.string().min(1).max(200).describe('project name, unique in your organization'),
    description: z.string().max(2000).optional().describe('what the project is for'),
  }),
  output: Project,
  annotations: WRITE,
  handler: (input, ctx) => createProject(ctx, input),
});
