/**
 * The one table of the CLI's flags: each flag's name, type, default, help and the commands that
 * take it. The parser of every command (lib/cli/parse_flags.ts), the Options section of every
 * `--help` (lib/cli/help.ts) and the reference docs/cli.md are all made from it. One file of
 * about 600 lines because it is one table: split by command, the flags several commands share
 * would be declared again in each part.
 * @module
 */
import { COMPARE_DEFAULTS } from "../report/compare/compare.ts";
import { NUMBER_TYPES } from "../workloads/settings.ts";
import { UsageError } from "../core/errors.ts";
import type { WorkloadFlag } from "../workloads/workload.ts";
import { orList, rowFormats, rowFormatsHelp } from "../report/formats/mod.ts";
import {
  LOADER_DEFAULTS,
  READERS_QUICK,
  READERS_SEED,
  RECORDS_QUICK,
  RECORDS_SEED,
  SCALING_QUICK,
  SCALING_SEED,
  TABLE_QUICK,
  TABLE_SEED,
} from "../workloads/seeds.ts";
import { LOADER_PREFETCH, MAX_LOADER_READERS } from "../workloads/loader/readers.ts";

/** Every command name the table knows, in the order `sciobench --help` lists them. */
export const COMMAND_NAMES = [
  "table",
  "scaling",
  "records",
  "readers",
  "write",
  "read",
  "loader",
  "info",
  "framings",
  "plot",
  "compare",
  "runs",
  "report",
  "version",
  "_reader",
] as const;

/** A command of {@link COMMAND_NAMES}; `_reader` is readers' hidden reader process. */
export type CommandName = typeof COMMAND_NAMES[number];

/** One flag of the table. */
export interface FlagSpec {
  /** `string` takes a value, `boolean` none. */
  readonly type: "string" | "boolean";
  /** One-letter alias (`-o`). */
  readonly short?: string;
  /** Repeatable, each value kept apart (`--option`). */
  readonly multiple?: true;
  /** A comma-separated list: repeats accumulate (`--framing gsd --framing raw`). */
  readonly list?: true;
  /** A boolean whose absence differs from false (`--overlap`): undefined when not given. */
  readonly optional?: true;
  /** Placeholder of the value in the help (`LIST`, `FILE`). */
  readonly value?: string;
  /** The value when the flag is not given: one for every command, or per command. */
  readonly default?: string | Readonly<Partial<Record<CommandName, string>>>;
  /** What the flag does, in every command that takes it. */
  readonly help: string;
  /** What it adds in one command (appended to `help`). */
  readonly about?: Readonly<Partial<Record<CommandName, string>>>;
  /**
   * What it adds in a command `about` says nothing of, made each time the help is: for lists
   * that grow at run time (the row formats of registerRowFormat). Without a command: what holds
   * in every command, for the flag index of docs/cli.md.
   */
  readonly aboutOf?: (command?: string) => string | undefined;
  /** The commands that take it. */
  readonly commands: readonly CommandName[];
  /** Internal (the hidden reader process): left out of help and docs/cli.md. */
  readonly hidden?: true;
}

/** Commands whose results are rows: every output flag applies to them. */
const ROWS = ["table", "scaling", "records", "readers", "write", "read", "loader"] as const;
/** The measuring workloads (plans, --quick, --dry-run, --dir). */
const WORKLOADS = ["table", "scaling", "records", "readers"] as const;
/** Commands that read or write with sciobench's own transfers (`--bs`, `--direct`). */
const TRANSFERS = [...WORKLOADS, "write", "read"] as const;
/** The MPI-aware reading workloads. */
const MPI_READING = ["table", "records"] as const;

/**
 * What `--format` offers `command`, made from the formats of lib/report/formats/mod.ts each time
 * the help is (a format registered after this table loads is listed too). A workload's command
 * adds its seed layout (lib/cli/workload_command.ts); info and version keep their own sets. The
 * flag index points at the list of formats of docs/cli.md.
 */
function formatAbout(command?: string): string | undefined {
  if (command === undefined) return "; the formats of rows are listed under Output formats";
  if (command === "plot" || command === "report") {
    return "(of the one row saying what was drawn)" + rowFormatsHelp();
  }
  if (command === "framings") {
    return ": table (or text: one line per backend and its options), json (every backend with " +
      `its options, as data), or ${orList(framingsRowFormats())} (one row per backend)`;
  }
  return rowFormatsHelp();
}

/**
 * The formats of rows `sciobench framings` prints through the row writers (one row per backend):
 * those for data, but `json`, whose document framings writes itself.
 */
export function framingsRowFormats(): string[] {
  return rowFormats().filter((f) => f.audience === "data" && !f.seedLayout && f.name !== "json")
    .map((f) => f.name);
}

const TRANSFER_READER = "(the reader process of 'readers --reader sciobench')";

/**
 * Every flag of every command. The order here is the order of each command's Options section.
 */
export const FLAGS = {
  framing: {
    type: "string",
    list: true,
    value: "LIST",
    help: "backends (native framings or peers; see 'sciobench framings')",
    default: { scaling: SCALING_SEED.framing, readers: "f77", _reader: "f77" },
    about: {
      table: `to run (default ${TABLE_SEED.framing})`,
      scaling: "to run, in section order",
      records: `to run (default ${RECORDS_SEED.framing}: the seed's HDF5, netCDF-3 through the ` +
        "library and netCDF-4 files, and the native classic writer; peers run where their " +
        "library is installed)",
      readers: "to write the files with (one)",
      write: "to write with (one); required unless --append",
      read: "to read the file with (one; default: detected from its first bytes)",
      info: "to read the file with (one; default: detected from its first bytes)",
      loader: `to write the file with (one; default ${LOADER_DEFAULTS.framing}; hdf5 and ` +
        "netcdf4 through their libraries), or with --file to read it with (default: detected)",
    },
    commands: [...WORKLOADS, "write", "read", "loader", "info", "_reader"],
  },
  size: {
    type: "string",
    list: true,
    value: "LIST",
    help: "target file size: ceil(size / 28 N) frames; 128M, 1G, 4k and 128MiB, 1GiB, 4KiB are " +
      "binary (2^20, 2^30, 2^10, as in fio and dd), 100MB, 1GB, 4kB decimal (10^6, 10^9, 10^3)",
    about: {
      table: `: a list (default ${TABLE_SEED.size}; --quick ${TABLE_QUICK.size})`,
      write: "(instead of --frames)",
      loader: `, of the file it writes (default ${LOADER_DEFAULTS.size}; not with --file)`,
    },
    commands: ["table", "write", "loader"],
  },
  n: {
    type: "string",
    list: true,
    value: "N",
    help: "particles per frame (1024 or 32^2)",
    about: {
      table: `: a list (default ${TABLE_SEED.n})`,
      write: ": one; required",
      loader: `: one, of the file it writes (default ${LOADER_DEFAULTS.n}; not with --file)`,
    },
    commands: ["table", "write", "loader"],
  },
  frames: {
    type: "string",
    value: "K",
    help: "number of frames; required unless --size",
    commands: ["write"],
  },
  datasets: {
    type: "string",
    list: true,
    value: "LIST",
    help: `dataset counts, e.g. 1,2,4 or a range (default ${SCALING_SEED.datasets}; --quick ` +
      `${SCALING_QUICK.datasets})`,
    commands: ["scaling"],
  },
  shape: {
    type: "string",
    value: "SHAPE",
    help: "dimensions joined by x, slowest first",
    default: { scaling: SCALING_SEED.shape },
    about: {
      scaling: "(of each dataset)",
      records: `(records x record shape; default ${RECORDS_SEED.shape}, the seed's: 1.2 GB per ` +
        `file as int32; --quick ${RECORDS_QUICK.shape})`,
    },
    commands: ["scaling", "records"],
  },
  type: {
    type: "string",
    value: "T",
    help: `element type: ${NUMBER_TYPES.join(", ")}; a backend that cannot store it is refused ` +
      "with one line",
    default: { scaling: SCALING_SEED.type, records: RECORDS_SEED.type },
    commands: ["scaling", "records"],
  },
  procs: {
    type: "string",
    list: true,
    value: "LIST",
    help: `reader process counts, e.g. 1..7 or 1,2,4 (default ${READERS_SEED.procs}` +
      `; --quick ${READERS_QUICK.procs})`,
    commands: ["readers"],
  },
  mode: {
    type: "string",
    list: true,
    value: "LIST",
    help: "shared (all read one file), separate (one file each); default both",
    commands: ["readers"],
  },
  records: {
    type: "string",
    value: "R",
    help: "records per file",
    default: String(READERS_SEED.records),
    commands: ["readers", "_reader"],
  },
  length: {
    type: "string",
    value: "L",
    help: "doubles per record (Packman's)",
    default: String(READERS_SEED.length),
    commands: ["readers", "_reader"],
  },
  reader: {
    type: "string",
    value: "R",
    help: "gfortran (the default where installed: the seed's rd) or sciobench",
    commands: ["readers"],
  },
  file: {
    type: "string",
    value: "PATH",
    help: "read your own file instead of writing one; no write phase, the file is never changed",
    about: {
      readers: ": a Fortran file (records of equal length, 4-byte markers) read with rd, " +
        "checking a(n) = i; shared mode only",
      loader: ": every frame is a sample (its framing detected, or --framing); the format's " +
        "own checks run on every sample, and with --verify the data must be what 'sciobench " +
        "write --seed S' writes",
    },
    commands: ["readers", "loader"],
  },
  "samples-per-batch": {
    type: "string",
    value: "K",
    help: "samples (frames) per batch",
    default: String(LOADER_DEFAULTS.samplesPerBatch),
    commands: ["loader"],
  },
  epochs: {
    type: "string",
    value: "E",
    help: "epochs to read (each a pass over as many samples as the file has frames; default " +
      `${LOADER_DEFAULTS.epochs})`,
    commands: ["loader"],
  },
  batches: {
    type: "string",
    value: "B",
    help: "batches to read in all, instead of --epochs: epochs of ceil(frames / K) batches, the " +
      "last one cut short",
    commands: ["loader"],
  },
  readers: {
    type: "string",
    value: "K",
    help: "reader processes that read the batches, as DataLoader's workers (DLIO's read " +
      "threads): each opens the file and reads whole batches, batch b by reader b mod K, up to " +
      `${LOADER_PREFETCH} batches ahead of the consumer, which takes them in order and runs ` +
      `--compute (1 to ${MAX_LOADER_READERS}; ` +
      `default ${LOADER_DEFAULTS.readers}: the consumer reads each batch itself, nothing ahead)`,
    commands: ["loader"],
  },
  compute: {
    type: "string",
    value: "MS",
    help: "milliseconds of busy-wait after each batch, a training step's compute; the rows " +
      "then say the accelerator utilisation (accel_util, as DLIO)",
    commands: ["loader"],
  },
  access: {
    type: "string",
    list: true,
    value: "LIST",
    help: "HDF5 and netCDF-4 files: how each sample is read, one or both (each its own rows, " +
      "column access): library (through the format's library, one sample at a time, the " +
      "default) or direct (each frame's chunks read with sciobench's own reads, --iodepth " +
      "and --engine too, at the file addresses the HDF5 library reports once at the open " +
      "(H5Dget_chunk_info); a compressed or otherwise filtered dataset is refused)",
    commands: ["loader"],
  },
  dir: {
    type: "string",
    value: "DIR",
    help: "where to write the scratch files (default: current directory)",
    commands: [...WORKLOADS, "loader"],
  },
  repeat: {
    type: "string",
    value: "K",
    help: "measure each cell K times (default 1); K > 1 adds summary rows (stat = mean, " +
      "median, stddev, min, max)",
    about: {
      scaling: "per (framing, datasets); --trials K is the same (IOspeed's name)",
      records: "per (framing, endian, phase); --trials K is the same",
      read: "; the one cell is FILE: it is read K times, each time from the page cache state " +
        "--cache asks",
    },
    commands: [...WORKLOADS, "read"],
  },
  trials: {
    type: "string",
    value: "K",
    help: "the same as --repeat K",
    commands: ["scaling", "records"],
  },
  seed: {
    type: "string",
    value: "S",
    help: "seed",
    default: "1",
    about: {
      table: "of the data and of the random order",
      records: "of the data",
      readers: "of the data pattern",
      write: "of the data",
      read: "of the random order (and of --verify's data)",
      loader: "of the data and of every epoch's order",
      _reader: "of the data pattern",
    },
    commands: ["table", "records", "readers", "write", "read", "loader", "_reader"],
  },
  "file-index": {
    type: "string",
    value: "I",
    help: "which file of the run the reader reads (its data pattern)",
    default: "0",
    commands: ["_reader"],
    hidden: true,
  },
  "no-wait": {
    type: "boolean",
    help: "read at once instead of waiting for the release byte on stdin",
    commands: ["_reader"],
    hidden: true,
  },
  warmup: {
    type: "boolean",
    help: "accepted and changes nothing (the warm-up is on by default)",
    commands: ["table"],
  },
  "no-warmup": {
    type: "boolean",
    help: "skip each cell's untimed warm-up (the file written whole, as gsd's benchmark does, " +
      "read back whole and removed, before the timed write)",
    commands: ["table"],
  },
  sample: {
    type: "string",
    value: "S",
    help: "what each read phase reads",
    default: { table: "256MiB", loader: LOADER_DEFAULTS.sample },
    about: {
      table: ": SIZE bytes (256M and 256MiB are 2^20-byte units as in fio, 256MB decimal), " +
        "capped at the file",
      read: ": the first frames up to SIZE bytes in order (256M and 256MiB are 2^20-byte " +
        "units as in fio, 256MB decimal), and as many frames at random (default: every frame)",
      loader: ": shuffle (each epoch a new seeded permutation of every frame) or random " +
        "(frames drawn with replacement, seeded)",
    },
    commands: ["table", "read", "loader"],
  },
  verify: {
    type: "boolean",
    help: "check the data against the table pattern written by 'sciobench write' (the same " +
      "--seed)",
    about: { loader: "(with --file; a file the loader writes is always checked)" },
    commands: ["read", "loader"],
  },
  append: {
    type: "boolean",
    help: "add the frames to an existing FILE (its framing is detected); an undo journal " +
      "beside FILE rolls it back after any failure, signal or crash",
    commands: ["write"],
  },
  wait: {
    type: "boolean",
    help: "wait for another writer of FILE to finish instead of giving up",
    commands: ["write"],
  },
  fsync: {
    type: "string",
    value: "P",
    help: "end|each|none: fsync once after the last frame (and trailer), after every frame " +
      "and at the end, or never (then the write numbers are page-cache numbers); inside the " +
      "write timing; the column fsync says which. Peers (hdf5, netcdf4, netcdf-lib, hdf4) do " +
      "end or none, python-gsd end, f77-gfortran none",
    default: { table: "end", records: "end", write: "end", scaling: "none" },
    about: {
      scaling: "(none as in the seed; a bare --fsync is end)",
      write: "A new FILE is fsynced before it is renamed into place in any case (with none, " +
        "after the timing); --append always fsyncs (its undo journal needs it) and refuses none",
    },
    commands: ["table", "scaling", "records", "write"],
  },
  cache: {
    type: "string",
    list: true,
    value: "C",
    help: "page cache before each read phase: cold drops the file, warm reads it once first " +
      "(memory-speed numbers of the backend's code)",
    default: { table: "cold", readers: "cold", read: "cold" },
    about: {
      readers: "; a list: cold and/or warm, each its own cells",
      read: ". Warm: FILE is read through once, untimed, before it is opened, and no drop is " +
        "made before any phase; the column cache says which (--direct refuses warm)",
    },
    commands: ["table", "readers", "read"],
  },
  endian: {
    type: "string",
    list: true,
    value: "E",
    help: "native|little|big byte order, for backends that offer a choice",
    default: { table: "native", readers: "native", scaling: SCALING_SEED.endian },
    about: {
      table: "; per backend as hdf4=big,native",
      scaling: "for every backend, or per backend as NAME=ORDER (the seed's orders)",
      records: "; one or more, for every backend or per backend as NAME=ORDER (default without " +
        `--framing ${RECORDS_SEED.endian}: HDF5 big-endian as netCDF-3, netCDF-4 native, as ` +
        "the seed; with --framing one order for all: native, or big when a backend writes " +
        "big-endian only); netcdf classic is big-endian only",
      readers: "of the files",
      write: "(default native)",
    },
    commands: ["table", "scaling", "records", "readers", "write", "_reader"],
  },
  option: {
    type: "string",
    multiple: true,
    value: "KEY=VALUE",
    help: "the backend's own setting, repeatable; 'Backend options' below lists them",
    commands: ["records", "readers", "write", "read", "loader", "info", "_reader"],
  },
  peer: {
    type: "string",
    list: true,
    value: "LIST",
    help: "also measure the real library on the same cells: python-gsd (gsd.hoomd, as gsd's " +
      "benchmark reads) or python-gsd-fl (gsd.fl), needing python3-gsd; zarr-python " +
      "(zarr.DirectoryStore) or zarr-python-nested (NestedDirectoryStore), needing python3-zarr " +
      "2. Without --framing and --peer, python-gsd is added where it is importable",
    commands: ["table"],
  },
  "no-peers": {
    type: "boolean",
    help: "leave the python-gsd peer out of the bare command",
    commands: ["table"],
  },
  bs: {
    type: "string",
    value: "SIZE",
    help: "bytes of each read and write system call of the native framings (alias " +
      "--transfer-size; 64k, 1M, 4MiB: k, M, G are binary as in fio): writes coalesced or " +
      "split to SIZE, a frame read in SIZE preads, small frames several per call. Default: no " +
      "fixed size (small writes coalesced into 4 MiB calls, larger writes and each frame's " +
      "read in one call; bs_bytes 0); with --direct alone 4MiB, each read covering one " +
      "frame's aligned blocks only. mpiio (without --direct): the bytes of each MPI-IO call " +
      "of frame data, as IOR's -t. Other peers refuse it",
    about: { _reader: TRANSFER_READER },
    commands: [...TRANSFERS, "loader", "_reader"],
  },
  "transfer-size": {
    type: "string",
    value: "SIZE",
    help: "the same as --bs SIZE",
    commands: [...TRANSFERS, "loader"],
  },
  direct: {
    type: "boolean",
    help: "open the files with O_DIRECT: no page cache, every offset, length and buffer " +
      "aligned to the file system's direct I/O alignment (the tail written padded, then cut " +
      "with ftruncate); reads need no cache drop (cache=direct). Native framings only: peers " +
      "refuse it",
    about: {
      readers: "(reads with --reader sciobench, the default with it)",
      read: "The file itself is opened with O_DIRECT and no drops are made; with --verify " +
        "frame k is checked while frame k + 1's read is in flight through Linux native AIO",
      write: "--append refuses it (its undo journal reads through the page cache)",
      loader: "The samples are read with O_DIRECT (native framings, --access direct; the " +
        "library's rows beside direct ones read through the page cache, cold first); every " +
        "epoch's cache is then direct",
    },
    commands: [...TRANSFERS, "loader", "_reader"],
  },
  iodepth: {
    type: "string",
    value: "N",
    help: "native framings: keep up to N read requests in flight (1 to 1024; default 1: one " +
      "read at a time, the calls of a run without it): requests of at most --bs bytes prepared " +
      "in order, submitted in one call, at least one reaped, as many submitted again, and the " +
      "frames completed verified while the next are in flight, as fio's iodepth; each " +
      "request's latency goes into the latency columns. Without --engine: libaio with " +
      "--direct, else io_uring",
    about: {
      table: "; the write phase's transfers of --bs bytes (4 MiB without) too, each a write " +
        "request, all completed before the fsync (not --layout shared: its ranks write one at a " +
        "time); --baseline fio writes and reads at the same depth and engine",
      loader: "; each batch's samples in flight together",
      records: "; the read phase's records, each verified as it completes, and the write " +
        "phase's transfers of --bs bytes (4 MiB without), each a write request, all completed " +
        "before the fsync (not --layout shared: its ranks write one at a time)",
      readers: "; each reader's records (sciobench's reader: gfortran's rd makes its own calls)",
      _reader: TRANSFER_READER,
    },
    commands: ["read", "table", "loader", "records", "readers", "_reader"],
  },
  engine: {
    type: "string",
    value: "NAME",
    help: "native framings: the I/O engine of the reads, as fio's ioengine: psync (one pread " +
      "at a time), libaio (Linux native AIO; needs --direct: buffered libaio reads complete " +
      "inside io_submit) or io_uring (buffered or direct; where the kernel refuses it, one " +
      "line says so and psync runs, under MPI on every rank when one rank's kernel refuses " +
      "it; the column engine says which ran)",
    about: {
      table: "; the write phase's too (and fio's with --baseline fio)",
      records: "; the write phase's too",
      _reader: TRANSFER_READER,
    },
    commands: ["read", "table", "loader", "records", "readers", "_reader"],
  },
  "no-huge-pages": {
    type: "boolean",
    help: "with --direct, stage and read through buffers of 4 KiB pages, as fio's malloc'd " +
      "buffers (default: 2 MiB transparent huge pages, asked with MADV_HUGEPAGE: O_DIRECT pins " +
      "every page of a buffer, and fewer, larger pages make each call cheaper); the column " +
      "huge_pages says which",
    commands: [...TRANSFERS, "loader", "_reader"],
  },
  overlap: {
    type: "boolean",
    optional: true,
    help: "native framings: verify frame k while the read of frame k + 1 is in flight (the " +
      "same calls, one in flight at a time): with --direct through Linux native AIO (io_submit " +
      "now, io_getevents when the frame is needed), else on another thread (frames under 256 " +
      "KiB stay serial). Default: on with --direct (where io_setup works; else one line says " +
      "the reads are serial), off without",
    commands: ["table"],
  },
  "no-overlap": {
    type: "boolean",
    help: "read, verify, then read the next frame, with --direct too",
    commands: ["table"],
  },
  baseline: {
    type: "string",
    value: "fio",
    help: "beside each cell, fio (where installed) writes, reads and randomly reads a file of " +
      "the same size in the same directory with the same block size, direct flag, fsync " +
      "policy and cache state, each fio phase right after ours in odd repeats and right " +
      "before it in even ones (ABBA); adds fio_*_MiBps and efficiency_* = ours / fio. " +
      "Without fio: one line on stderr and those columns empty",
    commands: ["table"],
  },
  reorder: {
    type: "string",
    value: "K",
    help: "under MPI, rank r reads the file of rank (r + K) mod ranks (IOR's -C; default on " +
      "several nodes: the smallest K that puts every rank's file on another node, the ranks " +
      "per node when ranks fill nodes in order; on one node 0)",
    commands: MPI_READING,
  },
  "per-rank": {
    type: "boolean",
    help: "under MPI, one row per rank (with its host) after each aggregate row",
    commands: WORKLOADS,
  },
  layout: {
    type: "string",
    value: "L",
    help: "under MPI: per-rank (a file per rank) or shared (one file, each rank its own part " +
      "at offsets known in advance; raw, f77, netcdf, gsd, and mpiio and hdf5-mpio through " +
      "MPI-IO)",
    default: "per-rank",
    about: {
      scaling: "Scaling takes per-rank only: IOspeed times the open, writes and close of a " +
        "whole file, which ranks cannot share",
    },
    commands: ["table", "scaling", "records"],
  },
  segments: {
    type: "string",
    value: "S",
    help: "under MPI with --layout shared, each rank's frames (records) split into S blocks of " +
      "equal count, block s of rank r at frame (s x ranks + r) x block in the file, as IOR's -s " +
      "interleaves segments (default 1: each rank's frames one block); the frames per rank must " +
      "be a multiple of S; native shared framings and mpiio, refused for the other MPI-IO backends",
    default: "1",
    commands: MPI_READING,
  },
  collective: {
    type: "string",
    value: "C",
    help: "under MPI, how backends that go through MPI-IO (mpiio, hdf5-mpio) read and write: on " +
      "(the default) with collective calls (MPI_File_write_at_all, MPI_File_read_at_all; " +
      "H5FD_MPIO_COLLECTIVE), off with independent ones (MPI_File_write_at, MPI_File_read_at; " +
      "H5FD_MPIO_INDEPENDENT); the rows' collective column says which; refused when no backend " +
      "of the run uses MPI-IO",
    commands: MPI_READING,
  },
  hint: {
    type: "string",
    multiple: true,
    value: "KEY=VALUE",
    help: "under MPI, an MPI-IO hint for every MPI-IO open, repeatable (an MPI_Info: " +
      "romio_cb_write=enable, romio_cb_read=disable, cb_nodes=1, cb_buffer_size=16777216, " +
      "striping_factor=4, striping_unit=1048576, ...); the JSON meta's mpi_io says, for each " +
      "kind of open, every hint the library reports using (MPI_File_get_info) and whether each " +
      "asked one is reported, reported with another value, or not reported (refused or " +
      "ignored); refused when no backend of the run uses MPI-IO",
    commands: MPI_READING,
  },
  quick: {
    type: "boolean",
    help: "the same experiment scaled down to seconds (smaller sizes and counts)",
    commands: WORKLOADS,
  },
  "dry-run": {
    type: "boolean",
    help: "print the resolved plan (parameters, backends run and skipped, bytes and files to " +
      "write, known limits) and exit without writing data, after the checks the run makes " +
      "(--dir, free space, --bs with --direct)",
    aboutOf: () => {
      const own = rowFormats().filter((f) => f.plan).map((f) => `--format ${f.name}`);
      return `; as text${own.length === 0 ? "" : `, or as data with ${orList(own)}`}`;
    },
    commands: [...WORKLOADS, "loader"],
  },
  strict: {
    type: "boolean",
    help: "check the file against its format specification: list every departure the " +
      "format's library tolerates (such as non-NUL header padding) on stderr and exit 2 when " +
      "there is any",
    commands: ["info"],
  },
  "allow-external": {
    type: "boolean",
    help: "let HDF5 read external raw-data files outside the file's own directory (never a " +
      "device, FIFO or socket; external links are listed, not followed)",
    commands: ["read", "info"],
  },
  format: {
    type: "string",
    value: "F",
    help: "how the output is printed",
    default: { framings: "table", version: "table", compare: "table", runs: "table" },
    about: {
      compare: ": table (the metadata that differs, then one line per cell and metric, then the " +
        "cells only one side holds), csv or json (one row per cell and metric)",
      runs: ": table (one line per run), csv or json (one row per run)",
      info: ": table (text: the facts, then every variable, dataset and chunk; the default " +
        "wherever the output goes), json (one document; --json is the same), csv (one row per " +
        "chunk) or jsonl (the facts, the file's among them, then one JSON object per chunk)",
      version: ": table or text (one fact per line) or json (one object)",
    },
    aboutOf: formatAbout,
    commands: [...ROWS, "plot", "compare", "runs", "report", "info", "framings", "version"],
  },
  json: {
    type: "boolean",
    help: "the same as --format json",
    commands: ["info"],
  },
  out: {
    type: "string",
    short: "o",
    value: "FILE",
    help: "write the output to FILE instead of stdout (refused if FILE exists)",
    about: { plot: "(the SVG chart; required)", report: "(the HTML report; required)" },
    commands: [...ROWS, "plot", "report", "compare"],
  },
  force: {
    type: "boolean",
    help: "allow --out (and --plot) to replace an existing file",
    about: {
      write: "; also replace FILE if it exists (atomically: the old file stays until the new " +
        "one is complete and fsynced)",
    },
    commands: [...ROWS, "plot", "report", "compare"],
  },
  plot: {
    type: "string",
    value: "FILE.svg",
    help: "also draw the results as an SVG chart (see 'sciobench plot'); refused by commands " +
      "without a chart",
    commands: ROWS,
  },
  store: {
    type: "string",
    value: "DIR",
    help: "the results store: a directory of JSON lines files, one per run (default: " +
      "$SCIOBENCH_STORE)",
    about: {
      compare: "; run ids, latest and latest~K are looked up there",
      runs: "; the one listed",
    },
    aboutOf: (command) =>
      command === undefined || ROWS.includes(command as typeof ROWS[number])
        ? "; made if missing; a run whose cells all succeed is written there at its end (meta with a " +
          "run_id, columns, rows), atomically: an interrupted or failed run leaves nothing"
        : undefined,
    commands: [...ROWS, "compare", "runs"],
  },
  metric: {
    type: "string",
    list: true,
    value: "LIST",
    help: "the rate and time columns to compare (default: those the workload's table shows, " +
      "such as write_MiBps, read_MiBps, random_MiBps, random_ms, and each phase's median " +
      "latency: read_p50_us, random_p50_us, record_p50_us, batch_p50_us)",
    commands: ["compare"],
  },
  threshold: {
    type: "string",
    value: "PCT",
    default: `${COMPARE_DEFAULTS.threshold * 100}%`,
    help: "smallest change called a regression or an improvement (a significant change within " +
      "it is called small)",
    commands: ["compare"],
  },
  control: {
    type: "string",
    value: "BACKEND",
    default: COMPARE_DEFAULTS.control,
    help: "the control backend: where both runs hold it, every other backend is also compared " +
      "relative to its change in the same run, and a shift of the whole machine is named as " +
      "such; none to compare without",
    commands: ["compare"],
  },
  "fail-on": {
    type: "string",
    value: "WHAT",
    help: "regression: exit 1 when a significant regression beyond --threshold is found " +
      "(relative to the control where there is one), else 0",
    commands: ["compare"],
  },
  by: {
    type: "string",
    value: "COLUMN",
    help: "framing: compare the backends of one results file against --reference; order: each " +
      "backend measured first in its repeat against the same measured later (an order effect)",
    commands: ["compare"],
  },
  reference: {
    type: "string",
    value: "BACKEND",
    help: "with --by framing, the backend the others are compared against",
    commands: ["compare"],
  },
  command: {
    type: "string",
    value: "C",
    help: "only the runs of this command (table, records, ...)",
    commands: ["runs"],
  },
  host: {
    type: "string",
    value: "H",
    help: "only the runs on this host",
    commands: ["runs"],
  },
  fs: {
    type: "string",
    value: "T",
    help: "only the runs whose --dir was on this file system type (ext4, tmpfs, ...)",
    commands: ["runs"],
  },
  audit: {
    type: "boolean",
    help: "each row's whole audit trail (every phase's read, write, fsync and fadvise calls with " +
      "their timing, files, processes, and the clock and CPU readings) instead of its one-line " +
      "summary, in the formats whose rows keep nested values",
    aboutOf: () => `: ${orList(rowFormats().filter((f) => f.nested).map((f) => f.name))}`,
    commands: ROWS,
  },
  help: {
    type: "boolean",
    short: "h",
    help: "print this help",
    commands: COMMAND_NAMES.filter((c) => c !== "_reader"),
  },
} as const satisfies Record<string, FlagSpec>;

type Flags = typeof FLAGS;

/** The name of a flag of the table. */
export type FlagName = keyof Flags;

/** True when command `C` takes flag `F`. */
type Takes<C extends CommandName, F> = F extends { readonly commands: readonly (infer N)[] }
  ? [C] extends [N] ? true : false
  : false;

/** The parsed value of flag `F` in command `C`. */
type ValueOf<C extends CommandName, F> = F extends { readonly type: "boolean" }
  ? F extends { readonly optional: true } ? boolean | undefined : boolean
  : F extends { readonly multiple: true } ? string[] | undefined
  : F extends { readonly default: string } ? string
  : F extends { readonly default: infer D } ? C extends keyof D ? string : string | undefined
  : string | undefined;

/** The parsed flags of command `C`: one property per flag it takes, typed from the table. */
export type FlagValues<C extends CommandName> = {
  readonly [K in FlagName as Takes<C, Flags[K]> extends true ? K : never]: ValueOf<C, Flags[K]>;
};

/** The flags `command` takes, in table order, with their names. */
export function flagsOf(command: CommandName): [string, FlagSpec][] {
  return (Object.entries(FLAGS) as [string, FlagSpec][])
    .filter(([, f]) => f.commands.includes(command));
}

/** The built-in workloads: a flag all of them take, every registered workload takes too. */
const BUILT_IN_WORKLOADS: readonly CommandName[] = WORKLOADS;

/**
 * The flags of a registered workload: those every built-in workload takes, the shared flags it
 * names, and its own (given as {@link WorkloadFlag}s), in that order.
 */
export function registeredFlags(
  flags: readonly (string | WorkloadFlag)[],
): [string, FlagSpec][] {
  const shared = (Object.entries(FLAGS) as [string, FlagSpec][]).filter(([name, f]) =>
    BUILT_IN_WORKLOADS.every((c) => f.commands.includes(c)) || flags.includes(name)
  );
  for (const name of flags) {
    if (typeof name === "string" && !(name in FLAGS)) {
      throw new UsageError(`a workload names the flag --${name}, which the flag table lacks`);
    }
  }
  const own = flags.filter((f): f is WorkloadFlag => typeof f !== "string").map((
    f,
  ): [string, FlagSpec] => [f.name, { ...f, commands: [] }]);
  return [...shared, ...own];
}

/** The default of `flag` in `command`, if it has one. */
export function defaultOf(flag: FlagSpec, command: string): string | undefined {
  return typeof flag.default === "string" ? flag.default : flag.default?.[command as CommandName];
}
