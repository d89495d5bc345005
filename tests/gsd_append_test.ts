/**
 * Tests of appending to GSD files: the same bytes python3-gsd 2.7 writes when it appends
 * (`gsd.fl.open(path, 'ab')`, and `gsd.hoomd.open(path, 'rb+')` since gsd.hoomd 2.7 refuses
 * 'ab'), generated at test time from /usr/bin/python3; the write ops and fsyncs strace shows;
 * `sciobench write --append`; the file put back byte for byte when an append fails; refusals.
 * @module
 */
import assert from "node:assert/strict";
import { Buffer } from "node:buffer";
import { crc32 } from "node:zlib";
import { FormatError, UsageError } from "../lib/core/errors.ts";
import { gsd, openGsdIndex } from "../lib/framings/gsd/mod.ts";
import type {
  Chunk,
  DType,
  Frame,
  TypedArray,
  WriteOp,
  WriterOptions,
} from "../lib/framings/types.ts";
import { DTYPES } from "../lib/framings/types.ts";
import { nativeBackend } from "../lib/backends/engine.ts";
import { MemoryFile, memorySource } from "../lib/io/memory.ts";
import { writeFrames } from "../lib/backends/write.ts";
import { TableFrames } from "../lib/workloads/table/mod.ts";
import { commandMissing, peerTest, runCli, tempDir } from "./_helpers.ts";

const PYTHON = "/usr/bin/python3";

/** Our writer's fresh file of `frames` (the base some pure tests append to). */
function written(frames: readonly Frame[], options: WriterOptions = {}): Uint8Array {
  const w = gsd.createWriter(options);
  const file = new MemoryFile();
  file.apply(w.begin());
  for (const f of frames) file.apply(w.writeFrame(f));
  file.apply(w.finish());
  return file.bytes().slice();
}

/** Appends `frames` to a copy of `base` in memory; returns the file and a trace of the ops. */
function appended(base: Uint8Array, frames: readonly Frame[], options: WriterOptions = {}) {
  const w = gsd.appendWriter!(memorySource(base.slice(), "base.gsd"), options);
  const file = new MemoryFile();
  file.apply([{ kind: "write", offset: 0, data: base }]);
  const trace: string[] = [];
  const apply = (ops: WriteOp[]) => {
    for (const o of ops) {
      trace.push(
        o.kind === "sync"
          ? "fsync"
          : o.kind === "copy"
          ? `copy ${o.length}@${o.offset}`
          : `${o.data.length}@${o.offset}`,
      );
    }
    file.apply(ops);
  };
  apply(w.begin());
  for (const f of frames) apply(w.writeFrame(f));
  apply(w.finish());
  return { bytes: file.bytes().slice(), trace };
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

/** The frames of the strace runs: N = 4 positions, `arange(12)` with [0][0] = i. */
function straceBase(): Uint8Array {
  const frames = [0, 1, 2].map((i): Frame => {
    const p = Float32Array.from({ length: 12 }, (_, k) => k);
    p[0] = i;
    return {
      step: 10 * i,
      chunks: [{ name: "particles/position", dtype: "float32", shape: [4, 3], data: p }],
    };
  });
  return written(frames, { application: "gsd.hoomd 2.7.0" });
}

Deno.test("gsd append: writes and fsyncs where gsd 2.7 does (strace of python3-gsd 'ab')", () => {
  // python3-gsd 2.7 under strace -e pwrite64,fsync: gsd.hoomd writes 3 frames of N = 4 positions
  // (5540 bytes); gsd.fl.open(path, 'ab') writes nothing on open; then per frame the chunks
  // configuration/step (u64), a name (int32 x 2), particles/position (float32 2 x 3).
  const base = straceBase();
  assert.equal(base.length, 5540);
  const frames = Array.from({ length: 50 }, (_, i): Frame => ({
    step: 0,
    chunks: [
      {
        name: "configuration/step",
        dtype: "uint64",
        shape: [1],
        data: new BigUint64Array([BigInt(30 + i)]),
      },
      {
        name: "x".repeat(40) + String(Math.floor(i / 10)),
        dtype: "int32",
        shape: [2],
        data: new Int32Array([1, 2]),
      },
      {
        name: "particles/position",
        dtype: "float32",
        shape: [2, 3],
        data: new Float32Array(6),
      },
    ],
  }));
  const { bytes, trace } = appended(base, frames, { hoomd: false });
  // gsd 2.7 writes a frame's buffered chunks with one pwrite (40 bytes); we emit one op per
  // chunk, back to back (8 + 8 + 24), which the I/O layer merges.
  assert.deepEqual(trace.slice(0, 7), [
    "974@4402",
    "fsync",
    "8@5540",
    "8@5548",
    "24@5556",
    "96@448",
    "8@5580",
  ]);
  // A new name at frames 10, 20, 30, 40: the name list tail rewritten in place, then fsync.
  assert.deepEqual(trace.filter((t, k) => trace[k + 1] === "fsync" && t !== "4096@11276"), [
    "974@4402",
    "932@4444",
    "890@4486",
    "848@4528",
    "806@4570",
    "256@0",
  ]);
  // The 41st appended frame outgrows the 128-slot index: the old block and zero slots at the end of the file
  // (lseek SEEK_END = 7180), fsync, the header, fsync, then the frame's entries in the new block.
  const grow = trace.indexOf("4096@7180");
  assert.deepEqual(trace.slice(grow - 3, grow + 10), [
    "8@7140",
    "8@7148",
    "24@7156",
    "4096@7180",
    "4096@11276",
    "fsync",
    "256@0",
    "fsync",
    "96@11212",
    "8@15372",
    "8@15380",
    "24@15388",
    "96@11308",
  ]);
  assert.equal(trace.filter((t) => t === "fsync").length, 7);
  // The rewritten header is the one read, with only the index location and size changed.
  const changed = [...bytes.subarray(0, 256)].flatMap((b, k) => b === base[k] ? [] : [k]);
  assert.deepEqual(changed, [8, 9, 16, 17]);
  const index = openGsdIndex(memorySource(bytes));
  assert.equal(index.frameCount, 53);
  assert.equal(index.header.indexLocation, 7180);
  assert.equal(index.header.indexSlots, 256);
  assert.equal(index.header.application, "gsd.hoomd 2.7.0");
  assert.equal(index.find(52, "x".repeat(40) + "4")?.offset, 15372 + 8 * 40 + 8);
});

Deno.test("gsd append: frames continue a file as if it had been written in one go", () => {
  // Same writer state after reopening (end of file, index, names, frame 0 as hoomd reference),
  // so K frames then M appended are the bytes of K + M frames written at once, through index
  // growth (3 entries a frame) and a new chunk name in the appended frames.
  const t = new TableFrames(4, 7);
  const frame = (i: number): Frame => {
    const f = t.frame(i);
    const chunks = f.chunks.map((c) => ({ ...c, data: c.data.slice() }));
    if (i >= 40) {
      chunks.push({ name: "log/late", dtype: "float64", shape: [1], data: new Float64Array([i]) });
    }
    return { step: f.step, chunks };
  };
  const all = Array.from({ length: 50 }, (_, i) => frame(i));
  for (const k of [0, 1, 2, 30, 42, 49]) {
    const base = written(all.slice(0, k));
    const { bytes, trace } = appended(base, all.slice(k));
    assertSameBytes(bytes, written(all), `${k} frames + ${50 - k} appended`);
    assert.ok(!trace.includes("5376@0"), "no new file is created");
  }
  const raw = {
    ...all[3]!,
    chunks: [{ name: "free", dtype: "int16" as const, shape: [2, 2], data: new Int16Array(4) }],
  };
  const fl = written([all[0]!, raw], { hoomd: false, schema: "none", schemaVersion: "0.1" });
  assertSameBytes(
    appended(fl, [all[1]!, raw]).bytes,
    written([all[0]!, raw, all[1]!, raw], { hoomd: false, schema: "none", schemaVersion: "0.1" }),
    "schema none: every chunk as given (hoomd off by default)",
  );
});

Deno.test("gsd append: a file with 0 frames takes its first frame as the hoomd reference", () => {
  const t = new TableFrames(8, 1);
  const frames = [0, 1, 2].map((i) => {
    const f = t.frame(i);
    return { step: f.step, chunks: f.chunks.map((c) => ({ ...c, data: c.data.slice() })) };
  });
  const empty = written([]);
  assert.equal(empty.length, 5376);
  const { bytes, trace } = appended(empty, frames);
  assert.equal(trace[0], "1024@4352", "the first op is frame 0's names, not a new header");
  assertSameBytes(bytes, written(frames), "0 + 3 frames");
});

Deno.test("gsd append: refuses what gsd 2.7 or this writer cannot append", () => {
  const t = new TableFrames(2, 1);
  const hoomd = written([t.frame(0)]);
  const src = (b: Uint8Array) => memorySource(b, "t.gsd");
  const refuses = (b: Uint8Array, options: WriterOptions, pattern: RegExp) =>
    assert.throws(
      () => gsd.appendWriter!(src(b), options),
      (e) => e instanceof UsageError && pattern.test(e.message),
    );
  refuses(
    hoomd,
    { endian: "big" },
    /^gsd: cannot append big-endian data to t\.gsd, a little-endian file$/,
  );
  // little and native are the file's order.
  assert.deepEqual(gsd.appendWriter!(src(hoomd), { endian: "little" }).begin(), []);
  assert.deepEqual(gsd.appendWriter!(src(hoomd), { endian: "native" }).begin(), []);
  refuses(hoomd, { schema: "other" }, /with schema 'other' to t\.gsd, whose schema is 'hoomd'/);
  refuses(hoomd, { schemaVersion: "1.3" }, /schemaVersion '1\.3' .* is '1\.4'/);
  refuses(hoomd, { application: "x" }, /application 'x' .* is 'sciobench /);
  refuses(hoomd, { hoomd: "yes" }, /option hoomd must be true or false/);
  // The file's own values are accepted.
  gsd.appendWriter!(src(hoomd), { schema: "hoomd", schemaVersion: "1.4" });
  const none = written([t.frame(0)], { schema: "none", schemaVersion: "0.1" });
  refuses(none, { hoomd: true }, /schema 'none' 0\.1, not hoomd 1\.x.*use option hoomd=false/);
  const old = written([], { schemaVersion: "2.0" });
  refuses(old, { hoomd: true }, /schema 'hoomd' 2\.0, not hoomd 1\.x/);
  // File layer 1.0 (64-byte name slots): gsd 2.7 appends in that layout; this writer does not.
  const v1 = written([]);
  new DataView(v1.buffer).setUint32(44, 0x10000, true);
  refuses(
    v1,
    {},
    /^gsd: cannot append to t\.gsd: it is GSD file layer 1\.0 .*file layer 2\.x only$/,
  );
  // A malformed file is a FormatError, as on reading.
  const bad = hoomd.slice();
  bad[256 + 31] = 1;
  assert.throws(
    () => gsd.appendWriter!(src(bad)),
    (e) => e instanceof FormatError && e.offset === 256 + 31,
  );
});

Deno.test("gsd append: a failed append puts the file back byte for byte", async () => {
  // In-place writes of an append: index entries, the name list tail, the header (index growth);
  // the engine's undo log restores them, and the relocated index past the old end is cut off.
  using d = tempDir();
  const backend = nativeBackend(gsd);
  const path = `${d.path}/t.gsd`;
  const frames = new TableFrames(8, 1);
  await writeFrames(backend, path, { create: "new" }, 40, (i) => frames.frame(i));
  const before = await Deno.readFile(path);
  const bad: Chunk = { name: "bad", dtype: "float32", shape: [4], data: new Float32Array(3) };
  let header: Uint8Array | undefined;
  await assert.rejects(
    () =>
      writeFrames(backend, path, { create: "append" }, 6, (i) => {
        const f = frames.frame(40 + i);
        if (i === 0) {
          const extra: Chunk = {
            name: "log/new",
            dtype: "int32",
            shape: [1],
            data: new Int32Array([i]),
          };
          return { step: f.step, chunks: [...f.chunks, extra] };
        }
        // After frame 43 the index has moved: the header was rewritten in place.
        if (i === 5) header = Deno.readFileSync(path).subarray(0, 256);
        return i < 5 ? f : { step: f.step, chunks: [...f.chunks, bad] };
      }),
    RangeError,
  );
  assert.ok(header !== undefined && Buffer.compare(header, before.subarray(0, 256)) !== 0);
  assertSameBytes(await Deno.readFile(path), before, "restored");
});

// ------------------------------------------------------------------------------------------------
// Against python3-gsd 2.7 through /usr/bin/python3
// ------------------------------------------------------------------------------------------------

function pythonGsdMissing(): string | null {
  if (commandMissing(PYTHON) !== null) return `${PYTHON} is not installed`;
  const r = new Deno.Command(PYTHON, {
    args: ["-c", "import gsd, gsd.fl, gsd.hoomd"],
    stderr: "null",
    stdout: "null",
  }).outputSync();
  return r.success
    ? null
    : "python3-gsd is not installed for /usr/bin/python3 (apt-get install python3-gsd)";
}

async function python(script: string, args: string[]): Promise<string> {
  const out = await new Deno.Command(PYTHON, {
    args: ["-c", script, ...args],
    stdout: "piped",
    stderr: "piped",
  }).output();
  if (!out.success) throw new Error(`python3 failed: ${new TextDecoder().decode(out.stderr)}`);
  return new TextDecoder().decode(out.stdout);
}

/**
 * Python: base files and their appended copies. hoomd: 22 frames by gsd.hoomd 'wb', 12 more by
 * gsd.hoomd 'rb+' (a new log name; the index outgrows 128 slots). empty: 0 frames + 3. fl and
 * fl21 (the same file marked file layer 2.1): 2 frames by gsd.fl 'wb', 5 more by gsd.fl 'ab',
 * each with 30 long new names of all ten types, some with N = 0: the name list and the index
 * both move.
 */
const PY_APPEND = `
import shutil, sys, numpy as np, gsd.hoomd, gsd.fl
d = sys.argv[1]
def snap(i, extra):
    n = 5 if i % 7 == 3 else 3
    s = gsd.hoomd.Snapshot(); s.particles.N = n
    s.configuration.step = 0 if i % 5 == 2 else 10 * i
    s.particles.position = np.arange(3 * n, dtype=np.float32).reshape(n, 3) * 0.5 + i % 3
    ori = np.zeros((n, 4), dtype=np.float32); ori[:, 0] = 1; ori[0, 1] = 1 if i % 4 == 1 else 0
    s.particles.orientation = ori
    s.particles.velocity = np.full((n, 3), i % 2, dtype=np.float32)
    s.log["energy"] = np.array([1.5 * i])
    if extra:
        s.log["pressure"] = np.array([i], dtype=np.int32)
    return s
def hoomd(name, k, m):
    with gsd.hoomd.open(d + "/" + name + "_base.gsd", "wb") as t:
        for i in range(k):
            t.append(snap(i, False))
    shutil.copyfile(d + "/" + name + "_base.gsd", d + "/" + name + "_app.gsd")
    # gsd.hoomd 2.7 refuses 'ab' ("Append mode not yet supported"): 'rb+' is its append.
    with gsd.hoomd.open(d + "/" + name + "_app.gsd", "rb+") as t:
        for i in range(k, k + m):
            t.append(snap(i, True))
hoomd("hoomd", 22, 12)
hoomd("empty", 0, 3)
types = [np.uint8, np.uint16, np.uint32, np.uint64, np.int8, np.int16, np.int32, np.int64, np.float32, np.float64]
with gsd.fl.open(d + "/fl_base.gsd", "wb", application="append-test", schema="none", schema_version=(0, 1)) as f:
    f.write_chunk(name="b", data=np.array([1.5, 2.5, 3.5], dtype=np.float32))
    f.write_chunk(name="a", data=np.array([[1, 2], [3, 4]], dtype=np.uint16))
    f.end_frame()
    f.write_chunk(name="a", data=np.array([[5, 6]], dtype=np.uint16))
    f.end_frame()
b = bytearray(open(d + "/fl_base.gsd", "rb").read())
b[44] = 1
open(d + "/fl21_base.gsd", "wb").write(b)
for v in ("fl", "fl21"):
    shutil.copyfile(d + "/" + v + "_base.gsd", d + "/" + v + "_app.gsd")
    with gsd.fl.open(d + "/" + v + "_app.gsd", "ab") as f:
        for i in range(2, 7):
            for k in range(30):
                rows, cols = k % 4, k % 3 + 1
                a = ((np.arange(rows * cols) + i + k) % 100).astype(types[k % 10])
                f.write_chunk(name="chunk/%d/%s" % (k, "n" * 30), data=a.reshape(rows, cols))
            f.end_frame()
`;

/** The frames PY_APPEND's snap(i, extra) builds, as chunks for our hoomd-schema writer. */
function hoomdFrame(i: number, extra: boolean): Frame {
  const n = i % 7 === 3 ? 5 : 3;
  const ori = new Float32Array(4 * n);
  for (let k = 0; k < n; k++) ori[4 * k] = 1;
  ori[1] = i % 4 === 1 ? 1 : 0;
  const chunks: Chunk[] = [
    {
      name: "particles/position",
      dtype: "float32",
      shape: [n, 3],
      data: Float32Array.from({ length: 3 * n }, (_, k) => k * 0.5 + (i % 3)),
    },
    { name: "particles/orientation", dtype: "float32", shape: [n, 4], data: ori },
    {
      name: "particles/velocity",
      dtype: "float32",
      shape: [n, 3],
      data: new Float32Array(3 * n).fill(i % 2),
    },
    { name: "log/energy", dtype: "float64", shape: [1], data: new Float64Array([1.5 * i]) },
  ];
  if (extra) {
    chunks.push({ name: "log/pressure", dtype: "int32", shape: [1], data: new Int32Array([i]) });
  }
  return { step: i % 5 === 2 ? 0 : 10 * i, chunks };
}

const CTORS: Readonly<Record<DType, (values: number[]) => TypedArray>> = {
  uint8: (v) => Uint8Array.from(v),
  uint16: (v) => Uint16Array.from(v),
  uint32: (v) => Uint32Array.from(v),
  uint64: (v) => BigUint64Array.from(v, BigInt),
  int8: (v) => Int8Array.from(v),
  int16: (v) => Int16Array.from(v),
  int32: (v) => Int32Array.from(v),
  int64: (v) => BigInt64Array.from(v, BigInt),
  float32: (v) => Float32Array.from(v),
  float64: (v) => Float64Array.from(v),
  char: (v) => Uint8Array.from(v),
};

/** The frames PY_APPEND appends with gsd.fl: 30 chunks of all ten types, shapes rows x cols. */
function flFrame(i: number): Frame {
  const chunks = Array.from({ length: 30 }, (_, k): Chunk => {
    const rows = k % 4, cols = (k % 3) + 1;
    const dtype = DTYPES[k % 10]!;
    const values = Array.from({ length: rows * cols }, (_, j) => (j + i + k) % 100);
    return {
      name: `chunk/${k}/${"n".repeat(30)}`,
      dtype,
      shape: [rows, cols],
      data: CTORS[dtype](values),
    };
  });
  return { step: 0, chunks };
}

peerTest(
  "gsd append: byte for byte what python3-gsd 2.7 appends (gsd.hoomd 'rb+', gsd.fl 'ab')",
  pythonGsdMissing,
  async () => {
    using d = tempDir();
    await python(PY_APPEND, [d.path]);
    const read = (name: string) => Deno.readFileSync(`${d.path}/${name}.gsd`);
    const header = (b: Uint8Array) => openGsdIndex(memorySource(b)).header;

    const hoomdBase = read("hoomd_base"), hoomdApp = read("hoomd_app");
    const more = Array.from({ length: 12 }, (_, k) => hoomdFrame(22 + k, true));
    assertSameBytes(appended(hoomdBase, more).bytes, hoomdApp, "gsd.hoomd 22 + 12 frames");
    // The case covers index growth during the append.
    assert.equal(header(hoomdBase).indexSlots, 128);
    assert.equal(header(hoomdApp).indexSlots, 256);

    const three = [0, 1, 2].map((i) => hoomdFrame(i, true));
    assertSameBytes(appended(read("empty_base"), three).bytes, read("empty_app"), "0 + 3 frames");

    for (const v of ["fl", "fl21"]) {
      const base = read(`${v}_base`), app = read(`${v}_app`);
      const frames = [2, 3, 4, 5, 6].map(flFrame);
      assertSameBytes(appended(base, frames).bytes, app, `gsd.fl ${v} 2 + 5 frames`);
      assert.equal(header(base).namelistBytes, 1024);
      assert.equal(header(app).namelistBytes, 2048);
      assert.equal(header(app).indexSlots, 256);
    }
    assert.equal(header(read("fl21_app")).gsdVersion, 0x20001, "file layer 2.1 is kept");
  },
);

/** Python: the hoomd view of a file: nframes, then [step, N, crc32(position), crc32(orientation)]. */
const PY_HOOMD = `
import json, sys, zlib, gsd.hoomd
with gsd.hoomd.open(sys.argv[1], "rb") as t:
    print(json.dumps([len(t)] + [[int(s.configuration.step), int(s.particles.N),
        zlib.crc32(s.particles.position.tobytes()), zlib.crc32(s.particles.orientation.tobytes())]
        for s in t]))
`;

function bytesOf(a: TypedArray): Uint8Array {
  return new Uint8Array(a.buffer, a.byteOffset, a.byteLength);
}

peerTest(
  "gsd append: write --append, then read --verify and python3-gsd read every frame",
  pythonGsdMissing,
  async () => {
    using d = tempDir();
    const path = `${d.path}/t.gsd`, whole = `${d.path}/whole.gsd`;
    const w = (file: string, frames: number, more: string[]) =>
      runCli(["write", "--n", "16", "--frames", String(frames), "--format", "json", ...more, file]);
    assert.equal((await w(path, 3, ["--framing", "gsd"])).code, 0);
    // 45 more frames of 3 entries: the index outgrows its 128 slots in the append.
    const r = await w(path, 45, ["--append"]);
    assert.equal(r.code, 0, r.stderr);
    const row = JSON.parse(r.stdout).rows[0];
    assert.equal(row.framing, "gsd");
    assert.equal(row.first_frame, 3);
    assert.equal((await w(whole, 48, ["--framing", "gsd"])).code, 0);
    assertSameBytes(Deno.readFileSync(path), Deno.readFileSync(whole), "3 + 45 frames vs 48");

    const v = await runCli(["read", "--verify", "--format", "json", path]);
    assert.equal(v.code, 0, v.stderr);
    const vr = JSON.parse(v.stdout).rows[0];
    assert.deepEqual([vr.frames, vr.read_frames, vr.verified], [48, 48, true]);

    const got = JSON.parse(await python(PY_HOOMD, [path]));
    assert.equal(got[0], 48);
    const t = new TableFrames(16, 1);
    for (let i = 0; i < 48; i++) {
      const [pos, ori] = t.frame(i).chunks;
      assert.deepEqual(got[i + 1], [
        10 * i,
        16,
        crc32(bytesOf(pos!.data)),
        crc32(bytesOf(ori!.data)),
      ]);
    }

    // An explicit big-endian append is refused before anything is written.
    const before = Deno.readFileSync(path);
    const big = await w(path, 1, ["--append", "--endian", "big"]);
    assert.equal(big.code, 2);
    assert.match(
      big.stderr,
      /^sciobench: error: gsd: cannot append big-endian data to .*t\.gsd, a little-endian file\n$/,
    );
    assertSameBytes(Deno.readFileSync(path), before, "refused append");
  },
);
