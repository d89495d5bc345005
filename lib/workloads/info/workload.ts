/**
 * `sciobench info`: a file's framing, frame count, format facts and every chunk with its CRC-32,
 * as text or one JSON document (its own layouts, streamed), or as rows, one per chunk (csv,
 * jsonl: the file's facts first, among the run's). A peer library reads the file in the library
 * child.
 * @module
 */
import { UsageError } from "../../core/errors.ts";
import { parseChoice } from "../../core/values.ts";
import type { Backend } from "../../backends/backend.ts";
import { writeStdout } from "../../report/output.ts";
import type { Row } from "../../report/row.ts";
import { columnHelp } from "../../report/human.ts";
import type { FlagValues } from "../../cli/flags.ts";
import { isolates, relayToTerminal, runIsolated } from "../isolate.ts";
import { chooseBackend, openUserFile } from "../open.ts";
import type { PlannedRun, Workload, WorkloadHelp } from "../workload.ts";
import {
  checkStrict,
  chunkRow,
  forEachChunk,
  INFO_COLUMN_DOCS,
  infoFacts,
  streamInfo,
} from "./mod.ts";

const HELP: WorkloadHelp = {
  title: "what a file holds",
  intro:
    `Prints the framing, the frame count, format facts, for netCDF files every variable with the
CRC-32 of all its data (records in order), and for every chunk (a named array; formats
without names get generated names such as record/3): frame, name, dtype, shape, offset, bytes and
crc32 (CRC-32 of the chunk's bytes as stored, hex). For peer formats read through a library
(HDF5, netCDF-4, HDF4) the offset is -1 and the CRC is of the data in native byte order.`,
  after:
    `An HDF5 dataset whose storage was never (or only partly) written is listed with its stored bytes
and no CRC, and a note on stderr: its data would be the fill value, not bytes of the file.

With --format csv or jsonl the chunks are rows (columns below; shape's dimensions joined by x);
jsonl puts the run's facts first, and among them (facts) the file's: all that json holds but
the chunks.

Columns (CSV order):
${columnHelp(INFO_COLUMN_DOCS)}`,
};

/** What `info` reads: FILE, with the backend that reads it and the flags that say how. */
interface InfoTarget {
  /** FILE as given. */
  readonly path: string;
  /** The backend that reads it (`--framing`, or detected). */
  readonly backend: Backend;
  /** The flags as parsed. */
  readonly values: FlagValues<"info">;
}

/** The library child's request of `info` on the target, with `settings` beside its own flags. */
function childRequest(t: InfoTarget, settings: { json?: boolean; rows?: boolean }) {
  return {
    op: "info" as const,
    path: t.path,
    framing: t.backend.name,
    options: t.values.option,
    settings: { ...settings, allowExternal: t.values["allow-external"] },
  };
}

/** Prints `info`'s own text or JSON document for the target, streamed as the file is read. */
async function printInfo(t: InfoTarget, json: boolean): Promise<void> {
  const { path, backend, values } = t;
  if (isolates(backend)) {
    await runIsolated(childRequest(t, { json }), relayToTerminal);
    return;
  }
  const source = openUserFile(path, backend.name, values.option, "info", {
    allowExternal: values["allow-external"],
  });
  try {
    if (values.strict) checkStrict(source);
    streamInfo(source, json, writeStdout);
  } finally {
    source.close();
  }
}

/**
 * Hands the target's facts to `facts`, then each chunk as a row to `add` (a peer library's
 * through the library child).
 */
async function infoRows(
  t: InfoTarget,
  facts: (f: Record<string, unknown>) => void,
  add: (row: Row) => void,
): Promise<void> {
  const { path, backend, values } = t;
  if (isolates(backend)) {
    await runIsolated(childRequest(t, { rows: true }), (m) => {
      if (m.t === "facts") facts(m.facts);
      else if (m.t === "row") add(m.row as Row);
      else relayToTerminal(m);
    });
    return;
  }
  const source = openUserFile(path, backend.name, values.option, "info", {
    allowExternal: values["allow-external"],
  });
  try {
    if (values.strict) checkStrict(source);
    facts(infoFacts(source));
    forEachChunk(source, (c) => add(chunkRow(c)));
  } finally {
    source.close();
  }
}

/** The `info` workload. */
export const infoWorkload: Workload<FlagValues<"info">> = {
  name: "info",
  summary: "list a file's framing, frames and chunks with CRC-32",
  help: HELP,
  flags: [],
  positionals: ["FILE"],
  columns: INFO_COLUMN_DOCS,
  keys: [],
  human: INFO_COLUMN_DOCS.map((c) => c.name),
  outputFormat(values): string {
    // text wherever the output goes: info's table is its own listing, not an aligned table
    const format = values.format ?? (values.json ? "json" : "table");
    if (values.json && format !== "json") {
      const shown = parseChoice(format, ["table", "csv", "json", "jsonl"], "--format");
      throw new UsageError(`info: --json and --format ${shown} disagree; --json is --format json`);
    }
    return format;
  },
  inputs: (_values, [path]) => [["FILE", path!]],
  plan(values, _args, { format }, [path]): PlannedRun {
    const target: InfoTarget = {
      path: path!,
      backend: chooseBackend(path!, values.framing),
      values,
    };
    if (format === "table" || format === "json") {
      return { ownOutput: true, options: {}, run: () => printInfo(target, format === "json") };
    }
    let facts: Record<string, unknown> | undefined;
    return {
      openAtFirstRow: true,
      options: {
        framing: target.backend.name,
        option: values.option ?? [],
        strict: values.strict,
        "allow_external": values["allow-external"],
      },
      get facts() {
        return facts;
      },
      run: (add) => infoRows(target, (f) => facts = f, add),
    };
  },
};
