import assert from "node:assert/strict";
import { crc32 } from "node:zlib";
import { copySwapped } from "../lib/bytes/byteswap.ts";
import { FormatError, UsageError } from "../lib/core/errors.ts";
import {
  decodeHeader,
  encodeFile,
  encodeValues,
  netcdf,
  netcdfName,
  openNetcdf,
  schemaForChunks,
} from "../lib/framings/netcdf/mod.ts";
import type { ChunkRef, Frame, FrameIndex, TypedArray, WriteOp } from "../lib/framings/types.ts";
import { DTYPE_SIZE, matchesMagic } from "../lib/framings/types.ts";
import { MemoryFile, memorySource } from "../lib/io/memory.ts";
import { GOLDEN_DIR, GOLDENS } from "./_netcdf_golden.ts";
import { commandMissing, peerTest, runCli, tempDir } from "./_helpers.ts";

function hex(n: number): string {
  return (n >>> 0).toString(16).padStart(8, "0");
}

function golden(file: string): Uint8Array {
  return Deno.readFileSync(GOLDEN_DIR + file);
}

function open(bytes: Uint8Array, path = "t.nc"): FrameIndex {
  return netcdf.openIndex(memorySource(bytes, path, "netcdf"));
}

/** The stored bytes of a chunk, converted to native order. */
function chunkData(file: Uint8Array, ref: ChunkRef): Uint8Array {
  const out = file.slice(ref.offset, ref.offset + ref.bytes);
  assert.equal(ref.order, "big");
  copySwapped(out, out, DTYPE_SIZE[ref.dtype]);
  return out;
}

function bytesOf(a: TypedArray): Uint8Array {
  return new Uint8Array(a.buffer, a.byteOffset, a.byteLength);
}

/** Frames like the table workload's: position N x 3 and orientation N x 4, float32. */
function tableFrames(count: number, n: number): Frame[] {
  return Array.from({ length: count }, (_, r) => ({
    step: 10 * r,
    chunks: [
      {
        name: "particles/position",
        dtype: "float32" as const,
        shape: [n, 3],
        data: Float32Array.from(
          { length: n * 3 },
          (_, k) => r * 100 + Math.floor(k / 3) * 3 + (k % 3) + 0.5,
        ),
      },
      {
        name: "particles/orientation",
        dtype: "float32" as const,
        shape: [n, 4],
        data: Float32Array.from(
          { length: n * 4 },
          (_, k) => -(r * 100 + Math.floor(k / 4) * 4 + (k % 4) + 1) / 4,
        ),
      },
    ],
  }));
}

function shortFrames(values: number[][]): Frame[] {
  return values.map((v, r) => ({
    step: r,
    chunks: [{
      name: "data",
      dtype: "int16" as const,
      shape: [v.length],
      data: Int16Array.from(v),
    }],
  }));
}

function writeAll(
  frames: readonly Frame[],
  options: Record<string, unknown> = {},
): { file: MemoryFile; ops: WriteOp[][] } {
  const w = netcdf.createWriter(options);
  const file = new MemoryFile();
  const ops: WriteOp[][] = [];
  const apply = (o: WriteOp[]) => {
    ops.push(o);
    file.apply(o);
  };
  apply(w.begin());
  for (const f of frames) apply(w.writeFrame(f));
  apply(w.finish());
  return { file, ops };
}

// ---------------------------------------------------------------------------------------------
// Golden files from ncgen
// ---------------------------------------------------------------------------------------------

for (const g of GOLDENS) {
  Deno.test(`netcdf: writer reproduces ${g.file} byte for byte`, () => {
    const want = golden(g.file);
    const got = encodeFile(g.schema, g.data, g.numrecs, { fill: g.fill });
    assert.equal(got.length, want.length, "file size");
    assert.deepEqual(got, want);
  });

  Deno.test(`netcdf: reader reads ${g.file} (header and every value)`, () => {
    const bytes = golden(g.file);
    const f = openNetcdf(memorySource(bytes, g.file, "netcdf"));
    assert.deepEqual(f.warnings, []);
    assert.equal(f.numrecs, g.numrecs);
    assert.equal(f.header.variant, g.schema.variant);
    assert.deepEqual(f.header.dimensions, g.schema.dimensions);
    assert.deepEqual(
      f.header.variables.map((v) => [v.name, v.type, v.dims]),
      g.schema.variables.map((v) => [v.name, v.type, v.dims]),
    );
    // Attributes: compare their big-endian encodings (covers every type).
    const sameAttrs = (got: typeof f.header.attributes, want: typeof g.schema.attributes) => {
      assert.deepEqual(got.map((a) => [a.name, a.type]), want.map((a) => [a.name, a.type]));
      got.forEach((a, i) =>
        assert.deepEqual(
          encodeValues(a.type, a.values),
          encodeValues(a.type, want[i]!.values),
          a.name,
        )
      );
    };
    sameAttrs(f.header.attributes, g.schema.attributes);
    f.header.variables.forEach((v, i) =>
      sameAttrs(v.attributes, g.schema.variables[i]!.attributes)
    );
    // Data: each variable's values, record by record.
    f.layout.vars.forEach((v) => {
      const want = encodeValues(v.type, g.data[v.name]!);
      const n = v.record ? f.numrecs : 1;
      for (let r = 0; r < n; r++) {
        const at = v.begin + r * (v.record ? f.layout.recsize : 0);
        const slab = want.subarray(r * v.slabBytes, (r + 1) * v.slabBytes);
        assert.deepEqual(bytes.subarray(at, at + slab.length), slab, `${v.name} record ${r}`);
      }
    });
  });
}

Deno.test("netcdf: frame index of demo1.nc: records of temp and flag, fixed xc via describe", () => {
  const bytes = golden("demo1.nc");
  const idx = open(bytes);
  assert.equal(idx.framing, "netcdf");
  assert.equal(idx.frameCount, 2);
  const c1 = idx.chunks(1);
  assert.deepEqual(c1.map((c) => [c.name, c.dtype, c.shape, c.offset, c.bytes]), [
    ["temp", "float32", [3], 256, 12],
    ["flag", "int16", [], 268, 2],
  ]);
  assert.deepEqual([...new Float32Array(chunkData(bytes, c1[0]!).buffer)], [4, 5, 6]);
  assert.deepEqual([...new Int16Array(chunkData(bytes, c1[1]!).buffer)], [8]);
  const d = idx.describe!();
  assert.equal(d.kind, "classic");
  assert.equal(d.numrecs, 2);
  assert.equal(d.header_bytes, 216);
  assert.equal(d.recsize, 16);
  assert.deepEqual(d.dimensions, [
    { name: "time", length: 2, unlimited: true },
    { name: "x", length: 3, unlimited: false },
  ]);
  assert.deepEqual(d.attributes, { title: { type: "char", values: "demo" } });
  const vars = d.variables as {
    name: string;
    dimensions: string[];
    record: boolean;
    begin: number;
    attributes: unknown;
  }[];
  assert.deepEqual(vars.map((v) => [v.name, v.dimensions, v.record, v.begin]), [
    ["xc", ["x"], false, 216],
    ["temp", ["time", "x"], true, 240],
    ["flag", ["time"], true, 252],
  ]);
  assert.deepEqual(vars[1]!.attributes, { units: { type: "char", values: "K" } });
});

Deno.test("netcdf: describe() gives 64-bit attribute values as numbers or exact strings", () => {
  const d = open(golden("cdf5types.nc")).describe!();
  assert.equal(d.kind, "cdf5");
  const attrs = d.attributes as Record<string, { type: string; values: unknown }>;
  assert.deepEqual(attrs.u64, { type: "uint64", values: ["18446744073709551615"] });
  assert.deepEqual(attrs.us, { type: "ushort", values: [65535, 1] });
  const vars = d.variables as { name: string; attributes: Record<string, { values: unknown }> }[];
  assert.deepEqual(vars.find((v) => v.name === "vi64")!.attributes.big!.values, [
    "-9223372036854775807",
    "9007199254740993",
  ]);
});

Deno.test("netcdf: a file of fixed variables only is one frame of them; an empty dataset has none", () => {
  const bytes = golden("fixed2.nc");
  const idx = open(bytes);
  assert.equal(idx.frameCount, 1);
  const c = idx.chunks(0);
  assert.deepEqual(c.map((x) => [x.name, x.dtype, x.shape, x.bytes]), [[
    "grid",
    "float32",
    [2, 3],
    24,
  ], ["flags", "int8", [3], 3]]);
  assert.deepEqual([...new Float32Array(chunkData(bytes, c[0]!).buffer)], [1, 2, 3, 4, 5, 6]);
  const empty = open(golden("empty1.nc"));
  assert.equal(empty.frameCount, 0);
  assert.deepEqual(empty.describe!().dimensions, []);
});

// ---------------------------------------------------------------------------------------------
// The frame writer
// ---------------------------------------------------------------------------------------------

Deno.test("netcdf: frame writer reproduces ncgen's frames1.nc and frames2.nc (table frames)", () => {
  for (const variant of [1, 2] as const) {
    const { file } = writeAll(tableFrames(2, 5), { variant });
    assert.deepEqual(file.bytes(), golden(`frames${variant}.nc`), `variant ${variant}`);
  }
});

Deno.test("netcdf: frame writer reproduces records1.nc / records5.nc (single record variable, no padding)", () => {
  const frames = shortFrames([[1, 2, 3], [4, 5, 6], [7, 8, 9]]);
  assert.deepEqual(writeAll(frames).file.bytes(), golden("records1.nc"));
  assert.deepEqual(writeAll(frames, { variant: 5 }).file.bytes(), golden("records5.nc"));
});

Deno.test("netcdf: table frames round-trip through the index (names, shapes, values)", () => {
  const frames = tableFrames(3, 7);
  for (const variant of [1, 2, 5] as const) {
    const bytes = writeAll(frames, { variant }).file.bytes().slice();
    const idx = open(bytes);
    assert.equal(idx.frameCount, 3);
    frames.forEach((f, r) => {
      const refs = idx.chunks(r);
      assert.deepEqual(
        refs.map((c) => [c.name, c.dtype, c.shape]),
        f.chunks.map((c) => [c.name, c.dtype, c.shape]),
      );
      refs.forEach((ref, k) =>
        assert.deepEqual(
          chunkData(bytes, ref),
          bytesOf(f.chunks[k]!.data),
          `variant ${variant} frame ${r} chunk ${k}`,
        )
      );
    });
    const d = idx.describe!();
    assert.deepEqual((d.dimensions as { name: string }[]).map((x) => x.name), [
      "record",
      "n7",
      "n3",
      "n4",
    ]);
  }
});

Deno.test("netcdf: header is written at the first frame, numrecs rewritten at finish (netCDF-C default)", () => {
  const frames = tableFrames(2, 2);
  const { ops } = writeAll(frames);
  assert.deepEqual(ops[0], [], "begin() writes nothing before the schema is known");
  const first = ops[1]!;
  assert.equal(first.length, 2);
  assert.equal(first[0]!.kind === "write" && first[0]!.offset, 0);
  const header = first[0]!.kind === "write" ? first[0]!.data : new Uint8Array();
  assert.deepEqual(
    [...header.subarray(0, 8)],
    [0x43, 0x44, 0x46, 1, 0, 0, 0, 0],
    "numrecs 0 in the first header",
  );
  assert.equal(ops[2]!.length, 1, "second frame: one write");
  const fin = ops[3]!;
  assert.equal(fin.length, 1);
  assert.ok(fin[0]!.kind === "write" && fin[0]!.offset === 4);
  assert.deepEqual(fin[0]!.kind === "write" ? [...fin[0]!.data] : [], [0, 0, 0, 2]);
});

Deno.test("netcdf: option numrecs=frame rewrites numrecs after every record (as NC_SHARE)", () => {
  const { ops, file } = writeAll(tableFrames(3, 2), { numrecs: "frame", variant: 5 });
  for (let r = 1; r <= 3; r++) {
    const last = ops[r]!.at(-1)!;
    assert.ok(last.kind === "write" && last.offset === 4);
    assert.deepEqual(last.kind === "write" ? [...last.data] : [], [0, 0, 0, 0, 0, 0, 0, r]);
  }
  assert.equal(open(file.bytes().slice()).frameCount, 3);
});

Deno.test("netcdf: option fill prefills each record with fill values first; result is the same file", () => {
  const frames = shortFrames([[1, 2, 3], [4, 5, 6]]);
  const plain = writeAll(frames).file.bytes().slice();
  const { ops, file } = writeAll(frames, { fill: true });
  const rec = ops[1]!.filter((o) => o.kind === "write" && o.offset > 0);
  assert.equal(rec.length, 2);
  assert.deepEqual(rec[0]!.kind === "write" ? [...rec[0]!.data] : [], [
    0x80,
    0x01,
    0x80,
    0x01,
    0x80,
    0x01,
  ]);
  assert.deepEqual(file.bytes(), plain);
});

Deno.test("netcdf: chunks declared up front make begin() write the header", () => {
  const frames = tableFrames(1, 3);
  const chunks = frames[0]!.chunks.map((c) => ({ name: c.name, dtype: c.dtype, shape: c.shape }));
  const { ops, file } = writeAll(frames, { chunks });
  assert.equal(ops[0]!.length, 1);
  assert.deepEqual(file.bytes(), writeAll(frames).file.bytes());
});

Deno.test("netcdf: zero frames give a valid empty dataset", () => {
  const { file } = writeAll([]);
  assert.deepEqual([...file.bytes()], [0x43, 0x44, 0x46, 1, ...new Array(28).fill(0)]);
  assert.equal(open(file.bytes().slice()).frameCount, 0);
});

Deno.test("netcdf: writer variant choice and refusals", () => {
  const u8: Frame = {
    step: 0,
    chunks: [{ name: "u", dtype: "uint8", shape: [5], data: new Uint8Array(5) }],
  };
  assert.equal(schemaForChunks(u8.chunks).variant, 5, "unsigned types need CDF-5");
  assert.equal(schemaForChunks(tableFrames(1, 2)[0]!.chunks).variant, 1);
  assert.throws(() => netcdf.createWriter({ variant: 1 }).writeFrame(u8), UsageError);
  assert.throws(() => netcdf.createWriter({ endian: "little" }), UsageError);
  assert.throws(() => netcdf.createWriter({ variant: 3 }), UsageError);
  const w = netcdf.createWriter();
  w.begin();
  w.writeFrame(tableFrames(1, 2)[0]!);
  assert.throws(
    () => w.writeFrame(tableFrames(1, 3)[0]!),
    UsageError,
    "a frame with another shape",
  );
  assert.equal(netcdfName("particles/position"), "particles_position");
  assert.equal(netcdfName("x\u0001y "), "x_y");
  assert.equal(netcdfName(" a"), "_ a");
});

Deno.test("netcdf: streaming numrecs (all ones) is derived from the file length", () => {
  for (const variant of [1, 5] as const) {
    const bytes = writeAll(tableFrames(4, 3), { variant }).file.bytes().slice();
    bytes.fill(0xff, 4, variant === 5 ? 12 : 8);
    const idx = open(bytes);
    assert.equal(idx.frameCount, 4);
    assert.equal(idx.describe!().numrecs_streaming, true);
    // A partial last record is left out, with a warning.
    const cut = open(bytes.subarray(0, bytes.length - 5));
    assert.equal(cut.frameCount, 3);
    assert.match(cut.warnings!.join("\n"), /trailing bytes/);
  }
  // Single record variable: the unpadded slab is the record size.
  const single = golden("single1.nc").slice();
  single.fill(0xff, 4, 8);
  assert.equal(open(single).frameCount, 3);
});

Deno.test("netcdf: detect() claims 'CDF' files (an unknown version is then a precise error)", () => {
  assert.equal(matchesMagic(netcdf.magic, golden("demo1.nc").subarray(0, 64)), true);
  assert.equal(matchesMagic(netcdf.magic, golden("demo5.nc").subarray(0, 64)), true);
  assert.equal(matchesMagic(netcdf.magic, new Uint8Array([0x43, 0x44, 0x46, 3])), true);
  assert.equal(matchesMagic(netcdf.magic, new Uint8Array([0x43, 0x44, 0x45, 1])), false);
  assert.equal(matchesMagic(netcdf.magic, new Uint8Array([0x89, 0x48, 0x44, 0x46])), false);
});

// ---------------------------------------------------------------------------------------------
// Malformed files: each breaks exactly one rule of demo1.nc (offsets from the spec's hexdump)
// ---------------------------------------------------------------------------------------------

function corrupt(edit: (b: Uint8Array, v: DataView) => Uint8Array | void): Uint8Array {
  const b = golden("demo1.nc").slice();
  const out = edit(b, new DataView(b.buffer));
  return out ?? b;
}

function assertFormatError(bytes: Uint8Array, offset: number, pattern: RegExp): void {
  assert.throws(() => open(bytes, "bad.nc"), (e: unknown) => {
    assert.ok(e instanceof FormatError, `expected FormatError, got ${String(e)}`);
    assert.equal(e.exitCode, 2);
    assert.equal(e.offset, offset, e.message);
    assert.match(e.message, /^netcdf: bad\.nc at byte \d+: /);
    assert.match(e.message, pattern);
    return true;
  });
}

Deno.test("netcdf malformed: bad magic", () => {
  assertFormatError(corrupt((b) => void (b[0] = 0x58)), 0, /bad magic/);
  assertFormatError(new TextEncoder().encode("hello world, not netcdf"), 0, /bad magic/);
});

Deno.test("netcdf malformed: unknown version byte", () => {
  assertFormatError(corrupt((b) => void (b[3] = 3)), 3, /unknown version byte 3/);
});

Deno.test("netcdf malformed: bad tag (dimension list tag 0x0A -> 0x0B)", () => {
  assertFormatError(corrupt((_, v) => v.setUint32(8, 0x0b)), 8, /bad tag 0x0000000b.*dimension/);
});

Deno.test("netcdf malformed: ABSENT list with a non-zero count", () => {
  // vatt_list of xc (0x60) is ABSENT: give it count 1.
  assertFormatError(
    corrupt((_, v) => v.setUint32(0x64, 1)),
    0x64,
    /ABSENT attribute list must have count 0/,
  );
});

Deno.test("netcdf lenient: a begin past the end of the file reads as zeros (as libnetcdf)", () => {
  const full = open(golden("fixed2.nc"));
  const headerBytes = full.describe!().header_bytes as number;
  const idx = open(golden("fixed2.nc").subarray(0, headerBytes));
  assert.equal(idx.frameCount, 1);
  assert.equal(idx.pastEndReadsZero, true);
  assert.equal(idx.departures!.length, full.chunks(0).length);
  assert.match(idx.warnings!.join("\n"), /lies past the end of the file/);
});

Deno.test("netcdf malformed: a forged record count far past the end is refused in O(1)", () => {
  // 60,000 records of 16 bytes is 1 MB never written: read as zeros, but 65,536 records or a
  // gibibyte past the end is a damaged file (a fuzz finding that exhausted the heap).
  const some = open(corrupt((_, v) => v.setUint32(4, 60_000)));
  assert.equal(some.frameCount, 60_000);
  const size = golden("demo1.nc").length;
  assertFormatError(
    corrupt((_, v) => v.setUint32(4, 0x7fff_fff0)),
    size,
    /data past the end of the file \(\d+ bytes\); more than 1073741824 bytes or 65536 records never written: the file is probably damaged/,
  );
  const started = performance.now();
  assertFormatError(corrupt((_, v) => v.setUint32(4, 70_000)), size, /65536 records/);
  assert.ok(performance.now() - started < 2000, "refused before any per-record work");
});

Deno.test("netcdf malformed: a begin that puts fixed data after the records (as libnetcdf)", () => {
  // begin of xc is at 0x70: fixed data may not follow the record data (NC_check_voffs).
  assertFormatError(corrupt((_, v) => v.setUint32(0x70, 5000)), 240, /overlaps fixed variable/);
});

Deno.test("netcdf malformed: a begin inside the header", () => {
  assertFormatError(
    corrupt((_, v) => v.setUint32(0x70, 212)),
    0x70,
    /begin 212 of variable 'xc' lies inside the header \(216 bytes\)/,
  );
});

Deno.test("netcdf lenient: records and fixed data never written read as zeros", () => {
  const cut = open(corrupt((b) => b.subarray(0, 260)));
  assert.equal(cut.frameCount, 2);
  assert.match(cut.warnings!.join("\n"), /2 records of 16 bytes \[260, 272\) lies past the end/);
  const more = open(corrupt((_, v) => v.setUint32(4, 5)));
  assert.equal(more.frameCount, 5);
  const fixed = open(golden("fixed2.nc").subarray(0, 194));
  assert.match(fixed.warnings!.join("\n"), /'flags' \[194, 195\) lies past the end/);
});

Deno.test("netcdf lenient: data never written reads as zeros through the engine and info", async () => {
  using tmp = tempDir();
  const dir = tmp.path;
  {
    const path = `${dir}/cut.nc`;
    Deno.writeFileSync(path, golden("demo1.nc").subarray(0, 260));
    const r = await runCli(["info", "--json", path]);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stderr, /never written, read as zeros/);
    const doc = JSON.parse(r.stdout);
    assert.equal(doc.frames, 2);
    const whole = golden("demo1.nc").slice(0, 272);
    whole.fill(0, 260);
    const temp = doc.variables.find((v: { name: string }) => v.name === "temp");
    const pieces = [whole.subarray(240, 252), whole.subarray(256, 268)];
    assert.equal(temp.crc32, hex(crc32(pieces[1]!, crc32(pieces[0]!))));
    const strict = await runCli(["info", "--strict", path]);
    assert.equal(strict.code, 2);
    assert.match(strict.stderr, /--strict: data of 2 records .*never written/);
    assert.match(
      strict.stderr,
      /error: .*--strict: 1 departure\(s\) from the format specification/,
    );
  }
});

Deno.test("netcdf malformed: header cut short", () => {
  assertFormatError(corrupt((b) => b.subarray(0, 200)), 200, /header ends inside/);
});

Deno.test("netcdf malformed: unknown nc_type, and a CDF-5 type in CDF-1", () => {
  assertFormatError(corrupt((_, v) => v.setUint32(0x68, 13)), 0x68, /unknown nc_type 13/);
  assertFormatError(corrupt((_, v) => v.setUint32(0x68, 10)), 0x68, /unknown nc_type 10/);
});

Deno.test("netcdf malformed: two unlimited dimensions, and the unlimited one not first", () => {
  assertFormatError(corrupt((_, v) => v.setUint32(0x24, 0)), 0x24, /second unlimited dimension/);
  // temp(time, x) -> temp(x, time)
  assertFormatError(
    corrupt((_, v) => {
      v.setUint32(0x80, 1);
      v.setUint32(0x84, 0);
    }),
    0x84,
    /unlimited dimension at index 1/,
  );
});

Deno.test("netcdf malformed: dimension id out of range", () => {
  assertFormatError(
    corrupt((_, v) => v.setUint32(0x5c, 7)),
    0x5c,
    /dimension id 7, but there are 2/,
  );
});

Deno.test("netcdf lenient: non-NUL header padding is read (as libnetcdf), --strict reports it", async () => {
  // "x" + 3 NUL at 0x20.
  const bytes = corrupt((b) => void (b[0x22] = 0x41));
  const idx = open(bytes);
  assert.equal(idx.frameCount, 2);
  assert.deepEqual(idx.departures, ["byte 34: padding after dimension 1 name is 0x41, not NUL"]);
  using tmp = tempDir();
  const dir = tmp.path;
  {
    const path = `${dir}/pad.nc`;
    Deno.writeFileSync(path, bytes);
    const lenient = await runCli(["info", path]);
    assert.equal(lenient.code, 0, lenient.stderr);
    const strict = await runCli(["info", "--strict", path]);
    assert.equal(strict.code, 2);
    assert.match(strict.stderr, /pad\.nc: --strict: byte 34: padding after dimension 1 name/);
    assert.match(strict.stderr, /error: .*--strict: 1 departure\(s\)/);
    assert.equal(strict.stdout, "");
    const clean = `${dir}/clean.nc`;
    Deno.writeFileSync(clean, golden("demo1.nc"));
    assert.equal((await runCli(["info", "--strict", clean])).code, 0);
  }
});

Deno.test("netcdf lenient: an empty list with a wrong tag is read (as libnetcdf)", () => {
  // The attribute list of xc at 0x60 is ABSENT (0, 0): give it the variable tag, count 0.
  const bytes = golden("demo1.nc").slice();
  const v = new DataView(bytes.buffer);
  assert.equal(v.getUint32(0x60), 0);
  v.setUint32(0x60, 0x0b);
  const idx = open(bytes);
  assert.equal(idx.frameCount, 2);
  assert.match(idx.departures!.join("\n"), /byte 96: empty attribute list has tag 0xb/);
});

Deno.test("netcdf malformed: absurd list count", () => {
  assertFormatError(corrupt((_, v) => v.setUint32(0x0c, 0x7fffffff)), 0x0c, /cannot fit/);
});

Deno.test("netcdf malformed: overlapping data of two variables", () => {
  // flag's begin 252 -> 244 overlaps temp's slab [240, 252).
  assertFormatError(
    corrupt((_, v) => v.setUint32(0xd4, 244)),
    240,
    /'temp' \(12 bytes at byte 240\) does not fit/,
  );
});

Deno.test("netcdf: a wrong stored vsize is ignored with a warning (as netCDF-C)", () => {
  const idx = open(corrupt((_, v) => v.setUint32(0x6c, 99)));
  assert.equal(idx.frameCount, 2);
  assert.match(idx.warnings!.join(), /stored vsize 99, computed 24/);
});

Deno.test("netcdf: decodeHeader reads numrecs and variant of every golden", () => {
  for (const g of GOLDENS) {
    const h = decodeHeader(memorySource(golden(g.file), g.file, "netcdf"));
    assert.equal(h.variant, g.schema.variant);
    assert.equal(h.storedNumrecs, g.numrecs);
  }
});

// ---------------------------------------------------------------------------------------------
// Peers: ncdump reads our files (values), nccopy converts them to netCDF-4 and back
// ---------------------------------------------------------------------------------------------

async function run(cmd: string, args: string[]): Promise<string> {
  const out = await new Deno.Command(cmd, { args, stdout: "piped", stderr: "piped" }).output();
  const text = new TextDecoder().decode(out.stdout);
  if (out.code !== 0) {
    throw new Error(
      `${cmd} ${args.join(" ")} failed (${out.code}): ${new TextDecoder().decode(out.stderr)}`,
    );
  }
  return text;
}

/** The numbers ncdump prints for variable `name` in its data section. */
function dumpedValues(cdl: string, name: string): number[] {
  const m = new RegExp(`\\n ${name} =([^;]*);`).exec(cdl);
  assert.ok(m, `ncdump output has no data for ${name}`);
  return m[1]!.split(/[,\s]+/).filter((s) => s !== "").map(Number);
}

peerTest(
  "netcdf peer: ncdump reads the values of files we write (CDF-1, 2, 5)",
  () => commandMissing("ncdump"),
  async () => {
    using dir = tempDir();
    const frames = tableFrames(3, 4);
    for (const [variant, kind] of [[1, "classic"], [2, "64-bit offset"], [5, "cdf5"]] as const) {
      const path = `${dir.path}/t${variant}.nc`;
      await Deno.writeFile(path, writeAll(frames, { variant }).file.bytes());
      assert.equal((await run("ncdump", ["-k", path])).trim(), kind);
      const cdl = await run("ncdump", [path]);
      assert.match(cdl, /record = UNLIMITED ; \/\/ \(3 currently\)/);
      assert.match(cdl, /particles_position:chunk_name = "particles\/position" ;/);
      assert.deepEqual(
        dumpedValues(cdl, "particles_position"),
        frames.flatMap((f) => [...f.chunks[0]!.data as Float32Array]),
      );
      assert.deepEqual(
        dumpedValues(cdl, "particles_orientation"),
        frames.flatMap((f) => [...f.chunks[1]!.data as Float32Array]),
      );
    }
    const path = `${dir.path}/s.nc`;
    await Deno.writeFile(path, writeAll(shortFrames([[1, -2, 3], [4, 5, -32000]])).file.bytes());
    assert.deepEqual(dumpedValues(await run("ncdump", [path]), "data"), [1, -2, 3, 4, 5, -32000]);
  },
);

peerTest(
  "netcdf peer: nccopy to netCDF-4 and back gives our file byte for byte",
  () => commandMissing("nccopy"),
  async () => {
    using dir = tempDir();
    const frames = tableFrames(3, 4);
    for (const [variant, kind] of [[1, "classic"], [2, "64-bit-offset"], [5, "cdf5"]] as const) {
      const ours = writeAll(frames, { variant }).file.bytes().slice();
      const a = `${dir.path}/a${variant}.nc`,
        b = `${dir.path}/b${variant}.nc4`,
        c = `${dir.path}/c${variant}.nc`;
      await Deno.writeFile(a, ours);
      await run("nccopy", ["-k", "nc4", a, b]);
      assert.equal((await run("ncdump", ["-k", b])).trim(), "netCDF-4");
      await run("nccopy", ["-k", kind, b, c]);
      assert.deepEqual(await Deno.readFile(c), ours, `variant ${variant}`);
      // And our reader reads the library's copy.
      assert.equal(open(await Deno.readFile(c)).frameCount, 3);
    }
  },
);

// ---------------------------------------------------------------------------------------------
// Through the CLI: table, write, info, read
// ---------------------------------------------------------------------------------------------

Deno.test("netcdf: sciobench table --framing netcdf, write, info and read", async () => {
  using d = tempDir();
  const t = await runCli([
    "table",
    "--framing",
    "netcdf",
    "--size",
    "256KiB",
    "--n",
    "64",
    "--dir",
    d.path,
  ]);
  assert.equal(t.code, 0, t.stderr);
  const [head, row] = t.stdout.trim().split("\n");
  assert.ok(head!.startsWith("framing,"));
  assert.ok(row!.startsWith("netcdf,262144,64,"), row);
  const path = `${d.path}/w.nc`;
  const w = await runCli(["write", "--framing", "netcdf", "--n", "16", "--frames", "3", path]);
  assert.equal(w.code, 0, w.stderr);
  const idx = open(await Deno.readFile(path));
  assert.equal(idx.frameCount, 3);
  assert.deepEqual(idx.chunks(2).map((c) => [c.name, c.shape]), [["particles/position", [16, 3]], [
    "particles/orientation",
    [16, 4],
  ]]);
  const info = await runCli(["info", path]);
  assert.equal(info.code, 0, info.stderr);
  assert.match(info.stdout, /framing: netcdf/);
  assert.match(info.stdout, /kind: classic/);
  assert.match(info.stdout, /2,particles\/orientation,float32,16x4,/);
  const r = await runCli(["read", path]);
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /^framing,/);
});

Deno.test("netcdf info: one CRC-32 per variable over all its records, padding excluded", async () => {
  const path = new URL("./testdata/netcdf/demo2.nc", import.meta.url).pathname;
  const r = await runCli(["info", "--json", path]);
  assert.equal(r.code, 0, r.stderr);
  const doc = JSON.parse(r.stdout);
  const bytes = await Deno.readFile(path);
  const crc = (...parts: [number, number][]) => {
    let c = 0;
    for (const [a, b] of parts) c = crc32(bytes.subarray(a, b), c);
    return (c >>> 0).toString(16).padStart(8, "0");
  };
  // demo2.nc (CDF-2): fixed xc (3 doubles at 228), record vars temp (3 floats) and flag (a
  // short padded to 4 bytes), records of 16 bytes from 252.
  assert.deepEqual(doc.variables, [
    { name: "xc", dtype: "float64", bytes: 24, crc32: crc([228, 252]) },
    { name: "temp", dtype: "float32", bytes: 24, crc32: crc([252, 264], [268, 280]) },
    { name: "flag", dtype: "int16", bytes: 4, crc32: crc([264, 266], [280, 282]) },
  ]);
});
