/**
 * Tests of Zarr v3 in the zarr framing (`--option version=3`): CRC-32C against the RFC 3720
 * test vectors and a bit-by-bit reference, the sharding codec's index as the v3 specification
 * lays it out (a shard built by hand here from the spec, with an inner chunk not stored), frames
 * through an in-memory store with every option, hostile shard indexes and metadata in one line
 * (exit 2), and both ways with zarrita (npm, an independent v3 implementation, test-only): it
 * reads every store sciobench writes, sharded and not (values checked), and sciobench reads the
 * stores it writes.
 * @module
 */
import assert from "node:assert/strict";
import { mkdir, readFile, writeFile } from "node:fs/promises";
import { dirname } from "node:path";
import { gzipSync } from "node:zlib";
import * as zarrita from "npm:zarrita@0.7.5";
import { backendByName } from "../lib/backends/registry.ts";
import { FormatError } from "../lib/core/errors.ts";
import { zarr } from "../lib/framings/zarr/mod.ts";
import { crc32c } from "../lib/framings/zarr/crc32c.ts";
import type { ChunkRef, FrameIndex } from "../lib/framings/types.ts";
import { MemoryStore } from "../lib/io/memory.ts";
import { TableFrames } from "../lib/workloads/table/frames.ts";
import { chunkBytes } from "../lib/framings/kit.ts";
import { runCli, tempDir } from "./_helpers.ts";

const encoder = new TextEncoder();

/** CRC-32C one bit at a time: the definition the table-driven one is checked against. */
function crcBitwise(data: Uint8Array): number {
  let c = 0xffffffff;
  for (const byte of data) {
    c ^= byte;
    for (let k = 0; k < 8; k++) c = c & 1 ? (c >>> 1) ^ 0x82f63b78 : c >>> 1;
  }
  return ~c >>> 0;
}

Deno.test("crc32c: RFC 3720 test vectors, any alignment and length, continued", () => {
  const up = Uint8Array.from({ length: 32 }, (_, i) => i);
  const down = Uint8Array.from({ length: 32 }, (_, i) => 31 - i);
  assert.equal(crc32c(encoder.encode("123456789")), 0xe3069283);
  assert.equal(crc32c(new Uint8Array(32)), 0x8a9136aa);
  assert.equal(crc32c(new Uint8Array(32).fill(0xff)), 0x62a8ab43);
  assert.equal(crc32c(up), 0x46dd794e);
  assert.equal(crc32c(down), 0x113fdb5c);
  assert.equal(crc32c(new Uint8Array(0)), 0);
  const bytes = Uint8Array.from({ length: 300 }, (_, i) => (i * 131 + 7) & 0xff);
  for (let start = 0; start < 9; start++) {
    for (const end of [start, start + 1, start + 7, start + 8, start + 17, 300]) {
      const part = bytes.subarray(start, end);
      assert.equal(crc32c(part), crcBitwise(part), `bytes ${start}..${end}`);
    }
  }
  assert.equal(crc32c(bytes.subarray(101), crc32c(bytes.subarray(0, 101))), crc32c(bytes));
});

// ------------------------------------------------------------------------------------------------
// Frames through memory, the spec's shard layout, hostile indexes
// ------------------------------------------------------------------------------------------------

/** The write ops of `count` table frames of N = `n` applied to a new in-memory store. */
function memoryStore(n: number, count: number, options: Record<string, unknown>): MemoryStore {
  const frames = new TableFrames(n, 7);
  const store = new MemoryStore("<mem>");
  const writer = zarr.createWriter({ version: 3, ...options });
  store.apply(writer.begin());
  for (let i = 0; i < count; i++) store.apply(writer.writeFrame(frames.frame(i)));
  const finish = writer.finish();
  // every chunk (shard) file is written before the sync, the metadata after it
  const sync = finish.findIndex((op) => op.kind === "sync");
  assert.ok(finish.slice(0, sync).every((op) => op.kind === "write" && op.member!.includes("/c/")));
  assert.ok(
    finish.slice(sync + 1).every((op) => op.kind === "write" && op.member!.endsWith("zarr.json")),
  );
  assert.equal((finish.at(-1) as { member: string }).member, "zarr.json");
  store.apply(finish);
  return store;
}

/** The elements of chunk `ref` of `store` as stored (decoded when encoded). */
function storedChunk(index: FrameIndex, store: MemoryStore, ref: ChunkRef): Uint8Array {
  const into = new Uint8Array(ref.bytes);
  const file = store.files.get(ref.member!);
  if (ref.storedBytes === 0 || file === undefined) index.decodeChunk!(ref, undefined, into);
  else if (ref.codec === undefined) into.set(file.subarray(ref.offset, ref.offset + ref.bytes));
  else {
    const stored = ref.storedBytes === undefined
      ? file
      : file.subarray(ref.offset, ref.offset + ref.storedBytes);
    index.decodeChunk!(ref, stored, into);
  }
  return into;
}

/** A JSON object of a member of `store`. */
function json(store: MemoryStore, member: string): Record<string, unknown> {
  return JSON.parse(new TextDecoder().decode(store.files.get(member)));
}

Deno.test("zarr v3: frames through an in-memory store with every option", () => {
  const n = 5, count = 5;
  const frames = new TableFrames(n, 7);
  for (const shard of [0, 1, 2, 5, 8]) {
    for (const compressor of ["none", "gzip"]) {
      for (const crc of [false, true]) {
        for (const endian of ["little", "big"] as const) {
          const what = `shard ${shard} ${compressor} crc32c ${crc} ${endian}`;
          const store = memoryStore(n, count, { shard, compressor, crc32c: crc, endian });
          const index = zarr.store!.openStore(store);
          assert.equal(index.frameCount, count, what);
          for (let i = 0; i < count; i++) {
            const want = frames.bytesIn(i, endian);
            const names = frames.layout.map((c) => c.name);
            for (const ref of index.chunks(i)) {
              const k = names.indexOf(ref.name);
              assert.deepEqual(storedChunk(index, store, ref), want[k], `${what} frame ${i}`);
            }
          }
          const meta = json(store, "particles/position/zarr.json");
          assert.deepEqual(meta.shape, [count, n, 3]);
          assert.equal(meta.data_type, "float32");
          assert.deepEqual(meta.chunk_key_encoding, {
            name: "default",
            configuration: { separator: "/" },
          });
          const grid = meta.chunk_grid as { configuration: { chunk_shape: number[] } };
          assert.deepEqual(grid.configuration.chunk_shape, [shard || 1, n, 3]);
          const shards = [...store.files.keys()].filter((k) =>
            k.startsWith("particles/position/c/")
          );
          assert.equal(shards.length, shard === 0 ? count : Math.ceil(count / shard), what);
          assert.deepEqual(json(store, "zarr.json"), {
            attributes: {},
            node_type: "group",
            zarr_format: 3,
          });
          assert.equal(json(store, "particles/zarr.json").node_type, "group");
        }
      }
    }
  }
});

/**
 * A shard of a (4, 2) uint16 array chunked (4, 2), inner chunks (1, 2), built from the spec's
 * words alone: the inner chunks' bytes, then per inner chunk (offset, nbytes) as uint64 little
 * endian, 2^64-1 twice for inner chunk 2 (not stored), then the index's CRC-32C. The chunks are
 * stored out of order (the index, not the position, says where each is).
 */
function specShard(): { meta: Record<string, unknown>; shard: Uint8Array } {
  const chunks = [[1, 2], [3, 4], null, [7, 8]].map((v) =>
    v === null ? null : new Uint8Array(new Uint16Array(v).buffer)
  );
  const order = [3, 0, 1]; // chunk 3's bytes first
  const data: number[] = [];
  const entries: bigint[] = [0n, 0n, 0n, 0n, 0n, 0n, 0n, 0n];
  for (const k of order) {
    entries[2 * k] = BigInt(data.length);
    entries[2 * k + 1] = BigInt(chunks[k]!.length);
    data.push(...chunks[k]!);
  }
  entries[4] = entries[5] = 2n ** 64n - 1n;
  const index = new Uint8Array(new BigUint64Array(entries).buffer);
  const crc = new Uint8Array(4);
  new DataView(crc.buffer).setUint32(0, crcBitwise(index), true);
  const meta = {
    "zarr_format": 3,
    "node_type": "array",
    "shape": [4, 2],
    "data_type": "uint16",
    "chunk_grid": { name: "regular", configuration: { chunk_shape: [4, 2] } },
    "chunk_key_encoding": { name: "default" },
    "fill_value": 9,
    codecs: [{
      name: "sharding_indexed",
      configuration: {
        chunk_shape: [1, 2],
        codecs: [{ name: "bytes", configuration: { endian: "little" } }],
        index_codecs: [{ name: "bytes", configuration: { endian: "little" } }, {
          name: "crc32c",
        }],
      },
    }],
  };
  return { meta, shard: Uint8Array.from([...data, ...index, ...crc]) };
}

Deno.test("zarr v3: a shard built from the spec reads back, an inner chunk not stored as the fill", () => {
  const { meta, shard } = specShard();
  const store = new MemoryStore("<mem>");
  store.files.set("zarr.json", encoder.encode(JSON.stringify(meta)));
  store.files.set("c/0/0", shard);
  const index = zarr.store!.openStore(store);
  assert.equal(index.frameCount, 4);
  const values = [0, 1, 2, 3].map((i) => {
    const ref = index.chunks(i)[0]!;
    return [...new Uint16Array(storedChunk(index, store, ref).buffer)];
  });
  assert.deepEqual(values, [[1, 2], [3, 4], [9, 9], [7, 8]]);
  // and sciobench's own shard of the same chunks holds the same index, in write order
  const desc = index.describe!() as { arrays: { inner_chunk_shape: number[] }[] };
  assert.deepEqual(desc.arrays[0]!.inner_chunk_shape, [1, 2]);
});

Deno.test("zarr v3: the core spec's example array (float64, NaN fill, attributes) is described", () => {
  const meta = {
    "zarr_format": 3,
    "node_type": "array",
    "shape": [10000, 1000],
    "dimension_names": ["rows", "columns"],
    "data_type": "float64",
    "chunk_grid": { name: "regular", configuration: { chunk_shape: [1000, 100] } },
    "chunk_key_encoding": { name: "default", configuration: { separator: "/" } },
    codecs: [
      { name: "bytes", configuration: { endian: "big" } },
      { name: "gzip", configuration: { level: 1 } },
    ],
    "fill_value": "NaN",
    attributes: { foo: 42, bar: "apples", baz: [1, 2, 3, 4] },
  };
  const store = new MemoryStore("<mem>");
  store.files.set("zarr.json", encoder.encode(JSON.stringify(meta)));
  const index = zarr.store!.openStore(store);
  assert.equal(index.frameCount, 0);
  assert.match(index.warnings!.join("\n"), /no frames: the root array .* is chunked 1000x100/);
  const desc = index.describe!() as { zarr_format: number; arrays: Record<string, unknown>[] };
  assert.equal(desc.zarr_format, 3);
  assert.deepEqual(desc.arrays[0], {
    path: "/",
    shape: [10000, 1000],
    data_type: "float64",
    chunk_shape: [1000, 100],
    fill_value: "NaN",
    codecs: meta.codecs,
    dimension_names: ["rows", "columns"],
    attributes: meta.attributes,
  });
});

Deno.test("zarr v3: a hostile shard index or metadata is a FormatError in one line", () => {
  const { meta, shard } = specShard();
  const setIndex = (bytes: Uint8Array, k: number, offset: bigint, nbytes: bigint): Uint8Array => {
    const out = bytes.slice();
    const at = out.length - 4 - 64;
    const view = new DataView(out.buffer);
    view.setBigUint64(at + 16 * k, offset, true);
    view.setBigUint64(at + 16 * k + 8, nbytes, true);
    view.setUint32(out.length - 4, crcBitwise(out.subarray(at, out.length - 4)), true);
    return out;
  };
  const cases: [string, Record<string, unknown>, Uint8Array, RegExp][] = [
    ["offset past the data", meta, setIndex(shard, 0, 100n, 4n), /entry 0 .* is outside/],
    ["huge offset", meta, setIndex(shard, 1, 2n ** 63n, 4n), /offset 9223372036854775808/],
    ["huge nbytes", meta, setIndex(shard, 1, 0n, 2n ** 62n), /outside the shard's data/],
    ["wrong length", meta, setIndex(shard, 1, 0n, 2n), /holds 2 bytes, an inner chunk is 4/],
    ["damaged crc", meta, Uint8Array.from(shard, (b, i) => i === 20 ? b ^ 1 : b), /CRC-32C/],
    ["short file", meta, shard.subarray(0, 40), /shorter than its index \(68 bytes\)/],
    [
      "unknown codec",
      {
        ...meta,
        codecs: [{ name: "bytes", configuration: { endian: "little" } }, { name: "zstd" }],
      },
      shard,
      /codec "zstd" at place 1 is not one sciobench reads/,
    ],
    ["grid", { ...meta, chunk_grid: { name: "rectilinear" } }, shard, /regular grid only/],
    ["data type", { ...meta, data_type: "complex64" }, shard, /data_type "complex64"/],
  ];
  for (const [what, m, bytes, message] of cases) {
    const store = new MemoryStore("<mem>");
    store.files.set("zarr.json", encoder.encode(JSON.stringify(m)));
    store.files.set("c/0/0", bytes);
    assert.throws(() => {
      const index = zarr.store!.openStore(store);
      for (let i = 0; i < index.frameCount; i++) index.chunks(i);
    }, (e: unknown) => {
      assert.ok(e instanceof FormatError, `${what}: ${e}`);
      assert.match(e.message, message, what);
      assert.equal(e.message.split("\n").length, 1, what);
      return true;
    }, what);
  }
});

Deno.test("zarr v3: a chunk whose CRC-32C differs is a FormatError in one line", () => {
  for (const shard of [0, 2]) {
    const store = memoryStore(4, 2, { shard, crc32c: true });
    const index = zarr.store!.openStore(store);
    const ref = index.chunks(1)[0]!;
    const file = store.files.get(ref.member!)!;
    file[ref.offset + 5]! ^= 0x10;
    assert.throws(() => storedChunk(index, store, ref), (e: unknown) => {
      assert.ok(e instanceof FormatError, String(e));
      assert.match(e.message, /fails its CRC-32C: damaged/);
      return true;
    }, `shard ${shard}`);
  }
});

Deno.test("zarr v3 writer: options that are not v3's are refused", () => {
  assert.throws(() => zarr.createWriter({ shard: 2 }), /give version=3/);
  assert.throws(() => zarr.createWriter({ version: 3, compressor: "zlib" }), /no zlib codec/);
  assert.throws(() => zarr.createWriter({ version: 3, consolidated: true }), /Zarr v2's/);
  // a shard is held in memory until it is written: at most 1 GiB of it
  const writer = zarr.createWriter({ version: 3, shard: 1 << 20 });
  assert.throws(
    () => writer.writeFrame(new TableFrames(100, 7).frame(0)),
    /a shard of 1048576 frames of 'particles\/position' \(1200 bytes each\) is more than/,
  );
});

// ------------------------------------------------------------------------------------------------
// On disk, through the CLI and with zarrita
// ------------------------------------------------------------------------------------------------

/**
 * A zarrita store over a directory (node:fs): keys are paths from the store's root. zarrita
 * reads shards through getRange, and writes no sharded arrays ("set on sharded arrays" is
 * unsupported in 0.7.5): shards it cannot write are built by hand from the spec above.
 */
class DirectoryStore {
  readonly root: string;
  constructor(root: string) {
    this.root = root;
  }
  async get(key: string): Promise<Uint8Array | undefined> {
    try {
      return new Uint8Array(await readFile(`${this.root}${key}`));
    } catch (e) {
      if ((e as { code?: string }).code === "ENOENT") return undefined;
      throw e;
    }
  }
  /** Bytes `offset` to `offset + length` of `key`, or its last `suffixLength` (zarrita's shards). */
  async getRange(
    key: string,
    range: { offset: number; length: number } | { suffixLength: number },
  ): Promise<Uint8Array | undefined> {
    const all = await this.get(key);
    if (all === undefined) return undefined;
    return "suffixLength" in range
      ? all.slice(all.length - range.suffixLength)
      : all.slice(range.offset, range.offset + range.length);
  }
  async set(key: string, value: Uint8Array): Promise<void> {
    await mkdir(dirname(`${this.root}${key}`), { recursive: true });
    await writeFile(`${this.root}${key}`, value);
  }
}

/** Writes `count` table frames of N = `n` to a new v3 store at `path` with `options`. */
function writeStore(path: string, n: number, count: number, options: Record<string, unknown>) {
  const { endian = "native", ...rest } = options;
  const sink = backendByName("zarr").openWriter(path, {
    create: "new",
    endian: endian as "little" | "big" | "native",
    fsync: "end",
    backendOptions: { version: 3, ...rest },
  });
  const frames = new TableFrames(n, 7);
  for (let i = 0; i < count; i++) sink.writeFrame(frames.frame(i));
  sink.close();
}

Deno.test("zarr v3 and zarrita: zarrita reads every store sciobench writes, values checked", async () => {
  using tmp = tempDir();
  const n = 6, count = 5;
  const frames = new TableFrames(n, 7);
  const settings: Record<string, unknown>[] = [
    {},
    { shard: 2 },
    { shard: 5, compressor: "gzip", crc32c: true },
    { compressor: "gzip", level: 6, endian: "big" },
    { shard: 3, crc32c: true, endian: "big" },
    { separator: "." },
  ];
  for (const [k, options] of settings.entries()) {
    const path = `${tmp.path}/s${k}.zarr`;
    writeStore(path, n, count, options);
    const root = zarrita.root(new DirectoryStore(path));
    for (const name of ["particles/position", "particles/orientation"]) {
      const array = await zarrita.open(root.resolve(name), { kind: "array" });
      assert.deepEqual(array.shape, [count, n, name.endsWith("position") ? 3 : 4]);
      const got = await zarrita.get(array);
      const all = new Uint8Array((got.data as Float32Array).buffer.slice(0));
      const per = all.length / count;
      for (let i = 0; i < count; i++) {
        const want = chunkBytes(frames.frame(i).chunks.find((c) => c.name === name)!);
        assert.deepEqual(
          all.subarray(i * per, (i + 1) * per),
          want,
          `${JSON.stringify(options)} ${name} ${i}`,
        );
      }
    }
  }
});

/** Checks the frames sciobench reads from the store at `path` are the table's. */
function checkFrames(path: string, frames: TableFrames, count: number, what: string): void {
  const source = backendByName("zarr").openReader(path, { layout: frames.layout });
  try {
    assert.equal(source.frameCount, count, what);
    for (let i = 0; i < count; i++) {
      const got = source.readFrame(i);
      assert.equal(got.length, 2, what);
      for (const g of got) {
        const want = frames.frame(i).chunks.find((c) => c.name === g.name)!;
        assert.deepEqual(g.data, chunkBytes(want), `${what} frame ${i} ${g.name}`);
      }
    }
  } finally {
    source.close();
  }
}

/** Writes the table's frames with zarrita (one chunk per frame) to a new store at `path`. */
async function zarritaStore(
  path: string,
  frames: TableFrames,
  n: number,
  count: number,
  endian: "little" | "big",
  separator: "." | "/",
): Promise<void> {
  const root = await zarrita.create(zarrita.root(new DirectoryStore(path)));
  const group = await zarrita.create(root.resolve("particles"));
  for (const [name, width] of [["position", 3], ["orientation", 4]] as const) {
    const array = await zarrita.create(group.resolve(name), {
      shape: [count, n, width],
      chunkShape: [1, n, width],
      dtype: "float32",
      chunkSeparator: separator,
      codecs: [{ name: "bytes", configuration: { endian } }],
    });
    const data = new Float32Array(count * n * width);
    for (let i = 0; i < count; i++) {
      const chunk = frames.frame(i).chunks.find((c) => c.name === `particles/${name}`)!;
      data.set(chunk.data as Float32Array, i * n * width);
    }
    await zarrita.set(array, null, {
      data,
      shape: [count, n, width],
      stride: [n * width, width, 1],
    });
  }
}

// zarrita 0.7.5 encodes with the bytes codec only ("gzip encode", "crc32c encode" and "set on
// sharded arrays" are unsupported): it reads ours with those above; its stores with them are
// made here from its chunk files and the spec's words (gzip by node:zlib, CRC-32C bit by bit).
Deno.test("zarr v3 and zarrita: sciobench reads the stores zarrita writes, and shards made of its chunks", async () => {
  using tmp = tempDir();
  const n = 4, count = 5, per = 2;
  const frames = new TableFrames(n, 7);
  for (
    const [endian, separator] of [["little", "/"], ["big", "/"], ["little", "."]] as const
  ) {
    const what = `zarrita ${endian} '${separator}'`;
    const path = `${tmp.path}/${endian}${separator === "." ? "_dot" : ""}.zarr`;
    await zarritaStore(path, frames, n, count, endian, separator);
    checkFrames(path, frames, count, what);
  }
  // the big-endian store's chunks, gzipped with a CRC-32C each, in shards of `per` frames
  const path = `${tmp.path}/big.zarr`;
  for (const name of ["position", "orientation"]) {
    const dir = `${path}/particles/${name}`;
    const meta = JSON.parse(Deno.readTextFileSync(`${dir}/zarr.json`));
    const inner = [
      { name: "bytes", configuration: { endian: "big" } },
      { name: "gzip", configuration: { level: 5 } },
      { name: "crc32c" },
    ];
    for (let s = 0; s * per < count; s++) {
      const parts: Uint8Array[] = [];
      const entries = new BigUint64Array(2 * per).fill(2n ** 64n - 1n);
      let at = 0;
      for (let j = 0; j < per && s * per + j < count; j++) {
        const file = `${dir}/c/${s * per + j}/0/0`;
        const zipped = gzipSync(Deno.readFileSync(file), { level: 5 });
        const crc = new Uint8Array(4);
        new DataView(crc.buffer).setUint32(0, crcBitwise(zipped), true);
        parts.push(zipped, crc);
        entries[2 * j] = BigInt(at);
        entries[2 * j + 1] = BigInt(zipped.length + 4);
        at += zipped.length + 4;
        Deno.removeSync(file);
      }
      const index = new Uint8Array(entries.buffer);
      const crc = new Uint8Array(4);
      new DataView(crc.buffer).setUint32(0, crcBitwise(index), true);
      const shard = new Uint8Array(at + index.length + 4);
      let k = 0;
      for (const p of [...parts, index, crc]) {
        shard.set(p, k);
        k += p.length;
      }
      Deno.writeFileSync(`${dir}/c/${s}/0/0`, shard);
    }
    meta.chunk_grid.configuration.chunk_shape[0] = per;
    meta.codecs = [{
      name: "sharding_indexed",
      configuration: {
        chunk_shape: [1, ...meta.shape.slice(1)],
        codecs: inner,
        index_codecs: [{ name: "bytes", configuration: { endian: "little" } }, {
          name: "crc32c",
        }],
        index_location: "end",
      },
    }];
    Deno.writeTextFileSync(`${dir}/zarr.json`, JSON.stringify(meta));
  }
  checkFrames(path, frames, count, "shards of zarrita's chunks");
  // and zarrita reads them back too
  const array = await zarrita.open(
    zarrita.root(new DirectoryStore(path)).resolve("particles/position"),
    { kind: "array" },
  );
  const got = await zarrita.get(array);
  assert.equal((got.data as Float32Array)[n * 3 * 4], 4);
});

Deno.test("zarr v3 CLI: write, info and read a sharded store; a hostile index is exit 2", async () => {
  using tmp = tempDir();
  const path = `${tmp.path}/v3.zarr`;
  const w = await runCli([
    ...["write", "--framing", "zarr", "--n", "40", "--frames", "7", "--seed", "3"],
    ...["--option", "version=3", "--option", "shard=3", "--option", "crc32c=true", path],
  ]);
  assert.equal(w.code, 0, w.stderr);
  assert.deepEqual(
    [...Deno.readDirSync(`${path}/particles/position/c`)].map((e) => e.name).sort(),
    [
      "0",
      "1",
      "2",
    ],
  );
  const info = await runCli(["info", "--format", "json", path]);
  assert.equal(info.code, 0, info.stderr);
  const doc = JSON.parse(info.stdout);
  assert.equal(doc.framing, "zarr");
  assert.equal(doc.frames, 7);
  assert.equal(doc.format.zarr_format, 3);
  assert.deepEqual(doc.format.arrays[0].inner_chunk_shape, [1, 40, 4]);
  const read = await runCli(["read", "--verify", "--seed", "3", "--format", "csv", path]);
  assert.equal(read.code, 0, read.stderr);
  assert.match(read.stdout, /\nzarr,.*,7,\d+,.*,true,/);
  // the last shard's first index entry points past the end of the file
  const shard = `${path}/particles/position/c/2/0/0`;
  const bytes = Deno.readFileSync(shard);
  const at = bytes.length - 4 - 3 * 16;
  new DataView(bytes.buffer).setBigUint64(at, 1n << 40n, true);
  new DataView(bytes.buffer).setUint32(bytes.length - 4, crc32c(bytes.subarray(at, -4)), true);
  Deno.writeFileSync(shard, bytes);
  const bad = await runCli(["read", "--format", "csv", path]);
  assert.equal(bad.code, 2, bad.stderr);
  const lines = bad.stderr.trim().split("\n");
  assert.equal(lines.length, 1, bad.stderr);
  assert.match(lines[0]!, /zarr: .*c\/2\/0\/0: shard index entry 0 \(offset 1099511627776/);
});

Deno.test("zarr-v3: the table compares it with zarr; its stores are v3, sharded 64 frames", async () => {
  using tmp = tempDir();
  const r = await runCli([
    ...["table", "--framing", "zarr,zarr-v3", "--size", "256KiB", "--n", "1000"],
    ...["--no-warmup", "--sample", "128KiB", "--dir", tmp.path, "--format", "csv"],
  ]);
  assert.equal(r.code, 0, r.stderr);
  const [head, ...rows] = r.stdout.trim().split("\n").map((l) => l.split(","));
  const col = (row: string[], name: string) => row[head!.indexOf(name)]!;
  assert.deepEqual(rows.map((row) => col(row, "framing")), ["zarr", "zarr-v3"]);
  for (const row of rows) {
    assert.equal(col(row, "stat"), "run");
    assert.ok(Number(col(row, "read_MiBps")) > 0 && Number(col(row, "random_MiBps")) > 0);
  }
  // 9 frames of 28,000 bytes: v2 a chunk file per frame and array, v3 one shard per array
  const files = (row: string[]) => Number(col(row, "write_files_created"));
  assert.ok(files(rows[1]!) < files(rows[0]!), `${files(rows[1]!)} < ${files(rows[0]!)}`);
  // what it writes: zarr.json, one shard of 64 inner chunks per array; read back as zarr
  const path = `${tmp.path}/w.zarr`;
  const w = await runCli(["write", "--framing", "zarr-v3", "--n", "8", "--frames", "70", path]);
  assert.equal(w.code, 0, w.stderr);
  const meta = JSON.parse(Deno.readTextFileSync(`${path}/particles/position/zarr.json`));
  assert.equal(meta.zarr_format, 3);
  assert.deepEqual(meta.chunk_grid.configuration.chunk_shape, [64, 8, 3]);
  assert.equal(meta.codecs[0].name, "sharding_indexed");
  assert.deepEqual(
    [...Deno.readDirSync(`${path}/particles/position/c`)].map((e) => e.name).sort(),
    ["0", "1"],
  );
  const read = await runCli(["read", "--verify", "--format", "csv", path]);
  assert.equal(read.code, 0, read.stderr);
  assert.match(read.stdout, /\nzarr,[^\n]*,70,/);
});
