// Provider batches of a batch run in mode provider_batch (issue 32, src/batch/provider-*.ts): which
// provider batch carries which requests of the run. Stored BEFORE the submit call (status
// `submitting`, no provider id yet) and given its provider id as soon as the provider answers, so that
// a server killed mid-wait polls the same batch again after a restart and never submits a request twice.

export type ProviderBatchState = 'submitting' | 'in_progress' | 'canceling' | 'ended' | 'failed';

export interface ProviderBatchRecord {
  /** Tribunal's own id (pbt_...), known before the provider's. */
  id: string;
  /** The batch run whose rows it carries. */
  batch_id: string;
  org_id: string;
  provider: 'anthropic' | 'openai';
  /** Which model account it went to: `server:<model>` or a registered model's id. */
  account: string;
  /** The provider's batch id; null until the submit call answered. */
  provider_batch_id: string | null;
  status: ProviderBatchState;
  /** The requests it carries: `r<position>-<hash of the call>` (provider-model.ts). */
  custom_ids: string[];
  /** Why it failed (a submit refused, results unreadable); null otherwise. */
  error: string | null;
  created_at: string;
  updated_at: string;
}

export type ProviderBatchPatch = Partial<Pick<ProviderBatchRecord, 'provider_batch_id' | 'status' | 'error'>>;
