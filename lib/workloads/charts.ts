/**
 * Which chart a results file gets: the chart (Workload.chart) of the workload that wrote it,
 * built-in or registered alike, found by the command the results' meta names or, for CSV (no
 * meta), by the file's header holding that workload's declared columns in order (MPI adds rank
 * columns after them, `--baseline fio` its columns before stat and error). `sciobench plot`
 * draws it; `--plot` draws the running workload's own chart, the same Workload.chart.
 * @module
 */
import { UsageError } from "../core/errors.ts";
import type { ChartSpec } from "../report/chart.ts";
import { type Results, resultsCommand } from "../report/plot.ts";
import { allWorkloads } from "./registry.ts";
import type { Workload } from "./workload.ts";
export { parseResults, type Results } from "../report/plot.ts";

/** A workload that has a chart. */
export type ChartWorkload = Workload & { readonly chart: ChartSpec };

/** The workloads of `workloads` (default: every one, built-in then registered) with a chart. */
export function chartWorkloads(workloads: readonly Workload[] = allWorkloads()): ChartWorkload[] {
  return workloads.filter((w): w is ChartWorkload => w.chart !== undefined);
}

/** Whether `header` holds every one of `declared`, in that order (with other columns between). */
function holdsInOrder(header: readonly string[], declared: readonly string[]): boolean {
  let i = 0;
  for (const column of header) if (column === declared[i]) i++;
  return declared.length > 0 && i === declared.length;
}

/**
 * The workload of `workloads` (default: every one) that wrote `results` (read from `name`),
 * with its chart: the workload its meta's command names, else the first with a chart whose
 * declared columns the file's header holds in order. UsageError (one line) when none does, or
 * when the workload named has no chart.
 */
export function resultsChart(
  results: Results,
  name: string,
  workloads: readonly Workload[] = allWorkloads(),
): ChartWorkload {
  const charted = chartWorkloads(workloads);
  const command = resultsCommand(results);
  const named = workloads.find((w) => w.name === command);
  if (named !== undefined) {
    if (named.chart !== undefined) return named as ChartWorkload;
    throw new UsageError(
      `${name}: '${named.name}' has no chart (${charted.map((w) => w.name).join(", ")} do)`,
    );
  }
  const header = results.columns ?? [];
  const found = charted.find((w) => holdsInOrder(header, w.columns.map((c) => c.name)));
  if (found !== undefined) return found;
  throw new UsageError(
    `${name}: not the results of ${charted.map((w) => w.name).join(", ")} (neither the JSON ` +
      "meta's command nor the CSV header names one)",
  );
}
