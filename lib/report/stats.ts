/**
 * Statistics over repeated measurements: per cell (the rows that share the key columns), one
 * summary row for each of mean, median, sample standard deviation, minimum and maximum of every
 * numeric column. Run rows carry `stat` = `run`; summary rows carry the statistic's name and, in
 * `repeat`, the number of runs summarised.
 * @module
 */
import type { Row } from "./row.ts";

/** The two columns a ratio column divides: `numerator / denominator`. */
export interface RatioOf {
  /** The column divided. */
  readonly numerator: string;
  /** The column it is divided by. */
  readonly denominator: string;
}

/** A column and, where it is a ratio of two others in each run row, which (a ColumnDoc fits). */
export interface RatioColumn {
  /** The column's name. */
  readonly name: string;
  /** The columns it divides, if it is a ratio. */
  readonly ratio?: RatioOf;
}

/** The summary statistics, in the order their rows are written. */
export const STATS = ["mean", "median", "stddev", "min", "max"] as const;

/** One summary statistic. */
export type Stat = typeof STATS[number];

/** The statistic `stat` of `values` (at least one); stddev is the sample one (n - 1), 0 for one value. */
export function statistic(stat: Stat, values: readonly number[]): number {
  const n = values.length;
  const mean = values.reduce((a, v) => a + v, 0) / n;
  switch (stat) {
    case "mean":
      return mean;
    case "median": {
      const s = [...values].sort((a, b) => a - b);
      const mid = Math.floor(n / 2);
      return n % 2 === 1 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
    }
    case "stddev":
      return n < 2 ? 0 : Math.sqrt(values.reduce((a, v) => a + (v - mean) ** 2, 0) / (n - 1));
    case "min":
      return Math.min(...values);
    case "max":
      return Math.max(...values);
  }
}

/** The suffix of the JSON field that keeps the mean of a ratio column's per-run values. */
export const MEAN_OF_RATIOS = "_mean_of_ratios";

/**
 * Sets the ratio columns (`ratios`, each with its `ratio`) of the summary row `row` of statistic
 * `stat` over `rows`: in the mean (median) row, the ratio of the two columns' means (medians),
 * which is what a ratio of rates means (the mean of per-run ratios weighs a slow run's ratio as
 * much as a fast one's); the mean row also keeps the mean of the runs' ratios as
 * NAME_mean_of_ratios, a field JSON shows and CSV leaves out. Other statistics stay those of the
 * runs' ratios.
 */
function setRatios(row: Row, stat: Stat, rows: readonly Row[], ratios: readonly RatioColumn[]) {
  if (stat !== "mean" && stat !== "median") return;
  for (const { name, ratio } of ratios) {
    if (ratio === undefined) continue;
    const top = rows.map((r) => r[ratio.numerator]);
    const bottom = rows.map((r) => r[ratio.denominator]);
    const finite = (v: unknown) => typeof v === "number" && Number.isFinite(v);
    if (!top.every(finite) || !bottom.every(finite)) continue;
    if (stat === "mean" && typeof row[name] === "number") row[name + MEAN_OF_RATIOS] = row[name];
    // mutant: summary-ratio-of-means
    row[name] = statistic(stat, top as number[]) / statistic(stat, bottom as number[]);
  }
}

/**
 * Summary rows for every cell with at least two successful runs (rows without an `error`), in
 * the order the cells first appear. Key columns are copied, and `settings` (columns that echo a
 * flag's value) where all runs agree; every other column that is a number in all runs gets the
 * statistic; other columns are copied when all runs agree, else left empty.
 * Ratio columns (`ratios`: columns with a {@link RatioColumn.ratio}) are ratios of the statistic in
 * the mean and median rows (see setRatios).
 */
export function summaryRows(
  runs: readonly Row[],
  keys: readonly string[],
  ratios: readonly RatioColumn[] = [],
  settings: readonly string[] = [],
): Row[] {
  const cells = new Map<string, Row[]>();
  for (const row of runs) {
    if (row.error) continue;
    const id = JSON.stringify(keys.map((k) => row[k] ?? null));
    const list = cells.get(id);
    if (list) list.push(row);
    else cells.set(id, [row]);
  }
  const out: Row[] = [];
  for (const rows of cells.values()) {
    if (rows.length < 2) continue;
    const columns = [...new Set(rows.flatMap((r) => Object.keys(r)))];
    for (const stat of STATS) {
      const row: Row = {};
      for (const c of columns) {
        if (keys.includes(c)) {
          row[c] = rows[0]![c] ?? null;
          continue;
        }
        const values = rows.map((r) => r[c]);
        // a setting the runs share (--iodepth 8) is what every summary row says, not a stddev of 0
        if (settings.includes(c) && values.every((v) => v === values[0])) {
          row[c] = values[0] ?? null;
        } else if (values.every((v) => typeof v === "number" && Number.isFinite(v))) {
          row[c] = statistic(stat, values as number[]);
        } else if (values.every((v) => v === values[0])) {
          row[c] = values[0] ?? null;
        } else {
          row[c] = null;
        }
      }
      setRatios(row, stat, rows, ratios);
      row.repeat = rows.length;
      row.stat = stat;
      out.push(row);
    }
  }
  return out;
}

/**
 * Whether a ratio that misses its goal misses it by less than the run's own noise: the shortfall
 * (goal over median for an at-least goal, median over goal for an at-most one) is within half the
 * spread of `sameSide`, the ratios of one side against itself in the same pairs (A/A: the later
 * raw over the earlier), on a log scale. False when the median meets the goal or there are fewer
 * than two A/A ratios. Unitless.
 */
export function missWithinNoise(
  median: number,
  goal: { readonly op: ">=" | "<="; readonly value: number },
  sameSide: readonly number[],
): boolean {
  if (sameSide.length < 2 || !(median > 0) || !sameSide.every((v) => v > 0)) return false;
  const shortfall = goal.op === ">=" ? goal.value / median : median / goal.value;
  if (shortfall <= 1) return false;
  const logs = sameSide.map(Math.log);
  const halfSpread = (Math.max(...logs) - Math.min(...logs)) / 2;
  return Math.log(shortfall) <= halfSpread;
}
