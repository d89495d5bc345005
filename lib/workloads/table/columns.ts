/**
 * The table's columns: which of the schema's columns it writes and in what order, those
 * `--baseline fio` adds, the cell's keys, the human table's choice, and how MPI ranks combine.
 * @module
 */
import { type AggregateSpec } from "../../mpi/aggregate.ts";
import type { ColumnDoc } from "../../report/human.ts";
import type { ChartSpec } from "../../report/chart.ts";
import {
  columnDocs,
  columnNames,
  LATENCY_COLUMN_NAMES,
  METADATA_COLUMN_NAMES,
  MPI_IO_COLUMN_NAMES,
  QUEUE_COLUMN_NAMES,
  STAT_COLUMN_NAMES,
  TRANSFER_COLUMN_NAMES,
} from "../columns.ts";

/** The columns of the table, in CSV order; the first eight are the GSD table's. */
export const TABLE_COLUMN_NAMES = columnNames(
  ["framing", "size_bytes", "N", "open_ms", "write_MiBps", "read_MiBps", "random_MiBps"],
  ["random_ms", "frames", "file_bytes", "repeat", "write_s", "write_user_s", "write_sys_s"],
  ["read_user_s", "read_sys_s", "write_dev_bytes", "read_dev_bytes", "resident_after_drop"],
  ["fs_type", "data_bytes", "read_frames", "read_bytes", "read_s", "random_s"],
  ["random_user_s", "random_sys_s", "random_dev_bytes", "drop_s", "write_user_ticks"],
  ["write_sys_ticks", "clk_tck", "seed", "write_sync_s", "read_user_ticks", "read_sys_ticks"],
  ["random_user_ticks", "random_sys_ticks", "cache", "fsync", "cold_ok"],
  TRANSFER_COLUMN_NAMES,
  QUEUE_COLUMN_NAMES,
  ["open_dev_bytes", "open_first_ms", "read_verify_s", "random_verify_s"],
  LATENCY_COLUMN_NAMES,
  ["open_cold_ok", "read_cold_ok", "random_cold_ok", "cold_why"],
  ["read_io_MiBps", "random_io_MiBps", "order"],
  METADATA_COLUMN_NAMES,
  STAT_COLUMN_NAMES,
);

/** The columns of the table with units, in CSV order (from the schema, lib/workloads/columns.ts). */
export const TABLE_COLUMN_DOCS: readonly ColumnDoc[] = columnDocs(TABLE_COLUMN_NAMES);

/** The columns `--baseline fio` adds (before stat and error). */
export const TABLE_FIO_COLUMN_DOCS: readonly ColumnDoc[] = columnDocs(
  ["fio_write_MiBps", "fio_read_MiBps", "fio_random_MiBps", "efficiency_write"],
  ["efficiency_read", "efficiency_random", "fio_bs_bytes", "fio_write_bs_bytes"],
  ["fio_huge_pages"],
);

/** The table's columns, with those of `--baseline fio` when `baseline` (before stat and error). */
export function tableColumnDocs(baseline: boolean): readonly ColumnDoc[] {
  if (!baseline) return TABLE_COLUMN_DOCS;
  const end = TABLE_COLUMN_DOCS.length - STAT_COLUMN_NAMES.length;
  return [
    ...TABLE_COLUMN_DOCS.slice(0, end),
    ...TABLE_FIO_COLUMN_DOCS,
    ...TABLE_COLUMN_DOCS.slice(end),
  ];
}

/** The CSV columns of the table, in order. */
export const TABLE_COLUMNS: readonly string[] = TABLE_COLUMN_DOCS.map((c) => c.name);

/** The columns the human table shows. */
export const TABLE_HUMAN_COLUMNS: readonly string[] = [
  "framing",
  "size_bytes",
  "N",
  "cache",
  "stat",
  "repeat",
  "open_ms",
  "write_MiBps",
  "read_MiBps",
  "random_MiBps",
  "random_ms",
  "error",
];

/** The columns that name a table cell (the rest are measured or derived from them). */
export const TABLE_KEYS = [
  "framing",
  "size_bytes",
  "N",
  "cache",
  "fsync",
  "fs_type",
  "seed",
] as const;

/** How the table's columns combine over MPI ranks (lib/mpi/aggregate.ts). */
export const TABLE_AGGREGATE: AggregateSpec = {
  sum: [
    ...["frames", "file_bytes", "data_bytes", "read_frames", "read_bytes"],
    ...["write_user_s", "write_sys_s", "read_user_s", "read_sys_s", "random_user_s"],
    ...["random_sys_s", "write_dev_bytes", "read_dev_bytes", "random_dev_bytes", "open_dev_bytes"],
    ...["write_user_ticks", "write_sys_ticks", "read_user_ticks", "read_sys_ticks"],
    ...["random_user_ticks", "random_sys_ticks"],
    ...["write_files_created", "write_dirs_created", "write_files_opened", "write_files_synced"],
    ...["write_dirs_synced", "read_files_opened", "random_files_opened"],
  ],
  max: [
    ...["open_ms", "random_ms", "write_s", "read_s", "random_s", "drop_s", "write_sync_s"],
    ...["read_verify_s", "random_verify_s"],
    "open_first_ms",
    "resident_after_drop",
    ...["write_meta_s", "read_meta_s", "random_meta_s"],
  ],
  rates: [
    { rate: "write_MiBps", bytes: "data_bytes", seconds: "write_s" },
    { rate: "read_MiBps", bytes: "read_bytes", seconds: "read_s" },
    { rate: "random_MiBps", bytes: "read_bytes", seconds: "random_s" },
  ],
  latencies: [{ phase: "read", seconds: "read_s" }, { phase: "random", seconds: "random_s" }],
};

/**
 * Columns of each rank's row under MPI: the file it wrote and the file it read, and how
 * (lib/workloads/columns.ts: MPI_IO_COLUMN_NAMES).
 */
export const TABLE_RANK_COLUMNS = ["write_path", "read_path", ...MPI_IO_COLUMN_NAMES] as const;

/** The table's chart: write, read and random MiB/s against N per backend, a panel per size. */
export const TABLE_CHART: ChartSpec = {
  title: "write, read and random bandwidth against N",
  mark: "line",
  x: { column: "N", title: "N (particles per frame)", log: true, squares: true },
  yTitle: "MiB/s (÷ fio: ratio), mean ± sd",
  measures: [
    {
      name: "write",
      columns: ["write_MiBps"],
      baseline: { column: "fio_write_MiBps", label: "fio" },
    },
    { name: "read", columns: ["read_MiBps"], baseline: { column: "fio_read_MiBps", label: "fio" } },
    {
      name: "random",
      columns: ["random_MiBps"],
      baseline: { column: "fio_random_MiBps", label: "fio" },
    },
    // --baseline fio's efficiency (ours / fio, 1 = fio's speed): panels only where rows hold it
    { name: "write ÷ fio", columns: ["efficiency_write"] },
    { name: "read ÷ fio", columns: ["efficiency_read"] },
    { name: "random ÷ fio", columns: ["efficiency_random"] },
  ],
  series: { columns: ["framing"], title: "backend" },
  facets: {
    row: { field: "size_bytes", title: "file size", sortBy: "size_bytes", format: "size" },
    column: {
      field: "measure",
      title: "phase",
      order: ["write", "read", "random", "write ÷ fio", "read ÷ fio", "random ÷ fio"],
    },
  },
  independentY: true,
  width: 220,
  height: 160,
};
