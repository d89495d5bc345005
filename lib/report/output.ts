/**
 * Result rows to stdout or a file: CSV with a header row (csv-stringify), one JSON document,
 * JSON lines (the run's facts first, then one object per row as it is measured), or text from a
 * renderer (the aligned human table or a seed's own layout). stdout carries only data;
 * diagnostics go to stderr. With repeats, summary rows (mean, median, stddev, min, max per cell)
 * follow the run rows. A run ended by SIGINT or SIGTERM still completes its document, marked
 * interrupted.
 * @module
 */
import { stringify } from "npm:csv-stringify@6.6.0/sync";
import { escapeControls, IoError } from "../core/errors.ts";
import { world } from "../mpi/world.ts";
import {
  checkOutputTarget,
  commitTemp,
  type OutputTarget,
  removeQuietly,
  tempPathFor,
} from "../io/atomic.ts";
import { onInterrupt } from "../io/interrupt.ts";
import { summaryRows } from "./stats.ts";
import type { Row } from "./row.ts";

/** Output formats of row-producing commands (`text` is a renderer's: human table or seed layout). */
export type RowFormat = "csv" | "json" | "jsonl" | "text";

/** Renders rows as text (the human table, or a seed's layout). */
export interface TableRenderer {
  /** Text printed before the first row (header lines). */
  head(): string;
  /** Text for one row. */
  row(row: Row): string;
  /** Text after the last row. */
  foot(): string;
}

/** Options for {@link openRowSink}. */
export interface RowSinkOptions {
  /** Output format. */
  readonly format: RowFormat;
  /** File to write instead of stdout; refused when it exists unless `force`. */
  readonly out?: string;
  /** Replace an existing `out`. */
  readonly force?: boolean;
  /** Facts about the run for the JSON document's `meta` (command, options, versions, host). */
  readonly meta?: Record<string, unknown>;
  /** Renderer for `text` format. */
  readonly table?: TableRenderer;
  /**
   * Key columns of a cell: when given, summary rows (see lib/report/stats.ts) over the run rows
   * of each cell with two or more runs are added at the end.
   */
  readonly summaryKeys?: readonly string[];
}

/** Receives rows as they are measured; `close()` completes the document. */
export interface RowSink {
  /** Adds one row (CSV, JSON lines and text rows are written at once). */
  add(row: Row): void;
  /** Finishes the output: summary rows, then the JSON document or the text footer. */
  close(options?: { interrupted?: boolean }): void;
  /** Rows added so far whose `error` is set. */
  readonly failed: number;
  /** Every row written so far (runs, then summaries once closed). */
  readonly rows: readonly Row[];
}

const encoder = new TextEncoder();

/**
 * Writes all of `bytes` to `target` (stdout or an open file named `name`). A full disk or another
 * write failure becomes one line (IoError, exit 1); a closed pipe on stdout (EPIPE, as in
 * `sciobench info F | head -1`) is rethrown as Deno.errors.BrokenPipe, which the CLI ends on
 * quietly.
 */
export function writeAll(
  target: { writeSync(p: Uint8Array): number },
  bytes: Uint8Array,
  name = "standard output",
): void {
  try {
    for (let done = 0; done < bytes.length;) done += target.writeSync(bytes.subarray(done));
  } catch (e) {
    if (e instanceof Deno.errors.BrokenPipe) throw e;
    const why = e instanceof Error ? e.message : String(e);
    const full = /os error 28|no space left/i.test(why) ? "no space left on device (ENOSPC)" : why;
    throw new IoError(`cannot write to ${name}: ${full}`);
  }
}

/** Writes `text` to stdout (see {@link writeAll}). */
export function writeStdout(text: string): void {
  writeAll(Deno.stdout, encoder.encode(text));
}

/**
 * One CSV field: control characters escaped ({@link escapeControls}: a name from a file never
 * reaches a terminal raw), then quoted as RFC 4180 when it holds a comma, a quote or a space at
 * an end.
 */
export function csvField(value: string | number | boolean): string {
  const text = escapeControls(String(value));
  return /[",]|^\s|\s$/.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
}

/**
 * JSON text of `value` (`indent` spaces, none when omitted) with DEL and the C1 controls written
 * as `\u` escapes too (JSON.stringify escapes only C0): valid JSON that cannot drive a terminal.
 */
export function jsonText(value: unknown, indent?: number): string {
  return JSON.stringify(value, null, indent).replace(
    /[\x7f-\x9f]/g,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`,
  );
}

function csvLine(values: readonly unknown[]): string {
  const cells = values.map((v) =>
    v === null || v === undefined ? "" : typeof v === "string" ? escapeControls(v) : v
  );
  return stringify([cells], {
    eof: true,
    record_delimiter: "unix",
    // booleans as the words the column docs use (csv-stringify's default is 1 and "")
    cast: { object: (v) => JSON.stringify(v), boolean: (v) => String(v) },
  });
}

/**
 * Opens a sink for rows with the given columns (CSV header order; extra row keys are ignored in
 * CSV and kept in JSON). Open it only after every option is checked: `out` is created here.
 */
export function openRowSink(columns: readonly string[], options: RowSinkOptions): RowSink {
  // under MPI only rank 0 prints (or writes --out)
  if (world().rank !== 0) return { add() {}, close() {}, failed: 0, rows: [] };
  // --out is written atomically: rows go to a temporary file beside it, which replaces the target
  // (or appears under its name) only once complete and fsynced. A failure before that leaves the
  // old file as it was and removes the temporary one; so does SIGINT or SIGTERM for CSV and text,
  // while JSON and JSON lines are completed, marked interrupted, and committed (what finished is
  // kept). A SIGKILL leaves the finished rows in the temporary file `.NAME.sciobench-tmp-PID`.
  let file: Deno.FsFile | undefined;
  let target: OutputTarget | undefined;
  let temp = "";
  if (options.out !== undefined) {
    target = checkOutputTarget(options.out, options.force ?? false, "--out");
    temp = tempPathFor(target.path);
  }
  const keepsInterrupted = options.format === "json" || options.format === "jsonl";
  // The signal handlers are in place before the temporary file exists: a SIGTERM right after it
  // appears must not meet the default action (death, with the temporary file left behind).
  const unregister = onInterrupt(() => {
    if (!keepsInterrupted) {
      discard();
      return;
    }
    sink.close({ interrupted: true });
    return options.out ? `kept the finished rows in ${options.out}` : undefined;
  });
  if (temp) {
    try {
      file = Deno.openSync(temp, { write: true, createNew: true });
    } catch (e) {
      unregister();
      throw new IoError(
        `cannot write ${options.out}: ${e instanceof Error ? e.message : String(e)}`,
      );
    }
  }
  const discard = () => {
    try {
      file?.close();
    } catch {
      // already closed
    }
    file = undefined;
    if (temp) removeQuietly(temp);
  };
  const commit = () => {
    if (!file || !target) return;
    try {
      file.syncSync();
    } catch (e) {
      throw new IoError(
        `cannot write ${options.out}: ${e instanceof Error ? e.message : String(e)}`,
      );
    }
    file.close();
    file = undefined;
    commitTemp(temp, target);
  };
  const write = (text: string) => {
    const bytes = encoder.encode(text);
    if (file) writeAll(file, bytes, options.out);
    else writeAll(Deno.stdout, bytes);
  };
  const rows: Row[] = [];
  let started = false;
  let closed = false;
  let failed = 0;
  const emit = (row: Row) => {
    if (options.format === "csv") write(csvLine(columns.map((c) => row[c] ?? null)));
    else if (options.format === "jsonl") write(jsonText(row) + "\n");
    else if (options.format === "text" && options.table) write(options.table.row(row));
  };
  const start = () => {
    if (started) return;
    started = true;
    if (options.format === "csv") write(csvLine(columns));
    if (options.format === "jsonl") {
      write(jsonText({ meta: options.meta ?? {}, columns }) + "\n");
    }
    if (options.format === "text" && options.table) write(options.table.head());
  };
  // Interrupted runs (SIGINT, SIGTERM; also between cells) still complete a JSON document; an
  // exit on a failure completes it on stdout but never commits a half-written --out.
  const onUnload = () => {
    if (file) discard();
    else sink.close({ interrupted: true });
  };
  globalThis.addEventListener("unload", onUnload);
  const sink: RowSink = {
    get failed() {
      return failed;
    },
    rows,
    add(row: Row): void {
      start();
      rows.push(row);
      if (row.error) failed++;
      emit(row);
    },
    close(close: { interrupted?: boolean } = {}): void {
      if (closed) return;
      closed = true;
      globalThis.removeEventListener("unload", onUnload);
      unregister();
      try {
        start();
        if (options.summaryKeys && !close.interrupted) {
          for (const row of summaryRows(rows, options.summaryKeys)) {
            rows.push(row);
            emit(row);
          }
        }
        if (options.format === "json") {
          const meta = { ...options.meta, ...(close.interrupted ? { interrupted: true } : {}) };
          write(jsonText({ meta, columns, rows }, 1) + "\n");
        } else if (options.format === "jsonl" && close.interrupted) {
          write(JSON.stringify({ interrupted: true }) + "\n");
        } else if (options.format === "text" && options.table) {
          write(options.table.foot());
        }
      } catch (e) {
        discard();
        throw e;
      }
      commit();
    },
  };
  return sink;
}
