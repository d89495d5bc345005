/**
 * `deno task fuzz`: small valid files of every backend, mutated (bit flips, truncation at every
 * offset, forged length/count/offset fields in both byte orders, zeroed and 0xff runs), read as
 * `info` and `read` read them (`hdf5x`: an HDF5 file with external links, one to a FIFO,
 * external raw data, sparse and partly written datasets and a NULL dataspace): the native framings in this process, the C libraries (HDF5,
 * netCDF-4, HDF4) through the isolating library child (one child for many mutants, restarted
 * after a crash). Counts per backend: mutants, clean reads, one-line errors, internal errors,
 * multi-line errors, and for the libraries the child's crashes and hangs (contained: the user
 * gets one line and exit 2). Every finding is saved under tests/testdata/fuzz/ (a few per kind),
 * where tests/fuzz_regression_test.ts reads it again.
 *
 * Usage: deno task fuzz [--seconds 150] [--seed 1] [--only hdf5,raw] [--save DIR | --no-save]
 *        [--json]
 * Exit code 1 when a native framing failed in any way or anything produced an internal or
 * multi-line error.
 * @module
 */
import { parseArgs } from "node:util";
import { crc32 } from "node:zlib";
import { SciobenchError } from "../lib/core/errors.ts";
import { backendByName } from "../lib/backends/registry.ts";
import { readWhole } from "../lib/workloads/child.ts";
import { type ChildOutcome, LibraryChild } from "../lib/workloads/isolate.ts";
import { TableFrames } from "../lib/workloads/table/mod.ts";
import { HOSTILE_FIFO, writeHostileHdf5 } from "../lib/peers/hdf5/hostile.ts";

/** One fuzzed format: a backend and the writer/reader options of its seed file. */
export interface FuzzTarget {
  /** Label used in reports and in saved file names. */
  readonly label: string;
  /** Backend that writes the seed file and reads the mutants. */
  readonly framing: string;
  /** Writer options (the backend's declared options). */
  readonly options: Record<string, unknown>;
  /** File name extension of saved findings. */
  readonly ext: string;
  /** Writes the seed file at a path instead of the backend's writer (3 table frames). */
  readonly seed?: (path: string) => void;
}

/**
 * The hostile HDF5 seed (lib/peers/hdf5/hostile.ts): external links (one to a FIFO beside it),
 * external raw data, a sparse and a partly written chunked dataset, a NULL dataspace.
 */
function hostileSeed(path: string): void {
  writeHostileHdf5(path);
  const fifo = `${path.slice(0, path.lastIndexOf("/"))}/${HOSTILE_FIFO}`;
  try {
    Deno.lstatSync(fifo);
  } catch {
    new Deno.Command("mkfifo", { args: [fifo] }).outputSync();
  }
}

/** Every target: the native framings (netCDF in its three variants) and the library peers. */
export const TARGETS: readonly FuzzTarget[] = [
  { label: "raw", framing: "raw", options: {}, ext: "raw" },
  { label: "f77", framing: "f77", options: {}, ext: "f77" },
  { label: "ieeeio", framing: "ieeeio", options: {}, ext: "raw" },
  { label: "gsd", framing: "gsd", options: {}, ext: "gsd" },
  { label: "cdf1", framing: "netcdf", options: { variant: 1 }, ext: "nc" },
  { label: "cdf2", framing: "netcdf", options: { variant: 2 }, ext: "nc" },
  { label: "cdf5", framing: "netcdf", options: { variant: 5 }, ext: "nc" },
  { label: "hdf5", framing: "hdf5", options: {}, ext: "h5" },
  { label: "hdf5x", framing: "hdf5", options: {}, ext: "h5", seed: hostileSeed },
  { label: "netcdf4", framing: "netcdf4", options: {}, ext: "nc" },
  { label: "hdf4", framing: "hdf4", options: {}, ext: "hdf" },
];

/** The target a saved finding belongs to, from its file name (`LABEL-KIND-CRC.EXT`). */
export function targetOfFinding(name: string): FuzzTarget | undefined {
  const label = name.split("-")[0];
  return TARGETS.find((t) => t.label === label);
}

/** What reading one mutant did. */
export type Verdict =
  | "ok"
  | "error"
  | "internal"
  | "multiline"
  | "crash"
  | "hang";

/** Classifies an error thrown by an in-process read. */
export function classifyError(e: unknown): { verdict: Verdict; message: string } {
  const message = e instanceof Error ? e.message : String(e);
  if (!(e instanceof SciobenchError)) return { verdict: "internal", message };
  return { verdict: /[\r\n]/.test(message) ? "multiline" : "error", message };
}

/** Classifies how the library child answered. */
export function classifyOutcome(o: ChildOutcome): { verdict: Verdict; message: string } {
  if (o.kind === "ok") return { verdict: "ok", message: "" };
  if (o.kind === "hang") return { verdict: "hang", message: "no answer within the wall limit" };
  if (o.kind === "crash") {
    return {
      verdict: "crash",
      message: `${o.signal ?? `exit ${o.code}`}: ${o.stderr.split("\n")[0]}`,
    };
  }
  if (o.internal) return { verdict: "internal", message: o.message };
  return { verdict: /[\r\n]/.test(o.message) ? "multiline" : "error", message: o.message };
}

/** Small deterministic generator (xorshift32). */
class Rand {
  #s: number;
  constructor(seed: number) {
    this.#s = (seed | 0) || 0x9e3779b9;
  }
  next(): number {
    let x = this.#s;
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    this.#s = x;
    return (x >>> 0) / 2 ** 32;
  }
  int(n: number): number {
    return Math.floor(this.next() * n);
  }
}

/** Writes the seed file of `target` (N = 4, 3 frames) at `path`. */
export function writeSeed(target: FuzzTarget, path: string): Uint8Array {
  if (target.seed) {
    target.seed(path);
    return Deno.readFileSync(path);
  }
  const frames = new TableFrames(4, 7);
  const sink = backendByName(target.framing).openWriter(path, {
    create: "truncate",
    backendOptions: target.options,
    fsync: "none",
  });
  for (let i = 0; i < 3; i++) sink.writeFrame(frames.frame(i));
  sink.close();
  return Deno.readFileSync(path);
}

/** Mutant number `k` of `seed`: one of five strategies; truncation walks every offset in turn. */
export function mutate(seed: Uint8Array, k: number, rand: Rand): Uint8Array {
  const size = seed.length;
  const strategy = k % 5;
  if (strategy === 0) return seed.slice(0, Math.floor(k / 5) % size);
  const out = seed.slice();
  if (strategy === 1) {
    for (let n = 1 + rand.int(4); n > 0; n--) out[rand.int(size)]! ^= 1 << rand.int(8);
    return out;
  }
  if (strategy === 2 || strategy === 4) {
    const width = [2, 4, 8][rand.int(3)]!;
    const at = rand.next() < 0.5 ? rand.int(size) & ~3 : rand.int(size);
    const values = [
      0,
      1,
      2,
      0x7f,
      0x80,
      0xff,
      0x7fff,
      0x8000,
      0xffff,
      0x7fffffff,
      0x80000000,
      0xffffffff,
      size - 1,
      size,
      size + 1,
      size * 2,
      2 ** 32 + 1,
      2 ** 40,
      2 ** 53 - 1,
    ];
    const value = BigInt(values[rand.int(values.length)]!);
    const little = rand.next() < 0.5;
    const field = new Uint8Array(8);
    const view = new DataView(field.buffer);
    if (rand.next() < 0.1) field.fill(0xff); // -1 in any width
    else view.setBigUint64(0, BigInt.asUintN(64, value), little);
    const bytes = little ? field.subarray(0, width) : field.subarray(8 - width);
    for (let i = 0; i < width && at + i < size; i++) out[at + i] = bytes[i]!;
    if (strategy === 4) out[rand.int(size)]! ^= 1 << rand.int(8);
    return out;
  }
  const at = rand.int(size);
  const len = 1 + rand.int(64);
  out.fill(rand.next() < 0.8 ? 0 : 0xff, at, Math.min(size, at + len));
  return out;
}

/** Counts for one target. */
export interface FuzzCounts {
  label: string;
  mutants: number;
  ok: number;
  error: number;
  internal: number;
  multiline: number;
  crash: number;
  hang: number;
  seconds: number;
}

/** Options of a fuzz run. */
export interface FuzzOptions {
  /** Seconds for this target. */
  readonly seconds: number;
  /** Upper bound on mutants for this target. */
  readonly maxMutants: number;
  /** RNG seed. */
  readonly seed: number;
  /** Directory for findings, or undefined to save nothing. */
  readonly save?: string;
  /** Scratch directory. */
  readonly dir: string;
  /** Findings saved per (target, verdict). */
  readonly savePerKind: number;
}

/** Fuzzes one target for its time budget; returns its counts. */
export async function fuzzTarget(target: FuzzTarget, options: FuzzOptions): Promise<FuzzCounts> {
  const seedPath = `${options.dir}/${target.label}.seed.${target.ext}`;
  const seed = writeSeed(target, seedPath);
  const path = `${options.dir}/${target.label}.mutant.${target.ext}`;
  const rand = new Rand(options.seed ^ crc32(target.label));
  const counts: FuzzCounts = {
    label: target.label,
    mutants: 0,
    ok: 0,
    error: 0,
    internal: 0,
    multiline: 0,
    crash: 0,
    hang: 0,
    seconds: 0,
  };
  const saved = new Map<Verdict, number>();
  const library = backendByName(target.framing).kind === "peer";
  let child: LibraryChild | undefined;
  const limits = { memoryBytes: 2 ** 30, cpuSeconds: 5, wallSeconds: 15 };
  const start = performance.now();
  const deadline = start + options.seconds * 1000;
  // One file rewritten in place: truncating a file to zero and refilling it makes ext4 flush it
  // (auto_da_alloc), which costs milliseconds per mutant.
  const mutant = Deno.openSync(path, { read: true, write: true, create: true });
  try {
    for (let k = 0; k < options.maxMutants && performance.now() < deadline; k++) {
      const bytes = mutate(seed, k, rand);
      mutant.seekSync(0, Deno.SeekMode.Start);
      for (let done = 0; done < bytes.length;) done += mutant.writeSync(bytes.subarray(done));
      mutant.truncateSync(bytes.length);
      let verdict: Verdict;
      let message: string;
      if (library) {
        if (!child || child.dead) child = LibraryChild.start(limits, false);
        const outcome = await child.request({
          op: "check",
          path,
          framing: target.framing,
        });
        ({ verdict, message } = classifyOutcome(outcome));
      } else {
        const t0 = performance.now();
        try {
          readWhole(path, target.framing);
          verdict = "ok";
          message = "";
        } catch (e) {
          ({ verdict, message } = classifyError(e));
        }
        if (performance.now() - t0 > 5000) {
          verdict = "hang";
          message = `took ${((performance.now() - t0) / 1000).toFixed(1)} s`;
        }
      }
      counts.mutants++;
      counts[verdict]++;
      if (verdict !== "ok" && verdict !== "error" && options.save) {
        const n = saved.get(verdict) ?? 0;
        if (n < options.savePerKind) {
          saved.set(verdict, n + 1);
          const hex = (crc32(bytes) >>> 0).toString(16).padStart(8, "0");
          const name = `${target.label}-${verdict}-${hex}.${target.ext}`;
          Deno.mkdirSync(options.save, { recursive: true });
          Deno.writeFileSync(`${options.save}/${name}`, bytes);
          console.error(`fuzz: ${name}: ${message.slice(0, 200)}`);
        }
      }
    }
  } finally {
    mutant.close();
    await child?.close();
  }
  counts.seconds = (performance.now() - start) / 1000;
  return counts;
}

async function main(): Promise<number> {
  const { values } = parseArgs({
    args: Deno.args,
    options: {
      seconds: { type: "string", default: "150" },
      seed: { type: "string", default: "1" },
      only: { type: "string" },
      "max-mutants": { type: "string", default: "1000000000" },
      save: {
        type: "string",
        default: new URL("../tests/testdata/fuzz", import.meta.url).pathname,
      },
      "no-save": { type: "boolean", default: false },
      json: { type: "boolean", default: false },
    },
  });
  const seconds = Number(values.seconds);
  if (!(seconds > 0)) throw new Error(`bad --seconds '${values.seconds}'`);
  const only = values.only?.split(",");
  const targets = TARGETS.filter((t) => !only || only.includes(t.label)).filter((t) =>
    backendByName(t.framing).unavailable() === null
  );
  // Libraries pay a pipe round trip per mutant: they get twice a native framing's share.
  const weight = (t: FuzzTarget) => backendByName(t.framing).kind === "peer" ? 2 : 1;
  const total = targets.reduce((a, t) => a + weight(t), 0);
  const dir = Deno.makeTempDirSync({ prefix: "sciobench-fuzz-" });
  const rows: FuzzCounts[] = [];
  try {
    for (const t of targets) {
      rows.push(
        await fuzzTarget(t, {
          seconds: (seconds * weight(t)) / total,
          maxMutants: Number(values["max-mutants"]),
          seed: Number(values.seed),
          save: values["no-save"] ? undefined : values.save,
          dir,
          savePerKind: 3,
        }),
      );
    }
  } finally {
    Deno.removeSync(dir, { recursive: true });
  }
  if (values.json) {
    console.log(JSON.stringify(rows, null, 1));
  } else {
    console.log("target,mutants,ok,error,internal,multiline,crash,hang,seconds,mutants_per_s");
    for (const r of rows) {
      console.log(
        [r.label, r.mutants, r.ok, r.error, r.internal, r.multiline, r.crash, r.hang]
          .concat([r.seconds.toFixed(1), (r.mutants / r.seconds).toFixed(0)]).join(","),
      );
    }
  }
  const bad = rows.some((r) =>
    r.internal > 0 || r.multiline > 0 ||
    (backendByName(TARGETS.find((t) => t.label === r.label)!.framing).kind === "native" &&
      (r.crash > 0 || r.hang > 0))
  );
  return bad ? 1 : 0;
}

if (import.meta.main) Deno.exit(await main());
