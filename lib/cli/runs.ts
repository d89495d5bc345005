/**
 * `sciobench runs`: the runs of the results store (lib/report/store.ts), oldest first, each with
 * its id (what `compare` takes), date, command, host, file system, version and a one-line
 * summary; filtered by command, host and file system.
 * @module
 */
import { UsageError } from "../core/errors.ts";
import { parseChoice } from "../core/values.ts";
import { csvField, jsonText, writeStdout } from "../report/output.ts";
import { listRuns, STORE_ENV, storeDir, type StoredRun } from "../report/store.ts";
import { commandHelp } from "./help.ts";
import { parseFlags } from "./parse_flags.ts";
import type { Command } from "./command.ts";

/** The fields listed, in order. */
const FIELDS = ["id", "date", "command", "host", "fs", "version", "summary"] as const;

/** The runs as an aligned table, one line each. */
function runsTable(runs: readonly StoredRun[]): string {
  const rows = [[...FIELDS], ...runs.map((r) => FIELDS.map((f) => r[f] || "-"))];
  const widths = FIELDS.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
  return rows.map((r) => r.map((c, i) => i === r.length - 1 ? c : c.padEnd(widths[i]!)).join("  "))
    .join("\n") + "\n";
}

/** The `runs` subcommand. */
export const runsCommand: Command = {
  name: "runs",
  summary: "list the runs of the results store (--store DIR or SCIOBENCH_STORE)",
  get help(): string {
    return commandHelp("runs", {
      title: "list the runs of the results store",
      usage: "[--store DIR] [--command C] [--host H] [--fs T] [--format F]",
      intro:
        `Lists the runs a row command (table, records, ...) wrote to the store with --store DIR or
${STORE_ENV}, oldest first: the run id, the date it started, the command, the host, the --dir
file system, the sciobench version and a one-line summary (rows, failed cells, backends). The
ids, latest and latest~K (the K-th run before the latest) are what 'sciobench compare' takes.`,
    });
  },
  run(args: string[]): Promise<void> {
    const { values } = parseFlags("runs", args);
    const format = parseChoice(values.format, ["table", "csv", "json"], "--format");
    const store = storeDir(values.store);
    if (store === undefined) {
      throw new UsageError(`runs: give --store DIR or set ${STORE_ENV}`);
    }
    const runs = listRuns(store).filter((r) =>
      (values.command === undefined || r.command === values.command) &&
      (values.host === undefined || r.host === values.host) &&
      (values.fs === undefined || r.fs === values.fs)
    );
    writeStdout(
      format === "json"
        ? jsonText(runs.map(({ path: _, ...r }) => r), 2) + "\n"
        : format === "csv"
        ? [FIELDS, ...runs.map((r) => FIELDS.map((f) => r[f]))]
          .map((l) => l.map(csvField).join(",")).join("\n") + "\n"
        : runsTable(runs),
    );
    return Promise.resolve();
  },
};
