/**
 * The GSD table in the layout of gsd's benchmark-hoomd.py: a reST simple table with columns
 * Size, N, Open (ms), Write (MB/s), Read (MB/s), Random (MB/s), Random (ms), where MB = MiB.
 * @module
 */
import { formatCount, formatSize } from "./units.ts";
import type { Row, TableRenderer } from "./output.ts";

const WIDTHS = [7, 6, 9, 12, 11, 13, 11];
const TITLES = [
  "Size",
  "N",
  "Open (ms)",
  "Write (MB/s)",
  "Read (MB/s)",
  "Random (MB/s)",
  "Random (ms)",
];

/** Formats like Python's `format(x, '.{p}g')`. */
export function formatG(x: number, precision: number): string {
  if (!Number.isFinite(x)) return String(x);
  if (x === 0) return "0";
  const exp = Math.floor(Math.log10(Math.abs(x)));
  if (exp < -4 || exp >= precision) {
    const [m, e] = x.toExponential(precision - 1).split("e");
    const mant = m!.includes(".") ? m!.replace(/\.?0+$/, "") : m!;
    const n = Number(e);
    return `${mant}e${n < 0 ? "-" : "+"}${String(Math.abs(n)).padStart(2, "0")}`;
  }
  const s = x.toFixed(Math.max(0, precision - 1 - exp));
  return s.includes(".") ? s.replace(/\.?0+$/, "") : s;
}

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
      prefix(String(r.framing)) +
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
