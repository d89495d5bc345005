/**
 * Which workload wrote a results file, and what of it can be compared: the workload its JSON
 * meta's command names or, for CSV (no meta), the one whose declared columns the header holds in
 * order (MPI adds rank columns after them, `--baseline fio` its columns before stat and error),
 * else, for a file an earlier release wrote (fewer columns), the one whose key columns the header
 * holds and most of whose columns it has.
 * `sciobench plot` finds a file's chart this way (./charts.ts), `sciobench compare` its keys and
 * metrics.
 * @module
 */
import { UsageError } from "../core/errors.ts";
import type { Metric } from "../report/compare/compare.ts";
import { type Results, resultsCommand } from "../report/plot.ts";
import { allWorkloads } from "./registry.ts";
import { MEDIAN_LATENCY_COLUMN_NAMES } from "./columns.ts";
import type { Workload } from "./workload.ts";

/** Whether `header` holds every one of `declared`, in that order (with other columns between). */
function holdsInOrder(header: readonly string[], declared: readonly string[]): boolean {
  let i = 0;
  for (const column of header) if (column === declared[i]) i++;
  return declared.length > 0 && i === declared.length;
}

/**
 * The share of `workload`'s declared columns `header` holds (0 to 1), or 0 unless it holds every
 * one of the workload's key columns (a workload without keys is never guessed this way).
 */
function keyedShare(header: readonly string[], workload: Workload): number {
  const present = new Set(header);
  if (workload.keys.length === 0 || !workload.keys.every((k) => present.has(k))) return 0;
  return workload.columns.filter((c) => present.has(c.name)).length / workload.columns.length;
}

/**
 * The workload that wrote `results`: the one of `workloads` (default: every one) its meta's
 * command names, else the first of `candidates` (default: `workloads`) whose declared columns
 * the file's header holds in order, else the candidate whose keys the header holds and at least
 * half of whose columns it has (the most of them); undefined when none.
 */
export function findResultsWorkload(
  results: Results,
  workloads: readonly Workload[] = allWorkloads(),
  candidates: readonly Workload[] = workloads,
): Workload | undefined {
  const command = resultsCommand(results);
  const named = workloads.find((w) => w.name === command);
  if (named !== undefined) return named;
  const header = results.columns ?? [];
  const exact = candidates.find((w) => holdsInOrder(header, w.columns.map((c) => c.name)));
  if (exact !== undefined) return exact;
  let best: Workload | undefined, bestShare = 0.5;
  for (const w of candidates) {
    const share = keyedShare(header, w);
    if (share >= bestShare && (best === undefined || share > bestShare)) {
      best = w;
      bestShare = share;
    }
  }
  return best;
}

/**
 * {@link findResultsWorkload}, or UsageError (one line) naming `name` when no workload wrote
 * `results`.
 */
export function resultsWorkload(
  results: Results,
  name: string,
  workloads: readonly Workload[] = allWorkloads(),
): Workload {
  const found = findResultsWorkload(results, workloads);
  if (found !== undefined) return found;
  throw new UsageError(
    `${name}: not the results of a workload (${workloads.map((w) => w.name).join(", ")}): ` +
      "neither the JSON meta's command nor the CSV header names one",
  );
}

/** Units of rates (higher is better). */
const RATE_UNITS = new Set(["MiB/s", "ops/s"]);
/** Units of times (lower is better). */
const TIME_UNITS = new Set(["s", "ms", "us", "ticks"]);

/**
 * The columns of `workload` that can be compared: its rates (MiB/s, ops/s: higher is better) and
 * times (s, ms, us, ticks: lower is better), as the column schema's units say.
 */
export function workloadMetrics(workload: Workload): Metric[] {
  return workload.columns.flatMap((c): Metric[] =>
    RATE_UNITS.has(c.unit)
      ? [{ name: c.name, better: "higher" }]
      : TIME_UNITS.has(c.unit)
      ? [{ name: c.name, better: "lower" }]
      : []
  );
}

/**
 * The metrics to compare: those named in `names` (UsageError naming the first that is not a
 * rate or time of `workload`), else the rates and times among the workload's human columns and
 * its phases' median latencies ({@link MEDIAN_LATENCY_COLUMN_NAMES}).
 */
export function chooseMetrics(workload: Workload, names?: readonly string[]): Metric[] {
  const all = workloadMetrics(workload);
  if (names === undefined || names.length === 0) {
    const medians: readonly string[] = MEDIAN_LATENCY_COLUMN_NAMES;
    // mutant: compare-median-latency
    return all.filter((m) => workload.human.includes(m.name) || medians.includes(m.name));
  }
  return names.map((name) => {
    const found = all.find((m) => m.name === name);
    if (found === undefined) {
      throw new UsageError(
        `--metric ${name}: not a rate or time column of '${workload.name}' (${
          all.map((m) => m.name).join(", ")
        })`,
      );
    }
    return found;
  });
}

/**
 * The names among `metrics` that no row of `results` holds a number in: columns a file from an
 * earlier sciobench (or a run that did not measure them) lacks.
 */
export function metricsAbsent(results: Results, metrics: readonly Metric[]): string[] {
  return metrics.map((m) => m.name).filter((name) =>
    !results.rows.some((r) => typeof r[name] === "number")
  );
}
