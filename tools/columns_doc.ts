/**
 * docs/columns.md from the column schema (lib/workloads/columns.ts): every column with its unit,
 * kind, meaning and the commands that write it. tests/column_schema_test.ts fails when the file
 * differs from what this generates; regenerate it with
 *
 *     deno run --allow-all tools/columns_doc.ts
 * @module
 */
import {
  COLUMN_SCHEMA,
  type ColumnName,
  READ_COLUMN_NAMES,
  WRITE_COLUMN_NAMES,
} from "../lib/workloads/columns.ts";
import { tableColumnDocs } from "../lib/workloads/table/mod.ts";
import { SCALING_COLUMNS } from "../lib/workloads/scaling/mod.ts";
import { RECORDS_COLUMNS } from "../lib/workloads/records/mod.ts";
import { READERS_COLUMNS } from "../lib/workloads/readers/mod.ts";

/** The file the generator writes, from the project's root. */
export const COLUMNS_DOC_PATH = "docs/columns.md";

/** The command that regenerates docs/columns.md. */
export const COLUMNS_DOC_COMMAND = "deno run --allow-all tools/columns_doc.ts";

/** The columns each command writes (MPI: the columns a run of several ranks adds). */
const WRITERS: readonly (readonly [string, readonly string[]])[] = [
  ["table", tableColumnDocs(true).map((d) => d.name)],
  ["scaling", SCALING_COLUMNS],
  ["records", RECORDS_COLUMNS],
  ["readers", READERS_COLUMNS],
  ["read", READ_COLUMN_NAMES],
  ["write", WRITE_COLUMN_NAMES],
  ["MPI", ["ranks", "rank", "host", "write_path", "read_path"]],
];

/** The text of docs/columns.md. */
export function columnsMarkdown(): string {
  const lines = [
    "# Result columns",
    "",
    `<!-- generated from lib/workloads/columns.ts by tools/columns_doc.ts: ${COLUMNS_DOC_COMMAND} -->`,
    "",
    "Every column a measuring command writes, declared once: the same name means the same thing in",
    "the same unit in every command. A phase's columns carry the phase's name as a prefix",
    "(`write_s`, `write_MiBps`, `read_user_s`, `random_dev_bytes`); `records` writes one row per",
    "phase (named in `phase`) with the phase-less columns (`wall_s`, `user_s`, `MiBps`). Under MPI",
    "each rate's and time's minimum, mean and maximum over ranks follow as `NAME_min`,",
    "`NAME_mean` and `NAME_max`, in NAME's unit. Flag columns are JSON booleans (CSV: `true`,",
    "`false`). MiB = 2^20 bytes.",
    "",
  ];
  for (const [name, e] of Object.entries(COLUMN_SCHEMA)) {
    const by = WRITERS.filter(([, cols]) => cols.includes(name as ColumnName)).map(([c]) => c);
    const unit = e.unit ? `${e.unit}, ` : "";
    lines.push(
      `- \`${name}\` (${unit}${e.kind}): ${e.text}. Written by ${by.join(", ") || "none"}.`,
    );
  }
  return lines.join("\n") + "\n";
}

/**
 * The text of docs/columns.md as `deno fmt` leaves it (the project's line width): the Deno that
 * runs this formats it, so the file passes `deno fmt --check` as generated.
 */
export async function formattedColumnsMarkdown(): Promise<string> {
  const root = new URL("..", import.meta.url).pathname;
  const fmt = new Deno.Command(Deno.execPath(), {
    args: ["fmt", "--ext=md", "-"],
    cwd: root,
    stdin: "piped",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const writer = fmt.stdin.getWriter();
  await writer.write(new TextEncoder().encode(columnsMarkdown()));
  await writer.close();
  const out = await fmt.output();
  if (!out.success) throw new Error(`deno fmt: ${new TextDecoder().decode(out.stderr)}`);
  return new TextDecoder().decode(out.stdout);
}

if (import.meta.main) {
  const root = new URL("..", import.meta.url).pathname;
  Deno.writeTextFileSync(`${root}${COLUMNS_DOC_PATH}`, await formattedColumnsMarkdown());
}
