// Closing the loop (issue 31 item 4): from a queue's adjudicated items, one action builds or extends a
// calibration dataset (the adjudicated scores become expected_scores, as from-annotations does) and
// starts a calibration run of the queue's judge (or of each of its evaluators). The existing improve
// step (POST /v1/calibration-runs/{id}/demonstrations/) then turns the largest disagreements into
// demonstrations, and the next run shows before and after side by side, each with its intervals.
import { itemsFromAnnotations } from '../calibration/annotations.ts';
import { getDatasetItems } from '../calibration/items.ts';
import { startCalibrationRun } from '../calibration/runs.ts';
import type { RequestContext } from '../context.ts';
import { createDataset, getOwnDataset } from '../datasets/datasets.ts';
import type { ScoringEngine } from '../runs/types.ts';
import { validationError } from '../errors.ts';
import { adjudicateItem, listDisagreements } from './adjudication.ts';
import { getOwnQueue } from './queues.ts';
import { reviewStore } from './store.ts';

type LoopCtx = RequestContext & { engine: Pick<ScoringEngine, 'assertCanScore'> };

export interface LoopInput {
  dataset_id?: string;
  dataset_name?: string;
  threshold?: number;
  /** Adjudicate done items the people agree on (spread below this) with their mean first; default 0.25, null = off. */
  auto_adjudicate_below?: number | null;
}

export async function calibrateFromQueue(ctx: LoopCtx, queueId: string, input: LoopInput) {
  const q = await getOwnQueue(ctx, queueId);
  if (input.dataset_id !== undefined && input.dataset_name !== undefined) {
    throw validationError('Give dataset_id (to extend a dataset) or dataset_name (for a new one), not both.', [{ field: 'dataset_id', message: 'not with dataset_name' }]);
  }
  const rs = reviewStore(ctx.store);
  const items = [];
  let after: { created_at: string; id: string } | undefined;
  do {
    const page = await rs.listItems(q.id, { limit: 1000, after });
    items.push(...page.items);
    after = page.last;
  } while (after);

  // Done items the people agree on: adjudicated with their mean (disagreements wait for a person).
  let autoAdjudicated = 0;
  const below = input.auto_adjudicate_below === undefined ? 0.25 : input.auto_adjudicate_below;
  if (below !== null) {
    const disputed = new Set((await listDisagreements(ctx, q.id, { min_spread: below, include_adjudicated: true, limit: 1_000_000 })).results.map((d) => d.item_id));
    for (const item of items) {
      if (item.adjudicated_at || item.done < q.annotators_per_item || disputed.has(item.id)) continue;
      await adjudicateItem(ctx, q.id, item.id, []);
      item.adjudicated_at = new Date().toISOString();
      autoAdjudicated++;
    }
  }
  const adjudicated = items.filter((i) => i.adjudicated_at);
  if (!adjudicated.length) {
    throw validationError(`Review queue ${q.id} has no adjudicated item yet: score items (next/, then annotations/), then adjudicate disagreements (adjudicate/).`, [
      { field: 'queue_id', message: 'no adjudicated items' },
    ]);
  }

  const dataset =
    input.dataset_id !== undefined
      ? await getOwnDataset(ctx, input.dataset_id)
      : await createDataset(ctx, {
          name: input.dataset_name ?? `${q.name} (review ${new Date().toISOString().slice(0, 16)})`,
          description: `Adjudicated items of review queue ${q.id}`,
        });
  // Logs already in the dataset are not copied twice (an extended dataset keeps its items).
  const present = new Set<string>();
  for await (const item of getDatasetItems(ctx.store, dataset.id)) {
    const logId = (item.metadata as { execution_log_id?: unknown } | null | undefined)?.execution_log_id;
    if (typeof logId === 'string') present.add(logId);
  }
  const annotationIds: string[] = [];
  for (const item of adjudicated) {
    if (present.has(item.execution_log_id)) continue;
    const found = await ctx.store.listAnnotations({ org_id: ctx.caller.org.id, execution_log_id: item.execution_log_id }, { limit: 200 });
    annotationIds.push(...found.items.filter((a) => q.evaluator_ids.includes(a.evaluator_id)).map((a) => a.id));
  }
  const copied = annotationIds.length ? await itemsFromAnnotations(ctx, dataset.id, { annotation_ids: annotationIds }) : { created: 0 };

  const targets = q.judge_id ? [{ judge_id: q.judge_id }] : q.evaluator_ids.map((evaluator_id) => ({ evaluator_id }));
  const runs = [];
  for (const t of targets) runs.push(await startCalibrationRun(ctx, { ...t, dataset_id: dataset.id, threshold: input.threshold }));
  return { dataset_id: dataset.id, items_added: copied.created, auto_adjudicated: autoAdjudicated, calibration_runs: runs };
}
