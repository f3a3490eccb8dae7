// Names are accepted wherever ids are. Paths and get/update/delete resolve through getVisibleJudge and
// getVisibleEvaluator; the log filters are resolved here, so `?judge_id=Support replies` filters by
// that judge instead of answering an empty page (no log has a name for an id).
import { looksLikeId } from '../ids.ts';
import type { RequestContext } from '../context.ts';
import { resolveEvaluator } from './evaluators.ts';
import { resolveJudge } from './judges.ts';

type Ctx = Pick<RequestContext, 'store' | 'caller'>;

/**
 * The filter with an exact judge or evaluator name replaced by its id. A name no visible judge has is
 * a 404 and several public ones of that name a 400 listing their ids, never an empty success.
 */
export async function filterIdsForNames<Q extends { judge_id?: string; evaluator_id?: string }>(ctx: Ctx, filter: Q): Promise<Q> {
  const resolved = { ...filter };
  if (filter.judge_id && !looksLikeId(filter.judge_id)) resolved.judge_id = (await resolveJudge(ctx, { name: filter.judge_id })).id;
  if (filter.evaluator_id && !looksLikeId(filter.evaluator_id)) resolved.evaluator_id = (await resolveEvaluator(ctx, { name: filter.evaluator_id })).id;
  return resolved;
}
