/**
 * `sciobench loader`: reads random samples (frames) of a file in batches, as a training loop's
 * data loader does, epoch after epoch: the file it writes first (--framing, --size, --n), or the
 * user's (--file). The measurement is lib/workloads/loader/mod.ts.
 * @module
 */
import { UsageError } from "../../core/errors.ts";
import { selfCommand } from "../../core/self.ts";
import { parseChoice, parseCount, parseSeed } from "../../core/values.ts";
import { parseSize } from "../../core/sizes.ts";
import type { Backend, QueueSpec } from "../../backends/backend.ts";
import { usableBackend } from "../../backends/registry.ts";
import { directReadRefusal } from "../../backends/capabilities.ts";
import { warn } from "../../core/diagnostics.ts";
import { writeFrames } from "../../backends/write.ts";
import { parseOptionArgs } from "../../framings/options.ts";
import { withScratchDir } from "../../io/scratch.ts";
import { columnHelp } from "../../report/human.ts";
import { Progress } from "../../report/progress.ts";
import type { FlagValues } from "../../cli/flags.ts";
import type { Row } from "../../report/row.ts";
import { checkScratchRoom } from "../checks.ts";
import { chooseBackend } from "../open.ts";
import { parseQueue, parseTransfer, resolveBackends } from "../settings.ts";
import type { Transfer } from "../../io/transfer.ts";
import { BYTES_PER_PARTICLE, TableFrames } from "../table/mod.ts";
import { LOADER_DEFAULTS } from "../seeds.ts";
import type { PlannedRun, Workload, WorkloadHelp } from "../workload.ts";
import { LOADER_COLUMN_DOCS, LOADER_HUMAN_COLUMNS, LOADER_KEYS } from "./columns.ts";
import {
  type Access,
  ACCESSES,
  batchesPerEpoch,
  epochCount,
  type LoaderSettings,
  runLoader,
  SAMPLINGS,
} from "./mod.ts";
import type { LoaderOpen } from "./open.ts";
import { LOADER_PREFETCH, LOADER_READER_COMMAND, MAX_LOADER_READERS } from "./readers.ts";

const HELP: WorkloadHelp = {
  title: "read random samples of a file in batches, as a training loop does",
  intro: `Writes a file of the table's frames (--framing, --size, --n; removed at the end), or takes
yours (--file), and reads it epoch after epoch in batches of --samples-per-batch samples, a
sample being one frame found through the format's own index (gsd frames, netCDF records,
Fortran records, IEEEIO datasets, raw frames; HDF5 and netCDF-4 through their libraries). Each
epoch reads a new seeded permutation of every frame (--sample shuffle) or as many seeded draws
with replacement (--sample random). The first epoch starts cold (the file dropped from the page
cache), the later ones from whatever the cache holds (cache: as left). With --compute MS each
batch is followed by MS milliseconds of busy-wait, a training step, and accel_util says how much
of the time the "accelerator" computed rather than waited for data (as DLIO). Every sample of a
file the loader wrote is checked against the data written; a user's file by the format's own
checks (markers, sizes, index bounds), and with --verify against what 'sciobench write --seed S'
writes. Samples are read one at a time, or with --iodepth N each batch's samples up to N in
flight, and with --direct through O_DIRECT (cache: direct, no drop), --bs SIZE in reads of SIZE
(native framings and --access direct).

An HDF5 or netCDF-4 file (--framing hdf5 or netcdf4, or your --file) is read through its
library one sample at a time (--access library, the default), or directly (--access direct):
the HDF5 library is asked once, at the open, where each frame's chunks lie
(H5Dget_chunk_info_by_coord; for your --file first in a library child, so a damaged file is one
line and exit 2) and closed, then sciobench reads those bytes itself, as it reads
a native framing's (--iodepth, --engine, --direct), and verifies them the same way. Only a
dataset stored in chunks of whole frames without filters can be read so: a compressed (or
shuffled, checksummed) one is refused in one line. --access library,direct reads the same file
both ways, each its own rows per epoch (column access), each from a cold first epoch; beside
direct rows the library's run at depth 1 (it reads one sample at a time) and through the page
cache, and the rows say so.

With --readers K above 1, K reader processes read the batches, as the worker processes of
PyTorch's DataLoader (DLIO's read_threads): each opens the file itself, as --access says,
reads whole batches with the run's --iodepth, --engine, --bs and --direct, batch b of an epoch
by reader b mod K, and reads up to ${LOADER_PREFETCH} batches ahead of the consumer (DataLoader's
prefetch_factor), never into the next epoch; the consumer takes the batches in order and runs
--compute. A batch's latency and load_s are then the consumer's wait for the batch; user_s,
sys_s and dev_read_bytes add the readers' own, and the audit trail lists each reader's epoch.
--readers 1 (the default): the consumer reads each batch itself when it needs it, nothing
ahead.`,
  after: `Columns (CSV order), one row per epoch:
${columnHelp(LOADER_COLUMN_DOCS)}`,
};

/** The settings of a run from its flags (each checked; UsageError naming the flag). */
function loaderSettings(values: FlagValues<"loader">): LoaderSettings {
  if (values.batches !== undefined && values.epochs !== undefined) {
    throw new UsageError("loader: give --batches or --epochs, not both");
  }
  const compute = values.compute === undefined ? 0 : Number(values.compute);
  if (!(compute >= 0 && compute <= 3.6e6) || values.compute?.trim() === "") {
    throw new UsageError(
      `bad --compute '${values.compute}': expected milliseconds from 0 to 3600000, such as 5 or 0.5`,
    );
  }
  return {
    seed: parseSeed(values.seed),
    batchSize: parseCount(values["samples-per-batch"], "--samples-per-batch"),
    epochs: parseCount(values.epochs ?? String(LOADER_DEFAULTS.epochs), "--epochs", 100000),
    batches: values.batches === undefined ? undefined : parseCount(values.batches, "--batches"),
    sampling: parseChoice(values.sample, SAMPLINGS, "--sample"),
    computeMs: compute,
    readers: parseCount(
      values.readers ?? String(LOADER_DEFAULTS.readers),
      "--readers",
      MAX_LOADER_READERS,
    ),
    // the framing is known once the file is: one read through a library is refused at the start
    queue: parseQueue(values, []),
    transfer: parseTransfer(
      values,
      [],
      values.file === undefined ? values.dir : { file: values.file },
    ),
  };
}

/** Starts one reader process: this program again as `sciobench loader _reader`. */
function selfReader(): Deno.ChildProcess {
  const self = selfCommand();
  return new Deno.Command(self.cmd, {
    args: [...self.args, "loader", LOADER_READER_COMMAND],
    stdin: "piped",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
}

/** The read paths `--access` lists (each once, in its order); undefined when not given. */
function accessesOf(value: string | undefined): Access[] | undefined {
  if (value === undefined) return undefined;
  const items = value.split(",").map((v) => v.trim());
  return [...new Set(items)].map((v) => parseChoice(v, ACCESSES, "--access"));
}

/**
 * How the files of `backend` are read: the `asked` read paths, checked against what it can
 * (UsageError, one line), else its usual one (native framings: native; peers: library).
 */
function pathsFor(backend: Backend, asked: readonly Access[] | undefined): Access[] {
  if (asked === undefined) return [backend.kind === "native" ? "native" : "library"];
  if (backend.kind === "native") {
    throw new UsageError(
      `--access: ${backend.name} is read by sciobench's own reads through its own index ` +
        "(access native); --access chooses how HDF5 and netCDF-4 files are read",
    );
  }
  const why = asked.includes("direct") ? directReadRefusal(backend) : null;
  if (why !== null) throw new UsageError(`--access direct: ${why}`);
  return [...asked];
}

/**
 * The queue of the rows of `access` among `paths`: the library reads one sample at a time, so
 * beside direct rows its rows run without the queue (engine psync, iodepth 1), saying so once;
 * alone, the loader refuses the queue to it in one line.
 */
function queueFor(
  access: Access,
  paths: readonly Access[],
  queue: QueueSpec | undefined,
): QueueSpec | undefined {
  if (queue === undefined || access !== "library" || paths.length === 1) return queue;
  warn(
    `--iodepth ${queue.depth}: the library reads one sample at a time: its rows read at ` +
      "iodepth 1 (engine psync), the direct rows at the depth asked",
  );
  return undefined;
}

/**
 * The `--bs` / `--direct` of the rows of `access` among `accesses`: beside direct rows, the
 * library's read through the page cache (a library makes its own calls), saying so once; alone,
 * its reader refuses them in one line.
 */
function transferFor(
  access: Access,
  accesses: readonly Access[],
  transfer: Transfer | undefined,
): Transfer | undefined {
  if (transfer === undefined || access !== "library" || accesses.length === 1) return transfer;
  warn(
    `${transfer.direct ? "--direct" : "--bs"}: the library makes its own calls: its rows read ` +
      "through the page cache (cold first), the direct rows as asked",
  );
  return undefined;
}

/** The one backend of `--framing` for the file the loader writes (a file, not a store). */
function writingBackend(framing: string): Backend {
  const { run, skipped } = resolveBackends(framing);
  // a missing peer: its own one-line error
  for (const s of skipped) usableBackend(s.name);
  if (run.length !== 1) {
    throw new UsageError(`loader: --framing takes one framing, not '${framing}'`);
  }
  const backend = run[0]!;
  if (backend.store !== undefined) {
    throw new UsageError(
      `loader: --framing ${backend.name} writes a store of files; give a framing of one file`,
    );
  }
  return backend;
}

/**
 * One loader run per read path of `paths`, each opened as `openOf` says with the `--bs` /
 * `--direct` and the queue that path reads with (see {@link transferFor}, {@link queueFor}).
 */
async function runPaths(
  paths: readonly Access[],
  settings: LoaderSettings,
  add: (row: Row) => void,
  progress: Progress,
  openOf: (access: Access, transfer: Transfer | undefined) => LoaderOpen,
): Promise<void> {
  for (const access of paths) {
    const transfer = transferFor(access, paths, settings.transfer);
    const queue = queueFor(access, paths, settings.queue);
    const open = openOf(access, transfer);
    await runLoader(open, { ...settings, queue, transfer }, add, progress, selfReader);
  }
}

/** The resolved options of a run, for the JSON meta and the plan (option names as flags). */
function runOptions(
  settings: LoaderSettings,
  option: readonly string[] | undefined,
  accesses: readonly Access[] | undefined,
): Record<string, unknown> {
  return {
    access: accesses ?? null,
    seed: settings.seed,
    "samples-per-batch": settings.batchSize,
    epochs: settings.batches === undefined ? settings.epochs : null,
    batches: settings.batches ?? null,
    sample: settings.sampling,
    compute: settings.computeMs,
    readers: settings.readers,
    bs: settings.transfer?.bs ?? null,
    direct: settings.transfer?.direct ?? false,
    option: option ?? [],
  };
}

/** The `loader` workload. */
export const loaderWorkload: Workload<FlagValues<"loader">> = {
  name: "loader",
  summary: "read random samples of a file in batches, epoch after epoch (a training loop)",
  help: HELP,
  flags: [],
  columns: LOADER_COLUMN_DOCS,
  keys: LOADER_KEYS,
  human: LOADER_HUMAN_COLUMNS,
  inputs: (values) => values.file === undefined ? [] : [["--file", values.file]],
  plan(values): PlannedRun {
    const settings = loaderSettings(values);
    const progress = new Progress({ quiet: !Deno.stderr.isTerminal() });
    const userFile = values.file;
    const asked = accessesOf(values.access);
    const options = runOptions(settings, values.option, asked);
    if (userFile !== undefined) {
      for (const f of ["size", "n", "dir"] as const) {
        if (values[f] !== undefined) {
          throw new UsageError(
            `loader: --${f} is for the file the loader writes; --file reads yours`,
          );
        }
      }
      const framing = values.framing;
      return {
        openAtFirstRow: true,
        progress,
        options: { ...options, file: userFile, framing: framing ?? null, verify: values.verify },
        async run(add, progress): Promise<void> {
          const paths = pathsFor(chooseBackend(userFile, framing), asked);
          await runPaths(paths, settings, add, progress, (access, transfer) => ({
            kind: "user",
            path: userFile,
            framing,
            options: values.option,
            verify: values.verify,
            seed: settings.seed,
            access,
            transfer,
          }));
        },
      };
    }
    if (values.verify) {
      throw new UsageError(
        "loader: --verify is for --file (a file the loader writes is always checked)",
      );
    }
    const backend = writingBackend(values.framing ?? LOADER_DEFAULTS.framing);
    const n = parseCount(values.n ?? LOADER_DEFAULTS.n, "--n");
    const size = parseSize(values.size ?? LOADER_DEFAULTS.size, "--size");
    const frames = Math.max(1, Math.ceil(size / (BYTES_PER_PARTICLE * n)));
    const dataBytes = frames * BYTES_PER_PARTICLE * n;
    const backendOptions = parseOptionArgs([backend], values.option, "write").get(backend.name)!;
    const paths = pathsFor(backend, asked);
    const epochs = epochCount(frames, settings);
    const samples = settings.batches === undefined
      ? epochs * frames
      : Math.min(settings.batches * settings.batchSize, epochs * frames);
    checkScratchRoom(
      values.dir,
      dataBytes,
      `a file of ${frames} frames of ${n} particles`,
      "use a smaller --size or another --dir",
    );
    const name = `loader.${backend.name}`;
    return {
      plan: {
        command: "loader",
        parameters: {
          ...options,
          framing: backend.name,
          frames,
          n,
          "batches-per-epoch": batchesPerEpoch(frames, settings.batchSize),
        },
        backends: [{ name: backend.name }],
        skipped: [],
        files: [{ name, count: 1, bytes: dataBytes }],
        writeBytes: dataBytes,
        readBytes: paths.length * samples * BYTES_PER_PARTICLE * n,
        warnings: [],
      },
      dir: values.dir,
      progress,
      options: { ...options, framing: backend.name, size, n },
      async run(add, progress): Promise<void> {
        await withScratchDir(values.dir, async (dir) => {
          const path = `${dir}/${name}`;
          const expected = new TableFrames(n, settings.seed);
          progress.begin(`loader: writing ${path}`);
          await writeFrames(
            backend,
            path,
            { create: "new", fsync: "end", backendOptions },
            frames,
            (i) => expected.frame(i),
          );
          await runPaths(paths, settings, add, progress, (access, transfer) => ({
            kind: "written",
            path,
            framing: backend.name,
            options: values.option,
            n,
            seed: settings.seed,
            access,
            transfer,
          }));
        });
      },
    };
  },
};
