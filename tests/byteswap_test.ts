import assert from "node:assert/strict";
import {
  copySwapped,
  NATIVE_ORDER,
  simdAvailable,
  SwapBuffer,
  swapDataView,
  swapInPlace,
} from "../lib/bytes/byteswap.ts";

/** The obviously correct reference: reverse each element byte by byte. */
function reference(src: Uint8Array, width: number): Uint8Array {
  const out = new Uint8Array(src.length);
  for (let i = 0; i < src.length; i += width) {
    for (let j = 0; j < width; j++) out[i + j] = src[i + width - 1 - j]!;
  }
  return out;
}

function pattern(n: number, offset: number, seed: number): Uint8Array {
  const a = new Uint8Array(n + offset + 5).subarray(offset, offset + n);
  for (let i = 0; i < n; i++) a[i] = (i * 37 + seed * 11 + 1) & 255;
  return a;
}

// Lengths around the 16-byte vector, the 64-byte unrolled loop, the SIMD threshold and the
// 64 KiB block, so every tail and block boundary is crossed.
const LENGTHS = [
  0,
  8,
  16,
  24,
  40,
  56,
  64,
  72,
  120,
  128,
  136,
  1000,
  4104,
  65536 - 8,
  65536,
  65536 + 24,
  200_000,
];

Deno.test("byteswap: native order is little on this machine", () => {
  assert.equal(NATIVE_ORDER, "little");
});

Deno.test("byteswap: SIMD path is in use", () => {
  assert.equal(simdAvailable(), true);
});

for (const width of [2, 4, 8]) {
  Deno.test(`byteswap: copySwapped width ${width}, offsets 0..7, many lengths`, () => {
    for (const n of LENGTHS) {
      for (let srcOff = 0; srcOff < 8; srcOff += 1) {
        if (n > 70000 && srcOff > 1) continue; // keep the test fast
        const src = pattern(n, srcOff, width + srcOff);
        const before = src.slice();
        const dstOff = (srcOff * 3 + 1) % 8;
        const dst = new Uint8Array(n + 16).subarray(dstOff, dstOff + n);
        copySwapped(src, dst, width);
        assert.deepEqual(
          dst,
          reference(before, width),
          `width ${width} length ${n} offsets ${srcOff}/${dstOff}`,
        );
        assert.deepEqual(src, before, "source unchanged");
      }
    }
  });

  Deno.test(`byteswap: swapInPlace width ${width} at odd offsets, twice is identity`, () => {
    for (const n of LENGTHS) {
      for (const off of [0, 1, 3, 5]) {
        const a = pattern(n, off, off);
        const orig = a.slice();
        // Bytes just outside the view must stay untouched.
        const whole = new Uint8Array(a.buffer);
        const guardBefore = off > 0 ? whole[off - 1] : undefined;
        const guardAfter = whole[off + n];
        swapInPlace(a, width);
        assert.deepEqual(a, reference(orig, width), `width ${width} length ${n} offset ${off}`);
        assert.equal(off > 0 ? whole[off - 1] : undefined, guardBefore);
        assert.equal(whole[off + n], guardAfter);
        swapInPlace(a, width);
        assert.deepEqual(a, orig);
      }
    }
  });

  Deno.test(`byteswap: DataView fallback width ${width} matches the reference`, () => {
    for (const n of [0, width, 48, 1000]) {
      const src = pattern(n, 1, 3);
      const dst = new Uint8Array(n);
      swapDataView(src, dst, width as 2 | 4 | 8);
      assert.deepEqual(dst, reference(src, width));
      const inPlace = src.slice();
      swapDataView(inPlace, inPlace, width as 2 | 4 | 8);
      assert.deepEqual(inPlace, reference(src, width));
    }
  });

  Deno.test(`byteswap: SwapBuffer width ${width} swaps in place, never past the view`, () => {
    const sb = SwapBuffer.create();
    assert.ok(sb, "WebAssembly SIMD is available here");
    for (const n of LENGTHS) {
      for (const start of [0, 8, 24, 4088]) {
        const view = sb.view(start, n + 32);
        view.set(pattern(n + 32, 0, n + start));
        const data = view.subarray(16, 16 + n);
        const orig = data.slice();
        const around = [view.slice(0, 16), view.slice(16 + n)];
        sb.swap(data, width);
        assert.deepEqual(data, reference(orig, width), `width ${width} length ${n} at ${start}`);
        assert.deepEqual([view.slice(0, 16), view.slice(16 + n)], around, "bytes around unchanged");
      }
    }
  });
}

Deno.test("byteswap: SwapBuffer grows for large views; other arrays and bad widths", () => {
  const sb = SwapBuffer.create()!;
  const big = sb.view(100, 3 << 20); // past the module's 4 initial pages: the memory grows
  assert.equal(big.length, 3 << 20);
  big.set(pattern(big.length, 0, 9));
  const orig = big.slice();
  sb.swap(big, 8);
  assert.deepEqual(big, reference(orig, 8));
  // an array outside the buffer's memory is swapped through swapInPlace
  const outside = pattern(40, 1, 2);
  const before = outside.slice();
  sb.swap(outside, 4);
  assert.deepEqual(outside, reference(before, 4));
  assert.throws(() => sb.swap(sb.view(0, 12), 8), RangeError);
  assert.throws(() => sb.swap(sb.view(0, 12), 3), RangeError);
});

Deno.test("byteswap: big-endian float32 values read back through DataView", () => {
  const values = new Float32Array(300).map((_, i) => i * 0.25 - 7);
  const be = new Uint8Array(values.byteLength);
  copySwapped(new Uint8Array(values.buffer), be, 4);
  const dv = new DataView(be.buffer);
  for (let i = 0; i < values.length; i++) assert.equal(dv.getFloat32(i * 4, false), values[i]);
});

Deno.test("byteswap: width 1 copies, bad widths and lengths throw RangeError", () => {
  const src = pattern(7, 0, 1);
  const dst = new Uint8Array(7);
  copySwapped(src, dst, 1);
  assert.deepEqual(dst, src);
  assert.throws(() => copySwapped(pattern(6, 0, 1), new Uint8Array(6), 4), RangeError);
  assert.throws(() => copySwapped(pattern(8, 0, 1), new Uint8Array(8), 3), RangeError);
  assert.throws(() => copySwapped(pattern(8, 0, 1), new Uint8Array(4), 4), RangeError);
});
