/**
 * Benchmarks of the Fortran unformatted framing against raw: encoding and decoding one record
 * of 130000 doubles (Packman's record, 1,040,000 bytes) in memory, and indexing Packman's
 * 10-record file with the marker width given or auto-detected.
 * @module
 */
import { copySwapped, NATIVE_ORDER } from "../lib/bytes/byteswap.ts";
import { f77 } from "../lib/framings/f77/mod.ts";
import { raw } from "../lib/framings/raw.ts";
import type { Frame, Framing, ReaderOptions, WriterOptions } from "../lib/framings/types.ts";
import { DTYPE_SIZE } from "../lib/framings/types.ts";
import { MemoryFile, memorySource } from "../lib/io/memory.ts";

const N = 130000;
const a = new Float64Array(N).map((_, i) => i * 0.5);
a[N - 1] = 1;
const frame: Frame = { step: 0, chunks: [{ name: "a", dtype: "float64", shape: [N], data: a }] };

function encode(framing: Framing, options: WriterOptions, frames = 1): Uint8Array {
  const w = framing.createWriter(options);
  const file = new MemoryFile();
  file.apply(w.begin());
  for (let i = 0; i < frames; i++) file.apply(w.writeFrame(frame));
  file.apply(w.finish());
  return file.bytes().slice();
}

const out = new Uint8Array(N * 8);

/** Indexes `bytes` and copies every chunk of every frame into `out`, in native order. */
function decode(framing: Framing, bytes: Uint8Array, options: ReaderOptions = {}): number {
  const idx = framing.openIndex(memorySource(bytes), options);
  let sum = 0;
  for (let f = 0; f < idx.frameCount; f++) {
    for (const r of idx.chunks(f)) {
      let p = 0;
      for (const [off, len] of r.pieces ?? [[r.offset, r.bytes]]) {
        out.set(bytes.subarray(off, off + len), p);
        p += len;
      }
      if (r.order !== NATIVE_ORDER) copySwapped(out, out, DTYPE_SIZE[r.dtype]);
      sum += p;
    }
  }
  return sum;
}

const layout = [{ name: "a", dtype: "float64" as const, shape: [N] }];
const cases: [string, Framing, WriterOptions, ReaderOptions][] = [
  ["raw", raw, {}, {}],
  ["f77 4-byte native", f77, {}, { marker: 4, endian: "native", layout }],
  ["f77 8-byte native", f77, { marker: 8 }, { marker: 8, endian: "native", layout }],
  ["f77 4-byte swapped", f77, { endian: NATIVE_ORDER === "little" ? "big" : "little" }, {
    marker: 4,
    layout,
  }],
  ["f77 64 KiB subrecords", f77, { subrecordLimit: 65536 }, {
    marker: 4,
    endian: "native",
    layout,
  }],
];

/** A preallocated "file" the encoded ops are copied into (what the engine's write batcher does). */
const place = new Uint8Array(N * 8 + (1 << 16));

for (const [name, framing, wopts] of cases) {
  Deno.bench({
    name: `encode ${name}`,
    group: "encode 130000 doubles",
    baseline: name === "raw",
    fn: () => {
      const w = framing.createWriter(wopts);
      for (const ops of [w.begin(), w.writeFrame(frame), w.finish()]) {
        for (const op of ops) if (op.kind === "write") place.set(op.data, op.offset);
      }
    },
  });
}

for (const [name, framing, wopts, ropts] of cases) {
  const bytes = encode(framing, wopts);
  Deno.bench({
    name: `decode ${name}`,
    group: "decode 130000 doubles",
    baseline: name === "raw",
    fn: () => {
      if (decode(framing, bytes, ropts) !== N * 8) throw new Error("short decode");
    },
  });
}

const packman = encode(f77, { endian: "little" }, 10);
Deno.bench({
  name: "index Packman file, marker=4 endian=little given",
  group: "index 10 x 130000 doubles",
  baseline: true,
  fn: () => {
    f77.openIndex(memorySource(packman), { marker: 4, endian: "little" });
  },
});
Deno.bench({
  name: "index Packman file, auto-detected (first record also fits 8-byte markers)",
  group: "index 10 x 130000 doubles",
  fn: () => {
    f77.openIndex(memorySource(packman));
  },
});
