/**
 * The compare chart: per cell and metric, the ratio B/A (Hodges-Lehmann) as a point with its
 * distribution-free interval as a bar, on a log scale around 1, over a grey band of the changes
 * within the threshold; coloured by verdict. A Vega-Lite specification, drawn by
 * lib/report/plot.ts's renderSpec like every chart.
 * @module
 */
import type { Spec } from "../plot.ts";
import type { Comparison } from "./compare.ts";

/**
 * A cell and metric in words: the cell's key values and the metric (`gsd 16777216 1024
 * read_MiBps`); only the keys of `varying` when given (those whose values differ between cells).
 */
export function comparisonLabel(c: Comparison, varying?: ReadonlySet<string>): string {
  const keys = Object.entries(c.cell).filter(([k, v]) =>
    String(v) !== "" && (varying === undefined || varying.has(k))
  );
  return [...keys.map(([, v]) => String(v)), c.metric.name].join(" ");
}

/** The keys whose values differ between the cells of `comparisons`. */
export function varyingKeys(comparisons: readonly Comparison[]): Set<string> {
  const keys = new Set(comparisons.flatMap((c) => Object.keys(c.cell)));
  return new Set(
    [...keys].filter((k) => new Set(comparisons.map((c) => String(c.cell[k]))).size > 1),
  );
}

/**
 * The Vega-Lite specification of `comparisons` (B named `b` against A named `a`), the band
 * spanning changes within `threshold` (a fraction: 0.05 is 5%).
 */
export function compareChartSpec(
  comparisons: readonly Comparison[],
  a: string,
  b: string,
  threshold: number,
): Spec {
  const varying = varyingKeys(comparisons);
  const values = comparisons.map((c) => ({
    label: comparisonLabel(c, varying),
    ratio: c.change.ratio,
    low: c.change.low,
    high: c.change.high,
    verdict: c.change.verdict,
  }));
  const ratios = values.flatMap((v) => [v.low, v.high, v.ratio]).filter((r) => r > 0);
  // the domain holds every interval and the band, padded so that nothing sits on an axis
  const lo = Math.min(1 / (1 + threshold), ...ratios) / 1.1;
  const hi = Math.max(1 + threshold, ...ratios) * 1.1;
  const x = {
    type: "quantitative",
    title: `ratio ${b} / ${a} (Hodges-Lehmann, interval distribution-free)`,
    scale: { type: "log", domain: [lo, hi], nice: false },
  };
  const y = { field: "label", type: "nominal", title: null, sort: null };
  return {
    $schema: "https://vega.github.io/schema/vega-lite/v6.json",
    title: {
      text: `${b} against ${a}`,
      subtitle: `grey: within ±${(threshold * 100).toFixed(0)}%; a bar is the ratio's interval`,
      anchor: "start",
    },
    background: "white",
    padding: 12,
    config: { font: "DejaVu Sans, Helvetica, Arial, sans-serif" },
    width: 420,
    height: { step: 18 },
    data: { values },
    layer: [
      {
        data: { values: [{ from: 1 / (1 + threshold), to: 1 + threshold }] },
        mark: { type: "rect", color: "#ddd" },
        encoding: { x: { field: "from", ...x }, x2: { field: "to" } },
      },
      {
        data: { values: [{ one: 1 }] },
        mark: { type: "rule", color: "#888" },
        encoding: { x: { field: "one", ...x } },
      },
      {
        mark: { type: "rule", strokeWidth: 2 },
        encoding: {
          y,
          x: { field: "low", ...x },
          x2: { field: "high" },
          color: { field: "verdict", type: "nominal", scale: VERDICT_COLOURS },
        },
      },
      {
        mark: { type: "point", filled: true, size: 50 },
        encoding: {
          y,
          x: { field: "ratio", ...x },
          color: { field: "verdict", type: "nominal", title: "verdict", scale: VERDICT_COLOURS },
        },
      },
    ],
  };
}

/** One colour per verdict, the same in every compare chart. */
const VERDICT_COLOURS = {
  domain: ["regression", "improvement", "small", "same", "too-few"],
  range: ["#c0392b", "#27ae60", "#e67e22", "#7f8c8d", "#bdc3c7"],
};
