/**
 * Charts of results as SVG, drawn with Vega-Lite and Vega's headless SVG renderer (no browser,
 * no canvas), from the {@link ChartSpec} a workload declares: the mean of each measure over
 * repeats against the x column per series, with error bars (standard deviation) dodged apart
 * at one x, in facets; a baseline (the `fio_*` columns of `--baseline fio`) as a dashed line per
 * panel, the seed's per-unit model dashed beside each series; no point on an axis. Which chart a results file gets is the caller's: this module only draws it.
 * @module
 */
import { parse as parseCsv } from "npm:csv-parse@6.1.0/sync";
import { FormatError, UsageError } from "../core/errors.ts";
import type { Row } from "./row.ts";
import { formatCount, formatSize } from "./units.ts";
import type { ChartFacet, ChartSpec } from "./chart.ts";
import { loadChartEngine } from "./chart_engine.ts";

/** Results read back from a file: the run's facts (when the file has them) and the rows. */
export interface Results {
  /** The JSON `meta` (empty for CSV). */
  readonly meta: Record<string, unknown>;
  /** Every row, numbers as numbers. */
  readonly rows: readonly Row[];
  /** The columns the file declares (CSV header, the JSON `columns`); none for rows in memory. */
  readonly columns?: readonly string[];
}

/** A CSV cell as a number when it is one, else the text ("" for an empty cell). */
function cell(text: string): string | number {
  if (text === "") return "";
  const n = Number(text);
  return Number.isFinite(n) && /^[-+0-9.eE]+$/.test(text) ? n : text;
}

/** The strings of `value` when it is an array of strings, else none. */
function stringList(value: unknown): string[] {
  return Array.isArray(value) && value.every((v) => typeof v === "string") ? value : [];
}

/** Parses results written by sciobench as CSV, JSON lines or one JSON document. */
export function parseResults(text: string, name: string): Results {
  const trimmed = text.trimStart();
  try {
    if (trimmed.startsWith("{") && name.endsWith(".json")) {
      const doc = JSON.parse(trimmed) as {
        meta?: Record<string, unknown>;
        rows?: Row[];
        columns?: unknown;
      };
      if (!Array.isArray(doc.rows)) throw new Error("no 'rows' array");
      return { meta: doc.meta ?? {}, rows: doc.rows, columns: stringList(doc.columns) };
    }
    if (trimmed.startsWith("{")) {
      let meta: Record<string, unknown> = {};
      let columns: string[] = [];
      const rows: Row[] = [];
      for (const line of trimmed.split("\n")) {
        if (line.trim() === "") continue;
        const obj = JSON.parse(line) as Record<string, unknown>;
        const only = Object.keys(obj).length === 1;
        if (obj.meta && typeof obj.meta === "object") {
          meta = obj.meta as Record<string, unknown>;
          columns = stringList(obj.columns);
        } else if (only && obj.end && typeof obj.end === "object") {
          // the facts known at the run's end complete the meta written first
          meta = { ...meta, ...obj.end as Record<string, unknown> };
        } else if (!(only && "interrupted" in obj)) rows.push(obj as Row);
      }
      return { meta, rows, columns };
    }
    const [header = [], ...records] = parseCsv(text, { skip_empty_lines: true }) as string[][];
    if (records.some((r) => r.length !== header.length)) {
      throw new Error("a row's field count differs from the header's");
    }
    return {
      meta: {},
      rows: records.map((r) => Object.fromEntries(header.map((c, i) => [c, cell(r[i]!)]))),
      columns: header,
    };
  } catch (e) {
    throw new FormatError(
      "results",
      name,
      -1,
      `not sciobench results (CSV, JSON lines or JSON): ${e instanceof Error ? e.message : e}`,
    );
  }
}

/** The command whose rows `results` holds, as its meta names it (undefined for CSV). */
export function resultsCommand(results: Results): string | undefined {
  const command = results.meta.command;
  return typeof command === "string" && command !== "" ? command : undefined;
}

/** The chart's title: the workload (`command`), host, file system and date of the run. */
function chartTitle(
  command: string,
  chart: ChartSpec,
  results: Results,
): { text: string; subtitle: string } {
  const meta = results.meta;
  const fs = (meta.file_system ?? {}) as Record<string, unknown>;
  const first = results.rows[0] ?? {};
  const fsType = String(fs.type ?? first.fs_type ?? "");
  const where = [
    typeof meta.hostname === "string" ? `host ${meta.hostname}` : "",
    fsType ? `${fsType}${fs.mount_source ? ` (${fs.mount_source})` : ""}` : "",
    typeof meta.date === "string" ? meta.date.slice(0, 10) : "",
  ].filter((s) => s !== "");
  return {
    text: `sciobench ${command}: ${chart.title}`,
    subtitle: where.length > 0 ? where.join(", ") : "host, file system and date not recorded",
  };
}

/** Run rows (stat = run, or no stat column) that did not fail. */
function runRows(rows: readonly Row[]): Row[] {
  return rows.filter((r) => (r.stat === undefined || r.stat === "run") && !r.error);
}

/** The series a row belongs to: its series columns joined by a space. */
function seriesOf(chart: ChartSpec, row: Row): string {
  return chart.series.columns.map((c) => String(row[c] ?? "")).join(" ").trim();
}

/**
 * What a chart of `results` draws: the measured rows (summary rows and failed cells left out) and
 * its series (a baseline is not a series).
 */
export function chartContents(
  chart: ChartSpec,
  results: Results,
): { rows: number; series: string[] } {
  const rows = runRows(results.rows);
  return { rows: rows.length, series: [...new Set(rows.map((r) => seriesOf(chart, r)))] };
}

/** A Vega-Lite specification (JSON). */
export type Spec = Record<string, unknown>;

/** Times and rates are never negative: the axis starts at 0 and error bars are clipped there. */
const FROM_ZERO = { domainMin: 0 };

/**
 * A y axis of the mean of `field` over repeats, from zero, titled `title`; never stacked (bars of
 * several series side by side are means, not parts of a sum).
 */
function meanAxis(field: string, title: string) {
  return {
    aggregate: "mean",
    field,
    type: "quantitative",
    title,
    scale: FROM_ZERO,
    stack: null,
  } as const;
}
const ERROR_BAR = { type: "errorbar", extent: "stdev", clip: true };
const MEASURED = "measured";

/** The value of a facet for a row and measure, and the number that orders its panels. */
function facetValue(facet: ChartFacet, row: Row, measure: string): string {
  if (facet.field === "measure") return measure;
  const v = row[facet.field];
  return facet.format === "size" ? formatSize(Number(v)) : String(v ?? "");
}

/**
 * The data points of a chart: one per run row and measure, in the fields the layers encode, and
 * one per run row and measure with a baseline column the row holds (`baseline` true).
 */
function chartPoints(chart: ChartSpec, rows: readonly Row[]): Record<string, unknown>[] {
  const points: Record<string, unknown>[] = [];
  const runs = runRows(rows);
  const dodge = dodger(chart, runs);
  for (const r of runs) {
    for (const m of chart.measures) {
      const value = m.columns.reduce((a, c) => a + Number(r[c]), 0);
      const base = m.baseline === undefined ? undefined : r[m.baseline.column];
      const x = chart.mark === "line" ? Number(r[chart.x.column]) : String(r[chart.x.column]);
      const point: Record<string, unknown> = {
        series: seriesOf(chart, r),
        x,
        xd: dodge(r),
        measure: m.name,
        value,
        line: MEASURED,
        baseline: false,
      };
      for (const [key, facet] of Object.entries(chart.facets ?? {})) {
        point[`facet_${key}`] = facetValue(facet, r, m.name);
        if (facet.sortBy) point[`facet_${key}_order`] = Number(r[facet.sortBy]);
      }
      if (chart.offset) point.offset = String(r[chart.offset.column] ?? "");
      if (Number.isFinite(value)) points.push(point);
      if (typeof base === "number" && Number.isFinite(base) && base > 0) {
        // the baseline legend's own field (a field shared with the colour would merge the two)
        points.push({ ...point, xd: x, value: base, baseline: true, reference: m.baseline!.label });
      }
    }
  }
  if (chart.perUnitModel) {
    points.push(...perUnitModel(points.filter((p) => !p.baseline), chart.perUnitModel.label));
  }
  return points;
}

/** How far apart the series sit at one x: a factor on a log axis, a fraction of a step else. */
const DODGE = { factor: 1.15, fraction: 0.06 };

/**
 * Where a row's point and error bar are drawn on a line chart's x: its x moved by its series'
 * place among the series, so that the error bars of backends at one x stand apart (the axis
 * still ticks the true x values).
 */
function dodger(chart: ChartSpec, runs: readonly Row[]): (r: Row) => number | string {
  const series = [...new Set(runs.map((r) => seriesOf(chart, r)))];
  const xs = [...new Set(runs.map((r) => Number(r[chart.x.column])))].sort((a, b) => a - b);
  const steps = xs.slice(1).map((x, i) => x - xs[i]!);
  const step = steps.length > 0 ? Math.min(...steps) : 1;
  return (r) => {
    const x = r[chart.x.column];
    if (chart.mark !== "line" || series.length < 2) {
      return chart.mark === "line" ? Number(x) : String(x);
    }
    const place = series.indexOf(seriesOf(chart, r)) - (series.length - 1) / 2;
    return chart.x.log
      ? Number(x) * DODGE.factor ** place
      : Number(x) + place * DODGE.fraction * step;
  };
}

/**
 * The seed's observation as points: per series and measure, each x unit costs what the fewest
 * did (value = x x value at the smallest x / that x), at every x the series has.
 */
function perUnitModel(
  points: readonly Record<string, unknown>[],
  label: string,
): Record<string, unknown>[] {
  const model: Record<string, unknown>[] = [];
  const keyOf = (p: Record<string, unknown>) => `${p.series}\u0000${p.measure}`;
  for (const key of [...new Set(points.map(keyOf))]) {
    const mine = points.filter((p) => keyOf(p) === key);
    const xs = mine.map((p) => Number(p.x));
    const fewest = Math.min(...xs);
    const first = mine.filter((p) => Number(p.x) === fewest);
    const perUnit = first.reduce((a, p) => a + Number(p.value), 0) / first.length / fewest;
    for (const x of [...new Set(xs)]) {
      model.push({ ...mine[0], x, value: perUnit * x, line: label });
    }
  }
  return model;
}

/** Pixels between the outermost points and the axes: no point sits on an axis. */
const AXIS_PADDING = 14;

/**
 * The axis of the x values `xs` labelled as the run labels them (`32^2`): a tick at each value,
 * the label looked up by value in a Vega expression.
 */
function valueTicks(xs: readonly number[]): Spec {
  const values = [...new Set(xs)].sort((a, b) => a - b);
  const expr = values.reduceRight(
    (rest, v) => `datum.value === ${v} ? '${formatCount(v)}' : ${rest}`,
    "format(datum.value, ',')",
  );
  return { values, labelExpr: expr, grid: false };
}

/** The x encoding of a chart, drawn at `field` (x, or the dodged xd), ticks at `xs` if asked. */
function xEncoding(chart: ChartSpec, xs: readonly number[], field = "x"): Spec {
  if (chart.mark === "bar") {
    return { field: "x", type: "nominal", title: chart.x.title, axis: { labelAngle: 0 } };
  }
  const axis = chart.x.squares
    ? valueTicks(xs)
    : chart.x.log
    ? { grid: false, tickCount: 4 }
    : chart.x.integer
    ? { tickMinStep: 1 }
    : undefined;
  return {
    field,
    type: "quantitative",
    title: chart.x.title,
    scale: chart.x.log
      ? { type: "log", padding: AXIS_PADDING }
      : { padding: AXIS_PADDING, zero: false },
    ...(axis ? { axis } : {}),
  };
}

/** Solid measured lines, the model dashed, both named in a legend. */
function lineStyle(model: string): Spec {
  return {
    field: "line",
    type: "nominal",
    title: "line",
    scale: { domain: [MEASURED, model], range: [[1, 0], [5, 4]] },
    legend: {
      symbolType: "stroke",
      symbolSize: 300,
      labelLimit: 300,
      encode: { symbols: { update: { stroke: { value: "#444" }, strokeWidth: { value: 2 } } } },
    },
  };
}

/** The baseline's line: the mean of its value at each x, dashed, named in a legend. */
function baselineLayer(chart: ChartSpec, x: Spec): Spec {
  return {
    transform: [{ filter: "datum.baseline" }],
    mark: { type: "line", color: "black", point: { color: "black", size: 12 } },
    encoding: {
      x,
      y: { aggregate: "mean", field: "value", type: "quantitative", title: chart.yTitle },
      strokeDash: {
        field: "reference",
        type: "nominal",
        title: "baseline",
        scale: { range: [[6, 4]] },
        legend: {
          symbolType: "stroke",
          symbolSize: 300,
          encode: { symbols: { update: { stroke: { value: "black" } } } },
        },
      },
    },
  };
}

/**
 * The layers of a chart: the series (lines with points, or bars) with their error bars, the
 * model beside them, and the baseline's rule when `baselines`. Layers filter the one data set
 * (a layer's own data would not be split by facet).
 */
function chartLayers(chart: ChartSpec, points: readonly Record<string, unknown>[]): Spec[] {
  const xs = points.map((p) => Number(p.x));
  const baselines = points.some((p) => p.baseline === true);
  const x = xEncoding(chart, xs, "xd");
  const trueX = xEncoding(chart, xs);
  const color = { field: "series", type: "nominal", title: chart.series.title };
  const measured = [
    ...(baselines ? ["!datum.baseline"] : []),
    ...(chart.perUnitModel ? [`datum.line === '${MEASURED}'`] : []),
  ];
  const only = measured.length > 0 ? { transform: [{ filter: measured.join(" && ") }] } : {};
  const dash = chart.perUnitModel ? { strokeDash: lineStyle(chart.perUnitModel.label) } : {};
  const errorBar = { field: "value", type: "quantitative", title: chart.yTitle };
  const layers: Spec[] = [];
  if (chart.mark === "bar") {
    const offset = chart.offset;
    const xOffset = offset ? { xOffset: { field: "offset", type: "nominal" } } : {};
    layers.push(
      {
        ...only,
        mark: { type: "bar" },
        encoding: {
          x,
          ...xOffset,
          y: meanAxis("value", chart.yTitle),
          color,
          ...(offset
            ? {
              opacity: {
                field: "offset",
                type: "ordinal",
                title: offset.title,
                scale: { range: [1, 0.55] },
              },
            }
            : {}),
        },
      },
      {
        ...only,
        mark: ERROR_BAR,
        encoding: { x: { field: "x", type: "nominal" }, ...xOffset, y: errorBar },
      },
    );
  } else {
    layers.push(
      {
        ...only,
        mark: { type: "line", point: true },
        encoding: { x, y: meanAxis("value", chart.yTitle), color, ...dash },
      },
      { ...only, mark: ERROR_BAR, encoding: { x, y: errorBar, color } },
    );
  }
  if (chart.perUnitModel) {
    layers.push({
      transform: [{ filter: `datum.line !== '${MEASURED}'` }],
      mark: { type: "line", opacity: 0.6 },
      encoding: { x: trueX, y: errorBar, color, ...dash },
    });
  }
  if (baselines) layers.push(baselineLayer(chart, trueX));
  return layers;
}

/** A facet's Vega-Lite field definition (`key`: row or column). */
function facetField(key: string, facet: ChartFacet): Spec {
  return {
    field: `facet_${key}`,
    type: facet.sortBy ? "ordinal" : "nominal",
    title: facet.title,
    ...(facet.order
      ? { sort: facet.order }
      : facet.sortBy
      ? { sort: { field: `facet_${key}_order`, op: "min" } }
      : {}),
  };
}

/** The Vega-Lite specification of `chart`, the chart of the workload `command`, over `results`. */
export function vegaLiteSpec(command: string, chart: ChartSpec, results: Results): Spec {
  const points = chartPoints(chart, results.rows);
  const layer = chartLayers(chart, points);
  const facets = Object.entries(chart.facets ?? {});
  const body: Spec = facets.length === 0
    ? { data: { values: points }, width: chart.width, height: chart.height, layer }
    : {
      data: { values: points },
      facet: Object.fromEntries(facets.map(([key, f]) => [key, facetField(key, f)])),
      spec: { width: chart.width, height: chart.height, layer },
      ...(chart.independentY ? { resolve: { scale: { y: "independent" } } } : {}),
    };
  return {
    $schema: "https://vega.github.io/schema/vega-lite/v6.json",
    title: { ...chartTitle(command, chart, results), anchor: "start" },
    background: "white",
    padding: 12,
    config: { font: "DejaVu Sans, Helvetica, Arial, sans-serif" },
    ...body,
  };
}

/**
 * Renders `chart`, the chart of the workload `command`, of `results` to SVG text (Vega's headless
 * renderer; no browser, no canvas).
 */
export async function renderChart(
  command: string,
  chart: ChartSpec,
  results: Results,
): Promise<string> {
  if (runRows(results.rows).length === 0) {
    throw new UsageError(`no measured rows to plot (every row failed or is a summary)`);
  }
  return await renderSpec(vegaLiteSpec(command, chart, results));
}

/** Renders a Vega-Lite specification to SVG text (Vega's headless renderer). */
export async function renderSpec(spec: Spec): Promise<string> {
  const { vegaLite: vl, vega } = await loadChartEngine();
  const compiled = vl.compile(spec as unknown as Parameters<typeof vl.compile>[0]);
  const view = new vega.View(vega.parse(compiled.spec), { renderer: "none" });
  try {
    return await view.toSVG();
  } finally {
    view.finalize();
  }
}
