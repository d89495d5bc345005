/**
 * netCDF classic records against raw: the big-endian conversion of one 300 x 500 float32 record
 * (the seed's record), and encoding / decoding one record with the netcdf framing versus the raw
 * framing in native and big-endian order. Decoding = locate the chunk through the frame index,
 * copy it out of the file bytes and convert it to native order, as the engine does after a pread.
 *
 *     deno bench bench/netcdf_bench.ts
 * @module
 */
import { copySwapped, swapDataView, swapInPlace } from "../lib/bytes/byteswap.ts";
import { netcdf } from "../lib/framings/netcdf/mod.ts";
import { raw } from "../lib/framings/raw.ts";
import type { Frame, FrameIndex, Framing, WriterOptions } from "../lib/framings/types.ts";
import { DTYPE_SIZE } from "../lib/framings/types.ts";
import { MemoryFile, memorySource } from "../lib/io/memory.ts";

const Y = 300, Z = 500;
const values = Float32Array.from({ length: Y * Z }, (_, i) => i * 0.001 - 3);
const record = new Uint8Array(values.buffer);
const out = new Uint8Array(record.length);
const frame: Frame = {
  step: 0,
  chunks: [{ name: "data", dtype: "float32", shape: [Y, Z], data: values }],
};

function perByte4(src: Uint8Array, dst: Uint8Array): void {
  for (let i = 0; i < src.length; i += 4) {
    const a = src[i]!, b = src[i + 1]!;
    dst[i] = src[i + 3]!;
    dst[i + 1] = src[i + 2]!;
    dst[i + 2] = b;
    dst[i + 3] = a;
  }
}

Deno.bench(
  "per-byte loop",
  { group: "big-endian conversion, 300x500 float32", baseline: true },
  () => {
    perByte4(record, out);
  },
);
Deno.bench("DataView loop", { group: "big-endian conversion, 300x500 float32" }, () => {
  swapDataView(record, out, 4);
});
Deno.bench(
  "copySwapped (WebAssembly SIMD)",
  { group: "big-endian conversion, 300x500 float32" },
  () => {
    copySwapped(record, out, 4);
  },
);
Deno.bench("memcpy (no conversion)", { group: "big-endian conversion, 300x500 float32" }, () => {
  out.set(record);
});

function encoder(framing: Framing, options: WriterOptions) {
  const w = framing.createWriter(options);
  w.begin();
  return w;
}

const CASES: readonly [string, Framing, WriterOptions][] = [
  ["raw native", raw, { endian: "native" }],
  ["raw big", raw, { endian: "big" }],
  ["netcdf (big)", netcdf, {}],
];

for (const [label, framing, options] of CASES) {
  const w = encoder(framing, options);
  Deno.bench(label, {
    group: "encode one 300x500 float32 record",
    baseline: label === "raw native",
  }, () => {
    w.writeFrame(frame);
  });
}

function fileOf(
  framing: Framing,
  options: WriterOptions,
  frames: number,
): { bytes: Uint8Array; index: FrameIndex } {
  const w = framing.createWriter(options);
  const f = new MemoryFile();
  f.apply(w.begin());
  for (let i = 0; i < frames; i++) f.apply(w.writeFrame({ ...frame, step: i }));
  f.apply(w.finish());
  const bytes = f.bytes().slice();
  return { bytes, index: framing.openIndex(memorySource(bytes)) };
}

const buf = new Uint8Array(record.length);
for (const [label, framing, options] of CASES) {
  const { bytes, index } = fileOf(framing, options, 8);
  let r = 0;
  Deno.bench(label, {
    group: "decode one 300x500 float32 record",
    baseline: label === "raw native",
  }, () => {
    for (const c of index.chunks(r++ % index.frameCount)) {
      buf.set(bytes.subarray(c.offset, c.offset + c.bytes));
      if (c.order !== "little") swapInPlace(buf.subarray(0, c.bytes), DTYPE_SIZE[c.dtype]);
    }
  });
}

for (const [label, framing, options] of CASES) {
  const { bytes } = fileOf(framing, options, 64);
  Deno.bench(label, {
    group: "open the index of a 64-record file",
    baseline: label === "raw native",
  }, () => {
    framing.openIndex(memorySource(bytes));
  });
}
