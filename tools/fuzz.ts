/**
 * `deno task fuzz`: small valid files of every backend, mutated (bit flips, truncation at every
 * offset, forged length/count/offset fields in both byte orders, zeroed and 0xff runs), read as
 * `info` and `read` read them (`hdf5x`: an HDF5 file with external links, one to a FIFO,
 * external raw data, sparse and partly written datasets and a NULL dataspace): the native framings in this process, the C libraries (HDF5,
 * netCDF-4, HDF4) through the isolating library child (one child for many mutants, restarted
 * after a crash). A store target (Zarr) mutates one member file of a small store (`member`): its
 * metadata JSON, as bytes and, every other mutant, as JSON (a value anywhere replaced by a hostile
 * one: huge, negative or fractional numbers, numbers past float64, wrong types, odd dtypes, deep
 * nesting, long arrays, a key removed); it is read in the library child too, under the same
 * memory, CPU and wall limits, where a read that exceeds them counts as a crash. A Zarr v3
 * shard file's index (`zshard`, `zshardgz`) is mutated as bytes (its CRC-32C left stale) or by
 * entries made hostile (huge, overlapping, past the data or the file) with the CRC-32C made
 * right again, so that the reader's checks of the values are what refuses them. A zip store
 * (`zzip`, zarr-python's ZipStore) is mutated as one file. Counts per backend: mutants, clean reads, one-line errors, internal errors,
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
import { crc32, deflateRawSync } from "node:zlib";
import { SciobenchError } from "../lib/core/errors.ts";
import { backendByName } from "../lib/backends/registry.ts";
import { readWhole } from "../lib/workloads/child.ts";
import { type ChildOutcome, LibraryChild } from "../lib/workloads/isolate.ts";
import { TableFrames } from "../lib/workloads/table/mod.ts";
import { HOSTILE_FIFO, writeHostileHdf5 } from "../lib/peers/hdf5/hostile.ts";
import { crc32c } from "../lib/framings/zarr/crc32c.ts";

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
  /**
   * For a store framing: the member file of the seed store (a directory) that is mutated, the
   * rest left as written; findings are saved as whole stores (directories).
   */
  readonly member?: string;
  /** Makes mutant number `k` of the seed (bytes of the file or member) instead of {@link mutate}. */
  readonly mutator?: (seed: Uint8Array, k: number, rand: Rand) => Uint8Array;
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

/**
 * A zip store (as zarr-python's ZipStore writes one) at `path`: a small v2 store (zlib chunks,
 * consolidated) zipped with its entries stored, but `.zmetadata` deflated.
 */
function zipSeed(path: string): void {
  const dir = `${path}.store`;
  writeSeed(
    { label: "zip", framing: "zarr", options: ZIP_STORE, ext: "zarr", member: ".zgroup" },
    dir,
  );
  const entries: { name: string; bytes: Uint8Array }[] = [];
  const walk = (rel: string) => {
    for (
      const e of [...Deno.readDirSync(`${dir}/${rel}`)].sort((a, b) => a.name < b.name ? -1 : 1)
    ) {
      const name = rel === "" ? e.name : `${rel}/${e.name}`;
      if (e.isDirectory) walk(name);
      else entries.push({ name, bytes: Deno.readFileSync(`${dir}/${name}`) });
    }
  };
  walk("");
  Deno.removeSync(dir, { recursive: true });
  const parts: Uint8Array[] = [];
  const central: Uint8Array[] = [];
  let at = 0;
  for (const { name, bytes } of entries) {
    const deflate = name === ".zmetadata";
    const data = deflate ? deflateRawSync(bytes) : bytes;
    const key = new TextEncoder().encode(name);
    const crc = crc32(bytes) >>> 0;
    const local = new DataView(new ArrayBuffer(30));
    local.setUint32(0, 0x04034b50, true);
    local.setUint16(4, 20, true);
    local.setUint16(8, deflate ? 8 : 0, true);
    local.setUint16(12, 0x21, true);
    local.setUint32(14, crc, true);
    local.setUint32(18, data.length, true);
    local.setUint32(22, bytes.length, true);
    local.setUint16(26, key.length, true);
    const head = new DataView(new ArrayBuffer(46));
    head.setUint32(0, 0x02014b50, true);
    head.setUint16(4, 20, true);
    head.setUint16(6, 20, true);
    head.setUint16(10, deflate ? 8 : 0, true);
    head.setUint16(14, 0x21, true);
    head.setUint32(16, crc, true);
    head.setUint32(20, data.length, true);
    head.setUint32(24, bytes.length, true);
    head.setUint16(28, key.length, true);
    head.setUint32(42, at, true);
    parts.push(new Uint8Array(local.buffer), key, data);
    central.push(new Uint8Array(head.buffer), key);
    at += 30 + key.length + data.length;
  }
  const dirBytes = central.reduce((a, c) => a + c.length, 0);
  const end = new DataView(new ArrayBuffer(22));
  end.setUint32(0, 0x06054b50, true);
  end.setUint16(8, entries.length, true);
  end.setUint16(10, entries.length, true);
  end.setUint32(12, dirBytes, true);
  end.setUint32(16, at, true);
  const out = new Uint8Array(at + dirBytes + 22);
  let p = 0;
  for (const part of [...parts, ...central, new Uint8Array(end.buffer)]) {
    out.set(part, p);
    p += part.length;
  }
  Deno.writeFileSync(path, out);
}

/** The options of the store in the zip seed. */
const ZIP_STORE = { compressor: "zlib", consolidated: true };

/** Inner chunks (frames) per shard of the v3 seeds: 3 frames are written, so one is not stored. */
const SHARD = 4;

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
  // Zarr v2 metadata
  {
    label: "zarray",
    framing: "zarr",
    options: {},
    ext: "zarr",
    member: "particles/position/.zarray",
  },
  { label: "zgroup", framing: "zarr", options: {}, ext: "zarr", member: "particles/.zgroup" },
  {
    label: "zattrs",
    framing: "zarr",
    options: {},
    ext: "zarr",
    member: "particles/orientation/.zattrs",
  },
  {
    label: "zmetadata",
    framing: "zarr",
    options: { consolidated: true, compressor: "zlib" },
    ext: "zarr",
    member: ".zmetadata",
  },
  // Zarr v3: an array's zarr.json (sharded, CRC-32C on each inner chunk), and a shard file of
  // SHARD inner chunks (3 frames stored, one empty) whose index at its end is made hostile
  {
    label: "zarrjson",
    framing: "zarr",
    options: { version: 3, shard: SHARD, crc32c: true },
    ext: "zarr",
    member: "particles/position/zarr.json",
  },
  {
    label: "zshard",
    framing: "zarr",
    options: { version: 3, shard: SHARD, crc32c: true },
    ext: "zarr",
    member: "particles/position/c/0/0/0",
    mutator: (seed, k, rand) => mutateShardIndex(seed, SHARD, k, rand),
  },
  {
    label: "zshardgz",
    framing: "zarr",
    options: { version: 3, shard: SHARD, compressor: "gzip" },
    ext: "zarr",
    member: "particles/orientation/c/0/0/0",
    mutator: (seed, k, rand) => mutateShardIndex(seed, SHARD, k, rand),
  },
  // a zip store (zarr-python's ZipStore), mutated as one file: its central directory, local
  // headers and entries
  { label: "zzip", framing: "zarr", options: {}, ext: "zip", seed: zipSeed },
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
export class Rand {
  #s: number;
  /** A generator started from `seed` (0 picks a fixed one). */
  constructor(seed: number) {
    this.#s = (seed | 0) || 0x9e3779b9;
  }
  /** The next number, uniform in [0, 1). */
  next(): number {
    let x = this.#s;
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    this.#s = x;
    return (x >>> 0) / 2 ** 32;
  }
  /** The next integer, uniform in 0 to `n` - 1. */
  int(n: number): number {
    return Math.floor(this.next() * n);
  }
}

/**
 * Writes the seed file of `target` (N = 4, 3 frames) at `path`; its bytes (a store target's:
 * those of its member).
 */
export function writeSeed(target: FuzzTarget, path: string): Uint8Array {
  if (target.seed) {
    target.seed(path);
    return Deno.readFileSync(path);
  }
  if (target.member !== undefined) {
    try {
      Deno.removeSync(path, { recursive: true });
    } catch {
      // none yet
    }
  }
  const frames = new TableFrames(4, 7);
  const sink = backendByName(target.framing).openWriter(path, {
    create: "truncate",
    backendOptions: target.options,
    fsync: "none",
  });
  for (let i = 0; i < 3; i++) sink.writeFrame(frames.frame(i));
  sink.close();
  return Deno.readFileSync(target.member === undefined ? path : `${path}/${target.member}`);
}

/** Copies the directory (store) `from` to `to`, made anew. */
function copyStore(from: string, to: string): void {
  try {
    Deno.removeSync(to, { recursive: true });
  } catch {
    // none yet
  }
  Deno.mkdirSync(to);
  for (const e of Deno.readDirSync(from)) {
    if (e.isDirectory) copyStore(`${from}/${e.name}`, `${to}/${e.name}`);
    else Deno.copyFileSync(`${from}/${e.name}`, `${to}/${e.name}`);
  }
}

/**
 * JSON text put in place of a value of a metadata document: numbers huge, negative, fractional
 * or past float64, wrong types, dtypes and codecs a reader may not know, deep nesting, long
 * arrays (each as the raw text, so values JSON.stringify cannot make are there too).
 */
const HOSTILE_JSON: readonly string[] = [
  "-1",
  "0",
  "1.5",
  "-0",
  "2147483648",
  "4294967297",
  "9007199254740993",
  "1e308",
  "1e999",
  "-1e999",
  "123456789012345678901234567890",
  "null",
  "true",
  '""',
  '"x"',
  "{}",
  "[]",
  "[0]",
  "[-1, 3]",
  "[1e15, 1e15, 3]",
  "[4294967296, 4294967296, 4294967296]",
  "[9007199254740991, 1, 1]",
  "[1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1]",
  '"<f8"',
  '">f4"',
  '"|b1"',
  '"<U10"',
  '"<M8[ns]"',
  '"|V12"',
  '"<c16"',
  '[["a", "<f4"], ["b", "<i8", [2]]]',
  '{"id": "blosc", "cname": "lz4"}',
  '{"id": "zlib", "level": 99}',
  '{"id": "gzip"}',
  '[{"id": "delta", "dtype": "<f4"}]',
  '"F"',
  '"\\ud800"',
  '"../../../etc"',
  `${"[".repeat(20000)}${"]".repeat(20000)}`,
  `[${new Array(200000).fill("0").join(",")}]`,
];

/** Every place in `doc` a value can be put: [container, key] pairs. */
function places(doc: unknown): [Record<string, unknown> | unknown[], string | number][] {
  const out: [Record<string, unknown> | unknown[], string | number][] = [];
  const walk = (v: unknown) => {
    if (Array.isArray(v)) {
      v.forEach((x, i) => {
        out.push([v, i]);
        walk(x);
      });
    } else if (v !== null && typeof v === "object") {
      for (const [k, x] of Object.entries(v)) {
        out.push([v as Record<string, unknown>, k]);
        walk(x);
      }
    }
  };
  walk(doc);
  return out;
}

/**
 * A JSON-aware mutant of the metadata document `text`: one value replaced by a hostile one
 * ({@link HOSTILE_JSON}), or (one time in eight) a key removed.
 */
export function mutateJson(text: string, rand: Rand): Uint8Array {
  const doc = JSON.parse(text) as unknown;
  const spots = places(doc);
  if (spots.length === 0) {
    return new TextEncoder().encode(HOSTILE_JSON[rand.int(HOSTILE_JSON.length)]);
  }
  const [holder, key] = spots[rand.int(spots.length)]!;
  const token = "\u0000HOSTILE\u0000";
  if (!Array.isArray(holder) && rand.next() < 0.125) delete holder[key as string];
  else (holder as Record<string | number, unknown>)[key] = token;
  const hostile = HOSTILE_JSON[rand.int(HOSTILE_JSON.length)]!;
  return new TextEncoder().encode(
    JSON.stringify(doc, null, 4).replace(JSON.stringify(token), () => hostile),
  );
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

/** Bytes of one shard index entry: offset and nbytes, uint64 little-endian each. */
const ENTRY = 16;

/**
 * Mutant number `k` of the shard file `seed` whose index of `count` entries (and its CRC-32C) is
 * at its end. One time in four the index's bytes go through {@link mutate} (its CRC-32C stale, so
 * mostly refused by it; a truncated index shortens the file); else one or two entries are made
 * hostile (offset or nbytes huge, 2^64-1 in one half only, past the data or the file's end, an
 * inner chunk overlapping another, zero bytes) and the CRC-32C recomputed so the reader must
 * refuse them by their values, and one time in three the data before the index is cut or grown
 * so that entries point past its end.
 */
export function mutateShardIndex(
  seed: Uint8Array,
  count: number,
  k: number,
  rand: Rand,
): Uint8Array {
  const indexLength = count * ENTRY + 4;
  const dataEnd = seed.length - indexLength;
  const index = seed.subarray(dataEnd);
  if (k % 4 === 0) {
    const bad = mutate(index, k / 4, rand);
    const out = new Uint8Array(dataEnd + bad.length);
    out.set(seed.subarray(0, dataEnd));
    out.set(bad, dataEnd);
    return out;
  }
  // the data part, maybe cut short or grown, then the index
  let data = dataEnd;
  if (k % 3 === 0) data = rand.next() < 0.5 ? rand.int(dataEnd) : dataEnd + 1 + rand.int(4096);
  const out = new Uint8Array(data + indexLength);
  out.set(seed.subarray(0, Math.min(data, dataEnd)));
  out.set(index, data);
  const view = new DataView(out.buffer, data, count * ENTRY);
  const entry = (e: number) =>
    [view.getBigUint64(e * ENTRY, true), view.getBigUint64(e * ENTRY + 8, true)] as const;
  const max = 2n ** 64n - 1n;
  for (let n = 1 + rand.int(2); n > 0; n--) {
    const e = rand.int(count);
    const other = entry(rand.int(count));
    const size = BigInt(out.length);
    const end = BigInt(data);
    const pairs: (readonly [bigint, bigint])[] = [
      [max, 0n],
      [0n, max],
      [max - 1n, 52n],
      [2n ** 63n, 16n],
      [2n ** 53n, 1n],
      [2n ** 53n - 1n, 2n ** 53n - 1n],
      [2n ** 32n, 2n ** 32n],
      [0n, 2n ** 40n],
      [0n, end + 1n],
      [end, 52n],
      [end - 1n, 2n],
      [size, 0n],
      [size - 4n, 52n],
      [0n, 0n],
      other,
      [other[0] + 1n, other[1]],
      [other[0], other[1] * 2n],
      [other[0] + other[1] - 1n, other[1]],
    ];
    const [offset, nbytes] = pairs[rand.int(pairs.length)]!;
    view.setBigUint64(e * ENTRY, BigInt.asUintN(64, offset), true);
    view.setBigUint64(e * ENTRY + 8, BigInt.asUintN(64, nbytes), true);
  }
  const crcAt = data + count * ENTRY;
  if (rand.next() < 0.9) {
    new DataView(out.buffer).setUint32(crcAt, crc32c(out.subarray(data, crcAt)), true);
  }
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
  const store = target.member !== undefined;
  if (store) copyStore(seedPath, path);
  const seedText = new TextDecoder().decode(seed);
  let json = false;
  try {
    JSON.parse(seedText);
    json = true;
  } catch {
    // binary
  }
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
  // store targets are read in the child too: its limits bound what a hostile shape allocates
  const library = backendByName(target.framing).kind === "peer" || store;
  let child: LibraryChild | undefined;
  const limits = { memoryBytes: 2 ** 30, cpuSeconds: 5, wallSeconds: 15 };
  const start = performance.now();
  const deadline = start + options.seconds * 1000;
  // One file rewritten in place: truncating a file to zero and refilling it makes ext4 flush it
  // (auto_da_alloc), which costs milliseconds per mutant.
  const file = store ? `${path}/${target.member}` : path;
  const mutant = Deno.openSync(file, { read: true, write: true, create: true });
  try {
    for (let k = 0; k < options.maxMutants && performance.now() < deadline; k++) {
      const bytes = target.mutator
        ? target.mutator(seed, k, rand)
        : json && k % 2 === 1
        ? mutateJson(seedText, rand)
        : mutate(seed, k, rand);
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
          if (store) copyStore(path, `${options.save}/${name}`);
          else Deno.writeFileSync(`${options.save}/${name}`, bytes);
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
