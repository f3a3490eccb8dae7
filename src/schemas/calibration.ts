// Human labels and calibration (SPEC section 8): annotations, calibration runs and their metrics,
// the calibration summary on judge and evaluator reads. Kept beside src/schemas.ts, whose building blocks it uses.
import { z } from 'zod';
import { id, timestamp } from '../schemas.ts';

export const Annotation = z.object({
  id: id('annotation'),
  execution_log_id: z.string().describe('the execution log whose evaluator result is annotated'),
  evaluator_id: z.string().describe('the evaluator whose result the person corrects'),
  judge_id: z.string().nullable().describe("the log's judge (null for a single-evaluator run)"),
  score: z.number().min(0).max(1).describe('the score 0..1 the person says the evaluator should have given'),
  note: z.string().nullable().describe("the person's reason, if given"),
  created_at: timestamp,
  updated_at: timestamp,
});
export type Annotation = z.infer<typeof Annotation>;

export const CalibrationConfusion = z.object({
  tp: z.number().int().describe('person pass, judge pass'),
  fp: z.number().int().describe('person fail, judge pass'),
  tn: z.number().int().describe('person fail, judge fail'),
  fn: z.number().int().describe('person pass, judge fail'),
});

// h-review: a 95% interval [low, high] or null, per metric.
const Interval = z.tuple([z.number(), z.number()]).nullable();
export const MetricIntervals = z.object({ mae: Interval, kappa: Interval, pearson: Interval, spearman: Interval });
export const Fitness = z
  .enum(['gating', 'monitoring', 'exploration', 'uncalibrated'])
  .describe(
    "what the current version's calibration permits: gating (kappa's 95% lower bound >= 0.6 with n >= 100), monitoring (kappa >= 0.4 with n >= 30), exploration (any other calibration), uncalibrated (none)",
  );

export const ReliabilityBin = z.object({
  lo: z.number().describe('lower edge of the confidence bin (inclusive)'),
  hi: z.number().describe('upper edge (exclusive, except 1.0 in the last bin)'),
  n: z.number().int().describe('scored items whose confidence falls in the bin'),
  mean_confidence: z.number().nullable().describe('their mean confidence; null for an empty bin'),
  agreement_rate: z.number().nullable().describe("share of them where |judge score - person's score| <= 0.2; null for an empty bin"),
});

export const CalibrationMetrics = z.object({
  evaluator_id: z.string().describe('the evaluator measured'),
  evaluator_name: z.string().describe('its name'),
  evaluator_version: z.number().int().describe('the version measured'),
  n: z.number().int().describe('items with both an expected score and a judge score'),
  mae: z.number().nullable().describe('mean absolute difference judge - person; null when n = 0'),
  rmse: z.number().nullable().describe('root mean squared difference; null when n = 0'),
  pearson: z.number().nullable().describe('Pearson correlation; null when either side is constant or n < 2'),
  spearman: z.number().nullable().describe('Spearman rank correlation (ties share the average rank); null when either side is constant or n < 2'),
  kappa: z.number().nullable().describe("Cohen's kappa of pass/fail at the threshold; null when undefined (both sides one class, or n = 0)"),
  accuracy: z.number().nullable().describe('share of items where judge and person agree on pass/fail'),
  majority_baseline: z.number().nullable().describe('accuracy of always answering the more common human verdict'),
  confusion: CalibrationConfusion.describe('pass/fail at the threshold; score >= threshold is a pass; the person is the truth'),
  // h-review (SPEC section 17): absent in runs measured before intervals existed.
  intervals: MetricIntervals.nullable().optional().describe('95% intervals (seeded paired bootstrap over items, percentile); each null when undefined'),
  ece: z
    .number()
    .nullable()
    .optional()
    .describe(
      "expected calibration error of the judge's confidence (10 equal-width bins): the n-weighted mean |agreement_rate - mean_confidence|, where an item agrees when |judge score - person's score| <= 0.2; 0 is perfectly calibrated; null when no result had a confidence",
    ),
  reliability: z
    .array(ReliabilityBin)
    .nullable()
    .optional()
    .describe('the reliability diagram behind ece: 10 bins of confidence, [0, 0.1) to [0.9, 1.0]; null when no result had a confidence'),
});
export type CalibrationMetrics = z.infer<typeof CalibrationMetrics>;

export const CalibrationRunStatus = z.enum(['queued', 'running', 'completed', 'failed', 'cancelled']).describe("the batch run's status");

export const EvaluatorVersionRef = z.object({
  evaluator_id: z.string().describe('evaluator id'),
  evaluator_name: z.string().describe('evaluator name at the start of the run'),
  version: z.number().int().describe('the version the run measures'),
});

export const CalibrationRun = z.object({
  id: id('calibration run'),
  status: CalibrationRunStatus,
  judge_id: z.string().nullable().describe('the judge measured (null when one evaluator is)'),
  judge_version: z.number().int().nullable().describe('the judge version measured'),
  evaluator_id: z.string().nullable().describe('the single evaluator measured (null when a judge is)'),
  dataset_id: z.string().describe('the dataset of labelled items'),
  threshold: z.number().min(0).max(1).describe('score >= threshold is a pass (kappa, accuracy, confusion)'),
  batch_execution_id: z.string().describe('the batch run that scores the items'),
  evaluator_versions: z.array(EvaluatorVersionRef).describe('the exact evaluator versions measured'),
  metrics: z.array(CalibrationMetrics).nullable().describe('one entry per evaluator with expected scores; null until the run completes'),
  previous_run_id: z.string().nullable().describe('the last completed calibration run of the same judge (or evaluator) on the same dataset before this one'),
  previous_metrics: z.array(CalibrationMetrics).nullable().optional().describe("that run's metrics, to compare side by side"),
  created_at: timestamp,
  finished_at: timestamp.nullable().describe('when the batch finished'),
});
export type CalibrationRun = z.infer<typeof CalibrationRun>;

export const CalibrationSummary = z
  .object({
    calibration_run_id: z.string().describe('the calibration run'),
    n: z.number().int().describe('labelled items measured (summed over evaluators for a judge)'),
    mae: z.number().nullable().describe('mean absolute difference from the people (n-weighted over evaluators for a judge)'),
    kappa: z.number().nullable().describe("Cohen's kappa at the run's threshold (for a judge: its lowest evaluator kappa)"),
    kappa_interval: z.tuple([z.number(), z.number()]).nullable().optional().describe("kappa's 95% interval (for a judge: that of the evaluator with the lowest lower bound)"),
    fitness: Fitness.optional(),
    finished_at: timestamp,
  })
  .nullable()
  .describe('the latest completed calibration run of the current version (null = uncalibrated: no run measured this version)');
export type CalibrationSummary = z.infer<typeof CalibrationSummary>;
