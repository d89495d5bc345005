import assert from "node:assert/strict";
import { FormatError, UsageError } from "../lib/core/errors.ts";
import { copySwapped, NATIVE_ORDER } from "../lib/bytes/byteswap.ts";
import {
  appendWriter,
  createIeeeioWriter,
  ieeeio,
  IEEEIO_TYPE_NAMES,
  type IeeeioChunk,
  type IeeeioIndex,
  type IeeeioTypeName,
  openIeeeio,
} from "../lib/framings/ieeeio/mod.ts";
import type { ByteOrder, ChunkRef, Frame, TypedArray, WriteOp } from "../lib/framings/types.ts";
import { MemoryFile, memorySource } from "../lib/io/memory.ts";
import { runCli, tempDir } from "./_helpers.ts";

const DATA = new URL("./testdata/ieeeio/", import.meta.url);
const golden = (order: "le" | "be") => Deno.readFileSync(new URL(`a8_${order}.ieeeio`, DATA));
const ORDERS: ByteOrder[] = ["little", "big"];

function apply(file: MemoryFile, ops: WriteOp[]): void {
  file.apply(ops);
}

/** The chunk's bytes converted to native order (a copy). */
function chunkBytes(bytes: Uint8Array, ref: ChunkRef, width: number): Uint8Array {
  const out = bytes.slice(ref.offset, ref.offset + ref.bytes);
  if (ref.order !== NATIVE_ORDER) copySwapped(out, out, width);
  return out;
}

function view(a: TypedArray): Uint8Array {
  return new Uint8Array(a.buffer, a.byteOffset, a.byteLength);
}

function open(bytes: Uint8Array, options = {}): IeeeioIndex {
  return openIeeeio(memorySource(bytes, "test.ieeeio", "ieeeio"), options);
}

function a8Frame(): Frame {
  const chunk: IeeeioChunk = {
    name: "rho",
    dtype: "float64",
    shape: [2, 3],
    data: new Float64Array([0, 1, 2, 3, 4, 5]),
    annotations: ["hi"],
  };
  return { step: 0, chunks: [chunk] };
}

function writeFile(frames: Frame[], order: ByteOrder, finish = true): Uint8Array {
  const w = ieeeio.createWriter({ endian: order });
  const f = new MemoryFile();
  f.apply(w.begin());
  for (const fr of frames) f.apply(w.writeFrame(fr));
  if (finish) f.apply(w.finish());
  return f.bytes().slice();
}

/** Asserts that `fn` throws a FormatError at byte `offset` whose message matches `re`. */
function assertFormatError(fn: () => unknown, offset: number, re: RegExp): void {
  assert.throws(fn, (e: unknown) => {
    assert.ok(e instanceof FormatError, `expected FormatError, got ${String(e)}`);
    assert.equal(e.exitCode, 2);
    assert.equal(e.offset, offset, e.message);
    assert.match(e.message, re);
    assert.match(e.message, /test\.ieeeio/);
    return true;
  });
}

Deno.test("ieeeio golden A.8: reads both byte orders", () => {
  for (const [tag, order] of [["le", "little"], ["be", "big"]] as const) {
    const bytes = golden(tag);
    assert.equal(bytes.length, 143);
    assert.ok(ieeeio.detect!(bytes.subarray(0, 4096), bytes.length));
    const idx = open(bytes);
    assert.equal(idx.order, order);
    assert.equal(idx.headerCount, 1);
    assert.equal(idx.frameCount, 1);
    assert.deepEqual(idx.warnings, []);
    const [ref, more] = idx.chunks(0);
    assert.equal(more, undefined);
    assert.deepEqual(
      { ...ref! },
      { name: "rho", dtype: "float64", shape: [2, 3], offset: 48, bytes: 48, order },
    );
    assert.deepEqual(
      Array.from(new Float64Array(chunkBytes(bytes, ref!, 8).buffer)),
      [0, 1, 2, 3, 4, 5],
    );
    const d = idx.dataset(0);
    assert.deepEqual(d.dims, [3, 2]);
    assert.equal(d.type, "Float64");
    assert.equal(d.recordOffset, 16);
    assert.equal(d.attributes.length, 1);
    assert.equal(d.attributes[0]!.name, "name");
    assert.equal(d.attributes[0]!.type, "Char8");
    assert.equal(d.attributes[0]!.value, "rho");
    assert.equal(d.attributes[0]!.recordOffset, 0x60);
    assert.deepEqual(d.annotations, [{ recordOffset: 0x80, text: "hi" }]);
    assert.equal(idx.step!(0), 0);
    const desc = idx.describe!();
    assert.equal(desc["byteOrder"], order);
    assert.deepEqual((desc["records"] as unknown[])[0], {
      index: 0,
      name: "rho",
      type: "Float64",
      rank: 2,
      dims: [3, 2],
      shape: [2, 3],
      offset: 48,
      bytes: 48,
      attributes: [{ name: "name", type: "Char8", count: 3, value: "rho" }],
      annotations: ["hi"],
    });
    assert.throws(() => idx.dataset(1), RangeError);
  }
});

Deno.test("ieeeio golden A.8: writer output is byte-identical in both orders", () => {
  assert.deepEqual(writeFile([a8Frame()], "little"), golden("le"));
  assert.deepEqual(writeFile([a8Frame()], "big"), golden("be"));
  // The same file through the FlexIO-style calls: dataset, then attribute and annotation.
  for (const [tag, order] of [["le", "little"], ["be", "big"]] as const) {
    const w = createIeeeioWriter({ endian: order });
    const f = new MemoryFile();
    f.apply(w.begin());
    f.apply(w.writeDataset("Float64", [2, 3], new Float64Array([0, 1, 2, 3, 4, 5])));
    f.apply(w.writeAttribute({ name: "name", value: "rho" }));
    f.apply(w.writeAnnotation("hi"));
    f.apply(w.finish());
    assert.deepEqual(f.bytes(), golden(tag));
  }
});

Deno.test("ieeeio writer: count is -1 at begin and rewritten by finish; native order by default", () => {
  const w = ieeeio.createWriter();
  const f = new MemoryFile();
  f.apply(w.begin());
  const mark = NATIVE_ORDER === "little" ? [4, 3, 2, 1] : [1, 2, 3, 4];
  assert.deepEqual(Array.from(f.bytes().subarray(0, 12)), [
    1,
    2,
    3,
    4,
    ...mark,
    255,
    255,
    255,
    255,
  ]);
  f.apply(w.writeFrame(a8Frame()));
  assert.deepEqual(Array.from(f.bytes().subarray(8, 12)), [255, 255, 255, 255]);
  f.apply(w.finish());
  assert.equal(new DataView(f.bytes().buffer).getInt32(8, NATIVE_ORDER === "little"), 1);
});

Deno.test("ieeeio 64^3 float64 datasets: 16 + n x 2,097,188 bytes, data at byte 52", () => {
  const n = 2;
  const data = new Float64Array(64 ** 3).map((_, i) => i);
  for (const order of ORDERS) {
    const frames = Array.from({ length: n }, (_, i) => ({
      step: i,
      chunks: [{ name: "dataset/0", dtype: "float64" as const, shape: [64, 64, 64], data }],
    }));
    const bytes = writeFile(frames, order);
    assert.equal(bytes.length, 16 + n * 2_097_188);
    const idx = open(bytes);
    assert.equal(idx.frameCount, n);
    assert.equal(idx.chunks(0)[0]!.offset, 52);
    assert.equal(idx.chunks(1)[0]!.offset, 16 + 2_097_188 + 36);
    assert.deepEqual(chunkBytes(bytes, idx.chunks(1)[0]!, 8), view(data));
  }
});

function sample(type: IeeeioTypeName, n: number): TypedArray {
  const ramp = (i: number) => (i * 37 + 11) % 251;
  switch (type) {
    case "Int8":
      return Int8Array.from({ length: n }, (_, i) => ramp(i) - 125);
    case "Int16":
      return Int16Array.from({ length: n }, (_, i) => ramp(i) * 130 - 16000);
    case "Int32":
      return Int32Array.from({ length: n }, (_, i) => ramp(i) * 8_000_001 - 1_000_000_000);
    case "Int64":
      return BigInt64Array.from(
        { length: n },
        (_, i) => BigInt(ramp(i)) * 36_028_797_018_963_97n - 1n,
      );
    case "Float32":
      return Float32Array.from({ length: n }, (_, i) => ramp(i) / 7);
    case "Float64":
      return Float64Array.from({ length: n }, (_, i) => ramp(i) / 7 + 1e-300);
    case "uInt8":
    case "Char8":
      return Uint8Array.from({ length: n }, (_, i) => ramp(i));
    case "uInt16":
    case "Char16":
      return Uint16Array.from({ length: n }, (_, i) => ramp(i) * 257);
    case "uInt32":
      return Uint32Array.from({ length: n }, (_, i) => ramp(i) * 16_777_619);
    case "uInt64":
      return BigUint64Array.from({ length: n }, (_, i) => BigInt(ramp(i)) * 72_057_594_037_927_93n);
  }
}

const SHAPES = [[5], [3, 4], [2, 3, 4], [2, 1, 3, 2]];
const WIDTH: Record<IeeeioTypeName, number> = {
  Int8: 1,
  Int16: 2,
  Int32: 4,
  Int64: 8,
  Float32: 4,
  Float64: 8,
  uInt8: 1,
  uInt16: 2,
  uInt32: 4,
  uInt64: 8,
  Char8: 1,
  Char16: 2,
};

Deno.test("ieeeio round trip: every number type, ranks 1..4, both byte orders", () => {
  for (const order of ORDERS) {
    const w = createIeeeioWriter({ endian: order });
    const f = new MemoryFile();
    f.apply(w.begin());
    const written: { type: IeeeioTypeName; shape: number[]; data: TypedArray }[] = [];
    for (const type of IEEEIO_TYPE_NAMES) {
      for (const shape of SHAPES) {
        const data = sample(type, shape.reduce((a, b) => a * b, 1));
        const copy = view(data).slice();
        f.apply(w.writeDataset(type, shape, data));
        assert.deepEqual(view(data), copy, "the writer must not change the caller's data");
        written.push({ type, shape, data });
      }
    }
    f.apply(w.finish());
    const bytes = f.bytes();
    const idx = open(bytes);
    assert.equal(idx.order, order);
    assert.equal(idx.datasetCount, 48);
    assert.equal(idx.frameCount, 48);
    written.forEach((x, i) => {
      const d = idx.dataset(i);
      assert.equal(d.type, x.type);
      assert.deepEqual(d.shape, x.shape);
      assert.deepEqual(d.dims, x.shape.toReversed());
      const [ref] = idx.chunks(i);
      assert.equal(ref!.name, "dataset/0");
      assert.equal(ref!.dtype, x.type === "Char16" ? "uint16" : d.dtype);
      assert.deepEqual(
        chunkBytes(bytes, ref!, WIDTH[x.type]),
        view(x.data),
        `${x.type} ${x.shape}`,
      );
    });
  }
});

Deno.test("ieeeio reader: a shape met again is the one copy, past the 8 the scan compares in place too", () => {
  const w = createIeeeioWriter({});
  const f = new MemoryFile();
  f.apply(w.begin());
  // 48 distinct shapes (12 types x 4 shapes), twice over
  for (let pass = 0; pass < 2; pass++) {
    for (const type of IEEEIO_TYPE_NAMES) {
      for (const shape of SHAPES) {
        f.apply(w.writeDataset(type, shape, sample(type, shape.reduce((a, b) => a * b, 1))));
      }
    }
  }
  f.apply(w.finish());
  const idx = open(f.bytes());
  assert.equal(idx.datasetCount, 96);
  const distinct = new Set<readonly number[]>();
  for (let i = 0; i < 48; i++) {
    const first = idx.dataset(i), again = idx.dataset(i + 48);
    assert.deepEqual(first.dims, again.dims);
    assert.equal(first.dims, again.dims, `dataset ${i + 48}'s shape is dataset ${i}'s`);
    assert.equal(first.type, again.type);
    distinct.add(first.dims);
  }
  assert.equal(distinct.size, 48);
});

Deno.test("ieeeio round trip: frames of chunks with names, steps, attributes; Char16 via numberType", () => {
  const frames: Frame[] = [];
  for (let i = 0; i < 3; i++) {
    const chunks: IeeeioChunk[] = [
      { name: "particles/position", dtype: "float32", shape: [4, 3], data: sample("Float32", 12) },
      {
        name: "particles/orientation",
        dtype: "float32",
        shape: [4, 4],
        data: sample("Float32", 16),
      },
      {
        name: "label",
        dtype: "uint16",
        numberType: "Char16",
        shape: [2],
        data: new Uint16Array([0x263a, 0x41]),
        attributes: [
          { name: "units", value: "nm" },
          { name: "origin", value: new Float64Array([1.5, -2, 3]) },
          { name: "id", type: "uInt64", value: new BigUint64Array([2n ** 63n + 5n]) },
        ],
        annotations: ["first note", "second note"],
      },
    ];
    frames.push({ step: 10 * i, chunks });
  }
  for (const order of ORDERS) {
    const bytes = writeFile(frames, order);
    const idx = open(bytes);
    assert.equal(idx.datasetCount, 9);
    assert.equal(idx.frameCount, 3);
    for (let i = 0; i < 3; i++) {
      assert.equal(idx.step!(i), 10 * i);
      const refs = idx.chunks(i);
      assert.deepEqual(refs.map((r) => r.name), [
        "particles/position",
        "particles/orientation",
        "label",
      ]);
      assert.deepEqual(refs.map((r) => r.shape), [[4, 3], [4, 4], [2]]);
      assert.deepEqual(chunkBytes(bytes, refs[1]!, 4), view(frames[i]!.chunks[1]!.data));
      assert.deepEqual(
        Array.from(new Uint16Array(chunkBytes(bytes, refs[2]!, 2).buffer)),
        [0x263a, 0x41],
      );
      const label = idx.dataset(3 * i + 2);
      assert.equal(label.type, "Char16");
      const attrs = Object.fromEntries(label.attributes.map((a) => [a.name, a]));
      assert.equal(attrs["units"]!.value, "nm");
      assert.deepEqual(Array.from(attrs["origin"]!.value as Float64Array), [1.5, -2, 3]);
      assert.equal(attrs["origin"]!.type, "Float64");
      assert.deepEqual(Array.from(attrs["id"]!.value as BigUint64Array), [2n ** 63n + 5n]);
      assert.deepEqual(label.annotations.map((a) => a.text), ["first note", "second note"]);
    }
    // A fixed grouping overrides the frame_datasets attributes.
    const flat = open(bytes, { datasetsPerFrame: 1 });
    assert.equal(flat.frameCount, 9);
    assert.equal(flat.step!(3), 3);
    const pairs = open(bytes, { datasetsPerFrame: 2 });
    assert.equal(pairs.frameCount, 4);
    assert.match(pairs.warnings!.join("\n"), /last 1 datasets/);
    assert.throws(() => open(bytes, { datasetsPerFrame: 0 }), UsageError);
  }
});

Deno.test("ieeeio writer refuses attributes before any dataset, bad names, mismatched data", () => {
  const w = createIeeeioWriter();
  w.begin();
  assert.throws(() => w.writeAttribute({ name: "a", value: "b" }), UsageError);
  assert.throws(() => w.writeAnnotation("x"), UsageError);
  w.writeDataset("Int32", [2], new Int32Array(2));
  assert.throws(() => w.writeAttribute({ name: "x".repeat(64), value: "b" }), UsageError);
  assert.throws(() => w.writeDataset("Int32", [3], new Int32Array(2)), RangeError);
  assert.throws(() => createIeeeioWriter({ endian: "middle" as "big" }), UsageError);
});

Deno.test("ieeeio append: keeps the file's byte order, rewrites the count, attaches to the last dataset", () => {
  for (const order of ORDERS) {
    const first = writeFile([
      {
        step: 0,
        chunks: [{
          name: "dataset/0",
          dtype: "int16",
          shape: [3],
          data: new Int16Array([1, 2, 3]),
        }],
      },
      {
        step: 1,
        chunks: [{ name: "dataset/0", dtype: "int16", shape: [2], data: new Int16Array([4, 5]) }],
      },
    ], order);
    const f = new MemoryFile();
    f.apply([{ kind: "write", offset: 0, data: first }]);
    const w = appendWriter(memorySource(first.slice(), "test.ieeeio"));
    assert.equal(w.order, order);
    assert.equal(w.datasetCount, 2);
    apply(f, w.begin());
    assert.equal(open(f.bytes().slice()).headerCount, -1, "the header says 'open' while appending");
    apply(f, w.writeAttribute({ name: "late", value: new Int32Array([7]) }));
    apply(
      f,
      w.writeFrame({
        step: 2,
        chunks: [{
          name: "dataset/0",
          dtype: "float64",
          shape: [1, 2],
          data: new Float64Array([6, 7]),
        }],
      }),
    );
    apply(f, w.finish());
    const bytes = f.bytes();
    const idx = open(bytes);
    assert.equal(idx.order, order);
    assert.equal(idx.headerCount, 3);
    assert.equal(idx.frameCount, 3);
    assert.equal(idx.step!(2), 2);
    assert.deepEqual(
      idx.dataset(1).attributes.map((a) => [a.name, Array.from(a.value as Int32Array)]),
      [["late", [7]]],
    );
    assert.deepEqual(Array.from(new Float64Array(chunkBytes(bytes, idx.chunks(2)[0]!, 8).buffer)), [
      6,
      7,
    ]);
    assert.deepEqual(Array.from(new Int16Array(chunkBytes(bytes, idx.chunks(0)[0]!, 2).buffer)), [
      1,
      2,
      3,
    ]);
    // Through the framing's option, too; asking for the other order is refused.
    const other = order === "little" ? "big" : "little";
    const src = memorySource(first, "test.ieeeio");
    assert.equal(createIeeeioWriter({ append: src }).order, order);
    assert.throws(() => ieeeio.createWriter({ append: src, endian: other }), UsageError);
  }
});

Deno.test("ieeeio recovery: a count of -1 is recovered by scanning, read-only, with a warning", () => {
  for (const order of ORDERS) {
    const frames = [0, 1, 2].map((i) => ({
      step: i,
      chunks: [{
        name: "dataset/0",
        dtype: "int32" as const,
        shape: [4],
        data: new Int32Array([i, i, i, i]),
      }],
    }));
    const open1 = writeFile(frames, order, false);
    const before = open1.slice();
    const idx = open(open1);
    assert.equal(idx.headerCount, -1);
    assert.equal(idx.datasetCount, 3);
    assert.equal(idx.frameCount, 3);
    assert.equal(idx.warnings!.length, 1);
    assert.match(
      idx.warnings![0]!,
      /^header dataset count is -1 .*found 3 datasets.*not changed/,
    );
    assert.deepEqual(open1, before);
    assert.equal(idx.describe!()["recovered"], true);
    // A writer that died inside a record: the partial record is dropped with a second warning.
    const cut = open1.slice(0, open1.length - 5);
    const idx2 = open(cut);
    assert.equal(idx2.datasetCount, 2);
    assert.match(idx2.warnings![1]!, /partial record/);
    const cut2 = open1.slice(0, open1.length - 36);
    assert.equal(open(cut2).datasetCount, 2);
    assert.match(open(cut2).warnings![1]!, /partial record header/);
  }
});

function le32(bytes: Uint8Array, offset: number, value: number): Uint8Array {
  const b = bytes.slice();
  new DataView(b.buffer).setInt32(offset, value, true);
  return b;
}

Deno.test("ieeeio malformed: each broken rule is a FormatError naming the file and the offset", () => {
  const good = golden("le");
  assert.doesNotThrow(() => open(good));
  // Wrong magic.
  const magic = good.slice();
  magic[2] = 9;
  assertFormatError(() => open(magic), 0, /wrong magic number 01 02 09 04: expected 01 02 03 04/);
  assert.equal(ieeeio.detect!(magic, magic.length), false);
  // Bad byte-order mark.
  assertFormatError(
    () => open(le32(good, 4, 0x02010403)),
    4,
    /byte-order mark 03 04 01 02 is neither 04 03 02 01 \(little\) nor 01 02 03 04 \(big\)/,
  );
  // Shorter than the header.
  assertFormatError(() => open(good.slice(0, 10)), 0, /shorter than the 16-byte/);
  // Truncated record: the file ends inside a record header.
  const trunc = new Uint8Array(good.length + 5);
  trunc.set(good);
  trunc.set([2, 0, 0, 0, 9], good.length);
  assertFormatError(() => open(trunc), 143, /truncated record header: 5 bytes left/);
  // Record size past end of file (the annotation record claims 300 bytes).
  assertFormatError(
    () => open(le32(good, 0x84, 300)),
    0x84,
    /record size 300 runs past the end of the file/,
  );
  // Dims inconsistent with the data size (dims 3,3 for 48 bytes of float64).
  assertFormatError(
    () => open(le32(good, 0x2c, 3)),
    0x28,
    /dims \[3, 3\] of Float64 need 72 bytes but the data size is 48/,
  );
  // Rank inconsistent with the record size.
  assertFormatError(() => open(le32(good, 0x24, 3)), 0x14, /record size 68 does not match/);
  // Unknown number type code in a data record and in an attribute record.
  assertFormatError(() => open(le32(good, 0x20, 42)), 0x20, /unknown number type code 42/);
  assertFormatError(() => open(le32(good, 0x70, 12)), 0x70, /unknown number type code 12/);
  // Unknown record type.
  assertFormatError(() => open(le32(good, 0x80, 7)), 0x80, /unknown record type 7/);
  // Header count disagrees with the records.
  assertFormatError(() => open(le32(good, 8, 2)), 8, /header says 2 datasets but the file holds 1/);
  // An attachment that names a dataset that does not exist.
  assertFormatError(() => open(le32(good, 0x88, 4)), 0x88, /belongs to dataset 4/);
  // A data record whose sequence id is not its position.
  assertFormatError(() => open(le32(good, 0x18, 1)), 0x18, /sequence id 1, expected 0/);
  // An attribute whose sizes disagree.
  assertFormatError(
    () => open(le32(good, 0x74, 6)),
    0x64,
    /attribute record size 20 does not match/,
  );
});

Deno.test("ieeeio detect: magic and byte-order mark", () => {
  assert.ok(ieeeio.detect!(golden("be"), 143));
  assert.equal(ieeeio.detect!(golden("le").subarray(0, 8), 15), false);
  assert.equal(ieeeio.detect!(new Uint8Array(16), 16), false);
});

Deno.test("ieeeio reader: a caller's layout groups a file without frame_datasets attributes", () => {
  const w = createIeeeioWriter({ endian: "big" });
  const f = new MemoryFile();
  f.apply(w.begin());
  for (let i = 0; i < 4; i++) f.apply(w.writeDataset("Float32", [2], new Float32Array([i, i])));
  f.apply(w.finish());
  const layout = [
    { name: "a", dtype: "float32" as const, shape: [2] },
    { name: "b", dtype: "float32" as const, shape: [2] },
  ];
  const idx = open(f.bytes(), { layout });
  assert.equal(idx.frameCount, 2);
  assert.deepEqual(idx.chunks(1).map((r) => r.offset), [
    idx.dataset(2).dataOffset,
    idx.dataset(3).dataOffset,
  ]);
  assert.equal(open(f.bytes()).frameCount, 4);
});

Deno.test("ieeeio through the CLI: write, read and info; a malformed file exits 2 naming the offset", async () => {
  using dir = tempDir();
  const file = `${dir.path}/t.ieeeio`;
  const w = await runCli([
    "write",
    "--framing",
    "ieeeio",
    "--n",
    "16",
    "--frames",
    "3",
    "--endian",
    "big",
    file,
  ]);
  assert.equal(w.code, 0, w.stderr);
  const bytes = Deno.readFileSync(file);
  assert.deepEqual(Array.from(bytes.subarray(0, 12)), [1, 2, 3, 4, 1, 2, 3, 4, 0, 0, 0, 6]);
  const r = await runCli(["read", file]);
  assert.equal(r.code, 0, r.stderr);
  const info = await runCli(["info", "--json", file]);
  assert.equal(info.code, 0, info.stderr);
  assert.match(info.stdout, /"byteOrder": ?"big"/);
  assert.match(info.stdout, /particles\/orientation/);
  assert.match(info.stdout, /frame_datasets/);
  const g = await runCli(["info", new URL("a8_le.ieeeio", DATA).pathname]);
  assert.equal(g.code, 0, g.stderr);
  assert.match(
    g.stdout,
    /"attributes":\[\{"name":"name","type":"Char8","count":3,"value":"rho"\}\],"annotations":\["hi"\]/,
  );
  const bad = golden("le");
  bad[0x20] = 42;
  Deno.writeFileSync(file, bad);
  const e = await runCli(["info", "--framing", "ieeeio", file]);
  assert.equal(e.code, 2);
  assert.match(
    e.stderr,
    /^sciobench: error: ieeeio: .*t\.ieeeio at byte 32: unknown number type code 42/,
  );
  bad[0] = 0;
  Deno.writeFileSync(file, bad);
  const m = await runCli(["info", "--framing", "ieeeio", file]);
  assert.equal(m.code, 2);
  assert.match(m.stderr, /at byte 0: wrong magic number/);
});

Deno.test("ieeeio reader: one-element attributes of every number type read back as written (kept as numbers), in both orders", () => {
  const values: [IeeeioTypeName, TypedArray][] = [
    ["Int8", new Int8Array([-7])],
    ["Int16", new Int16Array([-300])],
    ["Int32", new Int32Array([-70000])],
    ["Int64", new BigInt64Array([-(2n ** 40n)])],
    ["Int64", new BigInt64Array([2n ** 62n + 1n])], // past 2^53: kept as an array
    ["Float32", new Float32Array([1.5])],
    ["Float64", new Float64Array([-2.25e-300])],
    ["Float64", new Float64Array([NaN])],
    ["uInt8", new Uint8Array([200])],
    ["uInt16", new Uint16Array([65000])],
    ["uInt32", new Uint32Array([4000000000])],
    ["uInt64", new BigUint64Array([2n ** 52n + 3n])],
  ];
  for (const order of ORDERS) {
    const w = createIeeeioWriter({ endian: order });
    const f = new MemoryFile();
    f.apply(w.begin());
    f.apply(w.writeDataset("Float64", [2], new Float64Array([1, 2])));
    values.forEach(([type, value], k) => f.apply(w.writeAttribute({ name: `a${k}`, type, value })));
    f.apply(w.finish());
    const d = openIeeeio(memorySource(f.bytes(), "one.ieeeio", "ieeeio")).dataset(0);
    assert.equal(d.attributes.length, values.length);
    values.forEach(([type, value], k) => {
      const a = d.attributes[k]!;
      assert.equal(a.type, type, `${order} a${k}`);
      assert.equal(a.count, 1);
      assert.deepEqual(a.value, value, `${order} a${k} ${type}`);
    });
  }
});

Deno.test("ieeeio reader: attributes away from their dataset (sequence id of another) are found, the first name in the file names it", () => {
  for (const order of ORDERS) {
    const le = order === "little";
    const w = createIeeeioWriter({ endian: order });
    const f = new MemoryFile();
    f.apply(w.begin());
    f.apply(w.writeDataset("Int32", [1], new Int32Array([0])));
    f.apply(w.writeAttribute({ name: "name", value: "first" }));
    const forwardAt = f.bytes().length;
    f.apply(w.writeAttribute({ name: "name", value: "early" })); // made dataset 1's below
    f.apply(w.writeDataset("Int32", [1], new Int32Array([1])));
    f.apply(w.writeAttribute({ name: "name", value: "own" }));
    const lateAt = f.bytes().length;
    f.apply(w.writeAttribute({ name: "name", value: "late" })); // made dataset 0's below
    const noteAt = f.bytes().length;
    f.apply(w.writeAnnotation("note")); // made dataset 0's below
    f.apply(w.writeDataset("Int32", [1], new Int32Array([2])));
    const lonelyAt = f.bytes().length;
    f.apply(w.writeAttribute({ name: "name", value: "lonely" })); // made dataset 1's below
    f.apply(w.finish());
    const bytes = f.bytes().slice();
    const seq = (at: number, to: number) => new DataView(bytes.buffer).setInt32(at + 8, to, le);
    seq(forwardAt, 1);
    seq(lateAt, 0);
    seq(noteAt, 0);
    seq(lonelyAt, 1);
    const idx = open(bytes);
    assert.deepEqual(idx.chunks(0).map((r) => r.name), ["first"]);
    assert.deepEqual(idx.chunks(1).map((r) => r.name), ["early"]);
    assert.deepEqual(idx.chunks(2).map((r) => r.name), ["dataset/0"]);
    const values = (i: number) => idx.dataset(i).attributes.map((a) => a.value);
    assert.deepEqual(values(0), ["first", "late"]);
    assert.deepEqual(values(1), ["early", "own", "lonely"]);
    assert.deepEqual(values(2), []);
    assert.deepEqual(idx.dataset(0).annotations.map((a) => a.text), ["note"]);
    assert.deepEqual(idx.dataset(0).attributes.map((a) => a.recordOffset), [
      idx.dataset(0).dataOffset + 4,
      lateAt,
    ]);
  }
});

Deno.test("ieeeio reader: a file of 4500 frames of two chunks keeps every frame's step, names and data (a column's first block sized by the header's count, or, recovering a count of -1, doubling from 256 entries; then 4096-entry blocks)", () => {
  const frames: Frame[] = Array.from({ length: 4500 }, (_, i) => ({
    step: 7 * i + 3,
    chunks: [
      { name: "a", dtype: "int16", shape: [1], data: new Int16Array([i]) },
      { name: "bb", dtype: "float32", shape: [2, 1], data: new Float32Array([i, -i]) },
    ],
  }));
  for (const order of ORDERS) {
    const bytes = writeFile(frames, order);
    const le = order === "little";
    // the same file with the count of a writer that died (-1): the scan does not know the count
    const unclosed = bytes.slice();
    new DataView(unclosed.buffer).setInt32(8, -1, le);
    for (const [what, file] of [["closed", bytes], ["count -1", unclosed]] as const) {
      const idx = open(file);
      assert.equal(idx.frameCount, 4500, what);
      for (const i of [0, 16, 17, 2047, 2048, 4095, 4096, 4097, 4499]) {
        assert.equal(idx.step!(i), 7 * i + 3, `${what}: frame ${i}`);
        assert.deepEqual(idx.chunks(i).map((r) => r.name), ["a", "bb"], `${what}: frame ${i}`);
      }
      // every frame: each dataset's offset (datasets 2i and 2i + 1) gives its own data
      for (let i = 0; i < 4500; i++) {
        const [a, bb] = idx.chunks(i);
        const got = new Int16Array(chunkBytes(bytes, a!, 2).buffer)[0];
        const got2 = new Float32Array(chunkBytes(bytes, bb!, 4).buffer)[1];
        if (got !== i || got2 !== -i || idx.step!(i) !== 7 * i + 3) {
          assert.fail(`${what}: frame ${i}: ${got}, ${got2}, step ${idx.step!(i)}`);
        }
      }
    }
    // a count the file does not hold sizes the columns wrongly: still the count's error
    for (const count of [1, 3000, 20000]) {
      const wrong = bytes.slice();
      new DataView(wrong.buffer).setInt32(8, count, le);
      assert.throws(
        () => open(wrong),
        (e: unknown) =>
          e instanceof FormatError &&
          e.message.includes(`header says ${count} datasets but the file holds 9000 data records`),
        `count ${count}`,
      );
    }
  }
});

/** `count` frames (step i) of one-byte uint8 chunks named `names`, each holding i. */
function namedByteFrames(names: readonly string[], count: number): Frame[] {
  return Array.from({ length: count }, (_, i) => ({
    step: i,
    chunks: names.map((name) => ({
      name,
      dtype: "uint8" as const,
      shape: [1],
      data: new Uint8Array([i]),
    })),
  }));
}

Deno.test("ieeeio reader: names an earlier open met (kept for the process's later opens) are told apart by every byte, and past the first 16", () => {
  const file = (names: string[]) => writeFile(namedByteFrames(names, 2), "little");
  const a = ["pos_a", "abcdXfghi", "x", "orientation"];
  const b = ["pos_b", "abcdYfghi", "y", "orientatioN"];
  const many = Array.from({ length: 20 }, (_, k) => `name_${String(k).padStart(2, "0")}`);
  for (const names of [a, b, a, many, b, many]) {
    const idx = open(file(names));
    for (const f of [0, 1]) assert.deepEqual(idx.chunks(f).map((r) => r.name), names);
  }
});

Deno.test("ieeeio reader: chunk names of one length that differ in one byte stay apart", () => {
  const names = ["pos_a", "pos_b", "abcdXfghi", "abcdYfghi", "abcdefgh", "abcdefgi", "x"];
  const frames = namedByteFrames(names, 3);
  for (const order of ORDERS) {
    const idx = open(writeFile(frames, order));
    for (let i = 0; i < 3; i++) assert.deepEqual(idx.chunks(i).map((r) => r.name), names);
  }
});
