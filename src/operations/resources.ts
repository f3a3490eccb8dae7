// REST-only operations on judges, evaluators and projects: version history, deletes, project
// creation. They are definitions like the 14 tools (validated and size-limited by invokeTool) but are
// never registered with MCP: an agent has no delete tools (SPEC section 3).
import { z } from 'zod';
import { deleteEvaluator, evaluatorToWire, listVisibleEvaluatorVersions } from '../domain/evaluators.ts';
import { deleteJudge, judgeToWire, listVisibleJudgeVersions } from '../domain/judges.ts';
import { createProject } from '../domain/projects.ts';
import { Evaluator, Judge, Project } from '../schemas.ts';
import { defineTool, type ToolContext } from '../tool.ts';
import { READ, WRITE } from './annotations.ts';

export const Deleted = z.object({ deleted: z.literal(true), id: z.string() });

/** GET every version of a resource, newest first: readable wherever the resource itself is. */
function versionsOperation<K extends string, W extends z.ZodType, R>(
  what: string,
  idField: K,
  item: W,
  listVisible: (ctx: ToolContext, idOrName: string) => Promise<R[]>,
  toWire: (record: R) => z.infer<W>,
) {
  const a = /^[aeiou]/.test(what) ? 'an' : 'a';
  return defineTool({
    name: `list_${what}_versions`,
    title: `Every version of ${a} ${what}, newest first`,
    description: `Every version of ${a} ${what}, newest first (readable wherever the ${what} is).`,
    input: z.object({ [idField]: z.string().min(1).describe(`id of the ${what}`) }) as z.ZodObject<Record<K, z.ZodString>>,
    output: z.object({ results: z.array(item) }),
    annotations: READ,
    async handler(input, ctx) {
      // By id or exact name; each version is shown only where the caller may read it (a version
      // saved private stays private after a later one was made public).
      return { results: (await listVisible(ctx, (input as Record<K, string>)[idField])).map(toWire) };
    },
  });
}

/**
 * DELETE a record: REST and the web app only, never MCP. The answer is {deleted: true, id} with the id
 * `remove` reports: the path may name the record, the answer carries its id.
 */
export function defineDeleteOperation<I extends z.ZodObject>(spec: {
  name: string;
  title: string;
  description: string;
  input: I;
  remove: (input: z.infer<I>, ctx: ToolContext) => Promise<string>;
}) {
  return defineTool({
    name: spec.name,
    title: spec.title,
    description: spec.description,
    input: spec.input,
    output: Deleted,
    annotations: WRITE,
    handler: async (input, ctx) => ({ deleted: true as const, id: await spec.remove(input, ctx) }),
  });
}

/** DELETE a judge or an evaluator by id or exact name. */
function deleteOperation<K extends string>(what: string, idField: K, title: string, remove: (ctx: ToolContext, idOrName: string) => Promise<string>) {
  return defineDeleteOperation({
    name: `delete_${what}`,
    title,
    description: title,
    input: z.object({ [idField]: z.string().min(1).describe(`id of the ${what}`) }) as z.ZodObject<Record<K, z.ZodString>>,
    remove: (input, ctx) => remove(ctx, (input as Record<K, string>)[idField]),
  });
}

export const listJudgeVersions = versionsOperation('judge', 'judge_id', Judge, listVisibleJudgeVersions, judgeToWire);
export const listEvaluatorVersions = versionsOperation('evaluator', 'evaluator_id', Evaluator, listVisibleEvaluatorVersions, evaluatorToWire);
export const deleteJudgeOperation = deleteOperation('judge', 'judge_id', 'Delete a judge (REST and web only; never MCP). Its execution logs stay.', deleteJudge);
export const deleteEvaluatorOperation = deleteOperation('evaluator', 'evaluator_id', 'Delete an evaluator that no judge uses (REST and web only; never MCP)', deleteEvaluator);

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
