/**
 * `sciobench read`: times reading an existing file cold: open, sequential read, random read (the
 * measurement is lib/workloads/read.ts; a library's read runs in the library child).
 * @module
 */
import { IoError, UsageError } from "../core/errors.ts";
import { warn } from "../core/diagnostics.ts";
import { ColdReads, readOverlap } from "../workloads/transfer.ts";
import { directoryOf } from "../io/atomic.ts";
import type { Row } from "../report/row.ts";
import { statfs } from "../sys/libc.ts";
import { parseSeed } from "../core/values.ts";
import { parseSize } from "../core/sizes.ts";
import type { Command } from "./command.ts";
import { parseFlags } from "./parse_flags.ts";
import { commandHelp } from "./help.ts";
import { checkOutputFormat, checkOutputsApart, checkPlotPath, openResults } from "./output.ts";
import { parseTransfer } from "../workloads/settings.ts";
import { columnHelp } from "../report/human.ts";
import { isolates, relayToTerminal, runIsolated } from "./isolate.ts";
import { chooseBackend } from "../workloads/open.ts";
import {
  coldEvidence,
  measureRead,
  READ_COLUMN_DOCS as COLUMNS,
  type ReadSettings,
} from "../workloads/read.ts";

const HELP = () =>
  commandHelp("read", {
    title: "time reading an existing file, cold",
    usage: "[options] FILE",
    intro:
      `Drops FILE from the page cache (posix_fadvise; FILE is not modified), times the open, drops
again (an f77 or IEEEIO open scans the file), reads every frame in order, drops again, reads
every frame in a seeded random order, and prints one row (with --sample, a sample of the frames
in each phase). A file without frames (HDF5 datasets, netCDF-4 without an unlimited dimension)
is read by dataset instead: every numeric dataset whole in file order, then seeded random units
(one HDF5 chunk of a chunked dataset, else a block of about 1 MiB along the slowest dimension),
each checked against the CRC-32 of a first, untimed read (verified is then true); the column
unit says which unit was timed (frame, chunk, block or chunk+block) and random_units how many.
The format's own checks run on every read (markers, sizes, index bounds). With --verify the
data must also equal what 'sciobench write' writes with the same --seed.`,
    after:
      `An HDF5 dataset whose storage was never (or only partly) written is not read (a note says so):
its data would be the fill value, which no device delivers; a file of nothing else is refused.

Columns (CSV order):
${columnHelp(COLUMNS)}`,
  });

/** The `read` subcommand. */
export const readCommand: Command = {
  name: "read",
  summary: "time reading an existing file (open, sequential, random; cold cache)",
  get help(): string {
    return HELP();
  },
  async run(args: string[]): Promise<void> {
    const { values, positionals } = parseFlags("read", args, true);
    if (positionals.length !== 1) {
      throw new UsageError("read: give exactly one FILE (see 'sciobench read --help')");
    }
    const path = positionals[0]!;
    checkOutputsApart(values, [["FILE", path]]);
    const seed = parseSeed(values.seed);
    const sample = values.sample === undefined ? Infinity : parseSize(values.sample, "--sample");
    checkOutputFormat(values, false);
    checkPlotPath("read", undefined, values.plot, values.force);
    const backend = chooseBackend(path, values.framing);
    const transfer = parseTransfer(values, [backend], { file: path });
    const overlapNote = readOverlap(transfer, undefined).note;
    if (values.verify && overlapNote !== undefined) warn(overlapNote);
    const allowExternal = values["allow-external"];
    const settings: ReadSettings = { seed, verify: values.verify, sample, transfer, allowExternal };
    let row: Row | undefined;
    if (isolates(backend)) {
      // A library on a file sciobench did not write: measured in the library child.
      await runIsolated(
        {
          op: "read",
          path,
          framing: backend.name,
          options: values.option,
          settings: { seed, verify: values.verify, sample, allowExternal },
        },
        (m) => {
          if (m.t === "row") row = m.row as Row;
          else relayToTerminal(m);
        },
      );
      if (row === undefined) throw new IoError(`read: the library child returned no result`);
    } else {
      row = await measureRead(path, backend.name, values.option, settings);
    }
    // cold reads that cannot be trusted: one line, with what to use instead (the row may come
    // from the library child: its evidence is judged again here)
    if (row.cold_ok === false) {
      new ColdReads(directoryOf(path), warn).judge(
        {},
        "cold",
        coldEvidence(row, statfs(path).type),
      );
    }
    const out = openResults({
      command: "read",
      args,
      inputs: [["FILE", path]],
      columns: COLUMNS,
      human: COLUMNS.filter((c) => !c.name.endsWith("_dev_bytes")).map((c) => c.name),
      options: {
        framing: backend.name,
        seed,
        verify: values.verify,
        sample,
        option: values.option ?? [],
        bs: transfer?.bs ?? null,
        direct: transfer?.direct ?? false,
      },
    }, values);
    out.add(row);
    await out.finish();
  },
};
