/**
 * The used index entries of a GSD file as columns, built in one pass at the first lookup: the
 * first entry of every frame (so a frame's entries are found without a search), each entry's
 * data location, and each entry's kind, the (N, M, id, type) it shares with the same chunk of
 * other frames. About 10 bytes an entry and 4 a frame, against the 32 of an entry on disk;
 * entries whose kinds do not repeat (a trajectory whose N changes every frame) are kept as they
 * are on disk instead. The entries are checked and added by the WebAssembly module of
 * entries_wasm.ts ({@link EntryColumns.addScanned}), or where it is missing in JavaScript
 * ({@link EntryColumns.add}, after the caller's check).
 * @module
 */
import { TWO32, TYPE_BYTES } from "./format.ts";
import { type EntryScanner, SCAN, STATE_SIZE_F64, STATE_U32 } from "./entries_wasm.ts";

/** Kinds kept before the columns give up and keep the entries whole. */
const MAX_KINDS = SCAN.KINDS_MAX;

/** What an index entry is checked against (gsd 2.7's validity check, and the index order). */
export interface EntryLimits {
  /** Largest type code. */
  readonly maxType: number;
  /** File size, bytes. */
  readonly size: number;
  /** Index slots (frames are below it). */
  readonly slots: number;
  /** Names in the name list (ids are below it). */
  readonly nameCount: number;
  /** Sorted by (frame, id) (file layer 2.x), else by frame only. */
  readonly byId: boolean;
}

/** What {@link EntryColumns.addScanned} did with a block. */
export const Added = {
  /** Every entry was valid and in order, and is added. */
  All: 0,
  /** An entry is not valid or not in order (the caller names it); the columns are unusable. */
  Bad: 1,
  /** The kinds stopped repeating: nothing more is added (the caller keeps the entries whole). */
  Whole: 2,
} as const;

/** One of {@link Added}'s values. */
export type Added = typeof Added[keyof typeof Added];

/** u64 STATE word pair `at` of the scanner as a number. */
function u64At(sc: EntryScanner, at: number): number {
  return sc.u32[at]! + sc.u32[at + 1]! * TWO32;
}

/** Sets u64 STATE word pair `at` of the scanner to `x` (an integer below 2^53). */
function setU64(sc: EntryScanner, at: number, x: number): void {
  sc.u32[at] = x % TWO32;
  sc.u32[at + 1] = Math.floor(x / TWO32);
}

/**
 * Readies the scanner for the entries of one file: no entry before, no frame started, the
 * limits, no kind known for any id.
 */
export function startScan(sc: EntryScanner, c: EntryLimits): void {
  sc.u32.fill(0, 0, SCAN.KINDS / 4);
  setU64(sc, STATE_U32.SLOTS, c.slots);
  sc.f64[STATE_SIZE_F64] = c.size;
  sc.u32[STATE_U32.NAMES] = c.nameCount;
  sc.u32[STATE_U32.BY_ID] = c.byId ? 1 : 0;
  sc.i32.fill(-1, SCAN.LAST / 4, SCAN.LAST / 4 + Math.min(c.nameCount, 65536));
}

/** The frame and chunk id of the last entry the scanner added (0, 0 before the first). */
export function scannedLast(sc: EntryScanner): { frame: number; id: number } {
  return { frame: u64At(sc, STATE_U32.PREV_FRAME), id: sc.u32[STATE_U32.PREV_ID]! };
}

/** The entries of `frames` frames, added a run at a time in index order by {@link add}. */
export class EntryColumns {
  /** Entry number of each frame's first entry; frame f has entries [start[f], start[f + 1]). */
  readonly frameStart: Uint32Array;
  /** Data location of each entry, bytes. */
  readonly location: Float64Array;
  /** Kind of each entry (an index into the kind columns), while the kinds repeat. */
  #kind: Uint16Array | null;
  /** The entries whole (8 native u32 words each), once the kinds stopped repeating. */
  #words: Uint32Array | null = null;
  /** Kind columns: N, M, and the entry's last word (id | type << 16). */
  readonly #kindN: number[] = [];
  readonly #kindM: number[] = [];
  readonly #kindTail: number[] = [];
  /** The last kind made for each chunk id (-1: none yet). */
  readonly #lastById: Int32Array;
  #added = 0;
  #nextFrame = 0;

  /** Room for `entries` entries of `frames` frames whose ids are below `names`. */
  constructor(entries: number, frames: number, names: number) {
    this.frameStart = new Uint32Array(frames + 1);
    this.location = new Float64Array(entries);
    this.#kind = new Uint16Array(entries);
    this.#lastById = new Int32Array(Math.max(1, names)).fill(-1);
  }

  /** Entries added so far. */
  get added(): number {
    return this.#added;
  }

  /**
   * Adds the run of entries `w` (8 native u32 words each, checked and sorted by frame); returns
   * false, adding nothing more, once their kinds stop repeating (the caller then keeps whole
   * entries with {@link keepWhole}).
   */
  add(w: Uint32Array): boolean {
    const count = w.length / 8;
    const start = this.frameStart, location = this.location, kind = this.#kind;
    if (kind === null) return false;
    let e = this.#added;
    for (let i = 0, q = 0; i < count; i++, q += 8, e++) {
      const frame = w[q]! + w[q + 1]! * TWO32;
      while (this.#nextFrame <= frame) start[this.#nextFrame++] = e;
      location[e] = w[q + 4]! + (w[q + 5]! | 0) * TWO32;
      const k = this.#kindOf(w[q + 2]! + w[q + 3]! * TWO32, w[q + 6]!, w[q + 7]!);
      if (k < 0) {
        this.#kind = null;
        return false;
      }
      kind[e] = k;
    }
    this.#added = e;
    return true;
  }

  /**
   * Checks and adds the `count` entries in the scanner's block (the next ones in index order,
   * after {@link startScan}): the module checks each entry of a kind it knows (the same N, M,
   * id, type and flags as an entry checked before: its frame, data range and order) and adds
   * it; an entry of no known kind comes back here, where its type, id and flags are checked and
   * its kind made. Returns {@link Added.All}, {@link Added.Bad} at the first bad entry (the
   * caller names it; the columns are then unusable), or {@link Added.Whole} once the kinds stop
   * repeating (nothing more is added).
   */
  addScanned(sc: EntryScanner, count: number, c: EntryLimits): Added {
    const kind = this.#kind;
    if (kind === null) return Added.Whole;
    const e0 = this.#added;
    const w = sc.u32;
    for (let i = 0;;) {
      i = sc.run(e0, i, count);
      const why = w[STATE_U32.WHY];
      if (why === 0) break;
      if (why === 2) return Added.Bad;
      if (why === 3) {
        this.#takeStarts(sc);
        continue;
      }
      // no kind known for entry i: its last word checked, its kind found or made
      const q = SCAN.BLOCK / 4 + i * 8;
      const tail = w[q + 7]!;
      const type = (tail >>> 16) & 0xff;
      const id = tail & 0xffff;
      if (!(type >= 1 && type <= c.maxType) || id >= c.nameCount || tail >>> 24 !== 0) {
        return Added.Bad;
      }
      const k = this.#kindOf(w[q + 2]! + w[q + 3]! * TWO32, w[q + 6]!, tail);
      if (k < 0) {
        this.#kind = null;
        return Added.Whole;
      }
      const at = SCAN.KINDS / 4 + k * 8;
      w[at] = w[q + 2]!;
      w[at + 1] = w[q + 3]!;
      sc.f64[at / 2 + 1] = this.#kindN[k]! * this.#kindM[k]! * TYPE_BYTES[type]!;
      w[at + 4] = w[q + 6]!;
      w[at + 5] = tail;
      sc.i32[SCAN.LAST / 4 + id] = k;
    }
    this.location.set(sc.f64.subarray(SCAN.LOC / 8, SCAN.LOC / 8 + count), e0);
    kind.set(sc.u16.subarray(SCAN.KIND / 2, SCAN.KIND / 2 + count), e0);
    this.#takeStarts(sc);
    this.#added = e0 + count;
    return Added.All;
  }

  /** Moves the frame starts the scanner holds into `frameStart`; it starts again at the next. */
  #takeStarts(sc: EntryScanner): void {
    const base = u64At(sc, STATE_U32.BASE);
    const next = u64At(sc, STATE_U32.NEXT);
    const from = SCAN.STARTS / 4;
    // (frames past the last entry's only in an index out of order, which the caller rejects)
    const n = Math.min(next, this.frameStart.length) - base;
    if (n > 0) this.frameStart.set(sc.u32.subarray(from, from + n), base);
    setU64(sc, STATE_U32.BASE, next);
    this.#nextFrame = next;
  }

  /** Keeps all entries whole instead (`w`, every used entry); the frame starts are rebuilt. */
  keepWhole(w: Uint32Array): void {
    this.#kind = null;
    this.#words = w;
    this.#nextFrame = 0;
    const count = w.length / 8;
    for (let e = 0, q = 0; e < count; e++, q += 8) {
      const frame = w[q]! + w[q + 1]! * TWO32;
      while (this.#nextFrame <= frame) this.frameStart[this.#nextFrame++] = e;
      this.location[e] = w[q + 4]! + (w[q + 5]! | 0) * TWO32;
    }
    this.#added = count;
  }

  /** Ends the columns: the frames after the last entry's start (and the end) at the entry count. */
  finish(): void {
    while (this.#nextFrame < this.frameStart.length) {
      this.frameStart[this.#nextFrame++] = this.#added;
    }
  }

  /** N (rows) of entry `e`. */
  n(e: number): number {
    const w = this.#words;
    return w ? w[e * 8 + 2]! + w[e * 8 + 3]! * TWO32 : this.#kindN[this.#kind![e]!]!;
  }

  /** M (columns) of entry `e`. */
  m(e: number): number {
    return this.#words ? this.#words[e * 8 + 6]! : this.#kindM[this.#kind![e]!]!;
  }

  /** Last word of entry `e`: id | type << 16 (flags are 0). */
  tail(e: number): number {
    return this.#words ? this.#words[e * 8 + 7]! : this.#kindTail[this.#kind![e]!]!;
  }

  /** Kind of (n, m, tail): the id's last kind, or a new one; -1 when there are too many. */
  #kindOf(n: number, m: number, tail: number): number {
    const id = tail & 0xffff;
    const last = this.#lastById[id]!;
    if (
      last >= 0 && this.#kindN[last] === n && this.#kindM[last] === m &&
      this.#kindTail[last] === tail
    ) return last;
    // a kind seen before, not last for this id (a chunk whose N alternates)
    for (let k = this.#kindN.length - 1; k >= 0; k--) {
      if (this.#kindTail[k] === tail && this.#kindN[k] === n && this.#kindM[k] === m) {
        this.#lastById[id] = k;
        return k;
      }
    }
    if (this.#kindN.length >= MAX_KINDS) return -1;
    this.#kindN.push(n);
    this.#kindM.push(m);
    this.#kindTail.push(tail);
    this.#lastById[id] = this.#kindN.length - 1;
    return this.#kindN.length - 1;
  }
}
