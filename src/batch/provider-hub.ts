// Mode provider_batch (issue 32): the provider batches of this process. Rows of a provider_batch run
// are scored by the engine as live rows are; only their judge-model calls come here
// (provider-model.ts). Calls are gathered for a moment per (run, model account), then either found
// in a provider batch the run already has (a restart, a chunk taken over: the same call has the same
// custom id) and followed, or submitted as a new one. The record of a submit is stored BEFORE the
// submit call (status `submitting`) and gets the provider's id as soon as it answers; a batch is then
// polled until it ends and its results answer the waiting calls.
//
// The one window left: a server killed after the provider accepted a batch and before its id was
// stored (one HTTP round trip). Its record stays `submitting`; after `SUBMIT_STALE_MS` it is marked
// failed and its calls are submitted again (docs/COST.md says so).
import { randomUUID } from 'node:crypto';
import { log } from '../log.ts';
import type { StructuredCall } from '../engine/providers/model.ts';
import { AnthropicBatchClient, type BatchOutcome, type ProviderBatch } from '../engine/providers/anthropic-batch.ts';
import { OpenAIBatchClient } from '../engine/providers/openai-batch.ts';
import type { ProviderBatchRecord, Store } from '../store/types.ts';

/** Where a call is submitted: the provider, its key and base URL. `key` names it on the stored record. */
export interface ProviderAccount {
  key: string;
  provider: 'anthropic' | 'openai';
  apiKey: string;
  baseUrl: string | null;
}

/** The provider part (engine/providers/*-batch.ts) as the hub uses it. */
export interface BatchClient {
  submit(requests: Array<{ custom_id: string; call: StructuredCall }>): Promise<ProviderBatch>;
  status(id: string): Promise<ProviderBatch>;
  cancel(id: string): Promise<ProviderBatch>;
  results(id: string, customIds: string[], toolName: string): AsyncGenerator<BatchOutcome>;
}

export function batchClient(account: ProviderAccount): BatchClient {
  if (account.provider === 'openai') return new OpenAIBatchClient({ apiKey: account.apiKey, baseUrl: account.baseUrl });
  const c = new AnthropicBatchClient({ apiKey: account.apiKey, baseUrl: account.baseUrl });
  return { submit: (r) => c.submit(r), status: (id) => c.status(id), cancel: (id) => c.cancel(id), results: (id, _ids, tool) => c.results(id, tool) };
}

/** A call of a stale `submitting` record: asked again, so that it is submitted anew. */
export const RESUBMIT = Symbol('resubmit');
export type HubAnswer = BatchOutcome | typeof RESUBMIT;

/** Calls are submitted together once none has come for this long (a chunk's rows reach their calls at different times). */
const GATHER_MS = 1000;
/** A `submitting` record older than this has lost its submitter (see above). */
export const SUBMIT_STALE_MS = 120_000;
/** Results are kept this long after their batch ended, for calls asked again (a malformed answer's retries). */
const KEEP_RESULTS_MS = 600_000;
const MAX_REQUESTS = { anthropic: 100_000, openai: 50_000 };

interface Group {
  runId: string;
  orgId: string;
  account: ProviderAccount;
  calls: Map<string, StructuredCall>;
  timer?: NodeJS.Timeout;
}

export class ProviderBatchHub {
  private readonly groups = new Map<string, Group>();
  private readonly waiters = new Map<string, Array<(a: HubAnswer) => void>>();
  private readonly results = new Map<string, BatchOutcome>();
  private readonly following = new Set<string>();
  private stopping = false;

  constructor(
    private readonly store: Store,
    private readonly opts: { pollMs: number; clientFor?: (a: ProviderAccount) => BatchClient },
  ) {}

  private client(account: ProviderAccount): BatchClient {
    return (this.opts.clientFor ?? batchClient)(account);
  }

  /** The outcome of one call of a row: found in a provider batch of the run, or submitted with others. */
  ask(run: { id: string; org_id: string }, account: ProviderAccount, customId: string, call: StructuredCall): Promise<HubAnswer> {
    const key = `${run.id}/${customId}`;
    const known = this.results.get(key);
    if (known) return Promise.resolve(known);
    const answer = new Promise<HubAnswer>((resolve) => this.waiters.set(key, [...(this.waiters.get(key) ?? []), resolve]));
    const groupKey = `${run.id}/${account.key}`;
    let group = this.groups.get(groupKey);
    if (!group) this.groups.set(groupKey, (group = { runId: run.id, orgId: run.org_id, account, calls: new Map() }));
    group.calls.set(customId, call);
    if (group.calls.size >= MAX_REQUESTS[account.provider]) this.flushSoon(groupKey, 0);
    else this.flushSoon(groupKey, GATHER_MS);
    return answer;
  }

  private flushSoon(groupKey: string, ms: number): void {
    const group = this.groups.get(groupKey)!;
    clearTimeout(group.timer);
    group.timer = setTimeout(() => {
      this.groups.delete(groupKey);
      this.flush(group).catch((err) => this.answerAll(group.runId, [...group.calls.keys()], (id) => failed(id, `the provider batch was not submitted: ${(err as Error).message}`)));
    }, ms);
  }

  private answer(runId: string, customId: string, a: HubAnswer): void {
    const key = `${runId}/${customId}`;
    if (a !== RESUBMIT) this.results.set(key, a);
    const ws = this.waiters.get(key) ?? [];
    this.waiters.delete(key);
    for (const w of ws) w(a);
  }

  private answerAll(runId: string, ids: string[], make: (id: string) => HubAnswer): void {
    for (const id of ids) this.answer(runId, id, make(id));
  }

  private async flush(group: Group): Promise<void> {
    const tool = [...group.calls.values()][0].tool.name;
    const carried = new Map<string, ProviderBatchRecord>();
    for (const r of await this.store.listProviderBatches(group.runId)) {
      if (r.status === 'failed' || r.account !== group.account.key) continue;
      for (const id of r.custom_ids) carried.set(id, r);
    }
    const fresh: Array<{ custom_id: string; call: StructuredCall }> = [];
    for (const [id, call] of group.calls) {
      const r = carried.get(id);
      if (r) this.follow(r, group.account, tool);
      else fresh.push({ custom_id: id, call });
    }
    if (!fresh.length) return;
    const now = new Date().toISOString();
    const record: ProviderBatchRecord = {
      id: `pbt_${randomUUID().replace(/-/g, '')}`,
      batch_id: group.runId,
      org_id: group.orgId,
      provider: group.account.provider,
      account: group.account.key,
      provider_batch_id: null,
      status: 'submitting',
      custom_ids: fresh.map((f) => f.custom_id),
      error: null,
      created_at: now,
      updated_at: now,
    };
    // Durable before the provider hears of it: a restart finds these calls here and never submits them again.
    await this.store.createProviderBatch(record);
    let submitted: ProviderBatch;
    try {
      submitted = await this.client(group.account).submit(fresh);
    } catch (err) {
      const error = `the ${group.account.provider} batch API refused the submit: ${(err as Error).message}`;
      await this.store.updateProviderBatch(record.id, { status: 'failed', error });
      this.answerAll(group.runId, record.custom_ids, (id) => failed(id, error));
      return;
    }
    const stored = await this.store.updateProviderBatch(record.id, { provider_batch_id: submitted.id, status: submitted.status });
    this.follow(stored ?? { ...record, provider_batch_id: submitted.id, status: submitted.status }, group.account, tool);
  }

  /** Polls a provider batch until it ends, then answers its calls from its results; one poller per batch in this process. */
  private follow(record: ProviderBatchRecord, account: ProviderAccount, tool: string): void {
    if (this.following.has(record.id)) return;
    this.following.add(record.id);
    void this.poll(record, account, tool).finally(() => this.following.delete(record.id));
  }

  private async poll(record: ProviderBatchRecord, account: ProviderAccount, tool: string): Promise<void> {
    let r = record;
    const client = this.client(account);
    while (!this.stopping) {
      try {
        if (r.status === 'submitting' || !r.provider_batch_id) {
          // Another process (or this one, before a restart) is submitting it: its id comes, or it is stale.
          const now = (await this.store.listProviderBatches(r.batch_id)).find((x) => x.id === r.id) ?? r;
          if (now.provider_batch_id) r = now;
          else if (Date.now() - Date.parse(now.updated_at) > SUBMIT_STALE_MS) {
            await this.store.updateProviderBatch(r.id, {
              status: 'failed',
              error: 'the server stopped while submitting this batch; its requests were submitted again in another',
            });
            this.answerAll(r.batch_id, r.custom_ids, () => RESUBMIT);
            return;
          }
        } else {
          const b = await client.status(r.provider_batch_id);
          if (b.status !== r.status) r = (await this.store.updateProviderBatch(r.id, { status: b.status })) ?? { ...r, status: b.status };
          if (b.status === 'ended') return await this.collect(r, client, tool);
        }
      } catch (err) {
        log.warn(`provider batch ${r.provider_batch_id ?? r.id}: polling failed (${(err as Error).message}); polled again`);
      }
      await new Promise((res) => setTimeout(res, this.opts.pollMs).unref());
    }
  }

  private async collect(r: ProviderBatchRecord, client: BatchClient, tool: string): Promise<void> {
    const seen = new Set<string>();
    for await (const outcome of client.results(r.provider_batch_id!, r.custom_ids, tool)) {
      seen.add(outcome.custom_id);
      this.answer(r.batch_id, outcome.custom_id, outcome);
    }
    this.answerAll(
      r.batch_id,
      r.custom_ids.filter((id) => !seen.has(id)),
      (id) => failed(id, 'the provider batch ended without a result for this request'),
    );
    const timer = setTimeout(() => {
      for (const id of r.custom_ids) this.results.delete(`${r.batch_id}/${id}`);
    }, KEEP_RESULTS_MS);
    timer.unref();
  }

  /** Cancels the run's provider batches still running (cancel of the run); their calls end as cancelled when polled. */
  async cancelRun(runId: string, accountFor: (key: string) => Promise<ProviderAccount | null>): Promise<void> {
    for (const r of await this.store.listProviderBatches(runId)) {
      if (!r.provider_batch_id || (r.status !== 'in_progress' && r.status !== 'submitting')) continue;
      const account = await accountFor(r.account);
      if (!account) continue;
      const b = await this.client(account).cancel(r.provider_batch_id);
      await this.store.updateProviderBatch(r.id, { status: b.status });
    }
  }

  stop(): void {
    this.stopping = true;
    for (const g of this.groups.values()) clearTimeout(g.timer);
  }
}

const failed = (custom_id: string, message: string): BatchOutcome => ({ custom_id, ok: false, kind: 'errored', message });

const hubs = new WeakMap<Store, ProviderBatchHub>();
/** The hub of a store in this process (one per store, so tests with several servers keep theirs apart). */
export function hubFor(store: Store, pollMs: number): ProviderBatchHub {
  let hub = hubs.get(store);
  if (!hub) hubs.set(store, (hub = new ProviderBatchHub(store, { pollMs })));
  return hub;
}
export function dropHub(store: Store): void {
  hubs.get(store)?.stop();
  hubs.delete(store);
}
