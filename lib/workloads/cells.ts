/**
 * A sweep goes on past a cell that fails: the cell's row carries an `error` column with the
 * one-line reason (its numeric columns empty), the other cells still run, and the command exits 1
 * at the end ({@link CellsFailedError}). Usage errors and interrupts still stop the sweep.
 * @module
 */
import { CellsFailedError, SciobenchError, UsageError } from "../core/errors.ts";
import type {
  Backend,
  FileLayout,
  FramePart,
  MpiIoRun,
  MpiIoSettings,
} from "../backends/backend.ts";
import { FRAMINGS } from "../backends/registry.ts";
import type { Framing } from "../framings/types.ts";
import { checkSharedLayout } from "../backends/capabilities.ts";
import type { Row } from "../report/row.ts";
import type { PhaseSample } from "../sys/meter.ts";

/** The sample of a phase that failed: all zeros (its row leaves the numbers empty). */
export const EMPTY_SAMPLE: PhaseSample = {
  wallS: 0,
  userS: 0,
  sysS: 0,
  userTicks: 0,
  sysTicks: 0,
  clkTck: 0,
  devReadBytes: 0,
  devWriteBytes: 0,
};

/** The column that carries a failed cell's reason (empty for cells that succeeded). */
export const ERROR_COLUMN = "error";

/**
 * The one-line reason of a cell error (an I/O, library or verification failure), or null for
 * errors that must stop the sweep (usage errors, bugs).
 */
export function cellError(e: unknown): string | null {
  if (!(e instanceof SciobenchError) || e instanceof UsageError) return null;
  return e.message.split("\n")[0]!;
}

/** Counts the cells of a sweep and those that failed. */
export class CellFailures {
  #cells = 0;
  #failed = 0;
  #first: string | undefined;

  /** Cells that failed so far. */
  get failed(): number {
    return this.#failed;
  }

  /**
   * Runs one cell: its rows on success; on a cell error (an I/O, library or verification failure)
   * one row of `identity` plus `error`. Other errors (usage, bugs) propagate.
   */
  async run(identity: Row, cell: () => Promise<Row>): Promise<Row> {
    this.#cells++;
    try {
      return await cell();
    } catch (e) {
      const why = cellError(e);
      if (why === null) throw e;
      this.#failed++;
      this.#first ??= `${String(identity["framing"] ?? "")}: ${why}`;
      return { ...identity, [ERROR_COLUMN]: why };
    }
  }

  /** Throws CellsFailedError (exit code 1) when any cell failed. */
  finish(): void {
    if (this.#failed > 0) {
      throw new CellsFailedError(
        `${this.#failed} of ${this.#cells} cells failed (first: ${this.#first}); each row's '${ERROR_COLUMN}' column says why`,
      );
    }
  }
}

/**
 * What `backend` is told at an open under MPI when it goes through MPI-IO: the run's MPI-IO,
 * the layout, and for a file written this rank's `part` of the frames (of the shared file, or
 * {@link ownFrames} of its own); undefined for a backend that does not use MPI-IO (or a run
 * without it).
 */
export function mpiIoSettings(
  backend: Backend,
  run: MpiIoRun | undefined,
  layout: FileLayout,
  part?: FramePart,
): MpiIoSettings | undefined {
  if (backend.mpiIo === undefined || run === undefined) return undefined;
  return part === undefined ? { ...run, layout } : { ...run, layout, part };
}

/** The part of a rank's own file (`per-rank`) of `count` frames: all of them. */
export function ownFrames(count: number): FramePart {
  return { first: 0, count, total: count, segments: 1, frameOf: (i) => i };
}

/**
 * The columns a row under MPI says of how its files were written: `layout`, `segments` (each
 * rank's blocks in a shared file, `--segments`; 1 for a file per rank), `collective` (empty for
 * a backend without MPI-IO) and `library` (the MPI library doing the I/O, after the backend's
 * own library and version when it has one; empty likewise).
 */
export function mpiIoColumns(
  backend: Backend,
  run: MpiIoRun | undefined,
  layout: FileLayout,
  segments = 1,
): { layout: FileLayout; segments: number; collective: boolean | ""; library: string } {
  const uses = backend.mpiIo !== undefined && run !== undefined;
  return {
    layout,
    segments: layout === "shared" ? segments : 1,
    collective: uses ? run.collective : "",
    library: uses ? (backend.mpiIo!.library?.(run.io) ?? run.io.library) : "",
  };
}

/**
 * The native framing behind `backend`, whose pure writer lays out a `--layout shared` file;
 * UsageError (one line) for a backend that cannot share one file between ranks.
 */
export function sharedFraming(backend: Backend): Framing {
  checkSharedLayout(backend);
  return FRAMINGS.find((f) => f.name === backend.name)!;
}

/**
 * The backends (or targets) of repeat `rep` (1-based) in the order they are measured: as listed in odd
 * repeats, reversed in even ones (A B, then B A), so that no backend is always measured first
 * (after a cold start) or last (after the others have filled the page cache and the disk's
 * queues).
 */
export function backendOrder<T>(all: readonly T[], rep: number): readonly T[] {
  // mutant: table-alternate-order
  return rep % 2 === 1 ? all : [...all].reverse();
}
