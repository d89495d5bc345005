/**
 * Progress on stderr: one updating line (cell and percent) when stderr is a terminal; plain
 * notes otherwise, so logs stay readable. Never touches stdout.
 * @module
 */

import { world } from "../mpi/world.ts";

const encoder = new TextEncoder();

function writeErr(text: string): void {
  const b = encoder.encode(text);
  let done = 0;
  while (done < b.length) done += Deno.stderr.writeSync(b.subarray(done));
}

/** An updating progress line on stderr. */
export class Progress {
  readonly #tty: boolean;
  readonly #quiet: boolean;
  readonly #ranksQuiet: boolean;
  #label = "";
  #last = 0;
  #shown = false;

  /** `quiet` silences updates (notes still print). */
  constructor(options: { quiet?: boolean } = {}) {
    // under MPI only rank 0 shows progress and notes
    this.#quiet = (options.quiet ?? false) || world().rank !== 0;
    this.#ranksQuiet = world().rank !== 0;
    this.#tty = Deno.stderr.isTerminal();
  }

  /** Starts a new item (one table cell). */
  begin(label: string): void {
    this.#label = label;
    this.#last = 0;
    if (this.#quiet) return;
    if (this.#tty) this.update(0, "");
    else writeErr(`sciobench: ${label}\n`);
  }

  /** Shows `fraction` (0..1) done and a phase word, at most every 100 ms. */
  update(fraction: number, phase: string): void {
    if (this.#quiet || !this.#tty) return;
    const now = performance.now();
    if (now - this.#last < 100 && fraction < 1) return;
    this.#last = now;
    const pct = Math.min(100, Math.floor(fraction * 100));
    writeErr(`\r\x1b[2K${this.#label} ${phase} ${pct}%`);
    this.#shown = true;
    ttyLineShown = true;
  }

  /** Prints a diagnostic line on stderr, clearing the progress line first. */
  note(text: string): void {
    if (this.#ranksQuiet) return;
    this.clear();
    writeErr(`sciobench: ${text}\n`);
  }

  /** Removes the progress line. */
  clear(): void {
    if (this.#shown) writeErr("\r\x1b[2K");
    ttyLineShown = false;
    this.#shown = false;
  }
}

let ttyLineShown = false;
let partialLine = false;

/** Writes `text` on stderr where a line may stay unfinished (scaling's stars). */
export function writeStderrPartial(text: string): void {
  if (text === "") return;
  writeErr(text);
  partialLine = !text.endsWith("\n");
}

/**
 * Ends whatever progress stderr shows (an updating line, an unfinished line of stars) so the
 * next line, such as an error, starts on a line of its own.
 */
export function clearProgressLine(): void {
  if (ttyLineShown) writeErr("\r\x1b[2K");
  else if (partialLine) writeErr("\n");
  ttyLineShown = false;
  partialLine = false;
}

/** Prints one diagnostic line on stderr, prefixed `sciobench: `. */
export function warn(text: string): void {
  if (world().rank !== 0) return;
  writeErr(`sciobench: ${text}\n`);
}
