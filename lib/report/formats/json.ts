/**
 * JSON: one document `{meta, columns, rows}` written when the run ends (an interrupted run's meta
 * says `interrupted: true`). Rows keep every key, including those outside the columns.
 * @module
 */
import type { RowFormat } from "./writer.ts";

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

/** The JSON format; `--dry-run` prints the plan as one JSON document too. */
export const JSON_FORMAT: RowFormat = {
  name: "json",
  description: "one document with the run's facts",
  audience: "data",
  nested: true,
  endNeedsRows: true,
  keepsInterrupted: true,
  plan: (facts) => jsonText(facts, 2) + "\n",
  open: ({ columns, meta }) => ({
    head: () => "",
    row: () => "",
    end: (rows, interrupted) =>
      jsonText(
        { meta: { ...meta, ...(interrupted ? { interrupted: true } : {}) }, columns, rows },
        1,
      ) +
      "\n",
  }),
};
