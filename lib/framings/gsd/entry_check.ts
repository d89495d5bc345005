/**
 * GSD index entries as words, and their checks: gsd 2.7's validity check of one entry (a known
 * type, data inside the file, a frame below the index size, an id in the name list, no flags),
 * the order of a run of entries, and the FormatError that says what is wrong with a bad one.
 * @module
 */
import { copySwapped, NATIVE_ORDER } from "../../bytes/byteswap.ts";
import type { ByteSource } from "../types.ts";
import type { EntryLimits } from "./entries.ts";
import { CODE_DTYPE, ENTRY_BYTES, packVersion, TWO32, TYPE_BYTES } from "./format.ts";
import { failAt, type GsdHeader, sortedById } from "./header.ts";

// Fields of the index entry at word q of the entry words w (gsd_index_entry: frame u64, N u64,
// location i64, M u32, id u16, type u8, flags u8).

/** The frame of the entry at word q of `w`. */
export function entryFrame(w: Uint32Array, q: number): number {
  return w[q]! + w[q + 1]! * TWO32;
}
/** N (rows) of the entry at word q of `w`. */
function entryN(w: Uint32Array, q: number): number {
  return w[q + 2]! + w[q + 3]! * TWO32;
}
/** The data location of the entry at word q of `w` (0: an empty slot). */
export function entryLocation(w: Uint32Array, q: number): number {
  return w[q + 4]! + (w[q + 5]! | 0) * TWO32;
}

/** Largest type code of a file layer: 11 (char) needs 2.1. */
function maxTypeCode(header: GsdHeader): number {
  return header.gsdVersion >= packVersion(2, 1) ? 11 : 10;
}

/**
 * The entries of `bytes` (32 each) as native u32 words: a view when the bytes are 4-byte aligned
 * on a little-endian machine, else a copy (swapped to native words on a big-endian one).
 */
export function nativeWords(bytes: Uint8Array): Uint32Array {
  if (NATIVE_ORDER === "little" && bytes.byteOffset % 4 === 0) {
    return new Uint32Array(bytes.buffer, bytes.byteOffset, bytes.length / 4);
  }
  const w = new Uint32Array(bytes.length / 4);
  const b = new Uint8Array(w.buffer);
  b.set(bytes);
  if (NATIVE_ORDER === "big") copySwapped(b, b, 4);
  return w;
}

/** What an index entry is checked against: the header, the name count, the file size. */
export interface EntryCheck {
  /** The file's header. */
  readonly header: GsdHeader;
  /** Names in the name list. */
  readonly nameCount: number;
  /** File size, bytes. */
  readonly size: number;
}

/**
 * gsd 2.7's check of one index entry (at word q of `w`): a known type, data inside the file, a
 * frame below the index size, an id in the name list, no flags.
 */
export function validEntry(w: Uint32Array, q: number, c: EntryLimits): boolean {
  const tail = w[q + 7]!;
  const type = (tail >>> 16) & 0xff;
  const location = entryLocation(w, q);
  return type >= 1 && type <= c.maxType && location >= 0 &&
    location + entryN(w, q) * w[q + 6]! * TYPE_BYTES[type]! <= c.size &&
    entryFrame(w, q) < c.slots && (tail & 0xffff) < c.nameCount && tail >>> 24 === 0;
}

/** The limits an entry of the file `c` describes is checked against. */
export function limitsOf(c: EntryCheck): EntryLimits {
  return {
    maxType: maxTypeCode(c.header),
    size: c.size,
    slots: c.header.indexSlots,
    nameCount: c.nameCount,
    byId: sortedById(c.header),
  };
}

/** What {@link checkEntryRun} checks against, and the entry before its run. */
export interface RunCheck {
  /** The file's header. */
  readonly header: GsdHeader;
  /** Names in the name list. */
  readonly nameCount: number;
  /** The file. */
  readonly source: ByteSource;
  /** Frame of the entry before the run. */
  prevFrame: number;
  /** Chunk id of the entry before the run. */
  prevId: number;
}

/**
 * Checks the run of used index entries `w` that starts at entry `base` (after the entry in `at`,
 * when base > 0) as gsd 2.7 checks the ones its binary search probes ({@link validEntry}), and
 * that they are sorted (by (frame, id) in 2.x, by frame before); leaves the run's last entry in
 * `at`. The fast test runs per entry, the message is built only for a bad one ({@link badEntry}).
 */
export function checkEntryRun(w: Uint32Array, base: number, at: RunCheck): void {
  const check = limitsOf({ header: at.header, nameCount: at.nameCount, size: at.source.size });
  const v2 = sortedById(at.header);
  const used = w.length / 8;
  let prevFrame = at.prevFrame, prevId = at.prevId;
  for (let i = 0, q = 0; i < used; i++, q += 8) {
    const frame = entryFrame(w, q);
    const id = w[q + 7]! & 0xffff;
    if (
      !validEntry(w, q, check) ||
      (base + i > 0 && (frame < prevFrame || (v2 && frame === prevFrame && id < prevId)))
    ) {
      badEntry(w, i, { ...at, base, prevFrame, prevId });
    }
    prevFrame = frame;
    prevId = id;
  }
  at.prevFrame = prevFrame;
  at.prevId = prevId;
}

/** Throws the FormatError that says what is wrong with index entry `i` (see {@link checkEntryRun}). */
function badEntry(
  w: Uint32Array,
  i: number,
  at: {
    header: GsdHeader;
    nameCount: number;
    source: ByteSource;
    prevFrame: number;
    prevId: number;
    /** Entry number of w's first entry (default 0). */
    base?: number;
  },
): never {
  const { header, nameCount, source, prevFrame, prevId } = at;
  const bad = failAt(source.path);
  const size = source.size;
  const q = i * 8;
  i += at.base ?? 0;
  const offset = header.indexLocation + i * ENTRY_BYTES;
  const frame = entryFrame(w, q);
  const n = entryN(w, q);
  const location = entryLocation(w, q);
  const m = w[q + 6]!;
  const id = w[q + 7]! & 0xffff;
  const type = (w[q + 7]! >>> 16) & 0xff;
  const flags = w[q + 7]! >>> 24;
  const maxType = maxTypeCode(header);
  const what = `index entry ${i} (frame ${frame}, chunk id ${id})`;
  if (type < 1 || type > maxType) {
    bad(
      offset + 30,
      `${what}: unknown type code ${type} (known: 1..${maxType}${
        maxType === 10 ? "; 11 needs file layer 2.1" : ""
      })`,
    );
  }
  const bytes = n * m * TYPE_BYTES[type]!;
  if (location < 0 || location + bytes > size) {
    bad(
      offset + 16,
      `${what}: data [${location}, ${location + bytes}) of ${n} x ${m} ${
        CODE_DTYPE[type]
      } lies outside the file (${size} bytes)`,
    );
  }
  if (frame >= header.indexSlots) {
    bad(offset, `${what}: frame ${frame} is not below the index size ${header.indexSlots}`);
  }
  if (id >= nameCount) {
    bad(offset + 28, `${what}: chunk id ${id} but the name list holds ${nameCount} names`);
  }
  if (flags !== 0) bad(offset + 31, `${what}: flags 0x${flags.toString(16)}, expected 0`);
  return bad(
    offset,
    `${what}: index entries are not sorted by ${
      sortedById(header) ? "(frame, id)" : "frame"
    }; entry ${i - 1} has frame ${prevFrame}, id ${prevId}`,
  );
}
