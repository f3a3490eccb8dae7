// Krippendorff's alpha for interval data (Krippendorff 2011, "Computing Krippendorff's
// Alpha-Reliability", section C): alpha = 1 - D_o / D_e with the squared difference as the metric.
// Only units with at least two values are pairable. With n pairable values and, per unit u, m_u values:
//   D_o = (1/n) * sum_u [ sum_{i != j in u} (v_i - v_j)^2 / (m_u - 1) ]
//   D_e = (1 / (n (n - 1))) * sum_{i != j over all pairable values} (v_i - v_j)^2
// and sum_{i != j} (v_i - v_j)^2 = 2 (m * sum v^2 - (sum v)^2), so both are one pass: O(values).

export interface AlphaResult {
  /** Null when fewer than two units are pairable or every value is the same (no variation to explain). */
  alpha: number | null;
  /** Units with at least two values. */
  n_items: number;
  /** Values in those units. */
  n_annotations: number;
}

const pairSum = (count: number, sum: number, sumSq: number) => 2 * (count * sumSq - sum * sum);

/** `units` maps a unit (an item) to its values (one per annotator). */
export function krippendorffAlphaInterval(units: Iterable<number[]>): AlphaResult {
  let n = 0;
  let nItems = 0;
  let observed = 0;
  let sum = 0;
  let sumSq = 0;
  for (const values of units) {
    const m = values.length;
    if (m < 2) continue;
    let s = 0;
    let s2 = 0;
    for (const v of values) {
      s += v;
      s2 += v * v;
    }
    observed += pairSum(m, s, s2) / (m - 1);
    n += m;
    nItems++;
    sum += s;
    sumSq += s2;
  }
  if (nItems < 2) return { alpha: null, n_items: nItems, n_annotations: n };
  const dO = observed / n;
  const dE = pairSum(n, sum, sumSq) / (n * (n - 1));
  // Float noise: a spread this small is no spread.
  if (dE <= 1e-12) return { alpha: null, n_items: nItems, n_annotations: n };
  return { alpha: 1 - dO / dE, n_items: nItems, n_annotations: n };
}
