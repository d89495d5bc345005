/**
 * Byte-order conversion of element arrays (2-, 4- and 8-byte elements), and the machine's order.
 *
 * Large arrays go through a small WebAssembly SIMD module (`i8x16.swizzle`, 16 bytes per
 * instruction, source in tools/byteswap.wat, bytes made by tools/gen_byteswap_wasm.ts): the data is
 * copied into the module's memory in 64 KiB blocks, reversed there and copied out, which works for
 * any alignment. Short arrays, and engines without WebAssembly SIMD, use a DataView loop. Measured
 * in bench/byteswap_bench.ts.
 * @module
 */

/** Byte order of data on disk. */
export type ByteOrder = "little" | "big";

/** The byte order of this machine (`little` on x86-64 and aarch64 Linux). */
export const NATIVE_ORDER: ByteOrder = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1
  ? "little"
  : "big";

/** tools/byteswap.wat compiled by tools/gen_byteswap_wasm.ts (310 bytes). */
const WASM_BASE64 =
  "AGFzbQEAAAABDAJgA39/ewBgAn9/AAMFBAABAQEFAwEABAcfBANtZW0CAAVzd2FwMgABBXN3YXA0AAIFc3dhcDgAAwrwAQScAQECfyAAIAFqIQMgACABQUBxaiEEAkAgACAETw0AA0AgACAA/QAEACAC/Q79CwQAIAAgAP0ABBAgAv0O/QsEECAAIAD9AAQgIAL9Dv0LBCAgACAA/QAEMCAC/Q79CwQwIABBwABqIQAgACAESQ0ACwsCQCAAIANPDQADQCAAIAD9AAQAIAL9Dv0LBAAgAEEQaiEAIAAgA0kNAAsLCxoAIAAgAf0MAQADAgUEBwYJCAsKDQwPDhAACxoAIAAgAf0MAwIBAAcGBQQLCgkIDw4NDBAACxoAIAAgAf0MBwYFBAMCAQAPDg0MCwoJCBAACw==";

/** Bytes per block copied through the WebAssembly memory (the module has 4 x 64 KiB pages). */
const BLOCK = 65536;

/** Below this many bytes the DataView loop is faster than the copy in and out of WebAssembly. */
const WASM_MIN_BYTES = 64;

type SwapFn = (pointer: number, bytes: number) => void;

interface SimdSwapper {
  readonly mem: Uint8Array;
  readonly swap: Readonly<Record<2 | 4 | 8, SwapFn>>;
}

/** The compiled module (one per process; each instance has its own memory), or null. */
let moduleState: WebAssembly.Module | null | undefined;

function simdModule(): WebAssembly.Module | null {
  if (moduleState !== undefined) return moduleState;
  try {
    const bin = atob(WASM_BASE64);
    const bytes = new Uint8Array(bin.length);
    for (let i = 0; i < bin.length; i++) bytes[i] = bin.charCodeAt(i);
    moduleState = new WebAssembly.Module(bytes);
  } catch {
    moduleState = null; // no WebAssembly SIMD here: the DataView path is used
  }
  return moduleState;
}

/** A new instance of the module with its own memory, self-checked; null without SIMD. */
function instantiate(): { memory: WebAssembly.Memory; swap: Record<2 | 4 | 8, SwapFn> } | null {
  const module = simdModule();
  if (module === null) return null;
  try {
    const ex = new WebAssembly.Instance(module, {}).exports as Record<string, unknown>;
    const memory = ex.mem as WebAssembly.Memory;
    const swap = { 2: ex.swap2 as SwapFn, 4: ex.swap4 as SwapFn, 8: ex.swap8 as SwapFn };
    // Self-check once, so a broken engine falls back instead of corrupting data.
    const mem = new Uint8Array(memory.buffer);
    mem.set([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16]);
    swap[8](0, 16);
    return mem[0] === 8 && mem[8] === 16 && mem[15] === 9 ? { memory, swap } : null;
  } catch {
    return null;
  }
}

function loadSimd(): SimdSwapper | null {
  const inst = instantiate();
  return inst && { mem: new Uint8Array(inst.memory.buffer), swap: inst.swap };
}

let simdState: SimdSwapper | null | undefined;

function simd(): SimdSwapper | null {
  if (simdState === undefined) simdState = loadSimd();
  return simdState;
}

/** True when the WebAssembly SIMD path is in use (false means the DataView fallback). */
export function simdAvailable(): boolean {
  return simd() !== null;
}

/** Reverses the bytes of every `width`-byte element of `bytes` in place; width 1 is a no-op. */
export function swapInPlace(bytes: Uint8Array, width: number): void {
  copySwapped(bytes, bytes, width);
}

/**
 * Writes `src` with every `width`-byte element byte-reversed into `dst` (same length or longer;
 * either the same array as `src` or not overlapping it). Widths 1, 2, 4, 8. Throws RangeError
 * when the length is not a multiple of `width` or `dst` is too short.
 */
export function copySwapped(src: Uint8Array, dst: Uint8Array, width: number): void {
  const n = src.length;
  if (width !== 1 && width !== 2 && width !== 4 && width !== 8) {
    throw new RangeError(`cannot swap ${width}-byte elements`);
  }
  if (n % width !== 0) {
    throw new RangeError(`${n} bytes is not a whole number of ${width}-byte elements`);
  }
  if (dst.length < n) throw new RangeError(`destination holds ${dst.length} bytes, need ${n}`);
  if (width === 1) {
    if (dst !== src) dst.set(src);
    return;
  }
  const s = n >= WASM_MIN_BYTES ? simd() : null;
  if (s === null) {
    swapDataView(src, dst, width);
    return;
  }
  const mem = s.mem;
  const swap = s.swap[width];
  for (let o = 0; o < n; o += BLOCK) {
    const len = Math.min(BLOCK, n - o);
    mem.set(src.subarray(o, o + len));
    swap(0, (len + 15) & ~15); // bytes past len are scratch
    dst.set(mem.subarray(0, len), o);
  }
}

/**
 * The portable path: one DataView read and write per element (V8 compiles these to single
 * loads and stores with a byte swap). Exported for the benchmark and tests.
 */
export function swapDataView(src: Uint8Array, dst: Uint8Array, width: 2 | 4 | 8): void {
  const n = src.length;
  const s = new DataView(src.buffer, src.byteOffset, n);
  const d = new DataView(dst.buffer, dst.byteOffset, n);
  if (width === 2) {
    for (let i = 0; i < n; i += 2) d.setUint16(i, s.getUint16(i, true), false);
  } else if (width === 4) {
    for (let i = 0; i < n; i += 4) d.setUint32(i, s.getUint32(i, true), false);
  } else {
    for (let i = 0; i < n; i += 8) {
      const lo = s.getUint32(i, true);
      d.setUint32(i, s.getUint32(i + 4, true), false);
      d.setUint32(i + 4, lo, false);
    }
  }
}

/** WebAssembly page size, bytes. */
const WASM_PAGE = 65536;

/**
 * A reusable byte buffer inside a WebAssembly memory of its own, whose elements are byte-reversed
 * in place in one pass over memory. `copySwapped` copies data into the module's memory and back
 * out (three passes); a reader that reads straight into a SwapBuffer needs only the one.
 * Measured in bench/read_path_bench.ts.
 */
export class SwapBuffer {
  readonly #memory: WebAssembly.Memory;
  readonly #swap: Readonly<Record<2 | 4 | 8, SwapFn>>;
  #bytes: Uint8Array;

  private constructor(memory: WebAssembly.Memory, swap: Record<2 | 4 | 8, SwapFn>) {
    this.#memory = memory;
    this.#swap = swap;
    this.#bytes = new Uint8Array(memory.buffer);
  }

  /** A new SwapBuffer, or null where WebAssembly SIMD is missing (use `swapInPlace` then). */
  static create(): SwapBuffer | null {
    const inst = instantiate();
    return inst && new SwapBuffer(inst.memory, inst.swap);
  }

  /**
   * `length` bytes of the buffer from byte `start` (its address is 64 KiB-aligned plus `start`).
   * The memory grows as needed, which invalidates every view handed out before.
   */
  view(start: number, length: number): Uint8Array {
    const need = start + length;
    if (need > this.#bytes.length) {
      this.#memory.grow(Math.ceil((need - this.#bytes.length) / WASM_PAGE));
      this.#bytes = new Uint8Array(this.#memory.buffer);
    }
    return this.#bytes.subarray(start, need);
  }

  /**
   * Reverses the bytes of every `width`-byte element of `bytes` in place (1, 2, 4, 8): in the
   * module's memory when `bytes` is a view of this buffer, else through `swapInPlace`. Throws
   * RangeError when the length is not a multiple of `width`.
   */
  swap(bytes: Uint8Array, width: number): void {
    if (bytes.buffer !== this.#memory.buffer || width === 1) {
      swapInPlace(bytes, width);
      return;
    }
    if (width !== 2 && width !== 4 && width !== 8) {
      throw new RangeError(`cannot swap ${width}-byte elements`);
    }
    const n = bytes.length;
    if (n % width !== 0) {
      throw new RangeError(`${n} bytes is not a whole number of ${width}-byte elements`);
    }
    const vectors = n & ~15; // whole 16-byte vectors: the bytes past the view are not touched
    if (vectors > 0) this.#swap[width](bytes.byteOffset, vectors);
    if (vectors < n) {
      const tail = bytes.subarray(vectors);
      swapDataView(tail, tail, width);
    }
  }
}
