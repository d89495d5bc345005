/**
 * Which chart a results file gets: each workload's {@link ChartSpec} by its command, the command
 * named by the results' meta or, for CSV (no meta), by the file's header being the workload's
 * declared columns; and the chart functions by workload name that `plot` and `--plot` call.
 * @module
 */
import { UsageError } from "../core/errors.ts";
import type { ChartSpec } from "../report/chart.ts";
import {
  chartContents as contentsOf,
  renderChart as render,
  type Results,
  resultsCommand,
} from "../report/plot.ts";
import { TABLE_CHART, tableColumnDocs } from "./table/mod.ts";
import { READERS_CHART, READERS_COLUMNS } from "./readers/mod.ts";
import { SCALING_CHART, SCALING_COLUMNS } from "./scaling/mod.ts";
import { RECORDS_CHART, RECORDS_COLUMNS } from "./records/mod.ts";
export { parseResults, type Results } from "../report/plot.ts";

/** The chart of each workload that has one. */
export const CHARTS = {
  table: TABLE_CHART,
  readers: READERS_CHART,
  scaling: SCALING_CHART,
  records: RECORDS_CHART,
} as const satisfies Record<string, ChartSpec>;

/** A workload that has a chart. */
export type ChartWorkload = keyof typeof CHARTS;

/** The workloads that have a chart. */
export const CHART_WORKLOADS = Object.keys(CHARTS) as readonly ChartWorkload[];

/** Each workload's CSV header variants (the table's with and without `--baseline fio`). */
const DECLARED_COLUMNS: Readonly<Record<ChartWorkload, readonly (readonly string[])[]>> = {
  table: [false, true].map((fio) => tableColumnDocs(fio).map((d) => d.name)),
  readers: [READERS_COLUMNS],
  scaling: [SCALING_COLUMNS],
  records: [RECORDS_COLUMNS],
};

function isChartWorkload(name: string): name is ChartWorkload {
  return Object.hasOwn(CHARTS, name);
}

/**
 * The workload that wrote `results` (read from `name`): the command its meta names, else (CSV)
 * the workload whose declared columns the file's header begins with (MPI adds columns after
 * them). UsageError when neither tells.
 */
export function chartWorkload(results: Results, name: string): ChartWorkload {
  const command = resultsCommand(results);
  if (command !== undefined && isChartWorkload(command)) return command;
  const header = results.columns ?? [];
  for (const workload of CHART_WORKLOADS) {
    const declared = DECLARED_COLUMNS[workload];
    if (declared.some((cols) => cols.every((c, i) => header[i] === c))) return workload;
  }
  throw new UsageError(
    `${name}: not the results of ${CHART_WORKLOADS.join(", ")} (neither the JSON meta's ` +
      "command nor the CSV header names one)",
  );
}

/** What the chart of `workload` draws of `results` (see lib/report/plot.ts chartContents). */
export function chartContents(
  workload: ChartWorkload,
  results: Results,
): { rows: number; series: string[] } {
  return contentsOf(CHARTS[workload], results);
}

/** The SVG chart of `workload`'s `results` (see lib/report/plot.ts renderChart). */
export function renderChart(workload: ChartWorkload, results: Results): Promise<string> {
  return render(CHARTS[workload], results);
}
