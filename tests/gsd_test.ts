/**
 * Tests of the GSD framing against files python3-gsd 2.7 wrote (tests/testdata/gsd, made by
 * make_golden.py), against the live library where it is installed, and against corrupt copies
 * that each break one rule of gsd 2.7's open-time validation.
 * @module
 */
import assert from "node:assert/strict";
import { Buffer } from "node:buffer";
import { crc32, gunzipSync } from "node:zlib";
import { FormatError, UsageError } from "../lib/core/errors.ts";
import {
  gsd,
  GSD_DEFAULT_APPLICATION,
  GSD_WHOLE_INDEX_BYTES,
  GsdIndex,
  openGsdIndex,
} from "../lib/framings/gsd/mod.ts";
import { useEntryScanner } from "../lib/framings/gsd/entries_wasm.ts";
import { detectFormat, FRAMINGS } from "../lib/backends/registry.ts";
import type {
  Chunk,
  DType,
  Frame,
  TypedArray,
  WriteOp,
  WriterOptions,
} from "../lib/framings/types.ts";
import { DTYPE_SIZE, matchesMagic } from "../lib/framings/types.ts";
import { MemoryFile, memorySource } from "../lib/io/memory.ts";
import type { Transfer } from "../lib/io/transfer.ts";
import { nativeBackend } from "../lib/backends/engine.ts";
import { writeFrames } from "../lib/backends/write.ts";
import { pythonGsdUnavailable, runPythonGsdCell } from "../lib/peers/python_gsd/mod.ts";
import { GSD_PEER_PY } from "../lib/peers/python_gsd/program.ts";
import * as libc from "../lib/sys/libc.ts";
import { TABLE_COLUMNS, TableFrames } from "../lib/workloads/table/mod.ts";
import { LatencyHistogram } from "../lib/report/histogram.ts";
import { commandMissing, peerTest, runCli, tempDir } from "./_helpers.ts";

const DIR = new URL("./testdata/gsd/", import.meta.url);
const PYTHON = "/usr/bin/python3";

/** One chunk as python3-gsd read it back: name, numpy dtype, N, M, zlib.crc32 of the bytes. */
type ManifestChunk = [string, DType, number, number, number];

interface ManifestEntry {
  file: string;
  kind: "hoomd" | "fl";
  application: string;
  schema: string;
  "schema_version": [number, number];
  "gsd_version": [number, number];
  nframes: number;
  names: string[];
  frames: ManifestChunk[][];
  N?: number;
}

const MANIFEST: ManifestEntry[] = JSON.parse(Deno.readTextFileSync(new URL("manifest.json", DIR)));

const goldenCache = new Map<string, Uint8Array>();

/** The bytes of a golden file (the big-chunk file is stored gzip'ed twice); do not modify. */
function golden(name: string): Uint8Array {
  let b = goldenCache.get(name);
  if (b === undefined) {
    b = Deno.readFileSync(new URL(name, DIR));
    if (name.endsWith(".gz.gz")) b = new Uint8Array(gunzipSync(gunzipSync(b)));
    goldenCache.set(name, b);
  }
  return b;
}

function entry(file: string): ManifestEntry {
  const e = MANIFEST.find((m) => m.file === file);
  if (!e) throw new Error(`no manifest entry for ${file}`);
  return e;
}

const CTORS = {
  uint8: Uint8Array,
  uint16: Uint16Array,
  uint32: Uint32Array,
  uint64: BigUint64Array,
  int8: Int8Array,
  int16: Int16Array,
  int32: Int32Array,
  int64: BigInt64Array,
  float32: Float32Array,
  float64: Float64Array,
  char: Uint8Array,
} as const;

/** A typed array of `dtype` holding a copy of `bytes` (little-endian host). */
function typed(dtype: DType, bytes: Uint8Array): TypedArray {
  const copy = bytes.slice();
  return new CTORS[dtype](copy.buffer, 0, copy.length / DTYPE_SIZE[dtype]);
}

function bytesOf(a: TypedArray): Uint8Array {
  return new Uint8Array(a.buffer, a.byteOffset, a.byteLength);
}

/** Runs our writer over frames into memory; returns the file, the sync count and all ops. */
function encode(frames: readonly Frame[], options: WriterOptions = {}) {
  const w = gsd.createWriter(options);
  const file = new MemoryFile();
  const ops: WriteOp[] = [];
  const apply = (o: WriteOp[]) => {
    for (const op of o) ops.push(op.kind === "write" ? { ...op, data: op.data.slice() } : op);
    file.apply(o);
  };
  apply(w.begin());
  for (const f of frames) apply(w.writeFrame(f));
  apply(w.finish());
  return { bytes: file.bytes().slice(), syncs: file.syncs, ops };
}

/** Asserts two files are equal byte for byte, naming the first differing byte. */
function assertSameBytes(got: Uint8Array, want: Uint8Array, what: string): void {
  if (got.length === want.length && Buffer.compare(got, want) === 0) return;
  let at = 0;
  const n = Math.min(got.length, want.length);
  while (at < n && got[at] === want[at]) at++;
  assert.fail(
    `${what}: differs at byte ${at} (ours ${got.length} bytes, python3-gsd ${want.length} bytes; ` +
      `ours 0x${got[at]?.toString(16)}, theirs 0x${want[at]?.toString(16)})`,
  );
}

/** Frames of a gsd.hoomd golden file as the benchmark built them: step, position, orientation. */
function hoomdFramesOf(index: GsdIndex, bytes: Uint8Array): Frame[] {
  const frames: Frame[] = [];
  for (let i = 0; i < index.frameCount; i++) {
    const chunks: Chunk[] = ["particles/position", "particles/orientation"].map((name) => {
      const r = index.find(i, name);
      assert.ok(r, `frame ${i} has ${name}`);
      return {
        name,
        dtype: r.dtype,
        shape: r.shape,
        data: typed(r.dtype, bytes.subarray(r.offset, r.offset + r.bytes)),
      };
    });
    frames.push({ step: index.step(i)!, chunks });
  }
  return frames;
}

/** Frames of a gsd.fl golden file in the order its chunks were written (from the manifest). */
function flFramesOf(m: ManifestEntry, index: GsdIndex, bytes: Uint8Array): Frame[] {
  return m.frames.map((chunks, i) => ({
    step: i,
    chunks: chunks.map(([name]) => {
      const r = index.find(i, name)!;
      return {
        name,
        dtype: r.dtype,
        shape: r.shape,
        data: typed(r.dtype, bytes.subarray(r.offset, r.offset + r.bytes)),
      };
    }),
  }));
}

// ------------------------------------------------------------------------------------------------
// Reading the golden files
// ------------------------------------------------------------------------------------------------

for (const m of MANIFEST) {
  Deno.test(`gsd reader: ${m.file} reads as python3-gsd 2.7 read it`, () => {
    const bytes = golden(m.file);
    const index = openGsdIndex(memorySource(bytes, m.file, "gsd"));
    assert.equal(index.frameCount, m.nframes);
    assert.deepEqual([...index.names].sort(), m.names);
    assert.equal(index.header.application, m.application);
    assert.equal(index.header.schema, m.schema);
    assert.equal(index.header.schemaVersion, (m.schema_version[0] << 16) | m.schema_version[1]);
    assert.equal(index.header.gsdVersion, (m.gsd_version[0] << 16) | m.gsd_version[1]);
    for (let i = 0; i < m.nframes; i++) {
      const refs = index.chunks(i);
      assert.equal(refs.length, m.frames[i]!.length, `frame ${i}: chunk count`);
      for (let k = 1; k < refs.length; k++) {
        assert.ok(refs[k - 1]!.offset <= refs[k]!.offset, "storage order");
      }
      for (const [name, dtype, n, cols, crc] of m.frames[i]!) {
        const r = index.find(i, name);
        assert.ok(r, `frame ${i}: ${name} found`);
        assert.ok(
          refs.some((x) => x.name === name && x.offset === r.offset),
          `frame ${i}: ${name} in chunks()`,
        );
        assert.equal(r.dtype, dtype, `frame ${i}: ${name} dtype`);
        assert.deepEqual(r.shape, [n, cols], `frame ${i}: ${name} shape`);
        assert.equal(r.bytes, n * cols * DTYPE_SIZE[dtype]);
        assert.equal(r.order, "little");
        assert.equal(
          crc32(bytes.subarray(r.offset, r.offset + r.bytes)),
          crc,
          `frame ${i}: ${name} CRC-32`,
        );
      }
    }
    assert.deepEqual(
      index.chunks(m.nframes),
      [],
      "the range is the engine's check (registry_test)",
    );
    // Probing the index 8 bytes at a time (as for blocks over 64 MiB) finds the same entries.
    const probed = openGsdIndex(memorySource(bytes), { wholeIndexBytes: 0 });
    assert.equal(probed.entryCount, index.entryCount);
    assert.deepEqual(probed.chunks(m.nframes - 1), index.chunks(m.nframes - 1));
  });
}

Deno.test("gsd reader: values, steps and N of the N = 4 hoomd file", () => {
  const bytes = golden("hoomd_n4.gsd");
  const index = openGsdIndex(memorySource(bytes));
  assert.equal(bytes.length, 5732);
  assert.deepEqual([0, 1, 2].map((i) => index.step(i)), [0, 10, 20]);
  assert.equal(index.scalar(0, "particles/N"), 4);
  assert.equal(index.find(1, "particles/N"), undefined, "N is only in frame 0");
  assert.equal(
    index.find(0, "configuration/step"),
    undefined,
    "step 0 is the default and not stored",
  );
  assert.equal(index.find(0, "no/such/name"), undefined);
  for (let i = 0; i < 3; i++) {
    const r = index.find(i, "particles/position")!;
    const pos = typed("float32", bytes.subarray(r.offset, r.offset + r.bytes)) as Float32Array;
    const want = Float32Array.from({ length: 12 }, (_, k) => k * 0.5 + 0.25);
    want[0] = i;
    assert.deepEqual(pos, want);
    const o = index.find(i, "particles/orientation")!;
    const ori = typed("float32", bytes.subarray(o.offset, o.offset + o.bytes)) as Float32Array;
    assert.equal(ori[0], i);
    assert.equal(ori[15], 15 * 0.125 + 0.0625);
  }
  // Frame 1 is stored step, position, orientation (write order), while the index is in id order.
  assert.deepEqual(index.chunks(1).map((r) => r.name), [
    "configuration/step",
    "particles/position",
    "particles/orientation",
  ]);
  const d = index.describe();
  assert.equal(d.gsd_version, "2.0");
  assert.equal(d.schema_version, "1.4");
  assert.equal(d.application, "gsd.hoomd 2.7.0");
  assert.equal(d.index_slots, 128);
  assert.equal(d.index_entries, 9);
  assert.deepEqual(d.names, [
    "particles/N",
    "particles/position",
    "particles/orientation",
    "configuration/step",
  ]);
});

Deno.test("gsd reader: the grown index and name list are followed to their new places", () => {
  const g = openGsdIndex(memorySource(golden("hoomd_index_growth.gsd")));
  assert.equal(g.header.indexSlots, 512);
  assert.equal(g.entryCount, 300); // frame 0 holds N instead of step
  assert.equal(g.frameCount, 100);
  assert.equal(g.step(99), 990);
  const n = openGsdIndex(memorySource(golden("fl_types_names.gsd")));
  assert.equal(n.header.namelistBytes, 4096);
  assert.equal(n.names.length, 82);
  assert.equal(n.step(1), undefined, "no step in a non-hoomd file without configuration/step");
});

Deno.test("gsd: detect and registry", () => {
  const bytes = golden("hoomd_n4.gsd");
  assert.equal(matchesMagic(gsd.magic, bytes.subarray(0, 4096)), true);
  assert.equal(matchesMagic(gsd.magic, new Uint8Array(8)), false);
  assert.equal(detectFormat(bytes.subarray(0, 4096), bytes.length)?.name, "gsd");
  assert.equal(detectFormat(new Uint8Array(8), 8), undefined);
  assert.equal(FRAMINGS.find((f) => f.name === "gsd"), gsd);
  assert.deepEqual(gsd.orders, ["little"]);
});

// ------------------------------------------------------------------------------------------------
// Writing: byte for byte what python3-gsd 2.7 wrote
// ------------------------------------------------------------------------------------------------

for (const m of MANIFEST) {
  Deno.test(`gsd writer: reproduces ${m.file} byte for byte`, () => {
    const bytes = golden(m.file);
    const index = openGsdIndex(memorySource(bytes));
    const frames = m.kind === "hoomd" ? hoomdFramesOf(index, bytes) : flFramesOf(m, index, bytes);
    const options: WriterOptions = m.kind === "hoomd" ? { application: m.application } : {
      application: m.application,
      schema: m.schema,
      schemaVersion: m.schema_version,
      hoomd: false,
    };
    const out = encode(frames, options);
    assertSameBytes(out.bytes, bytes, m.file);
  });
}

Deno.test("gsd writer: fsyncs and writes where gsd 2.7 does (strace of python3-gsd)", () => {
  // python3-gsd 2.7, 50 hoomd frames with N = 1 under strace: create (4 pwrites: header, index,
  // names) + fsync; frame 0: names, fsync, data, index; frame 1: names tail, fsync, data, index;
  // frames 2..42: data, index; frame 43: data, old index, zero slots, fsync, header, fsync, index.
  const pos = new Float32Array(3), ori = new Float32Array([0.5, 0.5, 0.5, 0.5]);
  const frames = Array.from({ length: 50 }, (_, i): Frame => ({
    step: 10 * i,
    chunks: [
      {
        name: "particles/position",
        dtype: "float32",
        shape: [1, 3],
        data: Float32Array.from(pos, (x, k) => k === 0 ? i : x),
      },
      {
        name: "particles/orientation",
        dtype: "float32",
        shape: [1, 4],
        data: Float32Array.from(ori, (x, k) => k === 0 ? i : x),
      },
    ],
  }));
  const { ops, syncs } = encode(frames);
  // gsd 2.7 copies a frame's small chunks into its buffer and writes it with one pwrite; we emit
  // one op per chunk, back to back (the I/O layer merges them): 4 + 16 = gsd's 20@5376,
  // 8 + 12 + 16 = gsd's 36-byte pwrites. Everything else is pwrite for pwrite what strace shows.
  const trace = ops.map((o) =>
    o.kind === "sync"
      ? "fsync"
      : o.kind === "copy"
      ? `copy ${o.length}@${o.offset}`
      : `${o.data.length}@${o.offset}`
  );
  // gsd 2.7 writes the fresh file in three pwrites; we write the same 5376 bytes in one.
  assert.deepEqual(trace.slice(0, 7), [
    "5376@0",
    "fsync",
    "1024@4352",
    "fsync",
    "4@5376",
    "16@5380",
    "64@256",
  ]);
  assert.deepEqual(trace.slice(7, 13), [
    "990@4386",
    "fsync",
    "8@5396",
    "12@5404",
    "16@5416",
    "96@320",
  ]);
  const grow = trace.indexOf("4096@6944");
  assert.deepEqual(trace.slice(grow - 3, grow + 9), [
    "8@6908",
    "12@6916",
    "16@6928",
    "4096@6944",
    "4096@11040",
    "fsync",
    "256@0",
    "fsync",
    "96@11040",
    "8@15136",
    "12@15144",
    "16@15156",
  ]);
  assert.equal(syncs, 5);
});

Deno.test("gsd writer: with fileCopies the index moves by copy ops, to the same bytes", () => {
  // 3000 frames of one chunk: the index grows from 128 to 4096 slots, moving 5 times.
  const frames = Array.from({ length: 3000 }, (_, i): Frame => ({
    step: i,
    chunks: [{ name: "x", dtype: "uint32", shape: [1], data: new Uint32Array([i]) }],
  }));
  const inMemory = encode(frames, { hoomd: false });
  const copied = encode(frames, { hoomd: false, fileCopies: true });
  assertSameBytes(copied.bytes, inMemory.bytes, "fileCopies against the in-memory index");
  assert.equal(copied.syncs, inMemory.syncs);
  const copies = copied.ops.filter((o) => o.kind === "copy");
  assert.deepEqual(copies.map((o) => o.kind === "copy" && o.length), [
    128 * 32,
    256 * 32,
    512 * 32,
    1024 * 32,
    2048 * 32,
  ]);
  assert.equal(inMemory.ops.filter((o) => o.kind === "copy").length, 0);
  // what the writer keeps: no op holds more than a frame's entries or a shared zero block
  const largest = Math.max(...copied.ops.map((o) => o.kind === "write" ? o.data.length : 0));
  assert.ok(largest <= 1 << 20, `largest write ${largest}`);
  const index = openGsdIndex(memorySource(copied.bytes));
  assert.equal(index.frameCount, 3000);
  assert.equal(index.scalar(2999, "x"), 2999);
});

Deno.test("gsd engine: copy ops in the file give gsd's bytes, plain, with --bs and --direct", async () => {
  // 100 frames of N = 4: about 300 entries, so the index moves twice (copied in the file)
  using d = tempDir();
  const data = new TableFrames(4, 3); // frame(i) refills the same arrays: one frame at a time
  const memory = new MemoryFile();
  const writer = gsd.createWriter({});
  memory.apply(writer.begin());
  for (let i = 0; i < 100; i++) memory.apply(writer.writeFrame(data.frame(i)));
  const want = memory.bytes();
  assert.equal(openGsdIndex(memorySource(want)).header.indexSlots, 512);
  const transfers: (Transfer | undefined)[] = [
    undefined,
    { bs: 4096, direct: false },
    { bs: 4096, direct: true },
  ];
  for (const [k, transfer] of transfers.entries()) {
    const path = `${d.path}/copy${k}.gsd`;
    await writeFrames(
      nativeBackend(gsd),
      path,
      { create: "new", fsync: "end", transfer },
      100,
      (i) => data.frame(i),
    );
    assertSameBytes(Deno.readFileSync(path), want, `transfer ${JSON.stringify(transfer)}`);
  }
});

Deno.test("gsd engine: frame 0's HOOMD reference is a copy, also in huge pages (chunks of 1 MiB+)", async () => {
  // N = 2^16: orientation is 1 MiB, copied by the engine's keepCopy into huge pages; frame(i)
  // refills the same arrays, so a reference that aliased them would equal every later frame and
  // gsd.hoomd's rule would leave those frames' chunks out
  using d = tempDir();
  const data = new TableFrames(1 << 16, 5);
  const memory = new MemoryFile();
  const writer = gsd.createWriter({});
  memory.apply(writer.begin());
  for (let i = 0; i < 3; i++) memory.apply(writer.writeFrame(data.frame(i)));
  const want = memory.bytes();
  const path = `${d.path}/reference.gsd`;
  await writeFrames(
    nativeBackend(gsd),
    path,
    { create: "new", fsync: "end" },
    3,
    (i) => data.frame(i),
  );
  assertSameBytes(Deno.readFileSync(path), want, "engine against the encoder alone");
  const index = openGsdIndex(memorySource(want));
  for (let i = 0; i < 3; i++) {
    assert.ok(
      index.chunks(i).some((c) => c.name === "particles/orientation"),
      `frame ${i} stores its own orientation`,
    );
  }
});

Deno.test("gsd writer: chunks of 8 MiB and more bypass the buffer, which flushes when full", () => {
  const m = entry("fl_big_chunks.gsd.gz.gz");
  const bytes = golden(m.file);
  const index = openGsdIndex(memorySource(bytes));
  const frames = flFramesOf(m, index, bytes);
  const w = gsd.createWriter({ hoomd: false });
  w.begin();
  // Frame 0: the 9 MiB chunk goes out at once, referenced (not copied), before 'a' and 'b'.
  const f0 = w.writeFrame(frames[0]!).filter((o) => o.kind === "write");
  const big = frames[0]!.chunks[1]!.data;
  assert.equal(f0[0]!.kind === "write" && f0[0]!.data.buffer, big.buffer);
  assert.equal(f0[0]!.kind === "write" && f0[0]!.offset, 5376);
  w.writeFrame(frames[1]!);
  // Frame 2: c1 + c2 + d fill the 16 MiB buffer exactly; 'e' (1 byte) does not fit, so c1, c2, d
  // go out in the middle of the frame, before the new names (the 1024-byte block holds 20 bytes
  // of names: its tail is rewritten in place); e and a after them, then the 5 index entries.
  const f2 = w.writeFrame(frames[2]!).map((o) =>
    o.kind === "sync" ? "fsync" : o.kind === "copy" ? -o.length : o.data.length
  );
  const mib = 2 ** 20;
  assert.deepEqual(f2, [8 * mib - 1, 8 * mib - 1, 2, 1024 - 20, "fsync", 1, 3, 5 * 32]);
});

Deno.test("gsd writer: an empty file is 5376 bytes and reads as 0 frames", () => {
  const { bytes, syncs } = encode([]);
  assert.equal(bytes.length, 5376);
  assert.equal(syncs, 1);
  const index = openGsdIndex(memorySource(bytes));
  assert.equal(index.frameCount, 0);
  assert.equal(index.header.application, GSD_DEFAULT_APPLICATION);
  assert.match(GSD_DEFAULT_APPLICATION, /^sciobench \d+\.\d+\.\d+/);
  assert.equal(index.header.schema, "hoomd");
  assert.equal(index.header.schemaVersion, 0x10004);
});

Deno.test("gsd writer: hoomd schema skips what gsd.hoomd skips", () => {
  const n = 2;
  const pos = new Float32Array([1, 2, 3, 4, 5, 6]);
  const ori = new Float32Array([1, 0, 0, 0, 1, 0, 0, 0]); // the default orientation
  const frame = (step: number, p: Float32Array): Frame => ({
    step,
    chunks: [
      { name: "particles/position", dtype: "float32", shape: [n, 3], data: p },
      { name: "particles/orientation", dtype: "float32", shape: [n, 4], data: ori },
      { name: "log/value", dtype: "float64", shape: [1], data: new Float64Array([step]) },
    ],
  });
  const { bytes } = encode([frame(0, pos), frame(10, pos), frame(0, pos.map((x) => x + 1))]);
  const index = openGsdIndex(memorySource(bytes));
  const names = (i: number) => index.chunks(i).map((r) => r.name);
  assert.deepEqual(names(0), ["particles/N", "particles/position", "log/value"]);
  assert.deepEqual(names(1), ["configuration/step", "log/value"]);
  assert.deepEqual(names(2), ["particles/position", "log/value"]);
  // hoomd: false writes every chunk as given, and nothing else.
  const verbatim = openGsdIndex(
    memorySource(encode([frame(0, pos), frame(10, pos)], { hoomd: false }).bytes),
  );
  assert.deepEqual(verbatim.chunks(1).map((r) => r.name), [
    "particles/position",
    "particles/orientation",
    "log/value",
  ]);
});

Deno.test("gsd writer: options and chunks it refuses", () => {
  assert.throws(() => gsd.createWriter({ endian: "big" }), UsageError);
  assert.throws(() => gsd.createWriter({ schemaVersion: "1" }), UsageError);
  assert.throws(() => gsd.createWriter({ hoomd: "yes" }), UsageError);
  const w = gsd.createWriter({ hoomd: false, schemaVersion: "1.2", application: "x".repeat(100) });
  const created = w.begin();
  const head = created[0]!.kind === "write" ? created[0]!.data : new Uint8Array();
  assert.equal(new TextDecoder().decode(head.subarray(48, 48 + 63)), "x".repeat(63));
  assert.equal(head[48 + 63], 0, "application cut to 63 bytes and NUL-terminated");
  assert.equal(new DataView(head.buffer).getUint32(40, true), 0x10002);
  const one = (c: Chunk) => () => w.writeFrame({ step: 0, chunks: [c] });
  assert.throws(one({ name: "c", dtype: "char", shape: [2], data: new Uint8Array(2) }), UsageError);
  assert.throws(
    one({ name: "c", dtype: "uint8", shape: [2, 0], data: new Uint8Array(0) }),
    UsageError,
  );
  assert.throws(one({ name: "", dtype: "uint8", shape: [1], data: new Uint8Array(1) }), UsageError);
  assert.throws(
    one({ name: "c", dtype: "uint8", shape: [3], data: new Uint8Array(2) }),
    RangeError,
  );
});

// ------------------------------------------------------------------------------------------------
// Reading other file-layer versions
// ------------------------------------------------------------------------------------------------

function mutated(file: string, edit: (v: DataView, b: Uint8Array) => void): Uint8Array {
  const b = golden(file).slice();
  edit(new DataView(b.buffer), b);
  return b;
}

Deno.test("gsd reader: file layer 2.1 allows type 11 (char); 2.0 does not", () => {
  // hoomd_n4: entry 0 is particles/N, u32 1 x 1; as char 1 x 1 it is 1 byte.
  const b = mutated("hoomd_n4.gsd", (v) => {
    v.setUint32(44, 0x20001, true);
    v.setUint8(256 + 30, 11);
  });
  const index = openGsdIndex(memorySource(b));
  assert.equal(index.find(0, "particles/N")?.dtype, "char");
  assert.equal(index.describe().gsd_version, "2.1");
  b[44] = 0;
  assert.throws(
    () => openGsdIndex(memorySource(b)),
    (e) => e instanceof FormatError && e.offset === 256 + 30,
  );
});

Deno.test("gsd reader: a file layer 1.0 file (64-byte name slots, index sorted by frame only)", () => {
  // Built here from the spec (no gsd 1.x library is available): 2 frames, names b and a.
  const b = new Uint8Array(256 + 128 * 32 + 128 * 64 + 64);
  const v = new DataView(b.buffer);
  b.set([0xdf, 0x65, 0xdf, 0x65, 0xdf, 0x65, 0xdf, 0x65]);
  v.setUint32(8, 256, true);
  v.setUint32(16, 128, true);
  v.setUint32(24, 256 + 128 * 32, true);
  v.setUint32(32, 128, true);
  v.setUint32(40, 0x10000, true);
  v.setUint32(44, 0x10000, true);
  const nl = 256 + 128 * 32;
  b.set(new TextEncoder().encode("b"), nl);
  b.set(new TextEncoder().encode("a"), nl + 64);
  const data = nl + 128 * 64;
  const put = (
    slot: number,
    frame: number,
    n: number,
    loc: number,
    m: number,
    id: number,
    type: number,
  ) => {
    const at = 256 + slot * 32;
    v.setUint32(at, frame, true);
    v.setUint32(at + 8, n, true);
    v.setUint32(at + 16, loc, true);
    v.setUint32(at + 24, m, true);
    v.setUint16(at + 28, id, true);
    v.setUint8(at + 30, type);
  };
  put(0, 0, 2, data, 1, 1, 2); // a: uint16[2]
  put(1, 0, 1, data + 4, 1, 0, 9); // b: float32[1]
  put(2, 1, 1, data + 8, 1, 1, 2);
  const index = openGsdIndex(memorySource(b));
  assert.equal(index.frameCount, 2);
  assert.deepEqual(index.names, ["b", "a"]);
  assert.equal(index.find(0, "b")?.offset, data + 4);
  assert.equal(index.find(0, "a")?.offset, data);
  assert.equal(index.find(1, "b"), undefined);
  assert.equal(index.describe().gsd_version, "1.0");
});

// ------------------------------------------------------------------------------------------------
// Corrupt files: each copy breaks exactly one rule of gsd 2.7's gsd_open (spec 2.9)
// ------------------------------------------------------------------------------------------------

interface Corruption {
  rule: string;
  file: string;
  edit: (v: DataView, b: Uint8Array) => void;
  cut?: number;
  offset: number;
  message: RegExp;
  /** gsd 2.7 itself rejects this copy (its binary search probes the broken entry). */
  gsdRejects: boolean;
}

// hoomd_n4.gsd: 9 entries in 128 slots (gsd's search probes entries 0 and 8); 4 names; 5732 bytes.
// Entry 8 is frame 2, configuration/step (id 3, uint64 1 x 1) at 256 + 8 * 32 = 512.
const E8 = 256 + 8 * 32;
const CORRUPTIONS: Corruption[] = [
  {
    rule: "header shorter than 256 bytes",
    file: "hoomd_n4.gsd",
    edit: () => {},
    cut: 200,
    offset: 0,
    message: /not a GSD file: the header needs 256 bytes/,
    gsdRejects: true,
  },
  {
    rule: "wrong magic",
    file: "hoomd_n4.gsd",
    edit: (_v, b) => {
      b[3] = 0x66;
    },
    offset: 0,
    message: /not a GSD file: magic df 65 df 66/,
    gsdRejects: true,
  },
  {
    rule: "version below 1.0 (and not 0.3)",
    file: "hoomd_n4.gsd",
    edit: (v) => v.setUint32(44, 0x2, true),
    offset: 44,
    message: /unsupported GSD file version 0\.2/,
    gsdRejects: true,
  },
  {
    rule: "version 3.0",
    file: "hoomd_n4.gsd",
    edit: (v) => v.setUint32(44, 0x30000, true),
    offset: 44,
    message: /unsupported GSD file version 3\.0/,
    gsdRejects: true,
  },
  {
    rule: "name list past the end of the file",
    file: "hoomd_n4.gsd",
    edit: (v) => v.setUint32(32, 30, true),
    offset: 24,
    message: /name list block \[4352, 6272\) ends past the end of the file \(5732 bytes\)/,
    gsdRejects: true,
  },
  {
    rule: "name list last byte not 0",
    file: "hoomd_n4.gsd",
    edit: (_v, b) => {
      b[4352 + 1023] = 0x41;
    },
    offset: 5375,
    message: /name list block must end with a 0 byte, found 0x41/,
    gsdRejects: true,
  },
  {
    rule: "index past the end of the file",
    file: "hoomd_n4.gsd",
    edit: (v) => v.setUint32(16, 256, true),
    offset: 8,
    message: /index block \[256, 8448\) ends past the end of the file/,
    gsdRejects: true,
  },
  {
    rule: "unknown type 0",
    file: "hoomd_n4.gsd",
    edit: (v) => v.setUint8(E8 + 30, 0),
    offset: E8 + 30,
    message: /index entry 8 \(frame 2, chunk id 3\): unknown type code 0/,
    gsdRejects: true,
  },
  {
    rule: "unknown type 12",
    file: "hoomd_n4.gsd",
    edit: (v) => v.setUint8(E8 + 30, 12),
    offset: E8 + 30,
    message: /unknown type code 12/,
    gsdRejects: true,
  },
  {
    rule: "type 11 in a 2.0 file",
    file: "hoomd_n4.gsd",
    edit: (v) => v.setUint8(E8 + 30, 11),
    offset: E8 + 30,
    message: /unknown type code 11 .*11 needs file layer 2\.1/,
    gsdRejects: true,
  },
  {
    rule: "data past the end of the file",
    file: "hoomd_n4.gsd",
    edit: (v) => v.setUint32(E8 + 16, 5732 - 7, true),
    offset: E8 + 16,
    message: /data \[5725, 5733\) of 1 x 1 uint64 lies outside the file \(5732 bytes\)/,
    gsdRejects: true,
  },
  {
    rule: "frame not below the index size",
    file: "hoomd_n4.gsd",
    edit: (v) => v.setUint32(E8, 128, true),
    offset: E8,
    message: /frame 128 is not below the index size 128/,
    gsdRejects: true,
  },
  {
    rule: "id not below the name count",
    file: "hoomd_n4.gsd",
    edit: (v) => v.setUint16(E8 + 28, 4, true),
    offset: E8 + 28,
    message: /chunk id 4 but the name list holds 4 names/,
    gsdRejects: true,
  },
  {
    rule: "flags not 0",
    file: "hoomd_n4.gsd",
    edit: (v) => v.setUint8(E8 + 31, 1),
    offset: E8 + 31,
    message: /flags 0x1, expected 0/,
    gsdRejects: true,
  },
  // hoomd_index_growth.gsd: index at 16660 (512 slots, 299 entries); entry 0 set to frame 99,
  // the last frame: gsd's first probe (entry 256, frame 85) finds a frame below it.
  {
    rule: "entries not sorted",
    file: "hoomd_index_growth.gsd",
    edit: (v) => v.setUint32(16660, 99, true),
    offset: 16660 + 32,
    message:
      /index entry 1 \(frame 0, chunk id 1\): index entries are not sorted by \(frame, id\); entry 0 has frame 99/,
    gsdRejects: true,
  },
];

function corruptCopy(c: Corruption): Uint8Array {
  const b = mutated(c.file, c.edit);
  return c.cut === undefined ? b : b.subarray(0, c.cut);
}

/**
 * Runs `body` with the entries checked in WebAssembly (the default) and in JavaScript (the
 * fallback), which must agree on every file.
 */
function bothScans(body: (scan: string) => void): void {
  for (const wasm of [true, false]) {
    const was = useEntryScanner(wasm);
    try {
      body(wasm ? "wasm" : "js");
    } finally {
      useEntryScanner(was);
    }
  }
}

for (const c of CORRUPTIONS) {
  Deno.test(`gsd reader rejects: ${c.rule}`, () => {
    for (const wholeIndexBytes of [GSD_WHOLE_INDEX_BYTES, 0]) {
      assert.throws(
        () => openGsdIndex(memorySource(corruptCopy(c), "bad.gsd"), { wholeIndexBytes }),
        (e: unknown) => {
          assert.ok(e instanceof FormatError, `FormatError, got ${e}`);
          assert.equal(e.exitCode, 2);
          assert.equal(e.offset, c.offset, `offset in: ${e.message}`);
          assert.match(e.message, c.message);
          assert.match(e.message, new RegExp(`^gsd: bad\\.gsd at byte ${c.offset}: `));
          return true;
        },
      );
    }
  });
}

// Entry 5 of hoomd_n4.gsd (frame 1, configuration/step: id 3, uint64 1 x 1), which gsd's search
// never probes: each fault is found at the first lookup, not at the open, and named alike by the
// WebAssembly check and the JavaScript one, whatever the blocks the entries are read in.
const E5 = 256 + 5 * 32;
const UNPROBED: { rule: string; edit: (v: DataView) => void; offset: number; message: RegExp }[] = [
  { rule: "type 0", edit: (v) => v.setUint8(E5 + 30, 0), offset: E5 + 30, message: /type code 0/ },
  { rule: "type 12", edit: (v) => v.setUint8(E5 + 30, 12), offset: E5 + 30, message: /code 12/ },
  {
    rule: "data past the end",
    edit: (v) => v.setUint32(E5 + 8, 1000, true),
    offset: E5 + 16,
    message: /of 1000 x 1 uint64 lies outside the file \(5732 bytes\)/,
  },
  {
    rule: "frame not below the index size",
    edit: (v) => v.setUint32(E5, 200, true),
    offset: E5,
    message: /frame 200 is not below the index size 128/,
  },
  {
    rule: "id not below the name count",
    edit: (v) => v.setUint16(E5 + 28, 4, true),
    offset: E5 + 28,
    message: /chunk id 4 but the name list holds 4 names/,
  },
  { rule: "flags", edit: (v) => v.setUint8(E5 + 31, 1), offset: E5 + 31, message: /flags 0x1/ },
  {
    rule: "order",
    edit: (v) => v.setUint32(E5, 0, true),
    offset: E5,
    message: /not sorted by \(frame, id\); entry 4 has frame 1, id 2/,
  },
];

Deno.test("gsd reader: an entry gsd does not probe fails the first lookup, in either check", () => {
  for (const u of UNPROBED) {
    const b = mutated("hoomd_n4.gsd", (v) => u.edit(v));
    bothScans((scan) => {
      for (const wholeIndexBytes of [GSD_WHOLE_INDEX_BYTES, 64, 0]) {
        const index = openGsdIndex(memorySource(b, "bad.gsd"), { wholeIndexBytes });
        assert.equal(index.frameCount, 3, `${u.rule}: the open succeeds`);
        assert.throws(
          () => index.chunks(2),
          (e: unknown) => {
            const what = `${u.rule} (${scan}, ${wholeIndexBytes}): ${e}`;
            assert.ok(e instanceof FormatError, what);
            assert.equal(e.offset, u.offset, what);
            assert.match(e.message, /index entry 5 \(frame \d+, chunk id \d\)/, what);
            assert.match(e.message, u.message, what);
            return true;
          },
        );
      }
    });
  }
});

Deno.test("gsd reader: the sorted-index check is not fooled by the gsd binary search", () => {
  // gsd 2.7 only validates the entries its search probes, at open; so do we, and every entry
  // before the first lookup. Entry 3 of hoomd_n4 (frame 1, id 1) moved to frame 2 is never
  // probed by gsd, but breaks the order: the open succeeds (as gsd_open does), every lookup fails.
  const b = mutated("hoomd_n4.gsd", (v) => v.setUint32(256 + 3 * 32, 2, true));
  const isBad = (e: unknown) => e instanceof FormatError && e.offset === 256 + 4 * 32;
  bothScans(() => {
    for (const wholeIndexBytes of [GSD_WHOLE_INDEX_BYTES, 0]) {
      const index = openGsdIndex(memorySource(b), { wholeIndexBytes });
      assert.equal(index.frameCount, 3);
      assert.throws(() => index.chunks(0), isBad);
      assert.throws(() => index.find(2, "particles/position"), isBad);
      assert.throws(() => index.step(1), isBad);
    }
  });
});

Deno.test("gsd reader: open probes; the first lookup reads the entries once, in blocks", () => {
  // hoomd_index_growth: 299 entries in 512 slots at 16660, past the head
  const bytes = golden("hoomd_index_growth.gsd");
  const reads: [string, number, number][] = [];
  const source = memorySource(bytes);
  const counted = {
    ...source,
    read(offset: number, length: number) {
      reads.push(["read", offset, length]);
      return source.read(offset, length);
    },
    readInto(buf: Uint8Array, offset: number) {
      reads.push(["readInto", offset, buf.length]);
      buf.set(source.read(offset, buf.length));
      return buf.length;
    },
  };
  const index = openGsdIndex(counted, { wholeIndexBytes: 1024 });
  // the head (5376 bytes), then the slots gsd's search probes: this 16 KiB block in one read,
  // both into the buffers every open reuses (no buffer made per open)
  assert.deepEqual(reads, [["readInto", 0, 5376], ["readInto", 16660, 512 * 32]]);
  reads.length = 0;
  const whole = openGsdIndex(memorySource(bytes));
  for (let f = 0; f < index.frameCount; f++) assert.deepEqual(index.chunks(f), whole.chunks(f));
  // the used entries, 32 to a 1024-byte block, into one buffer; no more reads afterwards
  const used = index.entryCount;
  assert.equal(used, 300);
  assert.deepEqual(
    reads.map(([kind, offset, n]) => [kind, (offset - 16660) / 32, n]),
    Array.from({ length: 10 }, (_, k) => ["readInto", 32 * k, k < 9 ? 1024 : (used - 288) * 32]),
  );
  assert.equal(
    index.find(42, "particles/position")?.offset,
    whole.find(42, "particles/position")?.offset,
  );
  assert.equal(reads.length, 10);
});

Deno.test("gsd reader: entries whose kinds do not repeat are kept whole, and found the same", () => {
  // 5000 frames, each one 1-byte chunk of its own name: 5000 kinds, over the columns' 4096
  const frames = Array.from({ length: 5000 }, (_, i): Frame => ({
    step: i,
    chunks: [{
      name: `c${i}`,
      dtype: "uint8",
      shape: [1 + (i % 3)],
      data: new Uint8Array(1 + (i % 3)).fill(i & 0xff),
    }],
  }));
  const { bytes } = encode(frames, { hoomd: false });
  bothScans(() => {
    const index = openGsdIndex(memorySource(bytes));
    assert.equal(index.frameCount, 5000);
    for (const i of [0, 1, 2, 4095, 4096, 4999]) {
      const [r] = index.chunks(i);
      assert.equal(r!.name, `c${i}`);
      assert.deepEqual(r!.shape, [1 + (i % 3), 1]);
      assert.equal(bytes[r!.offset], i & 0xff);
      assert.equal(index.find(i, `c${i}`)?.offset, r!.offset);
      assert.equal(index.find(i, `c${i + 1}`), undefined);
    }
  });
});

// ------------------------------------------------------------------------------------------------
// Interoperability with the real library (python3-gsd 2.7 through /usr/bin/python3)
// ------------------------------------------------------------------------------------------------

function pythonGsdMissing(): string | null {
  if (commandMissing(PYTHON) !== null) return `${PYTHON} is not installed`;
  const r = new Deno.Command(PYTHON, {
    args: ["-c", "import gsd, gsd.fl, gsd.hoomd"],
    stderr: "null",
    stdout: "null",
  })
    .outputSync();
  return r.success
    ? null
    : "python3-gsd is not installed for /usr/bin/python3 (apt-get install python3-gsd)";
}

async function python(script: string, args: string[]): Promise<string> {
  const out = await new Deno.Command(PYTHON, {
    args: ["-c", script, ...args],
    stdout: "piped",
    stderr: "piped",
  })
    .output();
  const err = new TextDecoder().decode(out.stderr);
  if (!out.success) throw new Error(`python3 failed: ${err}`);
  return new TextDecoder().decode(out.stdout);
}

/** Python: every chunk of every frame of a GSD file via gsd.fl, plus the gsd.hoomd view. */
const PY_DUMP = `
import json, sys, zlib
import gsd.fl, gsd.hoomd
path = sys.argv[1]
out = {}
with gsd.fl.open(path, "rb") as f:
    names = f.find_matching_chunk_names("")
    out["nframes"] = f.nframes
    out["application"] = f.application
    out["frames"] = [
        {n: [str(a.dtype), a.shape[0], 1 if a.ndim == 1 else a.shape[1], zlib.crc32(a.tobytes())]
         for n in names if f.chunk_exists(frame=i, name=n)
         for a in [f.read_chunk(frame=i, name=n)]}
        for i in range(f.nframes)]
    hoomd = f.schema == "hoomd"
if hoomd:
    with gsd.hoomd.open(path, "rb") as t:
        out["hoomd"] = [[int(s.configuration.step), int(s.particles.N),
                         zlib.crc32(s.particles.position.tobytes()),
                         zlib.crc32(s.particles.orientation.tobytes())] for s in t]
print(json.dumps(out))
`;

function seededFloats(n: number, seed: number): Float32Array {
  let s = seed >>> 0;
  return Float32Array.from({ length: n }, () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 4294967296;
  });
}

peerTest(
  "gsd interop: python3-gsd reads what sciobench writes (hoomd and gsd.fl views)",
  pythonGsdMissing,
  async () => {
    using dir = tempDir();
    const n = 100;
    const pos = seededFloats(3 * n, 1), ori = seededFloats(4 * n, 2);
    const frames: Frame[] = [];
    for (let i = 0; i < 7; i++) {
      const p = pos.slice(), o = ori.slice();
      p[0] = i;
      o[0] = i;
      frames.push({
        step: 10 * i,
        chunks: [
          { name: "particles/position", dtype: "float32", shape: [n, 3], data: p },
          { name: "particles/orientation", dtype: "float32", shape: [n, 4], data: o },
        ],
      });
    }
    const path = `${dir.path}/ours.gsd`;
    Deno.writeFileSync(path, encode(frames).bytes);
    const got = JSON.parse(await python(PY_DUMP, [path]));
    assert.equal(got.nframes, 7);
    assert.equal(got.application, GSD_DEFAULT_APPLICATION);
    got.hoomd.forEach(([step, nn, pc, oc]: number[], i: number) => {
      assert.equal(step, 10 * i);
      assert.equal(nn, n);
      assert.equal(pc, crc32(bytesOf(frames[i]!.chunks[0]!.data)), `frame ${i} position CRC`);
      assert.equal(oc, crc32(bytesOf(frames[i]!.chunks[1]!.data)), `frame ${i} orientation CRC`);
    });
    assert.deepEqual(Object.keys(got.frames[0]).sort(), [
      "particles/N",
      "particles/orientation",
      "particles/position",
    ]);
    assert.deepEqual(Object.keys(got.frames[1]).sort(), [
      "configuration/step",
      "particles/orientation",
      "particles/position",
    ]);

    // gsd.fl view of a file with every numeric type, N = 0 chunks and > 128 entries.
    const types: DType[] = [
      "uint8",
      "uint16",
      "uint32",
      "uint64",
      "int8",
      "int16",
      "int32",
      "int64",
      "float32",
      "float64",
    ];
    const fl: Frame[] = [];
    for (let i = 0; i < 20; i++) {
      fl.push({
        step: i,
        chunks: types.map((t, k) => {
          const rows = (i + k) % 4, cols = 1 + (k % 3);
          const raw = new Uint8Array(
            seededFloats(rows * cols * DTYPE_SIZE[t], i * 10 + k).map((x) => x * 256),
          );
          return {
            name: `log/${t}/value-${"v".repeat(k * 7)}`,
            dtype: t,
            shape: [rows, cols],
            data: typed(t, raw),
          };
        }),
      });
    }
    const flPath = `${dir.path}/ours-fl.gsd`;
    Deno.writeFileSync(flPath, encode(fl, { hoomd: false, schema: "test" }).bytes);
    const flGot = JSON.parse(await python(PY_DUMP, [flPath]));
    assert.equal(flGot.nframes, 20);
    fl.forEach((f, i) => {
      for (const c of f.chunks) {
        const [dtype, rows, cols, crc] = flGot.frames[i][c.name];
        assert.deepEqual([dtype, rows, cols, crc], [
          c.dtype,
          c.shape[0],
          c.shape[1],
          crc32(bytesOf(c.data)),
        ], `${i} ${c.name}`);
      }
    });
  },
);

peerTest(
  "gsd interop: sciobench reads (and rewrites byte for byte) random files python3-gsd writes",
  pythonGsdMissing,
  async () => {
    using dir = tempDir();
    const path = `${dir.path}/theirs.gsd`;
    const flPath = `${dir.path}/theirs-fl.gsd`;
    await python(
      `
import sys, numpy as np, gsd.hoomd, gsd.fl
rng = np.random.default_rng()
n = int(rng.integers(1, 300))
pos = rng.random((n, 3), dtype=np.float32); ori = rng.random((n, 4), dtype=np.float32)
with gsd.hoomd.open(sys.argv[1], "wb") as t:
    for i in range(int(rng.integers(2, 60))):
        s = gsd.hoomd.Snapshot(); s.particles.N = n; s.configuration.step = 10 * i
        pos[0][0] = i; ori[0][0] = i
        s.particles.position = pos; s.particles.orientation = ori; t.append(s)
types = [np.uint8, np.uint16, np.uint32, np.uint64, np.int8, np.int16, np.int32, np.int64, np.float32, np.float64]
with gsd.fl.open(sys.argv[2], "wb", application="random", schema="none", schema_version=(0, 1)) as f:
    for i in range(int(rng.integers(1, 8))):
        for k in rng.permutation(12)[: int(rng.integers(1, 12))]:
            t = types[k % 10]
            a = rng.integers(0, 120, size=(int(rng.integers(0, 40)), int(rng.integers(1, 4)))).astype(t)
            f.write_chunk(name="chunk/%d/%s" % (k, "n" * int(k) * 9), data=a)
        f.end_frame()
`,
      [path, flPath],
    );
    for (const p of [path, flPath]) {
      const want = JSON.parse(await python(PY_DUMP, [p]));
      const bytes = Deno.readFileSync(p);
      const index = openGsdIndex(memorySource(bytes, p));
      assert.equal(index.frameCount, want.nframes);
      for (let i = 0; i < index.frameCount; i++) {
        const refs = index.chunks(i);
        assert.equal(refs.length, Object.keys(want.frames[i]).length);
        for (const r of refs) {
          const [dtype, rows, cols, crc] = want.frames[i][r.name];
          assert.deepEqual([
            r.dtype,
            ...r.shape,
            crc32(bytes.subarray(r.offset, r.offset + r.bytes)),
          ], [dtype, rows, cols, crc]);
        }
      }
      if (p === path) {
        const again = encode(hoomdFramesOf(index, bytes), {
          application: index.header.application,
        });
        assertSameBytes(again.bytes, bytes, "random hoomd file rewritten");
      }
    }
  },
);

peerTest(
  "gsd interop: gsd.hoomd's choice of chunks is reproduced byte for byte",
  pythonGsdMissing,
  async () => {
    // Frames where gsd.hoomd 2.7 skips data: default orientation, positions equal to frame 0's,
    // step 0 in a later frame, N changing and changing back, default velocities, log values.
    using dir = tempDir();
    const path = `${dir.path}/schema.gsd`;
    await python(
      `
import sys, numpy as np, gsd.hoomd
frames = [(3, 0, 0, 0, 0), (3, 10, 0, 0, 1), (3, 0, 1, 1, 0), (5, 30, 2, 0, 2), (3, 40, 0, 0, 0), (3, 50, 0, 2, 0)]
with gsd.hoomd.open(sys.argv[1], "wb") as t:
    for i, (n, step, p, o, vel) in enumerate(frames):
        s = gsd.hoomd.Snapshot(); s.particles.N = n; s.configuration.step = step
        s.particles.position = (np.arange(3 * n, dtype=np.float32).reshape(n, 3) * 0.5 + p)
        ori = np.zeros((n, 4), dtype=np.float32); ori[:, 0] = 1; ori[0, 1] = o
        s.particles.orientation = ori
        s.particles.velocity = np.full((n, 3), vel, dtype=np.float32)
        s.log["energy"] = np.array([1.5 * i])
        t.append(s)
`,
      [path],
    );
    const frames = [[3, 0, 0, 0, 0], [3, 10, 0, 0, 1], [3, 0, 1, 1, 0], [5, 30, 2, 0, 2], [
      3,
      40,
      0,
      0,
      0,
    ], [3, 50, 0, 2, 0]]
      .map(([n, step, p, o, vel], i): Frame => {
        const ori = new Float32Array(4 * n!);
        for (let k = 0; k < n!; k++) ori[4 * k] = 1;
        ori[1] = o!;
        return {
          step: step!,
          chunks: [
            {
              name: "particles/position",
              dtype: "float32",
              shape: [n!, 3],
              data: Float32Array.from({ length: 3 * n! }, (_, k) => k * 0.5 + p!),
            },
            { name: "particles/orientation", dtype: "float32", shape: [n!, 4], data: ori },
            {
              name: "particles/velocity",
              dtype: "float32",
              shape: [n!, 3],
              data: new Float32Array(3 * n!).fill(vel!),
            },
            { name: "log/energy", dtype: "float64", shape: [1], data: new Float64Array([1.5 * i]) },
          ],
        };
      });
    const theirs = Deno.readFileSync(path);
    assertSameBytes(
      encode(frames, { application: "gsd.hoomd 2.7.0" }).bytes,
      theirs,
      "hoomd schema frames",
    );
  },
);

peerTest("gsd interop: python3-gsd rejects the corrupt copies too", pythonGsdMissing, async () => {
  using dir = tempDir();
  const paths = CORRUPTIONS.filter((c) => c.gsdRejects).map((c, k) => {
    const p = `${dir.path}/bad${k}.gsd`;
    Deno.writeFileSync(p, corruptCopy(c));
    return p;
  });
  const out = await python(
    `
import sys, gsd.fl
for p in sys.argv[1:]:
    try:
        with gsd.fl.open(p, "rb") as f:
            print("accepted", p)
    except Exception as e:
        print("rejected", p)
`,
    paths,
  );
  const rules = CORRUPTIONS.filter((c) => c.gsdRejects).map((c) => c.rule);
  out.trim().split("\n").forEach((line, k) =>
    assert.match(line, /^rejected /, `gsd 2.7 on '${rules[k]}': ${line}`)
  );
});

// ------------------------------------------------------------------------------------------------
// Through the CLI
// ------------------------------------------------------------------------------------------------

Deno.test("gsd CLI: info on a corrupt file exits 2 with the offset and no stack trace", async () => {
  using dir = tempDir();
  const c = CORRUPTIONS.find((x) => x.rule === "flags not 0")!;
  const p = `${dir.path}/bad.gsd`;
  Deno.writeFileSync(p, corruptCopy(c));
  const r = await runCli(["info", "--framing", "gsd", p]);
  assert.equal(r.code, 2, r.stderr);
  assert.match(r.stderr, new RegExp(`at byte ${c.offset}: .*flags 0x1, expected 0`));
  assert.doesNotMatch(r.stderr, /\n\s+at /, "no stack trace");
});

function csvRows(text: string): Record<string, string>[] {
  const [head, ...lines] = text.trim().split("\n");
  const cols = head!.split(",");
  return lines.map((l) => Object.fromEntries(l.split(",").map((v, k) => [cols[k]!, v])));
}

/** Bytes of the gsd file the table writes for (size, N): our writer in memory, same frames. */
function tableFileBytes(size: number, n: number): number {
  const frames = new TableFrames(n, 1);
  return encode(Array.from({ length: Math.ceil(size / (28 * n)) }, (_, i) => {
    const f = frames.frame(i);
    return { step: f.step, chunks: f.chunks.map((c) => ({ ...c, data: c.data.slice() })) };
  })).bytes.length;
}

Deno.test("gsd CLI: table --framing gsd,raw on a tiny size gives a gsd row beside raw", async () => {
  using dir = tempDir();
  const r = await runCli([
    "table",
    "--framing",
    "gsd,raw",
    "--size",
    "256KiB",
    "--n",
    "32^2",
    "--dir",
    dir.path,
  ]);
  assert.equal(r.code, 0, r.stderr);
  const rows = csvRows(r.stdout);
  assert.deepEqual(rows.map((x) => x.framing), ["gsd", "raw"]);
  const g = rows[0]!;
  assert.equal(g.frames, "10");
  assert.equal(Number(g.file_bytes), tableFileBytes(256 * 1024, 1024));
  assert.ok(Number(g.read_MiBps) > 0 && Number(g.random_MiBps) > 0 && Number(g.write_MiBps) > 0);
  assert.deepEqual([...Deno.readDirSync(dir.path)], [], "scratch files removed");
});

peerTest(
  "gsd CLI: write --framing gsd makes a file gsd.hoomd reads, CRCs as info --json",
  pythonGsdMissing,
  async () => {
    using dir = tempDir();
    const p = `${dir.path}/t.gsd`;
    const w = await runCli(["write", "--framing", "gsd", "--n", "100", "--frames", "6", p]);
    assert.equal(w.code, 0, w.stderr);
    const again = await runCli(["write", "--framing", "gsd", "--n", "100", "--frames", "6", p]);
    assert.notEqual(again.code, 0, "refuses to overwrite");
    assert.match(again.stderr, /--force/);
    const info = await runCli(["info", "--json", p]);
    assert.equal(info.code, 0, info.stderr);
    const doc = JSON.parse(info.stdout) as {
      frames: number;
      chunks: { frame: number; name: string; crc32: string }[];
    };
    assert.equal(doc.frames, 6);
    const theirs = JSON.parse(await python(PY_DUMP, [p]));
    assert.equal(theirs.nframes, 6);
    assert.ok(theirs.hoomd.every(([, n]: number[]) => n === 100));
    assert.deepEqual(theirs.hoomd.map(([step]: number[]) => step), [0, 10, 20, 30, 40, 50]);
    let count = 0;
    for (const c of doc.chunks) {
      const [, , , crc] = theirs.frames[c.frame][c.name];
      assert.equal(
        c.crc32,
        (crc >>> 0).toString(16).padStart(8, "0"),
        `frame ${c.frame} ${c.name}`,
      );
      count++;
    }
    assert.equal(
      count,
      theirs.frames.reduce((a: number, f: object) => a + Object.keys(f).length, 0),
    );
  },
);

peerTest(
  "gsd peer: the python3-gsd program measures a table cell with python3-gsd, same columns",
  pythonGsdMissing,
  async () => {
    using dir = tempDir();
    assert.equal(pythonGsdUnavailable(), null);
    const row = await runPythonGsdCell("python-gsd", 256 * 1024, 1024, 0, {
      seed: 1,
      warmup: false,
      dir: dir.path,
    });
    // every column, `stat` = run and `error` empty; the phases' histograms beside (JSON only)
    assert.deepEqual(Object.keys(row).filter((k) => !k.endsWith("_latency")), TABLE_COLUMNS);
    for (const phase of ["read", "random"]) {
      const h = LatencyHistogram.fromJSON(row[`${phase}_latency`])!;
      assert.equal(h.count, row.read_frames);
      assert.equal(row[`${phase}_max_us`], h.max / 1000);
      const [p50, p99] = [row[`${phase}_p50_us`], row[`${phase}_p99_us`]] as number[];
      assert.ok(p50! > 0 && p50! <= p99! && p99! <= Number(row[`${phase}_max_us`]));
    }
    assert.equal(row.framing, "python-gsd");
    assert.equal(row.frames, 10);
    // python3-gsd wrote the same frames: same size as our file (only the application string differs).
    assert.equal(row.file_bytes, tableFileBytes(256 * 1024, 1024));
    const fl = await runPythonGsdCell("python-gsd-fl", 256 * 1024, 16384, 1, {
      seed: 3,
      warmup: true,
      dir: dir.path,
    });
    assert.equal(fl.framing, "python-gsd-fl");
    assert.equal(fl.file_bytes, tableFileBytes(256 * 1024, 16384));
    await assert.rejects(
      () => runPythonGsdCell("python-hdf5", 1, 1, 0, { seed: 1, warmup: false }),
      UsageError,
    );
    // The script's own CSV header is the table's (without `error`, which only failed cells carry).
    const csv = await new Deno.Command(PYTHON, {
      args: [
        "-c",
        GSD_PEER_PY,
        "--size",
        "64KiB",
        "--n",
        "32^2",
        "--dir",
        dir.path,
      ],
      stdout: "piped",
      stderr: "null",
    }).output();
    assert.ok(csv.success);
    assert.equal(
      new TextDecoder().decode(csv.stdout).split("\n")[0],
      TABLE_COLUMNS.join(","),
    );
    assert.deepEqual([...Deno.readDirSync(dir.path)], [], "scratch files removed");
  },
);

peerTest(
  "gsd cli: table --peer python-gsd adds the real library's rows, same cell, sane values",
  () => pythonGsdUnavailable(),
  async () => {
    using d = tempDir();
    const r = await runCli([
      "table",
      "--framing",
      "gsd",
      "--peer",
      "python-gsd,python-gsd-fl",
      "--size",
      "64KiB",
      "--n",
      "32^2",
      "--dir",
      d.path,
      "--format",
      "json",
    ]);
    assert.equal(r.code, 0, r.stderr);
    const rows = (JSON.parse(r.stdout) as { rows: Record<string, number | string>[] }).rows;
    assert.deepEqual(rows.map((x) => x.framing), ["gsd", "python-gsd", "python-gsd-fl"]);
    const ours = rows[0]!;
    const clkTck = libc.clockTicksPerSecond();
    for (const row of rows.slice(1)) {
      const what = `${row.framing}`;
      // The same cell as ours: same frames, bytes, sample and seed; python3-gsd's file differs
      // from ours only in the application string (same length).
      for (const k of ["size_bytes", "N", "frames", "data_bytes", "read_frames", "read_bytes"]) {
        assert.equal(row[k], ours[k], `${what}: ${k}`);
      }
      assert.equal(row.frames, 3, `${what}: ceil(64 KiB / (28 x 1024)) frames`);
      assert.equal(row.file_bytes, ours.file_bytes, `${what}: file_bytes`);
      assert.equal(row.seed, 1);
      assert.equal(row.cache, "cold");
      assert.equal(row.clk_tck, clkTck, `${what}: clk_tck is sysconf(_SC_CLK_TCK)`);
      // Rates follow from bytes and seconds; times are positive and ordered.
      const mib = 2 ** 20;
      for (
        const [rate, bytes, s] of [
          ["write_MiBps", "data_bytes", "write_s"],
          ["read_MiBps", "read_bytes", "read_s"],
          ["random_MiBps", "read_bytes", "random_s"],
        ] as const
      ) {
        const secs = Number(row[s]);
        assert.ok(secs > 0 && secs < 60, `${what}: ${s} = ${secs}`);
        const want = Number(row[bytes]) / mib / secs;
        assert.ok(Math.abs(Number(row[rate]) - want) <= want * 0.01, `${what}: ${rate}`);
      }
      assert.ok(Number(row.write_sync_s) >= 0 && Number(row.write_sync_s) <= Number(row.write_s));
      assert.ok(Number(row.open_ms) > 0, `${what}: open_ms`);
      const resident = Number(row.resident_after_drop);
      assert.ok(resident >= 0 && resident <= 1, `${what}: resident_after_drop ${resident}`);
      for (
        const k of ["write_user_ticks", "write_sys_ticks", "read_user_ticks", "read_dev_bytes"]
      ) {
        assert.ok(Number.isInteger(row[k]) && Number(row[k]) >= 0, `${what}: ${k} = ${row[k]}`);
      }
      // "Verified": the peer program exits 1 on the first frame that differs (no row then).
    }
    const bad = await runCli(["table", "--peer", "python-hdf9", "--size", "64KiB"]);
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /^sciobench: error: unknown peer 'python-hdf9'/);
  },
);

peerTest(
  "gsd hoomd: particles/types is written in frame 0 only, as gsd.hoomd skips it when unchanged",
  () => pythonGsdUnavailable(),
  async () => {
    using d = tempDir();
    const script = `
import sys, numpy as np, gsd.hoomd
for name, types in [("ab", ["A", "B"]), ("a", ["A"])]:
    with gsd.hoomd.open(sys.argv[1] + "/" + name + ".gsd", "wb") as t:
        for i in range(3):
            s = gsd.hoomd.Snapshot()
            s.particles.N = 2
            s.particles.types = types
            s.configuration.step = 10 * i
            s.particles.position = np.array([[i, 0, 0], [1, 1, 1]], dtype=np.float32)
            t.append(s)
`;
    const out = await new Deno.Command(PYTHON, { args: ["-c", script, d.path] }).output();
    assert.ok(out.success, new TextDecoder().decode(out.stderr));
    const cases: [string, number[][]][] = [["ab", [[65, 0], [66, 0]]], ["a", [[65, 0]]]];
    for (const [name, types] of cases) {
      const w = gsd.createWriter({ application: "gsd.hoomd 2.7.0" });
      const m = new MemoryFile();
      m.apply(w.begin());
      for (let i = 0; i < 3; i++) {
        m.apply(w.writeFrame({
          step: 10 * i,
          chunks: [
            {
              name: "particles/types",
              dtype: "int8",
              shape: [types.length, 2],
              data: new Int8Array(types.flat()),
            },
            {
              name: "particles/position",
              dtype: "float32",
              shape: [2, 3],
              data: new Float32Array([i, 0, 0, 1, 1, 1]),
            },
          ],
        }));
      }
      m.apply(w.finish());
      assert.deepEqual(m.bytes(), await Deno.readFile(`${d.path}/${name}.gsd`), name);
    }
  },
);
