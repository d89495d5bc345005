/**
 * Tests of the Fortran unformatted framing (lib/framings/f77/): the spec's hexdumps, round
 * trips, gfortran's golden files, every malformed-file rule, detection, and gfortran as a peer.
 * @module
 */
import assert from "node:assert/strict";
import { copySwapped, NATIVE_ORDER } from "../lib/bytes/byteswap.ts";
import { FormatError, UsageError } from "../lib/core/errors.ts";
import { f77, int64At } from "../lib/framings/f77/mod.ts";
import type {
  ChunkRef,
  Frame,
  FrameIndex,
  ReaderOptions,
  WriterOptions,
} from "../lib/framings/types.ts";
import { DTYPE_SIZE } from "../lib/framings/types.ts";
import { detectFormat } from "../lib/backends/registry.ts";
import { MemoryFile, memorySource } from "../lib/io/memory.ts";
import { commandMissing, peerTest, runCli, tempDir } from "./_helpers.ts";

const GOLDEN = new URL("./testdata/f77/", import.meta.url).pathname;

function encode(frames: readonly Frame[], options: WriterOptions = {}): Uint8Array {
  const w = f77.createWriter(options);
  const file = new MemoryFile();
  file.apply(w.begin());
  for (const f of frames) file.apply(w.writeFrame(f));
  file.apply(w.finish());
  return file.bytes().slice();
}

function open(bytes: Uint8Array, options: ReaderOptions = {}, path = "t.bin"): FrameIndex {
  return f77.openIndex(memorySource(bytes, path, "f77"), options);
}

/** The bytes of a chunk (all subrecords joined), in native byte order. */
function chunkData(bytes: Uint8Array, ref: ChunkRef): Uint8Array {
  const out = new Uint8Array(ref.bytes);
  let p = 0;
  for (const [off, len] of ref.pieces ?? [[ref.offset, ref.bytes]]) {
    out.set(bytes.subarray(off, off + len), p);
    p += len;
  }
  assert.equal(p, ref.bytes);
  if (ref.order !== NATIVE_ORDER) copySwapped(out, out, DTYPE_SIZE[ref.dtype]);
  return out;
}

function f64(bytes: Uint8Array): Float64Array {
  return new Float64Array(bytes.buffer, bytes.byteOffset, bytes.byteLength / 8);
}

function hex(text: string): Uint8Array {
  return new Uint8Array(text.replace(/\s+/g, "").match(/../g)!.map((h) => parseInt(h, 16)));
}

function doubles(...v: number[]): Frame {
  return {
    step: 0,
    chunks: [{ name: "a", dtype: "float64", shape: [v.length], data: new Float64Array(v) }],
  };
}

/** A frame shaped like the table workload's: positions N x 3 and orientations N x 4 (float32). */
function tableFrame(i: number, n: number): Frame {
  const pos = new Float32Array(n * 3).map((_, k) => i * 1000 + k * 0.5);
  const ori = new Float32Array(n * 4).map((_, k) => -i - k * 0.25);
  return {
    step: 10 * i,
    chunks: [
      { name: "particles/position", dtype: "float32", shape: [n, 3], data: pos },
      { name: "particles/orientation", dtype: "float32", shape: [n, 4], data: ori },
    ],
  };
}

function throwsFormat(
  fn: () => unknown,
  offset: number,
  ...parts: (string | RegExp)[]
): FormatError {
  let err: unknown;
  try {
    fn();
  } catch (e) {
    err = e;
  }
  assert.ok(err instanceof FormatError, `expected a FormatError, got ${String(err)}`);
  assert.equal(err.exitCode, 2);
  assert.equal(err.offset, offset, err.message);
  assert.ok(!err.message.includes("\n"), "one line");
  for (const p of parts) {
    if (typeof p === "string") assert.ok(err.message.includes(p), `'${p}' not in: ${err.message}`);
    else assert.match(err.message, p);
  }
  return err;
}

Deno.test("f77: spec §3.1 two records, 4-byte little-endian, byte for byte", () => {
  const bytes = encode([doubles(1, 2), doubles(-1.5, 0.25, 3)], { endian: "little" });
  assert.deepEqual(
    bytes,
    hex(`10000000 000000000000f03f 0000000000000040 10000000
         18000000 000000000000f8bf 000000000000d03f 0000000000000840 18000000`),
  );
  assert.equal(encode([doubles(1, 2), doubles(-1.5, 0.25, 3)], { marker: 8 }).length, 72);
  const be = encode([doubles(1, 2), doubles(-1.5, 0.25, 3)], { endian: "big" });
  assert.equal(be.length, 56);
  assert.deepEqual(be.subarray(0, 14), hex("00000010 3ff0000000000000 4000"));
});

Deno.test("f77: spec §3.2 subrecords with a 16-byte limit, byte for byte, and read back", () => {
  const frames = [doubles(1, 2, 3, 4, 5), doubles(7)];
  const bytes = encode(frames, { endian: "little", subrecordLimit: 16 });
  const d = (v: number) =>
    [...new Uint8Array(new Float64Array([v]).buffer)].map((b) => b.toString(16).padStart(2, "0"))
      .join("");
  assert.deepEqual(
    bytes,
    hex(`f0ffffff ${d(1)}${d(2)} 10000000
         f0ffffff ${d(3)}${d(4)} f0ffffff
         08000000 ${d(5)} f8ffffff
         08000000 ${d(7)} 08000000`),
  );
  const idx = open(bytes);
  assert.equal(idx.frameCount, 2);
  const [r1] = idx.chunks(0);
  assert.deepEqual(r1!.pieces, [[4, 16], [28, 16], [52, 8]]);
  assert.equal(r1!.offset, 4);
  assert.deepEqual([...f64(chunkData(bytes, r1!))], [1, 2, 3, 4, 5]);
  assert.equal(idx.chunks(1)[0]!.pieces, undefined);
  assert.deepEqual([...f64(chunkData(bytes, idx.chunks(1)[0]!))], [7]);
  assert.equal(idx.describe!().split_records, 1);
  assert.equal(idx.describe!().subrecords, 4);
});

Deno.test("f77: an empty record is markers 0 and 0", () => {
  const bytes = encode([doubles(), doubles(2)], { endian: "little" });
  assert.deepEqual(bytes.subarray(0, 8), new Uint8Array(8));
  const idx = open(bytes, { endian: "little" });
  assert.equal(idx.frameCount, 2);
  assert.equal(idx.chunks(0)[0]!.bytes, 0);
});

Deno.test("f77: round trips over marker width, byte order and subrecord limit", () => {
  const frames = [0, 1, 2].map((i) => tableFrame(i, 5));
  const layout = frames[0]!.chunks.map((c) => ({ name: c.name, dtype: c.dtype, shape: c.shape }));
  for (const marker of [4, 8] as const) {
    for (const endian of ["little", "big"] as const) {
      // 9 cuts float32 elements across subrecords; 1e9 never splits.
      for (const subrecordLimit of [9, 16, 1e9]) {
        const what = `${marker}/${endian}/${subrecordLimit}`;
        const bytes = encode(frames, { marker, endian, subrecordLimit });
        for (const opts of [{ layout }, { layout, marker, endian }]) {
          const idx = open(bytes, opts);
          assert.equal(idx.frameCount, 3, what);
          assert.equal(idx.describe!().marker_bytes, marker, what);
          assert.equal(idx.describe!().byte_order, endian, what);
          for (const [i, f] of frames.entries()) {
            const refs = idx.chunks(i);
            assert.equal(refs.length, 2);
            for (const [k, c] of f.chunks.entries()) {
              assert.equal(refs[k]!.name, c.name);
              assert.deepEqual(refs[k]!.shape, c.shape);
              assert.equal(refs[k]!.order, endian);
              assert.equal(refs[k]!.pieces === undefined, subrecordLimit > c.data.byteLength, what);
              assert.deepEqual(chunkData(bytes, refs[k]!), new Uint8Array(c.data.buffer), what);
            }
          }
        }
        // Without options sciobench's own table frames are recognised, and said so.
        const detected = open(bytes);
        assert.equal(detected.frameCount, 3, what);
        assert.deepEqual(detected.chunks(1).map((c) => [c.name, c.dtype, c.shape]), [
          ["particles/position", "float32", [5, 3]],
          ["particles/orientation", "float32", [5, 4]],
        ]);
        assert.match(String(detected.describe!().layout), /sciobench table frames.*detected/);
        // With dtype=float64: one float64 record per frame, 1-based names.
        const plain = open(bytes, { dtype: "float64" });
        assert.equal(plain.frameCount, 6);
        assert.equal(plain.chunks(3)[0]!.name, "record/4");
        assert.equal(
          plain.chunks(0)[0]!.dtype,
          "uint8",
          "60 bytes is not a whole number of float64",
        );
        assert.equal(plain.chunks(1)[0]!.dtype, "float64");
        assert.deepEqual(plain.chunks(1)[0]!.shape, [10]);
        assert.equal(plain.warnings!.length, 1);
        assert.match(plain.warnings![0]!, /3 record\(s\) \(1, 3, 5\).*uint8/);
      }
    }
  }
});

Deno.test("f77: reader options dtype, names, recordsPerFrame and their errors", () => {
  const frames = [0, 1, 2].map((i) => tableFrame(i, 4));
  const bytes = encode(frames);
  const idx = open(bytes, { dtype: "float32:3,float32:4", names: "pos,ori" });
  assert.equal(idx.frameCount, 3);
  assert.deepEqual(idx.chunks(2).map((r) => [r.name, r.dtype, r.shape]), [
    ["pos", "float32", [4, 3]],
    ["ori", "float32", [4, 4]],
  ]);
  const odd = open(bytes, { recordsPerFrame: "4", dtype: "float32" });
  assert.equal(odd.frameCount, 1);
  assert.match(odd.warnings!.join("\n"), /last 2 record\(s\) do not fill a frame of 4/);
  assert.throws(() => open(bytes, { dtype: "float128" }), UsageError);
  assert.throws(() => open(bytes, { marker: 5 }), UsageError);
  assert.throws(() => open(bytes, { endian: "middle" as "big" }), UsageError);
  assert.throws(() => open(bytes, { recordsPerFrame: 0 }), UsageError);
  assert.throws(() => open(bytes, { names: "a,b,c", recordsPerFrame: 2 }), UsageError);
  assert.throws(() => f77.createWriter({ marker: 2 }), UsageError);
  assert.throws(() => f77.createWriter({ subrecordLimit: 2 ** 31 }), UsageError);
  // A layout the records do not match is a malformed file for that caller.
  throwsFormat(
    () =>
      open(bytes, { layout: [{ name: "particles/position", dtype: "float32", shape: [5, 3] }] }),
    0,
    "record 1 holds 48 bytes",
    "'particles/position'",
  );
});

const GOLDENS: readonly [string, WriterOptions][] = [
  ["wr130-le4.bin", { endian: "little" }],
  ["wr130-be4.bin", { endian: "big" }],
  ["wr130-le8.bin", { endian: "little", marker: 8 }],
  ["wr130-sub256.bin", { endian: "little", subrecordLimit: 256 }],
  ["wr130-be8-sub256.bin", { endian: "big", marker: 8, subrecordLimit: 256 }],
];

/** Packman's `wr`: 10 records of `n` doubles, zero except a(n) = i. */
function packmanFrames(n: number): Frame[] {
  return Array.from({ length: 10 }, (_, k) => {
    const a = new Float64Array(n);
    a[n - 1] = k + 1;
    return { step: k, chunks: [{ name: "a", dtype: "float64", shape: [n], data: a }] };
  });
}

/** The seed's `rd` check on a decoded file: record i has a(n) = i (and zeros before, as gfortran leaves them). */
function checkPackman(bytes: Uint8Array, idx: FrameIndex, n: number): void {
  assert.equal(idx.frameCount, 10);
  for (let i = 0; i < 10; i++) {
    const [ref] = idx.chunks(i);
    assert.equal(ref!.dtype, "float64");
    assert.deepEqual(ref!.shape, [n]);
    const a = f64(chunkData(bytes, ref!));
    assert.equal(a[n - 1], i + 1, `record ${i + 1}: a(${n}) = ${a[n - 1]}`);
    assert.ok(a.subarray(0, n - 1).every((x) => x === 0));
  }
}

Deno.test("f77: gfortran golden files read (auto-detected) and written byte for byte", () => {
  for (const [name, opts] of GOLDENS) {
    const gold = Deno.readFileSync(GOLDEN + name);
    const idx = open(gold, {}, name);
    checkPackman(gold, idx, 130);
    assert.equal(idx.describe!().marker_bytes, opts.marker ?? 4, name);
    assert.equal(idx.describe!().byte_order, opts.endian, name);
    assert.equal(idx.describe!().markers, "detected");
    assert.equal(idx.describe!().split_records, name.includes("sub") ? 10 : 0, name);
    checkPackman(gold, open(gold, { marker: opts.marker ?? 4, endian: opts.endian }, name), 130);
    assert.deepEqual(encode(packmanFrames(130), opts), gold, name);
    assert.ok(f77.detect!(gold.subarray(0, 4096), gold.length), name);
  }
});

Deno.test("f77: a first record that fits two marker widths is settled by the whole file, with a warning", () => {
  // wr130-le4.bin starts 10 04 00 00 00 00 00 00: as an 8-byte marker that is also 1040, and the
  // 8 bytes at 8 + 1040 read 1040 again, so only the rest of the file tells the widths apart.
  const gold = Deno.readFileSync(GOLDEN + "wr130-le4.bin");
  const idx = open(gold);
  assert.equal(idx.warnings!.length, 1);
  assert.match(
    idx.warnings![0]!,
    /first record fits 4-byte little-endian markers and 8-byte little-endian markers; only 4-byte/,
  );
  assert.equal(open(gold, { marker: 4 }).warnings!.length, 0);
});

Deno.test("f77: a file consistent with two byte orders is an error unless endian is given", () => {
  const empty = new Uint8Array(16); // two empty records in 4-byte markers, one in 8-byte
  throwsFormat(() => open(empty), 0, "ambiguous", "endian=little|big");
  const idx = open(empty, { endian: "big", marker: 4 });
  assert.equal(idx.frameCount, 2);
  assert.equal(open(new Uint8Array(0)).frameCount, 0);
});

Deno.test("f77: malformed files name the record and the byte offset", () => {
  const le = { endian: "little", marker: 4 } as const;
  const good = encode([doubles(1, 2), doubles(3, 4, 5, 6, 7), doubles(8)], {
    ...le,
    subrecordLimit: 16,
  });
  // Layout: rec 1 [0,24); rec 2 pieces at 24 (-16, +16), 48 (-16, -16), 72 (+8, -8) ends 88; rec 3 [88,104).
  const dv = (b: Uint8Array) => new DataView(b.buffer, b.byteOffset, b.byteLength);
  const broken = (fn: (v: DataView) => void) => {
    const b = good.slice();
    fn(dv(b));
    return b;
  };
  assert.equal(good.length, 104);
  open(good, le);

  // Trailing marker disagrees with the leading one.
  throwsFormat(
    () => open(broken((v) => v.setInt32(20, 15, true)), le),
    20,
    "record 1:",
    "trailing marker 15 disagrees with leading marker 16 at byte 0",
  );
  throwsFormat(
    () => open(broken((v) => v.setInt32(100, 9, true)), le),
    100,
    "record 3:",
    "trailing marker 9",
  );
  // Subrecord signs: first subrecord's trailer negative; a later subrecord's trailer positive.
  throwsFormat(
    () => open(broken((v) => v.setInt32(44, -16, true)), le),
    44,
    "record 2:",
    "negative",
    "first",
  );
  throwsFormat(
    () => open(broken((v) => v.setInt32(68, 16, true)), le),
    68,
    "record 2, subrecord 2,",
    "should be negative",
  );
  throwsFormat(
    () => open(broken((v) => v.setInt32(84, 8, true)), le),
    84,
    "record 2, subrecord 3,",
    "should be negative",
  );
  // A first subrecord whose leading marker lost its sign: the record ends early and the next
  // "record" starts with a continuation whose trailer is negative.
  throwsFormat(
    () => open(broken((v) => v.setInt32(24, 16, true)), le),
    68,
    "record 3:",
    "is negative",
  );
  // The last record says more follows, but the file ends.
  throwsFormat(
    () => open(broken((v) => v.setInt32(88, -8, true)), le),
    104,
    "record 3:",
    "another subrecord should follow",
    "ends at byte 104",
  );
  // Cut short inside a payload, inside a trailing marker, inside a leading marker.
  throwsFormat(
    () => open(good.subarray(0, 100), le),
    88,
    "record 3 is cut short",
    "announces 8 bytes",
    "ends at byte 100",
  );
  throwsFormat(() => open(good.subarray(0, 82), le), 72, "record 2, subrecord 3, is cut short");
  throwsFormat(
    () => open(good.subarray(0, 90), le),
    88,
    "record 3 starting at byte 88",
    "inside its 4-byte leading marker",
  );
  // Auto-detection reports the same problems once a combination fits the first record.
  throwsFormat(() => open(good.subarray(0, 100)), 88, "record 3 is cut short");
  // No combination fits the first record: the first plausible one (native, 4-byte) says why.
  throwsFormat(
    () => open(broken((v) => v.setInt32(0, 17, true))),
    21,
    "record 1: trailing marker",
    "disagrees with leading marker 17 at byte 0",
    "4-byte little-endian",
  );
  throwsFormat(
    () => open(new TextEncoder().encode("hello, world: no Fortran here\n")),
    0,
    "not a Fortran unformatted sequential file",
    "4-byte little-endian markers: leading marker 1819043176 runs past the end",
  );
  // 8-byte markers: a cut record and a disagreeing trailer.
  const g8 = encode([doubles(1), doubles(2)], { endian: "big", marker: 8 });
  throwsFormat(
    () => open(g8.subarray(0, g8.length - 1), { marker: 8, endian: "big" }),
    24,
    "record 2 is cut short",
  );
  const b8 = g8.slice();
  dv(b8).setBigInt64(16, 9n, false);
  throwsFormat(() => open(b8, { marker: 8, endian: "big" }), 16, "record 1:", "8-byte big-endian");
});

Deno.test("f77: 8-byte markers read as two halves agree with BigInt within +-(2^53 - 1), none beyond", () => {
  const bytes = new Uint8Array(16);
  const view = new DataView(bytes.buffer);
  const values = [0n, 1n, -1n, 16n, 2n ** 31n, -(2n ** 32n), 2n ** 53n - 1n, -(2n ** 53n - 1n)];
  const beyond = [2n ** 53n, -(2n ** 53n), 2n ** 53n + 1n, -(2n ** 53n) - 1n, 2n ** 63n - 1n];
  let x = 0x2545f491n;
  for (let k = 0; k < 2000; k++) {
    x = (x * 6364136223846793005n + 1442695040888963407n) & (2n ** 64n - 1n);
    // every width of value, both signs
    values.push(BigInt.asIntN(64, x) >> BigInt(k % 64));
  }
  for (const v of [...values, ...beyond]) {
    for (const little of [true, false]) {
      view.setBigInt64(3, v, little);
      const safe = v <= 2n ** 53n - 1n && v >= -(2n ** 53n - 1n);
      assert.equal(int64At(view, 3, little), safe ? Number(v) : undefined, `${v} ${little}`);
    }
  }
});

Deno.test("f77: a file no marker width and byte order fits names each one's problem, in order", () => {
  // every leading marker runs past the end of the file, or is larger than any file, or the
  // file cannot hold two markers of its width
  throwsFormat(
    () => open(new Uint8Array(24).fill(0x40)),
    0,
    "not a Fortran unformatted sequential file: no marker width and byte order fits the first " +
      "record (4-byte little-endian markers: leading marker 1077952576 runs past the end of the " +
      "file; 8-byte little-endian markers: a marker is larger than any file; 4-byte big-endian " +
      "markers: leading marker 1077952576 runs past the end of the file; 8-byte big-endian " +
      "markers: a marker is larger than any file)",
  );
  throwsFormat(
    () => open(new Uint8Array(12).fill(0x40), { endian: "little" }),
    0,
    "(4-byte little-endian markers: leading marker 1077952576 runs past the end of the file; " +
      "8-byte little-endian markers: the file (12 bytes) is shorter than two markers)",
  );
  const huge = new Uint8Array(32);
  new DataView(huge.buffer).setBigInt64(0, 2n ** 60n, true);
  throwsFormat(
    () => open(huge, { marker: 8, endian: "little" }),
    0,
    "8-byte record marker 1152921504606846976 is larger than any file",
  );
});

Deno.test("f77: detect() accepts marker-consistent heads and rejects others", () => {
  const big = encode(packmanFrames(130000).slice(0, 2)); // first trailer beyond a 4 KiB head
  assert.ok(f77.detect!(big.subarray(0, 4096), big.length));
  assert.ok(!f77.detect!(big.subarray(0, 4096), 1040000), "first record does not fit the size");
  assert.ok(
    !f77.detect!(big.subarray(0, 4096), 1040008 + 5),
    "5 bytes after a record are no record",
  );
  const small = encode([doubles(1, 2), doubles(3)], { endian: "big" });
  assert.ok(f77.detect!(small, small.length));
  const bad = small.slice();
  bad[23] = 9; // first trailing marker, visible in the head, disagrees
  assert.ok(!f77.detect!(bad, bad.length));
  // A file broken after its first record is still recognised, so its reader can say where.
  const cut = small.subarray(0, small.length - 3);
  assert.ok(f77.detect!(cut, cut.length));
  assert.ok(!f77.detect!(small.subarray(0, 20), 20), "first record itself cut");
  assert.ok(!f77.detect!(new Uint8Array(0), 0));
  assert.ok(!f77.detect!(new Uint8Array(4096), 1 << 20), "zeros are no Fortran file");
  const text = new TextEncoder().encode("hello, world: this is not a Fortran file\n");
  assert.ok(!f77.detect!(text, text.length));
  // An HDF4 file starts 0e 03 13 01: as a 4-byte little-endian marker that is 18 MB, which a
  // large file would fit; detection never asks the heuristic once a declared magic number matches.
  const hdf4 = new Uint8Array(4096);
  hdf4.set([0x0e, 0x03, 0x13, 0x01]);
  assert.ok(f77.detect!(hdf4, 1 << 26), "the marker heuristic alone would take it");
  assert.notEqual(detectFormat(hdf4, 1 << 26)?.name, "f77");
  hdf4[0] = 0x0f;
  assert.equal(detectFormat(hdf4, 1 << 26)?.name, "f77", "the same bytes without the magic do fit");
  const random = new Uint8Array(4096).map((_, i) => (i * 2654435761) >>> 24);
  assert.ok(!f77.detect!(random, 1 << 20));
});

// --- the CLI on f77 files ----------------------------------------------------------------------

/** Asserts a CLI failure: exit 2 and exactly one stderr line, without a stack trace. */
function assertOneLineExit2(
  r: { code: number; stdout: string; stderr: string },
  ...parts: string[]
): void {
  assert.equal(r.code, 2, r.stderr);
  const lines = r.stderr.trimEnd().split("\n");
  assert.equal(lines.length, 1, r.stderr);
  assert.match(lines[0]!, /^sciobench: error: /);
  assert.doesNotMatch(r.stderr, /\n\s+at |Error:|\.ts:\d+/);
  for (const p of parts) assert.ok(lines[0]!.includes(p), `'${p}' not in: ${lines[0]}`);
}

Deno.test("f77 cli: write and read through the generic commands, options passed to the reader", async () => {
  using tmp = tempDir();
  const path = `${tmp.path}/t.f77`;
  const w = await runCli([
    "write",
    "--framing",
    "f77",
    "--n",
    "4",
    "--frames",
    "3",
    "--endian",
    "big",
    "--option",
    "marker=8",
    "--option",
    "subrecordLimit=40",
    path,
  ]);
  assert.equal(w.code, 0, w.stderr);
  const bytes = await Deno.readFile(path);
  const idx = open(bytes, { marker: 8, endian: "big" });
  assert.equal(idx.describe!().records, 6, "position and orientation: two records per frame");
  assert.equal(idx.frameCount, 3, "the table's frames, recognised");
  assert.equal(idx.describe!().split_records, 6);
  // sciobench read: the table pattern verifies once the records are typed and named.
  const r = await runCli([
    "read",
    path,
    "--verify",
    "--option",
    "dtype=float32:3,float32:4",
    "--option",
    "names=particles/position,particles/orientation",
  ]);
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /^framing,/);
  assert.match(r.stdout.split("\n")[1]!, /^f77,.*,3,528,/);
});

Deno.test("f77 cli: malformed files exit 2 with one line naming record and byte", async () => {
  using tmp = tempDir();
  const good = encode([doubles(1, 2), doubles(3, 4, 5, 6, 7), doubles(8)], {
    endian: "little",
    subrecordLimit: 16,
  });
  const cases: [string, Uint8Array, string[]][] = [
    ["cut.f77", good.subarray(0, 100), ["at byte 88", "record 3 is cut short"]],
    [
      "trail.f77",
      (() => {
        const b = good.slice();
        new DataView(b.buffer).setInt32(20, 15, true);
        return b;
      })(),
      ["at byte 20", "record 1: trailing marker 15 disagrees"],
    ],
    [
      "sign.f77",
      (() => {
        const b = good.slice();
        new DataView(b.buffer).setInt32(68, 16, true);
        return b;
      })(),
      ["at byte 68", "record 2, subrecord 2,", "should be negative"],
    ],
  ];
  for (const [name, bytes, parts] of cases) {
    const path = `${tmp.path}/${name}`;
    await Deno.writeFile(path, bytes);
    assertOneLineExit2(await runCli(["info", path, "--framing", "f77"]), `f77: ${path}`, ...parts);
    // Without --framing the file is detected as f77 unless its first record is the broken one.
    const detected = !name.startsWith("trail");
    assertOneLineExit2(
      await runCli(["read", path]),
      ...(detected ? parts : ["detect: ", "unknown format", "name one with --framing"]),
    );
  }
  assertOneLineExit2(
    await runCli(["info", `${tmp.path}/cut.f77`, "--framing", "f77", "--option", "marker=5"]),
    "marker",
  );
});

// --- gfortran as a peer ------------------------------------------------------------------------

const gfortranMissing = () => commandMissing("gfortran");

async function run(
  cmd: string,
  args: string[],
  cwd: string,
): Promise<{ code: number; out: string }> {
  const o = await new Deno.Command(cmd, { args, cwd, stdout: "piped", stderr: "piped" }).output();
  const dec = new TextDecoder();
  return { code: o.code, out: dec.decode(o.stdout) + dec.decode(o.stderr) };
}

/** Compiles `src` (from testdata, with 130000 replaced by `n`) into `dir/exe` with `flags`. */
async function compile(
  dir: string,
  src: string,
  exe: string,
  n: number,
  flags: string[],
): Promise<string> {
  const text = (await Deno.readTextFile(GOLDEN + src)).replaceAll("130000", String(n));
  await Deno.writeTextFile(`${dir}/${exe}.f`, text);
  const r = await run("gfortran", ["-O2", "-fno-automatic", ...flags, "-o", exe, `${exe}.f`], dir);
  assert.equal(r.code, 0, r.out);
  return `${dir}/${exe}`;
}

peerTest(
  "f77 peer: gfortran's rd reads files sciobench wrote (4-byte, 8-byte, big-endian, subrecords)",
  gfortranMissing,
  async () => {
    using tmp = tempDir();
    const n = 1000;
    const cases: [string[], WriterOptions][] = [
      [[], {}],
      [["-frecord-marker=8"], { marker: 8 }],
      [["-fconvert=big-endian"], { endian: "big" }],
      [["-fconvert=big-endian", "-frecord-marker=8"], {
        endian: "big",
        marker: 8,
        subrecordLimit: 1000,
      }],
      [[], { subrecordLimit: 333 }],
    ];
    for (const [k, [flags, opts]] of cases.entries()) {
      const dir = `${tmp.path}/${k}`;
      await Deno.mkdir(dir);
      const rd = await compile(dir, "rd.f", "rd", n, flags);
      await Deno.writeFile(`${dir}/fort.1`, encode(packmanFrames(n), opts));
      const ok = await run(rd, [], dir);
      assert.equal(ok.code, 0, `${JSON.stringify(opts)}: ${ok.out}`);
      assert.equal(ok.out, "");
      // Negative control: rd does complain about a wrong a(n).
      const frames = packmanFrames(n);
      (frames[6]!.chunks[0]!.data as Float64Array)[n - 1] = 99;
      await Deno.writeFile(`${dir}/fort.1`, encode(frames, opts));
      const bad = await run(rd, [], dir);
      assert.notEqual(bad.code, 0);
      assert.match(bad.out, /i= 7 bad value = *9\.90000D\+01/);
    }
  },
);

peerTest(
  "f77 peer: Packman's full-size wr (10 x 130000 doubles) read by sciobench and rewritten byte for byte",
  gfortranMissing,
  async () => {
    using tmp = tempDir();
    for (
      const [k, [flags, opts]] of ([[[], {}], [["-fconvert=big-endian", "-frecord-marker=8"], {
        endian: "big",
        marker: 8,
      }]] as [string[], WriterOptions][]).entries()
    ) {
      const dir = `${tmp.path}/${k}`;
      await Deno.mkdir(dir);
      // The seed's own program at full size: static storage gives zeros without -fno-automatic.
      const text = await Deno.readTextFile(GOLDEN + "wr.f");
      await Deno.writeTextFile(`${dir}/wr.f`, text);
      const c = await run("gfortran", ["-O2", ...flags, "-o", "wr", "wr.f"], dir);
      assert.equal(c.code, 0, c.out);
      const w = await run(`${dir}/wr`, [], dir);
      assert.equal(w.code, 0, w.out);
      const bytes = await Deno.readFile(`${dir}/fort.1`);
      assert.equal(bytes.length, opts.marker === 8 ? 10400160 : 10400080);
      checkPackman(bytes, open(bytes, {}, "fort.1"), 130000);
      assert.deepEqual(encode(packmanFrames(130000), opts), bytes);
    }
  },
);

Deno.test("f77 info: sciobench's own table file shows the frames written, or says the dtype is assumed", async () => {
  using tmp = tempDir();
  const path = `${tmp.path}/t.f77`;
  const w = await runCli(["write", "--framing", "f77", "--n", "16", "--frames", "150", path]);
  assert.equal(w.code, 0, w.stderr);
  const info = await runCli(["info", path]);
  assert.equal(info.code, 0, info.stderr);
  assert.match(info.stdout, /^frames: 150$/m);
  assert.match(info.stdout, /^layout: sciobench table frames .*detected\)$/m);
  assert.match(info.stdout, /^0,particles\/position,float32,16x3,/m);
  // records of one size: not the table's; the default float64 is named as assumed
  const plain = `${tmp.path}/plain.f77`;
  Deno.writeFileSync(plain, encode([doubles(1, 2), doubles(3, 4)], { endian: "little" }));
  const p = await runCli(["info", plain]);
  assert.equal(p.code, 0, p.stderr);
  assert.match(p.stdout, /^layout: assumed: one float64 record per frame \(--option dtype=/m);
  // more records per frame than the file holds: one line, exit 2, not a file of 0 frames
  for (const item of ["recordsPerFrame=99999999999", "recordsPerFrame=301"]) {
    const r = await runCli(["info", "--option", item, path]);
    assert.equal(r.code, 2, r.stderr);
    assert.equal(r.stdout, "");
    assert.match(
      r.stderr,
      /^sciobench: error: f77: .* holds 300 record\(s\): recordsPerFrame=\d+ leaves no frame; give at most 300\n$/,
    );
  }
  for (const item of ["names=", "names=a,,b"]) {
    const r = await runCli(["info", "--option", item, path]);
    assert.equal(r.code, 2, r.stderr);
    assert.match(
      r.stderr,
      /^sciobench: error: bad value '.*' for option names of f77: expected a comma-separated list of non-empty items\n$/,
    );
  }
  const sub = await runCli([
    "write",
    "--framing",
    "f77",
    "--n",
    "4",
    "--frames",
    "1",
    "--option",
    "subrecordLimit=1",
    `${tmp.path}/s.f77`,
  ]);
  assert.equal(sub.code, 2, sub.stderr);
  assert.match(
    sub.stderr,
    /bad value '1' for option subrecordLimit of f77: expected an integer from 8/,
  );
});
