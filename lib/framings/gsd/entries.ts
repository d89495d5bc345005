/**
 * The used index entries of a GSD file as columns, built in one pass at the first lookup: the
 * first entry of every frame (so a frame's entries are found without a search), each entry's
 * data location, and each entry's kind, the (N, M, id, type) it shares with the same chunk of
 * other frames. About 10 bytes an entry and 4 a frame, against the 32 of an entry on disk;
 * entries whose kinds do not repeat (a trajectory whose N changes every frame) are kept as they
 * are on disk instead.
 * @module
 */
import { TWO32 } from "./format.ts";

/** Kinds kept before the columns give up and keep the entries whole. */
const MAX_KINDS = 4096;

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
