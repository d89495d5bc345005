/**
 * The text formats for people: `table`, rows through the aligned human table (lib/report/human.ts
 * humanTable), and `seed`, rows through a seed's own layout (lib/report/formats/seed.ts and the
 * workloads' seed renderers). Without its renderer a text format writes nothing.
 * @module
 */
import type { RowFormat, RowWriter, TableRenderer } from "./writer.ts";

/** A renderer that writes nothing (a text format opened without its renderer). */
const SILENT: TableRenderer = { head: () => "", row: () => "", foot: () => "" };

/** The writer of rows through `renderer`. */
function textWriter(renderer: TableRenderer = SILENT): RowWriter {
  return {
    head: () => renderer.head(),
    row: (row) => renderer.row(row),
    end: () => renderer.foot(),
  };
}

/** The aligned table for people. */
export const TABLE_FORMAT: RowFormat = {
  name: "table",
  description: "aligned, for people",
  audience: "people",
  keepsInterrupted: false,
  open: ({ human }) => textWriter(human),
};

/** The seed's own layout, where the workload has one. */
export const SEED_FORMAT: RowFormat = {
  name: "seed",
  description: "the seed's own layout",
  audience: "people",
  seedLayout: true,
  keepsInterrupted: false,
  open: ({ seed }) => textWriter(seed),
};
