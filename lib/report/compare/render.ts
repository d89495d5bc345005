/**
 * A comparison printed: an aligned table for people (the metadata that differs above it, one
 * line per cell and metric, the cells only one side holds below), or flat rows for data (CSV,
 * JSON). Ratios are B/A; a verdict of `~` means not significant.
 * @module
 */
import type { MetaDifference } from "./meta.ts";
import type { Change, CompareResult, Comparison, Verdict } from "./compare.ts";
import { csvField } from "../formats/csv.ts";
import { jsonText } from "../formats/json.ts";
import { formatSize } from "../units.ts";

/** One side-by-side comparison: the results compared, named as the user gave them. */
export interface CompareReport {
  /** What A is (a file, or a run id). */
  readonly a: string;
  /** What B is. */
  readonly b: string;
  /** The comparison. */
  readonly result: CompareResult;
}

/** How a verdict is printed: `~` for not significant. */
export function verdictText(verdict: Verdict): string {
  return verdict === "same" ? "~" : verdict === "too-few" ? "too few repeats" : verdict;
}

/** A number with 3 significant digits (integers as they are). */
function num(v: number): string {
  if (!Number.isFinite(v)) return String(v);
  if (Math.abs(v) >= 1000) return v.toFixed(0);
  return Number(v.toPrecision(3)).toString();
}

/**
 * What the control made of a comparison's answer: `the machine changed`, the verdict against the
 * control where it differs from the backend's own change, or nothing.
 */
export function controlNote(c: Comparison): string {
  if (c.machineChanged) return "the machine changed";
  return c.verdict !== c.change.verdict ? `${verdictText(c.verdict)} against the control` : "";
}

/** A cell's key values as one label (`gsd 4 MiB N=1024 cold`), empty values left out. */
export function cellLabel(cell: Readonly<Record<string, string | number | boolean>>): string {
  return Object.entries(cell).flatMap(([k, v]) => {
    if (v === "" || v === undefined) return [];
    if (k === "size_bytes" && typeof v === "number") return [formatSize(v)];
    if (k === "N") return [`N=${v}`];
    if (typeof v === "boolean") return v ? [k] : [];
    return k === "framing" || k === "cache" || k === "mode" ? [String(v)] : [`${k}=${v}`];
  }).join(" ");
}

type Cell = Readonly<Record<string, string | number | boolean>>;

/** The keys whose value is the same in every one of `cells`, with that value. */
function sharedKeys(cells: readonly Cell[]): Record<string, string | number | boolean> {
  const shared: Record<string, string | number | boolean> = {};
  const [first, ...rest] = cells;
  for (const [k, v] of Object.entries(first ?? {})) {
    if (k !== "framing" && rest.every((c) => c[k] === v)) shared[k] = v;
  }
  return shared;
}

/** `cell` without the keys of `shared`. */
function without(cell: Cell, shared: Readonly<Record<string, unknown>>): Cell {
  return Object.fromEntries(Object.entries(cell).filter(([k]) => !(k in shared)));
}

/** `0.97 [0.93, 1.01] 90%`: a ratio, its interval and the interval's real confidence. */
function ratioText(c: Change): string {
  return `${num(c.ratio)} [${num(c.low)}, ${num(c.high)}] ${Math.round(c.confidence * 100)}%`;
}

/** Lines of `rows` with columns padded to their widest cell. */
function aligned(rows: readonly (readonly string[])[]): string[] {
  const widths: number[] = [];
  for (const r of rows) r.forEach((c, i) => (widths[i] = Math.max(widths[i] ?? 0, c.length)));
  return rows.map((r) => r.map((c, i) => i === r.length - 1 ? c : c.padEnd(widths[i]!)).join("  "))
    .map((l) => l.trimEnd());
}

/** The human table of `reports`, with `differences` (metadata) above. */
export function compareTable(
  reports: readonly CompareReport[],
  differences: readonly MetaDifference[],
  names: readonly string[],
): string {
  const out: string[] = [];
  if (differences.length > 0) {
    out.push("What differs between the runs:");
    for (const d of differences) {
      out.push(
        `  ${d.field}: ${d.values.map((v, i) => `${names[i] ?? i}=${v || "-"}`).join("  ")}`,
      );
    }
    out.push("");
  }
  const all = reports.flatMap((r) => [
    ...r.result.comparisons.map((c) => c.cell),
    ...r.result.onlyA,
    ...r.result.onlyB,
  ]);
  const shared = sharedKeys(all);
  if (Object.keys(shared).length > 0) out.push(`Every cell: ${cellLabel(shared)}`);
  for (const report of reports) {
    out.push(
      `${report.b} against ${report.a} (B/A, interval and its confidence; ~ not significant)`,
    );
    const rows: string[][] = [[
      "cell",
      "metric",
      "A median (n)",
      "B median (n)",
      "B/A",
      "p",
      "verdict",
      "vs control",
      "",
    ]];
    for (const c of report.result.comparisons) {
      rows.push([
        cellLabel(without(c.cell, shared)),
        c.metric.name,
        `${num(c.a.median)} (${c.a.n})`,
        `${num(c.b.median)} (${c.b.n})`,
        ratioText(c.change),
        num(c.change.p),
        verdictText(c.change.verdict),
        c.relative ? `${ratioText(c.relative)} ${verdictText(c.relative.verdict)}` : "",
        controlNote(c),
      ]);
    }
    out.push(...aligned(rows));
    const unmatched = [
      ...report.result.onlyA.map((c) => `  only in ${report.a}: ${cellLabel(without(c, shared))}`),
      ...report.result.onlyB.map((c) => `  only in ${report.b}: ${cellLabel(without(c, shared))}`),
    ];
    if (unmatched.length > 0) out.push("Cells not matched:", ...unmatched);
    out.push("");
  }
  return out.join("\n");
}

/** One comparison as a flat row (for CSV and JSON). */
export function comparisonRow(
  report: CompareReport,
  c: Comparison,
): Record<string, string | number | boolean> {
  const change = (prefix: string, ch: Change | undefined) =>
    ch === undefined ? {} : {
      [`${prefix}ratio`]: ch.ratio,
      [`${prefix}low`]: ch.low,
      [`${prefix}high`]: ch.high,
      [`${prefix}confidence`]: ch.confidence,
      [`${prefix}p`]: ch.p,
      [`${prefix}min_p`]: ch.minP,
      [`${prefix}verdict`]: ch.verdict,
    };
  return {
    a: report.a,
    b: report.b,
    ...c.cell,
    metric: c.metric.name,
    better: c.metric.better,
    a_median: c.a.median,
    a_n: c.a.n,
    b_median: c.b.median,
    b_n: c.b.n,
    ...change("", c.change),
    ...change("relative_", c.relative),
    ...change("control_", c.control),
    machine_changed: c.machineChanged,
    verdict_with_control: c.verdict,
  };
}

/** CSV of every comparison of `reports`: a header of every field any row has, then the rows. */
export function compareCsv(reports: readonly CompareReport[]): string {
  const rows = reports.flatMap((r) => r.result.comparisons.map((c) => comparisonRow(r, c)));
  const columns = [...new Set(rows.flatMap((r) => Object.keys(r)))];
  return [columns, ...rows.map((r) => columns.map((k) => r[k] ?? ""))]
    .map((fields) => fields.map(csvField).join(",")).join("\n") + "\n";
}

/** One JSON document: the metadata that differs, then each comparison's rows and unmatched cells. */
export function compareJson(
  reports: readonly CompareReport[],
  differences: readonly MetaDifference[],
): string {
  return jsonText({
    meta_differences: differences,
    comparisons: reports.map((r) => ({
      a: r.a,
      b: r.b,
      rows: r.result.comparisons.map((c) => comparisonRow(r, c)),
      only_a: r.result.onlyA,
      only_b: r.result.onlyB,
    })),
  }, 2) + "\n";
}
