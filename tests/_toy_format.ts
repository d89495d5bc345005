/**
 * A toy output format (`--format toy`: tab-separated values), registered on import with
 * registerRowFormat and nothing else. tests/formats_test.ts uses it to show that a new format is
 * taken by every row command (table, the toy workload of tests/_toy_workload.ts, write, read,
 * plot, framings), listed in their `--help` and in docs/cli.md's reference, and keeps an
 * interrupted run's rows, with no other edit. Run as a program, this module is the sciobench CLI
 * with the toy format and the toy workload registered (as a plugin would be).
 * @module
 */
import { runCli } from "../lib/cli/main.ts";
import { escapeControls } from "../lib/core/errors.ts";
import { registerRowFormat, type RowFormat } from "../lib/report/formats/mod.ts";
import "./_toy_workload.ts";

/** One TSV field: empty for null, JSON for an object, controls (tabs, newlines) escaped. */
function field(value: unknown): string {
  if (value === null || value === undefined) return "";
  return escapeControls(typeof value === "object" ? JSON.stringify(value) : String(value));
}

/**
 * `toy`: a header line of the columns, then one line per row as it is measured, fields apart by
 * tabs; an interrupted run ends with the line `# interrupted` and is kept.
 */
export const toyFormat: RowFormat = {
  name: "toy",
  description: "tab-separated values of tests/_toy_format.ts",
  audience: "data",
  keepsInterrupted: true,
  open: ({ columns }) => ({
    head: () => columns.join("\t") + "\n",
    row: (row) => columns.map((c) => field(row[c])).join("\t") + "\n",
    end: (_rows, interrupted) => interrupted ? "# interrupted\n" : "",
  }),
};

registerRowFormat(toyFormat);

if (import.meta.main) {
  Deno.env.set("SCIOBENCH_SELF", new URL(import.meta.url).pathname);
  Deno.exit(await runCli(Deno.args));
}
