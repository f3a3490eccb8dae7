// Mode provider_batch (issue 32, SPEC section 18) as the batch runs use it: the check when a run
// starts, the row options of a chunk (its calls through the provider's batch API), the cancel of the
// provider's batches, and the run's read (`mode`, `provider_batches`). The provider batches
// themselves: provider-hub.ts; the swapped judge model: provider-model.ts.
import type { BatchGate } from '../engine/providers/resilient-model.ts';
import type { Caller } from '../auth.ts';
import type { RequestContext } from '../context.ts';
import { loadJudgeEvaluators } from '../domain/judges.ts';
import { log } from '../log.ts';
import type { RunOptions } from '../runs/types.ts';
import type { BatchExecution } from '../schemas/batches.ts';
import type { BatchExecutionRecord, EvaluatorRecord, JudgeRecord, Store } from '../store/types.ts';
import { hubFor } from './provider-hub.ts';
import { accountByKey, providerAccounts, providerRetarget } from './provider-model.ts';

export type BatchMode = 'live' | 'provider_batch';
export const modeOf = (batch: Pick<BatchExecutionRecord, 'mode'>): BatchMode => batch.mode ?? 'live';

type Ctx = Pick<RequestContext, 'store' | 'caller' | 'config'>;
type Target = { judge: JudgeRecord } | { evaluator: EvaluatorRecord };

const evaluatorsOf = (ctx: Ctx, target: Target) => ('judge' in target ? loadJudgeEvaluators(ctx as RequestContext, target.judge) : Promise.resolve([target.evaluator]));

/** When a provider_batch run starts: every model must have a batch API (400 naming the one that has not). */
export async function assertProviderBatchable(ctx: Ctx, target: Target): Promise<void> {
  await providerAccounts(ctx, await evaluatorsOf(ctx, target));
}

/**
 * The run options of each row of a chunk of a provider_batch run (null for a live run): the row's
 * model calls go to this process's hub, each after `gate` (the run's cancel check). Throws when a model lost its batch API since the start.
 */
export async function providerRowOptions(
  ctx: Omit<RequestContext, 'caller'>,
  caller: Caller,
  batch: BatchExecutionRecord,
  target: Target,
  gate: BatchGate,
): Promise<((position: number) => NonNullable<RunOptions['retarget']>) | null> {
  if (modeOf(batch) !== 'provider_batch') return null;
  const c = { ...ctx, caller };
  const accounts = await providerAccounts(c, await evaluatorsOf(c, target), false);
  const hub = hubFor(ctx.store, ctx.config.batch.providerPollMs);
  return (position) => providerRetarget(hub, batch, position, accounts, gate);
}

/** After a cancel: the run's provider batches still running are cancelled at the provider too (a failure is logged, the cancel stands). */
export async function cancelProviderBatches(ctx: Ctx, batch: BatchExecutionRecord): Promise<void> {
  if (modeOf(batch) !== 'provider_batch') return;
  await hubFor(ctx.store, ctx.config.batch.providerPollMs)
    .cancelRun(batch.id, (key) => accountByKey(ctx, key))
    .catch((err) => log.warn(`batch ${batch.id}: cancelling its provider batches failed (${(err as Error).message}); they end by themselves`));
}

/** The run's read with its mode and, in provider_batch mode, its provider batches (the provider's id once it has one). */
export async function withProviderBatches(store: Store, wire: BatchExecution): Promise<BatchExecution> {
  if (wire.mode !== 'provider_batch') return wire;
  const records = await store.listProviderBatches(wire.id);
  return { ...wire, provider_batches: records.map((r) => ({ id: r.provider_batch_id ?? r.id, status: r.status, requests: r.custom_ids.length })) };
}
