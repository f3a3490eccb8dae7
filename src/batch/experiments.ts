// Experiments: two batch runs compared item by item (SPEC section 9). Pure functions, no store and no
// I/O: the rows of each run are collected into compact typed arrays (RunCollector), paired by item id
// (runs over a dataset) or by position (runs over inline items), and each evaluator gets the two
// means, the difference b - a with a 95% paired-bootstrap interval, wins, losses and ties; the items
// that moved most come with it.
//
// The bootstrap resamples items (pairs), not scores: one resample draws n items with replacement and
// every evaluator's mean difference is taken over those same items, as in a paired design. The
// interval is the percentile interval of 2,000 resampled means (by default) drawn with a seeded
// PRNG (mulberry32), so the same two runs always give the same interval. Everything runs over
// Float64Arrays in fused passes of four series, the draws in WebAssembly SIMD (bootstrap-wasm.ts):
// 10,000 pairs x 3 evaluators x 2,000 resamples take about 35 ms of CPU (130 ms in the
// JavaScript loop it replaced; bench/experiments-compare.bench.ts).

import { pairedBootstrap, type BootstrapOptions } from './bootstrap.ts';

// The bootstrap and its seeded generator live in bootstrap.ts; callers keep importing them from here.
export { mulberry32, pairedBootstrap, quantileSorted, type BootstrapOptions } from './bootstrap.ts';

/** One row of a batch run, as the batch runner's `batchRows` yields it (only what is used here). */
export interface ExperimentRow {
  position: number;
  item_id: string | null;
  index?: number | null;
  execution_log_id: string | null;
  score: number | null;
  evaluator_results: ReadonlyArray<{ evaluator_id: string; evaluator_name?: string; score: number | null }>;
}

/** A run's scores in columns; NaN where a row has no score (failed row or failed evaluator). */
export interface RunScores {
  size: number;
  itemIds: Array<string | null>;
  positions: number[];
  logIds: Array<string | null>;
  rowScores: Float64Array;
  evaluators: Array<{ id: string; name: string }>;
  /** scores[e][row] for evaluator e of `evaluators`. */
  scores: Float64Array[];
}

/** Collects the rows of one run (any number, streamed in) into a RunScores. */
export class RunCollector {
  private readonly itemIds: Array<string | null> = [];
  private readonly positions: number[] = [];
  private readonly logIds: Array<string | null> = [];
  private readonly rowScores: number[] = [];
  private readonly evaluatorIndex = new Map<string, number>();
  private readonly evaluators: Array<{ id: string; name: string }> = [];
  private readonly columns: number[][] = [];

  add(row: ExperimentRow): void {
    const at = this.positions.length;
    this.itemIds.push(row.item_id ?? null);
    this.positions.push(row.position);
    this.logIds.push(row.execution_log_id ?? null);
    this.rowScores.push(finite(row.score));
    for (const r of row.evaluator_results ?? []) {
      let e = this.evaluatorIndex.get(r.evaluator_id);
      if (e === undefined) {
        e = this.evaluators.length;
        this.evaluatorIndex.set(r.evaluator_id, e);
        this.evaluators.push({ id: r.evaluator_id, name: r.evaluator_name ?? r.evaluator_id });
        this.columns.push([]);
      }
      this.columns[e][at] = finite(r.score);
    }
  }

  finish(): RunScores {
    const size = this.positions.length;
    const scores = this.columns.map((col) => {
      const out = new Float64Array(size).fill(NaN);
      for (let i = 0; i < col.length; i++) if (col[i] !== undefined) out[i] = col[i];
      return out;
    });
    return { size, itemIds: this.itemIds, positions: this.positions, logIds: this.logIds, rowScores: Float64Array.from(this.rowScores), evaluators: this.evaluators, scores };
  }
}

export function collectRows(rows: Iterable<ExperimentRow>): RunScores {
  const c = new RunCollector();
  for (const row of rows) c.add(row);
  return c.finish();
}

const finite = (v: unknown): number => (typeof v === 'number' && Number.isFinite(v) ? v : NaN);

export type PairBy = 'item_id' | 'position';

export interface Pairs {
  by: PairBy;
  /** Row indexes in run a and run b of each pair, in run a's order. */
  a: Int32Array;
  b: Int32Array;
  /** Rows of a with no partner in b, and of b with none in a. */
  unpairedA: number;
  unpairedB: number;
}

/** Pairs the rows of two runs: by item id (rows without one are left unpaired) or by position. */
export function pairRuns(a: RunScores, b: RunScores, by: PairBy): Pairs {
  const ia: number[] = [];
  const ib: number[] = [];
  if (by === 'position') {
    const byPos = new Map<number, number>();
    b.positions.forEach((p, i) => byPos.set(p, i));
    a.positions.forEach((p, i) => {
      const j = byPos.get(p);
      if (j !== undefined) ia.push(i), ib.push(j);
    });
  } else {
    const byId = new Map<string, number>();
    b.itemIds.forEach((id, i) => id !== null && byId.set(id, i));
    a.itemIds.forEach((id, i) => {
      const j = id === null ? undefined : byId.get(id);
      if (j !== undefined) ia.push(i), ib.push(j);
    });
  }
  return { by, a: Int32Array.from(ia), b: Int32Array.from(ib), unpairedA: a.size - ia.length, unpairedB: b.size - ib.length };
}

export interface EvaluatorComparison {
  evaluator_id: string;
  evaluator_name: string;
  /** Pairs where both runs have this evaluator's score. */
  n: number;
  mean_a: number | null;
  mean_b: number | null;
  /** mean_b - mean_a (the mean of the paired differences). */
  delta: number | null;
  ci_low: number | null;
  ci_high: number | null;
  /** Pairs where a scored higher, where b did, and where they are equal. */
  wins_a: number;
  wins_b: number;
  ties: number;
  /** improved: the interval is above 0; regressed: below 0; unclear: it holds 0; no_pairs: n = 0. */
  verdict: 'improved' | 'regressed' | 'unclear' | 'no_pairs';
}

export interface MovedItem {
  item_id: string | null;
  position_a: number;
  position_b: number;
  score_a: number | null;
  score_b: number | null;
  delta: number;
  execution_log_id_a: string | null;
  execution_log_id_b: string | null;
}

export interface Comparison {
  paired_by: PairBy;
  pairs: number;
  unpaired_a: number;
  unpaired_b: number;
  resamples: number;
  confidence: number;
  seed: number;
  evaluators: EvaluatorComparison[];
  /** The row score (the judge's score of each item), compared the same way. */
  overall: Omit<EvaluatorComparison, 'evaluator_id' | 'evaluator_name'>;
  /** Evaluators only one run has (another judge version added or removed them). */
  only_in_a: Array<{ evaluator_id: string; evaluator_name: string }>;
  only_in_b: Array<{ evaluator_id: string; evaluator_name: string }>;
  moved: MovedItem[];
}

const TIE = 1e-9;
const orNull = (v: number) => (Number.isFinite(v) ? v : null);

export function compareRuns(a: RunScores, b: RunScores, opts: BootstrapOptions & { by?: PairBy; top?: number } = {}): Comparison {
  const by = opts.by ?? 'item_id';
  const pairs = pairRuns(a, b, by);
  const n = pairs.a.length;
  const bIndex = new Map(b.evaluators.map((e, i) => [e.id, i]));
  const shared = a.evaluators.flatMap((e, i) => (bIndex.has(e.id) ? [{ ...e, ia: i, ib: bIndex.get(e.id)! }] : []));
  // Column k of the difference matrix: the shared evaluators, then the row score.
  const k = shared.length + 1;
  const diffs = new Float64Array(n * k);
  const columnsA = [...shared.map((e) => a.scores[e.ia]), a.rowScores];
  const columnsB = [...shared.map((e) => b.scores[e.ib]), b.rowScores];
  const stats = Array.from({ length: k }, () => ({ n: 0, sumA: 0, sumB: 0, winsA: 0, winsB: 0, ties: 0 }));
  for (let p = 0; p < n; p++) {
    const ra = pairs.a[p];
    const rb = pairs.b[p];
    for (let c = 0; c < k; c++) {
      const sa = columnsA[c][ra];
      const sb = columnsB[c][rb];
      const d = sb - sa; // NaN when either is missing
      diffs[p * k + c] = d;
      if (Number.isNaN(d)) continue;
      const s = stats[c];
      s.n++;
      s.sumA += sa;
      s.sumB += sb;
      if (d > TIE) s.winsB++;
      else if (d < -TIE) s.winsA++;
      else s.ties++;
    }
  }
  const resamples = opts.resamples ?? 2000;
  const seed = opts.seed ?? 1;
  const confidence = opts.confidence ?? 0.95;
  const intervals = pairedBootstrap(diffs, n, k, { resamples, seed, confidence });
  const summarize = (c: number) => {
    const s = stats[c];
    const [low, high] = intervals[c];
    const ci_low = s.n ? orNull(low) : null;
    const ci_high = s.n ? orNull(high) : null;
    const verdict: EvaluatorComparison['verdict'] = !s.n ? 'no_pairs' : ci_low !== null && ci_low > 0 ? 'improved' : ci_high !== null && ci_high < 0 ? 'regressed' : 'unclear';
    return {
      n: s.n,
      mean_a: s.n ? s.sumA / s.n : null,
      mean_b: s.n ? s.sumB / s.n : null,
      delta: s.n ? (s.sumB - s.sumA) / s.n : null,
      ci_low,
      ci_high,
      wins_a: s.winsA,
      wins_b: s.winsB,
      ties: s.ties,
      verdict,
    };
  };
  const onlyIn = (x: RunScores, other: RunScores) => {
    const ids = new Set(other.evaluators.map((e) => e.id));
    return x.evaluators.filter((e) => !ids.has(e.id)).map((e) => ({ evaluator_id: e.id, evaluator_name: e.name }));
  };
  return {
    paired_by: by,
    pairs: n,
    unpaired_a: pairs.unpairedA,
    unpaired_b: pairs.unpairedB,
    resamples,
    confidence,
    seed,
    evaluators: shared.map((e, c) => ({ evaluator_id: e.id, evaluator_name: e.name, ...summarize(c) })),
    overall: summarize(k - 1),
    only_in_a: onlyIn(a, b),
    only_in_b: onlyIn(b, a),
    moved: movedMost(a, b, pairs, diffs, k, opts.top ?? 10),
  };
}

/**
 * The pairs whose score changed most: by the row score's difference, or, where a row has no score,
 * the mean of its evaluators' differences. Ties keep run a's order.
 */
function movedMost(a: RunScores, b: RunScores, pairs: Pairs, diffs: Float64Array, k: number, top: number): MovedItem[] {
  const n = pairs.a.length;
  const size = new Float64Array(n);
  const change = new Float64Array(n);
  for (let p = 0; p < n; p++) {
    let d = diffs[p * k + k - 1];
    if (Number.isNaN(d)) {
      let sum = 0;
      let cnt = 0;
      for (let c = 0; c < k - 1; c++) {
        const v = diffs[p * k + c];
        if (!Number.isNaN(v)) (sum += v), cnt++;
      }
      d = cnt ? sum / cnt : NaN;
    }
    change[p] = d;
    size[p] = Number.isNaN(d) ? -1 : Math.abs(d);
  }
  // The `top` largest, kept in order while scanning: sorting every pair to keep ten is not needed.
  // A later pair of the same size goes after the earlier ones (run a's order).
  const best: number[] = [];
  for (let p = 0; p < n && top > 0; p++) {
    if (!(size[p] > TIE) || (best.length === top && size[p] <= size[best[top - 1]])) continue;
    let at = best.length;
    while (at > 0 && size[best[at - 1]] < size[p]) at--;
    best.splice(at, 0, p);
    if (best.length > top) best.pop();
  }
  return best.map((p) => {
    const ra = pairs.a[p];
    const rb = pairs.b[p];
    return {
      item_id: a.itemIds[ra],
      position_a: a.positions[ra],
      position_b: b.positions[rb],
      score_a: orNull(a.rowScores[ra]),
      score_b: orNull(b.rowScores[rb]),
      delta: change[p],
      execution_log_id_a: a.logIds[ra],
      execution_log_id_b: b.logIds[rb],
    };
  });
}

/** Names of the evaluators whose interval lies wholly below 0 (the gate of `tribunal batch compare`). */
export const regressions = (c: Comparison): string[] => c.evaluators.filter((e) => e.verdict === 'regressed').map((e) => e.evaluator_name);
