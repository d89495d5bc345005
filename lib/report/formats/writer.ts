/**
 * The one interface every output format of rows implements ({@link RowFormat}): its name and its
 * line in `--format`'s help, whether it is text for people or data, whether it draws a workload's
 * seed layout, and its writer (the text before the first row, the text of each row as it is
 * measured, and the text that completes the output). lib/report/formats/mod.ts declares the
 * formats; lib/report/output.ts owns where the text goes (stdout or an atomically written file),
 * the signals and the summary rows.
 * @module
 */
import type { Row } from "../row.ts";

/** Renders rows as text for people: the human table, or a seed's layout. */
export interface TableRenderer {
  /** Text printed before the first row (header lines). */
  head(): string;
  /** Text for one row. */
  row(row: Row): string;
  /** Text after the last row. */
  foot(): string;
}

/** What a format's writer is opened with. */
export interface RowWriterSetup {
  /** The columns, in CSV header order. */
  readonly columns: readonly string[];
  /** Facts about the run (command, options, versions, host) for the formats that carry them. */
  readonly meta: Record<string, unknown>;
  /** The aligned table of the columns people see (none: a text format for people writes nothing). */
  readonly human?: TableRenderer;
  /** The command's seed layout, where it has one. */
  readonly seed?: TableRenderer;
}

/** Turns rows into one format's text; each method returns the text to write ("" for none). */
export interface RowWriter {
  /** Text before the first row. */
  head(): string;
  /** Text of one row, written as soon as the row is measured. */
  row(row: Row): string;
  /**
   * Text that completes the output: `rows` are all the rows written (runs, then summaries);
   * `interrupted` when a signal or an exit ended the run early.
   */
  end(rows: readonly Row[], interrupted: boolean): string;
}

/**
 * One output format of rows, declared once: what `--format NAME` takes, what its help says, and
 * how it writes. Add one with registerRowFormat (lib/report/formats/mod.ts).
 */
export interface RowFormat {
  /** What `--format` takes: lower-case letters, digits and dashes. */
  readonly name: string;
  /** Its line in `--format`'s help, in a few words (`one document with the run's facts`). */
  readonly description: string;
  /** `people`: text to read (aligned, rounded); `data`: text a program parses. */
  readonly audience: "people" | "data";
  /** It draws the workload's seed layout: offered only where the workload has one. */
  readonly seedLayout?: true;
  /** Its rows keep every key, nested values included (objects, such as the audit trail). */
  readonly nested?: true;
  /** Its end writes every row again (a document): the sink keeps them all until then. */
  readonly endNeedsRows?: true;
  /**
   * True when an interrupted run's output is completed, marked interrupted and kept (JSON, JSON
   * lines); false when it is discarded (a half CSV or table would read as a whole one).
   */
  readonly keepsInterrupted: boolean;
  /** Opens a writer for one output. */
  open(setup: RowWriterSetup): RowWriter;
  /**
   * How `--dry-run` prints a plan's facts in this format (absent: as text, one fact per line).
   */
  plan?(facts: Record<string, unknown>): string;
}
