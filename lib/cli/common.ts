/**
 * Pieces every subcommand shares: output options (`--format`, `--out`, `--force`), backend
 * options (`--endian`, `--option key=value`), and the run facts stored in JSON output.
 * @module
 */
import { CellsFailedError, IoError, SysError, UsageError } from "../core/errors.ts";
import { BACKENDS } from "../backends/registry.ts";
import { type OptionValues, parseOptionArgs } from "../framings/options.ts";
import type { OptionSpec, Workload } from "../framings/types.ts";
import { type Backend, FSYNC_POLICIES, type FsyncPolicy } from "../backends/backend.ts";
import { fsyncRefusal } from "../backends/write.ts";
import { checkSharedLayout } from "../backends/capabilities.ts";
import { crossNodeShift, world } from "../mpi/world.ts";
import { type Progress } from "../report/progress.ts";
import { warn } from "../core/diagnostics.ts";
import type { EndianOption } from "../framings/types.ts";
import { type AggregateSpec, rankColumns } from "../mpi/aggregate.ts";
import { col, type ColumnDoc, humanTable } from "../report/human.ts";
import { openRowSink, type TableRenderer } from "../report/output.ts";
import type { Row } from "../report/row.ts";
import {
  CHART_WORKLOADS,
  type ChartWorkload,
  renderChart,
  type Results as ChartResults,
} from "../workloads/charts.ts";
import { auditOf, auditSummary } from "../sys/audit.ts";
import { type StatFs, statfs } from "../sys/libc.ts";
import { formatSize, parseChoice, parseCount, parseSize } from "./args.ts";
import { refuseOutputOnInput } from "../io/atomic.ts";
import { DEFAULT_DIRECT_BS, probeDirect, probeDirectFile, type Transfer } from "../io/transfer.ts";
import { checkTransfer } from "../backends/guard.ts";
import { librariesMeta, runMeta } from "./meta.ts";
import { noteSkipped, PLAN_OPTIONS, resolveBackends } from "./plan.ts";

/** parseArgs option declarations for `--format`, `--out`, `--force` and `--plot`. */
export const OUTPUT_OPTIONS = {
  format: { type: "string" },
  out: { type: "string" },
  force: { type: "boolean", default: false },
  plot: { type: "string" },
  help: { type: "boolean", short: "h", default: false },
} as const;

/** parseArgs declaration of `--audit` (commands that measure phases). */
export const AUDIT_OPTION = { audit: { type: "boolean", default: false } } as const;

/** parseArgs declarations every workload command takes: output, `--audit`, `--quick`, `--dry-run`. */
export const WORKLOAD_OPTIONS = { ...OUTPUT_OPTIONS, ...AUDIT_OPTION, ...PLAN_OPTIONS } as const;

/** parseArgs declaration of `--allow-external` (info, read). */
export const EXTERNAL_OPTION = { "allow-external": { type: "boolean", default: false } } as const;

/** Help line of `--allow-external`. */
export const EXTERNAL_HELP =
  `  --allow-external    let HDF5 read external raw-data files outside the file's own directory
                      (never a device, FIFO or socket; external links are listed, not followed)`;

/** Help line of `--audit`. */
export const AUDIT_HELP =
  `  --audit             with --format json: each row's audit trail (every phase's read, write,
                      fsync and fadvise calls with their timing, files, processes, and the
                      clock and CPU readings); without it JSON rows carry a one-line summary`;

/** UsageError when `--audit` is given with an output format other than JSON. */
export function checkAuditFormat(audit: boolean | undefined, format: string | undefined): void {
  if (audit && format !== "json" && format !== "jsonl") {
    throw new UsageError(
      "--audit adds the audit trail to JSON output: use it with --format json or jsonl",
    );
  }
}

/**
 * The output format of `--format` and `--out` ({@link resolveFormat}); refuses `--audit` with a
 * format that is not JSON ({@link checkAuditFormat}) and a `--plot` that is the `--out` file
 * ({@link checkOutputsApart}).
 */
export function checkOutputFormat(
  values: { format?: string; out?: string; audit?: boolean; plot?: string },
  hasSeed: boolean,
): OutputFormat {
  checkOutputsApart(values, []);
  const format = resolveFormat(values.format, values.out, hasSeed);
  checkAuditFormat(values.audit, format);
  return format;
}

/** Help lines describing the output options. */
export const OUTPUT_HELP =
  `  --format F          table (aligned, for people; the default on a terminal), csv (the default
                      otherwise), json (one document with the run's facts), or jsonl (the facts,
                      then one JSON object per row as it is measured)
  --out FILE          write the output to FILE instead of stdout (refused if FILE exists)
  --force             allow --out to replace an existing file
  --plot FILE.svg     also draw the results as an SVG chart (see 'sciobench plot')`;

/**
 * Checks a `--plot FILE.svg` before anything runs: the command must have a chart, the name must
 * end in .svg, and an existing file is replaced only with --force. Returns the path.
 */
export function checkPlotPath(
  command: string,
  plot: string | undefined,
  force: boolean | undefined,
): string | undefined {
  if (plot === undefined) return undefined;
  if (!(CHART_WORKLOADS as readonly string[]).includes(command)) {
    throw new UsageError(`--plot: '${command}' has no chart (${CHART_WORKLOADS.join(", ")} do)`);
  }
  if (!plot.toLowerCase().endsWith(".svg")) {
    throw new UsageError(`--plot ${plot}: the chart is SVG; give a name ending in .svg`);
  }
  if (!force) {
    try {
      Deno.lstatSync(plot);
      throw new IoError(`${plot} exists; refusing to overwrite it (pass --force to replace it)`);
    } catch (e) {
      if (!(e instanceof Deno.errors.NotFound)) throw e;
    }
  }
  return plot;
}

/** Renders the chart of `results` and writes it to `path` (replaced only with `force`). */
export async function writeChart(
  path: string,
  workload: ChartWorkload,
  results: ChartResults,
  force: boolean | undefined,
): Promise<void> {
  const svg = await renderChart(workload, results);
  try {
    Deno.writeTextFileSync(path, svg, { createNew: !force });
  } catch (e) {
    if (e instanceof Deno.errors.AlreadyExists) {
      throw new IoError(`${path} exists; refusing to overwrite it (pass --force to replace it)`);
    }
    throw new IoError(`cannot write ${path}: ${e instanceof Error ? e.message : String(e)}`);
  }
}

/** The formats of row output; `seed` is a command's seed layout where it has one. */
export type OutputFormat = "csv" | "json" | "jsonl" | "table" | "seed";

/**
 * Checks `--format` (default: `table` when stdout is a terminal, there is no --out and no MPI,
 * else `csv`); `seed` only where the command has a seed layout.
 */
export function resolveFormat(
  value: string | undefined,
  out: string | undefined,
  hasSeed: boolean,
): OutputFormat {
  if (value === undefined) {
    // Under MPI a rank's stdout is often the launcher's pseudo-terminal, whatever mpirun's own
    // stdout is: only a single process trusts isTerminal().
    const terminal = Deno.stdout.isTerminal() && world().size === 1;
    return out === undefined && terminal ? "table" : "csv";
  }
  const formats: OutputFormat[] = [
    "table",
    "csv",
    "json",
    "jsonl",
    ...(hasSeed ? ["seed"] as const : []),
  ];
  return parseChoice(value, formats, "--format");
}

/** What a command's results look like, for {@link openResults}. */
export interface ResultsSpec {
  /** The command's name. */
  readonly command: string;
  /** Its arguments as given. */
  readonly args: readonly string[];
  /** Every column with its unit, in CSV order. */
  readonly columns: readonly ColumnDoc[];
  /** Columns the human table shows. */
  readonly human: readonly string[];
  /** Key columns of a cell: summary rows over repeats are added when given. */
  readonly keys?: readonly string[];
  /** The seed's own layout (`--format seed`). */
  readonly seed?: TableRenderer;
  /** Every resolved option, for the JSON meta. */
  readonly options: Record<string, unknown>;
  /** The scratch parent directory (for the file-system facts). */
  readonly dir?: string;
  /** The files the command reads (see {@link checkOutputsApart}). */
  readonly inputs?: Inputs;
}

/** A command's input or data files, each `[name in messages, path]` (`["FILE", path]`). */
export type Inputs = readonly (readonly [string, string])[];

/**
 * Refuses (UsageError, exit 2) an `--out` or `--plot` that is one of the command's `inputs`, or
 * a `--plot` that is the `--out` file, however spelled (same inode, through symbolic and hard
 * links), with or without `--force`. Commands call it before they read or write anything;
 * {@link openResults} calls it again.
 */
export function checkOutputsApart(
  values: { out?: string; plot?: string },
  inputs: Inputs,
): void {
  if (values.out !== undefined) refuseOutputOnInput("--out", values.out, inputs);
  if (values.plot !== undefined) {
    refuseOutputOnInput("--plot", values.plot, [
      ...inputs,
      ...(values.out === undefined ? [] : [["--out", values.out] as const]),
    ]);
  }
}

/**
 * The documented columns of a workload, with those MPI adds (lib/mpi/aggregate.ts: ranks, rank,
 * host, extra columns, and each rate's and time's min, mean and max over ranks) when running as
 * one rank of many.
 */
export function rankColumnDocs(
  docs: readonly ColumnDoc[],
  spec: AggregateSpec,
  extra: readonly string[] = [],
): ColumnDoc[] {
  return rankColumns(docs.map((d) => d.name), spec, extra).map((name) => {
    const known = docs.find((c) => c.name === name);
    if (known) return known;
    const spread = /^(.*)_(min|mean|max)$/.exec(name);
    if (spread) {
      const base = docs.find((c) => c.name === spread[1]);
      return col(name, base?.unit ?? "", "number", `${spread[2]} over ranks of ${spread[1]}`);
    }
    if (name === "ranks") return col(name, "ranks", "count", "MPI ranks in the run");
    return col(name, "", "text", `under MPI: ${name.replace("_", " ")} (rank: a number, or all)`);
  });
}

/** A command's open results: add rows, then `finish()`. */
export interface Results {
  /** Adds one row. */
  add(row: Row): void;
  /**
   * Completes the output (and the --plot chart); CellsFailedError when some cell failed (its row
   * says why).
   */
  finish(): Promise<void>;
  /** Completes the output after an error (no summary of a broken run is claimed). */
  abort(): void;
}

/**
 * Opens a command's results in the format its options ask for. Call only after every option is
 * checked and every preflight passed: `--out` is created here.
 */
export function openResults(
  spec: ResultsSpec,
  values: { format?: string; out?: string; force?: boolean; audit?: boolean; plot?: string },
): Results {
  checkOutputsApart(values, spec.inputs ?? []);
  const format = checkOutputFormat(values, spec.seed !== undefined);
  const plot = checkPlotPath(spec.command, values.plot, values.force);
  const meta = runMeta(spec.command, spec.args, spec.options, spec.dir);
  const human = spec.human.map((name) => spec.columns.find((c) => c.name === name)!);
  const sink = openRowSink(spec.columns.map((c) => c.name), {
    format: format === "table" || format === "seed" ? "text" : format,
    out: values.out,
    force: values.force,
    meta,
    table: format === "seed" ? spec.seed : humanTable(human),
    // under MPI, --per-rank rows are cells of their own
    summaryKeys: spec.keys && world().size > 1 ? [...spec.keys, "rank", "host"] : spec.keys,
  });
  let rows = 0;
  const json = format === "json" || format === "jsonl";
  return {
    add(row: Row): void {
      rows++;
      // JSON rows carry their audit trail (lib/sys/audit.ts): a one-line summary, or with
      // --audit the whole trail.
      const audit = json ? auditOf(row) : undefined;
      if (audit === undefined) sink.add(row);
      else sink.add({ ...row, audit: values.audit ? audit : auditSummary(audit) });
    },
    async finish(): Promise<void> {
      // Libraries loaded during the run belong in the facts too.
      meta.libraries = librariesMeta();
      sink.close();
      if (plot !== undefined) {
        await writeChart(
          plot,
          spec.command as ChartWorkload,
          { meta, rows: sink.rows },
          values.force,
        );
      }
      if (sink.failed > 0) {
        const first = sink.rows.find((r) => r.error);
        const which = [first?.framing, first?.phase, first?.datasets ?? first?.size_bytes]
          .filter((v) => v !== undefined && v !== "").join(" ");
        throw new CellsFailedError(
          `${sink.failed} of ${rows} cells failed (first: ${which}: ${first?.error}); ` +
            "each row's 'error' column says why",
        );
      }
    },
    abort(): void {
      meta.libraries = librariesMeta();
      sink.close({ interrupted: true });
    },
  };
}

/** parseArgs option declarations of `--bs` (alias `--transfer-size`) and `--direct`. */
export const TRANSFER_OPTIONS = {
  bs: { type: "string" },
  "transfer-size": { type: "string" },
  direct: { type: "boolean", default: false },
  "no-huge-pages": { type: "boolean", default: false },
} as const;

/** Help lines of `--bs` and `--direct`. */
export const TRANSFER_HELP =
  `  --bs SIZE           bytes of each read and write system call of the native framings (alias
                      --transfer-size; 64k, 1M, 4MiB: k, M, G are binary as in fio): writes
                      coalesced or split to SIZE, a frame read in SIZE preads, small frames
                      several per call. Default: as before, no fixed size (small writes
                      coalesced into 4 MiB calls, larger writes and each frame's read in one
                      call; bs_bytes 0); with --direct alone 4MiB, each read covering
                      one frame's aligned blocks only. Peers refuse it
  --direct            open the files with O_DIRECT: no page cache, every offset, length and
                      buffer aligned to the file system's direct I/O alignment (the tail written
                      padded, then cut with ftruncate); reads need no cache drop (cache=direct).
                      Native framings only: peers refuse it
  --no-huge-pages     with --direct, stage and read through buffers of 4 KiB pages, as fio's
                      malloc'd buffers (default: 2 MiB transparent huge pages, asked with
                      MADV_HUGEPAGE: O_DIRECT pins every page of a buffer, and fewer, larger
                      pages make each call cheaper); the column huge_pages says which`;

/**
 * The `--bs` / `--direct` of a run, checked before anything is written: each backend must honour
 * them (peers refuse with one line), and with --direct the file system of `dir` must take
 * O_DIRECT and the size be a multiple of its alignment (for a read of an existing file, `dir`
 * is `{ file }`: that file is opened with O_DIRECT, nothing is created). undefined when neither
 * is given.
 */
export function parseTransfer(
  values: { bs?: string; "transfer-size"?: string; direct?: boolean; "no-huge-pages"?: boolean },
  backends: readonly Backend[],
  dir: string | undefined | { readonly file: string },
): Transfer | undefined {
  const given = values.bs ?? values["transfer-size"];
  if (values.bs !== undefined && values["transfer-size"] !== undefined) {
    if (values.bs !== values["transfer-size"]) {
      throw new UsageError(
        `--bs ${values.bs} and --transfer-size ${values["transfer-size"]} disagree; ` +
          "--transfer-size is --bs",
      );
    }
  }
  if (values["no-huge-pages"] && !values.direct) {
    throw new UsageError(
      "--no-huge-pages sets the buffers of O_DIRECT transfers; give it with --direct",
    );
  }
  if (given === undefined && !values.direct) return undefined;
  const flag = values.bs !== undefined ? "--bs" : "--transfer-size";
  const bs = given === undefined ? DEFAULT_DIRECT_BS : parseSize(given, flag);
  const transfer: Transfer = {
    bs,
    direct: values.direct ?? false,
    readAhead: given !== undefined,
    hugePages: !(values["no-huge-pages"] ?? false),
  };
  for (const b of backends) checkTransfer(b, transfer);
  // a writer keeps two staging buffers of bs bytes, a reader one (or a frame, when larger)
  checkMemory(3 * bs, `${flag} ${given ?? "4MiB"} staging buffers`, `use a smaller ${flag}`);
  if (transfer.direct) {
    if (typeof dir === "object") probeDirectFile(dir.file, bs);
    else probeDirect(dir ?? ".", bs);
  }
  return transfer;
}

/** parseArgs option declaration of `--per-rank` (MPI runs). */
export const PER_RANK_OPTION = { "per-rank": { type: "boolean", default: false } } as const;

/** Help line of `--per-rank`. */
export const PER_RANK_HELP =
  `  --per-rank          under MPI, one row per rank (with its host) after each aggregate row`;

/** parseArgs option declarations of the MPI settings of reading workloads (`--reorder`, `--per-rank`). */
export const MPI_OPTIONS = { reorder: { type: "string" }, ...PER_RANK_OPTION } as const;

/** Help lines describing the MPI settings of reading workloads. */
export const MPI_HELP =
  `  --reorder K         under MPI, rank r reads the file of rank (r + K) mod ranks (IOR's -C;
                      default on several nodes: the smallest K that puts every rank's file
                      on another node, the ranks per node when ranks fill nodes in order;
                      on one node 0)
${PER_RANK_HELP}`;

/** parseArgs option declaration of `--layout` (MPI runs of table and records). */
export const LAYOUT_OPTION = { layout: { type: "string", default: "per-rank" } } as const;

/** Help lines of `--layout`. */
export const LAYOUT_HELP =
  `  --layout L          under MPI: per-rank (a file per rank, the default) or shared (one file,
                      each rank its own part at offsets known in advance; raw, f77, netcdf, gsd)`;

/**
 * The `--layout` value; for `shared`, UsageError (one line) without several MPI ranks, unless
 * every backend can share one file between ranks, and for `--fsync each` under MPI (a shared
 * file fsyncs once, at its end).
 */
export function parseLayout(
  value: string | undefined,
  backends: readonly { readonly name: string; readonly sharedLayout: boolean }[],
  fsync: FsyncPolicy,
): "per-rank" | "shared" {
  const layout = parseChoice(value ?? "per-rank", ["per-rank", "shared"] as const, "--layout");
  if (layout === "shared" && world().size === 1) {
    throw new UsageError(
      "--layout shared: one file shared by MPI ranks, but this is one process; run it under " +
        "mpirun or srun with several ranks, or leave --layout out",
    );
  }
  if (layout === "shared") {
    for (const b of backends) checkSharedLayout(b);
    if (fsync === "each" && world().size > 1) {
      throw new UsageError(
        "--layout shared fsyncs at the end or not at all: use --fsync end or none",
      );
    }
  }
  return layout;
}

/**
 * The `--reorder` shift: the value given, else, when the ranks span more than one node, the
 * smallest shift that makes every rank read a file written on another node (the ranks per node
 * when ranks are placed node by node; {@link crossNodeShift}), else 0. Without MPI always 0.
 */
export function parseReorder(value: string | undefined): number {
  const w = world();
  if (value === undefined) return crossNodeShift(w.hosts);
  const k = Number(value);
  if (!Number.isSafeInteger(k) || k < 0) {
    throw new UsageError(`bad --reorder '${value}': expected an integer >= 0`);
  }
  return k % w.size;
}

/**
 * Parses `--option KEY=VALUE` items for one backend in command `workload`, against the options
 * the backend declares; UsageError (exit 2) naming its options and the nearest name.
 */
export function backendOptionArgs(
  backend: Backend,
  items: readonly string[] | undefined,
  workload: Workload,
): OptionValues {
  return parseOptionArgs([backend], items, workload).get(backend.name)!;
}

/** `--help` lines listing every backend's options that `workload` honours. */
export function backendOptionsHelp(workload: Workload): string {
  const lines: string[] = [];
  for (const b of BACKENDS) {
    const specs = b.options.filter((s) => s.workloads.includes(workload) && s.type !== "value");
    if (specs.length === 0) continue;
    lines.push(`  ${b.name}:`);
    for (const s of specs) {
      lines.push(
        `    ${`${s.name}=${optionValueText(s)}`.padEnd(28)} ${s.help}${optionDefaultText(s)}`,
      );
    }
  }
  return lines.length === 0 ? "" : `\n\nBackend options (--option KEY=VALUE):\n${lines.join("\n")}`;
}

/** What a value of `spec` looks like: its choices, or its type. */
export function optionValueText(spec: OptionSpec): string {
  if (spec.choices) return spec.choices.join("|");
  return spec.type === "boolean" ? "true|false" : spec.type === "list" ? "A,B,..." : spec.type;
}

/** ` (default X)` for an option with a default, else "". */
export function optionDefaultText(spec: OptionSpec): string {
  if (spec.default === undefined) return "";
  const d = Array.isArray(spec.default) ? spec.default.join(",") : String(spec.default);
  return ` (default ${d})`;
}

/** parseArgs declaration of `--fsync end|each|none` (the default is the command's). */
export const FSYNC_OPTION = { fsync: { type: "string" } } as const;

/** Help lines of `--fsync`, with the command's default. */
export function fsyncHelp(defaultPolicy: FsyncPolicy, why = ""): string {
  return `  --fsync P           end|each|none: fsync once after the last frame (and trailer), after
                      every frame and at the end, or never (then the write numbers are
                      page-cache numbers); inside the write timing; the column fsync says
                      which (default ${defaultPolicy}${why}). Peers (hdf5, netcdf4, netcdf-lib,
                      hdf4) do end or none, python-gsd end, f77-gfortran none`;
}

/**
 * The `--fsync` policy (default `defaultPolicy`); UsageError (one line) when it is not one of
 * end, each, none, or when one of `backends` cannot honour it. With `none` on a command whose
 * default fsyncs, one warning on stderr: the write numbers are page-cache numbers.
 */
export function parseFsync(
  value: string | undefined,
  backends: readonly Backend[],
  defaultPolicy: FsyncPolicy = "end",
): FsyncPolicy {
  const policy = value === undefined
    ? defaultPolicy
    : parseChoice(value, FSYNC_POLICIES, "--fsync");
  for (const b of backends) {
    const why = fsyncRefusal(b, policy);
    if (why !== null) throw new UsageError(why);
  }
  if (policy === "none" && defaultPolicy !== "none" && world().rank === 0) {
    warn(
      "--fsync none: nothing is forced to the disk inside the write timing, so the write " +
        "numbers are page-cache numbers (fsync=none in every row)",
    );
  }
  return policy;
}

/** Checks an `--endian` value. */
export function parseEndian(value: string): EndianOption {
  return parseChoice(value, ["native", "little", "big"] as const, "--endian");
}

/** The kernel's own file systems by statfs magic (no data files can be written there). */
const SYSTEM_FILE_SYSTEMS: Record<number, string> = {
  0x9fa0: "proc",
  0x62656572: "sysfs",
  0x1cd1: "devpts",
  0x27e0eb: "cgroup",
  0x63677270: "cgroup2",
  0x64626720: "debugfs",
};

/**
 * Refuses a run before it writes (one line, UsageError) when `dir`'s file system has less than
 * `bytes` (plus 5% and 64 MiB) free; `what` says what needs the room and `hint` how to need less.
 */
export function checkFreeSpace(
  fs: StatFs,
  dir: string | undefined,
  bytes: number,
  what: string,
  hint: string,
): void {
  const need = bytes * 1.05 + (64 << 20);
  if (fs.availableBytes < need) {
    throw new UsageError(
      `${what} needs about ${formatSize(need)} but ${dir ?? "the current directory"} has ` +
        `${formatSize(fs.availableBytes)} free; ${hint}`,
    );
  }
}

/**
 * Refuses a run before it allocates (one line, UsageError) when `bytes` of buffers would not fit
 * in half the memory available now; `what` names the buffer and `hint` how to need less.
 */
export function checkMemory(bytes: number, what: string, hint: string): void {
  let available = Infinity;
  try {
    available = Deno.systemMemoryInfo().available;
  } catch {
    return; // no --allow-sys: the allocation itself is the check
  }
  if (bytes > available / 2) {
    throw new UsageError(
      `${what} needs ${formatSize(bytes)} of memory but this machine has ` +
        `${formatSize(available)} available; ${hint}`,
    );
  }
}

/**
 * Checks a `--dir` value (it must be an existing directory) and warns on stderr when it is on a
 * memory file system, where cold reads are impossible. Returns the file-system facts.
 */
export function checkScratchParent(dir: string | undefined): StatFs {
  let fs: StatFs;
  try {
    fs = statfs(dir ?? "."); // through libc: also where Deno guards the path (/proc)
  } catch (e) {
    if (e instanceof SysError && e.code === "ENOENT") {
      throw new UsageError(`--dir ${dir} does not exist`);
    }
    throw e;
  }
  const system = SYSTEM_FILE_SYSTEMS[fs.type];
  if (system !== undefined) {
    throw new UsageError(
      `--dir ${dir ?? "."} is on ${system}, a kernel file system that holds no data files; ` +
        `give a directory on a disk`,
    );
  }
  if (dir !== undefined) {
    let isDir = false;
    try {
      isDir = Deno.statSync(dir).isDirectory;
    } catch (e) {
      if (e instanceof Deno.errors.NotFound) throw new UsageError(`--dir ${dir} does not exist`);
      const why = e instanceof Error ? e.message.split("\n")[0] : String(e);
      throw new UsageError(`--dir ${dir} cannot be used: ${why}`);
    }
    if (!isDir) throw new UsageError(`--dir ${dir} is not a directory`);
  }
  if (fs.inMemory) {
    warn(
      `${dir ?? "the current directory"} is on ${fs.typeName}, a memory file system: cold reads ` +
        `are impossible and these are memory numbers (fs_type=${fs.typeName})`,
    );
  }
  return fs;
}

/**
 * Checks `--dir` ({@link checkScratchParent}) and that its file system has room for `bytes`
 * ({@link checkFreeSpace}: `what` needs the room, `hint` says how to need less).
 */
export function checkScratchRoom(
  dir: string | undefined,
  bytes: number,
  what: string,
  hint: string,
): void {
  checkFreeSpace(checkScratchParent(dir), dir, bytes, what, hint);
}

/**
 * Runs a measurement that adds its rows to `results`, then completes them. On an error it
 * clears the progress line, closes the output as interrupted and rethrows.
 */
export async function measureInto(
  results: Results,
  progress: Progress,
  measure: () => Promise<unknown>,
): Promise<void> {
  try {
    await measure();
  } catch (e) {
    progress.clear();
    results.abort();
    throw e;
  }
  progress.clear();
  await results.finish();
}

/**
 * The backends named in a `--framing` list; a peer whose library is missing is skipped with a
 * one-line note on stderr. UsageError when none is left.
 */
export function usableBackends(list: string): Backend[] {
  const { run, skipped } = resolveBackends(list);
  noteSkipped(skipped);
  if (run.length === 0) throw new UsageError("no usable backend left to measure");
  return run;
}

/** Most times `--repeat` (`--trials`) measures each cell: beyond it a run never ends. */
export const MAX_REPEAT = 1000;

/**
 * The repeat count from `--repeat K` or its alias `--trials K` (default 1; both must agree; at
 * most {@link MAX_REPEAT}).
 */
export function repeatOption(repeat: string | undefined, trials: string | undefined): number {
  if (repeat !== undefined && trials !== undefined && repeat !== trials) {
    throw new UsageError(
      `--repeat ${repeat} and --trials ${trials} disagree; --trials is --repeat`,
    );
  }
  const text = repeat ?? trials ?? "1";
  return parseCount(text, repeat !== undefined ? "--repeat" : "--trials", MAX_REPEAT);
}
