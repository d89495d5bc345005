/**
 * Statistics over repeated measurements: per cell (the rows that share the key columns), one
 * summary row for each of mean, median, sample standard deviation, minimum and maximum of every
 * numeric column. Run rows carry `stat` = `run`; summary rows carry the statistic's name and, in
 * `repeat`, the number of runs summarised.
 * @module
 */
import type { Row } from "./row.ts";

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

/**
 * Summary rows for every cell with at least two successful runs (rows without an `error`), in
 * the order the cells first appear. Key columns are copied; every other column that is a number
 * in all runs gets the statistic; other columns are copied when all runs agree, else left empty.
 */
export function summaryRows(runs: readonly Row[], keys: readonly string[]): Row[] {
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
        if (values.every((v) => typeof v === "number" && Number.isFinite(v))) {
          row[c] = statistic(stat, values as number[]);
        } else if (values.every((v) => v === values[0])) {
          row[c] = values[0] ?? null;
        } else {
          row[c] = null;
        }
      }
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
