/**
 * The framing kit: small helpers every framing and peer shares (element counts, a chunk's bytes,
 * the frame-range check, hex and NUL-terminated strings), written once.
 * @module
 */
import { DTYPE_SIZE } from "./types.ts";
import type { Chunk, TypedArray } from "./types.ts";

const utf8 = new TextDecoder("utf-8");

/**
 * Most objects a native reader indexes in one file: records (f77), variables, dimensions or
 * attributes of a list (netCDF): 2^24 = 16,777,216. Each costs a bounded few dozen bytes of index
 * (f77: 16 bytes a record); a file that declares more is refused in one line before its index
 * is built.
 */
export const MAX_INDEXED_OBJECTS = 1 << 24;

/** Element count of a shape (the product of its dimensions; 1 for a scalar). */
export function elementCount(shape: readonly number[]): number {
  let n = 1;
  for (const d of shape) n *= d;
  return n;
}

/** The bytes of a typed array, as a view (no copy). */
export function bytesOf(a: TypedArray): Uint8Array {
  return new Uint8Array(a.buffer, a.byteOffset, a.byteLength);
}

/** The bytes of a chunk's data, as a view (no copy). */
export function chunkBytes(chunk: Chunk): Uint8Array {
  return bytesOf(chunk.data);
}

/**
 * The byte count a chunk's shape and dtype need; RangeError when its data holds another count.
 */
export function checkChunkSize(chunk: Chunk): number {
  const bytes = elementCount(chunk.shape) * DTYPE_SIZE[chunk.dtype];
  if (chunk.data.byteLength !== bytes) {
    throw new RangeError(
      `chunk '${chunk.name}': shape ${
        chunk.shape.join("x")
      } of ${chunk.dtype} needs ${bytes} bytes, data has ${chunk.data.byteLength}`,
    );
  }
  return bytes;
}

/** Bytes as two-digit hex separated by spaces (`43 44 46 01`). */
export function hexBytes(bytes: Uint8Array): string {
  return Array.from(bytes, (x) => x.toString(16).padStart(2, "0")).join(" ");
}

/** The UTF-8 string in `bytes` up to its first NUL (all of it when there is none). */
export function cStringOf(bytes: Uint8Array): string {
  const end = bytes.indexOf(0);
  return utf8Of(end < 0 ? bytes : bytes.subarray(0, end));
}

/** Longest ASCII string {@link utf8Of} builds itself, bytes. */
const SHORT_ASCII = 256;

/**
 * The UTF-8 string in `bytes`. A short ASCII one (names, header fields) is built from its
 * character codes: a process's first TextDecoder call costs more than a small file's whole open.
 */
export function utf8Of(bytes: Uint8Array): string {
  if (bytes.length <= SHORT_ASCII) {
    let ascii = true;
    for (let i = 0; i < bytes.length; i++) {
      if (bytes[i]! >= 0x80) {
        ascii = false;
        break;
      }
    }
    if (ascii) return String.fromCharCode.apply(null, bytes as unknown as number[]);
  }
  return utf8.decode(bytes);
}
