/**
 * A sweep goes on past a cell that fails: the cell's row carries an `error` column with the
 * one-line reason (its numeric columns empty), the other cells still run, and the command exits 1
 * at the end ({@link CellsFailedError}). Usage errors and interrupts still stop the sweep.
 * @module
 */
import { CellsFailedError, SciobenchError, UsageError } from "../errors.ts";
import type { Row } from "../report/output.ts";

/** The column that carries a failed cell's reason (empty for cells that succeeded). */
export const ERROR_COLUMN = "error";

/** Counts the cells of a sweep and those that failed. */
export class CellFailures {
  #cells = 0;
  #failed = 0;

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
      if (!(e instanceof SciobenchError) || e instanceof UsageError) throw e;
      this.#failed++;
      return { ...identity, [ERROR_COLUMN]: e.message.split("\n")[0]! };
    }
  }

  /** Throws CellsFailedError (exit code 1) when any cell failed. */
  finish(): void {
    if (this.#failed > 0) {
      throw new CellsFailedError(
        `${this.#failed} of ${this.#cells} cells failed; their rows say why in the '${ERROR_COLUMN}' column`,
      );
    }
  }
}
