/**
 * A table run's settings and the sizing of one cell (frames and bytes as gsd's
 * benchmark-hoomd.py computes them), and the hook by which another tool's phases run beside ours.
 * @module
 */
import type { EndianOption } from "../../framings/types.ts";
import type { Backend, FsyncPolicy, MpiIoRun } from "../../backends/backend.ts";
import type { Progress } from "../../report/progress.ts";
import { type Transfer } from "../../io/transfer.ts";
import type { QueueSpec } from "../../backends/backend.ts";

/** Bytes of one frame per particle: position (3 x float32) + orientation (4 x float32). */
export const BYTES_PER_PARTICLE = 28;

/** The read sample gsd's benchmark targets: 0.25 GiB. */
export const READ_SAMPLE_BYTES = 2 ** 28;

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
   * (lib/baselines/fio.ts), for the efficiency columns.
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
   * frames at offsets known in advance; raw, f77, netcdf and gsd through lib/mpi/shared.ts,
   * mpiio through MPI-IO).
   */
  readonly layout?: "per-rank" | "shared";
  /**
   * Under `--layout shared`, each rank's frames in this many interleaved blocks of the file
   * (`--segments`, IOR's `-s`; default 1: one block per rank).
   */
  readonly segments?: number;
  /**
   * Under MPI, how the backends that go through MPI-IO (mpiio) read and write: collective or
   * independent calls, and the hints of every open (`--collective`, `--hint`).
   */
  readonly mpiIo?: MpiIoRun;
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
  /**
   * `--iodepth` / `--engine`: the read phases of native framings keep up to the depth's requests
   * in flight through the engine (lib/sys/queue.ts), and so does their write phase (each transfer
   * of `--bs` bytes, 4 MiB without, a request; all completed before the fsync), except into a
   * shared file under MPI; undefined: one read and one write at a time.
   */
  readonly queue?: QueueSpec;
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
