// Evaluators: visibility, name resolution, versioned edits. Shared by the tools and REST.
import { permissionDenied, TribunalError, validationError } from '../errors.ts';
import { newId } from '../ids.ts';
import type { Demonstration, Evaluator } from '../schemas.ts';
import type { EvaluatorRecord } from '../store/types.ts';
import type { RequestContext } from '../context.ts';
import { conflictToError } from './conflicts.ts';
import { canRead, getVisible, listVisibleVersions, resolve, revise, type VersionedKind } from './versioned.ts';
import { resolveProjectId } from './projects.ts';
import { demonstrationShapeProblem } from '../conversation/validate.ts';
import { applyModelPatch, checkModelFields, modelFieldsForCreate, type EvaluatorModelFields } from './evaluator-models.ts';
import { settleKind, type KindContent } from '../checks/validate.ts'; // h-checks

type Ctx = Pick<RequestContext, 'store' | 'caller'>;
/** Writes also need the configuration (allowed models). */
type WriteCtx = Pick<RequestContext, 'store' | 'caller' | 'config'>;

export const evaluatorToWire = ({ org_id: _org, ...wire }: EvaluatorRecord): Evaluator => ({
  ...wire,
  requires_request: wire.requires_request ?? false,
  requires_turns: wire.requires_turns ?? false,
  critical: wire.critical ?? false,
});

/** A demo organization's resources are always public (SPEC section 1). */
export function effectiveVisibility(ctx: Ctx, requested: 'private' | 'public' | undefined): 'private' | 'public' {
  return ctx.caller.org.is_demo ? 'public' : (requested ?? 'private');
}

export { canRead };

/** Evaluators as a versioned resource (versioned.ts): presets rank after the caller's own, before others' public ones. */
const EVALUATORS: VersionedKind<EvaluatorRecord> = {
  noun: 'evaluator',
  get: (store, id) => store.getEvaluator(id),
  getVersion: (store, id, version) => store.getEvaluatorVersion(id, version),
  listVersions: (store, id) => store.listEvaluatorVersions(id),
  named: async (ctx, name) => (await ctx.store.listEvaluators({ org_id: ctx.caller.org.id, include_public: true, name }, { limit: 20 })).items,
  candidates(ctx, items) {
    const own = items.filter((e) => e.org_id === ctx.caller.org.id);
    const presets = items.filter((e) => e.is_preset);
    return own.length ? own : presets.length ? presets : items;
  },
  editable: (ctx, id) => getEditableEvaluator(ctx, id),
  update: (store, next, expected) => store.updateEvaluator(next, expected),
  fields: [
    'name',
    'intent',
    'rubric',
    'requires_contexts',
    'requires_expected_output',
    'requires_request',
    'requires_turns',
    'critical',
    'demonstrations',
    'model',
    'models',
    'aggregation',
    'scoring',
    'visibility',
    'project_id',
    // h-checks
    'kind',
    'checks',
    'combine',
    'code',
  ],
  conflictHint: 'choose another name or edit the existing one.',
};

export const getVisibleEvaluator = (ctx: Ctx, id: string, version?: number): Promise<EvaluatorRecord> => getVisible(EVALUATORS, ctx, id, version);

/** Every version the caller may read, newest first (versions saved private are its owner's only). */
export const listVisibleEvaluatorVersions = (ctx: Ctx, idOrName: string): Promise<EvaluatorRecord[]> => listVisibleVersions(EVALUATORS, ctx, idOrName);

/**
 * Finds an evaluator by id, or by exact name: the caller's own first, then presets, then other
 * organizations' public ones (ambiguity there is an error that lists the candidates).
 */
export const resolveEvaluator = (ctx: Ctx, ref: { id?: string; name?: string }, version?: number): Promise<EvaluatorRecord> => resolve(EVALUATORS, ctx, ref, version);

export interface EvaluatorContent extends Omit<KindContent, 'rubric'> {
  name: string;
  intent: string;
  /** Required for kind llm; a check or code evaluator gets a description of itself (checks/validate.ts). */
  rubric?: string;
  requires_contexts?: boolean;
  requires_expected_output?: boolean;
  requires_request?: boolean;
  requires_turns?: boolean;
  critical?: boolean;
  demonstrations?: Demonstration[];
  model?: string | null;
  /** A jury, its aggregation, and the scoring mode (evaluator-models.ts). */
  models?: EvaluatorModelFields['models'];
  aggregation?: EvaluatorModelFields['aggregation'];
  scoring?: EvaluatorModelFields['scoring'];
}

/**
 * An evaluator's model override must be a model the caller's organization registered (/v1/models/)
 * or one the operator allows (TRIBUNAL_ALLOWED_MODELS).
 */
async function checkModel(ctx: WriteCtx, model: string | null | undefined) {
  if (model === null || model === undefined) return;
  const allowed = ctx.config.model.allowed;
  if (!allowed.includes(model) && !(await ctx.store.getModelByName(ctx.caller.org.id, model))) {
    throw validationError(
      `model ${JSON.stringify(model)} is neither a model your organization registered (GET /v1/models/) nor one this server allows (${allowed.join(', ')}); register it, or leave model unset for the default.`,
      [{ field: 'model', message: 'not a registered or allowed model (TRIBUNAL_ALLOWED_MODELS)' }],
    );
  }
}

function checkDemonstrations(content: Pick<EvaluatorContent, 'demonstrations' | 'requires_contexts' | 'requires_expected_output' | 'requires_request' | 'requires_turns'>) {
  (content.demonstrations ?? []).forEach((d, i) => {
    const problem = demonstrationShapeProblem(d, content.requires_turns === true);
    if (problem) throw validationError(`demonstrations.${i}: ${problem.message}`, [{ field: `demonstrations.${i}.${problem.field}`, message: problem.message }]);
    // With turns, the conversation before the judged turn stands for the request (SPEC section 12).
    if (content.requires_request && !d.turns && !d.request?.trim()) {
      throw validationError(`demonstrations.${i} needs a request because the evaluator requires the request.`, [
        { field: `demonstrations.${i}.request`, message: 'required when requires_request is true' },
      ]);
    }
    if (content.requires_contexts && !d.contexts?.length) {
      throw validationError(`demonstrations.${i} needs contexts because the evaluator requires contexts.`, [
        { field: `demonstrations.${i}.contexts`, message: 'required when requires_contexts is true' },
      ]);
    }
    if (content.requires_expected_output && d.expected_output === undefined) {
      throw validationError(`demonstrations.${i} needs expected_output because the evaluator requires an expected output.`, [
        { field: `demonstrations.${i}.expected_output`, message: 'required when requires_expected_output is true' },
      ]);
    }
  });
}

const conflict = (err: unknown) => conflictToError(err, EVALUATORS.conflictHint);

export async function createEvaluator(ctx: WriteCtx, input: EvaluatorContent & { visibility?: 'private' | 'public'; project_id?: string }): Promise<EvaluatorRecord> {
  input = await settleKind(ctx.config, input); // h-checks: kind llm, check or code
  checkDemonstrations(input);
  await checkModel(ctx, input.model);
  await checkModelFields(ctx, { model: input.model ?? null, models: input.models, aggregation: input.aggregation, scoring: input.scoring });
  const now = new Date().toISOString();
  const record: EvaluatorRecord = {
    id: newId('evl'),
    org_id: ctx.caller.org.id,
    name: input.name,
    intent: input.intent,
    rubric: input.rubric ?? '',
    requires_contexts: input.requires_contexts ?? false,
    requires_expected_output: input.requires_expected_output ?? false,
    requires_request: input.requires_request ?? false,
    requires_turns: input.requires_turns ?? false,
    critical: input.critical ?? false,
    demonstrations: input.demonstrations ?? [],
    model: input.model ?? null,
    ...modelFieldsForCreate(input),
    ...(input.kind && input.kind !== 'llm' ? { kind: input.kind, checks: input.checks ?? null, combine: input.combine ?? null, code: input.code ?? null } : {}),
    visibility: effectiveVisibility(ctx, input.visibility),
    is_preset: false,
    project_id: await resolveProjectId(ctx, input.project_id),
    version: 1,
    created_at: now,
    updated_at: now,
  };
  try {
    await ctx.store.createEvaluator(record);
  } catch (err) {
    throw conflict(err);
  }
  return record;
}

/** The caller may edit: its own, not a preset. Others' public ones are readable but not editable. */
export async function getEditableEvaluator(ctx: Ctx, id: string): Promise<EvaluatorRecord> {
  const current = await getVisibleEvaluator(ctx, id);
  if (current.is_preset) {
    throw permissionDenied(`${current.name} is a shipped preset and read-only; create your own evaluator (you may start from its rubric) and edit that.`);
  }
  if (current.org_id !== ctx.caller.org.id) throw permissionDenied(`Evaluator ${current.name} belongs to another organization; it is public to read and run, not to edit.`);
  return current;
}

const CONTENT_FIELDS = EVALUATORS.fields as readonly (keyof EvaluatorContent | 'visibility' | 'project_id')[];

export async function updateEvaluator(
  ctx: WriteCtx,
  id: string,
  patch: Partial<EvaluatorContent & { visibility: 'private' | 'public'; project_id: string }>,
): Promise<EvaluatorRecord> {
  return revise(EVALUATORS, ctx, id, async (copy, current) => {
    let next = copy;
    if (patch.project_id !== undefined) next.project_id = await resolveProjectId(ctx, patch.project_id);
    for (const field of CONTENT_FIELDS) {
      if (field === 'project_id' || patch[field] === undefined) continue;
      // Clearing what is not set (models null on an evaluator without a jury) changes nothing.
      if (patch[field] === null && ((current as Record<string, unknown>)[field] ?? null) === null) continue;
      (next as Record<string, unknown>)[field] = patch[field];
    }
    next.visibility = effectiveVisibility(ctx, next.visibility);
    // h-checks: a change of kind clears the other kind's fields; the code is tried only when it changed.
    if (patch.kind !== undefined && patch.kind !== (current.kind ?? 'llm')) next = clearKindFields(next, patch);
    if ((next.kind ?? 'llm') !== 'llm' || patch.checks != null || patch.code != null) next = await settleKind(ctx.config, next, next.code !== current.code);
    checkDemonstrations(next);
    if (patch.model !== undefined) await checkModel(ctx, patch.model);
    applyModelPatch(next, patch);
    await checkModelFields(ctx, next, patch);
    if (next.visibility === 'private' && current.visibility === 'public') await assertNoPublicJudgeUses(ctx, current.id);
    return next;
  });
}

async function assertNoPublicJudgeUses(ctx: Ctx, evaluatorId: string) {
  const users = await ctx.store.findJudgesUsingEvaluator(evaluatorId);
  for (const u of users) {
    const judge = await ctx.store.getJudge(u.id);
    if (judge?.visibility === 'public') {
      throw validationError(`Public judge ${judge.name} (${judge.id}) applies this evaluator, so it must stay public; make the judge private first.`, [
        { field: 'visibility', message: 'used by a public judge' },
      ]);
    }
  }
}

/** Deletes the evaluator given by id or exact name; answers its id. */
export async function deleteEvaluator(ctx: Ctx, id: string): Promise<string> {
  const current = await getEditableEvaluator(ctx, id);
  const users = await ctx.store.findJudgesUsingEvaluator(current.id);
  if (users.length) {
    const names = users.map((u) => (u.org_id === ctx.caller.org.id ? `${u.name} (${u.id})` : 'a judge of another organization'));
    throw new TribunalError('conflict', 409, `Evaluator ${current.name} is used by ${names.join(', ')}; remove it from those judges first.`);
  }
  await ctx.store.deleteEvaluator(current.id);
  return current.id;
}

/** h-checks: the fields of the kind an evaluator leaves, unless the same patch sets them again. */
function clearKindFields(next: EvaluatorRecord, patch: Partial<EvaluatorContent>): EvaluatorRecord {
  const cleared = { ...next };
  for (const f of ['checks', 'combine', 'code'] as const) if (patch[f] === undefined) cleared[f] = null;
  return cleared;
}
