/**
 * The columns of `sciobench readers`: which of the schema's columns it writes and in what order,
 * the cell's keys, the human table's choice, and how MPI ranks combine.
 * @module
 */
import type { AggregateSpec } from "../../mpi/aggregate.ts";
import type { ColumnDoc } from "../../report/human.ts";
import type { ChartSpec } from "../../report/chart.ts";
import {
  columnDocs,
  QUEUE_COLUMN_NAMES,
  STAT_COLUMN_NAMES,
  TRANSFER_COLUMN_NAMES,
} from "../columns.ts";

/**
 * The columns of `sciobench readers` with units, in CSV order (from the schema,
 * lib/workloads/columns.ts).
 */
export const READERS_COLUMN_DOCS: readonly ColumnDoc[] = columnDocs(
  ["mode", "procs", "file_bytes", "wall_s", "mean_s", "max_s", "min_s", "aggregate_MiBps"],
  ["read_user_s", "read_sys_s", "read_dev_bytes", "slope_s_per_proc", "cache", "framing"],
  ["records", "length", "reader_bytes", "start_spread_s", "resident_before", "fs_type"],
  ["reader", "repeat", "cold_ok", "cold_why"],
  TRANSFER_COLUMN_NAMES,
  QUEUE_COLUMN_NAMES,
  STAT_COLUMN_NAMES,
);

/**
 * Under MPI the readers' row is built from every rank's report (mean_s, min_s and max_s are
 * already over readers), so no column is combined again: rank columns only.
 */
export const READERS_AGGREGATE: AggregateSpec = { sum: [], max: [], rates: [] };

/** CSV columns of `sciobench readers`, the list first. */
export const READERS_COLUMNS: readonly string[] = READERS_COLUMN_DOCS.map((c) => c.name);

/** The columns that name a readers cell. */
export const READERS_KEYS = [
  "mode",
  "procs",
  "cache",
  "framing",
  "records",
  "length",
  "fs_type",
  "reader",
] as const;

/** The columns the human table shows. */
export const READERS_HUMAN_COLUMNS: readonly string[] = [
  "reader",
  "cache",
  "mode",
  "procs",
  "stat",
  "repeat",
  "file_bytes",
  "wall_s",
  "mean_s",
  "aggregate_MiBps",
  "slope_s_per_proc",
  "error",
];

/**
 * The readers' chart: wall time against reader processes per mode and cache, with the seed's
 * linear model (every process costs what the first did) dashed.
 */
export const READERS_CHART: ChartSpec = {
  title: "wall time of simultaneous readers",
  mark: "line",
  x: { column: "procs", title: "reader processes", integer: true },
  yTitle: "wall time (s, mean ± sd)",
  measures: [{ name: "wall", columns: ["wall_s"] }],
  series: { columns: ["mode", "cache"], title: "mode" },
  perUnitModel: { label: "seed: procs × time of 1" },
  width: 420,
  height: 280,
};
