/**
 * The GSD table (gsd's scripts/benchmark-hoomd.py), generalised over backends and made honest
 * without root: per (size, N) write all frames with fsync, drop the file from the page cache,
 * time the open, drop again (an f77 or IEEEIO open scans the file), read a 0.25 GiB sample in
 * order, drop again, read it in a seeded random order;
 * every frame read is checked against what was written.
 * @module
 */
import { UsageError, VerifyError } from "../core/errors.ts";
import {
  type ByteOrder,
  type Chunk,
  type ChunkLayout,
  DTYPE_SIZE,
  type EndianOption,
  type Frame,
} from "../framings/types.ts";
import { type CacheDrop, type ColdEvidence, dropCache, residency } from "../io/cache.ts";
import { FileHandle } from "../io/file.ts";
import { signalPoint, withScratchDir } from "../io/scratch.ts";
import { writeFrames } from "../backends/write.ts";
import type { Backend, FrameSource, FsyncPolicy } from "../backends/backend.ts";
import { type AggregateSpec, rankRows } from "../mpi/aggregate.ts";
import { fencedPhase, injectedFailure, rankScratchShare } from "../mpi/phase.ts";
import { planSharedFile, sharedPart, writeSharedFrames } from "../mpi/shared.ts";
import { world } from "../mpi/world.ts";
import { col, type ColumnDoc, STAT_COLUMNS } from "../report/human.ts";
import type { Row } from "../report/row.ts";
import type { Progress } from "../report/progress.ts";
import { audited } from "../sys/audit.ts";
import { formatCount, formatSize } from "../report/units.ts";
import { startMeter, warmUpOpens } from "../sys/meter.ts";
import { statfs } from "../sys/libc.ts";
import { fioHugePagesRefused, type FioResult, FioSession } from "../baselines/fio.ts";
import { CellFailures, sharedFraming } from "./cells.ts";
import {
  cacheState,
  coldOkDoc,
  ColdReads,
  readOverlap,
  TRANSFER_COLUMN_DOCS,
  transferColumns,
} from "./transfer.ts";
import {
  alignedBytes,
  DEFAULT_DIRECT_BS,
  fileSystemAlignment,
  type Transfer,
  transferAlignment,
} from "../io/transfer.ts";
import { checkTransfer } from "../backends/engine.ts";
import {
  type ExpectedFrames,
  fillRandom,
  prepareVerified,
  readVerifiedFrames,
  Rng,
  shuffledOrder,
  type VerifyTime,
} from "./pattern.ts";
import { copySwapped, NATIVE_ORDER } from "../bytes/byteswap.ts";
import { chunkBytes } from "../framings/kit.ts";

/** Bytes of one frame per particle: position (3 x float32) + orientation (4 x float32). */
export const BYTES_PER_PARTICLE = 28;

/** The read sample gsd's benchmark targets: 0.25 GiB. */
export const READ_SAMPLE_BYTES = 2 ** 28;

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

/** Frame counts and byte counts of one table cell, as benchmark-hoomd.py computes them. */
export interface TableSizing {
  /** Frames written: ceil(size / (28 N)). */
  readonly frames: number;
  /** Position and orientation bytes written: frames x 28 N. */
  readonly dataBytes: number;
  /** Frames read in each read phase: the 0.25 GiB sample, capped at all frames. */
  readonly readFrames: number;
  /** Bytes of data read in each read phase. */
  readonly readBytes: number;
}

/** Sizes a cell: target file size in bytes and N particles, with a read sample of `sampleBytes`. */
export function tableSizing(size: number, n: number, sampleBytes = READ_SAMPLE_BYTES): TableSizing {
  const perFrame = BYTES_PER_PARTICLE * n;
  const frames = Math.ceil(size / perFrame);
  const dataBytes = frames * perFrame;
  let readFrames = Math.floor((frames * sampleBytes) / dataBytes);
  if (readFrames > frames) readFrames = frames;
  if (readFrames < 1) readFrames = 1;
  return { frames, dataBytes, readFrames, readBytes: readFrames * perFrame };
}

/** Settings of a table run. */
export interface TableOptions {
  /** Backends to measure, each a row per cell. */
  readonly backends: readonly Backend[];
  /** Target file sizes, bytes. */
  readonly sizes: readonly number[];
  /** Particle counts N. */
  readonly ns: readonly number[];
  /** Parent directory for the scratch files (default: current directory). */
  readonly dir?: string;
  /** Repeats of each cell. */
  readonly repeat: number;
  /** Seed of the data and of the random read order. */
  readonly seed: number;
  /** Write the file once untimed before the timed write, as gsd does. */
  readonly warmup: boolean;
  /** Target bytes of each read sample (default 0.25 GiB). */
  readonly sampleBytes?: number;
  /** Byte order for backends that offer a choice. */
  readonly endian?: "native" | "big" | "little";
  /** Byte order per backend name (`--endian hdf4=big`); overrides `endian`. */
  readonly endianOf?: (framing: string) => EndianOption;
  /** Progress and notes on stderr. */
  readonly progress: Progress;
  /**
   * Page-cache state before each read phase: `cold` (the default) drops the file, `warm` reads
   * it once instead, so the phases measure the framing's code at memory speed.
   */
  readonly cache?: "cold" | "warm";
  /** When the write phase fsyncs (default `end`: once, after the last frame and the trailer). */
  readonly fsync?: FsyncPolicy;
  /**
   * `fio`: beside each of the cell's timed phases, fio measures the same phase with the same file
   * size, transfer size, direct flag, fsync policy and cache state in the same directory
   * (lib/peers/fio.ts), for the efficiency columns.
   */
  readonly baseline?: "fio";
  /** Internal (`--baseline fio`): another tool's phases, each run beside the matching one of ours. */
  readonly beside?: PhaseBeside;
  /** Program peers measured after the backends in each (size, N): `python-gsd`, `python-gsd-fl`. */
  readonly peers?: readonly Backend[];
  /** Debug hook: called between the write and the read phases with the file's path. */
  readonly afterWrite?: (path: string) => void;
  /**
   * Under MPI, rank r reads the file rank (r + reorder) mod ranks wrote (IOR's -C), so a node
   * does not read back what it wrote; 0 (the default) reads its own.
   */
  readonly reorder?: number;
  /** Under MPI, print one row per rank after each aggregate row. */
  readonly perRank?: boolean;
  /**
   * Under MPI, `per-rank` (the default: a file per rank) or `shared` (one file, each rank its own
   * frames at offsets known in advance; raw, f77, netcdf and gsd only, lib/mpi/shared.ts).
   */
  readonly layout?: "per-rank" | "shared";
  /**
   * `--bs` / `--direct`: the size of each system call and O_DIRECT (native framings; peers
   * refuse). With O_DIRECT the reads need no cache drop and the rows say cache=direct.
   */
  readonly transfer?: Transfer;
  /**
   * `--overlap` (true) / `--no-overlap` (false): in the read phases of native framings, frame
   * k + 1's read is in flight while frame k is verified (lib/backends/overlap.ts): through Linux
   * native AIO with O_DIRECT, else on another thread. Default: on with O_DIRECT where AIO works
   * (a line on the progress notes says when it does not), off without (see readOverlap).
   */
  readonly overlap?: boolean;
}

/** The timed phases of a cell another tool can run beside ours. */
export type BesidePhase = "write" | "read" | "random";

/** Another tool's timed phases, each run just before or just after the matching one of ours. */
export interface PhaseBeside {
  /** Runs the other tool's `phase` (its write comes first). */
  run(phase: BesidePhase): Promise<void>;
  /** True: its phase runs just before ours; false: just after. */
  readonly first: boolean;
}

/** Runs `ours` with `beside`'s matching phase just before or just after it (none: ours alone). */
async function pairedPhase<T>(
  beside: PhaseBeside | undefined,
  phase: BesidePhase,
  ours: () => Promise<T>,
): Promise<T> {
  if (beside?.first) await beside.run(phase);
  const result = await ours();
  if (beside !== undefined && !beside.first) await beside.run(phase);
  return result;
}

/**
 * A Float32Array of `count` elements whose first byte sits on a 64-byte cache line: a verified
 * read compares the frame read with it (memcmp of two 448 KiB arrays: 10 us with both on a line,
 * 14 us with one 16 bytes off, on the Intel Xeon of 2026-12).
 */
function lineAlignedFloats(count: number): Float32Array {
  const bytes = alignedBytes(count * 4, 64);
  return new Float32Array(bytes.buffer, bytes.byteOffset, count);
}

/** The seeded frames of the table workload for N particles; `frame(i)` stamps and returns frame i. */
export class TableFrames implements ExpectedFrames {
  /** Particles per frame. */
  readonly n: number;
  readonly #position: Float32Array;
  readonly #orientation: Float32Array;
  readonly #chunks: readonly Chunk[];
  /** The chunks' bytes in the other byte order (made at the first `bytesIn` asking for it). */
  #swapped: readonly Uint8Array[] | undefined;

  /** `rank` (an MPI rank, default 0) makes each rank's data differ; rank 0's is the serial data. */
  constructor(n: number, seed: number, rank = 0) {
    this.n = n;
    const rng = new Rng(seed ^ Math.imul(n, 0x27d4eb2d) ^ Math.imul(rank, 0x9e3779b1));
    this.#position = fillRandom(lineAlignedFloats(3 * n), rng);
    this.#orientation = fillRandom(lineAlignedFloats(4 * n), rng);
    this.#chunks = [
      { name: "particles/position", dtype: "float32", shape: [n, 3], data: this.#position },
      { name: "particles/orientation", dtype: "float32", shape: [n, 4], data: this.#orientation },
    ];
  }

  /** What every frame holds, for readers of untyped formats. */
  get layout(): readonly ChunkLayout[] {
    return this.#chunks.map(({ name, dtype, shape }) => ({ name, dtype, shape }));
  }

  /** Frame i: step 10 i, element [0][0] of both arrays set to i (the arrays are shared and reused). */
  frame(i: number): Frame {
    this.#position[0] = i;
    this.#orientation[0] = i;
    return { step: 10 * i, chunks: this.#chunks };
  }

  /**
   * Frame i's chunk bytes with the elements in `order`: the native arrays, or copies swapped once
   * (at the first call) whose stamp, element [0][0], is rewritten in that order for each frame.
   */
  bytesIn(i: number, order: ByteOrder): readonly Uint8Array[] {
    if (order === NATIVE_ORDER) return this.frame(i).chunks.map(chunkBytes);
    if (this.#swapped === undefined) {
      this.#swapped = this.#chunks.map((c) => {
        const bytes = new Uint8Array(c.data.byteLength);
        copySwapped(chunkBytes(c), bytes, DTYPE_SIZE[c.dtype]);
        return bytes;
      });
    }
    for (const bytes of this.#swapped) {
      new DataView(bytes.buffer).setFloat32(0, i, order === "little");
    }
    return this.#swapped;
  }
}

/**
 * Drops `path` from the page cache (cold), reads it through once (warm), or (direct: the reads
 * bypass the cache) only measures the residency; returns it.
 */
function prepareCache(path: string, cache: "cold" | "warm" | "direct"): CacheDrop {
  if (cache === "cold") return dropCache(path);
  if (cache === "direct") return { seconds: 0, residentAfter: residency(path) };
  const t0 = performance.now();
  const f = FileHandle.open(path, "read");
  try {
    const buf = new Uint8Array(4 << 20);
    for (let at = 0; at < f.size; at += buf.length) f.readInto(buf, at);
  } finally {
    f.close();
  }
  return { seconds: (performance.now() - t0) / 1000, residentAfter: residency(path) };
}

async function readPhase(
  source: FrameSource,
  order: ArrayLike<number>,
  frames: TableFrames,
  progress: Progress,
  phase: string,
  overlap: boolean,
) {
  // the expected bytes in the file's byte order exist before the clock starts, as the native
  // arrays raw is compared with do (big-endian netCDF: a swapped copy of a frame)
  prepareVerified(source, frames);
  const spent: VerifyTime = { seconds: 0 };
  const meter = startMeter(phase);
  const n = order.length;
  // --overlap: the read of frame k + 1 is in flight while frame k is verified (native framings)
  const after = (k: number) => {
    if ((k & 63) !== 0) return undefined;
    progress.update(k / n, phase);
    return signalPoint();
  };
  await readVerifiedFrames(source, order, frames, after, overlap, spent);
  return { ...meter.stop(), verifyS: spent.seconds };
}

/**
 * Measures one cell (backend, size, N, repeat 1..K) and returns this rank's row. Under MPI every
 * phase is fenced (lib/mpi/phase.ts), each rank writes its own file in a scratch directory shared
 * by all ranks, and reads the file of rank (rank + reorder) mod ranks.
 */
export async function runTableCell(
  backend: Backend,
  size: number,
  n: number,
  repeat: number,
  options: TableOptions,
): Promise<Row> {
  const w = world();
  const sizing = tableSizing(size, n, options.sampleBytes);
  const readRank = (w.rank + (options.reorder ?? 0)) % w.size;
  const frames = new TableFrames(n, options.seed, w.rank);
  const readFrames = readRank === w.rank ? frames : new TableFrames(n, options.seed, readRank);
  const p = options.progress;
  checkTransfer(backend, options.transfer);
  const cache = cacheState(options.transfer, options.cache);
  // --layout shared: one file, rank r's frames are r x frames .. (r + 1) x frames - 1
  const shared = options.layout === "shared" && w.size > 1;
  if (shared && options.transfer) {
    throw new UsageError("--layout shared does not take --bs or --direct; use --layout per-rank");
  }
  const readBase = shared ? readRank * sizing.frames : 0;
  let other: { rank: number; frames: TableFrames } | undefined;
  const framesOf = (rank: number): TableFrames => {
    if (rank === w.rank) return frames;
    if (rank === readRank) return readFrames;
    if (other?.rank !== rank) other = { rank, frames: new TableFrames(n, options.seed, rank) };
    return other.frames;
  };
  const globalFrame = (g: number) => framesOf(Math.floor(g / sizing.frames)).frame(g);
  return await withScratchDir(options.dir, async (dir) => {
    const fs = statfs(dir);
    injectedFailure("unfenced", w.rank); // test hook: a failure no other rank hears of
    const fileOf = (rank: number) =>
      w.size === 1
        ? `${dir}/table.${backend.name}`
        : `${dir}/table.${backend.name}.${shared ? "shared" : `r${rank}`}`;
    const path = fileOf(w.rank);
    const readPath = fileOf(readRank);
    const fsync = options.fsync ?? "end";
    const sink = {
      create: "truncate",
      endian: options.endian,
      fsync,
      transfer: options.transfer,
    } as const;
    // the shared file fsyncs at its end or not at all (the command refuses --fsync each)
    const sharedSink = { endian: options.endian, fsync: fsync !== "none" };
    const plan = shared
      ? await fencedPhase(
        "plan",
        () =>
          planSharedFile(
            sharedFraming(backend),
            sharedSink,
            sharedPart(sizing.frames),
            globalFrame,
          ),
      )
      : undefined;
    const write = (phase: string): Promise<number> => {
      const progress = (i: number) => {
        if ((i & 63) === 0) p.update(i / sizing.frames, phase);
      };
      if (plan) {
        return writeSharedFrames(
          sharedFraming(backend),
          path,
          sharedSink,
          plan,
          globalFrame,
          progress,
        );
      }
      return writeFrames(backend, path, sink, sizing.frames, (i) => frames.frame(i), progress);
    };
    const writer = !shared || w.rank === 0;
    if (options.warmup) {
      await fencedPhase("warm-up", async () => {
        await write("warm-up");
        if (writer) Deno.removeSync(path);
      });
    }
    const { w: wr, syncS, fileBytes } = await pairedPhase(
      options.beside,
      "write",
      () =>
        fencedPhase("write", async () => {
          const wm = startMeter("write");
          const syncS = await write("write");
          const w = wm.stop();
          // a shared file is counted once, on rank 0, so the sum over ranks is its size
          return { w, syncS, fileBytes: writer ? Deno.statSync(path).size : 0 };
        }),
    );
    options.afterWrite?.(path);

    // The first open of the file in the process, closed at once, before the drop: V8 compiles a
    // function at its first call (most of a first gsd open's 1 ms; python3-gsd's gsd_open is C,
    // compiled ahead of time); it is kept as open_first_ms. Untimed opens follow (V8 optimises
    // after some calls), so the open timed below is the reader's optimised code, as the
    // python3-gsd peer's is (lib/peers/gsd_peer_py.ts does the same).
    const openClose = () =>
      backend.openReader(readPath, { layout: readFrames.layout, transfer: options.transfer })
        .close();
    const first = await fencedPhase("first open", () => {
      const fm = startMeter("first open");
      openClose();
      const m = fm.stop();
      warmUpOpens(openClose);
      return m;
    });
    const drop1 = await fencedPhase("drop", () => prepareCache(readPath, cache));
    const { o, source } = await fencedPhase("open", () => {
      const om = startMeter("open");
      const source = backend.openReader(readPath, {
        layout: readFrames.layout,
        transfer: options.transfer,
      });
      const o = om.stop();
      const written = shared ? sizing.frames * w.size : sizing.frames;
      if (source.frameCount !== written) {
        source.close();
        throw new VerifyError(
          `${readPath}: ${source.frameCount} frames read back, ${written} written`,
        );
      }
      return { o, source };
    });
    // Opening f77 and IEEEIO files scans every record marker, which caches the file: a cold read
    // phase starts from a second drop (untimed), so it reads from the device like the others.
    const dropOpen = cache === "cold"
      ? await fencedPhase("drop", () => prepareCache(readPath, cache))
      : undefined;
    try {
      const seq = Uint32Array.from({ length: sizing.readFrames }, (_, i) => readBase + i);
      const overlap = readOverlap(options.transfer, options.overlap).mode !== "none";
      const r = await pairedPhase(
        options.beside,
        "read",
        () => fencedPhase("read", () => readPhase(source, seq, readFrames, p, "read", overlap)),
      );
      const drop2 = await fencedPhase("drop", () => prepareCache(readPath, cache));
      const order = shuffledOrder(
        sizing.frames,
        sizing.readFrames,
        new Rng(options.seed + repeat),
      ).map((i) => readBase + i);
      const x = await pairedPhase(
        options.beside,
        "random",
        () =>
          fencedPhase("random", () => readPhase(source, order, readFrames, p, "random", overlap)),
      );
      p.clear();
      const mib = 2 ** 20;
      return {
        framing: backend.name,
        size_bytes: size,
        N: n,
        open_ms: o.wallS * 1000,
        write_MiBps: sizing.dataBytes / mib / wr.wallS,
        read_MiBps: sizing.readBytes / mib / r.wallS,
        random_MiBps: sizing.readBytes / mib / x.wallS,
        random_ms: (x.wallS / sizing.readFrames) * 1000,
        frames: sizing.frames,
        file_bytes: fileBytes,
        repeat,
        write_s: wr.wallS,
        write_user_s: wr.userS,
        write_sys_s: wr.sysS,
        read_user_s: r.userS,
        read_sys_s: r.sysS,
        write_dev_bytes: wr.devWriteBytes,
        read_dev_bytes: r.devReadBytes,
        resident_after_drop: drop1.residentAfter,
        fs_type: fs.typeName,
        data_bytes: sizing.dataBytes,
        read_frames: sizing.readFrames,
        read_bytes: sizing.readBytes,
        read_s: r.wallS,
        random_s: x.wallS,
        random_user_s: x.userS,
        random_sys_s: x.sysS,
        random_dev_bytes: x.devReadBytes,
        drop_s: drop1.seconds + (dropOpen?.seconds ?? 0) + drop2.seconds,
        write_user_ticks: wr.userTicks,
        write_sys_ticks: wr.sysTicks,
        clk_tck: wr.clkTck,
        seed: options.seed,
        write_sync_s: syncS,
        read_user_ticks: r.userTicks,
        read_sys_ticks: r.sysTicks,
        random_user_ticks: x.userTicks,
        random_sys_ticks: x.sysTicks,
        cache,
        fsync,
        ...transferColumns(options.transfer),
        open_dev_bytes: o.devReadBytes,
        open_first_ms: first.wallS * 1000,
        read_verify_s: r.verifyS,
        random_verify_s: x.verifyS,
        ...(w.size > 1 ? { "write_path": path, "read_path": readPath } : {}),
        stat: "run",
        error: "",
      };
    } finally {
      source.close();
    }
  }, rankScratchShare());
}

/**
 * What a table row shows about its cold reads (`cold_ok`): its residency after the drop, the
 * bytes both read phases read and fetched from the device, and the file system (`fsType`, statfs
 * f_type).
 */
export function tableColdEvidence(row: Row, fsType: number): ColdEvidence {
  return {
    fsType,
    residentAfterDrop: Number(row.resident_after_drop),
    readBytes: 2 * Number(row.read_bytes),
    deviceReadBytes: Number(row.read_dev_bytes) + Number(row.random_dev_bytes),
  };
}

/** What `--baseline fio` needs of a cell before it is measured. */
interface FioBeside {
  readonly framing: string;
  readonly dataBytes: number;
  readonly readBytes: number;
  readonly repeat: number;
}

/**
 * fio's block sizes for a cell, bytes: each as our own calls of that phase are. `--bs` sets both;
 * else fio writes one frame per call (ours: a call per chunk) or, with --direct, 4 MiB (our staged
 * writes, at most the file), and reads one frame per call (with --direct rounded up to the
 * alignment of its file, FioSession: ours read the aligned blocks covering each frame).
 */
function fioBlocks(
  n: number,
  dataBytes: number,
  options: TableOptions,
): { write: number; read: number } {
  const t = options.transfer;
  // --bs: every call of ours is bs (reads past the frame asked); readAhead false: --direct alone
  if (t && t.bs > 0 && (t.readAhead ?? true)) return { write: t.bs, read: t.bs };
  const frame = BYTES_PER_PARTICLE * n;
  if (!(t?.direct ?? false)) return { write: frame, read: frame };
  // fio's block is at most its file (ours is then one padded call); 4096 is a multiple of any
  // direct-I/O alignment of a file system with 4 KiB blocks
  const write = Math.min(DEFAULT_DIRECT_BS, Math.max(4096, Math.floor(dataBytes / 4096) * 4096));
  return { write, read: frame };
}

/**
 * fio's session beside a cell (`--baseline fio`): the same file size, block size, direct flag,
 * fsync policy and cache state, its file in `dir` (a scratch directory of its own).
 */
function fioSession(
  dir: string,
  cell: FioBeside,
  n: number,
  options: TableOptions,
  note: (text: string) => void,
): FioSession {
  const cache = cacheState(options.transfer, options.cache);
  const blocks = fioBlocks(n, cell.dataBytes, options);
  const direct = options.transfer?.direct ?? false;
  const frameReads = direct && !(options.transfer?.readAhead ?? true);
  let hugePages = false;
  if (direct && (options.transfer?.hugePages ?? true)) {
    // fio's read block may be rounded up to a page of alignment: a page more is asked for
    const refused = fioHugePagesRefused(Math.max(blocks.write, blocks.read + 4096));
    if (refused === null) hugePages = true;
    else {
      note(
        `--baseline fio: fio's buffers are 4 KiB pages (malloc; ${refused}), ours 2 MiB huge ` +
          "pages: efficiency_* compares the two as they are; --no-huge-pages makes ours 4 KiB " +
          "pages too",
      );
    }
  }
  return new FioSession(
    {
      path: `${dir}/fio.${cell.framing}`,
      fileBytes: cell.dataBytes,
      readBytes: cell.readBytes,
      blockBytes: blocks.write,
      readBlockBytes: blocks.read,
      direct,
      fsync: options.fsync ?? "end",
      seed: options.seed + cell.repeat,
      cold: cache === "cold",
      hugePages,
    },
    (path) => prepareCache(path, cache),
    frameReads ? (path) => directReadAlignment(path) : undefined,
  );
}

/**
 * The alignment of our O_DIRECT frame reads of `path`, bytes (lib/io/transfer.ts transferAlignment:
 * pages, or the file system's larger alignment): fio's read block is rounded up to it, so that
 * its calls are the size of ours (a frame's covering blocks).
 */
function directReadAlignment(path: string): number {
  return transferAlignment(fileSystemAlignment(path), DEFAULT_DIRECT_BS).align;
}

/** Adds the fio_* and efficiency_* columns of `fio` to a measured row (amended in place). */
function addFioColumns(row: Row, fio: FioResult): void {
  row.fio_write_MiBps = fio.writeMiBps;
  row.fio_read_MiBps = fio.readMiBps;
  row.fio_random_MiBps = fio.randomMiBps;
  row.efficiency_write = Number(row.write_MiBps) / fio.writeMiBps;
  row.efficiency_read = Number(row.read_MiBps) / fio.readMiBps;
  row.efficiency_random = Number(row.random_MiBps) / fio.randomMiBps;
  row.fio_bs_bytes = fio.readBlockBytes;
  row.fio_write_bs_bytes = fio.writeBlockBytes;
  row.fio_huge_pages = fio.hugePages ? "true" : "false";
}

/**
 * Whether fio's phases run just before ours in `repeat` (1-based): just after ours in odd
 * repeats, just before in even ones (ABBA), so a storage that slows down or speeds up over a
 * run favours neither side in the median.
 */
export function fioFirst(repeat: number): boolean {
  return repeat % 2 === 0;
}

/**
 * Runs every cell: for each size, N, backend and repeat, in the order gsd's table lists them;
 * hands each row to `onRow` as it is measured and returns them all. A cell that fails gives a
 * row with an `error` column and the sweep goes on; CellsFailedError (exit code 1) at the end
 * when any did.
 */
export async function runTable(
  options: TableOptions,
  onRow: (row: Row) => void = () => {},
): Promise<Row[]> {
  const rows: Row[] = [];
  const emit = (row: Row) => {
    rows.push(row);
    onRow(row);
  };
  const cells = new CellFailures();
  const noted = new Set<string>();
  const noteOnce = (text: string) => {
    if (noted.has(text)) return;
    noted.add(text);
    options.progress.note(text);
  };
  // Under MPI a failing rank stops the run (its ranks meet in collective calls per cell).
  const cell = (
    framing: string,
    size: number,
    n: number,
    rep: number,
    run: () => Promise<Row>,
  ): Promise<Row> =>
    world().size > 1 ? audited(run) : cells.run(
      {
        framing,
        size_bytes: size,
        N: n,
        repeat: rep,
        seed: options.seed,
        cache: cacheState(options.transfer, options.cache),
        fsync: options.fsync ?? "end",
        ...transferColumns(options.transfer),
        stat: "run",
      },
      () => audited(run),
    );
  const all = [...options.backends, ...options.peers ?? []];
  for (const b of all) checkTransfer(b, options.transfer);
  const fsType = statfs(options.dir ?? ".").type;
  const cold = new ColdReads(options.dir ?? ".", (text) => options.progress.note(text));
  if (options.overlap === undefined && all.some((b) => b.kind === "native")) {
    const note = readOverlap(options.transfer, undefined).note;
    if (note !== undefined) options.progress.note(note);
  }
  const count = options.sizes.length * options.ns.length * all.length * options.repeat;
  let index = 0;
  for (const size of options.sizes) {
    for (const n of options.ns) {
      const sizing = tableSizing(size, n, options.sampleBytes);
      for (const backend of all) {
        for (let rep = 1; rep <= options.repeat; rep++) {
          index++;
          const again = options.repeat > 1 ? ` repeat ${rep}/${options.repeat}` : "";
          const measure = backend.measureTableCell;
          const beside = options.baseline === "fio" ? " (and fio beside it)" : "";
          options.progress.begin(
            `${backend.name} ${formatSize(size)} N=${formatCount(n)}${again}${beside}`,
            {
              index,
              count,
              phaseBytes: {
                "warm-up": sizing.dataBytes,
                write: sizing.dataBytes,
                read: sizing.readBytes,
                random: sizing.readBytes,
              },
            },
          );
          // A program peer measures the cell in its own process: fio's phases run all before or
          // all after it; a backend's cell runs each of fio's phases beside its own.
          const measureCell = (pairs?: PhaseBeside) =>
            cell(backend.name, size, n, rep, () =>
              measure
                ? measure({
                  size,
                  n,
                  repeat: rep,
                  dir: options.dir,
                  seed: options.seed,
                  sampleBytes: options.sampleBytes,
                  warmup: options.warmup,
                  cache: options.cache,
                })
                // this backend's byte order (`--endian hdf4=big`)
                : runTableCell(backend, size, n, rep, {
                  ...options,
                  endian: options.endianOf?.(backend.name) ?? options.endian,
                  beside: pairs,
                }));
          let fio: FioResult | string | undefined;
          let row: Row;
          if (options.baseline === "fio") {
            const fioCell = {
              framing: backend.name,
              dataBytes: sizing.dataBytes,
              readBytes: sizing.readBytes,
              repeat: rep,
            };
            [row, fio] = await withScratchDir(options.dir, async (dir) => {
              using session = fioSession(dir, fioCell, n, options, noteOnce);
              const pairs: PhaseBeside = {
                first: fioFirst(rep),
                run: (phase) => session.run(phase),
              };
              const allOf = async () => {
                for (const phase of ["write", "read", "random"] as const) await pairs.run(phase);
              };
              if (measure && pairs.first) await allOf();
              const row = await measureCell(measure ? undefined : pairs);
              if (measure && !pairs.first) await allOf();
              return [row, session.result()] as const;
            });
          } else row = await measureCell();
          if (row.error) options.progress.clear();
          else {
            cold.judge(row, String(row.cache), tableColdEvidence(row, fsType));
            if (typeof fio === "string") {
              options.progress.note(`--baseline fio: ${fio}; this row's fio columns stay empty`);
            } else if (fio !== undefined) addFioColumns(row, fio);
          }
          for (const r of rankRows(row, TABLE_AGGREGATE, options.perRank ?? false)) emit(r);
        }
      }
    }
  }
  options.progress.clear();
  cells.finish();
  return rows;
}
