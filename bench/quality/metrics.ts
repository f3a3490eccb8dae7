// The judge-quality statistics of bench:quality (docs/QUALITY.md): pure functions, no I/O.
// A verdict is 1 (output_1 better), 2 (output_2 better), "tie", or null (the judge failed).

export type Verdict = 1 | 2 | 'tie' | null;

/** Share of pairs whose verdict equals the label; failed and tied verdicts count as wrong. */
export function accuracy(verdicts: Verdict[], labels: Array<1 | 2>): number {
  if (!labels.length) return NaN;
  return verdicts.filter((v, i) => v === labels[i]).length / labels.length;
}

/** Share of pairs on which both orders gave the same (non-failed) verdict. */
export function positionalAgreement(first: Verdict[], second: Verdict[]): number {
  if (!first.length) return NaN;
  return first.filter((v, i) => v !== null && v === second[i]).length / first.length;
}

/**
 * Cohen's kappa between verdicts and labels, over the categories 1, 2 and tie (a failed verdict is
 * its own category): (p_o - p_e) / (1 - p_e). 0 is chance agreement, 1 perfect; NaN when p_e is 1.
 */
export function cohenKappa(verdicts: Verdict[], labels: Array<1 | 2>): number {
  const n = labels.length;
  if (!n) return NaN;
  const key = (v: Verdict) => String(v);
  const count = (xs: string[]) => xs.reduce((m, x) => m.set(x, (m.get(x) ?? 0) + 1), new Map<string, number>());
  const pv = count(verdicts.map(key));
  const pl = count(labels.map(key));
  const po = verdicts.filter((v, i) => v === labels[i]).length / n;
  let pe = 0;
  for (const [k, c] of pl) pe += (c / n) * ((pv.get(k) ?? 0) / n);
  return pe === 1 ? NaN : (po - pe) / (1 - pe);
}

/** Rounded for the report: 4 decimals, NaN as null. */
export const r4 = (x: number) => (Number.isFinite(x) ? Math.round(x * 10_000) / 10_000 : null);
