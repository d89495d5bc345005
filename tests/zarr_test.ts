/**
 * Tests of the Zarr v2 framing and of stores (directories of member files) in the engine: the
 * metadata JSON as zarr-python writes it, frames through an in-memory store with every option,
 * the fill value of a missing chunk, hostile metadata in one line, the write's durability order
 * (every chunk file and directory fsynced before the metadata), a store's size, cold drop and
 * removal, detection, and the table. With python3-zarr 2.13 (Debian) for /usr/bin/python3: it
 * reads every store sciobench writes (values checked), its stores are byte for byte ours for
 * compressor null (metadata for zlib too), and sciobench reads every store it writes
 * (DirectoryStore, NestedDirectoryStore, consolidated, compressed, big-endian).
 * @module
 */
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { backendByName } from "../lib/backends/registry.ts";
import type { Backend } from "../lib/backends/backend.ts";
import { FormatError } from "../lib/core/errors.ts";
import { zarr } from "../lib/framings/zarr/mod.ts";
import { PyFloat, pythonJson } from "../lib/framings/zarr/json.ts";
import type { ChunkRef, Frame, FrameIndex } from "../lib/framings/types.ts";
import { MemoryStore } from "../lib/io/memory.ts";
import { DROP_DOES_NOT_WORK, dropCache, readThrough, residency } from "../lib/io/cache.ts";
import { storeBytes, storeFiles, StoreReader } from "../lib/io/store.ts";
import { statfs } from "../lib/sys/libc.ts";
import { NATIVE_ORDER } from "../lib/bytes/byteswap.ts";
import { TableFrames } from "../lib/workloads/table/frames.ts";
import { chunkBytes } from "../lib/framings/kit.ts";
import {
  observeDuring,
  peerTest,
  PYTHON,
  pythonZarrMissing as pythonZarrMissingWith,
  runCli,
  tempDir,
} from "./_helpers.ts";
import { zarrPythonUnavailable } from "../lib/peers/zarr_python/mod.ts";

/** The frames a test writes: the table's, N particles, seed 7. */
function tableFrames(n: number): TableFrames {
  return new TableFrames(n, 7);
}

/** Writes `count` table frames of N = `n` to a new store at `path` through the zarr backend. */
function writeStore(
  path: string,
  n: number,
  count: number,
  options: Record<string, unknown> = {},
  endian: "little" | "big" | "native" = "native",
  fsync: "end" | "each" | "none" = "end",
): TableFrames {
  const frames = tableFrames(n);
  const sink = backendByName("zarr").openWriter(path, {
    create: "new",
    endian,
    fsync,
    backendOptions: options,
  });
  for (let i = 0; i < count; i++) sink.writeFrame(frames.frame(i));
  sink.close();
  return frames;
}

/** Reads every frame of the store at `path` and checks it equals the table's frames. */
function checkFrames(backend: Backend, path: string, frames: TableFrames, count: number): void {
  const source = backend.openReader(path, { layout: frames.layout });
  try {
    assert.equal(source.frameCount, count, path);
    for (let i = 0; i < count; i++) {
      const got = source.readFrame(i);
      const want = frames.frame(i).chunks;
      assert.deepEqual(got.map((c) => c.name).sort(), want.map((c) => c.name).sort());
      for (const w of want) {
        const g = got.find((c) => c.name === w.name)!;
        assert.deepEqual(g.shape, w.shape, `${path} frame ${i} ${w.name}`);
        assert.deepEqual(g.data, chunkBytes(w), `${path} frame ${i} ${w.name}`);
      }
    }
  } finally {
    source.close();
  }
}

// ------------------------------------------------------------------------------------------------
// The metadata JSON, frames in memory, fill values, hostile metadata
// ------------------------------------------------------------------------------------------------

Deno.test("zarr json: Python's json.dumps(indent=4, sort_keys=True, ensure_ascii=True)", () => {
  // the expected texts are what python3 printed for the same values
  const floats = [0, -0, 1.5, 1e16, 1e15, 1e-5, 0.0001, 123456789.125, NaN, -Infinity];
  const more = [1.2345678901234567e+20, 5e-324, 2.5e-7, 100];
  assert.equal(
    pythonJson([...floats, ...more].map((x) => new PyFloat(x))),
    "[\n    0.0,\n    -0.0,\n    1.5,\n    1e+16,\n    1000000000000000.0,\n    1e-05,\n    " +
      "0.0001,\n    123456789.125,\n    NaN,\n    -Infinity,\n    1.2345678901234567e+20,\n    " +
      "5e-324,\n    2.5e-07,\n    100.0\n]",
  );
  assert.equal(
    pythonJson({ b: [1, 2], a: {}, c: [], 'é"\\\n\x7f\x01': "ü😀" }),
    '{\n    "a": {},\n    "b": [\n        1,\n        2\n    ],\n    "c": [],\n    ' +
      '"\\u00e9\\"\\\\\\n\\u007f\\u0001": "\\u00fc\\ud83d\\ude00"\n}',
  );
  assert.equal(pythonJson({ zarr_format: 2 }), '{\n    "zarr_format": 2\n}');
  assert.throws(() => pythonJson(0.5), RangeError, "a plain number is an integer");
});

/** The write ops of `count` table frames of N = `n` applied to a new in-memory store. */
function memoryStore(n: number, count: number, options: Record<string, unknown>): MemoryStore {
  const frames = tableFrames(n);
  const store = new MemoryStore("<mem>");
  const writer = zarr.createWriter(options);
  store.apply(writer.begin());
  for (let i = 0; i < count; i++) store.apply(writer.writeFrame(frames.frame(i)));
  const finish = writer.finish();
  // the chunks are made durable before the first metadata file is written
  assert.equal(finish[0]!.kind, "sync");
  assert.ok(finish.slice(1).every((op) => op.kind === "write" && op.member!.includes(".z")));
  store.apply(finish);
  return store;
}

/** The stored bytes of chunk `ref` of `store` (decoded through the index when encoded). */
function storedChunk(index: FrameIndex, store: MemoryStore, ref: ChunkRef): Uint8Array {
  const into = new Uint8Array(ref.bytes);
  const file = store.files.get(ref.member!);
  if (ref.codec !== undefined || file === undefined) index.decodeChunk!(ref, file, into);
  else into.set(file.subarray(ref.offset, ref.offset + ref.bytes));
  return into;
}

Deno.test("zarr framing: frames through an in-memory store with every option", () => {
  const n = 5, count = 3;
  for (const separator of [".", "/"]) {
    for (const compressor of ["none", "zlib", "gzip"]) {
      for (const endian of ["little", "big"] as const) {
        const what = `${separator} ${compressor} ${endian}`;
        const store = memoryStore(n, count, { separator, compressor, endian });
        const key = `particles/position/${[2, 0, 0].join(separator)}`;
        assert.ok(store.files.has(key), `${what}: ${[...store.files.keys()]}`);
        const index = zarr.store!.openStore(store);
        assert.equal(index.frameCount, count, what);
        assert.equal(index.order, endian, what);
        const frames = tableFrames(n);
        for (let i = 0; i < count; i++) {
          const refs = index.chunks(i);
          assert.deepEqual(refs.map((r) => r.name), [
            "particles/orientation",
            "particles/position",
          ]);
          const want = frames.bytesIn(i, endian);
          const names = frames.frame(i).chunks.map((c) => c.name);
          for (const ref of refs) {
            assert.equal(ref.codec, compressor === "none" ? undefined : compressor, what);
            const expected = want[names.indexOf(ref.name)]!;
            assert.deepEqual(storedChunk(index, store, ref), expected, `${what} frame ${i}`);
          }
        }
        const zarray = JSON.parse(
          new TextDecoder().decode(store.files.get("particles/position/.zarray")),
        );
        assert.deepEqual(zarray.shape, [count, n, 3]);
        assert.deepEqual(zarray.chunks, [1, n, 3]);
        assert.equal(zarray.dtype, endian === "little" ? "<f4" : ">f4");
        assert.equal(zarray.dimension_separator, separator === "/" ? "/" : undefined);
      }
    }
  }
  const consolidated = memoryStore(2, 2, { consolidated: true });
  const doc = JSON.parse(new TextDecoder().decode(consolidated.files.get(".zmetadata")));
  assert.deepEqual(Object.keys(doc.metadata).sort(), [
    ".zgroup",
    "particles/.zgroup",
    "particles/orientation/.zarray",
    "particles/orientation/.zattrs",
    "particles/position/.zarray",
    "particles/position/.zattrs",
  ]);
  // read from .zmetadata alone: the per-array files are not needed
  for (const name of [...consolidated.files.keys()]) {
    if (name !== ".zmetadata" && name.includes(".z")) consolidated.files.delete(name);
  }
  const index = zarr.store!.openStore(consolidated);
  assert.equal(index.frameCount, 2);
  assert.equal((index.describe!() as { consolidated: boolean }).consolidated, true);
});

Deno.test("zarr framing: a missing chunk file reads as the fill value", () => {
  const store = memoryStore(4, 2, { compressor: "zlib" });
  store.files.delete("particles/position/1.0.0");
  let index = zarr.store!.openStore(store);
  const ref = index.chunks(1).find((r) => r.name === "particles/position")!;
  assert.deepEqual(storedChunk(index, store, ref), new Uint8Array(48));
  const zarray = JSON.parse(
    new TextDecoder().decode(store.files.get("particles/position/.zarray")),
  );
  store.files.set(
    "particles/position/.zarray",
    new TextEncoder().encode(JSON.stringify({ ...zarray, fill_value: 2.5 })),
  );
  index = zarr.store!.openStore(store);
  const filled = new Float32Array(storedChunk(index, store, ref).buffer);
  assert.deepEqual([...filled], new Array(12).fill(2.5));
});

Deno.test("zarr framing: writes refuse frames that change their arrays", () => {
  const w = zarr.createWriter({});
  const frame = (shape: number[]): Frame => ({
    step: 0,
    chunks: [{ name: "a/x", dtype: "float32", shape, data: new Float32Array(shape[0]!) }],
  });
  w.writeFrame(frame([2]));
  assert.throws(() => w.writeFrame(frame([3])), /frame 1 holds a\/x 3; every frame of a store/);
  assert.throws(
    () =>
      zarr.createWriter({}).writeFrame({
        step: 0,
        chunks: [{ ...frame([1]).chunks[0]!, name: "../x" }],
      }),
    /chunk name '\.\.\/x' is not an array path/,
  );
});

/** The `.zarray` of a one-frame store with `change` merged into zarr-python's fields. */
function zarrayText(change: Record<string, unknown>): string {
  return JSON.stringify({
    chunks: [1, 4, 3],
    compressor: null,
    dtype: "<f4",
    fill_value: 0.0,
    filters: null,
    order: "C",
    shape: [1, 4, 3],
    zarr_format: 2,
    ...change,
  });
}

/** A store directory at `dir` with a root group and array `a` whose .zarray is `zarray`. */
function storeWith(dir: string, zarray: string, files: Record<string, string> = {}): string {
  Deno.mkdirSync(`${dir}/a`, { recursive: true });
  Deno.writeTextFileSync(`${dir}/.zgroup`, '{"zarr_format": 2}');
  Deno.writeTextFileSync(`${dir}/a/.zarray`, zarray);
  for (const [name, text] of Object.entries(files)) Deno.writeTextFileSync(`${dir}/${name}`, text);
  return dir;
}

Deno.test("zarr reader: hostile metadata is a FormatError in one line naming the file", () => {
  using tmp = tempDir();
  const cases: [string, string, Record<string, string>, RegExp][] = [
    ["shape", zarrayText({ shape: [-1, 4, 3] }), {}, /shape \[-1,4,3\] holds -1/],
    ["rank", zarrayText({ chunks: [1, 4] }), {}, /differ in rank/],
    [
      "huge",
      zarrayText({ shape: [1, 1e6, 1e6], chunks: [1, 1e6, 1e6] }),
      {},
      /more than the 1073741824/,
    ],
    ["dtype", zarrayText({ dtype: "<c16" }), {}, /dtype "<c16" is not one sciobench reads/],
    ["order1", zarrayText({ dtype: "<u1" }), {}, /'\|' is the byte order of 1-byte types/],
    ["blosc", zarrayText({ compressor: { id: "blosc" } }), {}, /compressor "blosc" is not one/],
    ["fortran", zarrayText({ order: "F" }), {}, /C-order arrays only/],
    ["filters", zarrayText({ filters: [{ id: "delta" }] }), {}, /without filters only/],
    ["json", "{not json", {}, /not JSON/],
    ["format", zarrayText({ zarr_format: 3 }), {}, /zarr_format 3 in a Zarr v2 metadata file/],
    ["fill", zarrayText({ fill_value: "x" }), {}, /fill_value "x" is not a value of <f4/],
    [
      "escape",
      zarrayText({}),
      { ".zmetadata": '{"zarr_consolidated_format": 1, "metadata": {"../x/.zarray": {}}}' },
      /key '\.\.\/x\/\.zarray' is not a metadata key/,
    ],
  ];
  for (const [name, zarray, files, message] of cases) {
    const dir = storeWith(`${tmp.path}/${name}`, zarray, files);
    assert.throws(
      () => zarr.store!.openStore(new StoreReader(dir)),
      (e: unknown) =>
        e instanceof FormatError && e.exitCode === 2 && !e.message.includes("\n") &&
        message.test(e.message) && e.message.includes(dir),
      name,
    );
  }
  // a v3 root that is neither array nor group, and a directory that is no store
  Deno.mkdirSync(`${tmp.path}/v3`);
  Deno.writeTextFileSync(`${tmp.path}/v3/zarr.json`, '{"zarr_format": 3}');
  assert.throws(
    () => zarr.store!.openStore(new StoreReader(`${tmp.path}/v3`)),
    /node_type undefined, expected "array" or "group"/,
  );
  Deno.mkdirSync(`${tmp.path}/none`);
  assert.throws(
    () => zarr.store!.openStore(new StoreReader(`${tmp.path}/none`)),
    /not a Zarr store/,
  );
  // a chunk that decompresses to more than its size is refused, not inflated whole
  const store = memoryStore(4, 1, { compressor: "zlib" });
  const index = zarr.store!.openStore(store);
  const ref = index.chunks(0)[1]!;
  const bomb = zarr.createWriter({ compressor: "zlib" }).writeFrame({
    step: 0,
    chunks: [{ name: "b", dtype: "uint8", shape: [1 << 20], data: new Uint8Array(1 << 20) }],
  })[0]!;
  assert.throws(
    () => index.decodeChunk!(ref, (bomb as { data: Uint8Array }).data, new Uint8Array(ref.bytes)),
    /decompresses to more than the chunk's 48 bytes/,
  );
});

Deno.test("zarr CLI: a bad shape, huge chunks or an unknown dtype is one line, exit 2", async () => {
  using tmp = tempDir();
  const cases = {
    shape: zarrayText({ shape: [1, "x", 3] }),
    chunks: zarrayText({ shape: [1, 1 << 20, 1 << 20], chunks: [1, 1 << 20, 1 << 20] }),
    dtype: zarrayText({ dtype: "<U8" }),
  };
  for (const [name, zarray] of Object.entries(cases)) {
    const dir = storeWith(`${tmp.path}/${name}`, zarray);
    const r = await runCli(["info", dir]);
    assert.equal(r.code, 2, `${name}: ${r.stderr}`);
    const lines = r.stderr.trim().split("\n");
    assert.equal(lines.length, 1, `${name}: ${r.stderr}`);
    assert.match(lines[0]!, new RegExp(`^sciobench: error: zarr: ${dir}/a/.zarray: `));
  }
  // a directory that is no store, and a store given to a framing of files
  Deno.mkdirSync(`${tmp.path}/empty`);
  for (
    const [args, message] of [
      [["info", `${tmp.path}/empty`], /not a store sciobench reads/],
      [["read", "--framing", "raw", `${tmp.path}/shape`], /is a directory; raw reads files/],
    ] as const
  ) {
    const r = await runCli([...args]);
    assert.equal(r.code, 2, r.stderr);
    assert.equal(r.stderr.trim().split("\n").length, 1, r.stderr);
    assert.match(r.stderr, message);
  }
});

// ------------------------------------------------------------------------------------------------
// Stores on disk: durability order, size, cold drop, removal, detection, the table
// ------------------------------------------------------------------------------------------------

/** The I/O calls of `run` as lines: `open PATH`, `fsync PATH`, `write PATH`. */
async function callsOf(run: () => void): Promise<string[]> {
  const calls: string[] = [];
  const paths = new Map<number, string>();
  await observeDuring({
    open(fd, path) {
      paths.set(fd, path);
      calls.push(`open ${path}`);
    },
    write(fd) {
      calls.push(`write ${paths.get(fd)}`);
    },
    sync(fd, call) {
      if (call === "fsync" || call === "fdatasync") calls.push(`fsync ${paths.get(fd)}`);
    },
  }, () => Promise.resolve(run()));
  return calls;
}

Deno.test("zarr store: every chunk file and directory is fsynced before the metadata is written", async () => {
  using tmp = tempDir();
  const path = `${tmp.path}/s.zarr`;
  const calls = await callsOf(() => writeStore(path, 8, 3, { separator: "/" }));
  const firstMeta = calls.findIndex((c) => /^open .*\/\.z[a-z]+$/.test(c));
  assert.ok(firstMeta > 0, calls.join("\n"));
  const before = calls.slice(0, firstMeta);
  const chunks = storeFiles(path).filter((f) => !f.split("/").at(-1)!.startsWith("."));
  assert.equal(chunks.length, 6);
  for (const chunk of chunks) assert.ok(before.includes(`fsync ${chunk}`), `${chunk} synced first`);
  // every directory made (frame directories with '/'), the store's root and the one holding it
  const dirs = [
    ...new Set(chunks.flatMap((c) => {
      const parts = c.slice(path.length + 1).split("/");
      return parts.slice(0, -1).map((_, k) => `${path}/${parts.slice(0, k + 1).join("/")}`);
    })),
    path,
    tmp.path,
  ];
  for (const dir of dirs) assert.ok(before.includes(`fsync ${dir}`), `${dir} synced first`);
  // the metadata is synced too before the write returns
  const meta = storeFiles(path).filter((f) => f.split("/").at(-1)!.startsWith("."));
  assert.equal(meta.length, 6);
  for (const m of meta) assert.ok(calls.slice(firstMeta).includes(`fsync ${m}`), m);
  // --fsync none: no sync at all
  const none = await callsOf(() => writeStore(`${tmp.path}/n.zarr`, 8, 2, {}, "native", "none"));
  assert.deepEqual(none.filter((c) => c.startsWith("fsync")), []);
});

Deno.test("zarr store: size, warm-up, cold drop and residency cover every file; abort removes it", () => {
  using tmp = tempDir();
  const path = `${tmp.path}/s.zarr`;
  writeStore(path, 2000, 4);
  const files = storeFiles(path);
  assert.equal(files.length, 14); // 8 chunks, 2 .zarray, 2 .zattrs, 2 .zgroup
  assert.equal(storeBytes(path), files.reduce((s, f) => s + Deno.statSync(f).size, 0));
  assert.ok(storeBytes(path) > 4 * 2000 * 28);
  if (DROP_DOES_NOT_WORK[statfs(tmp.path).type] === undefined) {
    readThrough(path); // a warm read's first step
    for (const f of files) assert.equal(residency(f), 1, `${f} read through`);
    assert.equal(residency(path), 1);
    assert.equal(dropCache(path).residentAfter, 0);
    for (const f of files) assert.equal(residency(f), 0, `${f} dropped`);
    for (const f of files.slice(3)) Deno.readFileSync(f);
    const partly = residency(path);
    assert.ok(partly > 0.5 && partly < 1, `${partly}: the pages of every file are counted`);
  }
  const sink = backendByName("zarr").openWriter(`${tmp.path}/a.zarr`, { create: "new" });
  sink.writeFrame(tableFrames(10).frame(0));
  sink.abort();
  assert.throws(() => Deno.statSync(`${tmp.path}/a.zarr`), Deno.errors.NotFound);
});

Deno.test("zarr store: write, info and read through the CLI; detection by its metadata files", async () => {
  using tmp = tempDir();
  const path = `${tmp.path}/cli.zarr`;
  const w = await runCli([
    ...["write", "--framing", "zarr", "--n", "50", "--frames", "4", "--seed", "3"],
    ...["--option", "compressor=zlib", "--option", "consolidated=true", path],
  ]);
  assert.equal(w.code, 0, w.stderr);
  assert.deepEqual([...Deno.readDirSync(tmp.path)].map((e) => e.name), ["cli.zarr"]);
  const again = await runCli(["write", "--framing", "zarr", "--n", "50", "--frames", "2", path]);
  assert.equal(again.code, 1, again.stderr);
  assert.match(again.stderr, /exists; refusing to overwrite it/);
  const forced = await runCli([
    ...["write", "--framing", "zarr", "--n", "50", "--frames", "2", "--seed", "3", "--force"],
    ...["--option", "separator=/", path],
  ]);
  assert.equal(forced.code, 0, forced.stderr);
  assert.deepEqual([...Deno.readDirSync(tmp.path)].map((e) => e.name), ["cli.zarr"]);
  const info = await runCli(["info", "--format", "json", path]);
  assert.equal(info.code, 0, info.stderr);
  const doc = JSON.parse(info.stdout);
  assert.equal(doc.framing, "zarr");
  assert.equal(doc.frames, 2);
  assert.equal(doc.file_bytes, storeBytes(path));
  assert.equal(doc.format.arrays[0].dimension_separator, "/");
  assert.equal(doc.chunks.length, 4);
  const read = await runCli(["read", "--verify", "--seed", "3", "--format", "csv", path]);
  assert.equal(read.code, 0, read.stderr);
  assert.match(read.stdout, /\nzarr,.*,2,\d+,.*,true,/);
  // an append continues the store (tests/zarr_append_test.ts says how)
  const append = await runCli([
    "write",
    "--append",
    "--n",
    "50",
    "--frames",
    "1",
    "--seed",
    "3",
    path,
  ]);
  assert.equal(append.code, 0, append.stderr);
  const grown = await runCli(["read", "--verify", "--seed", "3", "--format", "csv", path]);
  assert.match(grown.stdout, /\nzarr,.*,3,\d+,.*,true,/);
});

Deno.test("table --framing zarr,gsd,raw: write, read and random read verified, nothing left", async () => {
  using tmp = tempDir();
  const r = await runCli([
    ...["table", "--framing", "zarr,gsd,raw", "--size", "256KiB", "--n", "1000"],
    ...["--no-warmup", "--sample", "128KiB", "--dir", tmp.path, "--format", "csv"],
  ]);
  assert.equal(r.code, 0, r.stderr);
  const [head, ...rows] = r.stdout.trim().split("\n").map((l) => l.split(","));
  const col = (row: string[], name: string) => row[head!.indexOf(name)]!;
  assert.deepEqual(rows.map((row) => col(row, "framing")), ["zarr", "gsd", "raw"]);
  for (const row of rows) {
    assert.equal(col(row, "stat"), "run");
    assert.ok(Number(col(row, "read_MiBps")) > 0 && Number(col(row, "random_MiBps")) > 0);
  }
  const zarrRow = rows[0]!;
  // the store's size is all its files: 10 frames of two chunk files, and the metadata
  assert.ok(Number(col(zarrRow, "file_bytes")) > Number(col(zarrRow, "data_bytes")));
  assert.deepEqual([...Deno.readDirSync(tmp.path)], [], "scratch stores removed whole");
});

// ------------------------------------------------------------------------------------------------
// Interoperability with python3-zarr 2.13 (Debian) through /usr/bin/python3
// ------------------------------------------------------------------------------------------------

function pythonZarrMissing(): string | null {
  return pythonZarrMissingWith("zarr, numcodecs");
}

async function python(script: string, args: string[]): Promise<string> {
  const out = await new Deno.Command(PYTHON, {
    args: ["-c", script, ...args],
    stdout: "piped",
    stderr: "piped",
  }).output();
  const err = new TextDecoder().decode(out.stderr);
  if (!out.success) throw new Error(`python3 failed: ${err}`);
  return new TextDecoder().decode(out.stdout);
}

/** The table's arrays over `count` frames, little-endian float32 in C order, by array name. */
function arrays(frames: TableFrames, count: number): Map<string, Uint8Array> {
  const out = new Map<string, Uint8Array>();
  for (const [k, chunk] of frames.frame(0).chunks.entries()) {
    const bytes = new Uint8Array(chunk.data.byteLength * count);
    for (let i = 0; i < count; i++) {
      bytes.set(frames.bytesIn(i, "little")[k]!, i * chunk.data.byteLength);
    }
    out.set(chunk.name, bytes);
  }
  return out;
}

function sha256(bytes: Uint8Array): string {
  return createHash("sha256").update(bytes).digest("hex");
}

/**
 * Python: every array of each store (argv: JSON list of [path, nested, consolidated]) as
 * zarr-python reads it: shape, dtype, compressor and the sha256 of its values as <f4.
 */
const PY_READ = `
import hashlib, json, sys, zarr
stores = []
for path, nested, consolidated in json.loads(sys.argv[1]):
    store = zarr.NestedDirectoryStore(path) if nested else zarr.DirectoryStore(path)
    root = zarr.open_consolidated(store, mode="r") if consolidated else zarr.open_group(store, mode="r")
    out = {}
    def visit(name, a):
        if isinstance(a, zarr.Array):
            data = a[...]
            out[name] = {"shape": list(a.shape), "dtype": a.dtype.str,
                         "compressor": None if a.compressor is None else a.compressor.codec_id,
                         "sha256": hashlib.sha256(data.astype("<f4").tobytes()).hexdigest()}
    root.visititems(visit)
    stores.append(out)
print(json.dumps(stores))
`;

peerTest(
  "zarr interop: python3-zarr reads every store sciobench writes",
  pythonZarrMissing,
  async () => {
    using tmp = tempDir();
    const n = 16, count = 4;
    const variants = [
      { separator: ".", compressor: "none", consolidated: false, endian: "native" },
      { separator: "/", compressor: "zlib", consolidated: false, endian: "native" },
      { separator: ".", compressor: "gzip", consolidated: true, endian: "native" },
      { separator: "/", compressor: "none", consolidated: true, endian: "big" },
      { separator: ".", compressor: "zlib", consolidated: false, endian: "big" },
    ] as const;
    const frames = tableFrames(n);
    const want = arrays(frames, count);
    const stores = variants.map((v, k) => {
      const path = `${tmp.path}/s${k}.zarr`;
      const { endian, ...options } = v;
      writeStore(path, n, count, options, endian);
      return [path, v.separator === "/", v.consolidated];
    });
    const read = JSON.parse(await python(PY_READ, [JSON.stringify(stores)]));
    for (const [k, v] of variants.entries()) {
      const { endian } = v;
      const got = read[k];
      assert.deepEqual(Object.keys(got).sort(), ["particles/orientation", "particles/position"]);
      const order = endian === "big" ? ">" : NATIVE_ORDER === "little" ? "<" : ">";
      for (const [name, bytes] of want) {
        const a = got[name];
        const what = `${JSON.stringify(v)} ${name}`;
        assert.deepEqual(a.shape, [count, n, name.endsWith("position") ? 3 : 4], what);
        assert.equal(a.dtype, `${order}f4`, what);
        assert.equal(a.compressor, v.compressor === "none" ? null : v.compressor, what);
        assert.equal(a.sha256, sha256(bytes), `${what}: the values zarr-python reads`);
      }
    }
  },
);

/**
 * Python: writes the arrays of `data_dir/*.bin` to new stores as sciobench would write them
 * (argv: data_dir, then a JSON list of [path, spec]).
 */
const PY_WRITE = `
import json, os, sys, numpy, numcodecs, zarr
def write(path, data_dir, spec):
  nested = spec["separator"] == "/"
  store = zarr.NestedDirectoryStore(path) if nested else zarr.DirectoryStore(path)
  root = zarr.open_group(store, mode="w")
  codecs = {"none": None, "zlib": numcodecs.Zlib(level=1), "gzip": numcodecs.GZip(level=1)}
  for name, shape in spec["arrays"]:
    data = numpy.fromfile(os.path.join(data_dir, name.replace("/", "_") + ".bin"), dtype="<f4")
    data = data.reshape(shape).astype(spec["dtype"])
    a = root.create_dataset(name, shape=shape, chunks=[1] + shape[1:], dtype=spec["dtype"],
                            compressor=codecs[spec["compressor"]])
    a[...] = data
    if spec["attrs"]:
      base = name.split("/")[-1]
      a.attrs["_ARRAY_DIMENSIONS"] = ["frame"] + [f"{base}_{k}" for k in range(1, len(shape))]
  if spec["consolidated"]:
    zarr.consolidate_metadata(store)
for path, spec in json.loads(sys.argv[2]):
  write(path, sys.argv[1], spec)
`;

/** Writes the table's arrays to `dir` as raw little-endian files for PY_WRITE. */
function writeArrays(dir: string, frames: TableFrames, count: number): [string, number[]][] {
  Deno.mkdirSync(dir, { recursive: true });
  const spec: [string, number[]][] = [];
  for (const [name, bytes] of arrays(frames, count)) {
    Deno.writeFileSync(`${dir}/${name.replace("/", "_")}.bin`, bytes);
    spec.push([name, [count, frames.n, name.endsWith("position") ? 3 : 4]]);
  }
  return spec;
}

/** Every file of the store at `root` by its path inside it. */
function filesOf(root: string): Map<string, Uint8Array> {
  return new Map(storeFiles(root).map((f) => [f.slice(root.length + 1), Deno.readFileSync(f)]));
}

peerTest(
  "zarr interop: the stores are zarr-python 2.13's byte for byte (compressor null)",
  pythonZarrMissing,
  async () => {
    using tmp = tempDir();
    const n = 9, count = 3;
    const frames = tableFrames(n);
    const spec = writeArrays(`${tmp.path}/data`, frames, count);
    const jobs: [string, Record<string, unknown>][] = [];
    for (const separator of [".", "/"]) {
      for (const compressor of ["none", "zlib"]) {
        for (const consolidated of [false, true]) {
          const ours = `${tmp.path}/ours${
            separator === "/" ? "n" : "d"
          }${compressor}${consolidated}`;
          writeStore(ours, n, count, { separator, compressor, consolidated }, "little");
          const job = {
            separator,
            compressor,
            consolidated,
            dtype: "<f4",
            arrays: spec,
            attrs: true,
          };
          jobs.push([ours, job]);
        }
      }
    }
    await python(PY_WRITE, [
      `${tmp.path}/data`,
      JSON.stringify(jobs.map(([p, j]) => [`${p}.py`, j])),
    ]);
    for (const [ours, job] of jobs) {
      const what = JSON.stringify({ ...job, arrays: undefined });
      const a = filesOf(ours), b = filesOf(`${ours}.py`);
      assert.deepEqual([...a.keys()].sort(), [...b.keys()].sort(), what);
      for (const [name, bytes] of b) {
        const meta = name.split("/").at(-1)!.startsWith(".");
        // zlib chunks: another deflate stream of the same bytes (docs/formats.md#zarr)
        if (!meta && job.compressor !== "none") continue;
        assert.ok(
          bytes.length === a.get(name)!.length && bytes.every((x, i) => x === a.get(name)![i]),
          `${what}: ${name} differs:\nours:\n${new TextDecoder().decode(a.get(name))}\n` +
            `zarr-python:\n${new TextDecoder().decode(bytes)}`,
        );
      }
    }
  },
);

peerTest(
  "zarr interop: sciobench reads every store python3-zarr 2.13 writes",
  pythonZarrMissing,
  async () => {
    using tmp = tempDir();
    const n = 12, count = 5;
    const frames = tableFrames(n);
    const spec = writeArrays(`${tmp.path}/data`, frames, count);
    const backend = backendByName("zarr");
    const jobs: [string, Record<string, unknown>][] = [];
    for (const separator of [".", "/"]) {
      for (const compressor of ["none", "zlib", "gzip"]) {
        for (const dtype of ["<f4", ">f4"]) {
          const consolidated = jobs.length % 2 === 1;
          const job = { separator, compressor, consolidated, dtype, arrays: spec, attrs: false };
          jobs.push([`${tmp.path}/py${jobs.length}.zarr`, job]);
        }
      }
    }
    await python(PY_WRITE, [`${tmp.path}/data`, JSON.stringify(jobs)]);
    for (const [path] of jobs) checkFrames(backend, path, frames, count);
    // the CLI detects it, verifies the table's frames, and lists it
    const path = `${tmp.path}/py0.zarr`;
    const read = await runCli(["read", "--verify", "--seed", "7", "--format", "csv", path]);
    assert.equal(read.code, 0, read.stderr);
    const info = await runCli(["info", "--format", "json", `${tmp.path}/py3.zarr`]);
    assert.equal(info.code, 0, info.stderr);
    const doc = JSON.parse(info.stdout);
    assert.equal(doc.frames, count);
    assert.equal(doc.format.consolidated, true);
    // an array that is not chunked one frame per chunk: described, no frames, one note
    const other = `${tmp.path}/other.zarr`;
    await python(
      `import sys, zarr\nz = zarr.open_group(zarr.DirectoryStore(sys.argv[1]), mode="w")\n` +
        `z.create_dataset("grid", shape=(6, 6), chunks=(2, 3), dtype="<i8", compressor=None)[...] = 1`,
      [other],
    );
    const described = await runCli(["info", "--format", "json", other]);
    assert.equal(described.code, 0, described.stderr);
    assert.equal(JSON.parse(described.stdout).frames, 0);
    assert.match(described.stderr, /no frames: array 'grid' \(shape 6x6\) is chunked 2x3/);
  },
);

// ------------------------------------------------------------------------------------------------
// zarr-python as a peer program of the table
// ------------------------------------------------------------------------------------------------

peerTest(
  "table --framing zarr,raw --peer zarr-python,zarr-python-nested: the library's rows beside the format's",
  () => zarrPythonUnavailable(),
  async () => {
    using tmp = tempDir();
    const r = await runCli([
      ...["table", "--framing", "zarr,raw", "--peer", "zarr-python,zarr-python-nested"],
      ...["--n", "32^2", "--repeat", "1", "--size", "256KiB", "--sample", "128KiB"],
      ...["--no-warmup", "--dir", tmp.path, "--format", "csv"],
    ]);
    assert.equal(r.code, 0, r.stderr);
    const [head, ...rows] = r.stdout.trim().split("\n").map((l) => l.split(","));
    const col = (row: string[], name: string) => row[head!.indexOf(name)]!;
    assert.deepEqual(
      rows.map((row) => col(row, "framing")),
      ["zarr", "raw", "zarr-python", "zarr-python-nested"],
    );
    const [native, , peer, nested] = rows as [string[], string[], string[], string[]];
    for (const row of rows) {
      assert.equal(col(row, "stat"), "run", r.stdout);
      assert.equal(col(row, "N"), "1024");
      assert.equal(col(row, "frames"), "10");
      assert.equal(col(row, "data_bytes"), col(native, "data_bytes"));
      assert.equal(col(row, "read_frames"), col(native, "read_frames"));
      for (const rate of ["write_MiBps", "read_MiBps", "random_MiBps"]) {
        assert.ok(Number(col(row, rate)) > 0, `${col(row, "framing")} ${rate}`);
      }
      assert.equal(col(row, "cold_ok"), "true", `${col(row, "framing")}: ${col(row, "cold_why")}`);
    }
    // zarr-python's DirectoryStore is byte for byte the zarr framing's store: the same size; the
    // nested store's .zarray says its separator ('"dimension_separator": "/",' and a newline)
    assert.equal(col(peer, "file_bytes"), col(native, "file_bytes"));
    assert.equal(
      Number(col(nested, "file_bytes")) - Number(col(native, "file_bytes")),
      2 * '    "dimension_separator": "/",\n'.length,
    );
    assert.deepEqual([...Deno.readDirSync(tmp.path)], [], "scratch stores removed whole");
  },
);
