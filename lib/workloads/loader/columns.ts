/**
 * The columns of `sciobench loader`: which of the schema's columns it writes and in what order,
 * the keys of its cells and the human table's choice.
 * @module
 */
import type { ColumnDoc } from "../../report/human.ts";
import {
  columnDocs,
  QUEUE_COLUMN_NAMES,
  STAT_COLUMN_NAMES,
  TRANSFER_COLUMN_NAMES,
} from "../columns.ts";

/**
 * The columns of `sciobench loader` with units, in CSV order (from the schema,
 * lib/workloads/columns.ts): one row per epoch.
 */
export const LOADER_COLUMN_DOCS: readonly ColumnDoc[] = columnDocs(
  ["framing", "access", "path", "N", "frames", "file_bytes", "epoch", "sampling", "cache"],
  ["resident_before", "batch_size", "readers", "batches", "samples", "bytes", "wall_s"],
  ["load_s"],
  ["sample_rate", "load_MiBps", "batch_p50_us", "batch_p90_us", "batch_p99_us"],
  ["batch_p999_us", "batch_max_us", "compute_ms", "compute_s", "accel_util", "user_s", "sys_s"],
  ["dev_read_bytes", "cold_ok", "cold_why", "verified", "seed", "fs_type"],
  TRANSFER_COLUMN_NAMES,
  QUEUE_COLUMN_NAMES,
  STAT_COLUMN_NAMES,
);

/** The columns that name a loader cell: one epoch of one file. */
export const LOADER_KEYS = [
  "framing",
  "access",
  "path",
  "epoch",
  "sampling",
  "batch_size",
] as const;

/** The columns the human table shows. */
export const LOADER_HUMAN_COLUMNS: readonly string[] = [
  "framing",
  "access",
  "epoch",
  "readers",
  "cache",
  "resident_before",
  "samples",
  "sample_rate",
  "load_MiBps",
  "batch_p50_us",
  "batch_p99_us",
  "batch_max_us",
  "accel_util",
  "cold_ok",
  "error",
];
