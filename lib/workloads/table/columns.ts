/**
 * The table's columns: which of the schema's columns it writes and in what order, those
 * `--baseline fio` adds, the cell's keys, the human table's choice, and how MPI ranks combine.
 * @module
 */
import { type AggregateSpec } from "../../mpi/aggregate.ts";
import { col, type ColumnDoc, STAT_COLUMNS } from "../../report/human.ts";
import { coldOkDoc, TRANSFER_COLUMN_DOCS } from "../transfer.ts";

const FSYNC_TEXT =
  "end (one fsync after the last frame), each (after every frame) or none (page-cache numbers)";
const OPEN_DEV_TEXT =
  "bytes the open fetched from the device (an index, or every record marker for f77 and " +
  "IEEEIO); cold rows drop the file again after the open, so the read starts cold";
const OPEN_FIRST_TEXT =
  "the first open of the file in the process, right after the write and before the drop (closed " +
  "at once): it includes compiling the reader's code, which V8 does at a function's first call; " +
  "open_ms is timed after up to 15 more untimed opens (python3-gsd's peer opens alike)";
/** What the `*_verify_s` columns hold, for the phase whose time is `phase`. */
const VERIFY_TEXT = (phase: string) =>
  `part of ${phase} the reading thread spent comparing the frames read with the expected ` +
  "bytes (python3-gsd's rows: its array comparisons); reads in flight meanwhile (readahead, " +
  "--overlap) go on, so it bounds what verifying costs the phase from above";
const FIO_WRITE_TEXT =
  "--baseline fio: fio writing a file of data_bytes in the same directory (psync, bs = " +
  "fio_write_bs_bytes, same direct flag and fsync policy: end_fsync=1, or fsync=1 with each)";
const FIO_READ_TEXT =
  "--baseline fio: fio reading read_bytes of it in order, after the same drop (and invalidate=1)";
const FIO_BS_TEXT =
  "--baseline fio: fio's block size when it reads, as each of our read calls: bs_bytes with " +
  "--bs, else one frame (28 N bytes; a file's first read of 1 MiB or more is 128 KiB then the " +
  "rest), with --direct rounded up to the alignment of our direct reads (a page, 4096, or the " +
  "file system's direct-I/O alignment when larger)";
const FIO_WRITE_BS_TEXT =
  "--baseline fio: fio's block size when it writes: bs_bytes with --bs, else 4 MiB with --direct " +
  "(our staged writes; at most the file), else one frame";

/** The columns of the table with units, in CSV order; the first eight are the GSD table's. */
export const TABLE_COLUMN_DOCS: readonly ColumnDoc[] = [
  col("framing", "", "text", "framing or peer measured"),
  col("size_bytes", "bytes", "size", "target file size of the cell"),
  col("N", "particles", "particles", "particles per frame"),
  col("open_ms", "ms", "number", "time to open the file for reading (cold unless --cache warm)"),
  col("write_MiBps", "MiB/s", "number", "data_bytes / write_s (MiB = 2^20 bytes)"),
  col("read_MiBps", "MiB/s", "number", "read_bytes / read_s, frames in order"),
  col("random_MiBps", "MiB/s", "number", "read_bytes / random_s, frames in a seeded random order"),
  col("random_ms", "ms", "number", "random_s per frame read"),
  col("frames", "frames", "count", "frames written: ceil(size / 28 N)"),
  col("file_bytes", "bytes", "size", "file size after writing"),
  col("repeat", "", "count", "1..K in run rows; in summary rows the number of runs summarised"),
  col("write_s", "s", "number", "open, every frame, the fsyncs of --fsync, and close"),
  col("write_user_s", "s", "number", "user CPU of the write (getrusage)"),
  col("write_sys_s", "s", "number", "system CPU of the write (getrusage)"),
  col("read_user_s", "s", "number", "user CPU of the sequential read"),
  col("read_sys_s", "s", "number", "system CPU of the sequential read"),
  col("write_dev_bytes", "bytes", "count", "bytes the write sent to the device (ru_oublock)"),
  col("read_dev_bytes", "bytes", "count", "bytes the sequential read fetched from the device"),
  col("resident_after_drop", "0..1", "fraction", "fraction of the file cached after the drop"),
  col("fs_type", "", "text", "file system of --dir (tmpfs means memory numbers)"),
  col("data_bytes", "bytes", "count", "payload written: frames x 28 N"),
  col("read_frames", "frames", "count", "frames read in each read phase"),
  col("read_bytes", "bytes", "count", "payload read in each read phase"),
  col("read_s", "s", "number", "sequential read of read_frames, every frame verified"),
  col("random_s", "s", "number", "random read of read_frames, every frame verified"),
  col("random_user_s", "s", "number", "user CPU of the random read"),
  col("random_sys_s", "s", "number", "system CPU of the random read"),
  col("random_dev_bytes", "bytes", "count", "bytes the random read fetched from the device"),
  col("drop_s", "s", "number", "time spent dropping (or warming) the page cache, untimed"),
  col("write_user_ticks", "ticks", "count", "user CPU of the write, times() clock ticks"),
  col("write_sys_ticks", "ticks", "count", "system CPU of the write, clock ticks"),
  col("clk_tck", "ticks/s", "count", "clock ticks per second"),
  col("seed", "", "count", "seed of the data and of the random order"),
  col("write_sync_s", "s", "number", "part of write_s spent closing (trailer, fsync)"),
  col("read_user_ticks", "ticks", "count", "user CPU of the sequential read, clock ticks"),
  col("read_sys_ticks", "ticks", "count", "system CPU of the sequential read, clock ticks"),
  col("random_user_ticks", "ticks", "count", "user CPU of the random read, clock ticks"),
  col("random_sys_ticks", "ticks", "count", "system CPU of the random read, clock ticks"),
  col(
    "cache",
    "",
    "text",
    "cold (dropped) or warm page cache before each read phase; direct: O_DIRECT, no drop",
  ),
  col("fsync", "", "text", FSYNC_TEXT),
  coldOkDoc("read_dev_bytes + random_dev_bytes"),
  ...TRANSFER_COLUMN_DOCS,
  col("open_dev_bytes", "bytes", "count", OPEN_DEV_TEXT),
  col("open_first_ms", "ms", "number", OPEN_FIRST_TEXT),
  col("read_verify_s", "s", "number", VERIFY_TEXT("read_s")),
  col("random_verify_s", "s", "number", VERIFY_TEXT("random_s")),
  ...STAT_COLUMNS,
];

/** The columns `--baseline fio` adds (before stat and error). */
export const TABLE_FIO_COLUMN_DOCS: readonly ColumnDoc[] = [
  col("fio_write_MiBps", "MiB/s", "number", FIO_WRITE_TEXT),
  col("fio_read_MiBps", "MiB/s", "number", FIO_READ_TEXT),
  col("fio_random_MiBps", "MiB/s", "number", "--baseline fio: fio randread of read_bytes of it"),
  col("efficiency_write", "ratio", "number", "write_MiBps / fio_write_MiBps (1 = fio's speed)"),
  col("efficiency_read", "ratio", "number", "read_MiBps / fio_read_MiBps"),
  col("efficiency_random", "ratio", "number", "random_MiBps / fio_random_MiBps"),
  col("fio_bs_bytes", "bytes", "size", FIO_BS_TEXT),
  col("fio_write_bs_bytes", "bytes", "size", FIO_WRITE_BS_TEXT),
  col(
    "fio_huge_pages",
    "",
    "text",
    "--baseline fio: true when fio's buffers were reserved huge pages (mem=shmhuge, given with " +
      "--direct where free huge pages and the right to lock them allow), as ours (huge_pages)",
  ),
];

/** The table's columns, with those of `--baseline fio` when `baseline` (before stat and error). */
export function tableColumnDocs(baseline: boolean): readonly ColumnDoc[] {
  if (!baseline) return TABLE_COLUMN_DOCS;
  const end = TABLE_COLUMN_DOCS.length - STAT_COLUMNS.length;
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
  ],
  max: [
    ...["open_ms", "random_ms", "write_s", "read_s", "random_s", "drop_s", "write_sync_s"],
    ...["read_verify_s", "random_verify_s"],
    "open_first_ms",
    "resident_after_drop",
  ],
  rates: [
    { rate: "write_MiBps", bytes: "data_bytes", seconds: "write_s" },
    { rate: "read_MiBps", bytes: "read_bytes", seconds: "read_s" },
    { rate: "random_MiBps", bytes: "read_bytes", seconds: "random_s" },
  ],
};

/** Columns of each rank's row under MPI: the file it wrote and the file it read. */
export const TABLE_RANK_COLUMNS = ["write_path", "read_path"] as const;
