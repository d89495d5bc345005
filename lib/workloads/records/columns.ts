/**
 * The columns of `records`: which of the schema's columns it writes and in what order, the
 * cell's keys, the human table's choice, how MPI ranks combine, and its chart.
 * @module
 */
import type { AggregateSpec } from "../../mpi/aggregate.ts";
import type { ColumnDoc } from "../../report/human.ts";
import type { ChartSpec } from "../../report/chart.ts";
import {
  columnDocs,
  QUEUE_COLUMN_NAMES,
  RECORD_LATENCY_COLUMN_NAMES,
  STAT_COLUMN_NAMES,
  TRANSFER_COLUMN_NAMES,
} from "../columns.ts";

/** The columns of `records` with units, in CSV order (from the schema, lib/workloads/columns.ts). */
export const RECORDS_COLUMN_DOCS: readonly ColumnDoc[] = columnDocs(
  ["framing", "endian", "phase", "shape", "bytes", "wall_s", "cpu_s", "user_s", "sys_s"],
  ["MiBps", "repeat", "file_bytes", "dev_read_bytes", "dev_write_bytes"],
  ["resident_after_drop", "fsync", "cold_ok", "cold_why"],
  RECORD_LATENCY_COLUMN_NAMES,
  TRANSFER_COLUMN_NAMES,
  QUEUE_COLUMN_NAMES,
  ["order"],
  STAT_COLUMN_NAMES,
);

/** The CSV columns of `records`, in order. */
export const RECORDS_COLUMNS: readonly string[] = RECORDS_COLUMN_DOCS.map((c) => c.name);

/** The columns that name a records cell. */
export const RECORDS_KEYS = ["framing", "endian", "phase", "shape", "bytes", "fsync"] as const;

/** The columns the human table shows. */
export const RECORDS_HUMAN_COLUMNS: readonly string[] = [
  "framing",
  "endian",
  "phase",
  "bytes",
  "stat",
  "repeat",
  "wall_s",
  "cpu_s",
  "MiBps",
  "error",
];

/** How the columns of `records` combine over MPI ranks (lib/mpi/aggregate.ts). */
export const RECORDS_AGGREGATE: AggregateSpec = {
  sum: ["bytes", "cpu_s", "user_s", "sys_s", "file_bytes", "dev_read_bytes", "dev_write_bytes"],
  max: ["wall_s", "resident_after_drop"],
  rates: [{ rate: "MiBps", bytes: "bytes", seconds: "wall_s" }],
  latencies: [{ phase: "record", seconds: "wall_s" }],
};

/** The chart of `records`: wall and CPU seconds per backend and byte order, write and read. */
export const RECORDS_CHART: ChartSpec = {
  title: "wall and CPU time per backend and byte order",
  mark: "bar",
  x: { column: "framing", title: "backend" },
  yTitle: "time (s, mean ± sd)",
  measures: [{ name: "wall", columns: ["wall_s"] }, { name: "CPU", columns: ["cpu_s"] }],
  series: { columns: ["framing"], title: "backend" },
  facets: {
    row: { field: "measure", title: null, order: ["wall", "CPU"] },
    column: { field: "phase", title: "phase", order: ["write", "read"] },
  },
  offset: { column: "endian", title: "byte order" },
  width: 300,
  height: 160,
};
