// Importing a judge file (SPEC section 16): evaluators are matched by exact name within the caller's
// organization (updated when their content differs, created when absent), presets by name; then the
// judge by name. A dry run answers the same plan without writing. Importing a document twice changes
// nothing the second time: every comparison is on the normalized content the export writes.
import type { RequestContext } from '../context.ts';
import { createEvaluator, effectiveVisibility, updateEvaluator } from '../domain/evaluators.ts';
import { createJudge, updateJudge } from '../domain/judges.ts';
import { resolveProjectId } from '../domain/projects.ts';
import { validationError } from '../errors.ts';
import type { EvaluatorRecord, JudgeRecord } from '../store/types.ts';
import { normalizeEvaluator, type EvaluatorBody, type ParsedDocument } from './files.ts';

type WriteCtx = Pick<RequestContext, 'store' | 'caller' | 'config'>;

export interface FieldChange {
  field: string;
  from: unknown;
  to: unknown;
}
export interface PlannedItem {
  kind: 'judge' | 'evaluator';
  name: string;
  /** null for what a dry run would create. */
  id: string | null;
  changes?: FieldChange[];
}
export interface ImportResult {
  dry_run: boolean;
  judge_id: string | null;
  evaluator_id: string | null;
  created: PlannedItem[];
  updated: PlannedItem[];
  unchanged: PlannedItem[];
}

const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);

async function ownByName<T extends 'evaluator' | 'judge'>(ctx: WriteCtx, kind: T, name: string): Promise<(T extends 'judge' ? JudgeRecord : EvaluatorRecord) | null> {
  const filter = { org_id: ctx.caller.org.id, include_public: false, name };
  const page = kind === 'judge' ? await ctx.store.listJudges(filter, { limit: 1 }) : await ctx.store.listEvaluators(filter, { limit: 1 });
  return (page.items[0] as never) ?? null;
}

function evaluatorChanges(ctx: WriteCtx, current: EvaluatorRecord, body: EvaluatorBody): FieldChange[] {
  const now = normalizeEvaluator(current) as Record<string, unknown>;
  const next = normalizeEvaluator(body) as Record<string, unknown>;
  const changes = Object.keys(next)
    .filter((f) => !same(now[f], next[f]))
    .map((field) => ({ field, from: now[field], to: next[field] }));
  if (body.visibility !== undefined && effectiveVisibility(ctx, body.visibility) !== current.visibility) {
    changes.push({ field: 'visibility', from: current.visibility, to: effectiveVisibility(ctx, body.visibility) });
  }
  return changes;
}

/** Plans (and, unless dry, applies) one evaluator; answers its id (null when a dry run would create it). */
async function importEvaluator(ctx: WriteCtx, body: EvaluatorBody, dry: boolean, projectId: string | undefined, out: ImportResult): Promise<string | null> {
  const current = await ownByName(ctx, 'evaluator', body.name);
  const content = { ...normalizeEvaluator(body), name: body.name };
  if (!current) {
    const id = dry
      ? null
      : (
          await createEvaluator(ctx, {
            ...content,
            models: content.models ?? undefined,
            aggregation: content.aggregation ?? undefined,
            visibility: body.visibility,
            project_id: projectId,
          })
        ).id;
    out.created.push({ kind: 'evaluator', name: body.name, id });
    return id;
  }
  const changes = evaluatorChanges(ctx, current, body);
  if (!changes.length) {
    out.unchanged.push({ kind: 'evaluator', name: body.name, id: current.id });
    return current.id;
  }
  if (!dry) {
    const patch = Object.fromEntries(changes.map((c) => [c.field, c.to]));
    await updateEvaluator(ctx, current.id, patch);
  }
  out.updated.push({ kind: 'evaluator', name: body.name, id: current.id, changes });
  return current.id;
}

async function presetId(ctx: WriteCtx, name: string, path: string): Promise<{ id: string; name: string }> {
  const { items } = await ctx.store.listEvaluators({ org_id: ctx.caller.org.id, include_public: true, name, is_preset: true }, { limit: 2 });
  const preset = items.find((e) => e.is_preset);
  if (!preset)
    throw validationError(`${path}.preset: no shipped preset is named ${JSON.stringify(name)} (GET /v1/evaluators/ lists them; names are exact).`, [
      { field: `${path}.preset`, message: 'unknown preset' },
    ]);
  return { id: preset.id, name: preset.name };
}

export async function importDocument(ctx: WriteCtx, doc: ParsedDocument, opts: { dry_run: boolean; project_id?: string }): Promise<ImportResult> {
  const out: ImportResult = { dry_run: opts.dry_run, judge_id: null, evaluator_id: null, created: [], updated: [], unchanged: [] };
  // A wrong project is refused before anything is written.
  if (opts.project_id) await resolveProjectId(ctx, opts.project_id);
  if (doc.kind === 'evaluator') {
    out.evaluator_id = await importEvaluator(ctx, doc.evaluator, opts.dry_run, opts.project_id, out);
    return out;
  }
  const { judge } = doc;
  // Presets first: an unknown one is refused before anything is written.
  const presets = await Promise.all(judge.evaluators.map((e, i) => ('preset' in e ? presetId(ctx, e.preset, `judge.evaluators.${i}`) : null)));
  const refs: Array<{ id: string | null; name: string }> = [];
  for (const [i, entry] of judge.evaluators.entries()) {
    const preset = presets[i];
    if (preset) refs.push(preset);
    else if (!('preset' in entry)) refs.push({ id: await importEvaluator(ctx, entry, opts.dry_run, opts.project_id, out), name: entry.name });
  }
  const current = await ownByName(ctx, 'judge', judge.name);
  if (!current) {
    const created = opts.dry_run
      ? null
      : await createJudge(ctx, {
          name: judge.name,
          intent: judge.intent,
          stage: judge.stage ?? null,
          visibility: judge.visibility,
          project_id: opts.project_id,
          evaluator_ids: refs.map((r) => r.id!),
        });
    out.judge_id = created?.id ?? null;
    out.created.push({ kind: 'judge', name: judge.name, id: out.judge_id });
    return out;
  }
  const changes: FieldChange[] = [];
  if (current.intent !== judge.intent) changes.push({ field: 'intent', from: current.intent, to: judge.intent });
  if (current.stage !== (judge.stage ?? null)) changes.push({ field: 'stage', from: current.stage, to: judge.stage ?? null });
  if (judge.visibility !== undefined && effectiveVisibility(ctx, judge.visibility) !== current.visibility) {
    changes.push({ field: 'visibility', from: current.visibility, to: effectiveVisibility(ctx, judge.visibility) });
  }
  if (
    !same(
      current.evaluators.map((e) => e.id),
      refs.map((r) => r.id),
    )
  ) {
    changes.push({ field: 'evaluators', from: current.evaluators.map((e) => e.name), to: refs.map((r) => r.name) });
  }
  out.judge_id = current.id;
  if (!changes.length) {
    out.unchanged.push({ kind: 'judge', name: judge.name, id: current.id });
    return out;
  }
  if (!opts.dry_run) {
    await updateJudge(ctx, current.id, {
      intent: judge.intent,
      stage: judge.stage ?? null,
      ...(judge.visibility ? { visibility: judge.visibility } : {}),
      evaluator_ids: refs.map((r) => r.id!),
    });
  }
  out.updated.push({ kind: 'judge', name: judge.name, id: current.id, changes });
  return out;
}
