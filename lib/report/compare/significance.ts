/**
 * Is B different from A beyond noise, with few repeats: the Mann-Whitney U test (two-sided,
 * exact permutation p-value, mid-ranks for ties) and the Hodges-Lehmann estimate of the ratio
 * B/A with its distribution-free confidence interval (order statistics of the pairwise log
 * ratios, from the exact null distribution of U).
 *
 * Why rank-based and exact: with 3-10 repeats a t-test leans on a normality nobody can check and
 * one outlier (a cache hiccup, a neighbour's burst) moves its mean; a bootstrap of 5 values
 * resamples the same 5 values and gives intervals too narrow. Ranks ignore the outlier's size,
 * and the exact distribution is right at any n. The price is honesty about small n: with 3
 * against 3 repeats the smallest two-sided p is 0.1, so nothing is ever significant at 0.05 —
 * {@link minimumP} says so, and callers print it rather than a verdict.
 * @module
 */

/** Largest number of rank arrangements enumerated exactly; beyond it, the normal approximation. */
const EXACT_LIMIT = 200_000;

/** Binomial coefficient C(n, k) as a float (exact below 2^53 for the sizes used here). */
function choose(n: number, k: number): number {
  let c = 1;
  for (let i = 1; i <= k; i++) c = (c * (n - k + i)) / i;
  return Math.round(c);
}

/** Mid-ranks (1-based) of `values`: tied values share the mean of their ranks. */
export function midRanks(values: readonly number[]): number[] {
  const order = values.map((v, i) => [v, i] as const).sort((x, y) => x[0] - y[0]);
  const ranks = new Array<number>(values.length);
  for (let i = 0; i < order.length;) {
    let j = i;
    while (j + 1 < order.length && order[j + 1]![0] === order[i]![0]) j++;
    const rank = (i + j) / 2 + 1;
    for (let k = i; k <= j; k++) ranks[order[k]![1]] = rank;
    i = j + 1;
  }
  return ranks;
}

/**
 * Counts of the Mann-Whitney U statistic under the null hypothesis (no ties) for samples of
 * sizes `m` and `n`: `counts[u]` arrangements give U = u, u = 0 .. m n.
 */
export function uDistribution(m: number, n: number): number[] {
  // f[i][j][u]: arrangements of i and j values with U = u, built by placing the largest value
  let prev: number[][] = [];
  for (let j = 0; j <= n; j++) prev.push([1]);
  for (let i = 1; i <= m; i++) {
    const cur: number[][] = [[1]];
    for (let j = 1; j <= n; j++) {
      const size = i * j + 1;
      const row = new Array<number>(size).fill(0);
      // the largest value is from the first sample: it exceeds all j of the second (adds j)
      const a = prev[j]!;
      for (let u = 0; u < a.length; u++) row[u + j]! += a[u]!;
      // or from the second sample: adds nothing
      const b = cur[j - 1]!;
      for (let u = 0; u < b.length; u++) row[u]! += b[u]!;
      cur.push(row);
    }
    prev = cur;
  }
  return prev[n]!;
}

/** Smallest two-sided p-value the exact test can reach with samples of sizes `m` and `n`. */
export function minimumP(m: number, n: number): number {
  return m === 0 || n === 0 ? 1 : Math.min(1, 2 / choose(m + n, m));
}

/** Calls `visit` with every `k`-subset of 0 .. `n` - 1 (as an index array reused between calls). */
function eachSubset(n: number, k: number, visit: (subset: readonly number[]) => void): void {
  const idx = Array.from({ length: k }, (_, i) => i);
  for (;;) {
    visit(idx);
    let i = k - 1;
    while (i >= 0 && idx[i] === n - k + i) i--;
    if (i < 0) return;
    idx[i]!++;
    for (let j = i + 1; j < k; j++) idx[j] = idx[j - 1]! + 1;
  }
}

/** Standard normal upper tail P(Z > z). */
function normalTail(z: number): number {
  // Abramowitz and Stegun 7.1.26 on erfc, |error| < 1.5e-7
  const x = Math.abs(z) / Math.SQRT2;
  const t = 1 / (1 + 0.3275911 * x);
  const y = t *
    (0.254829592 + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027 + t * 1.061405429))));
  const erfc = y * Math.exp(-x * x);
  return z >= 0 ? erfc / 2 : 1 - erfc / 2;
}

/** The result of {@link mannWhitney}. */
export interface MannWhitney {
  /** U of the second sample: pairs (a, b) with b > a, ties counted one half. */
  readonly u: number;
  /** Two-sided p-value. */
  readonly p: number;
  /** How p was found: every arrangement of the ranks, or the normal approximation. */
  readonly method: "exact" | "normal";
}

/**
 * The two-sided Mann-Whitney U test of `a` against `b` (each at least one value). Exact: the
 * p-value is the share of all C(m + n, m) arrangements of the pooled mid-ranks whose rank sum is
 * at least as far from its mean as the one observed (so ties are handled exactly); beyond
 * {@link EXACT_LIMIT} arrangements, the normal approximation with the tie correction.
 */
export function mannWhitney(a: readonly number[], b: readonly number[]): MannWhitney {
  const m = a.length, n = b.length;
  const ranks = midRanks([...a, ...b]);
  const rankSumB = ranks.slice(m).reduce((s, r) => s + r, 0);
  const u = rankSumB - (n * (n + 1)) / 2;
  const mean = (m * n) / 2;
  const observed = Math.abs(u - mean);
  if (choose(m + n, n) <= EXACT_LIMIT) {
    let extreme = 0, total = 0;
    const offset = (n * (n + 1)) / 2;
    eachSubset(m + n, n, (subset) => {
      let sum = 0;
      for (const i of subset) sum += ranks[i]!;
      total++;
      // a tolerance for the halves of mid-ranks
      if (Math.abs(sum - offset - mean) >= observed - 1e-9) extreme++;
    });
    return { u, p: Math.min(1, extreme / total), method: "exact" };
  }
  const counts = new Map<number, number>();
  for (const r of ranks) counts.set(r, (counts.get(r) ?? 0) + 1);
  let ties = 0;
  for (const t of counts.values()) ties += t ** 3 - t;
  const N = m + n;
  const variance = (m * n / 12) * ((N + 1) - ties / (N * (N - 1)));
  if (variance <= 0) return { u, p: 1, method: "normal" };
  const z = (observed - 0.5) / Math.sqrt(variance); // continuity correction
  return { u, p: Math.min(1, 2 * normalTail(Math.max(0, z))), method: "normal" };
}

/** The ratio B/A estimated from two samples, with its confidence interval. */
export interface RatioEstimate {
  /** Hodges-Lehmann estimate: exp of the median of every log(b / a) over all pairs. */
  readonly ratio: number;
  /** Lower end of the interval (the ratio). */
  readonly low: number;
  /** Upper end of the interval. */
  readonly high: number;
  /**
   * The confidence the interval really has (order statistics give discrete levels: the largest
   * at or below the one asked for, or the widest interval's when none reaches it), 0..1.
   */
  readonly confidence: number;
}

/**
 * The Hodges-Lehmann ratio B/A of two samples of positive numbers and its distribution-free
 * interval: the k-th smallest and k-th largest of the m n pairwise log ratios, k the largest with
 * P(U < k) at most (1 - confidence) / 2 under the null distribution of U. With too few values for
 * any such k, the interval is the range of the pairwise ratios and `confidence` says what it has.
 */
export function ratioEstimate(
  a: readonly number[],
  b: readonly number[],
  confidence = 0.95,
): RatioEstimate {
  const m = a.length, n = b.length;
  const diffs: number[] = [];
  for (const x of a) for (const y of b) diffs.push(Math.log(y) - Math.log(x));
  diffs.sort((x, y) => x - y);
  const mid = diffs.length >> 1;
  const median = diffs.length % 2 === 1 ? diffs[mid]! : (diffs[mid - 1]! + diffs[mid]!) / 2;
  const counts = uDistribution(m, n);
  const total = counts.reduce((s, c) => s + c, 0);
  const tail = (1 - confidence) / 2;
  // k: P(U <= k - 1) <= tail; the interval is [d_k, d_{mn+1-k}] (1-based)
  let k = 0, below = 0;
  while (k < counts.length && (below + counts[k]!) / total <= tail) below += counts[k++]!;
  // too few values for the level asked: the widest interval, with the level it has
  if (k === 0) below = counts[k++]!;
  return {
    ratio: Math.exp(median),
    low: Math.exp(diffs[k - 1]!),
    high: Math.exp(diffs[diffs.length - k]!),
    confidence: 1 - 2 * below / total,
  };
}
