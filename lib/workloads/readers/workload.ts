/**
 * `sciobench readers`: the Packman workload, 1..7 simultaneous reader processes of one shared
 * file or of one file each (lib/workloads/readers/mod.ts). The reader processes are this same
 * program run again with the hidden `sciobench readers _reader FILE ...`, never a shell.
 * @module
 */
import { NATIVE_ORDER } from "../../bytes/byteswap.ts";
import { UsageError } from "../../core/errors.ts";
import { backendByName, usableBackend } from "../../backends/registry.ts";
import { recordFileBytes } from "../../backends/capabilities.ts";
import type { EndianOption, OptionValue } from "../../framings/types.ts";
import type { Backend, QueueSpec } from "../../backends/backend.ts";
import type { Transfer } from "../../io/transfer.ts";
import { optionOrDefault, type OptionValues } from "../../framings/options.ts";
import { world } from "../../mpi/world.ts";
import { fortranProgram, gfortranUnavailable } from "../../baselines/gfortran/compile.ts";
import { columnHelp } from "../../report/human.ts";
import {
  type CacheState,
  packmanPattern,
  READERS_AGGREGATE,
  READERS_CHART,
  READERS_COLUMN_DOCS,
  READERS_HUMAN_COLUMNS,
  READERS_KEYS,
  type ReadersMode,
  runReaders,
} from "./mod.ts";
import { READERS_QUICK, READERS_SEED } from "../seeds.ts";
import { parseChoice, parseCount, parseIntegers, parseList, parseSeed } from "../../core/values.ts";
import type { PlannedFile, PlannedRun, RunPlan, Workload, WorkloadHelp } from "../workload.ts";
import { requireFile } from "../open.ts";
import { selfCommand } from "../../core/self.ts";
import { checkMemory, checkScratchRoom } from "../checks.ts";
import type { FlagValues } from "../../cli/flags.ts";
import { rankColumnDocs } from "../columns.ts";
import {
  backendOptionArgs,
  parseEndian,
  parseQueue,
  parseTransfer,
  repeatOption,
} from "../settings.ts";
import { queueColumns } from "../transfer.ts";

const HELP: WorkloadHelp = {
  title: "simultaneous readers of one shared file vs one file each (Packman 1990)",
  intro:
    `For each cache state, mode and process count: write the file(s) (--records records of --length
doubles; record i holds a seeded pattern with i in its last element, as Packman's wr), drop them
from the page cache (cold) or read them once (warm), start that many reader processes, release
them together once all have loaded, and let each read every record and check it (the seed's
a(n) = i, and the pattern). One row per (mode, procs); the reader column says which program read.

The readers are the seed's own: Packman's rd, compiled by gfortran (once, into
~/.cache/sciobench/gfortran, keyed by compiler version and source hash) where gfortran is
installed, else this program again (never a shell).`,
  after: `Columns (CSV order):
${columnHelp(READERS_COLUMN_DOCS)}
With --repeat K > 1, five summary rows per (cache, mode, procs) follow: stat = mean, median,
stddev, min, max.
Under MPI (mpirun, srun) the ranks are the readers instead of child processes: --procs is not
used, each rank reads in-process, released by a barrier; wall_s runs from the barrier to the
last rank's end. The row adds ranks, rank (all), host (the node count) and read_path (the shared
file, else empty); its audit trail lists each rank's read as a process with its rank and host.
With --per-rank each rank's row follows (procs = ranks): its wall_s from the barrier, its own
mean_s, min_s and max_s, its host, file and audit trail (write and read).`,
};

/** Most reader processes one row may start at once. */
const MAX_READER_PROCS = 256;

/** The plan of a readers run: per (cache, mode, procs) the file(s) written, then read by each reader. */
function readersPlan(p: {
  reader: string;
  file?: string;
  backend: string;
  endian: string;
  procs: readonly number[];
  modes: readonly ReadersMode[];
  caches: readonly CacheState[];
  records: number;
  length: number;
  seed: number;
  options: Readonly<Record<string, unknown>>;
}): RunPlan {
  const fileBytes = p.records * recordFileBytes(backendByName(p.backend), p.length * 8, p.options);
  let writeBytes = 0;
  let readBytes = 0;
  const files: PlannedFile[] = [];
  for (const mode of p.modes) {
    const count = p.caches.length *
      p.procs.reduce((a, n) => a + (mode === "shared" ? 1 : n), 0);
    if (p.file === undefined) {
      files.push({ name: `${mode}-K.${p.backend}`, count, bytes: fileBytes });
      writeBytes += count * fileBytes;
    }
    readBytes += p.caches.length * p.procs.reduce((a, n) => a + n, 0) * fileBytes;
  }
  return {
    command: "readers",
    parameters: {
      procs: p.procs,
      mode: p.modes,
      cache: p.caches,
      records: p.records,
      length: p.length,
      record_bytes: p.length * 8,
      framing: p.backend,
      endian: p.endian,
      seed: p.seed,
      reader: p.reader,
      file: p.file ?? null,
      option: p.options,
    },
    backends: [{ name: p.backend, endian: p.endian }],
    skipped: [],
    files,
    writeBytes,
    readBytes,
    warnings: [],
  };
}

/**
 * Records and doubles per record of a user's Fortran file (`--file`): 4-byte native markers,
 * every record the same length, as Packman's. UsageError otherwise.
 */
function packmanFileShape(path: string): { records: number; length: number } {
  let size: number;
  const head = new Uint8Array(4);
  try {
    const f = Deno.openSync(path, { read: true });
    try {
      size = f.statSync().size;
      f.readSync(head);
    } finally {
      f.close();
    }
  } catch (e) {
    throw new UsageError(`readers --file ${path}: ${e instanceof Error ? e.message : String(e)}`);
  }
  const payload = new DataView(head.buffer).getInt32(0, NATIVE_ORDER === "little");
  if (payload <= 0 || payload % 8 !== 0 || size % (payload + 8) !== 0) {
    throw new UsageError(
      `readers --file ${path}: not a file of equal records of doubles with 4-byte markers ` +
        `(first marker ${payload}, ${size} bytes)`,
    );
  }
  return { records: size / (payload + 8), length: payload / 8 };
}

/**
 * Which program reads: gfortran's `rd` (the seed's own reader) by default where gfortran is
 * installed and the file is what it reads (f77, native order, 4-byte markers), else sciobench's
 * reader; `note` says why when the default fell back.
 */
function chooseReader(
  asked: string | undefined,
  f: { framing: string; endian: string; backendOptions: OptionValues; file?: string },
): { name: "gfortran" | "sciobench"; note: string | null } {
  const name = asked === undefined
    ? undefined
    : parseChoice(asked, ["gfortran", "sciobench"] as const, "--reader");
  const marker = optionOrDefault(backendByName(f.framing), f.backendOptions, "marker");
  const extra = Object.keys(f.backendOptions).filter((k) => k !== "marker");
  const why = gfortranUnavailable() ??
    (world().size > 1
      ? "under MPI the ranks read in-process"
      : f.framing !== "f77"
      ? `rd reads Fortran files, not ${f.framing}`
      : f.endian !== "native" && f.endian !== NATIVE_ORDER
      ? "rd reads native-endian files"
      : marker !== 4 || extra.length > 0
      ? "rd reads 4-byte markers without other options"
      : null);
  if (name === "gfortran" && why !== null) throw new UsageError(`--reader gfortran: ${why}`);
  if (f.file !== undefined) {
    if (name === "sciobench") {
      throw new UsageError(
        "readers --file: sciobench's reader checks its own pattern; use --reader gfortran",
      );
    }
    if (why !== null) throw new UsageError(`readers --file needs gfortran's rd: ${why}`);
  }
  if (name !== undefined) return { name, note: null };
  return why === null
    ? { name: "gfortran", note: null }
    : { name: "sciobench", note: `readers: sciobench's reader (not gfortran's rd: ${why})` };
}

/**
 * Starts gfortran-compiled `rd` processes (compiled once, before any timing). Each gets the
 * expected pattern of its file (n-1 doubles, written beside the data) so it checks every element
 * as well as the seed's a(n) = i; without `patterns` (a user's file) only a(n) = i.
 */
function gfortranLauncher(
  records: number,
  length: number,
  seed: number,
  patterns: boolean,
): (path: string, fileIndex: number) => Deno.ChildProcess {
  const rd = fortranProgram("rd");
  const written = new Set<string>();
  return (path, fileIndex) => {
    const args = [path, String(records), String(length)];
    if (patterns) {
      const pattern = `${path.slice(0, path.lastIndexOf("/") + 1)}pattern-${fileIndex}.f64`;
      // Written once per file index: a reader started earlier may be loading it right now.
      if (!written.has(pattern)) {
        const p = packmanPattern(length, seed, fileIndex).subarray(0, length - 1);
        Deno.writeFileSync(pattern, new Uint8Array(p.buffer, p.byteOffset, p.byteLength));
        written.add(pattern);
      }
      args.push(pattern);
    }
    return new Deno.Command(rd, { args, stdin: "piped", stdout: "piped", stderr: "piped" })
      .spawn();
  };
}

/** What a readers run measures: the process counts, modes and cache states, and the records. */
interface ReadersCells {
  readonly procs: readonly number[];
  readonly modes: readonly ReadersMode[];
  readonly caches: readonly CacheState[];
  readonly records: number;
  readonly length: number;
  readonly seed: number;
  readonly endian: EndianOption;
  readonly repeat: number;
}

/**
 * The cells of a readers run, checked in this order: `--procs`, `--mode` (`shared` only with a
 * user's `--file`), `--cache` (not `warm` with `--direct`), the file's shape (a user's `--file`,
 * which must exist) or `--records` and `--length`, `--seed`, `--endian`, `--repeat`.
 */
function readersCells(values: FlagValues<"readers">): ReadersCells {
  const procs = parseIntegers(
    values.procs ?? (values.quick ? READERS_QUICK.procs : READERS_SEED.procs),
    "--procs",
    1,
    MAX_READER_PROCS,
  );
  const userFile = values.file;
  const modes = parseList(
    userFile !== undefined ? "shared" : values.mode ?? READERS_SEED.mode,
    "--mode",
  ).map((m) => parseChoice(m, ["shared", "separate"] as const, "--mode") as ReadersMode);
  if (userFile !== undefined && values.mode !== undefined && values.mode !== "shared") {
    throw new UsageError("readers --file reads one file: --mode shared only");
  }
  const caches = parseList(values.cache, "--cache").map((c) =>
    parseChoice(c, ["cold", "warm"] as const, "--cache") as CacheState
  );
  if (values.direct && caches.includes("warm")) {
    throw new UsageError(
      "--direct reads bypass the page cache: --cache warm means nothing with it",
    );
  }
  if (userFile !== undefined) requireFile(userFile); // and rolls back a killed append to it
  const shape = userFile !== undefined ? packmanFileShape(userFile) : undefined;
  const records = shape?.records ?? parseCount(values.records, "--records");
  const length = shape?.length ?? parseCount(values.length, "--length");
  const seed = parseSeed(values.seed);
  const endian = parseEndian(values.endian);
  const repeat = repeatOption(values.repeat, undefined);
  return { procs, modes, caches, records, length, seed, endian, repeat };
}

/** The backend of `--framing` with its `--option`s; UsageError when it cannot write `endian`. */
function readersBackend(
  values: FlagValues<"readers">,
  endian: EndianOption,
): { backend: Backend; backendOptions: OptionValues } {
  const backend = usableBackend(values.framing);
  const backendOptions = backendOptionArgs(backend, values.option, "readers");
  if (!backend.orders.includes(endian === "native" ? NATIVE_ORDER : endian)) {
    throw new UsageError(
      `readers: backend '${backend.name}' cannot write ${endian}-endian files`,
    );
  }
  return { backend, backendOptions };
}

/**
 * What sciobench's reader processes are told: the readers know what was written, so record
 * markers are not detected (it would double-scan Packman's file), the writer's (its declared
 * default when not given) are named; the byte order is given, `--bs` and `--direct`, and
 * `--iodepth` and `--engine` (the engine that runs here, psync where the kernel refused another).
 */
function readerArgs(
  backend: Backend,
  backendOptions: OptionValues,
  endian: EndianOption,
  transfer: Transfer | undefined,
  queue: QueueSpec | undefined,
): { readerOptions: Record<string, OptionValue>; childOptions: string[] } {
  const marker = optionOrDefault(backend, backendOptions, "marker") as OptionValue | undefined;
  const readerOptions: Record<string, OptionValue> = marker === undefined
    ? { ...backendOptions }
    : { marker, ...backendOptions };
  const childOptions = [
    ...["--endian", endian === "native" ? NATIVE_ORDER : endian],
    ...(transfer?.readAhead ? ["--bs", String(transfer.bs)] : []),
    ...(transfer?.direct ? ["--direct"] : []),
    ...(queue ? ["--iodepth", String(queue.depth), "--engine", queue.engine] : []),
    ...Object.entries(readerOptions).flatMap(([k, v]) => ["--option", `${k}=${String(v)}`]),
  ];
  return { readerOptions, childOptions };
}

/** Starts sciobench's own reader processes: this program again as `readers _reader FILE ...`. */
function selfLauncher(
  backend: Backend,
  cells: ReadersCells,
  childOptions: readonly string[],
): (path: string, fileIndex: number) => Deno.ChildProcess {
  const self = selfCommand();
  return (path: string, fileIndex: number) =>
    new Deno.Command(self.cmd, {
      args: [
        ...self.args,
        "readers",
        "_reader",
        path,
        "--framing",
        backend.name,
        "--records",
        String(cells.records),
        "--length",
        String(cells.length),
        "--seed",
        String(cells.seed),
        "--file-index",
        String(fileIndex),
        ...childOptions,
      ],
      stdin: "piped",
      stdout: "piped",
      stderr: "piped",
    }).spawn();
}

/** Everything a checked readers run needs beside its cells. */
interface ReadersRunParts {
  readonly backend: Backend;
  readonly backendOptions: OptionValues;
  readonly reader: { name: "gfortran" | "sciobench"; note: string | null };
  readonly transfer: Transfer | undefined;
  readonly queue: QueueSpec | undefined;
}

/** The planned readers run: its output's shape, the meta's options, and its run. */
function readersRun(
  values: FlagValues<"readers">,
  cells: ReadersCells,
  plan: RunPlan,
  parts: ReadersRunParts,
): PlannedRun {
  const { backend, backendOptions, reader, transfer, queue } = parts;
  const { endian, records, length, seed, repeat } = cells;
  const userFile = values.file;
  const { readerOptions, childOptions } = readerArgs(
    backend,
    backendOptions,
    endian,
    transfer,
    queue,
  );
  let launch: (path: string, fileIndex: number) => Deno.ChildProcess = () => {
    throw new Error("readers: the reader processes are started only after begin()");
  };
  return {
    plan,
    notes: reader.note === null ? [] : [reader.note],
    dir: values.dir,
    columns: rankColumnDocs(READERS_COLUMN_DOCS, READERS_AGGREGATE, ["read_path"]),
    options: {
      procs: cells.procs,
      mode: cells.modes,
      cache: cells.caches,
      records,
      length,
      framing: backend.name,
      seed,
      endian,
      option: backendOptions,
      repeat,
      bs: transfer?.bs ?? null,
      direct: transfer?.direct ?? false,
      ...queueColumns(queue),
      ...(world().size > 1 ? { per_rank: values["per-rank"] } : {}),
      dir: values.dir ?? ".",
    },
    begin(): void {
      // gfortran's rd is compiled here, once, before any timing (never for a dry run)
      launch = reader.name === "gfortran"
        ? gfortranLauncher(records, length, seed, userFile === undefined)
        : selfLauncher(backend, cells, childOptions);
    },
    run: (add, progress) =>
      runReaders(
        {
          backend,
          ...cells,
          backendOptions,
          dir: values.dir,
          progress,
          launch,
          readerOptions,
          reader: reader.name,
          file: userFile,
          repeat,
          transfer,
          queue,
          perRank: values["per-rank"],
        },
        add,
      ),
  };
}

/** The `readers` workload. */
export const readersWorkload: Workload<FlagValues<"readers">> = {
  name: "readers",
  summary: "simultaneous reader processes of one shared file vs one file each (Packman 1990)",
  help: HELP,
  flags: [],
  columns: READERS_COLUMN_DOCS,
  keys: READERS_KEYS,
  aggregate: READERS_AGGREGATE,
  human: READERS_HUMAN_COLUMNS,
  chart: READERS_CHART,
  inputs: (values) => values.file === undefined ? [] : [["--file", values.file]],
  plan(values): PlannedRun {
    const cells = readersCells(values);
    const { procs, modes, records, length } = cells;
    const userFile = values.file;
    const { backend, backendOptions } = readersBackend(values, cells.endian);
    // reads in flight: none at --iodepth 1 without --engine, where gfortran's rd may still read
    const queue = parseQueue(values, [backend]);
    const sized = values.direct || values.bs !== undefined ||
      values["transfer-size"] !== undefined ||
      queue !== undefined;
    // the Fortran reader makes its own system calls: --bs, --direct and --iodepth read with
    // sciobench's
    const reader = chooseReader(values.reader ?? (sized ? "sciobench" : undefined), {
      framing: backend.name,
      endian: cells.endian,
      backendOptions,
      file: userFile,
    });
    // the plan and the workload take the same cells
    const plan = readersPlan({
      reader: reader.name,
      file: userFile,
      backend: backend.name,
      ...cells,
      // under MPI the ranks are the readers: one run of as many readers as ranks
      procs: world().size > 1 ? [world().size] : cells.procs,
      options: backendOptions,
    });
    if (sized && reader.name === "gfortran") {
      const flag = values.direct
        ? "direct"
        : queue === undefined
        ? "bs"
        : values.iodepth === undefined
        ? "engine"
        : "iodepth";
      throw new UsageError(
        `--${flag}: the gfortran reader is a program that makes its own system calls; use ` +
          "--reader sciobench",
      );
    }
    const fileBytes = records * length * 8;
    const files = userFile !== undefined ? 0 : modes.includes("separate") ? Math.max(...procs) : 1;
    checkScratchRoom(
      values.dir,
      files * fileBytes,
      `${files} file${files === 1 ? "" : "s"} of ${records} records of ${length} doubles`,
      "use fewer --records, a smaller --length, fewer --procs or another --dir",
    );
    checkMemory(2 * length * 8, `a record of --length ${length}`, "use a smaller --length");
    const transfer = parseTransfer(values, [backend], values.dir);
    return readersRun(values, cells, plan, { backend, backendOptions, reader, transfer, queue });
  },
};
