/**
 * IEEEIO encode and decode of one 64^3 float64 dataset (2,097,152 bytes, the IOspeed unit),
 * in native and byte-swapped order, next to the raw framing and a plain memcpy. Encode = the
 * writer's ops (begin, one frame, finish) copied into a preallocated file image; decode = the
 * record scan plus the dataset's bytes copied out in native order (swapped when needed).
 *
 *     deno bench bench/ieeeio_bench.ts
 * @module
 */
import { copySwapped, NATIVE_ORDER } from "../lib/bytes/byteswap.ts";
import { ieeeio } from "../lib/framings/ieeeio/mod.ts";
import { raw } from "../lib/framings/raw.ts";
import type { ByteOrder, Frame, Framing, WriteOp } from "../lib/framings/types.ts";
import { MemoryFile, memorySource } from "../lib/io/memory.ts";

const N = 64 ** 3;
const BYTES = N * 8;
const data = Float64Array.from({ length: N }, (_, i) => i * 0.5);
const frame: Frame = {
  step: 0,
  chunks: [{ name: "dataset/0", dtype: "float64", shape: [64, 64, 64], data }],
};
const OTHER: ByteOrder = NATIVE_ORDER === "little" ? "big" : "little";
const image = new Uint8Array(BYTES + (1 << 16));
const out = new Uint8Array(BYTES);

function applyInto(target: Uint8Array, ops: readonly WriteOp[]): void {
  for (const op of ops) if (op.kind === "write") target.set(op.data, op.offset);
}

function encode(framing: Framing, endian: ByteOrder): void {
  const w = framing.createWriter({ endian });
  applyInto(image, w.begin());
  applyInto(image, w.writeFrame(frame));
  applyInto(image, w.finish());
}

function fileOf(framing: Framing, endian: ByteOrder): Uint8Array {
  const w = framing.createWriter({ endian });
  const f = new MemoryFile();
  f.apply(w.begin());
  f.apply(w.writeFrame(frame));
  f.apply(w.finish());
  return f.bytes().slice();
}

function decode(framing: Framing, bytes: Uint8Array): void {
  const idx = framing.openIndex(memorySource(bytes));
  const ref = idx.chunks(0)[0]!;
  const src = bytes.subarray(ref.offset, ref.offset + ref.bytes);
  if (ref.order === NATIVE_ORDER) out.set(src);
  else copySwapped(src, out, 8);
}

const files = {
  ieeeioNative: fileOf(ieeeio, NATIVE_ORDER),
  ieeeioSwapped: fileOf(ieeeio, OTHER),
  rawNative: fileOf(raw, NATIVE_ORDER),
  rawSwapped: fileOf(raw, OTHER),
};
const bytes = new Uint8Array(data.buffer);

Deno.bench("memcpy 2 MiB (lower bound)", { group: "encode 64^3 float64", baseline: true }, () => {
  image.set(bytes, 52);
});
Deno.bench("raw native", { group: "encode 64^3 float64" }, () => encode(raw, NATIVE_ORDER));
Deno.bench("ieeeio native", { group: "encode 64^3 float64" }, () => encode(ieeeio, NATIVE_ORDER));
Deno.bench("raw swapped", { group: "encode 64^3 float64" }, () => encode(raw, OTHER));
Deno.bench("ieeeio swapped", { group: "encode 64^3 float64" }, () => encode(ieeeio, OTHER));
// One writer for many datasets (as the scaling workload uses it): its swap buffer is reused.
const longWriter = ieeeio.createWriter({ endian: OTHER });
longWriter.begin();
Deno.bench("ieeeio swapped, writer reused", { group: "encode 64^3 float64" }, () => {
  for (const op of longWriter.writeFrame(frame)) if (op.kind === "write") image.set(op.data, 0);
});

Deno.bench("memcpy 2 MiB (lower bound)", { group: "decode 64^3 float64", baseline: true }, () => {
  out.set(files.ieeeioNative.subarray(52, 52 + BYTES));
});
Deno.bench("raw native", { group: "decode 64^3 float64" }, () => decode(raw, files.rawNative));
Deno.bench(
  "ieeeio native",
  { group: "decode 64^3 float64" },
  () => decode(ieeeio, files.ieeeioNative),
);
Deno.bench("raw swapped", { group: "decode 64^3 float64" }, () => decode(raw, files.rawSwapped));
Deno.bench(
  "ieeeio swapped",
  { group: "decode 64^3 float64" },
  () => decode(ieeeio, files.ieeeioSwapped),
);
