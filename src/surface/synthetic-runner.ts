// Synthetic data runs in the background (SPEC section 16): POST stores a pending record and hands it
// to this runner; the record is the state, so a restart resumes every pending one (start()). Several
// instances on one PostgreSQL may both resume the same record after a restart: the answer is written
// whole, so the last one wins and nothing is mixed.
import type { Caller } from '../auth.ts';
import type { Config } from '../config.ts';
import type { JudgeModel } from '../engine/providers/model.ts';
import { NOT_CONFIGURED_MESSAGE } from '../engine/providers/anthropic-model.ts';
import { TribunalError } from '../errors.ts';
import { loadJudgeEvaluators } from '../domain/judges.ts';
import type { Store, SyntheticDataRecord } from '../store/types.ts';
import { generateSynthetic, samplesOf } from './synthetic.ts';

const log = (message: string) => console.error(`[tribunal] synthetic data: ${message}`);

export class SyntheticRunner {
  private readonly running = new Map<string, Promise<void>>();
  private stopping = false;

  constructor(private readonly deps: { store: Store; config: Config; model: JudgeModel }) {}

  get configured(): boolean {
    return this.deps.model.configured;
  }

  assertConfigured(): void {
    if (!this.configured)
      throw new TribunalError('model_unavailable', 503, `Generating test data needs the judge model. ${NOT_CONFIGURED_MESSAGE}`, { reason: 'model_not_configured' });
  }

  /** Resumes every pending generation (after a restart). */
  async start(): Promise<void> {
    for (const record of await this.deps.store.listPendingSyntheticData()) this.submit(record.judge_id);
  }

  /** Runs the pending record of this judge in the background (once at a time per judge). */
  submit(judgeId: string): void {
    if (this.stopping || this.running.has(judgeId)) return;
    const run = this.run(judgeId)
      .catch((err) => log(`${judgeId}: ${(err as Error).message} (left pending; resumed at the next start)`))
      .finally(() => this.running.delete(judgeId));
    this.running.set(judgeId, run);
  }

  /** Waits for what runs now (a test, a shutdown); new submissions are refused. */
  async stop(): Promise<void> {
    this.stopping = true;
    await Promise.allSettled([...this.running.values()]);
  }

  private async run(judgeId: string): Promise<void> {
    const { store, config, model } = this.deps;
    const record = await store.getSyntheticData(judgeId);
    if (!record || record.status !== 'pending') return;
    const finish = (patch: Partial<SyntheticDataRecord>) => store.putSyntheticData({ ...record, ...patch, updated_at: new Date().toISOString() });
    const [org, key, judge] = await Promise.all([store.getOrganization(record.org_id), store.getApiKey(record.key_id), store.getJudge(judgeId)]);
    if (!org || !key || !judge)
      return void (await finish({ status: 'failed', error: 'The judge, its organization or the key that asked was deleted before the data was generated.' }));
    const caller: Caller = { org, key };
    try {
      const evaluators = await loadJudgeEvaluators({ store, caller }, judge);
      const answer = await generateSynthetic(model, config.model.name, judge, evaluators, record.count);
      if (this.stopping) return;
      await finish({ status: 'ready', name: answer.name, description: answer.description, samples: samplesOf(answer), error: null });
    } catch (err) {
      if (!(err instanceof TribunalError)) throw err;
      // A model that stays unusable is a finished attempt: the caller sees why and may ask again.
      await finish({ status: 'failed', error: err.message });
    }
  }
}
