/**
 * Human output: an aligned text table of chosen columns with units in the header, sizes as
 * `128 MiB`, rates in MiB/s to 4 significant digits; and the help text that documents every
 * column with its unit. Rounding happens only here.
 * @module
 */
import type { TableRenderer } from "./output.ts";
import type { Row } from "./row.ts";
import type { RatioOf } from "./stats.ts";
import { formatCount, formatG, formatSize } from "./units.ts";
import { escapeControls } from "../core/errors.ts";

/**
 * How a column's values are shown to people: text (left-aligned), a size (`128 MiB`), a count,
 * a particle count (`32^2`), a number (4 significant digits), a fraction (2 decimals), or a flag
 * (true or false: a JSON boolean, the words in CSV and text).
 */
export type ColumnKind =
  | "text"
  | "size"
  | "count"
  | "particles"
  | "number"
  | "fraction"
  | "flag";

/** One documented output column: name, unit (empty for text and counts) and meaning. */
export interface ColumnDoc {
  /** Column name as in CSV and JSON. */
  readonly name: string;
  /** Unit of the values (`s`, `ms`, `MiB/s`, `bytes`, `ticks`, `0..1`), "" for none. */
  readonly unit: string;
  /** What the column holds. */
  readonly text: string;
  /** How human output formats it. */
  readonly kind: ColumnKind;
  /**
   * A column that is the ratio of two others in each run row: summary rows make their mean and
   * median the ratio of the two columns' mean and median (lib/report/stats.ts).
   */
  readonly ratio?: RatioOf;
}

/** Shorthand constructor of a {@link ColumnDoc}. */
export function col(name: string, unit: string, kind: ColumnKind, text: string): ColumnDoc {
  return { name, unit, kind, text };
}

/** Help lines describing every column: `  name (unit)  meaning`, wrapped to 100 columns. */
export function columnHelp(docs: readonly ColumnDoc[]): string {
  const label = (d: ColumnDoc) => `${d.name}${d.unit ? ` (${d.unit})` : ""}`;
  const width = Math.min(30, Math.max(...docs.map((d) => label(d).length)));
  const indent = " ".repeat(width + 4);
  const lines: string[] = [];
  for (const d of docs) {
    const words = d.text.split(" ");
    let line = `  ${label(d).padEnd(width)}  `;
    if (line.length > indent.length) {
      lines.push(line.trimEnd());
      line = indent;
    }
    let first = true;
    for (const w of words) {
      if (!first && line.length + w.length + 1 > 100) {
        lines.push(line.trimEnd());
        line = indent;
        first = true;
      }
      line += (first ? "" : " ") + w;
      first = false;
    }
    lines.push(line.trimEnd());
  }
  return lines.join("\n");
}

/** The text of one value for people (empty for a missing value). */
export function humanValue(kind: ColumnKind, value: Row[string] | undefined): string {
  if (value === null || value === undefined || value === "") return "";
  // text from a file or a library (paths, names, errors): one line, no terminal escapes
  if (typeof value !== "number") return escapeControls(String(value));
  switch (kind) {
    case "size":
      return formatSize(value);
    case "particles":
      return formatCount(value);
    case "count":
      return Number.isInteger(value) ? String(value) : formatG(value, 4);
    case "fraction":
      return value.toFixed(2);
    case "number":
      return formatG(value, 4);
    case "text":
    case "flag":
      return String(value);
  }
}

/** The header of a column for people: its name and unit, `write (MiB/s)`. */
function title(doc: ColumnDoc): string {
  const unit = doc.kind === "size" || doc.kind === "particles" ? "" : doc.unit;
  const name = unit ? doc.name.replace(/_(ms|s|MiBps|bytes|s_per_proc)$/, "") : doc.name;
  return unit ? `${name} (${unit})` : name.replace(/_bytes$/, "");
}

/** A row's cells marked as not what they seem (numbers a cache served), and why. */
export interface HumanMark {
  /** The columns whose values get the trailing mark (those not shown are ignored). */
  readonly columns: readonly string[];
  /** The footnote saying why, printed once under the table. */
  readonly note: string;
}

/** The trailing mark of a marked cell, and the start of its footnote. */
export const HUMAN_MARK = "*";

/**
 * An aligned table of `docs` columns (numbers right-aligned, text left-aligned); rows are kept
 * and the whole table is printed at the end, so columns line up. Columns with no value in any
 * row (such as `error` in a clean run) are left out. `mark` names a row's cells that end in
 * {@link HUMAN_MARK}, and each distinct note is printed once under the table, so it stays next
 * to the numbers it qualifies.
 */
export function humanTable(
  docs: readonly ColumnDoc[],
  mark: (row: Row) => HumanMark | undefined = () => undefined,
): TableRenderer {
  const rows: Row[] = [];
  return {
    head: () => "",
    row(row: Row): string {
      rows.push(row);
      return "";
    },
    foot(): string {
      const shown = docs.filter((d) =>
        rows.some((r) => humanValue(d.kind, r[d.name]) !== "") &&
        !(d.name === "stat" && rows.every((r) => r.stat === "run"))
      );
      const notes = new Set<string>();
      const cells = rows.map((r) => {
        const m = mark(r);
        return shown.map((d) => {
          const v = humanValue(d.kind, r[d.name]);
          if (m === undefined || v === "" || !m.columns.includes(d.name)) return v;
          notes.add(m.note);
          return v + HUMAN_MARK;
        });
      });
      const heads = shown.map(title);
      const widths = shown.map((_, i) =>
        Math.max(heads[i]!.length, ...cells.map((c) => c[i]!.length))
      );
      const right = shown.map((d) => d.kind !== "text" && d.kind !== "flag");
      const line = (values: string[]) =>
        values.map((v, i) => right[i] ? v.padStart(widths[i]!) : v.padEnd(widths[i]!)).join("  ")
          .trimEnd() + "\n";
      const foot = [...notes].map((n) => `${HUMAN_MARK} ${n}\n`).join("");
      return line(heads) + line(widths.map((w) => "-".repeat(w))) + cells.map(line).join("") +
        foot;
    },
  };
}
