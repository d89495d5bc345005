/**
 * Byte reversal of element arrays: a per-byte loop, a 32-bit word loop with bit operations,
 * the DataView loop (the fallback) and the library's copySwapped (WebAssembly SIMD), on one
 * 300 x 500 float32 record (600,000 bytes), a float64 record, a misaligned view and short arrays.
 *
 *     deno bench bench/byteswap_bench.ts
 * @module
 */
import { copySwapped, simdAvailable, swapDataView } from "../lib/bytes/byteswap.ts";

function bytewise4(src: Uint8Array, dst: Uint8Array): void {
  const n = src.length;
  for (let i = 0; i < n; i += 4) {
    const a = src[i]!, b = src[i + 1]!;
    dst[i] = src[i + 3]!;
    dst[i + 1] = src[i + 2]!;
    dst[i + 2] = b;
    dst[i + 3] = a;
  }
}

function words4(src: Uint8Array, dst: Uint8Array): void {
  const s = new Uint32Array(src.buffer, src.byteOffset, src.length >>> 2);
  const d = new Uint32Array(dst.buffer, dst.byteOffset, src.length >>> 2);
  for (let i = 0; i < s.length; i++) {
    const x = s[i]!;
    d[i] = (x >>> 24) | ((x >>> 8) & 0xff00) | ((x & 0xff00) << 8) | (x << 24);
  }
}

function filled(n: number, offset = 0): Uint8Array {
  const a = new Uint8Array(n + offset).subarray(offset);
  for (let i = 0; i < n; i++) a[i] = (i * 131) & 255;
  return a;
}

const RECORD = 300 * 500 * 4;
const src = filled(RECORD);
const dst = new Uint8Array(RECORD);
const src64 = filled(RECORD * 2);
const dst64 = new Uint8Array(RECORD * 2);
const odd = filled(RECORD, 3);
const oddDst = new Uint8Array(RECORD + 1).subarray(1);

if (!simdAvailable()) {
  console.error("note: WebAssembly SIMD unavailable; copySwapped uses DataView");
}

Deno.bench(
  "per-byte loop",
  { group: "float32 300x500", baseline: true },
  () => bytewise4(src, dst),
);
Deno.bench("uint32 bit ops", { group: "float32 300x500" }, () => words4(src, dst));
Deno.bench("DataView loop", { group: "float32 300x500" }, () => swapDataView(src, dst, 4));
Deno.bench("copySwapped (SIMD)", { group: "float32 300x500" }, () => copySwapped(src, dst, 4));
Deno.bench("swap in place (SIMD)", { group: "float32 300x500" }, () => copySwapped(src, src, 4));
Deno.bench("memcpy (set), lower bound", { group: "float32 300x500" }, () => dst.set(src));

Deno.bench(
  "DataView loop",
  { group: "float64 300x500", baseline: true },
  () => swapDataView(src64, dst64, 8),
);
Deno.bench("copySwapped (SIMD)", { group: "float64 300x500" }, () => copySwapped(src64, dst64, 8));

Deno.bench(
  "DataView loop",
  { group: "float32 misaligned", baseline: true },
  () => swapDataView(odd, oddDst, 4),
);
Deno.bench(
  "copySwapped (SIMD)",
  { group: "float32 misaligned" },
  () => copySwapped(odd, oddDst, 4),
);

for (const n of [64, 256, 1024]) {
  const a = filled(n), b = new Uint8Array(n);
  Deno.bench(
    `DataView ${n} B`,
    { group: `short ${n} B`, baseline: true },
    () => swapDataView(a, b, 4),
  );
  Deno.bench(`copySwapped ${n} B`, { group: `short ${n} B` }, () => copySwapped(a, b, 4));
}
