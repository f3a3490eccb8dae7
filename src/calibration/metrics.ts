// Agreement between a judge and the people (SPEC section 8): pure statistics over pairs of
// (expected, score), both 0..1. Correlations come from simple-statistics (Spearman on midranks, so
// ties share the average rank); this file adds what the library leaves undefined or throws on:
// null when a statistic has no value (no pairs, fewer than two, a constant side).
import { sampleCorrelation, sampleRankCorrelation } from 'simple-statistics';

export interface Confusion {
  /** Person pass, judge pass. */
  tp: number;
  /** Person fail, judge pass. */
  fp: number;
  /** Person fail, judge fail. */
  tn: number;
  /** Person pass, judge fail. */
  fn: number;
}

export interface AgreementMetrics {
  n: number;
  mae: number | null;
  rmse: number | null;
  pearson: number | null;
  spearman: number | null;
  kappa: number | null;
  accuracy: number | null;
  majority_baseline: number | null;
  confusion: Confusion;
}

/** True when every value equals the first (a constant side has no correlation). */
function isConstant(values: ArrayLike<number>): boolean {
  for (let i = 1; i < values.length; i++) if (values[i] !== values[0]) return false;
  return true;
}

/** A correlation clamped to [-1, 1] (floating error can step just outside), or null when undefined. */
function correlation(fn: (x: number[], y: number[]) => number, x: number[], y: number[]): number | null {
  if (x.length < 2 || isConstant(x) || isConstant(y)) return null;
  const r = fn(x, y);
  if (!Number.isFinite(r)) return null;
  return Math.max(-1, Math.min(1, r));
}

export const pearson = (x: number[], y: number[]): number | null => correlation(sampleCorrelation, x, y);
/** Spearman's rho: Pearson on midranks (tied values share the average of the ranks they span). */
export const spearman = (x: number[], y: number[]): number | null => correlation(sampleRankCorrelation, x, y);

/** The pass/fail confusion at `threshold` (score >= threshold is a pass); the person is the truth. */
export function confusion(expected: number[], scores: number[], threshold: number): Confusion {
  const c: Confusion = { tp: 0, fp: 0, tn: 0, fn: 0 };
  for (let i = 0; i < expected.length; i++) {
    const human = expected[i] >= threshold;
    const judge = scores[i] >= threshold;
    if (human && judge) c.tp++;
    else if (judge) c.fp++;
    else if (human) c.fn++;
    else c.tn++;
  }
  return c;
}

/** Cohen's kappa for two raters and two classes; null when chance agreement is 1 (both raters constant on one class) or n = 0. */
export function kappaOf(c: Confusion): number | null {
  const n = c.tp + c.fp + c.tn + c.fn;
  if (n === 0) return null;
  const po = (c.tp + c.tn) / n;
  const humanPass = (c.tp + c.fn) / n;
  const judgePass = (c.tp + c.fp) / n;
  const pe = humanPass * judgePass + (1 - humanPass) * (1 - judgePass);
  if (pe >= 1) return null;
  return (po - pe) / (1 - pe);
}

/**
 * Every statistic of one evaluator: `expected[i]` is the person's score and `scores[i]` the judge's
 * for the same item (equal lengths; the caller leaves out items missing either).
 */
export function agreementMetrics(expected: number[], scores: number[], threshold: number): AgreementMetrics {
  if (expected.length !== scores.length) throw new Error('agreementMetrics: expected and scores differ in length');
  const n = expected.length;
  const c = confusion(expected, scores, threshold);
  if (n === 0) {
    return { n: 0, mae: null, rmse: null, pearson: null, spearman: null, kappa: null, accuracy: null, majority_baseline: null, confusion: c };
  }
  let abs = 0;
  let sq = 0;
  for (let i = 0; i < n; i++) {
    const d = scores[i] - expected[i];
    abs += Math.abs(d);
    sq += d * d;
  }
  const humanPass = c.tp + c.fn;
  return {
    n,
    mae: abs / n,
    rmse: Math.sqrt(sq / n),
    pearson: pearson(expected, scores),
    spearman: spearman(expected, scores),
    kappa: kappaOf(c),
    accuracy: (c.tp + c.tn) / n,
    majority_baseline: Math.max(humanPass, n - humanPass) / n,
    confusion: c,
  };
}
