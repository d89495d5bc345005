/**
 * JSON lines: the run's facts and columns first (`{meta, columns}`), then one object per row as
 * it is measured; an interrupted run ends with the line `{"interrupted":true}`.
 * @module
 */
import { jsonText } from "./json.ts";
import type { RowFormat } from "./writer.ts";

/** The JSON lines format. */
export const JSONL_FORMAT: RowFormat = {
  name: "jsonl",
  description: "the facts, then one JSON object per row as it is measured",
  audience: "data",
  nested: true,
  keepsInterrupted: true,
  open: ({ columns, meta }) => ({
    head: () => jsonText({ meta, columns }) + "\n",
    row: (row) => jsonText(row) + "\n",
    end: (_rows, interrupted) => interrupted ? JSON.stringify({ interrupted: true }) + "\n" : "",
  }),
};
