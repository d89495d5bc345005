/**
 * The columns of `sciobench readers`: which of the schema's columns it writes and in what order,
 * the cell's keys, the human table's choice, and how MPI ranks combine.
 * @module
 */
import { coldOkDoc, TRANSFER_COLUMN_DOCS } from "../transfer.ts";
import type { AggregateSpec } from "../../mpi/aggregate.ts";
import { col, type ColumnDoc, STAT_COLUMNS } from "../../report/human.ts";

/** The columns of `sciobench readers` with units, in CSV order. */
export const READERS_COLUMN_DOCS: readonly ColumnDoc[] = [
  col("mode", "", "text", "shared (all readers read one file) or separate (one file each)"),
  col("procs", "processes", "count", "reader processes started at once"),
  col("file_bytes", "bytes", "size", "size of each file"),
  col("wall_s", "s", "number", "first reader's start to last reader's end (CLOCK_MONOTONIC)"),
  col("mean_s", "s", "number", "mean time of one reader, open to close"),
  col("max_s", "s", "number", "slowest reader"),
  col("min_s", "s", "number", "fastest reader"),
  col("aggregate_MiBps", "MiB/s", "number", "procs x file_bytes / 2^20 / wall_s"),
  col("user_s", "s", "number", "user CPU summed over readers"),
  col("sys_s", "s", "number", "system CPU summed over readers"),
  col("dev_read_bytes", "bytes", "count", "bytes the readers fetched from the device"),
  col(
    "slope_s_per_proc",
    "s/process",
    "number",
    "wall time added per added process since the previous row of the same mode (first row: " +
      "wall_s / procs), the seed's cost per process",
  ),
  col(
    "cache",
    "",
    "text",
    "cold or warm page cache when the readers start; direct: O_DIRECT reads, no drop",
  ),
  col("framing", "", "text", "native framing of the files"),
  col("records", "records", "count", "records per file"),
  col("length", "doubles", "count", "doubles per record"),
  col("reader_bytes", "bytes", "count", "payload read, summed over readers"),
  col("start_spread_s", "s", "number", "last reader's start minus the first's"),
  col("resident_before", "0..1", "fraction", "fraction of the file(s) cached at the start"),
  col("fs_type", "", "text", "file system of --dir"),
  col("reader", "", "text", "the program that read: sciobench, or gfortran (Packman's rd)"),
  col("repeat", "", "count", "1..K in run rows; in summary rows the number of runs summarised"),
  coldOkDoc(
    "dev_read_bytes against the bytes of the distinct files: reader_bytes / procs when shared; " +
      "resident_before is the residency after the drop",
  ),
  ...TRANSFER_COLUMN_DOCS,
  ...STAT_COLUMNS,
];

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
