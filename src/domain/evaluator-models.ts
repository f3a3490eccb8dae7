// The rules of an evaluator's judge models beyond `model` (SPEC section 11, docs/MODELS.md): a jury
// (`models`, 2 to 5 distinct names, each registered in the caller's organization or allowed by the
// server, with an `aggregation`) instead of `model`, never both; and `scoring: "logprobs"`, refused
// when a named model is known to return no token log-probabilities: the server's own model and
// registered `anthropic` models (the Messages API has none), and registered models whose verify
// found none. A registered `openai` model not verified yet is accepted; a run then fails with a
// clear error if its server sends none (engine/logprobs.ts), never falling back to direct scoring.
import type { RequestContext } from '../context.ts';
import { validationError } from '../errors.ts';
import type { EvaluatorRecord } from '../store/types.ts';

type WriteCtx = Pick<RequestContext, 'store' | 'caller' | 'config'>;

export type EvaluatorModelFields = Pick<EvaluatorRecord, 'model' | 'models' | 'aggregation' | 'scoring'>;

/** The most jurors an evaluator may name. */
export const MAX_JURORS = 5;
/** Create: the jury's aggregation defaults to mean; fields not given are not stored. */
export function modelFieldsForCreate(input: Partial<EvaluatorModelFields>): Partial<EvaluatorModelFields> {
  const fields: Partial<EvaluatorModelFields> = {};
  if (input.models) fields.models = input.models;
  if (input.models || input.aggregation) fields.aggregation = input.aggregation ?? (input.models ? 'mean' : null);
  if (input.scoring) fields.scoring = input.scoring;
  return fields;
}

/** Update: clearing the jury (models null) clears its aggregation unless one is given; a new jury defaults to mean. */
export function applyModelPatch(next: EvaluatorRecord, patch: Partial<EvaluatorModelFields>): void {
  if (patch.models === null && patch.aggregation === undefined && next.aggregation) next.aggregation = null;
  if (patch.models && !next.aggregation) next.aggregation = 'mean';
}

const touches = (patch: Partial<EvaluatorModelFields>) => (['model', 'models', 'aggregation', 'scoring'] as const).some((f) => patch[f] !== undefined);

/**
 * Checks the evaluator's model fields as they will be stored. On update only when the patch touches
 * one of them, and the names only when it names models, so an evaluator stays editable after an
 * operator narrows the allowed models.
 */
export async function checkModelFields(ctx: WriteCtx, fields: EvaluatorModelFields, patch: Partial<EvaluatorModelFields> = fields): Promise<void> {
  if (!touches(patch)) return;
  const models = fields.models ?? null;
  if (models && fields.model) {
    throw validationError('Give either model (one judge model) or models (a jury), not both; set model to null to make a jury.', [
      { field: 'model', message: 'not allowed together with models' },
      { field: 'models', message: 'not allowed together with model' },
    ]);
  }
  if (!models && fields.aggregation) {
    throw validationError('aggregation applies to a jury: give models (2 to 5 model names) too, or leave aggregation out.', [{ field: 'aggregation', message: 'needs models' }]);
  }
  if (models) {
    if (models.length < 2 || models.length > MAX_JURORS) {
      throw validationError(`A jury has 2 to ${MAX_JURORS} models; ${models.length} given (use model for a single one).`, [
        { field: 'models', message: `2 to ${MAX_JURORS} names` },
      ]);
    }
    const duplicate = models.find((m, i) => models.indexOf(m) !== i);
    if (duplicate !== undefined) {
      throw validationError(`models names ${JSON.stringify(duplicate)} twice; a jury's models are distinct.`, [{ field: 'models', message: 'duplicate name' }]);
    }
  }
  // Names are checked when the patch names models; a scoring change alone checks only log-probabilities.
  const checkNames = patch.model !== undefined || patch.models !== undefined;
  const named = models ?? [fields.model ?? null];
  const allowed = ctx.config.model.allowed;
  for (const [i, name] of named.entries()) {
    const field = models ? `models.${i}` : 'model';
    const registered = name === null ? null : await ctx.store.getModelByName(ctx.caller.org.id, name);
    if (checkNames && name !== null && !registered && !allowed.includes(name)) {
      throw validationError(
        `model ${JSON.stringify(name)} is neither a model your organization registered (GET /v1/models/) nor one this server allows (${allowed.join(', ')}); register it, or name another.`,
        [{ field, message: 'not a registered or allowed model (TRIBUNAL_ALLOWED_MODELS)' }],
      );
    }
    if (fields.scoring !== 'logprobs') continue;
    const what = name === null ? "the server's default model" : `model ${JSON.stringify(name)}`;
    const lacks = !registered
      ? `${what} is the server's own Anthropic model, and the Messages API returns no token log-probabilities`
      : registered.provider === 'anthropic'
        ? `${what} uses the anthropic provider, and the Messages API returns no token log-probabilities`
        : registered.capabilities && !registered.capabilities.logprobs
          ? `${what} was verified (${registered.verified_at ?? 'earlier'}) and its server returns no token log-probabilities`
          : null;
    if (lacks) {
      throw validationError(
        `scoring "logprobs" needs a model that returns token log-probabilities: ${lacks}. Name a registered openai-provider model that does (verify shows capabilities.logprobs), or use scoring "direct".`,
        [
          { field: 'scoring', message: 'the model returns no log-probabilities' },
          { field: name === null ? 'model' : field, message: 'returns no log-probabilities' },
        ],
      );
    }
  }
}
