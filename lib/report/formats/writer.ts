/**
 * The one interface every output format implements: the text before the first row, the text of
 * each row as it is measured, and the text that completes the output. lib/report/output.ts picks
 * a format's writer from {@link RowFormatSpec}s and owns where the text goes (stdout or an
 * atomically written file), the signals and the summary rows.
 * @module
 */
import type { Row } from "../row.ts";

/** Renders rows as text (the human table, or a seed's layout) for the `text` format. */
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
  /** The renderer of the `text` format (none: the text format writes nothing). */
  readonly table?: TableRenderer;
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

/** One output format: how its writer opens, and what an interrupted run leaves of it. */
export interface RowFormatSpec {
  /** Opens a writer for one output. */
  open(setup: RowWriterSetup): RowWriter;
  /**
   * True when an interrupted run's output is completed, marked interrupted and kept (JSON, JSON
   * lines); false when it is discarded (a half CSV or table would read as a whole one).
   */
  readonly keepsInterrupted: boolean;
}
