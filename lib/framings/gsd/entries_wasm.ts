/**
 * The check of a GSD file's used index entries, and their columns, in WebAssembly
 * (tools/gsd_entries.wat): compiled code from the first call, where the same loop in JavaScript
 * starts in V8's interpreter and is optimised only after many entries, so a process's first
 * lookups in a table file would cost several times the later ones inside the read phase they
 * belong to (bench/gsd_first_frame_bench.ts measures both). One instance per process, made once,
 * used by one load at a time (a load runs to its end without yielding).
 * @module
 */
import { NATIVE_ORDER } from "../../bytes/byteswap.ts";

/** tools/gsd_entries.wat compiled by tools/gen_byteswap_wasm.ts (449 bytes). */
const WASM_BASE64 =
  "AGFzbQEAAAABCAFgA39/fwF/AwIBAAUDAQAJBw0CA21lbQIAA3J1bgAACpQDAZEDAwp/CH4BfEEAKQMAIRFBCCkDACESQRApAwAhE0EYKQMAIRRBICsDACEVQSgoAgAhCkEsKAIAIQtBMCgCACEMAkADQEEAIQggASACTw0BQcCgHSABQQV0aiEDIAMpAwAhDSADKQMIIQ4gAykDECEPIAMoAhwhByAHQf//A3EhBkEBIQggBiALTw0BIAZBAnQoAsCACCEFIAVBAEgNAUHAACAFQQV0aiEEIAQoAhQgB0cNASAEKQMAIA5SDQEgBCgCECADKAIYRw0BQQIhCCAAIAFqIQkgDSAUWg0BIA9CAFMNASAPuSAEKwMIoCAVZA0BIAlBAEcEQCANIBFUDQIgDCANIBFRIAYgCklxcQ0CC0EDIQgCQANAIBIgDVYNASASIBN9IRAgEEKAgAFaDQMgEKdBAnQgCTYCwKAZIBJCAXwhEgwACwsgAUEDdCAPuTkDwIAYIAFBAXQgBTsBwIAZIA0hESAGIQogAUEBaiEBDAALC0EAIBE3AwBBCCASNwMAQSggCjYCAEE0IAg2AgAgAQs=";

/** Byte offsets in the module's memory (tools/gsd_entries.wat) and the room of each region. */
export const SCAN = {
  /** prevFrame u64, next u64, base u64, slots u64, size f64, prevId, names, byId, why (u32). */
  STATE: 0,
  /** 32 bytes a kind: N u64, data bytes f64, M u32, last word (id | type << 16) u32. */
  KINDS: 64,
  /** The last kind of each chunk id, i32 (-1: none). */
  LAST: 131136,
  /** Data location of each entry of the block, f64. */
  LOC: 393280,
  /** Kind of each entry of the block, u16. */
  KIND: 409664,
  /** First entry of frames base, base + 1, ..., u32. */
  STARTS: 413760,
  /** The block of entries as stored. */
  BLOCK: 479296,
  /**
   * Entries the block holds (64 KiB: a fresh page is dear to fault in on a virtual machine, so
   * the few pages of a small block, reused, cost less than one large read).
   */
  BLOCK_ENTRIES: 2048,
  /** Frames STARTS holds. */
  STARTS_FRAMES: 16384,
  /** Kinds KINDS holds. */
  KINDS_MAX: 4096,
} as const;

/** Indexes of STATE's u32 words and f64s. */
export const STATE_U32 = {
  PREV_FRAME: 0,
  NEXT: 2,
  BASE: 4,
  SLOTS: 6,
  PREV_ID: 10,
  NAMES: 11,
  BY_ID: 12,
  WHY: 13,
} as const;
/** Index of  among STATE's f64s. */
export const STATE_SIZE_F64 = 4;

/** An instance of the module: its memory as typed arrays, and its function. */
export interface EntryScanner {
  /** The memory as u32 words. */
  readonly u32: Uint32Array;
  /** The memory as i32 words. */
  readonly i32: Int32Array;
  /** The memory as f64s. */
  readonly f64: Float64Array;
  /** The memory as u16s. */
  readonly u16: Uint16Array;
  /** The memory as bytes. */
  readonly u8: Uint8Array;
  /**
   * Checks and adds entries i.. of the block's `count`, the first being entry `e0` of the file;
   * returns the entry it stopped at (`count`: all), why in STATE (see tools/gsd_entries.wat).
   */
  readonly run: (e0: number, i: number, count: number) => number;
}

let state: EntryScanner | null | undefined;
let enabled = true;

/**
 * The process's instance (made at the first call), or null: on a big-endian machine (the memory
 * is little-endian, its typed-array views native), without WebAssembly, or turned off by
 * {@link useEntryScanner}.
 */
export function entryScanner(): EntryScanner | null {
  if (!enabled || NATIVE_ORDER !== "little") return null;
  if (state !== undefined) return state;
  try {
    const bin = atob(WASM_BASE64);
    const bytes = new Uint8Array(bin.length);
    for (let i = 0; i < bin.length; i++) bytes[i] = bin.charCodeAt(i);
    const ex = new WebAssembly.Instance(new WebAssembly.Module(bytes), {}).exports as Record<
      string,
      unknown
    >;
    const buf = (ex.mem as WebAssembly.Memory).buffer;
    state = {
      u32: new Uint32Array(buf),
      i32: new Int32Array(buf),
      f64: new Float64Array(buf),
      u16: new Uint16Array(buf),
      u8: new Uint8Array(buf),
      run: ex.run as (e0: number, i: number, count: number) => number,
    };
  } catch {
    state = null; // no WebAssembly here: the JavaScript loop is used
  }
  return state;
}

/**
 * Turns the WebAssembly check on (the default) or off (the JavaScript loop; for tests, which run
 * both); returns whether it was on.
 */
export function useEntryScanner(on: boolean): boolean {
  const was = enabled;
  enabled = on;
  return was;
}
