/**
 * The f77 record scan: one forward pass over the markers of a file with a given marker width and
 * byte order, every marker checked, into a table of where the records and their subrecords are.
 * @module
 */
import { FormatError } from "../../core/errors.ts";
import { type ByteOrder, type ByteSource } from "../types.ts";
import { MAX_INDEXED_OBJECTS } from "../kit.ts";
import { FORMAT, int64At, type MarkerWidth } from "./format.ts";

/** Records below this size (bytes) make the scanner read markers in 64 KiB windows. */
const SMALL_RECORD = 4096;
/** Window read for dense small records, in bytes. */
const WINDOW = 1 << 16;

/** What a marker detection read already, for a scan to start from (DetectionReads). */
export interface SeedReads {
  /** The file's first bytes. */
  readonly head: Uint8Array;
  /** Bytes it read past them, each from byte `start` of the file. */
  readonly far: readonly { start: number; bytes: Uint8Array }[];
}

/**
 * A growing list of byte offsets or sizes in a Float64Array (8 bytes each, exact below 2^53):
 * a file of millions of records holds no JavaScript array of them.
 */
export class Offsets {
  #a: Float64Array;
  /** Number of values held. */
  length = 0;

  constructor(capacity = 1024) {
    this.#a = new Float64Array(capacity);
  }

  /** Appends `v`. */
  push(v: number): void {
    if (this.length === this.#a.length) {
      const grown = new Float64Array(this.#a.length * 2);
      grown.set(this.#a);
      this.#a = grown;
    }
    this.#a[this.length++] = v;
  }

  /** Value `i` (in [0, length)). */
  at(i: number): number {
    return this.#a[i]!;
  }
}

/** Where the records of a file are: one forward scan of the markers. */
export interface RecordTable {
  /** Marker width and byte order the table was read with. */
  readonly w: MarkerWidth;
  readonly order: ByteOrder;
  /** Offset of each record's first payload byte. */
  readonly starts: Offsets;
  /** Payload bytes of each record (all subrecords). */
  readonly sizes: Offsets;
  /** [offset, length] of every subrecord, for records split into more than one. */
  readonly pieces: Map<number, [number, number][]>;
  /** Total number of subrecords in the file. */
  subrecords: number;
}

/** No bytes, and a view of them: what a reader starts from (no array made an open). */
export const NO_BYTES = new Uint8Array(0);
export const NO_VIEW: DataView = new DataView(NO_BYTES.buffer);

/**
 * Reads markers in place through the source's window where it has one (a mapping: no system
 * call and no copy per record), else through reads, so dense small records cost one read per
 * 64 KiB.
 */
class MarkerReader {
  #buf: Uint8Array = NO_BYTES;
  /** A view of #buf's whole ArrayBuffer (kept while windows come from the same buffer). */
  #view = NO_VIEW;
  /** Offset of #buf in #view. */
  #base = 0;
  #start = 0;
  /** True when #buf is a window of the source's (read in place). */
  #inPlace = false;
  /** Marker bytes read in place since the last {@link done}. */
  #inPlaceBytes = 0;
  /** Bytes a detection read past the head, looked at by the first read past the seed only. */
  #spares: readonly { start: number; bytes: Uint8Array }[] | undefined;

  constructor(
    readonly src: ByteSource,
    readonly w: MarkerWidth,
    readonly little: boolean,
  ) {}

  /** The signed marker at `offset` (which with the marker must lie in the file); `ahead`: bytes worth fetching. */
  get(offset: number, ahead: number): number {
    const w = this.w;
    if (
      (offset < this.#start || offset + w > this.#start + this.#buf.length) &&
      (this.#spares === undefined || !this.#fromSpare(offset))
    ) {
      const want = Math.min(this.src.size - offset, Math.max(w, ahead));
      const window = this.src.window?.(offset, want);
      this.#inPlace = window !== undefined;
      const buf = this.#buf = window ?? this.src.read(offset, want);
      // a source's windows share one buffer (its mapping, or its far reads' buffer): one view
      if (buf.buffer !== this.#view.buffer) this.#view = new DataView(buf.buffer);
      this.#base = buf.byteOffset;
      this.#start = offset;
    }
    const p = offset - this.#start + this.#base;
    if (this.#inPlace) this.#inPlaceBytes += w;
    if (w === 4) return this.#view.getInt32(p, this.little);
    const v = int64At(this.#view, p, this.little);
    if (v === undefined) {
      throw new FormatError(
        FORMAT,
        this.src.path,
        offset,
        `8-byte record marker ${this.#view.getBigInt64(p, this.little)} is larger than any file`,
      );
    }
    return v;
  }

  /** Tells the source the marker bytes read in place (ByteSource.readInPlace). */
  done(): void {
    if (this.#inPlaceBytes > 0) this.src.readInPlace?.(this.#inPlaceBytes);
    this.#inPlaceBytes = 0;
  }

  /**
   * Reads the markers in `head` (the file's first bytes, read already: a copy) from it, and the
   * first marker past it from one of `spares` (other bytes read already) when one holds it.
   */
  seed(head: Uint8Array, spares: readonly { start: number; bytes: Uint8Array }[]): void {
    this.#buf = head;
    this.#view = new DataView(head.buffer);
    this.#base = head.byteOffset;
    this.#start = 0;
    this.#inPlace = false;
    this.#spares = spares;
  }

  /** Reads from the spare holding the marker at `offset`, if one does; the spares are looked at once. */
  #fromSpare(offset: number): boolean {
    const spares = this.#spares!;
    this.#spares = undefined;
    const spare = spares.find((s) =>
      s.start <= offset && offset + this.w <= s.start + s.bytes.length
    );
    if (spare === undefined) return false;
    const buf = this.#buf = spare.bytes;
    this.#view = new DataView(buf.buffer);
    this.#base = buf.byteOffset;
    this.#start = spare.start;
    this.#inPlace = false;
    return true;
  }
}

/** How messages name a marker width and byte order. */
export function comboName(w: MarkerWidth, order: ByteOrder): string {
  return `${w}-byte ${order}-endian markers`;
}

/**
 * Scans every record of the file with markers of width `w` in `order`; FormatError on the first
 * inconsistency. `reads`: what a marker detection read already (its bytes are not read again).
 *
 * About 110 lines, on purpose: one loop over the records with every check inline (no call per
 * record on the open's hot path); the error texts, most of its lines, are made only when a check
 * fails.
 */
export function scanRecords(
  src: ByteSource,
  w: MarkerWidth,
  order: ByteOrder,
  reads?: SeedReads,
): RecordTable {
  const size = src.size;
  const path = src.path;
  const rd = new MarkerReader(src, w, order === "little");
  // mutant: f77-scan-seed
  if (reads !== undefined) rd.seed(reads.head, reads.far);
  const table: RecordTable = {
    w,
    order,
    starts: new Offsets(),
    sizes: new Offsets(),
    pieces: new Map(),
    subrecords: 0,
  };
  const bad = (offset: number, problem: string): never => {
    throw new FormatError(FORMAT, path, offset, `${problem} (reading ${comboName(w, order)})`);
  };
  /** The record or subrecord an error is about (made only for an error: no string per record). */
  const which = (rec: number, piece: number) =>
    piece === 1 ? `record ${rec}` : `record ${rec}, subrecord ${piece},`;
  let off = 0;
  let small = false;
  while (off < size) {
    const rec = table.starts.length + 1;
    if (rec > MAX_INDEXED_OBJECTS) {
      bad(
        off,
        `more than ${MAX_INDEXED_OBJECTS} records (the most sciobench indexes in one file); ` +
          `record ${rec} starts at byte ${off}`,
      );
    }
    let piece = 0, total = 0;
    let list: [number, number][] | null = null;
    for (;;) {
      piece++;
      if (off + w > size) {
        bad(
          off,
          `${
            which(rec, piece)
          } starting at byte ${off}: the file ends at byte ${size} inside its ${w}-byte leading marker`,
        );
      }
      const lead = rd.get(off, small ? WINDOW : w);
      const n = Math.abs(lead);
      const dataAt = off + w;
      const trailAt = dataAt + n;
      if (trailAt + w > size) {
        bad(
          off,
          `${
            which(rec, piece)
          } is cut short: its leading marker ${lead} announces ${n} bytes, so it needs bytes up to ${
            trailAt + w
          }, but the file ends at byte ${size}`,
        );
      }
      small = n < SMALL_RECORD;
      const trail = rd.get(trailAt, small ? WINDOW : 2 * w);
      if (Math.abs(trail) !== n) {
        bad(
          trailAt,
          `${
            which(rec, piece)
          }: trailing marker ${trail} disagrees with leading marker ${lead} at byte ${off}`,
        );
      }
      if (n > 0 && piece === 1 && trail < 0) {
        bad(
          trailAt,
          `${
            which(rec, piece)
          }: trailing marker ${trail} is negative, which means a subrecord precedes it, but it is the record's first`,
        );
      }
      if (n > 0 && piece > 1 && trail > 0) {
        bad(
          trailAt,
          `${which(rec, piece)}: trailing marker ${trail} should be negative (subrecord ${
            piece - 1
          } precedes it)`,
        );
      }
      if (piece === 1) {
        table.starts.push(dataAt);
      } else {
        if (list === null) list = [[table.starts.at(rec - 1), total]];
        list.push([dataAt, n]);
      }
      total += n;
      table.subrecords++;
      off = trailAt + w;
      if (lead >= 0) break;
      if (off >= size) {
        bad(
          off,
          `${
            which(rec, piece)
          }: leading marker ${lead} is negative, so another subrecord should follow, but the file ends at byte ${size}`,
        );
      }
    }
    table.sizes.push(total);
    if (list !== null) table.pieces.set(rec - 1, list);
  }
  rd.done();
  return table;
}
