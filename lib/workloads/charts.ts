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
import type { Results } from "../report/plot.ts";
import { allWorkloads } from "./registry.ts";
import { findResultsWorkload } from "./results.ts";
import type { Workload } from "./workload.ts";
export { parseResults, type Results } from "../report/plot.ts";

/** A workload that has a chart. */
export type ChartWorkload = Workload & { readonly chart: ChartSpec };

/** The workloads of `workloads` (default: every one, built-in then registered) with a chart. */
export function chartWorkloads(workloads: readonly Workload[] = allWorkloads()): ChartWorkload[] {
  return workloads.filter((w): w is ChartWorkload => w.chart !== undefined);
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
  const found = findResultsWorkload(results, workloads, charted);
  if (found !== undefined) {
    if (found.chart !== undefined) return found as ChartWorkload;
    throw new UsageError(
      `${name}: '${found.name}' has no chart (${charted.map((w) => w.name).join(", ")} do)`,
    );
  }
  throw new UsageError(
    `${name}: not the results of ${charted.map((w) => w.name).join(", ")} (neither the JSON ` +
      "meta's command nor the CSV header names one)",
  );
}
