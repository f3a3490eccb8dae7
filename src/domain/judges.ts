// Judges: a named, versioned list of evaluator references. Shared by the tools and REST.
import { permissionDenied, TribunalError, validationError } from '../errors.ts';
import { newId } from '../ids.ts';
import type { EvaluatorRef, Judge, JudgeFull, JudgeGeneration } from '../schemas.ts';
import type { Guardrail } from '../schemas/proxy.ts'; // h-proxy
import type { EvaluatorRecord, JudgeRecord } from '../store/types.ts';
import type { RequestContext } from '../context.ts';
import { conflictToError } from './conflicts.ts';
import { effectiveVisibility, evaluatorToWire, resolveEvaluator } from './evaluators.ts';
import { canRead, getVisible, listVisibleVersions, resolve, revise, type VersionedKind } from './versioned.ts';
import { resolveProjectId } from './projects.ts';

type Ctx = Pick<RequestContext, 'store' | 'caller'>;
/** Writes also need the configuration (limits). */
type WriteCtx = Pick<RequestContext, 'store' | 'caller' | 'config'>;

/** A judge stored before `generation` existed reads as a hand-made one (generation null). */
export const judgeToWire = ({ org_id: _org, generation, ...wire }: JudgeRecord): Judge => ({ ...wire, generation: generation ?? null });

/**
 * A draft made by generate_judge is not ready: it waits for answers to its open questions. Running
 * it is a 409 that says how to complete it (the same judge then runs).
 */
export function assertRunnable(judge: JudgeRecord): void {
  if (judge.generation?.status !== 'draft') return;
  const open = judge.generation.open_questions;
  const names = open.map((q) => q.form_field_name);
  throw new TribunalError(
    'conflict',
    409,
    `Judge ${judge.name} (${judge.id}) is a draft made by generate_judge, waiting for answers to ${names.length === 1 ? 'one question' : `${names.length} questions`} ` +
      `(${names.join(', ')}), so it cannot run yet. Complete it with generate_judge (REST: POST /v1/judges/generate/): the same intent, ` +
      `judge_id ${JSON.stringify(judge.id)} and extra_contexts keyed by ${names.map((n) => JSON.stringify(n)).join(', ')}; the completed judge keeps this id and runs.`,
    { extra: { judge_id: judge.id, missing_context_from_system_goal: open } },
  );
}

/** Judges as a versioned resource (versioned.ts): the caller's own first, then other organizations' public ones. */
const JUDGES: VersionedKind<JudgeRecord> = {
  noun: 'judge',
  get: (store, id) => store.getJudge(id),
  getVersion: (store, id, version) => store.getJudgeVersion(id, version),
  listVersions: (store, id) => store.listJudgeVersions(id),
  named: async (ctx, name) => (await ctx.store.listJudges({ org_id: ctx.caller.org.id, include_public: true, name }, { limit: 20 })).items,
  candidates(ctx, items) {
    const own = items.filter((j) => j.org_id === ctx.caller.org.id);
    return own.length ? own : items;
  },
  editable: (ctx, id) => getEditableJudge(ctx, id),
  update: (store, next, expected) => store.updateJudge(next, expected),
  fields: ['name', 'intent', 'stage', 'visibility', 'project_id', 'evaluators', 'generation', 'guardrail'], // guardrail: h-proxy
  conflictHint: 'choose another name or edit the existing judge.',
};

export const getVisibleJudge = (ctx: Ctx, id: string, version?: number): Promise<JudgeRecord> => getVisible(JUDGES, ctx, id, version);

/** Every version the caller may read, newest first (versions saved private are its owner's only). */
export const listVisibleJudgeVersions = (ctx: Ctx, idOrName: string): Promise<JudgeRecord[]> => listVisibleVersions(JUDGES, ctx, idOrName);

/** By id, or by exact name: the caller's own judges first, then other organizations' public ones. */
export const resolveJudge = (ctx: Ctx, ref: { id?: string; name?: string }, version?: number): Promise<JudgeRecord> => resolve(JUDGES, ctx, ref, version);

/**
 * The evaluators a judge applies, at the versions it runs: pinned ones at their pin, the rest at
 * their latest. An evaluator deleted or made private since is reported, not silently skipped.
 * Each evaluator version is checked against the caller, never against the judge's organization:
 * an old (or pinned) version of another organization's judge may apply evaluators that are private.
 */
export async function loadJudgeEvaluators(ctx: Ctx, judge: JudgeRecord): Promise<Array<EvaluatorRecord & { pinned_version: number | null }>> {
  return Promise.all(
    judge.evaluators.map(async (ref) => {
      const latest = await ctx.store.getEvaluator(ref.id);
      if (!latest) {
        throw new TribunalError('conflict', 409, `Judge ${judge.name} refers to evaluator ${ref.name} (${ref.id}), which no longer exists; update the judge's evaluator list.`);
      }
      const rec = ref.version === null || ref.version === latest.version ? latest : await ctx.store.getEvaluatorVersion(ref.id, ref.version);
      if (!rec) throw new TribunalError('conflict', 409, `Judge ${judge.name} pins evaluator ${ref.name} at version ${ref.version}, which does not exist.`);
      if (!canRead(ctx, rec)) {
        throw new TribunalError(
          'conflict',
          409,
          `Judge ${judge.name} applies evaluator ${ref.name} (${ref.id}) at a version that is private to its organization, so it cannot be shown or run for you.`,
        );
      }
      // The store may answer a read-only snapshot (the JSON store's latest version, json-snapshots.ts),
      // so the pin goes on a shallow copy. Object.assign onto a new object: a spread then a field in
      // one literal got a map of its own every time on Node 20 (V8 11.3), and each evaluator of every
      // run went through the engine with a new shape.
      return Object.assign({}, rec, { pinned_version: ref.version }) as EvaluatorRecord & { pinned_version: number | null };
    }),
  );
}

export async function judgeInFull(ctx: Ctx, judge: JudgeRecord): Promise<JudgeFull> {
  const evaluators = await loadJudgeEvaluators(ctx, judge);
  return { ...judgeToWire(judge), evaluators: evaluators.map((e) => ({ ...evaluatorToWire(e), pinned_version: e.pinned_version })) };
}

/** Turns the caller's evaluator list (ids or exact names) into references, checking each is usable. */
async function buildRefs(ctx: WriteCtx, evaluatorIds: string[], pin: boolean, visibility: 'private' | 'public'): Promise<EvaluatorRef[]> {
  if (!evaluatorIds.length) throw validationError('A judge needs at least one evaluator.', [{ field: 'evaluator_ids', message: 'at least one' }]);
  const max = ctx.config.limits.judgeEvaluators;
  if (evaluatorIds.length > max) {
    throw validationError(`A judge applies at most ${max} evaluators (TRIBUNAL_MAX_JUDGE_EVALUATORS) and evaluator_ids has ${evaluatorIds.length}; split it into several judges.`, [
      { field: 'evaluator_ids', message: `at most ${max}` },
    ]);
  }
  const seen = new Set<string>();
  const refs: EvaluatorRef[] = [];
  for (const [i, idOrName] of evaluatorIds.entries()) {
    let evaluator: EvaluatorRecord;
    try {
      evaluator = await resolveEvaluator(ctx, (await ctx.store.getEvaluator(idOrName)) ? { id: idOrName } : { name: idOrName });
    } catch (err) {
      if (err instanceof TribunalError && err.code === 'not_found') {
        throw validationError(`evaluator_ids.${i}: ${err.message}`, [{ field: `evaluator_ids.${i}`, message: 'unknown evaluator' }]);
      }
      throw err;
    }
    if (seen.has(evaluator.id)) continue;
    seen.add(evaluator.id);
    if (visibility === 'public' && evaluator.visibility !== 'public') {
      throw validationError(`A public judge can only apply public evaluators, and ${evaluator.name} (${evaluator.id}) is private; make it public or keep the judge private.`, [
        { field: `evaluator_ids.${i}`, message: 'private evaluator in a public judge' },
      ]);
    }
    refs.push({ id: evaluator.id, name: evaluator.name, version: pin ? evaluator.version : null });
  }
  return refs;
}

const conflict = (err: unknown) => conflictToError(err, JUDGES.conflictHint);

export interface JudgeInput {
  name: string;
  intent: string;
  evaluator_ids: string[];
  stage?: string | null;
  visibility?: 'private' | 'public';
  project_id?: string;
  pin_versions?: boolean;
  /** h-proxy: the judge proxy's guardrail (SPEC section 13); null clears it. */
  guardrail?: Guardrail | null;
}

/** `generation` is set only by generate_judge; hand-made judges have none (it is not part of JudgeInput). */
export async function createJudge(ctx: WriteCtx, input: JudgeInput, generation: JudgeGeneration | null = null): Promise<JudgeRecord> {
  const visibility = effectiveVisibility(ctx, input.visibility);
  const now = new Date().toISOString();
  const record: JudgeRecord = {
    id: newId('jdg'),
    org_id: ctx.caller.org.id,
    name: input.name,
    intent: input.intent,
    stage: input.stage ?? null,
    visibility,
    project_id: await resolveProjectId(ctx, input.project_id),
    evaluators: await buildRefs(ctx, input.evaluator_ids, input.pin_versions ?? false, visibility),
    generation,
    ...(input.guardrail ? { guardrail: input.guardrail } : {}), // h-proxy
    version: 1,
    created_at: now,
    updated_at: now,
  };
  try {
    await ctx.store.createJudge(record);
  } catch (err) {
    throw conflict(err);
  }
  return record;
}

export async function getEditableJudge(ctx: Ctx, id: string): Promise<JudgeRecord> {
  const current = await getVisibleJudge(ctx, id);
  if (current.org_id !== ctx.caller.org.id) throw permissionDenied(`Judge ${current.name} belongs to another organization; it is public to read and run, not to edit.`);
  return current;
}

/** Applies a change to the latest version, bumping `version` when anything changed. */
export function reviseJudge(ctx: Ctx, id: string, change: (current: JudgeRecord) => Promise<JudgeRecord>): Promise<JudgeRecord> {
  return revise(JUDGES, ctx, id, change);
}

/**
 * A hand edit never touches `generation`: a generated judge stays generated, and a draft stays a
 * draft (still refused by run_judge) until generate_judge completes it, whatever was edited.
 */
export async function updateJudge(ctx: WriteCtx, id: string, patch: Partial<JudgeInput>): Promise<JudgeRecord> {
  return reviseJudge(ctx, id, async (next) => {
    if (patch.name !== undefined) next.name = patch.name;
    if (patch.intent !== undefined) next.intent = patch.intent;
    if (patch.stage !== undefined) next.stage = patch.stage;
    if (patch.guardrail !== undefined) next.guardrail = patch.guardrail; // h-proxy
    if (patch.project_id !== undefined) next.project_id = await resolveProjectId(ctx, patch.project_id);
    next.visibility = effectiveVisibility(ctx, patch.visibility ?? next.visibility);
    if (patch.evaluator_ids !== undefined || patch.pin_versions !== undefined || next.visibility !== 'private') {
      const ids = patch.evaluator_ids ?? next.evaluators.map((e) => e.id);
      const pin = patch.pin_versions ?? next.evaluators.some((e) => e.version !== null);
      const refs = await buildRefs(ctx, ids, pin, next.visibility);
      // Keep existing pins for evaluators that stay, unless pinning was switched explicitly.
      next.evaluators = patch.pin_versions === undefined ? refs.map((r) => ({ ...r, version: next.evaluators.find((e) => e.id === r.id)?.version ?? r.version })) : refs;
      if (next.visibility === 'public') await assertPinsPublic(ctx, next.evaluators);
    }
    return next;
  });
}

/** A kept pin may name a version saved private before the evaluator was made public. */
async function assertPinsPublic(ctx: Ctx, refs: EvaluatorRef[]): Promise<void> {
  for (const [i, ref] of refs.entries()) {
    if (ref.version === null) continue;
    const pinned = await ctx.store.getEvaluatorVersion(ref.id, ref.version);
    if (pinned && pinned.visibility !== 'public') {
      throw validationError(
        `A public judge can only apply public evaluator versions, and ${ref.name} (${ref.id}) is pinned at version ${ref.version}, which was saved private; pin its latest version (pin_versions: true) or keep the judge private.`,
        [{ field: `evaluator_ids.${i}`, message: 'pinned at a private version' }],
      );
    }
  }
}

/** Deletes the judge given by id or exact name; answers its id. */
export async function deleteJudge(ctx: Ctx, id: string): Promise<string> {
  const judge = await getEditableJudge(ctx, id);
  await ctx.store.deleteJudge(judge.id);
  return judge.id;
}
