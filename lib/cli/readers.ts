/**
 * `sciobench readers`: the Packman workload, 1..7 simultaneous reader processes of one shared
 * file or of one file each (lib/workloads/readers.ts). The reader processes are this same
 * program run again with the hidden `sciobench readers _reader FILE ...`, never a shell.
 * @module
 */
import { NATIVE_ORDER } from "../bytes/byteswap.ts";
import { UsageError } from "../core/errors.ts";
import { usableBackend } from "../backends/registry.ts";
import type { OptionValue } from "../framings/types.ts";
import type { OptionValues } from "../framings/options.ts";
import { world } from "../mpi/world.ts";
import { fortranProgram, gfortranUnavailable } from "../baselines/gfortran/compile.ts";
import { Progress } from "../report/progress.ts";
import { columnHelp } from "../report/human.ts";
import {
  type CacheState,
  packmanPattern,
  prepareReader,
  READERS_AGGREGATE,
  READERS_COLUMN_DOCS,
  READERS_HUMAN_COLUMNS,
  READERS_KEYS,
  type ReadersMode,
  runReaders,
} from "../workloads/readers.ts";
import { READERS_QUICK, READERS_SEED } from "../workloads/seeds.ts";
import {
  parseArgs,
  parseChoice,
  parseCount,
  parseIntegers,
  parseList,
  parseSeed,
  parseSize,
} from "./args.ts";
import { DEFAULT_DIRECT_BS } from "../io/transfer.ts";
import { announcePlan, dryRun, PLAN_HELP, type PlannedFile, type RunPlan } from "./plan.ts";
import type { Command } from "./command.ts";
import { requireFile } from "./open.ts";
import { selfCommand } from "./self.ts";
import {
  AUDIT_HELP,
  backendOptionArgs,
  backendOptionsHelp,
  checkMemory,
  checkOutputFormat,
  checkOutputsApart,
  checkScratchRoom,
  type Inputs,
  measureInto,
  openResults,
  OUTPUT_HELP,
  parseEndian,
  parseTransfer,
  PER_RANK_HELP,
  PER_RANK_OPTION,
  rankColumnDocs,
  repeatOption,
  TRANSFER_HELP,
  TRANSFER_OPTIONS,
  WORKLOAD_OPTIONS,
} from "./common.ts";

const HELP =
  `sciobench readers: simultaneous readers of one shared file vs one file each (Packman 1990)

Usage: sciobench readers [options]

For each cache state, mode and process count: write the file(s) (--records records of --length
doubles; record i holds a seeded pattern with i in its last element, as Packman's wr), drop them
from the page cache (cold) or read them once (warm), start that many reader processes, release
them together once all have loaded, and let each read every record and check it (the seed's
a(n) = i, and the pattern). One row per (mode, procs); the reader column says which program read.

The readers are the seed's own: Packman's rd, compiled by gfortran (once, into
~/.cache/sciobench/gfortran, keyed by compiler version and source hash) where gfortran is
installed, else this program again (never a shell).

Options:
  --reader R          gfortran (the default where installed: the seed's rd) or sciobench
  --file PATH         read your own Fortran file (records of equal length, 4-byte markers) with
                      rd, checking a(n) = i; no write phase, the file is never changed; shared
                      mode only
  --procs LIST        reader process counts, e.g. 1..7 or 1,2,4 (default 1..7; --quick 1..3)
  --mode LIST         shared (all read one file), separate (one file each); default both
  --records R         records per file (default 10)
  --length L          doubles per record (default 130000, Packman's)
  --framing NAME      backend that writes the files: a native framing or a peer (default f77)
  --cache LIST        cold and/or warm page cache before the readers start (default cold)
  --dir DIR           where to write the scratch files (default: current directory)
  --seed S            seed of the data pattern (default 1)
  --endian E          native|little|big byte order of the files (default native)
  --option KEY=VALUE  backend setting for writer and readers, repeatable (f77: marker=8,
                      subrecordLimit=65536)
  --repeat K          run every (cache, mode, procs) cell K times (default 1)
${TRANSFER_HELP}
                      (reads with --reader sciobench, the default with them)
${PER_RANK_HELP}
${OUTPUT_HELP}
${PLAN_HELP}
${AUDIT_HELP}

Columns (CSV order):
${columnHelp(READERS_COLUMN_DOCS)}
With --repeat K > 1, five summary rows per (cache, mode, procs) follow: stat = mean, median,
stddev, min, max.
Under MPI (mpirun, srun) the ranks are the readers instead of child processes: --procs is not
used, each rank reads in-process, released by a barrier; wall_s runs from the barrier to the
last rank's end. The row adds ranks, rank (all), host (the node count) and read_path (the shared
file, else empty); its audit trail lists each rank's read as a process with its rank and host.
With --per-rank each rank's row follows (procs = ranks): its wall_s from the barrier, its own
mean_s, min_s and max_s, its host, file and audit trail (write and read).`;

/** Most reader processes one row may start at once. */
const MAX_READER_PROCS = 256;

function integer(text: string, what: string): number {
  const n = Number(text);
  if (!Number.isSafeInteger(n)) throw new UsageError(`bad ${what} '${text}': expected an integer`);
  return n;
}

/** The hidden reader process: `sciobench readers _reader FILE --framing F ...`. */
async function runReaderChild(args: string[]): Promise<void> {
  const { values, positionals } = parseArgs("readers _reader", args, {
    allowPositionals: true,
    options: {
      framing: { type: "string", default: "f77" },
      records: { type: "string", default: "10" },
      length: { type: "string", default: "130000" },
      seed: { type: "string", default: "1" },
      "file-index": { type: "string", default: "0" },
      endian: { type: "string" },
      option: { type: "string", multiple: true },
      "no-wait": { type: "boolean", default: false },
      ...TRANSFER_OPTIONS,
    },
  });
  if (positionals.length !== 1) throw new UsageError("readers _reader: give exactly one FILE");
  const backend = usableBackend(values.framing);
  const reader = prepareReader(positionals[0]!, {
    framing: backend.name,
    records: parseCount(values.records, "--records"),
    length: parseCount(values.length, "--length"),
    seed: integer(values.seed, "--seed"),
    fileIndex: integer(values["file-index"], "--file-index"),
    endian: values.endian === undefined ? undefined : parseEndian(values.endian),
    backendOptions: backendOptionArgs(backend, values.option, "readers"),
    transfer: values.bs === undefined && !values.direct ? undefined : {
      bs: values.bs === undefined ? DEFAULT_DIRECT_BS : parseSize(values.bs, "--bs"),
      direct: values.direct,
      readAhead: values.bs !== undefined,
    },
  });
  if (!values["no-wait"]) {
    console.log("ready");
    await Deno.stdin.read(new Uint8Array(1)); // one byte (or end of input) releases the read
  }
  console.log(JSON.stringify(reader.run()));
}

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
  const marker = p.backend === "f77" ? Number(p.options["marker"] ?? 4) : 0;
  const fileBytes = p.records * (p.length * 8 + 2 * marker);
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
  const marker = f.backendOptions["marker"] ?? 4;
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

/** The `readers` subcommand. */
export const readersCommand: Command = {
  name: "readers",
  summary: "simultaneous reader processes of one shared file vs one file each (Packman 1990)",
  get help(): string {
    return HELP + backendOptionsHelp("readers");
  },
  async run(args: string[]): Promise<void> {
    if (args[0] === "_reader") return await runReaderChild(args.slice(1));
    const { values } = parseArgs("readers", args, {
      options: {
        ...WORKLOAD_OPTIONS,
        ...PER_RANK_OPTION,
        procs: { type: "string" },
        mode: { type: "string" },
        records: { type: "string", default: "10" },
        length: { type: "string", default: "130000" },
        framing: { type: "string", default: "f77" },
        cache: { type: "string", default: "cold" },
        dir: { type: "string" },
        seed: { type: "string", default: "1" },
        endian: { type: "string", default: "native" },
        option: { type: "string", multiple: true },
        reader: { type: "string" },
        file: { type: "string" },
        repeat: { type: "string", default: "1" },
        ...TRANSFER_OPTIONS,
      },
    });
    const procs = parseIntegers(
      values.procs ?? (values.quick ? READERS_QUICK.procs : READERS_SEED.procs),
      "--procs",
      1,
      MAX_READER_PROCS,
    );
    const userFile = values.file;
    const inputs: Inputs = userFile === undefined ? [] : [["--file", userFile]];
    checkOutputsApart(values, inputs);
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
    checkOutputFormat(values, false);
    const backend = usableBackend(values.framing);
    const backendOptions = backendOptionArgs(backend, values.option, "readers");
    if (!backend.orders.includes(endian === "native" ? NATIVE_ORDER : endian)) {
      throw new UsageError(
        `readers: backend '${backend.name}' cannot write ${endian}-endian files`,
      );
    }
    const sized = values.direct || values.bs !== undefined || values["transfer-size"] !== undefined;
    // the Fortran reader makes its own system calls: --bs and --direct read with sciobench's
    const reader = chooseReader(values.reader ?? (sized ? "sciobench" : undefined), {
      framing: backend.name,
      endian,
      backendOptions,
      file: userFile,
    });
    // the cells of the run: the plan and the workload take the same values
    const cells = { endian, procs, modes, caches, records, length, seed };
    const plan = readersPlan({
      reader: reader.name,
      file: userFile,
      backend: backend.name,
      ...cells,
      options: backendOptions,
    });
    if (sized && reader.name === "gfortran") {
      throw new UsageError(
        `--${values.direct ? "direct" : "bs"}: the gfortran reader is a program that makes its ` +
          "own system calls; use --reader sciobench",
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
    // the plan is printed only once every check of the run has passed (the same calls)
    if (dryRun(plan, values)) return;
    const self = selfCommand();
    // The readers know what was written: f77 markers are not detected (it would double-scan
    // Packman's file), and the byte order is given.
    const readerOptions: Record<string, OptionValue> = backend.name === "f77"
      ? { marker: 4, ...backendOptions }
      : { ...backendOptions };
    const childOptions = [
      ...["--endian", endian === "native" ? NATIVE_ORDER : endian],
      ...(transfer?.readAhead ? ["--bs", String(transfer.bs)] : []),
      ...(transfer?.direct ? ["--direct"] : []),
      ...Object.entries(readerOptions).flatMap(([k, v]) => ["--option", `${k}=${String(v)}`]),
    ];
    const launch = reader.name === "gfortran"
      ? gfortranLauncher(records, length, seed, userFile === undefined)
      : (path: string, fileIndex: number) =>
        new Deno.Command(self.cmd, {
          args: [
            ...self.args,
            "readers",
            "_reader",
            path,
            "--framing",
            backend.name,
            "--records",
            String(records),
            "--length",
            String(length),
            "--seed",
            String(seed),
            "--file-index",
            String(fileIndex),
            ...childOptions,
          ],
          stdin: "piped",
          stdout: "piped",
          stderr: "piped",
        }).spawn();
    const progress = new Progress();
    const results = openResults({
      command: "readers",
      args,
      inputs,
      columns: rankColumnDocs(READERS_COLUMN_DOCS, READERS_AGGREGATE, ["read_path"]),
      human: READERS_HUMAN_COLUMNS,
      keys: READERS_KEYS,
      options: {
        procs,
        mode: modes,
        cache: caches,
        records,
        length,
        framing: backend.name,
        seed,
        endian,
        option: backendOptions,
        repeat,
        bs: transfer?.bs ?? null,
        direct: transfer?.direct ?? false,
        ...(world().size > 1 ? { per_rank: values["per-rank"] } : {}),
        dir: values.dir ?? ".",
      },
      dir: values.dir,
    }, values);
    announcePlan(plan, reader.note === null ? [] : [reader.note]);
    await measureInto(results, progress, () =>
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
          perRank: values["per-rank"],
        },
        (row) => results.add(row),
      ));
  },
};
