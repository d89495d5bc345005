/**
 * Diagnostics on stderr: one-line warnings and the bookkeeping that keeps them off a progress
 * line. Every layer may warn; under MPI only rank 0 speaks, so the rank is told here once, when
 * the MPI world starts ({@link setDiagnosticRank}), and nothing here reads MPI itself.
 * @module
 */
import { escapeControls } from "./errors.ts";

const encoder = new TextEncoder();

let rank = 0;
let ranks = 1;
let ttyLineShown = false;
let partialLine = false;

/** Tells diagnostics this process's MPI rank and the job's rank count (0 and 1 without MPI). */
export function setDiagnosticRank(processRank: number, size: number): void {
  rank = processRank;
  ranks = size;
}

/** This process's MPI rank as told by {@link setDiagnosticRank} (0 without MPI). */
export function diagnosticRank(): number {
  return rank;
}

/** The job's rank count as told by {@link setDiagnosticRank} (1 without MPI). */
export function diagnosticRanks(): number {
  return ranks;
}

/** Writes `text` to stderr whole (a short write is continued). */
export function writeStderr(text: string): void {
  const b = encoder.encode(text);
  let done = 0;
  while (done < b.length) done += Deno.stderr.writeSync(b.subarray(done));
}

/** Records whether an updating progress line is on the terminal now (set by the progress line). */
export function setProgressLineShown(shown: boolean): void {
  ttyLineShown = shown;
}

/** Writes `text` on stderr where a line may stay unfinished (scaling's stars). */
export function writeStderrPartial(text: string): void {
  if (text === "") return;
  writeStderr(text);
  partialLine = !text.endsWith("\n");
}

/**
 * Ends whatever progress stderr shows (an updating line, an unfinished line of stars) so the
 * next line, such as an error, starts on a line of its own.
 */
export function clearProgressLine(): void {
  if (ttyLineShown) writeStderr("\r\x1b[2K");
  else if (partialLine) writeStderr("\n");
  ttyLineShown = false;
  partialLine = false;
}

/**
 * Prints one diagnostic line on stderr, prefixed `sciobench: `, on rank 0 only; control
 * characters (from file names, variable names, library messages) are escaped, so the note stays
 * one line.
 */
export function warn(text: string): void {
  if (rank !== 0) return;
  writeStderr(`sciobench: ${escapeControls(text)}\n`);
}
