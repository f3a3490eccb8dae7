// The loop that improves a judge (issue 15): items of a calibration run where judge and person
// disagree become demonstrations of the evaluator — the person's score, with their note as the
// justification — through the ordinary evaluator update, so the result is a new version (same
// visibility and ownership rules) and the next calibration run on the dataset measures it.
import type { RequestContext } from '../context.ts';
import { getEditableEvaluator, updateEvaluator } from '../domain/evaluators.ts';
import { bandOf, parseBands } from '../domain/rubric-bands.ts';
import { notFound, TribunalError, validationError } from '../errors.ts';
import type { Demonstration } from '../schemas.ts';
import { expectedFor, noteFor, ownRun } from './runs.ts';

/** The most demonstrations an evaluator holds (create_evaluator's limit). */
export const MAX_DEMONSTRATIONS = 20;

export interface DemonstrationsResult {
  evaluators: Array<{ evaluator_id: string; evaluator_name: string; version: number; added: number; demonstrations: number }>;
  next: string;
}

/** "... Band: LOW." when the rubric names bands (generated judges' rubrics do), so the example states its band as theirs do. */
function withBand(rubric: string, score: number, text: string): string {
  try {
    const band = bandOf(parseBands(rubric), score);
    return band ? `${text} Band: ${band.name}.` : text;
  } catch {
    return text;
  }
}

export async function demonstrationsFromRun(
  ctx: Pick<RequestContext, 'store' | 'caller' | 'config'>,
  runId: string,
  chosen: Array<{ item_id: string; evaluator_id: string }>,
): Promise<DemonstrationsResult> {
  const run = await ownRun(ctx, runId);
  if (run.status !== 'completed') {
    throw new TribunalError('conflict', 409, `Calibration run ${run.id} is ${run.status}; demonstrations come from a completed run.`);
  }
  const byEvaluator = new Map<string, Array<{ demo: Demonstration; index: number }>>();
  for (const [index, pick] of chosen.entries()) {
    const ref = run.evaluator_versions.find((r) => r.evaluator_id === pick.evaluator_id || r.evaluator_name === pick.evaluator_id);
    if (!ref)
      throw validationError(`items.${index}: evaluator ${JSON.stringify(pick.evaluator_id)} was not measured by this run.`, [
        { field: `items.${index}.evaluator_id`, message: 'not in this run' },
      ]);
    const item = await ctx.store.getDatasetItem(run.dataset_id, pick.item_id);
    if (!item) throw notFound(`Item of dataset ${run.dataset_id}`, pick.item_id);
    const expected = expectedFor(item, ref);
    if (expected === null) {
      throw validationError(`items.${index}: item ${item.id} has no expected score for ${ref.evaluator_name}, so there is no person's verdict to teach.`, [
        { field: `items.${index}.item_id`, message: 'no expected score for this evaluator' },
      ]);
    }
    const note = noteFor(item, ref.evaluator_id);
    const demo: Demonstration = {
      ...(item.response !== null ? { response: item.response } : {}),
      ...(item.turns?.length ? { turns: item.turns } : {}),
      ...(item.system_prompt ? { system_prompt: item.system_prompt } : {}),
      ...(item.request !== null ? { request: item.request } : {}),
      ...(item.contexts ? { contexts: item.contexts } : {}),
      ...(item.expected_output !== null ? { expected_output: item.expected_output } : {}),
      score: expected,
      justification: note ?? `A person reviewing this response scored it ${expected}.`,
    };
    const list = byEvaluator.get(ref.evaluator_id) ?? [];
    list.push({ demo, index });
    byEvaluator.set(ref.evaluator_id, list);
  }
  // Check every evaluator before changing any, so that a refusal changes nothing.
  const plans = [];
  for (const [evaluatorId, picks] of byEvaluator) {
    const current = await getEditableEvaluator(ctx, evaluatorId);
    const same = (a: Demonstration, b: Demonstration) =>
      a.response === b.response && a.request === b.request && JSON.stringify(a.turns) === JSON.stringify(b.turns) && a.score === b.score;
    const fresh = picks
      .map((p) => ({ ...p.demo, justification: withBand(current.rubric, p.demo.score, p.demo.justification!) }))
      .filter((d, i, all) => !current.demonstrations.some((c) => same(c, d)) && all.findIndex((x) => same(x, d)) === i);
    if (current.demonstrations.length + fresh.length > MAX_DEMONSTRATIONS) {
      throw validationError(
        `Evaluator ${current.name} has ${current.demonstrations.length} demonstrations and may hold ${MAX_DEMONSTRATIONS}; choose at most ${Math.max(0, MAX_DEMONSTRATIONS - current.demonstrations.length)} items for it, or remove some of its demonstrations first.`,
        [{ field: `items.${picks[0].index}`, message: 'too many demonstrations' }],
      );
    }
    plans.push({ current, fresh });
  }
  const out: DemonstrationsResult['evaluators'] = [];
  for (const { current, fresh } of plans) {
    const updated = fresh.length ? await updateEvaluator(ctx, current.id, { demonstrations: [...current.demonstrations, ...fresh] }) : current;
    out.push({ evaluator_id: updated.id, evaluator_name: updated.name, version: updated.version, added: fresh.length, demonstrations: updated.demonstrations.length });
  }
  const target = run.judge_id ? `judge_id ${JSON.stringify(run.judge_id)}` : `evaluator_id ${JSON.stringify(run.evaluator_id)}`;
  return {
    evaluators: out,
    next:
      `Measure the new version: POST /v1/calibration-runs/ with ${target} and dataset_id ${JSON.stringify(run.dataset_id)}; the new run shows this one's metrics beside its own (previous_metrics). ` +
      'The chosen items now teach the judge, so their agreement on this dataset is no longer an unbiased measure: confirm on labelled items it has not seen.',
  };
}
