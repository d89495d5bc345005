/**
 * The `text` format: rows through a {@link TableRenderer}, the aligned human table
 * (lib/report/human.ts humanTable) or a seed's own layout (lib/report/formats/seed.ts and the
 * workloads' seed renderers). Without a renderer it writes nothing.
 * @module
 */
import type { RowFormatSpec, TableRenderer } from "./writer.ts";

/** A renderer that writes nothing (the text format of a command without one). */
const SILENT: TableRenderer = { head: () => "", row: () => "", foot: () => "" };

/** The text format. */
export const TEXT_FORMAT: RowFormatSpec = {
  keepsInterrupted: false,
  open: ({ table }) => {
    const renderer = table ?? SILENT;
    return {
      head: () => renderer.head(),
      row: (row) => renderer.row(row),
      end: () => renderer.foot(),
    };
  },
};
