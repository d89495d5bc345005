/**
 * `sciobench readers`: the Packman workload, 1..7 simultaneous reader processes of one shared
 * file or of one file each (lib/workloads/readers.ts). The reader processes are this same
 * program run again with the hidden `sciobench readers _reader FILE ...`, never a shell.
 * @module
 */
import { NATIVE_ORDER } from "../bytes/byteswap.ts";
import { UsageError } from "../errors.ts";
import { usableBackend } from "../backends/registry.ts";
import type { OptionValue } from "../framings/types.ts";
import { Progress } from "../report/progress.ts";
import {
  type CacheState,
  prepareReader,
  READERS_COLUMNS,
  type ReadersMode,
  runReaders,
} from "../workloads/readers.ts";
import { warn } from "../report/progress.ts";
import { READERS_QUICK, READERS_SEED } from "../workloads/seeds.ts";
import { parseArgs, parseChoice, parseCount, parseIntegers, parseList } from "./args.ts";
import {
  PLAN_HELP,
  PLAN_OPTIONS,
  type PlannedFile,
  planSummary,
  printPlan,
  type RunPlan,
} from "./plan.ts";
import type { Command } from "./command.ts";
import { selfCommand } from "./self.ts";
import {
  AUDIT_HELP,
  AUDIT_OPTION,
  backendOptionArgs,
  backendOptionsHelp,
  checkScratchParent,
  OUTPUT_HELP,
  OUTPUT_OPTIONS,
  parseEndian,
  rowSink,
} from "./common.ts";

const HELP =
  `sciobench readers: simultaneous readers of one shared file vs one file each (Packman 1990)

Usage: sciobench readers [options]

For each cache state, mode and process count: write the file(s) (--records records of --length
doubles; record i holds a seeded pattern with i in its last element, as Packman's wr), drop them
from the page cache (cold) or read them once (warm), start that many reader processes (this
program again, not a shell), release them together once all have loaded, and let each read
every record and check it (the seed's a(n) = i, and the pattern). One row per (mode, procs).

Options:
  --procs LIST        reader process counts, e.g. 1..7 or 1,2,4 (default 1..7; --quick 1..3)
  --mode LIST         shared (all read one file), separate (one file each); default both
  --records R         records per file (default 10)
  --length L          doubles per record (default 130000, Packman's)
  --framing F         framing or peer of the files (default f77)
  --cache LIST        cold and/or warm page cache before the readers start (default cold)
  --dir DIR           where to write the scratch files (default: current directory)
  --seed S            seed of the data pattern (default 1)
  --endian E          native|little|big byte order of the files (default native)
  --option KEY=VALUE  framing setting for writer and readers, repeatable (f77: marker=8,
                      subrecordLimit=65536)
${OUTPUT_HELP}
${PLAN_HELP}
${AUDIT_HELP}

Columns (CSV): ${READERS_COLUMNS.join(",")}
wall_s runs from the first reader's start to the last reader's end (CLOCK_MONOTONIC, shared by
all processes; program start-up excluded); mean_s, max_s, min_s are per reader (open to close);
user_s, sys_s, dev_read_bytes and reader_bytes are summed over readers; aggregate_MiBps =
procs x file_bytes / wall_s; slope_s_per_proc = wall time added per added process since the
previous row of the same mode (first row: wall_s / procs), the seed's cost per process.
Under MPI (mpirun, srun) the ranks are the readers instead of child processes: --procs is not
used, each rank reads in-process, released by a barrier; wall_s runs from the barrier to the
last rank's end.`;

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
  });
  if (!values["no-wait"]) {
    console.log("ready");
    await Deno.stdin.read(new Uint8Array(1)); // one byte (or end of input) releases the read
  }
  console.log(JSON.stringify(reader.run()));
}

/** The plan of a readers run: per (cache, mode, procs) the file(s) written, then read by each reader. */
function readersPlan(p: {
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
    files.push({ name: `${mode}-K.${p.backend}`, count, bytes: fileBytes });
    writeBytes += count * fileBytes;
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
      reader: "sciobench",
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
        ...OUTPUT_OPTIONS,
        ...AUDIT_OPTION,
        ...PLAN_OPTIONS,
        procs: { type: "string" },
        mode: { type: "string", default: "shared,separate" },
        records: { type: "string", default: "10" },
        length: { type: "string", default: "130000" },
        framing: { type: "string", default: "f77" },
        cache: { type: "string", default: "cold" },
        dir: { type: "string" },
        seed: { type: "string", default: "1" },
        endian: { type: "string", default: "native" },
        option: { type: "string", multiple: true },
      },
    });
    const procs = parseIntegers(
      values.procs ?? (values.quick ? READERS_QUICK.procs : READERS_SEED.procs),
      "--procs",
      1,
    );
    const modes = parseList(values.mode, "--mode").map((m) =>
      parseChoice(m, ["shared", "separate"] as const, "--mode") as ReadersMode
    );
    const caches = parseList(values.cache, "--cache").map((c) =>
      parseChoice(c, ["cold", "warm"] as const, "--cache") as CacheState
    );
    const records = parseCount(values.records, "--records");
    const length = parseCount(values.length, "--length");
    const seed = integer(values.seed, "--seed");
    const endian = parseEndian(values.endian);
    const backend = usableBackend(values.framing);
    const backendOptions = backendOptionArgs(backend, values.option, "readers");
    if (!backend.orders.includes(endian === "native" ? NATIVE_ORDER : endian)) {
      throw new UsageError(
        `readers: framing '${backend.name}' cannot write ${endian}-endian files`,
      );
    }
    const plan = readersPlan({
      backend: backend.name,
      endian,
      procs,
      modes,
      caches,
      records,
      length,
      seed,
      options: backendOptions,
    });
    if (values["dry-run"]) {
      parseChoice(values.format, ["csv", "json"] as const, "--format");
      printPlan(plan, values.format);
      return;
    }
    checkScratchParent(values.dir);
    const self = selfCommand();
    // The readers know what was written: f77 markers are not detected (it would double-scan
    // Packman's file), and the byte order is given.
    const readerOptions: Record<string, OptionValue> = backend.name === "f77"
      ? { marker: 4, ...backendOptions }
      : { ...backendOptions };
    const childOptions = [
      ...["--endian", endian === "native" ? NATIVE_ORDER : endian],
      ...Object.entries(readerOptions).flatMap(([k, v]) => ["--option", `${k}=${String(v)}`]),
    ];
    const launch = (path: string, fileIndex: number) =>
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
    const sink = rowSink("readers", args, READERS_COLUMNS, values);
    warn(planSummary(plan));
    try {
      await runReaders(
        {
          backend,
          procs,
          modes,
          caches,
          records,
          length,
          seed,
          endian,
          backendOptions,
          dir: values.dir,
          progress,
          launch,
          readerOptions,
        },
        (row) => sink.add(row),
      );
    } finally {
      progress.clear();
      sink.close();
    }
  },
};
