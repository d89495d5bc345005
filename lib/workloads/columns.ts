/**
 * The column schema: every column a command's rows hold (table, scaling, records, readers, read,
 * write, info's chunks, and the columns MPI adds), each declared once with its unit, how people see it
 * (kind) and what it holds. A workload's column list picks names from here
 * ({@link columnDocs}); a name not declared here does not type-check. The same name means the
 * same thing in the same unit in every workload. A phase's columns carry the phase's name as a
 * prefix (`write_s`, `write_MiBps`, `read_user_s`, `random_dev_bytes`); records, whose rows are
 * one phase each (named in `phase`), and loader, whose rows are one epoch each, have the
 * phase-less ones (`wall_s`, `user_s`, `MiBps`).
 * docs/columns.md is generated from it (tools/columns_doc.ts).
 * @module
 */
import { col, type ColumnDoc, type ColumnKind } from "../report/human.ts";
import type { RatioOf } from "../report/stats.ts";
import { type AggregateSpec, rankColumns } from "../mpi/aggregate.ts";

/**
 * The numeric columns that echo a setting of the run (a flag's value, or what it implies), not a
 * measurement: summary rows copy them where the runs agree.
 */
export const SETTING_COLUMNS: readonly ColumnName[] = [
  "N",
  "seed",
  "records",
  "datasets",
  "bs_bytes",
  "iodepth",
  "fio_bs_bytes",
  "fio_write_bs_bytes",
  "readers",
  "ranks",
  "segments",
];

/** What the schema says of one column (its name is its key). */
export interface ColumnEntry {
  /** Unit of the values (`s`, `ms`, `MiB/s`, `bytes`, `ticks`, `0..1`), "" for none. */
  readonly unit: string;
  /** How human output shows the values; `flag` columns are JSON booleans. */
  readonly kind: ColumnKind;
  /** What the column holds. */
  readonly text: string;
  /** The columns it is the ratio of, in each run row (summary rows: see ColumnDoc.ratio). */
  readonly ratio?: RatioOf;
}

function entry(unit: string, kind: ColumnKind, text: string, ratio?: RatioOf): ColumnEntry {
  return ratio === undefined ? { unit, kind, text } : { unit, kind, text, ratio };
}

/** The text of each phase's `*_verify_s` column, for the phase whose time is `phase`. */
const verifyText = (phase: string) =>
  `part of ${phase} the reading thread spent comparing the frames read with the expected ` +
  "bytes (python3-gsd's rows: its array comparisons); reads in flight meanwhile (readahead, " +
  "--overlap) go on, so it bounds what verifying costs the phase from above";

/** The text of a read phase's latency column: `which` of its operations' latencies. */
const latencyText = (which: string, phase: "read" | "random") =>
  `${which} latency of one ${phase === "read" ? "sequential" : "random"} read operation (a ` +
  "frame's read call, or a block's; the read alone, without its verification), microseconds";

/** The text of a loader batch latency column: `which` of its batches' read times. */
const batchText = (which: string) =>
  `loader: ${which} time to read one batch (every sample read and verified; with --readers ` +
  "above 1 the consumer's wait for it), microseconds; JSON rows carry the histogram as " +
  "batch_latency";

/** The text of a records latency column: `which` of its records' write or read latencies. */
const recordText = (which: string) =>
  `${which} latency of one record's write or read (the row's phase: the backend's call for one ` +
  "record, without the verification; JSON rows carry the histogram as record_latency), " +
  "microseconds";

/** The text of a read phase's system-call latency column. */
const callText = (which: string, phase: "read" | "random") =>
  `${which} latency of one pread system call of the ${
    phase === "read" ? "sequential" : "random"
  } ` +
  "read (what fio's clat times; empty where the reads made none: a library's own reads, " +
  "--direct's asynchronous ones), microseconds; " +
  `JSON rows carry their histogram as ${phase}_call_latency`;

const REPEAT_TEXT = "1..K in run rows; in summary rows the number of runs summarised";

/** Every column, by name, in the order docs/columns.md lists them. */
export const COLUMN_SCHEMA = {
  // what was measured: the cell's identity
  framing: entry("", "text", "framing or peer measured (read: the file's framing)"),
  path: entry("", "text", "the file read or written (read, write)"),
  size_bytes: entry("bytes", "size", "target file size of the cell"),
  N: entry("particles", "particles", "particles per frame"),
  datasets: entry("datasets", "count", "datasets written to the file"),
  shape: entry(
    "",
    "text",
    "dimensions joined by x, slowest first: records x record shape (records), or the chunk's " +
      "(info)",
  ),
  endian: entry("", "text", "byte order asked for or written: big, little or native"),
  phase: entry("", "text", "write (open, every record, fsync, close) or read (cold, verified)"),
  mode: entry("", "text", "shared (all readers read one file) or separate (one file each)"),
  procs: entry("processes", "count", "reader processes started at once"),
  reader: entry("", "text", "the program that read: sciobench, or gfortran (Packman's rd)"),
  records: entry("records", "count", "records per file"),
  length: entry("doubles", "count", "doubles per record"),
  seed: entry("", "count", "seed of the data and of the random order"),
  first_frame: entry("", "count", "index of the first frame written (0 unless --append)"),
  // info: one chunk (a named array of one frame) per row
  frame: entry("", "count", "info: the chunk's frame, from 0"),
  name: entry(
    "",
    "text",
    "info: the chunk's name (generated, such as record/3, where the format has none)",
  ),
  dtype: entry("", "text", "info: the chunk's element type"),
  offset: entry(
    "bytes",
    "count",
    "info: byte offset of the chunk's data in the file (-1 where a library hides it)",
  ),
  crc32: entry(
    "",
    "text",
    "info: CRC-32 of the chunk's bytes as stored, 8 hex digits (read through a library: of the " +
      "data in native byte order)",
  ),
  cache: entry(
    "",
    "text",
    "page cache before each read phase: cold (the file dropped) or warm (read once); direct: " +
      "O_DIRECT reads, no drop; loader: cold at the first epoch, as left (whatever the cache " +
      "holds) at the later ones",
  ),
  fsync: entry(
    "",
    "text",
    "fsync policy of the write: end (one fsync after the last frame, record or dataset), each " +
      "(after every one) or none (page-cache numbers; scaling's default, as the seed)",
  ),
  fs_type: entry(
    "",
    "text",
    "file system of --dir, or of the file read (tmpfs means memory numbers)",
  ),
  repeat: entry("", "count", REPEAT_TEXT),
  order: entry(
    "",
    "count",
    "the backend's place, from 1, among those measured in this repeat (table: of each size and " +
      "N; records: backend and byte-order targets; scaling: the framings of each trial): the order alternates between repeats (A B, " +
      "then B A), so no backend is always first",
  ),
  // sizes and counts
  frames: entry(
    "frames",
    "count",
    "frames in the file: written (ceil(size / 28 N) in table), or found by read",
  ),
  file_bytes: entry("bytes", "size", "size of the file (of each file, for readers) after writing"),
  data_bytes: entry("bytes", "count", "payload written: frames x 28 N"),
  bytes: entry(
    "bytes",
    "size",
    "payload of the row: records x record bytes, datasets x dataset bytes, the chunk's " +
      "stored bytes (info), or the samples' bytes read in the epoch (loader)",
  ),
  read_frames: entry("frames", "count", "frames read in each read phase"),
  read_bytes: entry("bytes", "count", "payload read in each read phase (read: in order)"),
  random_bytes: entry("bytes", "count", "payload read at random"),
  reader_bytes: entry("bytes", "count", "payload read, summed over readers"),
  unit: entry("", "text", "what one random read reads: a frame, or a record"),
  random_units: entry("", "count", "frames (or records) read at random"),
  // the open
  open_ms: entry("ms", "number", "time to open the file for reading (cold unless --cache warm)"),
  open_first_ms: entry(
    "ms",
    "number",
    "the first open of the file in the process, right after the write and before the drop " +
      "(closed at once): it includes compiling the reader's code, which V8 does at a function's " +
      "first call; open_ms is timed after up to 15 more untimed opens (python3-gsd's peer opens " +
      "alike)",
  ),
  open_dev_bytes: entry(
    "bytes",
    "count",
    "bytes the open fetched from the device (an index, or every record marker for f77 and " +
      "IEEEIO); cold rows drop the file again after the open, so the read starts cold",
  ),
  // the write phase
  write_s: entry(
    "s",
    "number",
    "the write: open, every frame (record, dataset), the fsyncs of --fsync, and close",
  ),
  write_MiBps: entry("MiB/s", "number", "payload (data_bytes; scaling: bytes) / 2^20 / write_s"),
  write_user_s: entry("s", "number", "user CPU of the write (getrusage)"),
  write_sys_s: entry("s", "number", "system CPU of the write (getrusage)"),
  write_dev_bytes: entry("bytes", "count", "bytes the write sent to the device (ru_oublock)"),
  write_user_ticks: entry("ticks", "count", "user CPU of the write, times() clock ticks"),
  write_sys_ticks: entry("ticks", "count", "system CPU of the write, clock ticks"),
  write_cpu_ticks: entry("ticks", "count", "write_user_ticks + write_sys_ticks"),
  write_sync_s: entry("s", "number", "part of write_s spent closing (trailer, fsync)"),
  // the phases' calls on names (lib/workloads/metadata.ts, from the audit trail); empty where a
  // library or another program made its own calls
  write_files_created: entry(
    "files",
    "count",
    "files the write phase opened with O_CREAT (made, or truncated in place): a store's chunk " +
      "and metadata files, one for a file",
  ),
  write_dirs_created: entry("directories", "count", "directories the write phase made (mkdir)"),
  write_files_opened: entry("files", "count", "opens of files in the write phase"),
  write_files_synced: entry(
    "files",
    "count",
    "fsync and fdatasync calls on files in the write phase",
  ),
  write_dirs_synced: entry(
    "directories",
    "count",
    "fsync calls on directories in the write phase (making new names durable)",
  ),
  write_meta_s: entry(
    "s",
    "number",
    "part of write_s spent in calls on names, not data: open, close, mkdir, rename, unlink and " +
      "fsync of directories (a file's fsync and the pwrites are data calls)",
  ),
  read_files_opened: entry("files", "count", "opens of files in the sequential read phase"),
  read_meta_s: entry(
    "s",
    "number",
    "part of read_s spent in open and close (and other calls on names), not in reads",
  ),
  random_files_opened: entry("files", "count", "opens of files in the random read phase"),
  random_meta_s: entry(
    "s",
    "number",
    "part of random_s spent in open and close (and other calls on names), not in reads",
  ),
  // the sequential read phase
  read_s: entry("s", "number", "sequential read of read_frames, every frame verified"),
  read_MiBps: entry("MiB/s", "number", "read_bytes / 2^20 / read_s, frames in order"),
  read_user_s: entry(
    "s",
    "number",
    "user CPU of the sequential read (readers: summed over readers)",
  ),
  read_sys_s: entry(
    "s",
    "number",
    "system CPU of the sequential read (readers: summed over readers)",
  ),
  read_dev_bytes: entry(
    "bytes",
    "count",
    "bytes the sequential read fetched from the device (readers: summed over readers)",
  ),
  read_user_ticks: entry("ticks", "count", "user CPU of the sequential read, clock ticks"),
  read_sys_ticks: entry("ticks", "count", "system CPU of the sequential read, clock ticks"),
  read_verify_s: entry("s", "number", verifyText("read_s")),
  read_io_MiBps: entry(
    "MiB/s",
    "number",
    "the sequential read's I/O calls alone, as fio and IOR measure (they verify nothing): " +
      "read_bytes / 2^20 / (read_s - read_verify_s); excludes the verification the reading " +
      "thread did, not reads in flight meanwhile, so it is at least read_MiBps (equal when " +
      "read_verify_s is 0); under MPI the aggregate row: summed bytes over the slowest read_s " +
      "less the largest read_verify_s",
  ),
  // the random read phase
  random_s: entry(
    "s",
    "number",
    "random read of read_frames (read: random_units), every frame verified",
  ),
  random_MiBps: entry(
    "MiB/s",
    "number",
    "payload read at random (table: read_bytes; read: random_bytes) / 2^20 / random_s",
  ),
  random_ms: entry("ms", "number", "random_s per frame read"),
  random_user_s: entry("s", "number", "user CPU of the random read"),
  random_sys_s: entry("s", "number", "system CPU of the random read"),
  random_dev_bytes: entry("bytes", "count", "bytes the random read fetched from the device"),
  random_user_ticks: entry("ticks", "count", "user CPU of the random read, clock ticks"),
  random_sys_ticks: entry("ticks", "count", "system CPU of the random read, clock ticks"),
  random_verify_s: entry("s", "number", verifyText("random_s")),
  // each read operation's latency (a frame's read, or a block's; lib/report/histogram.ts):
  // percentiles of the phase's histogram (within 0.4%); JSON rows also carry the histogram
  // itself as read_latency and random_latency (ns buckets); under MPI from the ranks' merged
  // histograms
  read_p50_us: entry("us", "number", latencyText("median", "read")),
  read_p90_us: entry("us", "number", latencyText("90th percentile", "read")),
  read_p99_us: entry("us", "number", latencyText("99th percentile", "read")),
  read_p999_us: entry("us", "number", latencyText("99.9th percentile", "read")),
  read_max_us: entry("us", "number", latencyText("largest", "read")),
  read_iops: entry(
    "ops/s",
    "number",
    "operations (frame or block reads) of the sequential read per second of read_s (under MPI: " +
      "all ranks' over the slowest rank's read_s)",
  ),
  random_p50_us: entry("us", "number", latencyText("median", "random")),
  random_p90_us: entry("us", "number", latencyText("90th percentile", "random")),
  random_p99_us: entry("us", "number", latencyText("99th percentile", "random")),
  random_p999_us: entry("us", "number", latencyText("99.9th percentile", "random")),
  random_max_us: entry("us", "number", latencyText("largest", "random")),
  // records: each record's write or read (the row's phase), one histogram per phase row
  record_p50_us: entry("us", "number", recordText("median")),
  record_p90_us: entry("us", "number", recordText("90th percentile")),
  record_p99_us: entry("us", "number", recordText("99th percentile")),
  record_p999_us: entry("us", "number", recordText("99.9th percentile")),
  record_max_us: entry("us", "number", recordText("largest")),
  record_iops: entry(
    "ops/s",
    "number",
    "records written or read (the row's phase) per second of wall_s (under MPI: all ranks' over " +
      "the slowest rank's wall_s)",
  ),
  read_call_p50_us: entry("us", "number", callText("median", "read")),
  read_call_p99_us: entry("us", "number", callText("99th percentile", "read")),
  random_call_p50_us: entry("us", "number", callText("median", "random")),
  random_call_p99_us: entry("us", "number", callText("99th percentile", "random")),
  random_iops: entry(
    "ops/s",
    "number",
    "operations of the random read per second of random_s (under MPI: all ranks' over the " +
      "slowest rank's random_s)",
  ),
  random_io_MiBps: entry(
    "MiB/s",
    "number",
    "the random read's I/O calls alone: read_bytes / 2^20 / (random_s - random_verify_s); " +
      "excludes the verification the reading thread did (see read_io_MiBps)",
  ),
  // one phase per row (records: the phase column names it)
  wall_s: entry(
    "s",
    "number",
    "wall time of the row's phase on the monotonic clock (readers: the first reader's start to " +
      "the last reader's end)",
  ),
  cpu_s: entry("s", "number", "user_s + sys_s"),
  user_s: entry(
    "s",
    "number",
    "user CPU of the row's phase (getrusage, whole process; loader: with its reader processes')",
  ),
  sys_s: entry(
    "s",
    "number",
    "system CPU of the row's phase (getrusage, whole process; loader: with its reader processes')",
  ),
  MiBps: entry("MiB/s", "number", "bytes / 2^20 / wall_s"),
  dev_read_bytes: entry(
    "bytes",
    "count",
    "bytes fetched from the device during the row's phase (loader: with its reader processes')",
  ),
  dev_write_bytes: entry("bytes", "count", "bytes sent to the device during the row's phase"),
  // readers
  mean_s: entry("s", "number", "mean time of one reader, open to close"),
  max_s: entry("s", "number", "slowest reader"),
  min_s: entry("s", "number", "fastest reader"),
  aggregate_MiBps: entry("MiB/s", "number", "procs x file_bytes / 2^20 / wall_s"),
  slope_s_per_proc: entry(
    "s/process",
    "number",
    "wall time added per added process since the previous row of the same mode (first row: " +
      "wall_s / procs), the seed's cost per process",
  ),
  start_spread_s: entry("s", "number", "last reader's start minus the first's"),
  resident_before: entry(
    "0..1",
    "fraction",
    "fraction of the file(s) cached at the start (loader: before each epoch; at the first, " +
      "after its drop)",
  ),
  // the page cache and the clocks
  resident_after_drop: entry(
    "0..1",
    "fraction",
    "fraction of the file cached after the drop (records: 0 for write; with --direct no drop is " +
      "made: what is cached)",
  ),
  drop_s: entry("s", "number", "time spent dropping (or warming) the page cache, untimed"),
  clk_tck: entry("ticks/s", "count", "clock ticks per second"),
  cold_ok: entry(
    "",
    "flag",
    "cold rows: true when every cold read phase can be trusted (the AND of the PHASE_cold_ok " +
      "columns; records and readers: the row's one read phase); false otherwise (cold_why and " +
      "stderr say why); empty when warm or direct",
  ),
  open_cold_ok: entry(
    "",
    "flag",
    "cold rows: true when the open read from the device: not NFS, Lustre, GPFS, BeeGFS, " +
      "CephFS, FUSE or tmpfs, and at most 5% of the file resident after the drop; empty when " +
      "warm or direct",
  ),
  read_cold_ok: entry(
    "",
    "flag",
    "cold rows: true when the sequential read phase read from the device: the file system and " +
      "residency as open_cold_ok, and half its bytes or more fetched from the device " +
      "(read_dev_bytes against read_bytes; readers: against the distinct files' bytes; " +
      "records: the read row's dev_read_bytes)",
  ),
  random_cold_ok: entry(
    "",
    "flag",
    "cold rows: true when the random read phase read from the device, as read_cold_ok " +
      "(random_dev_bytes against its payload): a phase a library's cache served is false",
  ),
  cold_why: entry(
    "",
    "text",
    "cold rows with cold_ok false: each failing phase and why, `PHASE: REASON` joined by `; ` " +
      "(resident: pages left after the drop; device bytes: under half the phase's bytes from " +
      "the device; fs type: a file system, such as tmpfs, where nothing is cold); else empty",
  ),
  verified: entry(
    "",
    "flag",
    "true when --verify checked the data (loader: every sample of a file it wrote, or of --file " +
      "with --verify)",
  ),
  // system calls
  bs_bytes: entry(
    "bytes",
    "size",
    "bytes of each read and write call of native framings (--bs); 0: the default, small " +
      "writes coalesced into 4 MiB calls, larger writes and each frame's read in one call",
  ),
  direct: entry("", "flag", "true when the files were opened with O_DIRECT (--direct)"),
  engine: entry(
    "",
    "text",
    "the I/O engine of the native reads (table, records: and of the write phase's transfers), as fio " +
      "names it: psync (one request at a time: pread, or with --direct --verify one native AIO " +
      "read in flight), libaio or io_uring (--engine, --iodepth); psync where the kernel " +
      "refused the engine asked",
  ),
  iodepth: entry(
    "",
    "count",
    "most read requests (table: and write requests; records' write rows: write requests) in " +
      "flight at once (--iodepth; 1: one at a time); with a depth above 1 the read latency " +
      "columns time each request, from its submission to its reap",
  ),
  huge_pages: entry(
    "",
    "flag",
    "true when the O_DIRECT buffers were asked to be 2 MiB transparent huge pages (--direct; " +
      "--no-huge-pages: false, 4 KiB pages)",
  ),
  // --baseline fio
  fio_write_MiBps: entry(
    "MiB/s",
    "number",
    "--baseline fio: fio writing a file of data_bytes in the same directory (our engine and " +
      "iodepth, psync at depth 1 by default; bs = fio_write_bs_bytes, same direct flag and " +
      "fsync policy: end_fsync=1, or fsync=1 with each)",
  ),
  fio_read_MiBps: entry(
    "MiB/s",
    "number",
    "--baseline fio: fio reading read_bytes of it in order, after the same drop (and " +
      "invalidate=1)",
  ),
  fio_random_MiBps: entry("MiB/s", "number", "--baseline fio: fio randread of read_bytes of it"),
  efficiency_write: entry(
    "ratio",
    "number",
    "write_MiBps / fio_write_MiBps (1 = fio's speed); in mean and median rows the ratio of " +
      "the two rates' mean (median), JSON's efficiency_write_mean_of_ratios the mean of the runs'",
    { numerator: "write_MiBps", denominator: "fio_write_MiBps" },
  ),
  efficiency_read: entry(
    "ratio",
    "number",
    "read_io_MiBps / fio_read_MiBps: our read calls without our verification, like with like " +
      "against fio, which verifies nothing; summary rows as efficiency_write",
    { numerator: "read_io_MiBps", denominator: "fio_read_MiBps" },
  ),
  efficiency_random: entry(
    "ratio",
    "number",
    "random_io_MiBps / fio_random_MiBps (without our verification, as efficiency_read); " +
      "summary rows as efficiency_write",
    { numerator: "random_io_MiBps", denominator: "fio_random_MiBps" },
  ),
  fio_bs_bytes: entry(
    "bytes",
    "size",
    "--baseline fio: fio's block size when it reads, as each of our read calls: bs_bytes with " +
      "--bs, else one frame (28 N bytes; a file's first read of 1 MiB or more is 128 KiB then " +
      "the rest), with --direct rounded up to the alignment of our direct reads (a page, 4096, " +
      "or the file system's direct-I/O alignment when larger)",
  ),
  fio_write_bs_bytes: entry(
    "bytes",
    "size",
    "--baseline fio: fio's block size when it writes: bs_bytes with --bs, else 4 MiB with " +
      "--direct, --engine or --iodepth above 1 (our staged writes; at most the file), else one " +
      "frame",
  ),
  fio_huge_pages: entry(
    "",
    "flag",
    "--baseline fio: true when fio's buffers were reserved huge pages (mem=shmhuge, given with " +
      "--direct where free huge pages and the right to lock them allow), as ours (huge_pages)",
  ),
  // MPI (lib/mpi/aggregate.ts; each rate's and time's min, mean and max over ranks follow as
  // NAME_min, NAME_mean, NAME_max in NAME's unit)
  ranks: entry("ranks", "count", "MPI ranks in the run"),
  rank: entry("", "text", "under MPI: the rank (a number, or all for the aggregate row)"),
  host: entry("", "text", "under MPI: the rank's host (the aggregate row: N nodes)"),
  write_path: entry("", "text", "under MPI: the file the rank wrote"),
  read_path: entry("", "text", "under MPI: the file the rank read"),
  layout: entry(
    "",
    "text",
    "under MPI (table, records): per-rank (a file per rank) or shared (one file for all ranks, " +
      "--layout)",
  ),
  segments: entry(
    "segments",
    "count",
    "under MPI (table, records): the blocks each rank's frames (records) form in a shared file, " +
      "interleaved with the other ranks' as IOR's -s does (--segments); 1 for a file per rank",
  ),
  collective: entry(
    "",
    "flag",
    "under MPI (table, records): true when a backend that goes through MPI-IO (mpiio, " +
      "hdf5-mpio) read and wrote with collective calls (MPI_File_write_at_all, " +
      "MPI_File_read_at_all; HDF5's H5FD_MPIO_COLLECTIVE), false with independent ones " +
      "(--collective off); empty for backends without MPI-IO",
  ),
  library: entry(
    "",
    "text",
    "under MPI (table, records): the MPI library a backend that goes through MPI-IO did its I/O " +
      "with, as MPI_Get_library_version's first line names it, after the backend's own library " +
      "when it has one (hdf5-mpio: `HDF5 1.10.8 (libhdf5_openmpi.so.103) on Open MPI v4.1.4, " +
      "...`; the JSON meta's mpi_io says which hints it reports using); empty for backends " +
      "without MPI-IO",
  ),
  // loader: one row per epoch of random samples
  epoch: entry("", "count", "loader: the epoch, from 1"),
  access: entry(
    "",
    "text",
    "loader: how each sample was read: native (sciobench's reads, through the format's own " +
      "index), library (through the format's library, one sample at a time) or direct (an " +
      "HDF5 or netCDF-4 file's chunks with sciobench's reads, at the addresses the HDF5 " +
      "library reported at the open)",
  ),
  sampling: entry(
    "",
    "text",
    "loader: shuffle (each epoch a new seeded permutation of every frame) or random (frames " +
      "drawn with replacement, seeded)",
  ),
  batch_size: entry("samples", "count", "loader: samples (frames) per batch"),
  readers: entry(
    "processes",
    "count",
    "loader: reader processes that read the batches (--readers; 1: the consumer reads each " +
      "batch itself)",
  ),
  batches: entry("batches", "count", "loader: batches read in the epoch"),
  samples: entry("samples", "count", "loader: samples (frames) read in the epoch"),
  load_s: entry(
    "s",
    "number",
    "loader: time the epoch waited for data: the sum of its batches' read times (every sample " +
      "read and verified), without --compute's steps; with --readers above 1 the sum of the " +
      "consumer's waits for its batches",
  ),
  sample_rate: entry("samples/s", "number", "loader: samples / load_s"),
  load_MiBps: entry("MiB/s", "number", "loader: bytes / 2^20 / load_s"),
  batch_p50_us: entry("us", "number", batchText("median")),
  batch_p90_us: entry("us", "number", batchText("90th percentile")),
  batch_p99_us: entry("us", "number", batchText("99th percentile")),
  batch_p999_us: entry("us", "number", batchText("99.9th percentile")),
  batch_max_us: entry("us", "number", batchText("largest")),
  compute_ms: entry("ms", "number", "loader: --compute, the busy-wait after each batch"),
  compute_s: entry("s", "number", "loader: time the epoch spent in --compute's busy-waits"),
  accel_util: entry(
    "0..1",
    "fraction",
    "loader: accelerator utilisation as DLIO reports it: compute_s / (compute_s + load_s); " +
      "empty without --compute",
  ),
  // every row ends with these
  stat: entry(
    "",
    "text",
    "run for a measurement; mean, median, stddev (sample), min or max over the repeats of a cell",
  ),
  error: entry("", "text", "why the cell failed (its measured columns are then empty)"),
} as const satisfies Record<string, ColumnEntry>;

/** The name of a column of the schema. */
export type ColumnName = keyof typeof COLUMN_SCHEMA;

/** Whether `name` is a column of the schema. */
export function isColumnName(name: string): name is ColumnName {
  return Object.hasOwn(COLUMN_SCHEMA, name);
}

/** The documented column `name` (unit, kind and meaning from the schema). */
export function columnDoc(name: ColumnName): ColumnDoc {
  const e: ColumnEntry = COLUMN_SCHEMA[name];
  const doc = { name, unit: e.unit, kind: e.kind, text: e.text };
  return e.ratio === undefined ? doc : { ...doc, ratio: e.ratio };
}

/** The names of `groups` joined in order (a column list written a few names a line). */
export function columnNames(...groups: readonly (readonly ColumnName[])[]): ColumnName[] {
  return groups.flat();
}

/** The documented columns of `groups` joined in order (see {@link columnNames}). */
export function columnDocs(...groups: readonly (readonly ColumnName[])[]): ColumnDoc[] {
  return columnNames(...groups).map(columnDoc);
}

/** The columns every workload ends with: the row kind and a failed cell's reason. */
export const STAT_COLUMN_NAMES = ["stat", "error"] as const satisfies readonly ColumnName[];

/** The columns about system calls every workload writes (`--bs`, `--direct`). */
export const TRANSFER_COLUMN_NAMES = [
  "bs_bytes",
  "direct",
  "huge_pages",
] as const satisfies readonly ColumnName[];

/** The columns of how many read requests were in flight, and through what (`--iodepth`). */
export const QUEUE_COLUMN_NAMES = ["engine", "iodepth"] as const satisfies readonly ColumnName[];

/**
 * The columns a row under MPI says of how its files were written (table, records): the layout,
 * collective or independent MPI-IO calls, and the MPI library that did them.
 */
export const MPI_IO_COLUMN_NAMES = [
  "layout",
  "segments",
  "collective",
  "library",
] as const satisfies readonly ColumnName[];

/**
 * The columns of the calls on names each phase of a table row made (lib/workloads/metadata.ts):
 * files and directories created, opened and synced, and the time in those calls.
 */
export const METADATA_COLUMN_NAMES = [
  ...["write_files_created", "write_dirs_created", "write_files_opened", "write_files_synced"],
  ...["write_dirs_synced", "write_meta_s", "read_files_opened", "read_meta_s"],
  ...["random_files_opened", "random_meta_s"],
] as const satisfies readonly ColumnName[];

/** The latency columns of the sequential and random read phases (table, read). */
export const LATENCY_COLUMN_NAMES = [
  ...["read_p50_us", "read_p90_us", "read_p99_us", "read_p999_us", "read_max_us", "read_iops"],
  ...["random_p50_us", "random_p90_us", "random_p99_us", "random_p999_us", "random_max_us"],
  "random_iops",
  ...["read_call_p50_us", "read_call_p99_us", "random_call_p50_us", "random_call_p99_us"],
] as const satisfies readonly ColumnName[];

/**
 * The median latency of each phase's operations (a frame's read, a record's, a batch's): compared
 * by default beside the rates and times (`compare`, `report`). The typical operation's time is
 * untouched by the few a neighbour or the host slowed, which move a phase's rate: measured with
 * tools/aa_compare.ts, the median frame read flagged a 20% slower read path in 18-20 pairs of 20
 * (the read rate in 7-13), and no unchanged backend in 200 cells.
 */
export const MEDIAN_LATENCY_COLUMN_NAMES = [
  ...["read_p50_us", "random_p50_us", "record_p50_us", "batch_p50_us"],
] as const satisfies readonly ColumnName[];

/** The latency columns of a records phase: each record's write or read. */
export const RECORD_LATENCY_COLUMN_NAMES = [
  ...["record_p50_us", "record_p90_us", "record_p99_us", "record_p999_us", "record_max_us"],
  "record_iops",
] as const satisfies readonly ColumnName[];

/** The columns of `sciobench read`, in CSV order. */
export const READ_COLUMN_NAMES: readonly ColumnName[] = columnNames(
  ["framing", "path", "frames", "file_bytes", "open_ms", "read_MiBps", "random_MiBps"],
  ["random_ms", "read_frames", "read_bytes", "random_bytes", "read_s", "random_s"],
  ["read_user_s", "read_sys_s", "read_dev_bytes", "random_dev_bytes", "resident_after_drop"],
  ["fs_type", "unit", "random_units", "verified", "open_dev_bytes", "cache", "cold_ok"],
  ["open_cold_ok", "read_cold_ok", "random_cold_ok", "cold_why"],
  TRANSFER_COLUMN_NAMES,
  QUEUE_COLUMN_NAMES,
  LATENCY_COLUMN_NAMES,
  ["repeat", "stat"],
);

/** The columns of `sciobench write`, in CSV order. */
export const WRITE_COLUMN_NAMES: readonly ColumnName[] = columnNames(
  ["framing", "path", "N", "frames", "file_bytes", "data_bytes", "write_s", "write_MiBps"],
  ["write_user_s", "write_sys_s", "write_dev_bytes", "seed", "first_frame", "fsync"],
  TRANSFER_COLUMN_NAMES,
);

/** The columns of `sciobench info`'s rows (`--format csv` or `jsonl`: one per chunk), in order. */
export const INFO_COLUMN_NAMES: readonly ColumnName[] = columnNames(
  ["frame", "name", "dtype", "shape", "offset", "bytes", "crc32"],
);

/**
 * Turns the words `true` and `false` in `row`'s flag columns (kind `flag`: direct, huge_pages,
 * ...) into booleans, in place, for rows a program peer printed as text; returns `row`.
 */
export function flagsAsBooleans<R extends Record<string, unknown>>(row: R): R {
  const values = row as Record<string, unknown>;
  for (const [name, value] of Object.entries(row)) {
    if (value !== "true" && value !== "false") continue;
    if (isColumnName(name) && COLUMN_SCHEMA[name].kind === "flag") values[name] = value === "true";
  }
  return row;
}

/**
 * The documented columns of a workload, with those MPI adds (lib/mpi/aggregate.ts: ranks, rank,
 * host, extra columns, and each rate's and time's min, mean and max over ranks) when running as
 * one rank of many.
 */
export function rankColumnDocs(
  docs: readonly ColumnDoc[],
  spec: AggregateSpec,
  extra: readonly string[] = [],
): ColumnDoc[] {
  return rankColumns(docs.map((d) => d.name), spec, extra).map((name) => {
    const known = docs.find((c) => c.name === name);
    if (known) return known;
    if (extra.includes(name) && isColumnName(name)) return columnDoc(name);
    const spread = /^(.*)_(min|mean|max)$/.exec(name);
    if (spread) {
      const base = docs.find((c) => c.name === spread[1]);
      return col(name, base?.unit ?? "", "number", `${spread[2]} over ranks of ${spread[1]}`);
    }
    if (name === "ranks") return col(name, "ranks", "count", "MPI ranks in the run");
    return col(name, "", "text", `under MPI: ${name.replace("_", " ")} (rank: a number, or all)`);
  });
}
