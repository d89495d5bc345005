/**
 * Result rows to stdout or a file: CSV with a header row (csv-stringify), one JSON document, or
 * a caller-supplied text table. stdout carries only data; diagnostics go to stderr. Under MPI
 * only rank 0 writes.
 * @module
 */
import { stringify } from "npm:csv-stringify@6.6.0/sync";
import { IoError } from "../errors.ts";
import { world } from "../mpi/world.ts";
import {
  checkOutputTarget,
  commitTemp,
  type OutputTarget,
  removeQuietly,
  tempPathFor,
} from "../io/atomic.ts";
import { onInterrupt } from "../io/interrupt.ts";

/**
 * One result row: column name to value. Objects appear only in JSON output (a row's audit
 * trail), never in CSV columns.
 */
export type Row = Record<string, string | number | boolean | null | object>;

/** Output formats every row-producing command offers. */
export type RowFormat = "csv" | "json" | "table";

/** Renders rows as a text table (a command's `--format table`); called with all rows. */
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
  /** Facts about the run for the JSON document's `meta` (command, versions, host). */
  readonly meta?: Record<string, unknown>;
  /** Renderer for `table` format. */
  readonly table?: TableRenderer;
}

/** Receives rows as they are measured; `close()` completes the document. */
export interface RowSink {
  /** Adds one row (CSV and table rows are written at once, so a long run shows progress). */
  add(row: Row): void;
  /** Finishes the output (JSON is written here). */
  close(): void;
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

function csvLine(values: readonly (string | number | boolean | null | object)[]): string {
  return stringify([values.map((v) => (v === null ? "" : typeof v === "object" ? "" : v))], {
    eof: true,
    record_delimiter: "unix",
  });
}

/** Formats a number for CSV: integers as is, others with up to 6 significant digits. */
export function num(value: number, digits = 6): number {
  if (!Number.isFinite(value) || Number.isInteger(value)) return value;
  return Number(value.toPrecision(digits));
}

/** Opens a sink for rows with the given columns (CSV header order; extra row keys are ignored in CSV). */
export function openRowSink(columns: readonly string[], options: RowSinkOptions): RowSink {
  // under MPI only rank 0 prints (or writes --out)
  if (world().rank !== 0) return { add() {}, close() {} };
  // --out is written atomically: rows go to a temporary file beside it, which replaces the target
  // (or appears under its name) only once complete and fsynced; any failure or signal before that
  // leaves the old file as it was and removes the temporary one.
  let file: Deno.FsFile | undefined;
  let target: OutputTarget | undefined;
  let temp = "";
  let forget = () => {};
  if (options.out !== undefined) {
    target = checkOutputTarget(options.out, options.force ?? false, "--out");
    temp = tempPathFor(target.path);
    try {
      file = Deno.openSync(temp, { write: true, createNew: true });
    } catch (e) {
      throw new IoError(
        `cannot write ${options.out}: ${e instanceof Error ? e.message : String(e)}`,
      );
    }
    const discard = () => {
      try {
        file?.close();
      } catch {
        // already closed
      }
      removeQuietly(temp);
    };
    const unregister = onInterrupt(() => discard());
    globalThis.addEventListener("unload", discard);
    forget = () => {
      unregister();
      globalThis.removeEventListener("unload", discard);
    };
  }
  const write = (text: string) => {
    const bytes = encoder.encode(text);
    if (file) writeAll(file, bytes, options.out);
    else writeAll(Deno.stdout, bytes);
  };
  const rows: Row[] = [];
  let started = false;
  const start = () => {
    if (started) return;
    started = true;
    if (options.format === "csv") write(csvLine(columns));
    if (options.format === "table" && options.table) write(options.table.head());
  };
  return {
    add(row: Row): void {
      start();
      if (options.format === "csv") write(csvLine(columns.map((c) => row[c] ?? null)));
      else if (options.format === "table" && options.table) write(options.table.row(row));
      else rows.push(row);
    },
    close(): void {
      start();
      if (options.format === "json") {
        write(JSON.stringify({ meta: options.meta ?? {}, columns, rows }, null, 1) + "\n");
      } else if (options.format === "table" && options.table) {
        write(options.table.foot());
      }
      if (file && target) {
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
        forget();
      }
    },
  };
}
