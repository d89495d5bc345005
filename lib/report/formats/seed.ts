/**
 * The GSD table in the layout of gsd's benchmark-hoomd.py: a reST simple table with columns
 * Size, N, Open (ms), Write (MiB/s), Read (MiB/s), Random (MiB/s), Random (ms) (gsd's own
 * header says MB/s over the same MiB/s values). Run rows only; a failed cell shows its error.
 * @module
 */
import { formatCount, formatG, formatSize } from "../units.ts";
import type { TableRenderer } from "./writer.ts";
import type { Row } from "../row.ts";

const WIDTHS = [7, 6, 9, 13, 12, 14, 11];
const TITLES = [
  "Size",
  "N",
  "Open (ms)",
  "Write (MiB/s)",
  "Read (MiB/s)",
  "Random (MiB/s)",
  "Random (ms)",
];

function rule(): string {
  return WIDTHS.map((w) => "=".repeat(w)).join(" ") + "\n";
}

function line(cells: string[]): string {
  return cells.map((c, i) => c.padEnd(WIDTHS[i]!)).join(" ").trimEnd() + "\n";
}

/** A renderer of table rows in gsd's reST layout; a Framing column is added when several backends run. */
export function gsdTableRenderer(showFraming: boolean): TableRenderer {
  const prefix = (s: string) => (showFraming ? s.padEnd(13) + " " : "");
  return {
    head: () =>
      "\n" + prefix("=".repeat(13)) + rule() + prefix("Framing") + line(TITLES) +
      prefix("=".repeat(13)) + rule(),
    row: (r: Row) =>
      r.stat !== undefined && r.stat !== "run" ? "" : prefix(String(r.framing)) +
        // a failed cell: its reason across the numeric columns (the CSV's error column)
        (typeof r.error === "string" && r.error !== ""
          ? `${formatSize(Number(r.size_bytes)).padEnd(WIDTHS[0]!)} ${
            formatCount(Number(r.N)).padEnd(WIDTHS[1]!)
          } failed: ${r.error}\n`
          : line([
            formatSize(Number(r.size_bytes)),
            formatCount(Number(r.N)),
            formatG(Number(r.open_ms), 4),
            formatG(Number(r.write_MiBps), 4),
            formatG(Number(r.read_MiBps), 4),
            formatG(Number(r.random_MiBps), 4),
            formatG(Number(r.random_ms), 3),
          ])),
    foot: () => prefix("=".repeat(13)) + rule(),
  };
}
