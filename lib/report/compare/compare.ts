/**
 * Two runs (or two backends of one run) compared cell by cell: for every measured column, the
 * ratio B/A with its interval and the Mann-Whitney p-value over the repeats
 * (./significance.ts), a verdict against a threshold, and, where both runs hold a control
 * backend, the same ratio relative to the control's own change in that run, so a machine that
 * drifted as a whole is told apart from a backend that changed.
 * @module
 */
import type { Row } from "../row.ts";
import { mannWhitney, minimumP, ratioEstimate } from "./significance.ts";

/**
 * The defaults of every comparison (`compare`, `report`): a change flagged beyond 5%, the
 * two-sided test at 0.05, intervals at 95%, and raw as the control backend.
 */
export const COMPARE_DEFAULTS = {
  threshold: 0.05,
  alpha: 0.05,
  confidence: 0.95,
  control: "raw",
} as const;

/** Which way a metric improves. */
export type Better = "higher" | "lower";

/** A measured column to compare. */
export interface Metric {
  /** Column name (`read_MiBps`). */
  readonly name: string;
  /** Whether a larger value is an improvement (rates) or a regression (times). */
  readonly better: Better;
}

/** How a comparison decides. */
export interface CompareOptions {
  /** Columns that identify a cell (the backend column among them). */
  readonly keys: readonly string[];
  /** The column naming the backend (`framing`). */
  readonly backendColumn: string;
  /** The columns compared. */
  readonly metrics: readonly Metric[];
  /** Smallest change flagged, as a fraction (0.05: 5%). */
  readonly threshold: number;
  /** Significance level of the two-sided test (0.05). */
  readonly alpha: number;
  /** Confidence of the ratio's interval (0.95). */
  readonly confidence: number;
  /** The control backend (`raw`): the others are also compared relative to it; none to skip. */
  readonly control?: string;
}

/** What a comparison concludes. */
export type Verdict =
  /** Significant, beyond the threshold, the bad way. */
  | "regression"
  /** Significant, beyond the threshold, the good way. */
  | "improvement"
  /** Significant but within the threshold. */
  | "small"
  /** Not significant (`~`). */
  | "same"
  /** Too few repeats for any p-value to reach alpha: no verdict. */
  | "too-few";

/** Count, mean, standard deviation, minimum, median and maximum of one sample. */
export interface SampleSummary {
  /** Values (runs). */
  readonly n: number;
  /** Mean. */
  readonly mean: number;
  /** Sample standard deviation (0 for one value). */
  readonly sd: number;
  /** Smallest. */
  readonly min: number;
  /** Median. */
  readonly median: number;
  /** Largest. */
  readonly max: number;
}

/** One metric of one cell, A against B. */
export interface Change {
  /** B/A (Hodges-Lehmann). */
  readonly ratio: number;
  /** Interval of the ratio. */
  readonly low: number;
  /** Interval of the ratio. */
  readonly high: number;
  /** The interval's real confidence (discrete with few repeats). */
  readonly confidence: number;
  /** Two-sided Mann-Whitney p-value. */
  readonly p: number;
  /** Smallest p-value these repeat counts can give. */
  readonly minP: number;
  /** The verdict. */
  readonly verdict: Verdict;
}

/** A cell's metric compared. */
export interface Comparison {
  /** The cell: its key columns' values. */
  readonly cell: Readonly<Record<string, string | number | boolean>>;
  /** The metric. */
  readonly metric: Metric;
  /** A's values summed up. */
  readonly a: SampleSummary;
  /** B's values summed up. */
  readonly b: SampleSummary;
  /** B against A. */
  readonly change: Change;
  /** B against A, each value divided by the control's median in its run (when there is one). */
  readonly relative?: Change;
  /** The control's own change in this cell and metric (when there is one). */
  readonly control?: Change;
  /**
   * The backend's own change was a regression or an improvement, but the control moved the same
   * way beyond the threshold and the answer ({@link verdict}) is not: the machine changed, not
   * the backend. On the control's own comparison: every other backend of the cell moved its way.
   */
  readonly machineChanged: boolean;
  /**
   * The answer ({@link withControl}): `same` where the backend moved as the control did; else,
   * where the control moved significantly, the change relative to it; else the change itself.
   */
  readonly verdict: Verdict;
}

/** The outcome of comparing two sets of rows. */
export interface CompareResult {
  /** Every metric of every cell both sides hold. */
  readonly comparisons: readonly Comparison[];
  /** Cells only A holds (their key values). */
  readonly onlyA: readonly Readonly<Record<string, string | number | boolean>>[];
  /** Cells only B holds. */
  readonly onlyB: readonly Readonly<Record<string, string | number | boolean>>[];
}

/** Run rows that did not fail: `stat` absent or `run`, `error` empty. */
export function measuredRows(rows: readonly Row[]): Row[] {
  return rows.filter((r) =>
    (r.stat === undefined || r.stat === "run" || r.stat === "") && !r.error
  );
}

type Cell = Readonly<Record<string, string | number | boolean>>;

/** The rows of `rows` grouped by their values of `keys`, in the order cells first appear. */
function cells(
  rows: readonly Row[],
  keys: readonly string[],
): Map<string, { cell: Cell; rows: Row[] }> {
  const out = new Map<string, { cell: Cell; rows: Row[] }>();
  for (const row of rows) {
    const cell: Record<string, string | number | boolean> = {};
    for (const k of keys) {
      const v = row[k];
      cell[k] = v === undefined || v === null ? "" : v as string | number | boolean;
    }
    const id = JSON.stringify(keys.map((k) => cell[k]));
    const group = out.get(id);
    if (group) group.rows.push(row);
    else out.set(id, { cell, rows: [row] });
  }
  return out;
}

/** Summary of a non-empty sample. */
export function summarize(values: readonly number[]): SampleSummary {
  const n = values.length;
  const sorted = [...values].sort((x, y) => x - y);
  const mean = values.reduce((s, v) => s + v, 0) / n;
  const sd = n < 2 ? 0 : Math.sqrt(values.reduce((s, v) => s + (v - mean) ** 2, 0) / (n - 1));
  const mid = n >> 1;
  const median = n % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
  return { n, mean, sd, min: sorted[0]!, median, max: sorted[n - 1]! };
}

/** B against A for one metric: ratio, interval, p-value and verdict. */
export function compareSamples(
  a: readonly number[],
  b: readonly number[],
  better: Better,
  options: Pick<CompareOptions, "threshold" | "alpha" | "confidence">,
): Change {
  const estimate = ratioEstimate(a, b, options.confidence);
  const { p } = mannWhitney(a, b);
  const minP = minimumP(a.length, b.length);
  let verdict: Verdict;
  if (minP >= options.alpha) verdict = "too-few";
  else if (p >= options.alpha) verdict = "same";
  else if (Math.abs(Math.log(estimate.ratio)) <= Math.log(1 + options.threshold)) verdict = "small";
  else verdict = (estimate.ratio > 1) === (better === "higher") ? "improvement" : "regression";
  return { ...estimate, p, minP, verdict };
}

/** The positive finite values of `column` in `rows`. */
function values(rows: readonly Row[], column: string): number[] {
  return rows.flatMap((r) => {
    const v = r[column];
    return typeof v === "number" && Number.isFinite(v) && v > 0 ? [v] : [];
  });
}

/**
 * Each of `own`'s values divided by the control's median in the same run: what moved the whole
 * run (a machine slower that day) divides out, and the test keeps the backend's own spread. Not
 * each value by the control's value of the same repeat: on the machines measured, phases a few
 * seconds apart vary independently more than they drift together, and the first timed phase of a
 * process is an outlier, so per-repeat ratios doubled the spread (tools/aa_compare.ts: a 21%
 * slowdown of one backend flagged in none of 20 pairs with them, in 11 with the median).
 */
function relativeTo(own: readonly number[], control: readonly number[]): number[] {
  const median = summarize(control).median;
  return own.map((v) => v / median);
}

/**
 * Compares the cells of `a` and `b` (run rows; summary rows and failed cells are left out) by
 * `options.keys`; each metric with at least one value on both sides is compared. With a control
 * backend in both runs, every other backend is also compared relative to it.
 */
export function compareRows(
  a: readonly Row[],
  b: readonly Row[],
  options: CompareOptions,
): CompareResult {
  const cellsA = cells(measuredRows(a), options.keys);
  const cellsB = cells(measuredRows(b), options.keys);
  const controlId = (cell: Cell) =>
    JSON.stringify(
      options.keys.map((k) => k === options.backendColumn ? options.control : cell[k]),
    );
  const comparisons: Comparison[] = [];
  for (const [id, cellA] of cellsA) {
    const cellB = cellsB.get(id);
    if (cellB === undefined) continue;
    const isControl = cellA.cell[options.backendColumn] === options.control;
    const controlA = options.control === undefined || isControl
      ? undefined
      : cellsA.get(controlId(cellA.cell));
    const controlB = controlA && cellsB.get(controlId(cellA.cell));
    for (const metric of options.metrics) {
      const va = values(cellA.rows, metric.name), vb = values(cellB.rows, metric.name);
      if (va.length === 0 || vb.length === 0) continue;
      const change = compareSamples(va, vb, metric.better, options);
      let relative: Change | undefined, control: Change | undefined;
      if (controlA && controlB) {
        const ca = values(controlA.rows, metric.name), cb = values(controlB.rows, metric.name);
        if (ca.length > 0 && cb.length > 0) {
          control = compareSamples(ca, cb, metric.better, options);
          relative = compareSamples(
            relativeTo(va, ca),
            relativeTo(vb, cb),
            metric.better,
            options,
          );
        }
      }
      const verdict = withControl(change, relative, control, options.threshold);
      comparisons.push({
        cell: cellA.cell,
        metric,
        a: summarize(va),
        b: summarize(vb),
        change,
        relative,
        control,
        machineChanged: flaggedChange(change) && !flagged(verdict) &&
          control !== undefined && movedWith(change, control, options.threshold),
        verdict,
      });
    }
  }
  const onlyA = [...cellsA].filter(([id]) => !cellsB.has(id)).map(([, c]) => c.cell);
  const onlyB = [...cellsB].filter(([id]) => !cellsA.has(id)).map(([, c]) => c.cell);
  return { comparisons: withControlMoves(comparisons, options), onlyA, onlyB };
}

/**
 * A backend's verdict given the control's change in the same cell and metric (none: its own
 * change's). Where the backend moved as the control did (the control beyond the threshold, the
 * two within it of each other, significant or not), the machine changed: `same`. Otherwise,
 * where the control moved significantly, the change relative to it; where it did not, the
 * backend's own change. Measured with tools/aa_compare.ts over 60 pairs of runs of one commit:
 * 8 cells of 120 with a false regression, against 14 when only a significant move of the control
 * counted, and a 20% slowdown of one backend flagged in every pair by both.
 */
export function withControl(
  change: Change,
  relative: Change | undefined,
  control: Change | undefined,
  threshold: number,
): Verdict {
  if (relative === undefined || control === undefined || change.verdict === "too-few") {
    return change.verdict;
  }
  // mutant: compare-moved-with
  if (movedWith(change, control, threshold)) return "same";
  // mutant: compare-control-gate
  return flaggedChange(control) ? relative.verdict : change.verdict;
}

/** Whether `change` went the control's way by about as much (their ratios within the threshold). */
function movedWith(change: Change, control: Change, threshold: number): boolean {
  return Math.abs(Math.log(change.ratio / control.ratio)) <= Math.log(1 + threshold) &&
    Math.abs(Math.log(control.ratio)) > Math.log(1 + threshold);
}

/**
 * The control's own comparisons, told apart from a change of the machine: where the control
 * moved significantly and every other backend of the cell moved the same way beyond the
 * threshold, the control's verdict is `same` and it too says the machine changed. A control
 * that moved alone, or with only some backends, keeps its verdict.
 */
function withControlMoves(
  comparisons: readonly Comparison[],
  options: CompareOptions,
): Comparison[] {
  const key = (c: Comparison) =>
    JSON.stringify([
      c.metric.name,
      ...options.keys.map((k) => k === options.backendColumn ? "" : c.cell[k]),
    ]);
  const others = new Map<string, Comparison[]>();
  for (const c of comparisons) {
    if (c.control === undefined) continue;
    const list = others.get(key(c));
    if (list) list.push(c);
    else others.set(key(c), [c]);
  }
  return comparisons.map((c) => {
    if (c.cell[options.backendColumn] !== options.control) return c;
    const moved = others.get(key(c));
    const up = c.change.ratio > 1;
    const beyond = (o: Comparison) =>
      (o.change.ratio > 1) === up &&
      Math.abs(Math.log(o.change.ratio)) > Math.log(1 + options.threshold);
    // mutant: compare-control-machine
    if (!flaggedChange(c.change) || !moved?.every(beyond)) return c;
    return { ...c, machineChanged: true, verdict: "same" };
  });
}

/** Whether a verdict is a regression or an improvement. */
function flagged(v: Verdict | undefined): boolean {
  return v === "regression" || v === "improvement";
}

/** Whether a change is a regression or an improvement. */
function flaggedChange(c: Change | undefined): boolean {
  return flagged(c?.verdict);
}

/**
 * The backends of one run against a reference backend of the same run: each other backend's
 * cells against the reference's cells with the same other keys (the same test and verdicts as
 * {@link compareRows}; no control).
 */
export function compareBackends(
  rows: readonly Row[],
  reference: string,
  options: Omit<CompareOptions, "control">,
): CompareResult {
  const measured = measuredRows(rows);
  const ref = measured.filter((r) => r[options.backendColumn] === reference);
  if (ref.length === 0) return { comparisons: [], onlyA: [], onlyB: [] };
  const others = [...new Set(measured.map((r) => r[options.backendColumn]))]
    .filter((name) => name !== reference);
  const comparisons: Comparison[] = [];
  const onlyA: Cell[] = [], onlyB: Cell[] = [];
  for (const name of others) {
    // the reference's rows relabelled as this backend's, so the cells match by every key
    const a = ref.map((r) => ({ ...r, [options.backendColumn]: name }) as Row);
    const b = measured.filter((r) => r[options.backendColumn] === name);
    const result = compareRows(a, b, options);
    comparisons.push(...result.comparisons);
    onlyA.push(...result.onlyA.map((c) => ({ ...c, [options.backendColumn]: reference })));
    onlyB.push(...result.onlyB);
  }
  return { comparisons, onlyA, onlyB };
}

/** The column giving a row's place among the backends of its repeat (1: measured first). */
export const ORDER_COLUMN = "order";

/**
 * The order effect in one run: each backend's rows measured first in their repeat (`order` 1)
 * against its rows measured later (2 or more), with the same test and verdicts as
 * {@link compareRows} (no control: every backend takes each place). A significant change says
 * a backend's place in the repeat moved its numbers (compilation, caches, a drifting machine).
 */
export function compareOrders(
  rows: readonly Row[],
  options: Omit<CompareOptions, "control">,
): CompareResult {
  const placed = measuredRows(rows).filter((r) => typeof r[ORDER_COLUMN] === "number");
  return compareRows(
    placed.filter((r) => r[ORDER_COLUMN] === 1),
    placed.filter((r) => (r[ORDER_COLUMN] as number) > 1),
    options,
  );
}
