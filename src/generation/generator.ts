// Judge generation (SPEC section 5): an intent in, one of three outcomes out. The flow and its
// rules are described in docs/GENERATION.md; in short: stages -> missing context -> design, each a
// validated model step, and nothing is stored until a step's answer is usable (a draft judge is
// stored on purpose when context is missing, and completed as the same judge on the follow-up).
// What generation knows about a judge it made (draft or complete, the answers, the open questions)
// is the judge's own `generation` field; the judge's intent is exactly the caller's.
import type { RequestContext } from '../context.ts';
import { TribunalError, validationError } from '../errors.ts';
import { createEvaluator, effectiveVisibility } from '../domain/evaluators.ts';
import { hardRulesOf } from '../checks/hard-rules.ts'; // h-checks
import { createJudge, getEditableJudge, reviseJudge } from '../domain/judges.ts';
import type { Preset } from '../domain/presets.ts';
import { resolveProjectId } from '../domain/projects.ts';
import { NOT_CONFIGURED_MESSAGE } from '../engine/providers/anthropic-model.ts';
import type { JudgeModel } from '../engine/providers/model.ts';
import type { EvaluatorRef, JudgeGeneration } from '../schemas.ts';
import type { EvaluatorRecord, JudgeRecord } from '../store/types.ts';
import { contextStep, fieldName, designStep, presetCatalog, rubricText, stagesStep, THINKING_BUDGET, type DesignAnswer, type NewEvaluator } from './steps.ts';
import { runStep } from './structured.ts';
import type { GenerateJudgeInput, GenerateJudgeOutcome, JudgeGenerator } from './types.ts';

type Question = { form_field_name: string; form_field_description: string };
type Detail = { id: string; name: string; intent: string; is_preset: boolean };

const MAX_NAME = 100;

export function createJudgeGenerator(model: JudgeModel): JudgeGenerator {
  return { generate: (ctx, input) => generate(ctx, model, input) };
}

async function generate(ctx: RequestContext, model: JudgeModel, input: GenerateJudgeInput): Promise<GenerateJudgeOutcome> {
  // Everything the caller can get wrong is checked before the model is asked anything.
  const intent = input.intent.trim();
  if (!intent)
    throw validationError('intent is empty: describe the application, its users and the stage to evaluate in a few sentences.', [
      { field: 'intent', message: 'must not be blank' },
    ]);
  const givenStage = input.stage?.trim();
  if (input.stage !== undefined && !givenStage) throw validationError('stage is blank: give a stage name, or leave stage out.', [{ field: 'stage', message: 'must not be blank' }]);
  const extra = normalizeAnswers(input.extra_contexts ?? {});

  let existing: JudgeRecord | null = null;
  let record: JudgeGeneration | null = null;
  if (input.judge_id) {
    // Visible but another organization's (public): readable, not ours to complete (403, as PATCH).
    existing = await getEditableJudge(ctx, input.judge_id);
    record = existing.generation ?? null;
    if (!record) {
      throw validationError(
        `Judge ${existing.name} (${existing.id}) was not made by generate_judge, so generation cannot continue it. ` +
          'Leave judge_id out to generate a new judge, or edit this one with update_judge.',
        [{ field: 'judge_id', message: 'not a generated judge' }],
      );
    }
  }
  const projectId = await resolveProjectId(ctx, input.project_id ?? existing?.project_id);
  const visibility = effectiveVisibility(ctx, input.visibility ?? existing?.visibility);

  if (!model.configured) {
    throw new TribunalError('model_unavailable', 503, `Judge generation needs the judge model. ${NOT_CONFIGURED_MESSAGE}`, { reason: 'model_not_configured' });
  }
  const budget = THINKING_BUDGET[input.reasoning_effort ?? 'medium'];
  const modelName = ctx.config.model.name;
  const contextAware = input.enable_context_aware_evaluators ?? record?.context_aware ?? false;
  const catalog = presetCatalog(contextAware);

  // 1. Stages. A follow-up on a generated judge keeps the stage settled when it was made.
  let stage: string | null = givenStage ?? existing?.stage ?? null;
  if (!givenStage && !existing) {
    const found = await runStep(model, modelName, stagesStep(intent, budget));
    const names = [...new Map(found.stages.map((s) => [s.name.toLowerCase(), s.name])).values()];
    if (names.length > 1) return { error_code: 'multiple_stages', stages: names };
    stage = names[0] ?? null;
  }

  // 2. Missing context. Answers given before (kept in the judge) count as answered for good.
  const answers = { ...(record?.answers ?? {}), ...extra };
  const answered = (name: string) => Boolean(answers[name]?.trim());
  let open: Question[];
  let draftPresets: string[] | null = null;
  let draftName: string | null = null;
  if (record && existing && existing.intent.trim() === intent) {
    // The same intent: the open questions are the ones asked before; no need to ask the model again.
    open = record.open_questions.filter((q) => !answered(q.form_field_name));
  } else {
    const assessed = await runStep(model, modelName, contextStep({ intent, stage, answers, catalog, thinkingBudget: budget }));
    const seen = new Set<string>();
    open = [];
    for (const q of assessed.missing_context) {
      const name = fieldName(q.form_field_name);
      if (answered(name) || seen.has(name)) continue;
      seen.add(name);
      open.push({ form_field_name: name, form_field_description: q.form_field_description });
    }
    draftPresets = assessed.preset_ids;
    draftName = assessed.judge_name;
  }

  if (open.length) {
    const generation: JudgeGeneration = { status: 'draft', context_aware: contextAware, answers, open_questions: open };
    let judgeId: string;
    if (existing) {
      const refs = draftPresets ? presetRefs(unique(draftPresets)) : null;
      const revised = await reviseJudge(ctx, existing.id, async (cur) => ({
        ...cur,
        intent,
        generation,
        stage,
        visibility,
        project_id: projectId,
        evaluators: refs ?? cur.evaluators,
      }));
      judgeId = revised.id;
    } else {
      const name = await uniqueJudgeName(ctx, `${clip(draftName ?? 'Generated judge', MAX_NAME - 8)} (draft)`);
      const draft = await createJudge(ctx, { name, intent, evaluator_ids: unique(draftPresets ?? []), stage, visibility, project_id: projectId }, generation);
      judgeId = draft.id;
    }
    return { error_code: 'missing_context_from_system_goal', judge_id: judgeId, missing_context_from_system_goal: open };
  }

  // 3. Design, then store it all (or nothing).
  const design = await runStep(model, modelName, designStep({ intent, stage, answers, catalog, contextAware, thinkingBudget: budget }));
  const generation: JudgeGeneration = { status: 'complete', context_aware: contextAware, answers, open_questions: [] };
  return store(ctx, { design, catalog, contextAware, existing, intent, generation, stage, visibility, projectId });
}

/** extra_contexts keys as field names; blank answers are no answers. */
function normalizeAnswers(raw: Record<string, string>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [key, value] of Object.entries(raw)) {
    const name = fieldName(key);
    if (!name) {
      throw validationError(`extra_contexts key ${JSON.stringify(key)} has no letters or digits; use the form_field_name you were given.`, [
        { field: `extra_contexts.${key}`, message: 'invalid key' },
      ]);
    }
    if (value.trim()) out[name] = value.trim();
  }
  return out;
}

const clip = (text: string, max: number) => (text.length <= max ? text : text.slice(0, max).trimEnd());

// Nothing is appended behind the design step's back: a context-aware judge gets the grounding
// presets the design step chose (it is told what each judges, and must choose one that reads contexts).
const unique = (ids: string[]): string[] => [...new Set(ids)];

const presetRefs = (ids: string[]): EvaluatorRef[] => ids.map((id) => ({ id, name: presetById(id).name, version: null }));

function presetById(id: string): Preset {
  const preset = presetCatalog(true).find((p) => p.id === id);
  if (!preset) throw new TribunalError('internal_error', 500, `Unknown preset ${id}.`);
  return preset;
}

/** `base`, or `base (2)`, `base (3)`...: the first name not taken. */
async function firstFree(base: string, taken: (name: string) => Promise<boolean>): Promise<string> {
  for (let n = 1; n <= 50; n++) {
    const candidate = n === 1 ? base : `${clip(base, MAX_NAME - 6)} (${n})`;
    if (!(await taken(candidate))) return candidate;
  }
  return `${clip(base, MAX_NAME - 10)} (${Date.now().toString(36)})`;
}

async function uniqueJudgeName(ctx: RequestContext, base: string, self?: string): Promise<string> {
  return firstFree(base, async (name) => {
    const { items } = await ctx.store.listJudges({ org_id: ctx.caller.org.id, include_public: false, name }, { limit: 5 });
    return items.some((j) => j.org_id === ctx.caller.org.id && j.id !== self);
  });
}

async function uniqueEvaluatorName(ctx: RequestContext, base: string, reserved: Set<string>): Promise<string> {
  const presetNames = new Set(presetCatalog(true).map((p) => p.name.toLowerCase()));
  return firstFree(base, async (name) => {
    if (reserved.has(name.toLowerCase()) || presetNames.has(name.toLowerCase())) return true;
    const { items } = await ctx.store.listEvaluators({ org_id: ctx.caller.org.id, include_public: false, name }, { limit: 5 });
    return items.some((e) => e.org_id === ctx.caller.org.id);
  });
}

const isConflict = (err: unknown) => err instanceof TribunalError && err.code === 'conflict';

async function storeEvaluator(
  ctx: RequestContext,
  spec: NewEvaluator,
  where: { visibility: 'private' | 'public'; projectId: string },
  reserved: Set<string>,
): Promise<EvaluatorRecord> {
  const needsContexts = spec.requires_contexts ?? false;
  const needsRequest = spec.requires_request ?? false;
  // A name taken between the check and the write (another request) just moves to the next suffix.
  for (let attempt = 0; ; attempt++) {
    const name = await uniqueEvaluatorName(ctx, clip(spec.name, MAX_NAME), reserved);
    try {
      const rec = await createEvaluator(ctx, {
        name,
        intent: spec.intent,
        rubric: rubricText(spec.rubric),
        requires_contexts: needsContexts,
        requires_expected_output: false,
        requires_request: needsRequest,
        critical: spec.critical ?? false,
        // Examples are optional: one the evaluator could not use (no contexts or no request where it
        // needs them) is left out, not fatal.
        demonstrations: (spec.demonstrations ?? [])
          .filter((d) => !needsContexts || d.contexts?.length)
          .filter((d) => !needsRequest || d.request?.trim())
          .map(({ contexts, ...d }) => (needsContexts ? { ...d, contexts } : d)),
        visibility: where.visibility,
        project_id: where.projectId,
      });
      reserved.add(name.toLowerCase());
      return rec;
    } catch (err) {
      if (!isConflict(err) || attempt >= 3) throw err;
    }
  }
}

async function store(
  ctx: RequestContext,
  p: {
    design: DesignAnswer;
    catalog: Preset[];
    contextAware: boolean;
    existing: JudgeRecord | null;
    intent: string;
    generation: JudgeGeneration;
    stage: string | null;
    visibility: 'private' | 'public';
    projectId: string;
  },
): Promise<GenerateJudgeOutcome> {
  const presetIds = unique(p.design.preset_ids);
  const created: EvaluatorRecord[] = [];
  try {
    const reserved = new Set<string>();
    for (const spec of p.design.new_evaluators) created.push(await storeEvaluator(ctx, spec, p, reserved));
    // h-checks: hard rules of the intent (JSON, a length) as critical checks, decided without a model.
    for (const rule of hardRulesOf(p.intent)) {
      const name = await uniqueEvaluatorName(ctx, rule.name, reserved);
      created.push(await createEvaluator(ctx, { ...rule, name, critical: true, visibility: p.visibility, project_id: p.projectId }));
      reserved.add(name.toLowerCase());
    }
    // Order: the reused presets the model chose, then the new evaluators.
    const refs: EvaluatorRef[] = [...presetRefs(presetIds), ...created.map((e) => ({ id: e.id, name: e.name, version: null }))];
    const judgeName = clip(p.design.judge_name, MAX_NAME);
    let judge: JudgeRecord;
    if (p.existing) {
      const name = await uniqueJudgeName(ctx, judgeName, p.existing.id);
      judge = await reviseJudge(ctx, p.existing.id, async (cur) => ({
        ...cur,
        name,
        intent: p.intent,
        generation: p.generation,
        stage: p.stage,
        visibility: p.visibility,
        project_id: p.projectId,
        evaluators: refs,
      }));
    } else {
      judge = await createWithFreeName(ctx, judgeName, refs, p);
    }
    const details = new Map<string, Detail>();
    for (const e of created) details.set(e.id, { id: e.id, name: e.name, intent: e.intent, is_preset: false });
    for (const id of presetIds) {
      const preset = presetById(id);
      details.set(id, { id, name: preset.name, intent: preset.intent, is_preset: true });
    }
    return { judge_id: judge.id, evaluator_details: judge.evaluators.map((r) => details.get(r.id)!) };
  } catch (err) {
    // Never leave a half-made judge behind: evaluators written for a judge that was not stored go.
    await Promise.all(created.map((e) => ctx.store.deleteEvaluator(e.id).catch(() => undefined)));
    throw err;
  }
}

async function createWithFreeName(
  ctx: RequestContext,
  base: string,
  refs: EvaluatorRef[],
  p: { intent: string; generation: JudgeGeneration; stage: string | null; visibility: 'private' | 'public'; projectId: string },
): Promise<JudgeRecord> {
  for (let attempt = 0; ; attempt++) {
    const name = await uniqueJudgeName(ctx, base);
    try {
      return await createJudge(
        ctx,
        { name, intent: p.intent, evaluator_ids: refs.map((r) => r.id), stage: p.stage, visibility: p.visibility, project_id: p.projectId },
        p.generation,
      );
    } catch (err) {
      if (!isConflict(err) || attempt >= 3) throw err;
    }
  }
}
