/**
 * Appending records to netCDF classic files: byte for byte what netCDF-C does with
 * `nc_open(NC_WRITE)` + `nc_put_vara` at records numrecs.. (checked against the real library
 * through a small C program compiled at test time), on our own files and on ncgen's goldens,
 * the refusals, and the CLI's `write --append` with a failed append undone byte for byte.
 * @module
 */
import assert from "node:assert/strict";
import { FormatError, UsageError } from "../lib/core/errors.ts";
import { netcdf, openNetcdf } from "../lib/framings/netcdf/mod.ts";
import type {
  ChunkRef,
  DType,
  Frame,
  FrameIndex,
  TypedArray,
  WriteOp,
  WriterOptions,
} from "../lib/framings/types.ts";
import { DTYPE_SIZE } from "../lib/framings/types.ts";
import { copySwapped } from "../lib/bytes/byteswap.ts";
import { nativeBackend } from "../lib/backends/engine.ts";
import { MemoryFile, memorySource } from "../lib/io/memory.ts";
import { writeFrames } from "../lib/backends/write.ts";
import { TableFrames } from "../lib/workloads/table/mod.ts";
import { commandMissing, peerTest, runCli, tempDir } from "./_helpers.ts";

const TESTDATA = new URL("./testdata/netcdf/", import.meta.url).pathname;

function golden(file: string): Uint8Array {
  return Deno.readFileSync(TESTDATA + file);
}

function open(bytes: Uint8Array, path = "t.nc"): FrameIndex {
  return netcdf.openIndex(memorySource(bytes, path, "netcdf"));
}

/** Deterministic values of any element type (seeded per record and chunk). */
function dataFor(dtype: DType, n: number, seed: number): TypedArray {
  const v = (i: number) => seed * 31 + i * 7 + 3;
  const len = { length: n };
  switch (dtype) {
    case "int8":
      return Int8Array.from(len, (_, i) => (v(i) % 250) - 125);
    case "uint8":
      return Uint8Array.from(len, (_, i) => v(i) % 256);
    case "char":
      return Uint8Array.from(len, (_, i) => 97 + (v(i) % 26));
    case "int16":
      return Int16Array.from(len, (_, i) => ((v(i) * 13) % 60000) - 30000);
    case "uint16":
      return Uint16Array.from(len, (_, i) => (v(i) * 13) % 65536);
    case "int32":
      return Int32Array.from(len, (_, i) => ((v(i) * 100003) % 4e9) - 2e9);
    case "uint32":
      return Uint32Array.from(len, (_, i) => (v(i) * 100003) % 4e9);
    case "int64":
      return BigInt64Array.from(len, (_, i) => BigInt(v(i)) * -1234567891011n);
    case "uint64":
      return BigUint64Array.from(len, (_, i) => BigInt(v(i)) * 1234567891011n);
    case "float32":
      return Float32Array.from(len, (_, i) => (v(i) % 2 ? -1 : 1) * (v(i) + 0.25));
    case "float64":
      return Float64Array.from(len, (_, i) => v(i) / 3);
  }
}

/** `count` frames shaped like the records of `bytes` (chunks in the reader's order). */
function framesLike(bytes: Uint8Array, count: number, seed = 1): Frame[] {
  const refs = open(bytes).chunks(0);
  return Array.from({ length: count }, (_, r) => ({
    step: r,
    chunks: refs.map((c, k) => ({
      name: c.name,
      dtype: c.dtype,
      shape: c.shape,
      data: dataFor(c.dtype, c.shape.reduce((a, b) => a * b, 1), seed * 1000 + r * 10 + k),
    })),
  }));
}

function bytesOf(a: TypedArray): Uint8Array {
  return new Uint8Array(a.buffer, a.byteOffset, a.byteLength);
}

/** The stored bytes of a chunk, in native order. */
function stored(file: Uint8Array, ref: ChunkRef): Uint8Array {
  const out = file.slice(ref.offset, ref.offset + ref.bytes);
  copySwapped(out, out, DTYPE_SIZE[ref.dtype]);
  return out;
}

/** Frames like the table workload's (position N x 3, orientation N x 4), from record `first`. */
function tableFrames(count: number, n: number, first = 0): Frame[] {
  const t = new TableFrames(n, 7);
  return Array.from({ length: count }, (_, i) => {
    const f = t.frame(first + i);
    // TableFrames reuses its buffers: keep a copy of each frame.
    return { step: f.step, chunks: f.chunks.map((c) => ({ ...c, data: c.data.slice() })) };
  });
}

/** Table-shaped frames with values ncdump prints exactly (position 100 r + k + 0.5 ...). */
function exactFrames(count: number, n: number, first = 0): Frame[] {
  return Array.from({ length: count }, (_, i) => {
    const r = first + i;
    return {
      step: 10 * r,
      chunks: [
        {
          name: "particles/position",
          dtype: "float32",
          shape: [n, 3],
          data: Float32Array.from({ length: n * 3 }, (_, k) => r * 100 + k + 0.5),
        },
        {
          name: "particles/orientation",
          dtype: "float32",
          shape: [n, 4],
          data: Float32Array.from({ length: n * 4 }, (_, k) => -(r * 100 + k + 1) / 4),
        },
      ],
    };
  });
}

/** Frames of two record variables whose slabs need padding: short [3] and byte [1]. */
function paddedFrames(count: number, first = 0): Frame[] {
  return Array.from({ length: count }, (_, i) => ({
    step: first + i,
    chunks: [
      { name: "s", dtype: "int16", shape: [3], data: dataFor("int16", 3, first + i) },
      { name: "b", dtype: "int8", shape: [1], data: dataFor("int8", 1, first + i) },
    ],
  }));
}

/** Frames of one short record variable of 3 (records 6 bytes apart, no padding). */
function singleFrames(count: number, first = 0): Frame[] {
  return Array.from({ length: count }, (_, i) => ({
    step: first + i,
    chunks: [{ name: "data", dtype: "int16", shape: [3], data: dataFor("int16", 3, first + i) }],
  }));
}

/** A whole file from our fresh writer. */
function written(frames: readonly Frame[], options: WriterOptions = {}): Uint8Array {
  const w = netcdf.createWriter(options);
  const file = new MemoryFile();
  file.apply(w.begin());
  for (const f of frames) file.apply(w.writeFrame(f));
  file.apply(w.finish());
  return file.bytes().slice();
}

/** `bytes` with `frames` appended by our append writer; the ops of begin, each frame, finish. */
function appended(
  bytes: Uint8Array,
  frames: readonly Frame[],
  options: WriterOptions = {},
  path = "t.nc",
): { bytes: Uint8Array; ops: WriteOp[][] } {
  const w = netcdf.appendWriter!(memorySource(bytes, path, "netcdf"), options);
  const file = new MemoryFile();
  file.apply([{ kind: "write", offset: 0, data: bytes }]);
  const ops: WriteOp[][] = [];
  const apply = (o: WriteOp[]) => {
    ops.push(o.map((op) => op.kind === "write" ? { ...op, data: op.data.slice() } : op));
    file.apply(o);
  };
  apply(w.begin());
  for (const f of frames) apply(w.writeFrame(f));
  apply(w.finish());
  return { bytes: file.bytes().slice(), ops };
}

/** The golden files of ncgen/nccopy that have record variables. */
const RECORD_GOLDENS = [
  "demo1.nc",
  "demo2.nc",
  "demo5.nc",
  "types1.nc",
  "types2.nc",
  "types5.nc",
  "cdf5types.nc",
  "single1.nc",
  "single5.nc",
  "single3.nc",
  "records1.nc",
  "records5.nc",
  "frames1.nc",
  "frames2.nc",
];

// ---------------------------------------------------------------------------------------------
// Pure: against our own writer and ncgen's files
// ---------------------------------------------------------------------------------------------

Deno.test("netcdf append: K records + M appended are byte for byte one write of K + M", () => {
  const cases: [string, (n: number, first?: number) => Frame[]][] = [
    ["table", (n, first) => tableFrames(n, 5, first)],
    ["padded", paddedFrames],
    ["single", singleFrames],
  ];
  for (const [what, make] of cases) {
    for (const variant of [1, 2, 5]) {
      for (const opts of [{}, { numrecs: "frame" }, { fill: true }]) {
        const label = `${what} CDF-${variant} ${JSON.stringify(opts)}`;
        const whole = written(make(5), { variant });
        const part = written(make(2), { variant });
        const got = appended(part, make(3, 2), opts).bytes;
        assert.deepEqual(got, whole, label);
        assert.equal(open(got).frameCount, 5, label);
      }
    }
  }
});

Deno.test("netcdf append: ops: nothing at begin, one record per frame at recordBegin + numrecs x recsize, numrecs at finish", () => {
  const part = written(paddedFrames(2));
  const f = openNetcdf(memorySource(part, "t.nc", "netcdf"));
  assert.equal(f.layout.recsize, 12); // short[3] padded to 8, byte padded to 4
  const { ops } = appended(part, paddedFrames(2, 2));
  assert.deepEqual(ops[0], [], "begin() writes nothing (nc_open writes nothing)");
  for (const r of [0, 1]) {
    assert.equal(ops[1 + r]!.length, 1);
    const op = ops[1 + r]![0]!;
    assert.ok(op.kind === "write");
    assert.equal(op.offset, f.layout.recordBegin + (2 + r) * 12);
    // The short's padding and the byte's padding hold their default fill values.
    assert.deepEqual([...op.data.subarray(6, 8)], [0x80, 0x01]);
    assert.deepEqual([...op.data.subarray(9, 12)], [0x81, 0x81, 0x81]);
  }
  assert.deepEqual(ops[3], [{ kind: "write", offset: 4, data: new Uint8Array([0, 0, 0, 4]) }]);
  // No frame: numrecs unchanged, so not rewritten; the file is left as it was.
  const none = appended(part, []);
  assert.deepEqual(none.ops, [[], []]);
  assert.deepEqual(none.bytes, part);
});

Deno.test("netcdf append: option numrecs=frame rewrites numrecs after each record (CDF-5: 8 bytes)", () => {
  const part = written(tableFrames(1, 2), { variant: 5 });
  const { ops, bytes } = appended(part, tableFrames(2, 2, 1), { numrecs: "frame" });
  for (const r of [1, 2]) {
    assert.deepEqual(ops[r]!.at(-1), {
      kind: "write",
      offset: 4,
      data: new Uint8Array([0, 0, 0, 0, 0, 0, 0, 1 + r]),
    });
  }
  assert.deepEqual(ops[3], [], "numrecs already current at finish");
  assert.deepEqual(bytes, written(tableFrames(3, 2), { variant: 5 }));
});

Deno.test("netcdf append: option fill prefills each new record with fill values, then writes it", () => {
  const part = written(paddedFrames(1));
  const { ops, bytes } = appended(part, paddedFrames(1, 1), { fill: true });
  const [fill, data] = ops[1]!;
  assert.ok(fill?.kind === "write" && data?.kind === "write");
  assert.equal(fill.offset, data.offset);
  assert.deepEqual([...fill.data], [0x80, 1, 0x80, 1, 0x80, 1, 0x80, 1, 0x81, 0x81, 0x81, 0x81]);
  assert.deepEqual(bytes, written(paddedFrames(2)));
});

Deno.test("netcdf append: to ncgen's files, records go on after numrecs and the rest is untouched", () => {
  for (const file of RECORD_GOLDENS) {
    const before = golden(file);
    const f = openNetcdf(memorySource(before, file, "netcdf"));
    const frames = framesLike(before, 2);
    const { bytes } = appended(before, frames, {}, file);
    const k = f.numrecs;
    assert.equal(bytes.length, f.layout.recordBegin + (k + 2) * f.layout.recsize, file);
    const wide = f.header.variant === 5 ? 8 : 4;
    // Everything but numrecs is unchanged up to the old end of the records.
    assert.deepEqual(bytes.subarray(4 + wide, before.length), before.subarray(4 + wide), file);
    assert.equal(openNetcdf(memorySource(bytes, file, "netcdf")).numrecs, k + 2, file);
    const idx = open(bytes, file);
    assert.equal(idx.frameCount, k + 2, file);
    for (const r of [0, 1]) {
      idx.chunks(k + r).forEach((ref, c) => {
        assert.deepEqual(
          stored(bytes, ref),
          bytesOf(frames[r]!.chunks[c]!.data),
          `${file} ${ref.name}`,
        );
      });
    }
  }
});

Deno.test("netcdf append: chunks are matched to record variables by name, in any order", () => {
  const part = written(tableFrames(2, 3));
  const frames = tableFrames(2, 3, 2);
  const reversed = frames.map((f) => ({ ...f, chunks: [...f.chunks].reverse() }));
  assert.deepEqual(appended(part, reversed).bytes, appended(part, frames).bytes);
  // demo1.nc: record variables temp (float [3]) and flag (short, scalar); fixed xc is not a chunk.
  const demo = golden("demo1.nc");
  const [f] = framesLike(demo, 1);
  assert.deepEqual(f!.chunks.map((c) => [c.name, c.shape]), [["temp", [3]], ["flag", []]]);
});

Deno.test("netcdf append refuses frames that do not fit the file's record variables, naming them", () => {
  const part = written(tableFrames(2, 3));
  const good = tableFrames(1, 3, 2)[0]!;
  const [pos, ori] = good.chunks;
  const refuse = (chunks: Frame["chunks"], pattern: RegExp) => {
    const w = netcdf.appendWriter!(memorySource(part, "dir/t.nc", "netcdf"), {});
    w.begin();
    assert.throws(() => w.writeFrame({ step: 0, chunks }), (e: unknown) => {
      assert.ok(e instanceof UsageError, String(e));
      assert.match(e.message, /^netcdf: cannot append .*dir\/t\.nc/);
      assert.match(e.message, pattern);
      return true;
    });
  };
  refuse(
    [{ ...pos!, shape: [2, 3], data: new Float32Array(6) }, ori!],
    /chunk 'particles\/position' float32 \[2x3\] .*record variable 'particles\/position' \(variable 'particles_position'\) float32 \[3x3\]/,
  );
  refuse(
    [{ ...pos!, dtype: "float64", data: new Float64Array(9) }, ori!],
    /chunk 'particles\/position' float64 \[3x3\] .* float32 \[3x3\] holds another type or shape/,
  );
  refuse(
    [{ ...pos!, name: "velocity" }, ori!],
    /chunk 'velocity' .*no record variable for it .*'particles\/position'.*'particles\/orientation'/,
  );
  refuse([pos!], /a frame of 1 chunks \('particles\/position' float32 \[3x3\]\).* 2 variables/);
  refuse([pos!, ori!, pos!], /a frame of 3 chunks/);
  refuse([pos!, pos!], /gives chunk 'particles\/position' twice/);
});

Deno.test("netcdf append refuses files without record variables", () => {
  const cases: [string, Uint8Array, RegExp][] = [
    ["fixed2.nc", golden("fixed2.nc"), /only fixed-size variables \('grid', 'flags'\)/],
    ["empty1.nc", golden("empty1.nc"), /it has no variables/],
    ["zero.nc", written([]), /it has no variables/],
  ];
  for (const [name, bytes, pattern] of cases) {
    assert.throws(
      () => netcdf.appendWriter!(memorySource(bytes, name, "netcdf"), {}),
      (e: unknown) => {
        assert.ok(e instanceof UsageError, String(e));
        assert.match(e.message, new RegExp(`^netcdf: cannot append records to ${name}: `));
        assert.match(e.message, pattern);
        assert.match(e.message, /no record dimension to grow/);
        return true;
      },
    );
  }
});

Deno.test("netcdf append: --endian little, another variant or record dimension, new-file options are usage errors", () => {
  const part = written(tableFrames(1, 2)); // CDF-1, record dimension 'record'
  const src = () => memorySource(part, "t.nc", "netcdf");
  const refuse = (options: WriterOptions, pattern: RegExp) =>
    assert.throws(() => netcdf.appendWriter!(src(), options), (e: unknown) => {
      assert.ok(e instanceof UsageError, String(e));
      assert.match(e.message, pattern);
      return true;
    });
  refuse(
    { endian: "little" },
    /^netcdf: cannot append little-endian data to t\.nc, a big-endian file$/,
  );
  refuse({ variant: 2 }, /cannot append to t\.nc as CDF-2: it is a CDF-1 \(classic\) file/);
  refuse(
    { recordDim: "time" },
    /cannot append along 'time' to t\.nc: its record dimension is 'record'/,
  );
  refuse({ chunks: [] }, /define a new file/);
  refuse({ numrecs: "sometimes" }, /numrecs must be 'close' or 'frame'/);
  for (const ok of [{ endian: "big" }, { endian: "native" }, { variant: 1, recordDim: "record" }]) {
    assert.deepEqual(
      appended(part, tableFrames(1, 2, 1), ok as WriterOptions).bytes,
      written(tableFrames(2, 2)),
    );
  }
});

Deno.test("netcdf append: streaming numrecs is counted from the file size and kept; a partial record is overwritten", () => {
  for (const variant of [1, 5]) {
    const wide = variant === 5 ? 8 : 4;
    const stream = (b: Uint8Array) => {
      const s = b.slice();
      s.fill(0xff, 4, 4 + wide);
      return s;
    };
    const part = stream(written(tableFrames(3, 2), { variant }));
    const want = stream(written(tableFrames(5, 2), { variant }));
    const { bytes, ops } = appended(part, tableFrames(2, 2, 3), { numrecs: "frame" });
    assert.deepEqual(bytes, want, `CDF-${variant}`);
    assert.ok(ops.flat().every((o) => o.kind !== "write" || o.offset >= part.length));
    // A partial last record (a writer cut short) is overwritten by the first appended record.
    const cut = part.slice(0, part.length - 5);
    assert.equal(open(cut).frameCount, 2);
    assert.deepEqual(appended(cut, tableFrames(3, 2, 2)).bytes, want, `CDF-${variant} cut`);
  }
});

Deno.test("netcdf append: a malformed file is a FormatError naming it", () => {
  const bytes = golden("demo1.nc");
  assert.throws(
    () => netcdf.appendWriter!(memorySource(bytes.subarray(0, 260), "cut.nc", "netcdf"), {}),
    (e: unknown) =>
      e instanceof FormatError &&
      /^netcdf: cut\.nc at byte 260: cannot append: .*never written/.test(e.message),
  );
  const bad = bytes.slice();
  bad[8 + 3] = 0x0b; // dimension list tag
  assert.throws(
    () => netcdf.appendWriter!(memorySource(bad, "tag.nc", "netcdf"), {}),
    (e: unknown) =>
      e instanceof FormatError && /^netcdf: tag\.nc at byte 8: bad tag/.test(e.message),
  );
});

// ---------------------------------------------------------------------------------------------
// Peers: the real netCDF-C library appends, ncdump reads
// ---------------------------------------------------------------------------------------------

/**
 * Appends RECORDS records to FILE with netCDF-C: nc_open(NC_WRITE [| NC_SHARE]), nc_set_fill,
 * then nc_put_vara of one record of every record variable (in variable order) at records
 * numrecs.., taking the values (native order) from DATA, then nc_close.
 */
const NCAPPEND_C = `#include <netcdf.h>
#include <stdio.h>
#include <stdlib.h>

#define CHECK(call) do { int s_ = (call); if (s_ != NC_NOERR) { \\
  fprintf(stderr, "%s: %s\\n", #call, nc_strerror(s_)); return 1; } } while (0)

int main(int argc, char **argv) {
  if (argc != 6) { fprintf(stderr, "usage: ncappend FILE DATA RECORDS FILL SHARE\\n"); return 2; }
  long m = atol(argv[3]);
  FILE *data = fopen(argv[2], "rb");
  if (!data) { perror(argv[2]); return 1; }
  int ncid, old, nvars, unlim;
  CHECK(nc_open(argv[1], NC_WRITE | (atoi(argv[5]) ? NC_SHARE : 0), &ncid));
  CHECK(nc_set_fill(ncid, atoi(argv[4]) ? NC_FILL : NC_NOFILL, &old));
  CHECK(nc_inq_nvars(ncid, &nvars));
  CHECK(nc_inq_unlimdim(ncid, &unlim));
  size_t numrecs;
  CHECK(nc_inq_dimlen(ncid, unlim, &numrecs));
  for (long r = 0; r < m; r++) {
    for (int v = 0; v < nvars; v++) {
      int ndims, dimids[NC_MAX_VAR_DIMS];
      nc_type t;
      size_t start[NC_MAX_VAR_DIMS] = {0}, count[NC_MAX_VAR_DIMS], size, n = 1;
      CHECK(nc_inq_var(ncid, v, NULL, &t, &ndims, dimids, NULL));
      if (ndims == 0 || dimids[0] != unlim) continue;
      CHECK(nc_inq_type(ncid, t, NULL, &size));
      start[0] = numrecs + r;
      count[0] = 1;
      for (int d = 1; d < ndims; d++) {
        CHECK(nc_inq_dimlen(ncid, dimids[d], &count[d]));
        n *= count[d];
      }
      char *buf = malloc(n * size);
      if (fread(buf, size, n, data) != n) { fprintf(stderr, "data file too short\\n"); return 1; }
      CHECK(nc_put_vara(ncid, v, start, count, buf));
      free(buf);
    }
  }
  CHECK(nc_close(ncid));
  return 0;
}
`;

function libnetcdfDevMissing(): string | null {
  return commandMissing("gcc") ?? commandMissing("nc-config") ??
    commandMissing("/usr/include/netcdf.h");
}

async function run(cmd: string, args: string[]): Promise<string> {
  const out = await new Deno.Command(cmd, { args, stdout: "piped", stderr: "piped" }).output();
  const dec = new TextDecoder();
  if (!out.success) {
    throw new Error(`${cmd} ${args.join(" ")} failed (${out.code}): ${dec.decode(out.stderr)}`);
  }
  return dec.decode(out.stdout);
}

/** Compiles the C append program into `dir`; returns its path. */
async function buildNcappend(dir: string): Promise<string> {
  await Deno.writeTextFile(`${dir}/ncappend.c`, NCAPPEND_C);
  const flags = (await run("nc-config", ["--cflags", "--libs"])).split(/\s+/).filter((s) => s);
  await run("gcc", ["-O1", "-o", `${dir}/ncappend`, `${dir}/ncappend.c`, ...flags]);
  return `${dir}/ncappend`;
}

/** Appends `frames` to the file at `path` with netCDF-C (chunks in variable order). */
async function libAppend(
  exe: string,
  path: string,
  frames: readonly Frame[],
  mode: { fill: boolean; share: boolean },
): Promise<void> {
  const parts = frames.flatMap((f) => f.chunks.map((c) => bytesOf(c.data)));
  const data = new Uint8Array(parts.reduce((a, p) => a + p.length, 0));
  let at = 0;
  for (const p of parts) {
    data.set(p, at);
    at += p.length;
  }
  await Deno.writeFile(`${path}.data`, data);
  await run(exe, [
    path,
    `${path}.data`,
    String(frames.length),
    mode.fill ? "1" : "0",
    mode.share ? "1" : "0",
  ]);
}

peerTest(
  "netcdf append peer: libnetcdf appending records (fill on) gives our append's bytes",
  libnetcdfDevMissing,
  async () => {
    using dir = tempDir();
    const exe = await buildNcappend(dir.path);
    const ours: [string, Uint8Array][] = [
      ["table1.nc", written(tableFrames(2, 4))],
      ["table2.nc", written(tableFrames(2, 4), { variant: 2 })],
      ["table5.nc", written(tableFrames(2, 4), { variant: 5 })],
      ["padded1.nc", written(paddedFrames(3))],
      ["padded5.nc", written(paddedFrames(3), { variant: 5 })],
      ["single1.nc", written(singleFrames(1))],
    ];
    const files: [string, Uint8Array][] = [
      ...RECORD_GOLDENS.map((g): [string, Uint8Array] => [`golden-${g}`, golden(g)]),
      ...ours.map(([n, b]): [string, Uint8Array] => [`ours-${n}`, b]),
    ];
    for (const [name, before] of files) {
      const frames = framesLike(before, 3, 2);
      const path = `${dir.path}/${name}`;
      await Deno.writeFile(path, before);
      await libAppend(exe, path, frames, { fill: true, share: false });
      const lib = await Deno.readFile(path);
      assert.ok(lib.length > before.length, `${name}: the library appended`);
      assert.deepEqual(appended(before, frames, {}, name).bytes, lib, name);
      assert.deepEqual(appended(before, frames, { numrecs: "frame", fill: true }, name).bytes, lib);
    }
  },
);

peerTest(
  "netcdf append peer: with NC_NOFILL and NC_SHARE too, where no slab needs padding",
  libnetcdfDevMissing,
  async () => {
    using dir = tempDir();
    const exe = await buildNcappend(dir.path);
    // Without fill the library leaves padding as zero bytes, so only files without padding
    // (float slabs, or a single record variable) can match our writer, which pads with fill.
    const files: [string, Uint8Array][] = [
      ["frames1.nc", golden("frames1.nc")],
      ["records5.nc", golden("records5.nc")],
      ["table2.nc", written(tableFrames(2, 4), { variant: 2 })],
    ];
    for (const [name, before] of files) {
      for (const share of [false, true]) {
        const frames = framesLike(before, 2, 3);
        const path = `${dir.path}/${name}`;
        await Deno.writeFile(path, before);
        await libAppend(exe, path, frames, { fill: false, share });
        assert.deepEqual(
          appended(before, frames, share ? { numrecs: "frame" } : {}, name).bytes,
          await Deno.readFile(path),
          `${name} share=${share}`,
        );
      }
    }
  },
);

/** The numbers ncdump prints for variable `name` in its data section. */
function dumpedValues(cdl: string, name: string): number[] {
  const m = new RegExp(`\\n ${name} =([^;]*);`).exec(cdl);
  assert.ok(m, `ncdump output has no data for ${name}`);
  return m[1]!.split(/[,\s]+/).filter((s) => s !== "").map(Number);
}

peerTest(
  "netcdf append peer: ncdump reads the appended files with every value",
  () => commandMissing("ncdump"),
  async () => {
    using dir = tempDir();
    // Our file (CDF-1 and CDF-5) and ncgen's frames1.nc, each with 3 table frames appended.
    for (
      const [name, before, k] of [
        ["ours1.nc", written(exactFrames(2, 5)), 2],
        ["ours5.nc", written(exactFrames(2, 5), { variant: 5 }), 2],
        ["frames1.nc", golden("frames1.nc"), 2],
      ] as const
    ) {
      const more = exactFrames(3, 5, k);
      const path = `${dir.path}/${name}`;
      await Deno.writeFile(path, appended(before, more).bytes);
      const cdl = await run("ncdump", [path]);
      assert.match(cdl, /record = UNLIMITED ; \/\/ \(5 currently\)/, name);
      const idx = open(before);
      for (
        const [c, variable] of [[0, "particles_position"], [1, "particles_orientation"]] as const
      ) {
        const old = Array.from({ length: k }, (_, r) => [
          ...new Float32Array(stored(before, idx.chunks(r)[c]!).buffer),
        ]).flat();
        const added = more.flatMap((f) => [...(f.chunks[c]!.data as Float32Array)]);
        assert.deepEqual(dumpedValues(cdl, variable), [...old, ...added], `${name} ${variable}`);
      }
    }
    // demo1.nc: temp (float [3]) and flag (short, padded with its fill) after two more records.
    const demo = golden("demo1.nc");
    const path = `${dir.path}/demo1.nc`;
    const frames: Frame[] = [0, 1].map((r) => ({
      step: r,
      chunks: [
        { name: "temp", dtype: "float32", shape: [3], data: Float32Array.of(7 + r, 8, 9.5) },
        { name: "flag", dtype: "int16", shape: [], data: Int16Array.of(-300 - r) },
      ],
    }));
    await Deno.writeFile(path, appended(demo, frames).bytes);
    const cdl = await run("ncdump", [path]);
    assert.match(cdl, /time = UNLIMITED ; \/\/ \(4 currently\)/);
    assert.deepEqual(dumpedValues(cdl, "xc"), [0.5, 1.5, 2.5]);
    assert.deepEqual(dumpedValues(cdl, "temp"), [1, 2, 3, 4, 5, 6, 7, 8, 9.5, 8, 8, 9.5]);
    assert.deepEqual(dumpedValues(cdl, "flag"), [7, 8, -300, -301]);
  },
);

// ---------------------------------------------------------------------------------------------
// CLI and engine: write --append, refusals, a failed append undone
// ---------------------------------------------------------------------------------------------

Deno.test("netcdf write --append: same bytes as one write; read --verify checks every frame", async () => {
  using d = tempDir();
  const w = (path: string, frames: number, more: string[]) =>
    runCli(["write", "--n", "16", "--frames", String(frames), ...more, path]);
  for (
    const [variant, appendOptions] of [
      ["1", []],
      ["5", ["--option", "numrecs=frame", "--option", "fill=true", "--endian", "big"]],
    ] as const
  ) {
    const whole = `${d.path}/whole${variant}.nc`;
    const parts = `${d.path}/parts${variant}.nc`;
    const create = ["--framing", "netcdf", "--option", `variant=${variant}`];
    assert.equal((await w(whole, 5, create)).code, 0);
    assert.equal((await w(parts, 3, create)).code, 0);
    const r = await w(parts, 2, ["--append", "--format", "json", ...appendOptions]);
    assert.equal(r.code, 0, r.stderr);
    const row = JSON.parse(r.stdout).rows[0];
    assert.equal(row.framing, "netcdf");
    assert.equal(row.first_frame, 3);
    assert.deepEqual(await Deno.readFile(parts), await Deno.readFile(whole), `variant ${variant}`);
    const v = await runCli(["read", "--verify", "--format", "json", parts]);
    assert.equal(v.code, 0, v.stderr);
    const read = JSON.parse(v.stdout).rows[0];
    assert.equal(read.frames, 5);
    assert.equal(read.read_frames, 5);
    assert.equal(read.verified, true);
  }
});

Deno.test("netcdf write --append refuses what does not fit (exit 2) and leaves the file alone", async () => {
  using d = tempDir();
  const path = `${d.path}/t.nc`;
  assert.equal(
    (await runCli(["write", "--framing", "netcdf", "--n", "16", "--frames", "2", path])).code,
    0,
  );
  const fixed = `${d.path}/fixed2.nc`;
  await Deno.writeFile(fixed, golden("fixed2.nc"));
  const cases: [string, string[], RegExp][] = [
    [
      path,
      ["--n", "8"],
      // The write command compares the layouts before the framing sees the append.
      /t\.nc holds particles\/position as 16x3 float32 in frame 0; appending 8x3 float32 would mix layouts/,
    ],
    [
      path,
      ["--n", "16", "--endian", "little"],
      /cannot append little-endian data to .*t\.nc, a big-endian file/,
    ],
    [path, ["--n", "16", "--option", "variant=2"], /as CDF-2: it is a CDF-1 \(classic\) file/],
    [
      fixed,
      ["--n", "16"],
      /cannot append records to .*fixed2\.nc: it has only fixed-size variables/,
    ],
  ];
  for (const [file, args, pattern] of cases) {
    const before = await Deno.readFile(file);
    const r = await runCli(["write", "--append", "--frames", "2", ...args, file]);
    assert.equal(r.code, 2, `${args.join(" ")}: ${r.stderr}`);
    assert.match(r.stderr, /^sciobench: error: /);
    assert.match(r.stderr, pattern);
    assert.deepEqual(await Deno.readFile(file), before, args.join(" "));
  }
});

Deno.test("netcdf: a failed append puts the file back byte for byte (numrecs rewrites undone)", async () => {
  using d = tempDir();
  const backend = nativeBackend(netcdf);
  const frames = new TableFrames(8, 1);
  const bad: Frame = {
    step: 0,
    chunks: [
      { name: "particles/position", dtype: "float32", shape: [8, 3], data: new Float32Array(5) },
      frames.frame(0).chunks[1]!,
    ],
  };
  const streaming = (b: Uint8Array) => {
    const s = b.slice(0, b.length - 7); // numrecs all ones, and a partial last record
    s.fill(0xff, 4, 8);
    return s;
  };
  for (
    const [name, prepare] of [
      ["plain", (b: Uint8Array) => b],
      ["streaming", streaming],
    ] as const
  ) {
    const path = `${d.path}/${name}.nc`;
    await writeFrames(backend, path, { create: "new" }, 3, (i) => frames.frame(i));
    await Deno.writeFile(path, prepare(await Deno.readFile(path)));
    const before = await Deno.readFile(path);
    await assert.rejects(
      () =>
        writeFrames(
          backend,
          path,
          { create: "append", backendOptions: { numrecs: "frame", fill: true } },
          4,
          (i) => (i < 2 ? frames.frame(3 + i) : bad),
        ),
      RangeError,
    );
    assert.deepEqual(await Deno.readFile(path), before, `${name}: restored`);
  }
});
