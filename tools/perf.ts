/**
 * `deno task perf`: the ratios that define sciobench's performance, measured in one run in
 * interleaved pairs (A, B, A, B ...) so that the load of a shared machine falls on both sides of
 * every ratio alike. It prints each ratio's spread over the pairs (min, median, max) with its goal
 * beside it (met when the median meets it) as a table, or as JSON with `--format json`. Peers
 * that are not installed are skipped with one line each.
 *
 * What it measures, with the product's own workloads:
 * - every native framing's write, read, random read and open against raw (the table workload,
 *   runTable), at N = 32^2, 128^2, 1024^2, page cache warm and cold, each against the mean of a
 *   run of raw just before and one just after it; raw against itself (the A/A rows: the later run
 *   over the earlier) shows how far a wall-time ratio moves on the machine with nothing changed;
 *   f77's and IEEEIO's open per
 *   record (a chunk's record: 2 a frame), and per record beyond raw's open (the goal's, as the
 *   file-system's open and fstat, a fixed cost, would dominate a file of a few records);
 * - every native framing's verified read, sequential and random, against raw's in the reading
 *   thread's CPU time, page cache warm (tools/probes/read_cpu_ratio.ts), which the load moves far
 *   less than the table's wall-time ratios;
 * - gsd against python3-gsd (the table's python-gsd peer): the same four, and write CPU; the
 *   open is each side's open after its untimed warm-up opens (the table's open_ms), and the first (open_first_ms,
 *   code not yet compiled) is shown beside it without a goal;
 * - the native netCDF writer against libnetcdf's (`sciobench records`, netcdf vs netcdf-lib);
 * - the Packman reader against gfortran's rd (`sciobench readers --reader`), each side's median of
 *   3 runs in every pair;
 * - the raw engine against fio psync at the same block size (tools/probes/fio_ratio.ts), with every
 *   byte verified as the table reads, and without (the read alone, as fio's);
 * - peak RSS of a table child at two file sizes (VmHWM), and its slope extrapolated to 16 GiB,
 *   in each pair.
 *
 * Run: deno task perf [--quick] [--format table|json] [--pairs 4] [--size 64MiB] [--dir DIR]
 *      [--only table,readcpu,records,readers,fio,rss]
 * @module
 */
import { parseArgs } from "../lib/cli/args.ts";
import { parseCount } from "../lib/core/values.ts";
import { UsageError } from "../lib/core/errors.ts";
import { parseSize } from "../lib/core/sizes.ts";
import { backendByName } from "../lib/backends/registry.ts";
import type { Backend } from "../lib/backends/backend.ts";
import { pythonGsdUnavailable } from "../lib/peers/python_gsd/mod.ts";
import { gfortranUnavailable } from "../lib/peers/gfortran/mod.ts";
import { Progress } from "../lib/report/progress.ts";
import type { Row } from "../lib/report/row.ts";
import { getrusage, RUSAGE } from "../lib/sys/libc.ts";
import { missWithinNoise } from "../lib/report/stats.ts";
import { runTable, TableFrames } from "../lib/workloads/table/mod.ts";
import { readCpuRatios } from "./probes/read_cpu_ratio.ts";
import { median } from "./probes/common.ts";

/** A goal on a ratio's median: at least (`>=`) or at most (`<=`) `value`. */
interface Goal {
  readonly op: ">=" | "<=";
  readonly value: number;
}

/** One measured quantity over the pairs. */
interface PerfRow {
  /** What is compared, e.g. `read f77/raw`. */
  readonly metric: string;
  /** Particles per frame, or "" where N does not apply. */
  readonly n: string;
  /** cold, warm or "". */
  readonly cache: string;
  /** Unit of the values: `x` for a ratio, else the unit. */
  readonly unit: string;
  /** One value per pair. */
  readonly values: number[];
  /** The goal, when the project sets one. */
  readonly goal?: Goal;
}

/** The command line, checked: a bad option or value is one line and exit 2, no stack trace. */
function options() {
  try {
    const { values } = parseArgs("perf", Deno.args, {
      options: {
        quick: { type: "boolean", default: false },
        format: { type: "string", default: "table" },
        pairs: { type: "string" },
        size: { type: "string" },
        dir: { type: "string" },
        only: { type: "string" },
        "rss-of": { type: "string" },
      },
    });
    if (values.format !== "table" && values.format !== "json") {
      throw new UsageError(`--format ${values.format}: give table or json`);
    }
    const quick = values.quick === true;
    return {
      values,
      quick,
      pairs: parseCount(values.pairs ?? "4", "--pairs"),
      size: parseSize(values.size ?? (quick ? "1MiB" : "64MiB"), "--size"),
    };
  } catch (e) {
    if (!(e instanceof UsageError)) throw e;
    const usage = "deno task perf [--quick] [--format table|json] [--pairs N] [--size S] " +
      "[--dir DIR] [--only SECTIONS]";
    const message = e.message.replace(/^perf: /, "").replace(
      / \(see 'sciobench perf --help'\)$/,
      "",
    );
    console.error(`perf: ${message} (usage: ${usage})`);
    Deno.exit(2);
  }
}
const { values: args, quick, pairs, size } = options();
const NS = quick ? [32 ** 2, 128 ** 2, 256 ** 2] : [32 ** 2, 128 ** 2, 1024 ** 2];
// 256 MiB and the 16 GiB cell itself (one run of each, about 90 s): a child's peak moves ~15 MiB
// run to run and grows less than linearly (a slope from 2 GiB put 16 GiB at 295-332 MiB when one
// 16 GiB cell peaked at 192 MiB), so the goal is measured, not extrapolated; --quick extrapolates
const RSS_SIZES = quick ? [parseSize("8MiB"), parseSize("32MiB")] : [2 ** 28, 2 ** 34];
const RSS_TARGET = 2 ** 34; // the 16 GiB table cell the memory goal names
/** Chunks (f77 records, IEEEIO datasets) in a frame of the table workload. */
const TABLE_CHUNKS = new TableFrames(1, 1).layout.length;
const FRAMINGS = ["f77", "ieeeio", "gsd", "netcdf"];
/** The sections in the order they run; `--only` names some of them. */
const sections: [string, () => Promise<void> | void][] = [
  ["table", tableSection],
  ["readcpu", readCpuSection],
  ["records", recordsSection],
  ["readers", readersSection],
  ["fio", fioSection],
  ["rss", rssSection],
];
const only = args.only ? new Set(args.only.split(",")) : null;
const unknown = [...(only ?? [])].filter((s) => !sections.some(([name]) => name === s));
if (unknown.length > 0) {
  const names = sections.map(([name]) => name).join(",");
  console.error(`perf: --only ${unknown.join(",")}: give some of ${names}`);
  Deno.exit(2);
}
const wants = (section: string) => only === null || only.has(section);
const dir = args.dir;
const started = performance.now();

const rows: PerfRow[] = [];
const skipped: string[] = [];
const note = (line: string) => console.error(`perf: ${line}`);

function row(
  metric: string,
  n: string,
  cache: string,
  unit: string,
  goal?: Goal,
): PerfRow {
  const key = `${metric}|${n}|${cache}`;
  let r = rows.find((x) => `${x.metric}|${x.n}|${x.cache}` === key);
  if (!r) {
    r = { metric, n, cache, unit, values: [], goal };
    rows.push(r);
  }
  return r;
}

function nLabel(n: number): string {
  const side = Math.round(Math.sqrt(n));
  return side * side === n ? `${side}^2` : String(n);
}

function num(r: Row, column: string): number {
  const v = r[column];
  if (typeof v !== "number" || !Number.isFinite(v)) {
    throw new Error(`${String(r.framing)}: column ${column} is ${JSON.stringify(v)}`);
  }
  return v;
}

/** The read goals: >= 0.9x raw at N >= 128^2, >= 0.8x at 32^2. */
function readGoal(n: number): Goal {
  return { op: ">=", value: n >= 128 ** 2 ? 0.9 : 0.8 };
}

const AT_LEAST_PEER: Goal = { op: ">=", value: 1 };
const AT_MOST_PEER: Goal = { op: "<=", value: 1 };

// ---- the table: framings against raw, gsd against python3-gsd --------------------------------
async function tableSection(): Promise<void> {
  const framings: Backend[] = FRAMINGS.map((name) => backendByName(name));
  const raws: Backend[] = [backendByName("raw"), backendByName("raw")];
  const pyWhy = pythonGsdUnavailable();
  const peers = pyWhy === null ? [backendByName("python-gsd")] : [];
  if (pyWhy !== null) skipped.push(`python3-gsd: ${pyWhy}`);
  const progress = new Progress({ quiet: true });
  // one cell of raw, not counted: the first cell of the process would run code not compiled yet
  note("table warm-up (raw, not counted)");
  await runTable({
    backends: [raws[0]!],
    sizes: [size],
    ns: [NS[0]!],
    repeat: 1,
    seed: 1,
    warmup: false,
    cache: "warm",
    dir,
    progress,
  });
  for (const cache of ["warm", "cold"] as const) {
    for (const n of NS) {
      for (let p = 0; p < pairs; p++) {
        note(`table ${cache} N=${nLabel(n)} pair ${p + 1}/${pairs}`);
        // every pair is one run of the cell, the backends in turn between two runs of raw: raw,
        // f77, ieeeio, gsd, netcdf, raw in even pairs, raw, netcdf ... f77, raw in odd ones. Each
        // framing is compared with the mean of the raw before it and the raw after it, so neither
        // going first nor a drift of the load favours either side, and raw against itself (the
        // A/A rows: the later raw over the earlier) shows how far a wall-time ratio moves here
        // with nothing changed; python-gsd after them
        const got = await runTable({
          backends: [raws[0]!, ...(p % 2 === 0 ? framings : [...framings].reverse()), raws[1]!],
          peers,
          sizes: [size],
          ns: [n],
          repeat: 1,
          seed: 1,
          warmup: false,
          cache,
          dir,
          progress,
        });
        const [before, after] = got.filter((r) => r.framing === "raw") as [Row, Row];
        const by = new Map(got.map((r) => [String(r.framing), r]));
        const label = nLabel(n);
        /** Raw's rate in `column`: the geometric mean of its two runs, MiB/s. */
        const rawRate = (column: string) => Math.sqrt(num(before, column) * num(after, column));
        const rawOpenMs = (num(before, "open_ms") + num(after, "open_ms")) / 2;
        for (const what of ["write", "read", "random"] as const) {
          row(`${what} raw/raw (A/A)`, label, cache, "x").values.push(
            num(after, `${what}_MiBps`) / num(before, `${what}_MiBps`),
          );
        }
        row("open raw/raw (A/A)", label, cache, "x").values.push(
          num(after, "open_ms") / num(before, "open_ms"),
        );
        for (const name of FRAMINGS) {
          const r = by.get(name)!;
          const g = readGoal(n);
          row(`write ${name}/raw`, label, cache, "x").values.push(
            num(r, "write_MiBps") / rawRate("write_MiBps"),
          );
          row(`read ${name}/raw`, label, cache, "x", g).values.push(
            num(r, "read_MiBps") / rawRate("read_MiBps"),
          );
          row(`random ${name}/raw`, label, cache, "x", g).values.push(
            num(r, "random_MiBps") / rawRate("random_MiBps"),
          );
          row(`open ${name}/raw`, label, cache, "x").values.push(num(r, "open_ms") / rawOpenMs);
          if (name === "f77" || name === "ieeeio") {
            // a record is a chunk's: one Fortran record, one IEEEIO dataset with its attributes
            const records = num(r, "frames") * TABLE_CHUNKS;
            row(`open ${name} per record`, label, cache, "us").values.push(
              (num(r, "open_ms") * 1000) / records,
            );
            // what a record adds to the open, beyond raw's (open and fstat, the file system's)
            row(
              `open ${name} per record over raw`,
              label,
              cache,
              "us",
              cache === "warm" ? { op: "<=", value: 1 } : undefined,
            ).values.push(((num(r, "open_ms") - rawOpenMs) * 1000) / records);
          }
        }
        const py = by.get("python-gsd");
        if (py) {
          const ours = by.get("gsd")!;
          for (
            const [what, column] of [["write", "write_MiBps"], ["read", "read_MiBps"], [
              "random",
              "random_MiBps",
            ]] as const
          ) {
            row(`${what} gsd/python-gsd`, label, cache, "x", AT_LEAST_PEER).values.push(
              num(ours, column) / num(py, column),
            );
          }
          row("open gsd/python-gsd", label, cache, "x", AT_MOST_PEER).values.push(
            num(ours, "open_ms") / num(py, "open_ms"),
          );
          // the first open of each side's process, code not yet compiled (V8 compiles at a
          // function's first call; python3-gsd's gsd_open is C): shown, no goal
          row("first open gsd/python-gsd", label, cache, "x").values.push(
            num(ours, "open_first_ms") / num(py, "open_first_ms"),
          );
          const cpu = (r: Row) => num(r, "write_user_s") + num(r, "write_sys_s");
          row("write CPU gsd/python-gsd", label, cache, "x", { op: "<=", value: 0.2 }).values.push(
            cpu(ours) / cpu(py),
          );
          // the part of that ratio no change to our own code can remove: our write phase's system
          // time (the kernel's copy of the same bytes into the page cache, which python3-gsd pays
          // too) over python3-gsd's whole write CPU; above the goal, the goal is out of reach of a
          // writer that goes through the page cache
          row("write sys gsd/CPU python-gsd", label, cache, "x").values.push(
            num(ours, "write_sys_s") / cpu(py),
          );
        }
      }
    }
  }
}

// ---- read CPU: every framing's verified read against raw's, in thread CPU time ---------------
/**
 * The read goals in the calling thread's CPU time (tools/probes/read_cpu_ratio.ts): page cache
 * warm, each framing's verified read (as the table's) against raw's, sequential and random.
 * Wall-time ratios of a read that takes milliseconds move with the load of a shared machine; CPU
 * time much less.
 */
function readCpuSection(): void {
  const scratch = Deno.makeTempDirSync({ dir: dir ?? ".", prefix: ".sciobench-perf-" });
  try {
    for (const n of NS) {
      note(`read CPU N=${nLabel(n)}, ${pairs} pairs`);
      const got = readCpuRatios({ framings: FRAMINGS, n, pairs, bytes: size, dir: scratch });
      const label = nLabel(n);
      for (const [name, r] of got.framings) {
        row(`read CPU ${name}/raw`, label, "warm", "x", readGoal(n)).values.push(...r.sequential);
        row(`random CPU ${name}/raw`, label, "warm", "x", readGoal(n)).values.push(...r.random);
      }
    }
  } finally {
    Deno.removeSync(scratch, { recursive: true });
  }
}

// ---- CLI children ----------------------------------------------------------------------------
const MAIN = new URL("../main.ts", import.meta.url).pathname;
/** The permissions of the `sciobench` task, for the CLI children. */
const PERMS = ["ffi", "read", "write", "env", "run", "sys"].map((p) => `--allow-${p}`);

/** Runs `sciobench ARGS --format json` and returns its rows (throws with its stderr on failure). */
async function cliRows(cliArgs: string[]): Promise<Row[]> {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", ...PERMS, MAIN, ...cliArgs, "--format", "json", ...(dir ? ["--dir", dir] : [])],
    stdout: "piped",
    stderr: "piped",
  }).output();
  if (!out.success) {
    throw new Error(
      `sciobench ${cliArgs.join(" ")} failed: ${new TextDecoder().decode(out.stderr).trim()}`,
    );
  }
  const doc = JSON.parse(new TextDecoder().decode(out.stdout)) as { rows: Row[] };
  for (const r of doc.rows) {
    if (r.error) throw new Error(`sciobench ${cliArgs.join(" ")}: ${String(r.error)}`);
  }
  return doc.rows;
}

async function recordsSection(): Promise<void> {
  const why = backendByName("netcdf-lib").unavailable();
  if (why !== null) {
    skipped.push(`netcdf-lib: ${why}`);
    return;
  }
  const shape = quick ? "10x100x100" : "200x300x500";
  for (let p = 0; p < pairs; p++) {
    note(`records pair ${p + 1}/${pairs}`);
    // alternate which runs first so neither side always follows the other
    const order = p % 2 === 0 ? "netcdf,netcdf-lib" : "netcdf-lib,netcdf";
    const got = await cliRows([
      "records",
      "--framing",
      order,
      "--endian",
      "big",
      "--shape",
      shape,
    ]);
    const pick = (framing: string, phase: string) =>
      got.find((r) => r.framing === framing && r.phase === phase)!;
    for (const phase of ["write", "read"]) {
      const ours = pick("netcdf", phase), lib = pick("netcdf-lib", phase);
      row(`records ${phase} netcdf/netcdf-lib`, "", "cold", "x", AT_LEAST_PEER).values.push(
        num(ours, "MiBps") / num(lib, "MiBps"),
      );
      row(`records ${phase} CPU netcdf/netcdf-lib`, "", "cold", "x", AT_MOST_PEER).values.push(
        num(ours, "cpu_s") / num(lib, "cpu_s"),
      );
    }
  }
}

async function readersSection(): Promise<void> {
  const why = gfortranUnavailable();
  if (why !== null) {
    skipped.push(`gfortran: ${why}`);
    return;
  }
  // each side's median of 3 runs in a pair: a read of 100 MB takes tens of milliseconds, so one
  // run's ratio swings with the machine's load
  const common = [
    "readers",
    "--procs",
    "1",
    "--mode",
    "shared",
    "--records",
    "10",
    "--repeat",
    "3",
  ];
  const length = quick ? "13000" : "1300000";
  for (const cache of ["warm", "cold"]) {
    for (let p = 0; p < pairs; p++) {
      note(`readers ${cache} pair ${p + 1}/${pairs}`);
      const run = async (reader: string) =>
        (await cliRows([...common, "--length", length, "--cache", cache, "--reader", reader]))
          .find((r) => r.stat === "median")!;
      const first = p % 2 === 0 ? "sciobench" : "gfortran";
      const a = await run(first);
      const b = await run(first === "sciobench" ? "gfortran" : "sciobench");
      const ours = first === "sciobench" ? a : b, rd = first === "sciobench" ? b : a;
      row("readers sciobench/gfortran rd", "", cache, "x", AT_LEAST_PEER).values.push(
        num(ours, "aggregate_MiBps") / num(rd, "aggregate_MiBps"),
      );
    }
  }
}

async function fioSection(): Promise<void> {
  try {
    await new Deno.Command("fio", { args: ["--version"], stdout: "null", stderr: "null" })
      .output();
  } catch {
    skipped.push("fio: not installed (apt-get install fio)");
    return;
  }
  note(`fio ${pairs} pairs`);
  const script = new URL("./probes/fio_ratio.ts", import.meta.url).pathname;
  // verified (every byte compared, as the table reads) and not (the read alone, as fio's): the gap
  // between the two is what verification costs (tools/probes/read_cpu_ratio.ts)
  for (const verify of [true, false]) {
    const out = await new Deno.Command(Deno.execPath(), {
      args: [
        "run",
        ...PERMS,
        script,
        "--size",
        quick ? "8MiB" : "256MiB",
        "--n",
        "16384",
        "--pairs",
        String(pairs),
        ...(verify ? ["--verify"] : []),
        ...(dir ? ["--dir", dir] : []),
      ],
      stdout: "piped",
      stderr: "piped",
    }).output();
    if (!out.success) throw new Error(`fio_ratio failed: ${new TextDecoder().decode(out.stderr)}`);
    const metric = verify ? "read raw engine/fio psync" : "read raw engine unverified/fio psync";
    const r = row(metric, "128^2", "warm", "x", { op: ">=", value: 0.9 });
    for (const line of new TextDecoder().decode(out.stdout).split("\n")) {
      const m = /^\d+,\d+,\d+,([0-9.]+)$/.exec(line);
      if (m) r.values.push(Number(m[1]));
    }
  }
}

/** The table child whose peak RSS is measured: gsd and IEEEIO (index-holding) at N = 32^2. */
function tableChildArgs(bytes: number): string[] {
  return [
    "run",
    ...PERMS,
    MAIN,
    "table",
    "--framing",
    "gsd,ieeeio",
    "--n",
    "32^2",
    "--size",
    String(bytes),
    "--no-peers",
    "--no-warmup",
    "--cache",
    "warm",
    "--format",
    "csv",
    ...(dir ? ["--dir", dir] : []),
  ];
}

/**
 * Peak RSS (bytes) of a table child writing and reading one cell of `bytes`: a fresh copy of this
 * tool (`--rss-of BYTES`) runs the child and prints getrusage(RUSAGE_CHILDREN).ru_maxrss, which
 * then covers that one child alone.
 */
async function peakRss(bytes: number): Promise<number> {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", ...PERMS, new URL(import.meta.url).pathname, "--rss-of", String(bytes)],
    stdout: "piped",
    stderr: "piped",
  }).output();
  const text = new TextDecoder().decode(out.stdout).trim();
  if (!out.success || !/^\d+$/.test(text)) {
    throw new Error(`peak RSS child failed: ${new TextDecoder().decode(out.stderr).trim()}`);
  }
  return Number(text) * 1024;
}

if (args["rss-of"] !== undefined) {
  const out = await new Deno.Command(Deno.execPath(), {
    args: tableChildArgs(parseSize(args["rss-of"])),
    stdout: "null",
    stderr: "piped",
  }).output();
  if (!out.success) {
    console.error(new TextDecoder().decode(out.stderr));
    Deno.exit(1);
  }
  console.log(getrusage(RUSAGE.CHILDREN).maxRssKiB);
  Deno.exit(0);
}

async function rssSection(): Promise<void> {
  const [small, big] = RSS_SIZES as [number, number];
  const measured = big >= RSS_TARGET;
  const goal: Goal = { op: "<=", value: 256 };
  const lo = row(`peak RSS at ${small / 2 ** 20} MiB`, "32^2", "warm", "MiB");
  const hi = measured
    ? row("peak RSS at 16 GiB (measured)", "32^2", "warm", "MiB", goal)
    : row(`peak RSS at ${big / 2 ** 20} MiB`, "32^2", "warm", "MiB");
  const slope = row("peak RSS slope", "32^2", "warm", "MiB/GiB");
  const at16 = measured
    ? hi
    : row("peak RSS at 16 GiB (extrapolated)", "32^2", "warm", "MiB", goal);
  // --quick: a run per size in each pair (the peak a child reaches moves by +-15 MiB from run to
  // run, as the V8 heap grows with the collector's timing); the 16 GiB cell itself runs once
  const runs = measured ? 1 : pairs;
  for (let p = 0; p < runs; p++) {
    note(`peak RSS at ${small / 2 ** 20} and ${big / 2 ** 20} MiB, run ${p + 1}/${runs}`);
    const a = await peakRss(small);
    const b = await peakRss(big);
    const s = (b - a) / (big - small); // bytes of RSS per byte of file
    lo.values.push(a / 2 ** 20);
    hi.values.push(b / 2 ** 20);
    slope.values.push(s * 2 ** 30 / 2 ** 20);
    if (!measured) at16.values.push((b + s * (RSS_TARGET - big)) / 2 ** 20);
  }
}

// ---- run and report --------------------------------------------------------------------------
for (const [name, run] of sections) {
  if (wants(name)) await run();
}

function met(r: PerfRow): boolean | null {
  if (!r.goal || r.values.length === 0) return null;
  const m = median(r.values);
  return r.goal.op === ">=" ? m >= r.goal.value : m <= r.goal.value;
}

/**
 * A missed goal on a framing's wall-time ratio to raw that is within the noise of the same run:
 * the shortfall is inside half the spread of raw against itself (the A/A row of the same phase, N
 * and cache). Null where the row has no goal, meets it, or has no A/A row.
 */
function inNoise(r: PerfRow): boolean | null {
  if (!r.goal || met(r) !== false) return null;
  const phase = /^(write|read|random|open) [a-z0-9-]+\/raw$/.exec(r.metric)?.[1];
  if (phase === undefined) return null;
  const aa = rows.find((x) =>
    x.metric === `${phase} raw/raw (A/A)` && x.n === r.n && x.cache === r.cache
  );
  return aa ? missWithinNoise(median(r.values), r.goal, aa.values) : null;
}

const report = rows.map((r) => ({
  metric: r.metric,
  N: r.n,
  cache: r.cache,
  unit: r.unit,
  pairs: r.values.length,
  min: Math.min(...r.values),
  median: median(r.values),
  max: Math.max(...r.values),
  values: r.values,
  goal: r.goal ? `${r.goal.op} ${r.goal.value}` : "",
  met: met(r),
  "miss_within_aa_spread": inNoise(r),
}));
const seconds = (performance.now() - started) / 1000;
const meta = {
  date: new Date().toISOString(),
  quick,
  pairs,
  "size_bytes": size,
  ns: NS,
  seconds,
  cores: navigator.hardwareConcurrency,
  os: `${Deno.build.os}-${Deno.build.arch}`,
  kernel: Deno.osRelease(),
  deno: Deno.version.deno,
};

if (args.format === "json") {
  console.log(JSON.stringify({ meta, skipped, rows: report }, null, 1));
} else {
  const fmt = (x: number) =>
    !Number.isFinite(x)
      ? "-"
      : Math.abs(x) >= 100
      ? x.toFixed(0)
      : Math.abs(x) >= 10
      ? x.toFixed(1)
      : x.toFixed(2);
  const header = ["metric", "N", "cache", "unit", "min", "median", "max", "goal", "met"];
  const body = report.map((r) => [
    r.metric,
    r.N,
    r.cache,
    r.unit,
    fmt(r.min),
    fmt(r.median),
    fmt(r.max),
    r.goal,
    r.met === null ? "" : r.met ? "met" : r.miss_within_aa_spread ? "NOT MET (noise)" : "NOT MET",
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...body.map((b) => b[i]!.length)));
  const line = (cells: string[]) =>
    cells.map((c, i) => i < 4 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!)).join("  ")
      .trimEnd();
  console.log(
    `# sciobench perf ${meta.date}: ${pairs} interleaved pairs, ${
      size / 2 ** 20
    } MiB per table cell, ${meta.cores} cores, ${seconds.toFixed(0)} s`,
  );
  for (const s of skipped) console.log(`# skipped ${s}`);
  console.log(line(header));
  for (const b of body) console.log(line(b));
  if (report.some((r) => r.miss_within_aa_spread)) {
    console.log(
      "# NOT MET (noise): missed by less than half the spread of raw against itself (the A/A row" +
        " of the same phase, N and cache); this run cannot tell that miss from noise",
    );
  }
}
