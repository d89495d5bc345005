/**
 * The one declaration of the output formats of rows ({@link RowFormat}: name, line of help, for
 * people or data, seed layout, writer). The built-in formats are listed here, one line each;
 * {@link registerRowFormat} adds more from outside (a plugin, or a test's toy), as registerBackend
 * and registerWorkload do. `--format`'s choices and did-you-mean (lib/cli/output.ts resolveFormat),
 * the writer of a run's rows (lib/report/output.ts openRowSink), the `--format` help of every row
 * command (lib/cli/flags.ts) and docs/cli.md all read {@link rowFormats}.
 * @module
 */
import { UsageError } from "../../core/errors.ts";
import { didYouMean } from "../../core/suggest.ts";
import { CSV_FORMAT } from "./csv.ts";
import { JSON_FORMAT } from "./json.ts";
import { JSONL_FORMAT } from "./jsonl.ts";
import { SEED_FORMAT, TABLE_FORMAT } from "./table.ts";
import type { RowFormat } from "./writer.ts";
export type { RowFormat, RowWriter, RowWriterSetup, TableRenderer } from "./writer.ts";

/** The built-in formats, in the order the help lists them. */
const BUILT_IN: readonly RowFormat[] = [
  TABLE_FORMAT,
  CSV_FORMAT,
  JSON_FORMAT,
  JSONL_FORMAT,
  SEED_FORMAT,
];

const registered: RowFormat[] = [];

/** The format of rows without `--format` when stdout is a terminal (one process, no `--out`). */
export const TERMINAL_FORMAT = "table";

/** The format of rows without `--format` otherwise (a pipe, a file, `--out`, MPI). */
export const DATA_FORMAT = "csv";

/**
 * Adds `format` to every row command's `--format` (after the built-in ones); UsageError when its
 * name is taken or is not lower-case letters, digits and dashes.
 */
export function registerRowFormat(format: RowFormat): void {
  if (!/^[a-z][a-z0-9-]*$/.test(format.name)) {
    throw new UsageError(
      `a row format's name is lower-case letters, digits and dashes: '${format.name}'`,
    );
  }
  if (rowFormats().some((f) => f.name === format.name)) {
    throw new UsageError(`a row format named '${format.name}' is registered already`);
  }
  registered.push(format);
}

/** Every row format: the built-in ones, then the registered ones in the order registered. */
export function rowFormats(): readonly RowFormat[] {
  return [...BUILT_IN, ...registered];
}

/** The format named `name`; UsageError (with the choices and a did-you-mean) when none is. */
export function rowFormat(name: string): RowFormat {
  const formats = rowFormats();
  const format = formats.find((f) => f.name === name);
  if (format !== undefined) return format;
  const names = formats.map((f) => f.name);
  throw new UsageError(
    `bad --format '${name}': expected one of ${names.join(", ")}${didYouMean(name, names)}`,
  );
}

/** The names `--format` takes in a command with (or without) a seed layout, in help order. */
export function rowFormatNames(seedLayout: boolean): string[] {
  return rowFormats().filter((f) => seedLayout || !f.seedLayout).map((f) => f.name);
}

/** When `name` is a default of `--format` (`the default on a terminal`), the words that say so. */
export function defaultNote(name: string): string | undefined {
  return name === TERMINAL_FORMAT
    ? "the default on a terminal"
    : name === DATA_FORMAT
    ? "the default otherwise"
    : undefined;
}

/** `a`, `a or b`, `a, b, or c`. */
export function orList(items: readonly string[]): string {
  if (items.length <= 2) return items.join(" or ");
  return `${items.slice(0, -1).join(", ")}, or ${items.at(-1)}`;
}

/**
 * What `--format` offers a row command, for its help: `: table (aligned, for people; the default
 * on a terminal), csv (...), ...`, then, where the command has a seed layout (`seedLayout`, what
 * it looks like), the formats that draw it.
 */
export function rowFormatsHelp(seedLayout?: string): string {
  const formats = rowFormats();
  const items = formats.filter((f) => !f.seedLayout).map((f) =>
    `${f.name} (${[f.description, defaultNote(f.name)].filter((s) => s).join("; ")})`
  );
  const seeds = seedLayout === undefined
    ? []
    : formats.filter((f) => f.seedLayout).map((f) =>
      `; ${f.name} (${f.description}): ${seedLayout}`
    );
  return `: ${orList(items)}${seeds.join("")}`;
}
