/**
 * JSON lines: the run's facts and columns first (`{meta, columns}`), then one object per row as
 * it is measured, then the facts known only at the end (`{"end": {load_average_end, duration_s,
 * libraries}}`, which a reader merges into the meta); an interrupted run ends with the line
 * `{"interrupted":true}` after them.
 * @module
 */
import { jsonText } from "./json.ts";
import type { RowFormat } from "./writer.ts";

/** The meta's facts a run fills in at its end (null where the run did not). */
export const END_FACTS = ["load_average_end", "duration_s", "libraries"] as const;

function endFacts(meta: Readonly<Record<string, unknown>>): Record<string, unknown> {
  return Object.fromEntries(END_FACTS.map((k) => [k, meta[k] ?? null]));
}

/** The JSON lines format. */
export const JSONL_FORMAT: RowFormat = {
  name: "jsonl",
  description: "the facts, one JSON object per row as measured, then the end's facts",
  audience: "data",
  nested: true,
  keepsInterrupted: true,
  open: ({ columns, meta }) => ({
    head: () => jsonText({ meta, columns }) + "\n",
    row: (row) => jsonText(row) + "\n",
    end: (_rows, interrupted) =>
      jsonText({ end: endFacts(meta) }) + "\n" +
      (interrupted ? JSON.stringify({ interrupted: true }) + "\n" : ""),
  }),
};
