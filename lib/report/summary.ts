/**
 * The summary people read at the end of a run with repeats: for each cell (the run rows that
 * share the key columns) with two or more successful runs, each rate as `mean ± sd (min … max),
 * n`; then, hyperfine-style, each backend's rates against a reference backend's in the same cell
 * otherwise (`gsd: 1.23 ± 0.04 × the write rate of python-gsd`).
 *
 * The reference is python-gsd where present (gsd's own library, the seed's comparison), else raw
 * (the control that `compare` uses, the file system's speed with no format), else the first
 * backend measured. The ± of a ratio of means is propagated from the two standard deviations as
 * hyperfine does: r x sqrt((sd_a / mean_a)^2 + (sd_b / mean_b)^2).
 * @module
 */
import type { Row } from "./row.ts";
import { type ColumnDoc, humanValue } from "./human.ts";
import { statistic } from "./stats.ts";
import { formatG } from "./units.ts";

/** Backends a cell's others are compared with, the first present in a group is the reference. */
export const REFERENCE_BACKENDS = ["python-gsd", "raw"] as const;

/** The column that names the backend of a row; the other key columns name the cell. */
export const SERIES_COLUMN = "framing";

/** One rate of one cell over its runs, MiB/s. */
interface Spread {
  readonly mean: number;
  readonly sd: number;
  readonly min: number;
  readonly max: number;
  readonly n: number;
}

/** The spread of `values` (at least two). */
function spread(values: readonly number[]): Spread {
  return {
    mean: statistic("mean", values),
    sd: statistic("stddev", values),
    min: statistic("min", values),
    max: statistic("max", values),
    n: values.length,
  };
}

/** One cell with repeats: its key values and the spread of each rate. */
interface Cell {
  readonly keys: Row;
  readonly rates: Map<string, Spread>;
}

/** A rate column's name for people: `write_MiBps` is the write rate, `MiBps` the rate. */
function rateName(column: string): string {
  const name = column.replace(/_?MiBps$/, "").replaceAll("_", " ");
  return name === "" ? "rate" : `${name} rate`;
}

/** Numbers to four significant digits (as the human table). */
const g = (x: number) => formatG(x, 4);

/**
 * The cells with two or more successful run rows (no `error`, `stat` run or absent), in the
 * order they first appear, with the spread of each of `rates` that is a number in every run.
 */
function cellsOf(rows: readonly Row[], keys: readonly string[], rates: readonly string[]): Cell[] {
  const groups = new Map<string, Row[]>();
  for (const row of rows) {
    if (row.error || (row.stat !== undefined && row.stat !== "run")) continue;
    const id = JSON.stringify(keys.map((k) => row[k] ?? null));
    const list = groups.get(id);
    if (list) list.push(row);
    else groups.set(id, [row]);
  }
  const cells: Cell[] = [];
  for (const runs of groups.values()) {
    if (runs.length < 2) continue;
    const spreads = new Map<string, Spread>();
    for (const rate of rates) {
      const values = runs.map((r) => r[rate]);
      if (values.every((v) => typeof v === "number" && Number.isFinite(v))) {
        spreads.set(rate, spread(values as number[]));
      }
    }
    if (spreads.size > 0) cells.push({ keys: runs[0]!, rates: spreads });
  }
  return cells;
}

/**
 * A cell's name for people: its backend, then the key columns whose values differ between
 * cells (`gsd (size 128 MiB, N 32^2)`); keys every cell shares say nothing.
 */
function cellLabel(cell: Cell, varying: readonly ColumnDoc[], withSeries: boolean): string {
  const parts = varying.map((d) =>
    `${d.name.replace(/_bytes$/, "")} ${humanValue(d.kind, cell.keys[d.name])}`
  );
  const series = cell.keys[SERIES_COLUMN];
  const cellKeys = parts.join(", ");
  if (!withSeries || series === undefined) return cellKeys;
  return cellKeys === "" ? String(series) : `${series} (${cellKeys})`;
}

/** The reference backend among `names`: the first of {@link REFERENCE_BACKENDS}, else the first. */
export function referenceBackend(names: readonly string[]): string | undefined {
  return REFERENCE_BACKENDS.find((r) => names.includes(r)) ?? names[0];
}

/**
 * `a`'s mean over `ref`'s, with the ± propagated from both standard deviations (hyperfine's
 * formula), unitless.
 */
export function ratioOfMeans(a: Spread, ref: Spread): { ratio: number; sd: number } {
  const ratio = a.mean / ref.mean;
  const sd = ratio * Math.sqrt((a.sd / a.mean) ** 2 + (ref.sd / ref.mean) ** 2);
  return { ratio, sd };
}

/**
 * The summary of a run's rows: every cell with repeats, each of its rates (`rates`: the rate
 * columns people see, MiB/s) as `mean ± sd (min … max), n`; then per group of cells that differ
 * only in their backend, a line per other backend and rate against the reference
 * ({@link referenceBackend}). `keys` are the key columns of a cell (with their docs, for the
 * values' look). Empty when no cell has two successful runs.
 */
export function summaryText(
  rows: readonly Row[],
  keys: readonly ColumnDoc[],
  rates: readonly string[],
): string {
  const names = keys.map((k) => k.name);
  const cells = cellsOf(rows, names, rates);
  if (cells.length === 0) return "";
  const others = keys.filter((k) => k.name !== SERIES_COLUMN);
  const varying = others.filter((k) =>
    new Set(cells.map((c) => JSON.stringify(c.keys[k.name] ?? null))).size > 1
  );
  const width = Math.max(...rates.map((r) => rateName(r).length));
  const lines = ["summary over the repeats, MiB/s: mean ± sd (min … max), n runs"];
  for (const cell of cells) {
    lines.push(cellLabel(cell, varying, true));
    for (const [rate, s] of cell.rates) {
      lines.push(
        `  ${rateName(rate).padEnd(width)}  ${g(s.mean)} ± ${g(s.sd)} (${g(s.min)} … ${
          g(s.max)
        }), n = ${s.n}`,
      );
    }
  }
  lines.push(...comparisons(cells, others, varying));
  return lines.join("\n") + "\n";
}

/** The lines of each group of cells that differ only in their backend, against its reference. */
function comparisons(
  cells: readonly Cell[],
  others: readonly ColumnDoc[],
  varying: readonly ColumnDoc[],
): string[] {
  const groups = new Map<string, Cell[]>();
  for (const cell of cells) {
    const id = JSON.stringify(others.map((k) => cell.keys[k.name] ?? null));
    const list = groups.get(id);
    if (list) list.push(cell);
    else groups.set(id, [cell]);
  }
  const lines: string[] = [];
  for (const group of groups.values()) {
    const names = group.map((c) => String(c.keys[SERIES_COLUMN] ?? ""));
    const reference = referenceBackend(names);
    const ref = group.find((c) => String(c.keys[SERIES_COLUMN] ?? "") === reference);
    if (group.length < 2 || ref === undefined) continue;
    const label = cellLabel(ref, varying, false);
    lines.push(`against ${reference}${label === "" ? "" : ` (${label})`}:`);
    for (const cell of group) {
      if (cell === ref) continue;
      for (const [rate, s] of cell.rates) {
        const base = ref.rates.get(rate);
        if (base === undefined) continue;
        const { ratio, sd } = ratioOfMeans(s, base);
        lines.push(
          `  ${cell.keys[SERIES_COLUMN]}: ${ratio.toFixed(2)} ± ${sd.toFixed(2)} × the ` +
            `${rateName(rate)} of ${reference}`,
        );
      }
    }
  }
  return lines;
}
