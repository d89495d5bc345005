/**
 * What a records run takes and gives: the element types, the (backend, byte order) targets, the
 * options of a run and one measured phase.
 * @module
 */
import type { LatencyHistogram } from "../../report/histogram.ts";
import type { DType, EndianOption } from "../../framings/types.ts";
import type { OptionValues } from "../../framings/options.ts";
import type { Backend, FsyncPolicy, MpiIoRun, QueueSpec } from "../../backends/backend.ts";
import type { Progress } from "../../report/progress.ts";
import type { PhaseSample } from "../../sys/meter.ts";
import type { Transfer } from "../../io/transfer.ts";

/** Element types the workload writes: every number type (the seed wrote integers). */
export type RecordsType = Exclude<DType, "char">;

/** One (backend, byte order) pair to measure. */
export interface RecordsTarget {
  /** The backend. */
  readonly backend: Backend;
  /** Byte order as requested (`big`, `little` or `native`). */
  readonly endian: EndianOption;
}

/** What to measure. */
export interface RecordsOptions {
  /** Backends with byte orders, in measuring order (see recordsTargets in targets.ts). */
  readonly targets: readonly RecordsTarget[];
  /** Shape: records first, then the shape of one record (the seed: 2000 x 300 x 500). */
  readonly shape: readonly number[];
  /** Element type. */
  readonly dtype: RecordsType;
  /** Number of repeats. */
  readonly repeat: number;
  /** Parent of the scratch directory (default: the current directory). */
  readonly dir?: string;
  /** Data seed. */
  readonly seed: number;
  /** Each backend's options (netCDF variant, fill ...), by backend name. */
  readonly backendOptions?: ReadonlyMap<string, OptionValues>;
  /** Progress and notes on stderr. */
  readonly progress?: Progress;
  /** Under MPI, rank r reads the file of rank (r + reorder) mod ranks (default 0: its own). */
  readonly reorder?: number;
  /** When the write phase fsyncs (default `end`). */
  readonly fsync?: FsyncPolicy;
  /** `--bs` / `--direct` (native framings; peers refuse). With O_DIRECT no cache drop is made. */
  readonly transfer?: Transfer;
  /**
   * `--iodepth` / `--engine` (native framings; peers refuse): up to the depth's requests in flight,
   * the read phase's record reads, and the write phase's transfers of a file of its own (not
   * `--layout shared`); undefined: one at a time, as without them.
   */
  readonly queue?: QueueSpec;
  /**
   * Under MPI, `per-rank` (the default: a file per rank) or `shared` (one file per target, rank
   * r writing records r x R .. (r + 1) x R - 1: lib/mpi/shared.ts, or the backend's MPI-IO).
   */
  readonly layout?: "per-rank" | "shared";
  /**
   * Under `--layout shared`, each rank's records in this many interleaved blocks of the file
   * (`--segments`, IOR's `-s`; default 1: one block per rank).
   */
  readonly segments?: number;
  /**
   * Under MPI, how the backends that go through MPI-IO (mpiio) read and write: collective or
   * independent calls, and the hints of every open (`--collective`, `--hint`).
   */
  readonly mpiIo?: MpiIoRun;
  /** Called on every rank after each write phase with the file written and its backend (tests). */
  readonly afterWrite?: (path: string, backend: string) => void;
}

/** One measured phase of one target and repeat. */
export interface RecordsRun {
  /** Backend name. */
  readonly framing: string;
  /** Byte order as requested. */
  readonly endian: EndianOption;
  /** `write` or `read`. */
  readonly phase: "write" | "read";
  /** 1-based repeat. */
  readonly repeat: number;
  /** The target's place among the targets of its repeat, from 1. */
  readonly order?: number;
  /** Payload bytes (records x record bytes). */
  readonly bytes: number;
  /** File size after writing. */
  readonly fileBytes: number;
  /** Fraction of the file still cached after the drop (read phase; 0 for write). */
  readonly residentAfterDrop: number;
  /** The write's fsync policy (the read rows carry the policy their file was written with). */
  readonly fsync: FsyncPolicy;
  /** Time and CPU. */
  readonly sample: PhaseSample;
  /**
   * Read phase from a dropped cache: whether its cold read can be trusted (`cold_ok`); absent
   * for writes and O_DIRECT reads.
   */
  readonly coldOk?: boolean;
  /** With `coldOk` false: why (`cold_why`, `read: device bytes`); "" otherwise. */
  readonly coldWhy?: string;
  /** Why the phase failed (its numbers are then empty). */
  readonly error?: string;
  /** Each record's write or read latency in this phase, ns (absent when the phase failed). */
  readonly latency?: LatencyHistogram;
  /** The engine and depth of the phase's requests; absent: one at a time (psync). */
  readonly queue?: QueueSpec;
}
