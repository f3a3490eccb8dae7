// Wires the services a server needs from a config and an open store.
import { InProcessBatchQueue } from './batch/in-process-queue.ts';
import { PgBossBatchQueue } from './batch/pg-boss-queue.ts';
import type { BatchQueue } from './batch/queue.ts';
import { BudgetedEngine } from './budgets/engine.ts';
import type { Config } from './config.ts';
import type { SpanRunner } from './context.ts';
import { syncPresets } from './domain/presets.ts';
import { log } from './log.ts';
import { settleJudging } from './proxy/background.ts'; // h-proxy
import { createJudgeModel } from './engine/index.ts';
import { createScoringEngine } from './runs/index.ts';
import type { ModelCallObserver } from './engine/providers/resilient-model.ts';
import { createJudgeGenerator } from './generation/generator.ts';
import type { Store } from './store/types.ts';
import { SyntheticRunner } from './surface/synthetic-runner.ts';
import type { Services } from './tool.ts';
import { TraceEvaluationWorker } from './traces/rules/worker.ts';

/** `modelObserver` and `spans` come from src/observability (logs, metrics, traces); both optional. */
export async function buildServices(config: Config, store: Store, modelObserver?: ModelCallObserver, spans?: SpanRunner): Promise<Services> {
  await syncPresets(store);
  // One judge model per server: its limiter caps model calls in flight for scoring and generation alike.
  const model = createJudgeModel(config, modelObserver);
  // Budgets (room h-cost): every run passes the budget gate before the engine calls a model.
  const engine = new BudgetedEngine(createScoringEngine(model, modelObserver));
  // Batch runs resume by themselves: the queue picks up every queued or running run as it starts.
  // Its adapter follows the store: pg-boss on PostgreSQL (any number of instances share a run's
  // chunks), in-process on the JSON store (one process owns its data directory).
  const Queue = store.kind === 'postgres' ? PgBossBatchQueue : InProcessBatchQueue;
  const batches: BatchQueue = new Queue({ config, store, engine, ...(spans ? { spans } : {}) });
  await batches.start();
  // Synthetic test data (room surface): pending generations resume as the runner starts.
  const synthetic = new SyntheticRunner({ store, config, model });
  await synthetic.start();
  const services: Services = { config, store, engine, generator: createJudgeGenerator(model), batches, synthetic, ...(spans ? { spans } : {}) };
  // Online evaluation of received spans (src/traces/rules/worker.ts): its queued work resumes here too.
  services.traceEvaluation = await TraceEvaluationWorker.start(services);
  return services;
}

/**
 * Stops the background work buildServices started, before the store closes: online evaluation and
 * synthetic data first (no new runs), then the batch runner, whose rows in flight get `graceMs`, and
 * (alongside it, within the same grace) the judge proxy's async judging.
 */
export async function stopServices(services: Services, graceMs: number): Promise<void> {
  await services.traceEvaluation?.stop();
  // A generation in flight is waited for within the grace; one cut short stays pending and resumes at the next start.
  await Promise.race([services.synthetic?.stop(), new Promise((r) => setTimeout(r, graceMs).unref())]);
  // h-proxy: the judge proxy's async judging answered with a log id; it gets the same grace, so its log is written before the store closes.
  const [, cut] = await Promise.all([services.batches?.stop(graceMs), settleJudging(services.store, graceMs)]);
  if (cut) log.error(`shutdown: ${cut} async judging run(s) of the judge proxy cut short after the grace period (TRIBUNAL_SHUTDOWN_GRACE); their logs were not written`);
}
