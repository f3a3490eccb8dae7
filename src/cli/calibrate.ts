// tribunal calibrate: measure a judge (or one evaluator) against a labelled dataset, wait for the
// run, print the agreement table (next to the previous run's), and exit non-zero below --min-kappa
// (a gate for CI). tribunal annotate: a person's score for one evaluator result of a logged run.
import { num, runCommand, str, type Command } from './command.ts';
import { CliError, EXIT, usageError } from './errors.ts';
import { printFields, printJson, printTable } from './output.ts';
import { atLeast, FITNESS_LEVELS, fitnessOf, type Fitness } from '../calibration/fitness.ts'; // h-review

import type { CalibrationMetrics, CalibrationRun } from '../schemas/calibration.ts'; // the wire types, from the zod schemas (one source of truth)

type Metrics = CalibrationMetrics;
type Run = CalibrationRun;

const f = (x: number | null | undefined, digits = 3) => (typeof x === 'number' ? x.toFixed(digits) : '-');
/** "0.412 (was 0.250)" when the previous run measured the same evaluator. */
const vs = (now: number | null, before: Metrics | undefined, key: keyof Metrics) => (before ? `${f(now)} (was ${f(before[key] as number | null)})` : f(now));

/**
 * Evaluators below the gate: kappa missing (undefined) counts as below, so an unmeasurable judge never
 * passes. A kappa within 1e-9 of the gate meets it (floating error: 2/3 - 4/9 over 5/9 is 0.39999...).
 */
export function belowGate(metrics: Metrics[], minKappa: number): Metrics[] {
  return metrics.filter((m) => m.kappa === null || m.kappa < minKappa - 1e-9);
}

/**
 * How well each evaluator's confidence predicted agreement with the person: the ECE and the
 * non-empty reliability bins. Evaluators without any confidence are named, so silence is not read as calibrated.
 */
function printReliability(metrics: Metrics[]): void {
  console.log('\nConfidence vs agreement with the person (agreement: |judge - person| <= 0.2; ECE 0 = confidence matches agreement):');
  for (const m of metrics) {
    if (m.ece === null || m.ece === undefined || !m.reliability) {
      console.log(`  ${m.evaluator_name}: no confidence on its results, no ECE.`);
      continue;
    }
    console.log(`  ${m.evaluator_name}: ECE ${f(m.ece)}`);
    printTable(
      ['  CONFIDENCE', 'N', 'MEAN CONFIDENCE', 'AGREEMENT'],
      m.reliability.filter((b) => b.n > 0).map((b) => [`  ${b.lo.toFixed(1)}-${b.hi.toFixed(1)}`, b.n, f(b.mean_confidence), f(b.agreement_rate)]),
    );
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const calibrateCommand: Command = {
  summary: 'measure a judge against human labels',
  help: `Usage: tribunal calibrate (--judge <id|name> | --evaluator <id|name>) --dataset <id|name> [--threshold 0.5] [--min-kappa 0.6] [--min-fitness gating]

Runs the judge over a dataset whose items carry expected_scores (a person's score per evaluator id or
exact name), waits, and prints per evaluator: n, MAE, RMSE, Pearson, Spearman, Cohen's kappa, accuracy
and the majority baseline, next to the previous run on the same dataset; then how well the judge's
confidence predicted agreement with the person (ECE and reliability bins; agreement: within 0.2).

  --judge <id|name>       the judge to measure
  --evaluator <id|name>   or one evaluator alone
  --dataset <id|name>     the labelled dataset
  --threshold <0..1>      score >= threshold is a pass, for kappa and accuracy (default 0.5)
  --min-kappa <-1..1>     exit 1 when any evaluator's kappa is below this (or undefined)
  --min-fitness <level>   exit 1 when any evaluator's fitness is below this level: gating (kappa's 95%
                          lower bound >= 0.6, n >= 100), monitoring (kappa >= 0.4, n >= 30), exploration
  --poll <seconds>        how often to check the run (default 1)`,
  options: {
    judge: { type: 'string' },
    evaluator: { type: 'string' },
    dataset: { type: 'string' },
    threshold: { type: 'string' },
    'min-kappa': { type: 'string' },
    'min-fitness': { type: 'string' },
    poll: { type: 'string' },
  },
  async run({ values, json, client }) {
    const judge = str(values.judge);
    const evaluator = str(values.evaluator);
    const dataset = str(values.dataset);
    if ((judge === undefined) === (evaluator === undefined)) throw usageError('give --judge or --evaluator (one of them). See --help.');
    if (!dataset) throw usageError('--dataset is required. See --help.');
    const threshold = num(values.threshold, 'threshold', { min: 0, max: 1 });
    const minKappa = num(values['min-kappa'], 'min-kappa', { min: -1, max: 1 });
    const minFitness = str(values['min-fitness']) as Fitness | undefined;
    if (minFitness !== undefined && !FITNESS_LEVELS.includes(minFitness)) throw usageError(`--min-fitness is one of ${FITNESS_LEVELS.join(', ')}. See --help.`);
    const pollMs = (num(values.poll, 'poll', { min: 0.01 }) ?? 1) * 1000;
    const api = client();
    let run = await api.request<Run>('POST', '/v1/calibration-runs/', { body: { judge_id: judge, evaluator_id: evaluator, dataset_id: dataset, threshold } });
    if (!json) process.stderr.write(`Calibration run ${run.id} (batch ${run.batch_execution_id}) started; waiting...\n`);
    while (!['completed', 'failed', 'cancelled'].includes(run.status)) {
      await sleep(pollMs);
      run = await api.request<Run>('GET', `/v1/calibration-runs/${encodeURIComponent(run.id)}/`);
    }
    if (run.status !== 'completed' || !run.metrics) {
      if (json) printJson(run);
      throw new CliError(EXIT.rejected, `calibration run ${run.id} ended ${run.status}; see GET /v1/judges/batch-executions/${run.batch_execution_id}/`);
    }
    const failing = minKappa === undefined ? [] : belowGate(run.metrics, minKappa);
    const unfit = minFitness === undefined ? [] : run.metrics.filter((m) => !atLeast(fitnessOf(m), minFitness));
    if (json) {
      printJson({
        ...run,
        gate: minKappa === undefined ? null : { min_kappa: minKappa, passed: failing.length === 0, failing: failing.map((m) => m.evaluator_name) },
        fitness_gate:
          minFitness === undefined
            ? null
            : { min_fitness: minFitness, passed: unfit.length === 0, failing: unfit.map((m) => ({ evaluator_name: m.evaluator_name, fitness: fitnessOf(m) })) },
      });
    } else {
      const before = new Map((run.previous_metrics ?? []).map((m) => [m.evaluator_id, m]));
      printFields([
        ['run', run.id],
        ['dataset', run.dataset_id],
        ['threshold', run.threshold],
        ['previous run', run.previous_run_id ?? 'none'],
      ]);
      console.log('');
      printTable(
        ['EVALUATOR', 'VER', 'N', 'MAE', 'RMSE', 'PEARSON', 'SPEARMAN', 'KAPPA', 'ACCURACY', 'MAJORITY', 'TP/FP/TN/FN', 'KAPPA 95%', 'FITNESS'],
        run.metrics.map((m) => {
          const p = before.get(m.evaluator_id);
          return [
            m.evaluator_name,
            m.evaluator_version,
            m.n,
            vs(m.mae, p, 'mae'),
            f(m.rmse),
            f(m.pearson),
            f(m.spearman),
            vs(m.kappa, p, 'kappa'),
            vs(m.accuracy, p, 'accuracy'),
            f(m.majority_baseline),
            `${m.confusion.tp}/${m.confusion.fp}/${m.confusion.tn}/${m.confusion.fn}`,
            m.intervals?.kappa ? `[${f(m.intervals.kappa[0])}, ${f(m.intervals.kappa[1])}]` : '-',
            fitnessOf(m),
          ];
        }),
      );
      printReliability(run.metrics);
      for (const m of run.metrics) {
        if (m.accuracy !== null && m.majority_baseline !== null && m.accuracy <= m.majority_baseline) {
          console.log(`note: ${m.evaluator_name}'s accuracy ${f(m.accuracy)} is no better than always answering the majority verdict (${f(m.majority_baseline)}); read kappa.`);
        }
      }
      if (minKappa !== undefined) {
        console.log(
          failing.length
            ? `\nGate failed: kappa below ${minKappa} for ${failing.map((m) => `${m.evaluator_name} (${f(m.kappa)})`).join(', ')}.`
            : `\nGate passed: every kappa is at least ${minKappa}.`,
        );
      }
    }
    if (!json && minFitness !== undefined) {
      console.log(
        unfit.length
          ? `\nFitness gate failed: below ${minFitness} for ${unfit.map((m) => `${m.evaluator_name} (${fitnessOf(m)})`).join(', ')}.`
          : `\nFitness gate passed: every evaluator is at least ${minFitness}.`,
      );
    }
    return failing.length || unfit.length ? EXIT.gate : EXIT.ok;
  },
};

const annotateCommand: Command = {
  summary: 'say what score an evaluator should have given in a logged run',
  help: `Usage: tribunal annotate <log id> --evaluator <id|name> --score <0..1> [--note <text>]

Records a person's verdict on one evaluator result of an execution log (one per result; a second
call for the same result edits it; without --note the edit clears the earlier note). Copy annotated runs into a dataset with
POST /v1/datasets/{id}/items/from-annotations/ and measure the judge with tribunal calibrate.`,
  options: { evaluator: { type: 'string' }, score: { type: 'string' }, note: { type: 'string' } },
  positionals: [1, 1],
  async run({ positionals, values, json, client }) {
    const evaluator = str(values.evaluator);
    if (!evaluator) throw usageError('--evaluator is required. See --help.');
    const score = num(values.score, 'score', { min: 0, max: 1 });
    if (score === undefined) throw usageError('--score is required (0..1). See --help.');
    const note = str(values.note);
    const api = client();
    const body = { execution_log_id: positionals[0], evaluator_id: evaluator, score, ...(note !== undefined ? { note } : {}) };
    let annotation: { id: string; evaluator_id: string; score: number; note: string | null };
    let edited = false;
    try {
      annotation = await api.request('POST', '/v1/annotations/', { body });
    } catch (err) {
      if (!(err instanceof CliError) || err.code !== 'conflict') throw err;
      // One per result: find it and edit it.
      const log = await api.request<{ evaluator_results: Array<{ evaluator_id: string; evaluator_name: string }> }>(
        'GET',
        `/v1/execution-logs/${encodeURIComponent(positionals[0])}/`,
      );
      const result = log.evaluator_results.find((r) => r.evaluator_id === evaluator) ?? log.evaluator_results.find((r) => r.evaluator_name === evaluator);
      const existing = (
        await api.request<{ results: Array<{ id: string; evaluator_id: string }> }>('GET', '/v1/annotations/', { query: { execution_log_id: positionals[0] } })
      ).results.find((a) => a.evaluator_id === result?.evaluator_id);
      if (!existing) throw err;
      // The earlier note explained the earlier score: a new score without --note clears it (issue 26).
      annotation = await api.request('PATCH', `/v1/annotations/${existing.id}/`, { body: { score, note: note ?? null } });
      edited = true;
    }
    if (json) printJson(annotation);
    else {
      // The evaluator by its name, as the person knows it (the id is in --json).
      const log = await api
        .request<{ evaluator_results: Array<{ evaluator_id: string; evaluator_name: string }> }>('GET', `/v1/execution-logs/${encodeURIComponent(positionals[0])}/`)
        .catch(() => null);
      const name = log?.evaluator_results.find((r) => r.evaluator_id === annotation.evaluator_id)?.evaluator_name ?? annotation.evaluator_id;
      console.log(`${edited ? 'Updated' : 'Recorded'} annotation ${annotation.id}: ${name} should score ${annotation.score}${annotation.note ? ` (${annotation.note})` : ''}.`);
    }
    return EXIT.ok;
  },
};

export const calibrate = (argv: string[]) => runCommand('calibrate', calibrateCommand, argv);
export const annotate = (argv: string[]) => runCommand('annotate', annotateCommand, argv);
