/**
 * CSV: a header row of the columns, then one line per row as it is measured (csv-stringify,
 * RFC 4180 quoting). Row keys outside the columns are left out; booleans are `true`/`false`.
 * @module
 */
import { stringify } from "npm:csv-stringify@6.6.0/sync";
import { escapeControls } from "../../core/errors.ts";
import type { RowFormat } from "./writer.ts";

/**
 * One CSV field: control characters escaped ({@link escapeControls}: a name from a file never
 * reaches a terminal raw), then quoted as RFC 4180 when it holds a comma, a quote or a space at
 * an end.
 */
export function csvField(value: string | number | boolean): string {
  const text = escapeControls(String(value));
  return /[",]|^\s|\s$/.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
}

/** One CSV line of `values` (null and undefined as empty fields, objects as JSON text). */
export function csvLine(values: readonly unknown[]): string {
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

/** The CSV format. */
export const CSV_FORMAT: RowFormat = {
  name: "csv",
  description: "a header row, then one line per row",
  audience: "data",
  keepsInterrupted: false,
  open: ({ columns }) => ({
    head: () => csvLine(columns),
    row: (row) => csvLine(columns.map((c) => row[c] ?? null)),
    end: () => "",
  }),
};
