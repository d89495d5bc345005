/**
 * Flag values turned into a run's settings, each checked with one line on refusal: the transfers
 * (`--bs`, `--direct`), `--cache`, `--fsync`, `--endian`, `--layout`, `--reorder`, `--repeat`,
 * `--type`, the backend's own `--option KEY=VALUE`, and the `--framing` list split into the
 * backends usable here and those skipped.
 * @module
 */
import { PeerUnavailableError, UsageError } from "../core/errors.ts";
import { type OptionValues, parseOptionArgs } from "../framings/options.ts";
import type { EndianOption, OptionSpec, Workload as OptionScope } from "../framings/types.ts";
import {
  type Backend,
  FSYNC_POLICIES,
  type FsyncPolicy,
  type MpiHint,
  type MpiIoRun,
} from "../backends/backend.ts";
import { fsyncRefusal } from "../backends/write.ts";
import {
  checkMpiIoLayout,
  checkMpiIoSegments,
  checkSharedLayout,
} from "../backends/capabilities.ts";
import { installedMpiIo, mpiIoProblem, NO_MPI_LAUNCHER } from "../backends/mpi_io.ts";
import { crossNodeShift, world } from "../mpi/world.ts";
import { warn } from "../core/diagnostics.ts";
import { parseChoice, parseCount, parseList } from "../core/values.ts";
import { backendByName, BACKENDS, usableBackend } from "../backends/registry.ts";
import type { SkippedBackend } from "./workload.ts";
import { parseSize } from "../core/sizes.ts";
import { DEFAULT_DIRECT_BS, probeDirect, probeDirectFile, type Transfer } from "../io/transfer.ts";
import { checkTransfer } from "../backends/guard.ts";
import { checkMemory } from "./checks.ts";
import { type EngineName, ENGINES, engineUnavailable, MAX_IODEPTH } from "../sys/queue.ts";
import type { QueueSpec } from "../backends/backend.ts";

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

/**
 * The `--iodepth` and `--engine` of a run's native reads: undefined at depth 1 without --engine
 * (today's reads: one at a time, the calls of a run without them). Without --engine, a depth
 * above 1 runs libaio with --direct, else io_uring. UsageError (one line): a depth outside 1 to
 * MAX_IODEPTH, an engine fio would not name, libaio without --direct (buffered native AIO reads
 * complete inside io_submit: depth 1 whatever is asked), a backend that makes its own calls (a
 * peer). Where the kernel refuses io_uring (seccomp, io_uring_disabled, an old kernel) `note`
 * gets one line and psync runs: the row's engine column says so. Under MPI, a refusal on any rank
 * is every rank's (a collective: every rank parses the same flags).
 */
export function parseQueue(
  values: { iodepth?: string; engine?: string; direct?: boolean },
  backends: readonly Backend[],
  note: (line: string) => void = warn,
): QueueSpec | undefined {
  const depth = values.iodepth === undefined
    ? 1
    : parseCount(values.iodepth, "--iodepth", MAX_IODEPTH);
  if (values.engine === undefined && depth === 1) return undefined;
  let engine: EngineName = values.engine === undefined
    ? (values.direct ? "libaio" : "io_uring")
    : parseChoice(values.engine, ENGINES, "--engine");
  for (const b of backends) {
    if (!b.transfer) {
      throw new UsageError(
        `--iodepth/--engine: ${b.name} makes its own system calls; measure a native framing ` +
          "(raw, f77, ieeeio, gsd, netcdf) or leave --iodepth and --engine out",
      );
    }
  }
  // mutant: libaio-buffered-refused
  if (engine === "libaio" && !values.direct) {
    throw new UsageError(
      "--engine libaio needs --direct: Linux native AIO completes a buffered read inside " +
        "io_submit, one at a time; give --direct, or --engine io_uring for buffered reads",
    );
  }
  const why = refusedOnAnyRank(engineUnavailable(engine));
  if (why !== undefined) {
    if (engine === "libaio") throw new UsageError(`--engine libaio: ${why}; use --engine psync`);
    const every = world().size > 1 ? " on every rank" : "";
    note(
      `--engine ${engine}: ${why}; reading with psync instead${every} (the engine column says so)`,
    );
    engine = "psync";
  }
  return { engine, depth };
}

/**
 * Why the engine cannot run, as every rank acts on it: `why`, this process's reason, without
 * MPI; under MPI, when any rank's kernel refused it, the first such rank's reason naming it
 * (`rank R on HOST: ...`) on every rank, so that all ranks make their requests alike and the
 * aggregate row's engine is every rank's. A collective: one Allreduce on every rank (and a gather
 * and a broadcast when a rank refused).
 */
function refusedOnAnyRank(why: string | undefined): string | undefined {
  const w = world();
  // mutant: engine-refused-every-rank
  if (w.size === 1) return why;
  const [refused] = w.allreduce([why === undefined ? 0 : 1], "sum");
  if (!refused) return undefined;
  const reasons = w.gatherStrings(why ?? "");
  const first = reasons.findIndex((r) => r !== "");
  return w.bcastString(first < 0 ? "" : `rank ${first} on ${w.hosts[first]}: ${reasons[first]}`);
}

/**
 * The `--layout` value; UsageError (one line) for a layout a backend going through MPI-IO does
 * not write, and for `shared` without several MPI ranks, unless every backend can share one file
 * between ranks, and for `--fsync each` under MPI (a shared file fsyncs once, at its end).
 */
export function parseLayout(
  value: string | undefined,
  backends: readonly Pick<Backend, "name" | "sharedLayout" | "mpiIo">[],
  fsync: FsyncPolicy,
): "per-rank" | "shared" {
  const layout = parseChoice(value ?? "per-rank", ["per-rank", "shared"] as const, "--layout");
  for (const b of backends) checkMpiIoLayout(b, layout);
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
 * The `--segments` count (default 1): each rank's frames in that many interleaved blocks of a
 * shared file. UsageError (one line) for a count that is not a positive integer, for a count
 * above 1 without `--layout shared` under MPI, and for a backend that cannot interleave them
 * (its `mpiIo.segments` capability). Whether it divides the frames per rank is checked per cell
 * size (checkSegments, lib/mpi/shared.ts).
 */
export function parseSegments(
  value: string | undefined,
  layout: "per-rank" | "shared",
  backends: readonly Pick<Backend, "name" | "mpiIo">[],
): number {
  const segments = value === undefined ? 1 : parseCount(value, "--segments");
  if (segments === 1) return 1;
  if (layout !== "shared" || world().size === 1) {
    throw new UsageError(
      `--segments ${segments}: interleaves the ranks' frames in one shared file; run under ` +
        "mpirun or srun with --layout shared, or leave --segments out",
    );
  }
  for (const b of backends) checkMpiIoSegments(b, segments);
  return segments;
}

/**
 * One `--hint KEY=VALUE`; UsageError (one line) without a key and a value around the `=`.
 */
export function parseHint(text: string): MpiHint {
  const eq = text.indexOf("=");
  if (eq <= 0 || eq === text.length - 1) {
    throw new UsageError(
      `bad --hint '${text}': expected KEY=VALUE, an MPI-IO hint such as romio_cb_write=enable`,
    );
  }
  return [text.slice(0, eq), text.slice(eq + 1)];
}

/** The backends that go through MPI-IO, by name, joined with commas (for messages). */
function mpiIoNames(): string {
  return BACKENDS.filter((b) => b.mpiIo !== undefined).map((b) => b.name).join(", ");
}

/**
 * How the run's backends that go through MPI-IO read and write (`--collective on|off`, default
 * on, and the `--hint KEY=VALUE` items), or undefined when none of `backends` does. UsageError
 * (one line) for a bad value or hint, and for either flag given to a run none of whose backends
 * uses MPI-IO (they would change nothing).
 */
export function parseMpiIo(
  values: { readonly collective?: string; readonly hint?: readonly string[] },
  backends: readonly Backend[],
): MpiIoRun | undefined {
  const collective = parseChoice(values.collective ?? "on", ["on", "off"] as const, "--collective");
  const hints = (values.hint ?? []).map(parseHint);
  if (!backends.some((b) => b.mpiIo !== undefined)) {
    const given = [
      ...(values.collective === undefined ? [] : ["--collective"]),
      ...(hints.length === 0 ? [] : ["--hint"]),
    ];
    if (given.length > 0) {
      throw new UsageError(
        `${given.join(" and ")}: for backends that go through MPI-IO (${mpiIoNames()}, under ` +
          `MPI) only; ` +
          `none of ${backends.map((b) => b.name).join(", ") || "the backends"} does`,
      );
    }
    return undefined;
  }
  const io = installedMpiIo();
  if (io === undefined) throw new UsageError(`--framing: ${NO_MPI_LAUNCHER}`);
  return { io, collective: collective === "on", hints };
}

/**
 * What a run's meta options say of its MPI-IO: `collective` (on or off) and `hint` (the hints
 * asked, by key); nothing when no backend of the run goes through MPI-IO.
 */
export function mpiIoOptions(
  run: MpiIoRun | undefined,
): { collective?: "on" | "off"; hint?: Record<string, string> } {
  if (run === undefined) return {};
  return { collective: run.collective ? "on" : "off", hint: Object.fromEntries(run.hints) };
}

/**
 * UsageError (one line) when one of `backends` goes through MPI-IO, which `command` does not
 * drive (only table and records do).
 */
export function refuseMpiIo(backends: readonly Backend[], command: string): void {
  const b = backends.find((x) => x.mpiIo !== undefined);
  if (b === undefined) return;
  throw new UsageError(
    `--framing ${b.name}: ${command} does not drive backends that go through MPI-IO; measure ` +
      `${b.name} with table or records`,
  );
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
  workload: OptionScope,
): OptionValues {
  return parseOptionArgs([backend], items, workload).get(backend.name)!;
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

/**
 * The one `--cache` state of a run's read phases: cold or warm; warm with `--direct` is refused
 * in one line (O_DIRECT reads bypass the page cache).
 */
export function parseCache(value: string, direct: boolean | undefined): "cold" | "warm" {
  const cache = parseChoice(value, ["cold", "warm"] as const, "--cache");
  if (direct && cache === "warm") {
    throw new UsageError(
      "--direct reads bypass the page cache: --cache warm means nothing with it",
    );
  }
  return cache;
}

/**
 * The backends of a `--framing` list split into those usable here and those skipped (why); a
 * backend that runs only under MPI (MPI-IO) is refused in one line outside it.
 */
export function resolveBackends(list: string): { run: Backend[]; skipped: SkippedBackend[] } {
  const run: Backend[] = [];
  const skipped: SkippedBackend[] = [];
  for (const name of parseList(list, "--framing")) {
    const mpiOnly = mpiIoProblem(backendByName(name));
    if (mpiOnly !== null) throw new UsageError(`--framing ${name}: ${mpiOnly}`);
    try {
      run.push(usableBackend(name));
    } catch (e) {
      if (!(e instanceof PeerUnavailableError)) throw e;
      skipped.push({ name, reason: e.message });
    }
  }
  return { run, skipped };
}

/**
 * Byte orders per framing from `--endian`: bare items (`big`) apply to every framing without an
 * item of its own (`hdf4=big`). Items may repeat for workloads that measure several orders.
 */
export class EndianChoice {
  readonly #all: EndianOption[] = [];
  readonly #per = new Map<string, EndianOption[]>();

  /** Parses an `--endian` value such as `native`, `big,native` or `native,hdf4=big`. */
  constructor(text: string) {
    for (const item of parseList(text, "--endian")) {
      const eq = item.indexOf("=");
      const order = parseChoice(
        eq < 0 ? item : item.slice(eq + 1),
        ["native", "little", "big"] as const,
        "--endian",
      );
      if (eq < 0) {
        if (!this.#all.includes(order)) this.#all.push(order);
        continue;
      }
      const name = item.slice(0, eq);
      const list = this.#per.get(name) ?? [];
      if (!list.includes(order)) list.push(order);
      this.#per.set(name, list);
    }
    if (this.#all.length === 0) this.#all.push("native");
  }

  /** Framing names given an order of their own. */
  get named(): string[] {
    return [...this.#per.keys()];
  }

  /** Every order asked for `framing`. */
  ordersOf(framing: string): EndianOption[] {
    return this.#per.get(framing) ?? this.#all;
  }

  /** The one order of `framing`; UsageError when several were given (workloads of one order). */
  of(framing: string): EndianOption {
    const orders = this.ordersOf(framing);
    if (orders.length > 1) {
      throw new UsageError(
        `--endian gives ${framing} ${orders.length} byte orders (${
          orders.join(", ")
        }); this workload measures one per backend`,
      );
    }
    return orders[0]!;
  }

  /** Checks that every framing named in `framing=order` items is one of `names`. */
  checkNames(names: readonly string[]): void {
    for (const name of this.#per.keys()) {
      if (!names.includes(name)) {
        throw new UsageError(
          `--endian ${name}=...: '${name}' is not among the backends measured (${
            names.join(", ")
          })`,
        );
      }
    }
  }
}

/** The number types `--type` accepts (records and scaling). */
export const NUMBER_TYPES = [
  "int8",
  "int16",
  "int32",
  "int64",
  "uint8",
  "uint16",
  "uint32",
  "uint64",
  "float32",
  "float64",
] as const;

/** A number type of {@link NUMBER_TYPES}. */
export type NumberType = typeof NUMBER_TYPES[number];
