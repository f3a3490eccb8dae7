// Duplicating judges and evaluators (SPEC section 16): a copy in the caller's organization, private,
// version 1, under a free name. A judge copy applies the same evaluators (at the same pins); an
// evaluator copy carries its content (rubric, demonstrations, model settings).
import type { RequestContext } from '../context.ts';
import { conflictToError } from '../domain/conflicts.ts';
import { createEvaluator, getVisibleEvaluator, type EvaluatorContent } from '../domain/evaluators.ts';
import { getVisibleJudge } from '../domain/judges.ts';
import { resolveProjectId } from '../domain/projects.ts';
import { newId } from '../ids.ts';
import type { EvaluatorRecord, JudgeRecord } from '../store/types.ts';

type WriteCtx = Pick<RequestContext, 'store' | 'caller' | 'config'>;

export interface CopyOptions {
  project_id?: string;
  name?: string;
}

/** `base (copy)`, then `base (copy 2)`, ...: the first not taken in the organization. */
export async function freeName(taken: (name: string) => Promise<boolean>, base: string, suffix = 'copy'): Promise<string> {
  for (let n = 1; n < 1000; n++) {
    const name = `${base} (${suffix}${n === 1 ? '' : ` ${n}`})`.slice(0, 200);
    if (!(await taken(name))) return name;
  }
  return `${base} (${suffix} ${newId('jdg').slice(-8)})`.slice(0, 200);
}

export const judgeNameTaken = (ctx: WriteCtx, orgId: string) => async (name: string) =>
  (await ctx.store.listJudges({ org_id: orgId, include_public: false, name }, { limit: 1 })).items.length > 0;
export const evaluatorNameTaken = (ctx: WriteCtx, orgId: string) => async (name: string) =>
  (await ctx.store.listEvaluators({ org_id: orgId, include_public: false, name }, { limit: 1 })).items.length > 0;

/** What an evaluator copy keeps: everything that decides how it scores. */
export function evaluatorContent(e: EvaluatorRecord): EvaluatorContent {
  return {
    name: e.name,
    intent: e.intent,
    rubric: e.rubric,
    requires_contexts: e.requires_contexts,
    requires_expected_output: e.requires_expected_output,
    requires_request: e.requires_request ?? false,
    requires_turns: e.requires_turns ?? false,
    critical: e.critical ?? false,
    demonstrations: e.demonstrations,
    model: e.model,
    ...(e.models ? { models: e.models } : {}),
    ...(e.aggregation ? { aggregation: e.aggregation } : {}),
    ...(e.scoring ? { scoring: e.scoring } : {}),
  };
}

export async function duplicateEvaluator(ctx: WriteCtx, idOrName: string, opts: CopyOptions): Promise<EvaluatorRecord> {
  const source = await getVisibleEvaluator(ctx, idOrName);
  const name = opts.name ?? (await freeName(evaluatorNameTaken(ctx, ctx.caller.org.id), source.name));
  return createEvaluator(ctx, { ...evaluatorContent(source), name, visibility: 'private', project_id: opts.project_id });
}

/** Stores a judge record built by the caller (copy or claim), with the store's conflicts said plainly. */
export async function storeJudgeCopy(ctx: WriteCtx, record: JudgeRecord): Promise<JudgeRecord> {
  try {
    await ctx.store.createJudge(record);
  } catch (err) {
    throw conflictToError(err, 'pass another name.');
  }
  return record;
}

export async function duplicateJudge(ctx: WriteCtx, idOrName: string, opts: CopyOptions): Promise<JudgeRecord> {
  const source = await getVisibleJudge(ctx, idOrName);
  const now = new Date().toISOString();
  return storeJudgeCopy(ctx, {
    id: newId('jdg'),
    org_id: ctx.caller.org.id,
    name: opts.name ?? (await freeName(judgeNameTaken(ctx, ctx.caller.org.id), source.name)),
    intent: source.intent,
    stage: source.stage,
    // A demo organization's resources are always public (SPEC section 1); anyone else's copy is private.
    visibility: ctx.caller.org.is_demo ? 'public' : 'private',
    project_id: await resolveProjectId(ctx, opts.project_id),
    evaluators: source.evaluators.map((e) => ({ ...e })),
    generation: source.generation ?? null,
    version: 1,
    created_at: now,
    updated_at: now,
  });
}
