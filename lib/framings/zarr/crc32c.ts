/**
 * CRC-32C (Castagnoli, reflected polynomial 0x82F63B78), the checksum of Zarr v3's `crc32c`
 * codec and of a shard index: table-driven slicing-by-8, eight bytes a step through two 32-bit
 * words of an aligned Uint32Array view (little-endian machines), one byte a step only for the
 * unaligned head and the tail.
 * @module
 */
import { NATIVE_ORDER } from "../../bytes/byteswap.ts";

/** The eight 256-entry tables of slicing-by-8: table k advances a byte k places further. */
const TABLES: Uint32Array = (() => {
  const t = new Uint32Array(8 * 256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? (c >>> 1) ^ 0x82f63b78 : c >>> 1;
    t[n] = c;
  }
  for (let n = 0; n < 256; n++) {
    let c = t[n]!;
    for (let k = 1; k < 8; k++) {
      c = t[c & 0xff]! ^ (c >>> 8);
      t[k * 256 + n] = c;
    }
  }
  return t;
})();

/**
 * The CRC-32C of `data` continued from `crc` (the value of the bytes before it; 0 to start),
 * as an unsigned 32-bit integer.
 */
export function crc32c(data: Uint8Array, crc = 0): number {
  const t = TABLES;
  let c = ~crc >>> 0;
  let i = 0;
  const end = data.length;
  if (NATIVE_ORDER === "little") {
    // bytes one at a time up to a 4-byte boundary of the buffer, then 8 a step as words
    const head = Math.min(end, (4 - ((data.byteOffset) & 3)) & 3);
    for (; i < head; i++) c = t[(c ^ data[i]!) & 0xff]! ^ (c >>> 8);
    const words = (end - i) >>> 3;
    if (words > 0) {
      const w = new Uint32Array(data.buffer, data.byteOffset + i, words * 2);
      for (let k = 0; k < w.length; k += 2) {
        const a = w[k]! ^ c;
        const b = w[k + 1]!;
        c = t[1792 + (a & 0xff)]! ^ t[1536 + ((a >>> 8) & 0xff)]! ^
          t[1280 + ((a >>> 16) & 0xff)]! ^ t[1024 + (a >>> 24)]! ^
          t[768 + (b & 0xff)]! ^ t[512 + ((b >>> 8) & 0xff)]! ^
          t[256 + ((b >>> 16) & 0xff)]! ^ t[b >>> 24]!;
      }
      i += words * 8;
    }
  }
  for (; i < end; i++) c = t[(c ^ data[i]!) & 0xff]! ^ (c >>> 8);
  return ~c >>> 0;
}
