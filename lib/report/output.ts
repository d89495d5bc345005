/**
 * Result rows to stdout or a file, in one of the formats of lib/report/formats/mod.ts: CSV with a
 * header row (csv-stringify), one JSON document, JSON lines (the run's facts first, then one
 * object per row as it is measured), text from a renderer (the aligned human table or a seed's
 * own layout), or a format added with registerRowFormat. stdout carries only data;
 * diagnostics go to stderr. With repeats, summary rows (mean, median, stddev, min, max per cell)
 * follow the run rows. A run ended by SIGINT or SIGTERM still completes its document, marked
 * interrupted.
 * @module
 */
import { IoError } from "../core/errors.ts";
import { warn } from "../core/diagnostics.ts";
import { world } from "../mpi/world.ts";
import {
  checkOutputTarget,
  commitTemp,
  type OutputTarget,
  removeQuietly,
  tempPathFor,
} from "../io/atomic.ts";
import { onInterrupt } from "../io/interrupt.ts";
import { type RatioColumn, summaryRows } from "./stats.ts";
import type { Row } from "./row.ts";
import { rowFormat } from "./formats/mod.ts";
import type { TableRenderer } from "./formats/writer.ts";
export type { TableRenderer } from "./formats/writer.ts";
export { csvField } from "./formats/csv.ts";
export { jsonText } from "./formats/json.ts";

/**
 * The name of an output format of rows: one of lib/report/formats/mod.ts's (`table`, `csv`,
 * `json`, `jsonl`, `seed`, or one added with registerRowFormat).
 */
export type OutputFormat = string;

/** Options for {@link openRowSink}. */
export interface RowSinkOptions {
  /** Output format (a name of lib/report/formats/mod.ts). */
  readonly format: OutputFormat;
  /** File to write instead of stdout; refused when it exists unless `force`. */
  readonly out?: string;
  /** Replace an existing `out`. */
  readonly force?: boolean;
  /** Facts about the run for the JSON document's `meta` (command, options, versions, host). */
  readonly meta?: Record<string, unknown>;
  /** The aligned table of the columns people see (the `table` format draws it). */
  readonly human?: TableRenderer;
  /** The command's seed layout, where it has one (the `seed` format draws it). */
  readonly seed?: TableRenderer;
  /**
   * Key columns of a cell: when given, summary rows (see lib/report/stats.ts) over the run rows
   * of each cell with two or more runs are added at the end.
   */
  readonly summaryKeys?: readonly string[];
  /** Ratio columns whose summary rows are ratios of the statistic (lib/report/stats.ts). */
  readonly ratios?: readonly RatioColumn[];
  /** Columns that echo a setting: summary rows copy them where the runs agree. */
  readonly settings?: readonly string[];
  /**
   * Keep every row in `rows` (for a chart drawn at the end). Rows are kept anyway where the
   * summary rows or the JSON document need them; else a sink of a million rows holds none.
   */
  readonly keepRows?: boolean;
}

/** Receives rows as they are measured; `close()` completes the document. */
export interface RowSink {
  /** Adds one row (CSV, JSON lines and text rows are written at once). */
  add(row: Row): void;
  /** Finishes the output: summary rows, then the JSON document or the text footer. */
  close(options?: { interrupted?: boolean }): void;
  /** Rows added so far whose `error` is set. */
  readonly failed: number;
  /** The first row added whose `error` is set. */
  readonly firstFailed: Row | undefined;
  /**
   * Every row written so far (runs, then summaries once closed), where they are kept: with
   * `keepRows`, summary keys or JSON; else none.
   */
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
 * Where a sink's text goes: stdout, or for `--out` a temporary file beside the target that
 * replaces it (or appears under its name) only once complete and fsynced ({@link commit}).
 */
class RowDestination {
  readonly #out: string | undefined;
  readonly #target: OutputTarget | undefined;
  readonly #temp: string;
  #file: Deno.FsFile | undefined;

  /** Checks `out` (refused when it exists unless `force`); nothing is created yet. */
  constructor(out: string | undefined, force: boolean) {
    this.#out = out;
    this.#target = out === undefined ? undefined : checkOutputTarget(out, force, "--out");
    this.#temp = this.#target ? tempPathFor(this.#target.path) : "";
  }

  /** True while a temporary file is open (`--out`, neither committed nor discarded). */
  get open(): boolean {
    return this.#file !== undefined;
  }

  /** Creates the temporary file of `--out` (nothing for stdout). */
  create(): void {
    if (!this.#temp) return;
    try {
      this.#file = Deno.openSync(this.#temp, { write: true, createNew: true });
    } catch (e) {
      throw new IoError(`cannot write ${this.#out}: ${e instanceof Error ? e.message : String(e)}`);
    }
  }

  /** Writes `text` (see {@link writeAll}). */
  write(text: string): void {
    if (text === "") return;
    const bytes = encoder.encode(text);
    if (this.#file) writeAll(this.#file, bytes, this.#out);
    else writeAll(Deno.stdout, bytes);
  }

  /** Closes and removes the temporary file: the target stays as it was. */
  discard(): void {
    try {
      this.#file?.close();
    } catch {
      // already closed
    }
    this.#file = undefined;
    if (this.#temp) removeQuietly(this.#temp);
  }

  /** Fsyncs the temporary file and puts it in the target's place. */
  commit(): void {
    if (!this.#file || !this.#target) return;
    try {
      this.#file.syncSync();
    } catch (e) {
      throw new IoError(`cannot write ${this.#out}: ${e instanceof Error ? e.message : String(e)}`);
    }
    this.#file.close();
    this.#file = undefined;
    commitTemp(this.#temp, this.#target);
  }
}

/**
 * Opens a sink for rows with the given columns (CSV header order; extra row keys are ignored in
 * CSV and kept in JSON), in the format's writer (lib/report/formats/mod.ts). Open it only after
 * every option is checked: `out` is created here. One function of about 100 lines: the sink's
 * methods, the interrupt handler and the exit handler close over the same destination, writer,
 * kept rows and counts, and each of them must see the others' state at the moment it runs.
 */
export function openRowSink(columns: readonly string[], options: RowSinkOptions): RowSink {
  // under MPI only rank 0 prints (or writes --out)
  if (world().rank !== 0) {
    return { add() {}, close() {}, failed: 0, firstFailed: undefined, rows: [] };
  }
  // --out is written atomically: rows go to a temporary file beside it, which replaces the target
  // (or appears under its name) only once complete and fsynced. A failure before that leaves the
  // old file as it was and removes the temporary one; so does SIGINT or SIGTERM for a format
  // that discards an interrupted run (CSV, text), while one that keeps it (JSON, JSON lines) is
  // completed, marked interrupted, and committed (what finished is kept). A SIGKILL leaves the finished rows in the temporary file `.NAME.sciobench-tmp-PID`.
  const format = rowFormat(options.format);
  const destination = new RowDestination(options.out, options.force ?? false);
  // The signal handlers are in place before the temporary file exists: a SIGTERM right after it
  // appears must not meet the default action (death, with the temporary file left behind).
  const unregister = onInterrupt(() => {
    if (!format.keepsInterrupted) {
      destination.discard();
      return;
    }
    sink.close({ interrupted: true });
    return options.out ? `kept the finished rows in ${options.out}` : undefined;
  });
  try {
    destination.create();
  } catch (e) {
    unregister();
    throw e;
  }
  const rows: Row[] = [];
  const keep = options.keepRows === true || options.summaryKeys !== undefined ||
    format.endNeedsRows === true;
  let started = false;
  let closed = false;
  let failed = 0;
  let firstFailed: Row | undefined;
  const writer = format.open({
    columns,
    meta: options.meta ?? {},
    human: options.human,
    seed: options.seed,
  });
  const emit = (row: Row) => destination.write(writer.row(row));
  const start = () => {
    if (started) return;
    started = true;
    destination.write(writer.head());
  };
  // Interrupted runs (SIGINT, SIGTERM; also between cells) still complete a JSON document; an
  // exit on a failure completes it on stdout but never commits a half-written --out.
  const onUnload = () => {
    if (destination.open) {
      destination.discard();
      return;
    }
    try {
      sink.close({ interrupted: true });
    } catch (e) {
      // the program is ending already: a stdout whose reader went away (`| head -1`) needs
      // nothing more, any other failure is one line, never a stack trace
      if (!(e instanceof Deno.errors.BrokenPipe)) warn(e instanceof Error ? e.message : String(e));
    }
  };
  globalThis.addEventListener("unload", onUnload);
  const sink: RowSink = {
    get failed() {
      return failed;
    },
    get firstFailed() {
      return firstFailed;
    },
    rows,
    add(row: Row): void {
      start();
      if (keep) rows.push(row);
      if (row.error) {
        failed++;
        firstFailed ??= row;
      }
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
          for (
            const row of summaryRows(rows, options.summaryKeys, options.ratios, options.settings)
          ) {
            rows.push(row);
            emit(row);
          }
        }
        destination.write(writer.end(rows, close.interrupted ?? false));
      } catch (e) {
        destination.discard();
        throw e;
      }
      destination.commit();
    },
  };
  return sink;
}
