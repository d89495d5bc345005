/**
 * Pieces every subcommand shares: output options (`--format`, `--out`, `--force`), backend
 * options (`--endian`, `--option key=value`), and the run facts stored in JSON output.
 * @module
 */
import { SysError, UsageError } from "../errors.ts";
import { BACKENDS } from "../backends/registry.ts";
import { type OptionValues, parseOptionArgs } from "../framings/options.ts";
import type { OptionSpec, Workload } from "../framings/types.ts";
import type { Backend } from "../backends/backend.ts";
import { world } from "../mpi/world.ts";
import { warn } from "../report/progress.ts";
import type { EndianOption } from "../framings/types.ts";
import {
  openRowSink,
  type Row,
  type RowFormat,
  type RowSink,
  type TableRenderer,
} from "../report/output.ts";
import { auditOf, auditSummary } from "../sys/audit.ts";
import { glibcVersion, type StatFs, statfs } from "../sys/libc.ts";
import { VERSION } from "../version.ts";
import { formatSize, parseChoice } from "./args.ts";
import { noteSkipped, resolveBackends } from "./plan.ts";

/** parseArgs option declarations for `--format`, `--out` and `--force`. */
export const OUTPUT_OPTIONS = {
  format: { type: "string", default: "csv" },
  out: { type: "string" },
  force: { type: "boolean", default: false },
  help: { type: "boolean", short: "h", default: false },
} as const;

/** parseArgs declaration of `--audit` (commands that measure phases). */
export const AUDIT_OPTION = { audit: { type: "boolean", default: false } } as const;

/** Help line of `--audit`. */
export const AUDIT_HELP =
  `  --audit             with --format json: each row's audit trail (every phase's read, write,
                      fsync and fadvise calls with their timing, files, processes, and the
                      clock and CPU readings); without it JSON rows carry a one-line summary`;

/** Help lines describing the output options. */
export const OUTPUT_HELP =
  `  --format csv|json|table  output format (default csv; table where the command has one)
  --out FILE          write the output to FILE instead of stdout (refused if FILE exists)
  --force             allow --out (and write) to replace an existing file`;

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
                      default: ranks per node when there is more than one node, else 0)
${PER_RANK_HELP}`;

/**
 * The `--reorder` shift: the value given, else the ranks per node when the ranks span more than
 * one node (so no node reads back what it wrote), else 0. Without MPI always 0.
 */
export function parseReorder(value: string | undefined): number {
  const w = world();
  if (value === undefined) {
    const facts = w.facts();
    return facts.nodes > 1 ? facts.ranks_per_node % w.size : 0;
  }
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

/** Checks an `--endian` value. */
export function parseEndian(value: string): EndianOption {
  return parseChoice(value, ["native", "little", "big"] as const, "--endian");
}

/** Facts about this run for JSON output: tool version, runtime, libc, host, time, arguments. */
export function runMeta(command: string, args: readonly string[]): Record<string, unknown> {
  let glibc = "unknown";
  try {
    glibc = glibcVersion();
  } catch {
    // not glibc: the error surfaces where libc is needed
  }
  return {
    tool: "sciobench",
    version: VERSION,
    command,
    args,
    deno: Deno.version.deno,
    glibc,
    os: `${Deno.build.os}-${Deno.build.arch}`,
    hostname: Deno.hostname(),
    date: new Date().toISOString(),
    ...(world().size > 1 ? world().facts() : {}),
  };
}

/**
 * Opens the row sink a command's output options ask for. JSON rows that have an audit trail
 * (lib/sys/audit.ts) carry it as `audit`: a one-line summary, or with `--audit` the whole trail.
 */
export function rowSink(
  command: string,
  args: readonly string[],
  columns: readonly string[],
  values: { format?: string; out?: string; force?: boolean; audit?: boolean },
  table?: TableRenderer,
): RowSink {
  const formats: RowFormat[] = table ? ["csv", "json", "table"] : ["csv", "json"];
  const format = parseChoice(values.format ?? "csv", formats, "--format");
  checkAuditFormat(values.audit, format);
  const sink = openRowSink(columns, {
    format,
    out: values.out,
    force: values.force,
    meta: runMeta(command, args),
    table,
  });
  return auditedRows(sink, format, values.audit ?? false);
}

/** UsageError when `--audit` is given with an output format other than JSON. */
export function checkAuditFormat(audit: boolean | undefined, format: string): void {
  if (audit && format !== "json") {
    throw new UsageError("--audit adds the audit trail to JSON output: use it with --format json");
  }
}

/**
 * For JSON output: a sink that adds each row's audit trail as `audit` (the whole trail when
 * `full`, else its one-line summary); other formats are returned unchanged.
 */
export function auditedRows(sink: RowSink, format: string, full: boolean): RowSink {
  if (format !== "json") return sink;
  return {
    add(row: Row): void {
      const audit = auditOf(row);
      if (audit === undefined) sink.add(row);
      else sink.add({ ...row, audit: full ? audit : auditSummary(audit) });
    },
    close: () => sink.close(),
  };
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
 * The backends named in a `--framing` list; a peer whose library is missing is skipped with a
 * one-line note on stderr. UsageError when none is left.
 */
export function usableBackends(list: string): Backend[] {
  const { run, skipped } = resolveBackends(list);
  noteSkipped(skipped);
  if (run.length === 0) throw new UsageError("no usable framing left to measure");
  return run;
}
