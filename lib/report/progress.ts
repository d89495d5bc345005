/**
 * Progress on stderr. On a terminal, one updating line:
 * `cell 3/12 gsd 128 MiB N=128^2 read 87% 812 MiB/s ETA 1m20s`, ended with `interrupted` when
 * the process is stopped by a signal and erased when the run ends. Off a terminal, one
 * timestamped line per cell, so batch logs stay readable. Never touches stdout.
 * @module
 */
import { formatDuration, formatG } from "./units.ts";
import { escapeControls } from "../core/errors.ts";
import {
  diagnosticRank,
  diagnosticRanks,
  setProgressLineShown,
  writeStderr as writeErr,
} from "../core/diagnostics.ts";

/** Where a cell stands in the whole run, for `cell 3/12` and the ETA. */
export interface CellPosition {
  /** 1-based cell number. */
  readonly index: number;
  /** Cells in the run. */
  readonly count: number;
  /** Bytes each phase of the cell moves, by phase name (for MiB/s on the line). */
  readonly phaseBytes?: Readonly<Record<string, number>>;
}

/** An updating progress line on stderr. */
export class Progress {
  readonly #tty: boolean;
  readonly #quiet: boolean;
  readonly #ranksQuiet: boolean;
  #label = "";
  #cell: CellPosition | undefined;
  #last = 0;
  #shown = false;
  #phase = "";
  #phaseStart = 0;
  #runStart = performance.now();
  readonly #onUnload = () => {
    if (this.#shown) writeErr(" interrupted\n");
    this.#shown = false;
  };

  /** `quiet` silences updates (notes still print); `tty` overrides terminal detection. */
  constructor(options: { quiet?: boolean; tty?: boolean } = {}) {
    // under MPI only rank 0 shows progress and notes
    this.#quiet = (options.quiet ?? false) || diagnosticRank() !== 0;
    this.#ranksQuiet = diagnosticRank() !== 0;
    // a rank's stderr may be the MPI launcher's pseudo-terminal: plain lines there
    this.#tty = options.tty ?? (Deno.stderr.isTerminal() && diagnosticRanks() === 1);
  }

  /** Starts a new item (one cell); `cell` numbers it within the run. */
  begin(label: string, cell?: CellPosition): void {
    this.#label = escapeControls(label); // labels name files: one line, no terminal escapes
    this.#cell = cell;
    this.#last = 0;
    this.#phase = "";
    if (cell?.index === 1) this.#runStart = performance.now();
    if (this.#quiet) return;
    if (this.#tty) this.update(0, "");
    else writeErr(`${new Date().toISOString()} sciobench: ${this.#prefix()}${label}\n`);
  }

  #prefix(): string {
    return this.#cell ? `cell ${this.#cell.index}/${this.#cell.count} ` : "";
  }

  /** The ETA of the whole run, from the time spent so far and the cells done. */
  #eta(fraction: number): string {
    const cell = this.#cell;
    if (!cell) return "";
    const done = (cell.index - 1 + Math.min(1, Math.max(0, fraction)) / 2) / cell.count;
    const spent = (performance.now() - this.#runStart) / 1000;
    if (done <= 0 || spent < 1) return "";
    return ` ETA ${formatDuration((spent / done) * (1 - done))}`;
  }

  /** Shows `fraction` (0..1) done of the `phase` (a word), at most every 100 ms. */
  update(fraction: number, phase: string): void {
    if (this.#quiet || !this.#tty) return;
    const now = performance.now();
    if (phase !== this.#phase) {
      this.#phase = phase;
      this.#phaseStart = now;
    }
    if (now - this.#last < 100 && fraction < 1) return;
    this.#last = now;
    const pct = Math.min(100, Math.floor(fraction * 100));
    const seconds = (now - this.#phaseStart) / 1000;
    const bytes = this.#cell?.phaseBytes?.[phase] ?? 0;
    const rate = bytes > 0 && seconds > 0.05 && fraction > 0
      ? ` ${formatG((fraction * bytes) / 2 ** 20 / seconds, 4)} MiB/s`
      : "";
    const what = phase === "" ? "" : ` ${phase} ${pct}%`;
    const line = `${this.#prefix()}${this.#label}${what}${rate}${this.#eta(fraction)}`;
    let width = 0;
    try {
      width = Deno.consoleSize().columns;
    } catch {
      // no terminal size: the line is not cut
    }
    writeErr(`\r\x1b[2K${width > 10 ? line.slice(0, width - 1) : line}`);
    if (!this.#shown) globalThis.addEventListener("unload", this.#onUnload);
    this.#shown = true;
    setProgressLineShown(true);
  }

  /** Prints a diagnostic line on stderr, clearing the progress line first. */
  note(text: string): void {
    if (this.#ranksQuiet) return;
    this.clear();
    writeErr(`sciobench: ${escapeControls(text)}\n`);
  }

  /** Removes the progress line. */
  clear(): void {
    if (this.#shown) {
      writeErr("\r\x1b[2K");
      globalThis.removeEventListener("unload", this.#onUnload);
    }
    setProgressLineShown(false);
    this.#shown = false;
  }
}
