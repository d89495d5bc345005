/**
 * Charts of results as SVG, drawn with Vega-Lite and Vega's headless SVG renderer (no browser,
 * no canvas): one chart per workload. table: write, read and random MiB/s against N per backend,
 * faceted by size, with error bars (standard deviation) from repeats and a rule at a fio baseline
 * when the rows hold one; readers: wall time against reader processes per mode, with the seed's
 * linear model (every process costs what the first did); scaling: wall and CPU seconds against
 * datasets per backend; records: wall and CPU seconds per backend and byte order.
 * @module
 */
import { parse as parseCsv } from "npm:csv-parse@6.1.0/sync";
import { FormatError, UsageError } from "../core/errors.ts";
import type { Row } from "./row.ts";
import { formatSize } from "./units.ts";

/** The workloads that have a chart. */
export const CHART_WORKLOADS = ["table", "readers", "scaling", "records"] as const;

/** A workload that has a chart. */
export type ChartWorkload = typeof CHART_WORKLOADS[number];

/** Results read back from a file: the run's facts (when the file has them) and the rows. */
export interface Results {
  /** The JSON `meta` (empty for CSV). */
  readonly meta: Record<string, unknown>;
  /** Every row, numbers as numbers. */
  readonly rows: readonly Row[];
}

/** A CSV cell as a number when it is one, else the text ("" for an empty cell). */
function cell(text: string): string | number {
  if (text === "") return "";
  const n = Number(text);
  return Number.isFinite(n) && /^[-+0-9.eE]+$/.test(text) ? n : text;
}

/** Parses results written by sciobench as CSV, JSON lines or one JSON document. */
export function parseResults(text: string, name: string): Results {
  const trimmed = text.trimStart();
  try {
    if (trimmed.startsWith("{") && name.endsWith(".json")) {
      const doc = JSON.parse(trimmed) as { meta?: Record<string, unknown>; rows?: Row[] };
      if (!Array.isArray(doc.rows)) throw new Error("no 'rows' array");
      return { meta: doc.meta ?? {}, rows: doc.rows };
    }
    if (trimmed.startsWith("{")) {
      let meta: Record<string, unknown> = {};
      const rows: Row[] = [];
      for (const line of trimmed.split("\n")) {
        if (line.trim() === "") continue;
        const obj = JSON.parse(line) as Record<string, unknown>;
        if (obj.meta && typeof obj.meta === "object") meta = obj.meta as Record<string, unknown>;
        else if (!("interrupted" in obj && Object.keys(obj).length === 1)) rows.push(obj as Row);
      }
      return { meta, rows };
    }
    const records = parseCsv(text, { columns: true, skip_empty_lines: true }) as Record<
      string,
      string
    >[];
    return {
      meta: {},
      rows: records.map((r) => Object.fromEntries(Object.entries(r).map(([k, v]) => [k, cell(v)]))),
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

/** The workload that wrote `rows` (from the meta's command, else from the columns). */
export function chartWorkload(results: Results, name: string): ChartWorkload {
  const command = results.meta.command;
  if (typeof command === "string" && (CHART_WORKLOADS as readonly string[]).includes(command)) {
    return command as ChartWorkload;
  }
  const first = results.rows[0] ?? {};
  if ("write_MiBps" in first && "N" in first) return "table";
  if ("procs" in first && "mode" in first) return "readers";
  if ("datasets" in first && "real_s" in first) return "scaling";
  if ("phase" in first && "wall_s" in first) return "records";
  throw new UsageError(
    `${name}: cannot tell which workload wrote these rows (table, readers, scaling or records)`,
  );
}

/** The chart's title: the workload, host, file system and date of the run. */
function chartTitle(workload: string, results: Results): { text: string; subtitle: string } {
  const meta = results.meta;
  const fs = (meta.file_system ?? {}) as Record<string, unknown>;
  const first = results.rows[0] ?? {};
  const fsType = String(fs.type ?? first.fs_type ?? "");
  const where = [
    typeof meta.hostname === "string" ? `host ${meta.hostname}` : "",
    fsType ? `${fsType}${fs.mount_source ? ` (${fs.mount_source})` : ""}` : "",
    typeof meta.date === "string" ? meta.date.slice(0, 10) : "",
  ].filter((s) => s !== "");
  const what: Record<ChartWorkload, string> = {
    table: "write, read and random bandwidth against N",
    readers: "wall time of simultaneous readers",
    scaling: "wall and CPU time against datasets written",
    records: "wall and CPU time per backend and byte order",
  };
  return {
    text: `sciobench ${workload}: ${what[workload as ChartWorkload] ?? workload}`,
    subtitle: where.length > 0 ? where.join(", ") : "host, file system and date not recorded",
  };
}

/** Run rows (stat = run, or no stat column) that did not fail. */
function runRows(rows: readonly Row[]): Row[] {
  return rows.filter((r) => (r.stat === undefined || r.stat === "run") && !r.error);
}

/**
 * What a chart of `results` draws: the measured rows (summary rows and failed cells left out) and
 * its series, one per backend (readers: per mode and cache; a fio baseline is not a series).
 */
export function chartContents(
  workload: ChartWorkload,
  results: Results,
): { rows: number; series: string[] } {
  const rows = runRows(results.rows);
  const names = workload === "readers"
    ? rows.map((r) => `${r.mode} ${r.cache ?? ""}`.trim())
    : rows.map((r) => String(r.framing)).filter((f) =>
      !(workload === "table" && f.startsWith("fio"))
    );
  return { rows: rows.length, series: [...new Set(names)] };
}

type Spec = Record<string, unknown>;

const COLORS = { field: "framing", type: "nominal", title: "backend" };
const RATE = "rate (MiB/s, mean ± sd)";
const WALL = "wall time (s, mean ± sd)";
const SECONDS = "time (s, mean ± sd)";
/** Times and rates are never negative: the axis starts at 0 and error bars are clipped there. */
const FROM_ZERO = { domainMin: 0 };

/** A y axis of the mean of `field` over repeats, from zero, titled `title`. */
function meanAxis(field: string, title: string) {
  return { aggregate: "mean", field, type: "quantitative", title, scale: FROM_ZERO } as const;
}
const ERROR_BAR = { type: "errorbar", extent: "stdev", clip: true };

function tableSpec(rows: readonly Row[]): Spec {
  const phases = [["write_MiBps", "write"], ["read_MiBps", "read"], ["random_MiBps", "random"]];
  const data: Record<string, unknown>[] = [];
  let baselines = 0;
  for (const r of runRows(rows)) {
    for (const [column, phase] of phases) {
      const v = Number(r[column!]);
      if (!Number.isFinite(v)) continue;
      const point = {
        framing: r.framing,
        size: formatSize(Number(r.size_bytes)),
        "size_bytes": Number(r.size_bytes),
        N: Number(r.N),
        phase,
        MiBps: v,
        // A fio row is a baseline, drawn as a rule in its own panel rather than as a series.
        baseline: String(r.framing).startsWith("fio"),
        reference: String(r.framing),
      };
      if (point.baseline) baselines++;
      data.push(point);
    }
  }
  const x = {
    field: "N",
    type: "quantitative",
    scale: { type: "log" },
    title: "N (particles per frame)",
    axis: { grid: false, tickCount: 4 },
  };
  // Layers filter the one faceted data set (a layer's own data would not be split by panel).
  const series = [{ filter: "!datum.baseline" }];
  const layers: Spec[] = [
    {
      transform: series,
      mark: { type: "line", point: true },
      encoding: {
        x,
        y: meanAxis("MiBps", RATE),
        color: COLORS,
      },
    },
    {
      transform: series,
      mark: ERROR_BAR,
      encoding: { x, y: { field: "MiBps", type: "quantitative", title: RATE }, color: COLORS },
    },
  ];
  if (baselines > 0) {
    layers.push({
      transform: [{ filter: "datum.baseline" }],
      mark: { type: "rule", color: "black" },
      encoding: {
        y: { aggregate: "mean", field: "MiBps", type: "quantitative", title: RATE },
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
    });
  }
  return {
    data: { values: data },
    facet: {
      row: {
        field: "size",
        type: "ordinal",
        title: "file size",
        sort: { field: "size_bytes", op: "min" },
      },
      column: {
        field: "phase",
        type: "nominal",
        title: "phase",
        sort: ["write", "read", "random"],
      },
    },
    spec: { width: 220, height: 160, layer: layers },
    resolve: { scale: { y: "independent" } },
  };
}

const MEASURED = "measured";
const SEED_MODEL = "seed: procs × time of 1";
/** Solid measured lines, the seed's linear model dashed, both named in a legend. */
const LINE_STYLE = {
  field: "line",
  type: "nominal",
  title: "line",
  scale: { domain: [MEASURED, SEED_MODEL], range: [[1, 0], [5, 4]] },
  legend: {
    symbolType: "stroke",
    symbolSize: 300,
    labelLimit: 300,
    encode: { symbols: { update: { stroke: { value: "#444" }, strokeWidth: { value: 2 } } } },
  },
};

function readersSpec(rows: readonly Row[]): Spec {
  const data = runRows(rows).map((r) => ({
    series: `${r.mode} ${r.cache ?? ""}`.trim(),
    procs: Number(r.procs),
    wall_s: Number(r.wall_s),
    line: MEASURED,
  }));
  // The seed's observation: each process costs what the first did (wall = procs x wall(1)).
  const linear: Record<string, unknown>[] = [];
  for (const series of [...new Set(data.map((d) => d.series))]) {
    const mine = data.filter((d) => d.series === series);
    const fewest = Math.min(...mine.map((d) => d.procs));
    const first = mine.filter((d) => d.procs === fewest);
    const perProc = first.reduce((a, d) => a + d.wall_s, 0) / first.length / fewest;
    for (const procs of [...new Set(mine.map((d) => d.procs))]) {
      linear.push({ series, procs, wall_s: perProc * procs, line: SEED_MODEL });
    }
  }
  const x = {
    field: "procs",
    type: "quantitative",
    title: "reader processes",
    axis: { tickMinStep: 1 },
  };
  const color = { field: "series", type: "nominal", title: "mode" };
  return {
    width: 420,
    height: 280,
    layer: [
      {
        data: { values: data },
        mark: { type: "line", point: true },
        encoding: {
          x,
          y: meanAxis("wall_s", WALL),
          color,
          strokeDash: LINE_STYLE,
        },
      },
      {
        data: { values: data },
        mark: ERROR_BAR,
        encoding: { x, y: { field: "wall_s", type: "quantitative", title: WALL }, color },
      },
      {
        data: { values: linear },
        mark: { type: "line", opacity: 0.6 },
        encoding: {
          x,
          y: { field: "wall_s", type: "quantitative", title: WALL },
          color,
          strokeDash: LINE_STYLE,
        },
      },
    ],
  };
}

function scalingSpec(rows: readonly Row[]): Spec {
  const data = runRows(rows).flatMap((r) => [
    {
      framing: r.framing,
      datasets: Number(r.datasets),
      measure: "wall",
      seconds: Number(r.real_s),
    },
    {
      framing: r.framing,
      datasets: Number(r.datasets),
      measure: "CPU (user + system)",
      seconds: Number(r.user_s) + Number(r.sys_s),
    },
  ]);
  const x = { field: "datasets", type: "quantitative", title: "datasets written" };
  return {
    data: { values: data },
    facet: { column: { field: "measure", type: "nominal", title: null, sort: ["wall"] } },
    spec: {
      width: 260,
      height: 220,
      layer: [
        {
          mark: { type: "line", point: true },
          encoding: {
            x,
            y: meanAxis("seconds", SECONDS),
            color: COLORS,
          },
        },
        {
          mark: ERROR_BAR,
          encoding: {
            x,
            y: { field: "seconds", type: "quantitative", title: SECONDS },
            color: COLORS,
          },
        },
      ],
    },
  };
}

function recordsSpec(rows: readonly Row[]): Spec {
  const data = runRows(rows).flatMap((r) => [
    {
      framing: r.framing,
      endian: r.endian,
      phase: r.phase,
      measure: "wall",
      seconds: Number(r.wall_s),
    },
    {
      framing: r.framing,
      endian: r.endian,
      phase: r.phase,
      measure: "CPU",
      seconds: Number(r.cpu_s),
    },
  ]);
  return {
    data: { values: data },
    facet: {
      row: { field: "measure", type: "nominal", title: null, sort: ["wall"] },
      column: { field: "phase", type: "nominal", title: "phase", sort: ["write", "read"] },
    },
    spec: {
      width: 300,
      height: 160,
      layer: [
        {
          mark: { type: "bar" },
          encoding: {
            x: {
              field: "framing",
              type: "nominal",
              title: "backend",
              axis: { labelAngle: 0 },
            },
            xOffset: { field: "endian", type: "nominal" },
            y: meanAxis("seconds", SECONDS),
            color: { field: "framing", type: "nominal", title: "backend" },
            opacity: {
              field: "endian",
              type: "ordinal",
              title: "byte order",
              scale: { range: [1, 0.55] },
            },
          },
        },
        {
          mark: ERROR_BAR,
          encoding: {
            x: { field: "framing", type: "nominal" },
            xOffset: { field: "endian", type: "nominal" },
            y: { field: "seconds", type: "quantitative", title: SECONDS },
          },
        },
      ],
    },
  };
}

/** The Vega-Lite specification of the chart of `results` (a `workload`'s rows). */
export function chartSpec(workload: ChartWorkload, results: Results): Spec {
  const body = workload === "table"
    ? tableSpec(results.rows)
    : workload === "readers"
    ? readersSpec(results.rows)
    : workload === "scaling"
    ? scalingSpec(results.rows)
    : recordsSpec(results.rows);
  return {
    $schema: "https://vega.github.io/schema/vega-lite/v6.json",
    title: { ...chartTitle(workload, results), anchor: "start" },
    background: "white",
    padding: 12,
    config: { font: "DejaVu Sans, Helvetica, Arial, sans-serif" },
    ...body,
  };
}

/** Renders the chart of `results` to SVG text (Vega's headless renderer; no browser, no canvas). */
export async function renderChart(workload: ChartWorkload, results: Results): Promise<string> {
  if (runRows(results.rows).length === 0) {
    throw new UsageError(`no measured rows to plot (every row failed or is a summary)`);
  }
  const vl = await import("npm:vega-lite@6.5.0");
  const vega = await import("npm:vega@6.4.0");
  const spec = chartSpec(workload, results) as unknown as Parameters<typeof vl.compile>[0];
  const compiled = vl.compile(spec);
  const view = new vega.View(vega.parse(compiled.spec), { renderer: "none" });
  try {
    return await view.toSVG();
  } finally {
    view.finalize();
  }
}
