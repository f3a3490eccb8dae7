// How well a judge's confidence predicts agreement with the person (SPEC sections 16 and 17): the
// reliability diagram's bins and the expected calibration error (ECE) over them. Pure.
//
// Agreement on one item: |judge score - person's score| <= AGREEMENT_TOLERANCE. It is the event the
// confidence is about: the stated confidence asks the model for exactly this probability (prompt.ts),
// a logprobs confidence is the mass on one grade of five (0.25 apart, so "the same grade" is within
// 0.2), and a jury's 1 - spread is high when the jurors, and so probably the person, land close.
// Pass/fail agreement at the threshold is what kappa already measures; a score next to the threshold
// would make a well-founded 0.9 look wrong half the time, so the tolerance is on the score itself.
//
// Bins: 10 of equal width on 0..1, [0, 0.1), [0.1, 0.2), ..., [0.9, 1.0] (1.0 falls in the last).
// ECE = sum over bins of (n_bin / n) * |agreement_rate_bin - mean_confidence_bin|, over the items
// that have a confidence; null when none has (a model that states none, an old run).

/** Judge and person agree on an item when their scores differ by at most this much. */
export const AGREEMENT_TOLERANCE = 0.2;
export const BIN_COUNT = 10;

export interface ReliabilityBin {
  lo: number;
  hi: number;
  n: number;
  /** Null for an empty bin. */
  mean_confidence: number | null;
  agreement_rate: number | null;
}

const round4 = (x: number) => Math.round(x * 10_000) / 10_000;
/** Floating error must not move a score difference of exactly the tolerance (0.7 - 0.5) outside it. */
const EPS = 1e-9;

export const agrees = (expected: number, score: number, tolerance = AGREEMENT_TOLERANCE) => Math.abs(score - expected) <= tolerance + EPS;

/** The bins and the ECE of `confidence[i]` against `right[i]` (items without a confidence are left out). */
export function reliabilityOf(confidence: ArrayLike<number | null | undefined>, right: ArrayLike<boolean>): { ece: number | null; bins: ReliabilityBin[] } {
  const acc = Array.from({ length: BIN_COUNT }, () => ({ n: 0, conf: 0, right: 0 }));
  let total = 0;
  for (let i = 0; i < confidence.length; i++) {
    const c = confidence[i];
    if (typeof c !== 'number' || !Number.isFinite(c)) continue;
    const clamped = Math.max(0, Math.min(1, c));
    const bin = acc[Math.min(BIN_COUNT - 1, Math.floor(clamped * BIN_COUNT))];
    bin.n++;
    bin.conf += clamped;
    bin.right += right[i] ? 1 : 0;
    total++;
  }
  let ece = 0;
  const bins = acc.map((b, i): ReliabilityBin => {
    if (b.n) ece += (b.n / total) * Math.abs(b.right / b.n - b.conf / b.n);
    return {
      lo: round4(i / BIN_COUNT),
      hi: round4((i + 1) / BIN_COUNT),
      n: b.n,
      mean_confidence: b.n ? round4(b.conf / b.n) : null,
      agreement_rate: b.n ? round4(b.right / b.n) : null,
    };
  });
  return { ece: total ? ece : null, bins };
}

/**
 * What a calibration metrics entry reports of the confidence: `ece` (unrounded, like the other
 * metrics) and `reliability`, the 10 bins; both null when no item has a confidence.
 */
export function confidenceCalibration(
  expected: number[],
  scores: number[],
  confidence: Array<number | null | undefined>,
  tolerance = AGREEMENT_TOLERANCE,
): { ece: number | null; reliability: ReliabilityBin[] | null } {
  const right = expected.map((e, i) => agrees(e, scores[i], tolerance));
  const { ece, bins } = reliabilityOf(confidence, right);
  return { ece, reliability: ece === null ? null : bins };
}
