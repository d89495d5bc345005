/**
 * `sciobench read`: times reading an existing file: open, sequential read, random read, cold (a
 * cache drop before each phase) or warm, K times with `--repeat` (the measurement is
 * lib/workloads/read/mod.ts; a library's read runs in the library child).
 * @module
 */
import { IoError } from "../../core/errors.ts";
import { warn } from "../../core/diagnostics.ts";
import { parseSeed } from "../../core/values.ts";
import { parseSize } from "../../core/sizes.ts";
import type { Backend } from "../../backends/backend.ts";
import { directoryOf } from "../../io/atomic.ts";
import { columnHelp } from "../../report/human.ts";
import { Progress } from "../../report/progress.ts";
import type { Row } from "../../report/row.ts";
import { statfs } from "../../sys/libc.ts";
import type { FlagValues } from "../../cli/flags.ts";
import { isolates, relayToTerminal, runIsolated } from "../isolate.ts";
import { chooseBackend } from "../open.ts";
import { parseCache, parseQueue, parseTransfer, repeatOption } from "../settings.ts";
import { ColdReads, queueColumns, readOverlap } from "../transfer.ts";
import type { PlannedRun, Workload, WorkloadHelp } from "../workload.ts";
import { measureRead, READ_COLUMN_DOCS, type ReadSettings } from "./mod.ts";
import { coldEvidence } from "../transfer.ts";

const HELP: WorkloadHelp = {
  title: "time reading an existing file, cold (or warm)",
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
data must also equal what 'sciobench write' writes with the same --seed. With --cache warm
FILE is read through once, untimed, before the open, and nothing is dropped.`,
  after:
    `An HDF5 dataset whose storage was never (or only partly) written is not read (a note says so):
its data would be the fill value, which no device delivers; a file of nothing else is refused.

Columns (CSV order):
${columnHelp(READ_COLUMN_DOCS)}
With --repeat K > 1, the K run rows (stat=run, repeat 1..K) are followed by five summary rows
(stat=mean, median, stddev, min, max; repeat = runs summarised).`,
};

/** The columns that name `read`'s one cell. */
const READ_KEYS = ["framing", "path", "cache"] as const;

/**
 * Reads `path` once with `backend` (in the library child for a peer library) and returns the
 * row; `progress` shows its phases.
 */
async function readOnce(
  path: string,
  backend: Backend,
  options: readonly string[] | undefined,
  settings: ReadSettings,
  progress: Progress,
): Promise<Row> {
  if (!isolates(backend)) {
    return await measureRead(path, backend.name, options, settings, undefined, progress);
  }
  // a library on a file sciobench did not write: measured in the library child
  const { seed, verify, sample, allowExternal, cache } = settings;
  let row: Row | undefined;
  await runIsolated(
    {
      op: "read",
      path,
      framing: backend.name,
      options,
      settings: { seed, verify, sample, allowExternal, cache },
    },
    (m) => {
      if (m.t === "row") row = m.row as Row;
      else relayToTerminal(m);
    },
  );
  if (row === undefined) throw new IoError(`read: the library child returned no result`);
  return row;
}

/** The `read` workload. */
export const readWorkload: Workload<FlagValues<"read">> = {
  name: "read",
  summary: "time reading an existing file (open, sequential, random; cold or warm cache)",
  help: HELP,
  flags: [],
  positionals: ["FILE"],
  columns: READ_COLUMN_DOCS,
  keys: READ_KEYS,
  // the per-phase verdicts stay in the data; the table marks the phases a cache served
  human: READ_COLUMN_DOCS.filter((c) => !/_dev_bytes$|^(open|read|random)_cold_ok$/.test(c.name))
    .map((c) => c.name),
  inputs: (_values, [path]) => [["FILE", path!]],
  plan(values, _args, _output, [path]): PlannedRun {
    const file = path!;
    const seed = parseSeed(values.seed);
    const sample = values.sample === undefined ? Infinity : parseSize(values.sample, "--sample");
    const repeat = repeatOption(values.repeat, undefined);
    const backend = chooseBackend(file, values.framing);
    const transfer = parseTransfer(values, [backend], { file });
    const cache = parseCache(values.cache, values.direct);
    const queue = parseQueue(values, [backend]);
    const settings: ReadSettings = {
      seed,
      verify: values.verify,
      sample,
      transfer,
      allowExternal: values["allow-external"],
      cache,
      queue,
    };
    return {
      openAtFirstRow: true,
      // one file: an updating line on a terminal, nothing in logs
      progress: new Progress({ quiet: !Deno.stderr.isTerminal() }),
      options: {
        framing: backend.name,
        seed,
        verify: values.verify,
        sample,
        option: values.option ?? [],
        bs: transfer?.bs ?? null,
        direct: transfer?.direct ?? false,
        ...queueColumns(queue),
        cache,
        repeat,
      },
      begin(): void {
        const overlapNote = readOverlap(transfer, undefined).note;
        if (values.verify && overlapNote !== undefined) warn(overlapNote);
      },
      async run(add, progress): Promise<void> {
        // cold reads that cannot be trusted: one line, with what to use instead (a row from the
        // library child is judged again here)
        const cold = new ColdReads(directoryOf(file), warn);
        for (let i = 1; i <= repeat; i++) {
          progress.begin(`read ${file}`, repeat > 1 ? { index: i, count: repeat } : undefined);
          const row = await readOnce(file, backend, values.option, settings, progress);
          if (row.cold_ok === false) cold.judge({}, "cold", coldEvidence(row, statfs(file).type));
          // set in place: the row's audit trail is attached to the object
          row.repeat = i;
          row.stat = "run";
          add(row);
        }
      },
    };
  },
};
