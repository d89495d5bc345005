/**
 * The chunk names of IEEEIO files (the values of `name` attributes), interned: an open keeps one
 * copy of each distinct name, compared as bytes where it lies in the file before any string is
 * made, and the process keeps the first names its opens met, so that an open of one of a table's
 * files, which repeat theirs, decodes none. Also the byte comparison the scan tells names apart
 * with.
 * @module
 */
import { cStringOf } from "../kit.ts";

/** Distinct shapes and names the scan compares directly before making a key. */
export const RECENT = 8;

/** Bytes the scan compares records with, and their whole 4-byte words (big-endian int32s). */
export interface KnownBytes {
  readonly bytes: Uint8Array;
  readonly words: Int32Array;
}

/** `bytes` as {@link KnownBytes}. */
export function knownBytes(bytes: Uint8Array): KnownBytes {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const words = new Int32Array(bytes.length >> 2);
  for (let w = 0; w < words.length; w++) words[w] = view.getInt32(4 * w);
  return { bytes, words };
}

/**
 * True when `bytes` (and `view`, a DataView of it) hold the bytes of `known` at byte `at`,
 * compared a word (one DataView call) at a time.
 */
export function sameBytesAt(
  bytes: Uint8Array,
  view: DataView,
  at: number,
  known: KnownBytes,
): boolean {
  const words = known.words;
  let w = 0;
  while (w < words.length && words[w] === view.getInt32(at + 4 * w)) w++;
  if (w < words.length) return false;
  const tail = known.bytes;
  let i = 4 * w;
  while (i < tail.length && tail[i] === bytes[at + i]) i++;
  return i === tail.length;
}

/** Names the process's opens met (at most PROCESS_NAMES): an open meeting one again decodes none. */
const PROCESS_NAMES = 16;
/** Longest name (stored bytes) kept for the process's later opens. */
const PROCESS_NAME_BYTES = 256;
/** The stored bytes of the names in {@link processNames}, in the same order. */
const processNameBytes: KnownBytes[] = [];
/** Decoded names (strings are immutable: every index can share them). */
const processNames: string[] = [];

/**
 * One copy of each distinct chunk name (the value of a `name` attribute), by id. A name is
 * compared as bytes with the first few known (no string made) before it is decoded, and then
 * with the names earlier opens decoded (a table's files repeat theirs: no decode, no copy).
 */
export class NameTable {
  /** Names by id. */
  readonly names: string[] = [];
  readonly #ids = new Map<string, number>();
  /** The stored bytes of the first few names met, and their ids. */
  readonly #recentBytes: KnownBytes[] = [];
  readonly #recentIds: number[] = [];

  /**
   * Id of the name stored in `bytes[at, at + length)` (UTF-8, up to its first NUL); `view` is a
   * DataView of `bytes`.
   */
  id(bytes: Uint8Array, view: DataView, at: number, length: number): number {
    const recent = this.#recentBytes;
    for (let k = 0; k < recent.length; k++) {
      const known = recent[k]!;
      if (known.bytes.length === length && sameBytesAt(bytes, view, at, known)) {
        return this.#recentIds[k]!;
      }
    }
    let known: KnownBytes | undefined;
    let name: string | undefined;
    for (let k = 0; k < processNameBytes.length; k++) {
      const p = processNameBytes[k]!;
      // mutant: ieeeio-name-intern
      if (p.bytes.length === length && sameBytesAt(bytes, view, at, p)) {
        known = p;
        name = processNames[k]!;
        break;
      }
    }
    if (known === undefined || name === undefined) {
      const raw = bytes.subarray(at, at + length);
      name = cStringOf(raw);
      known = knownBytes(raw.slice());
      if (processNameBytes.length < PROCESS_NAMES && length <= PROCESS_NAME_BYTES) {
        processNameBytes.push(known);
        processNames.push(name);
      }
    }
    let id = this.#ids.get(name);
    if (id === undefined) {
      id = this.names.push(name) - 1;
      this.#ids.set(name, id);
    }
    if (recent.length < RECENT) {
      recent.push(known);
      this.#recentIds.push(id);
    }
    return id;
  }
}
