// The `calibration` summary on every judge and evaluator read (SPEC section 8): the latest completed
// calibration run of the version being read, or null (uncalibrated). A run counts for a judge when it
// measured exactly the evaluator versions the judge applies now, so editing a rubric (a new evaluator
// version) or the judge's evaluator list drops the old calibration until the next run. A run counts
// for an evaluator when it measured that evaluator version, alone or inside any judge. Runs are the
// caller's organization's own (their datasets are private).
import type { RequestContext } from '../context.ts';
import type { CalibrationMetrics, CalibrationSummary } from '../schemas/calibration.ts';
import type { CalibrationRunFilter, CalibrationRunRecord } from '../store/types.ts';
import { refreshRun } from './runs.ts';
import { fitnessOf, judgeFitness } from './fitness.ts'; // h-review

type Ctx = Pick<RequestContext, 'store' | 'caller'>;

/** How many recent runs are looked through for one that measured the current version. */
const SCAN = 50;

async function latestMatching(ctx: Ctx, filter: Omit<CalibrationRunFilter, 'org_id'>, matches: (run: CalibrationRunRecord) => boolean): Promise<CalibrationRunRecord | null> {
  const { items } = await ctx.store.listCalibrationRuns({ ...filter, org_id: ctx.caller.org.id }, { limit: SCAN });
  let best: CalibrationRunRecord | null = null;
  for (const stored of items) {
    if (!matches(stored)) continue;
    // A run whose batch finished since it was last read is brought up to date (metrics computed) here.
    const run = await refreshRun(ctx.store, stored);
    if (run.status !== 'completed' || !run.metrics?.length || !run.finished_at) continue;
    if (!best || run.finished_at > best.finished_at!) best = run;
  }
  return best;
}

/** A judge's summary over its evaluators: n summed, MAE weighted by n, kappa the lowest (the weakest evaluator). */
export function summarize(runId: string, finishedAt: string, metrics: CalibrationMetrics[]): NonNullable<CalibrationSummary> {
  const n = metrics.reduce((s, m) => s + m.n, 0);
  const withMae = metrics.filter((m) => m.mae !== null && m.n > 0);
  const weight = withMae.reduce((s, m) => s + m.n, 0);
  const kappas = metrics.map((m) => m.kappa).filter((k): k is number => k !== null);
  return {
    calibration_run_id: runId,
    n,
    mae: weight ? withMae.reduce((s, m) => s + m.mae! * m.n, 0) / weight : null,
    kappa: kappas.length ? Math.min(...kappas) : null,
    ...judgeFitness(metrics), // h-review
    finished_at: finishedAt,
  };
}

/** `evaluators`: the versions the judge applies (as get_judge loads them). */
export async function judgeCalibration(ctx: Ctx, judgeId: string, evaluators: Array<{ id: string; version: number }>): Promise<CalibrationSummary> {
  const want = new Map(evaluators.map((e) => [e.id, e.version]));
  const run = await latestMatching(
    ctx,
    { judge_id: judgeId },
    (r) => r.evaluator_versions.length === want.size && r.evaluator_versions.every((v) => want.get(v.evaluator_id) === v.version),
  );
  return run ? summarize(run.id, run.finished_at!, run.metrics!) : null;
}

export async function evaluatorCalibration(ctx: Ctx, evaluatorId: string, version: number): Promise<CalibrationSummary> {
  const run = await latestMatching(ctx, { measures_evaluator_id: evaluatorId }, (r) => r.evaluator_versions.some((v) => v.evaluator_id === evaluatorId && v.version === version));
  const m = run?.metrics?.find((x) => x.evaluator_id === evaluatorId && x.evaluator_version === version);
  if (!run || !m) return null;
  return { calibration_run_id: run.id, n: m.n, mae: m.mae, kappa: m.kappa, kappa_interval: m.intervals?.kappa ?? null, fitness: fitnessOf(m), finished_at: run.finished_at! };
}
