/**
 * The Fortran unformatted sequential framing (`f77`), as gfortran writes it: no header and no
 * magic number, only records, each framed by a signed byte count before and after its payload.
 *
 * Layout (see shared/specs/fortran.md):
 * - a record is one or more subrecords: leading marker, payload, trailing marker;
 * - a marker is a signed 4-byte integer (gfortran's default) or 8-byte integer
 *   (`-frecord-marker=8`), in the byte order of the data (`-fconvert=big-endian` swaps both);
 * - |marker| is the payload size of that subrecord in bytes; a negative leading marker means
 *   another subrecord follows, a negative trailing marker means one precedes. A record that fits
 *   in one subrecord is framed (+n ... +n);
 * - records longer than the subrecord limit are split: gfortran's limit is 2^31 - 9 bytes with
 *   4-byte markers and "never" with 8-byte markers; `-fmax-subrecord-length=N` sets it for both
 *   (verified with gfortran 12: exact multiples of the limit get no empty trailing subrecord).
 *
 * Frames: every chunk of a frame is one record, in chunk order, so the table workload's frames
 * (position, orientation) are two records each. The file stores no names, types or steps: a
 * reader gets them from the `layout` option (a workload reading its own file), or from the
 * options below, or uses the defaults (one float64 record per frame, chunks `record/<r>` with r
 * the 1-based record number, as Fortran counts records).
 *
 * Writer options: `marker` 4 | 8 (default 4), `endian` little | big | native (default native),
 * `subrecordLimit` bytes per subrecord (default 2^31 - 9 for 4-byte markers, unlimited for 8).
 *
 * Reader options: `layout` (ChunkLayout per record of a frame; each record must match it),
 * `recordsPerFrame` (default 1), `dtype` (a type or comma list, one per record of a frame;
 * `float32:3` adds trailing dimensions; default float64; a record whose size is not a whole
 * number of elements is read as uint8 with a warning), `names` (comma list), `marker` 4 | 8 |
 * auto and `endian` little | big | native | auto (default auto: the first record tells, the
 * whole file must agree, and a file that fits several combinations is an error).
 *
 * The reader checks every trailing marker (gfortran does not) and the subrecord signs, and
 * reports a broken file with the record number and the byte offset.
 * @module
 */
import { copySwapped, NATIVE_ORDER } from "../../bytes/byteswap.ts";
import { FormatError, UsageError } from "../../core/errors.ts";
import { checkAppendOrder } from "../raw.ts";
import {
  ALL_WORKLOADS,
  type ByteOrder,
  type ByteSource,
  type Chunk,
  type ChunkLayout,
  type ChunkRef,
  type DType,
  DTYPE_SIZE,
  type Frame,
  type FrameIndex,
  type FrameWriter,
  type Framing,
  type ReaderOptions,
  type WriteOp,
  type WriterOptions,
  WRITING_WORKLOADS,
} from "../types.ts";
import { bytesOf, checkChunkSize, MAX_INDEXED_OBJECTS } from "../kit.ts";

/** gfortran's largest subrecord payload with 4-byte markers, in bytes: 2^31 - 9. */
export const F77_MAX_SUBRECORD = 2147483639;

/**
 * Smallest subrecord payload sciobench writes, in bytes: one value of the widest type (8). Below
 * it the markers outweigh the data many times over (subrecordLimit=1 writes 9 bytes a byte).
 */
export const F77_MIN_SUBRECORD = 8;

/** Largest value a 4-byte marker can hold, in bytes. */
const INT32_MAX = 2147483647;

/** Records below this size (bytes) make the scanner read markers in 64 KiB windows. */
const SMALL_RECORD = 4096;
/** Window read for dense small records, in bytes. */
const WINDOW = 1 << 16;

/**
 * The signed 8-byte integer at byte `at` of `view` (byte order `little`) as a number, or undefined
 * beyond +-(2^53 - 1), which no number holds exactly: read as two 4-byte halves, no BigInt made (an
 * open's first BigInt costs more than its reads when the CPU's caches hold none of its code).
 */
export function int64At(view: DataView, at: number, little: boolean): number | undefined {
  const hi = view.getInt32(little ? at + 4 : at, little);
  const lo = view.getUint32(little ? at : at + 4, little);
  // |hi 2^32 + lo| <= 2^53 - 1 exactly when -2^21 <= hi < 2^21, but for -2^53 itself
  if (hi >= 0x200000 || hi < -0x200000 || (hi === -0x200000 && lo === 0)) return undefined;
  return hi * 0x100000000 + lo;
}

/** Width of a record marker in bytes. */
export type MarkerWidth = 4 | 8;

const FORMAT = "f77";

function markerOption(value: unknown, what: string): MarkerWidth | "auto" {
  if (value === undefined || value === "auto") return "auto";
  if (value === 4 || value === "4") return 4;
  if (value === 8 || value === "8") return 8;
  throw new UsageError(`f77: bad ${what} '${String(value)}': expected 4 or 8`);
}

function endianOption(value: unknown): ByteOrder | "auto" {
  if (value === undefined || value === "auto") return "auto";
  if (value === "native") return NATIVE_ORDER;
  if (value === "little" || value === "big") return value;
  throw new UsageError(`f77: bad endian '${String(value)}': expected little, big, native or auto`);
}

function positiveInt(
  value: unknown,
  what: string,
  max = Number.MAX_SAFE_INTEGER,
  min = 1,
): number {
  const n = typeof value === "string" && /^\s*\d+\s*$/.test(value) ? Number(value) : value;
  if (typeof n !== "number" || !Number.isSafeInteger(n) || n < min || n > max) {
    throw new UsageError(
      `f77: bad ${what} '${String(value)}': expected an integer from ${min} to ${max}`,
    );
  }
  return n;
}

function listOption(value: unknown, what: string): string[] | undefined {
  if (value === undefined) return undefined;
  if (typeof value === "string") return value.split(",").map((s) => s.trim());
  if (Array.isArray(value) && value.every((s) => typeof s === "string")) return value as string[];
  throw new UsageError(`f77: bad ${what}: expected a comma-separated list`);
}

function chunkBytes(chunk: Chunk): Uint8Array {
  checkChunkSize(chunk);
  return bytesOf(chunk.data);
}

/** Writes signed `value` as a `w`-byte marker at byte `at` of `view`. */
function putMarker(
  view: DataView,
  at: number,
  w: MarkerWidth,
  value: number,
  little: boolean,
): void {
  if (w === 4) view.setInt32(at, value, little);
  else view.setBigInt64(at, BigInt(value), little);
}

class F77Writer implements FrameWriter {
  readonly #w: MarkerWidth;
  readonly #order: ByteOrder;
  readonly #little: boolean;
  readonly #limit: number;
  #offset = 0;
  #marks = new Uint8Array(256);
  #marksView = new DataView(this.#marks.buffer);
  #scratch = new Uint8Array(0);
  #scratchView = new DataView(this.#scratch.buffer);

  constructor(options: WriterOptions) {
    const m = markerOption(options.marker ?? 4, "marker");
    this.#w = m === "auto" ? 4 : m;
    const e = options.endian ?? "native";
    this.#order = e === "native" ? NATIVE_ORDER : endianOption(e) as ByteOrder;
    this.#little = this.#order === "little";
    const max = this.#w === 4 ? INT32_MAX : Number.MAX_SAFE_INTEGER;
    this.#limit = options.subrecordLimit === undefined
      ? (this.#w === 4 ? F77_MAX_SUBRECORD : Number.MAX_SAFE_INTEGER)
      : positiveInt(options.subrecordLimit, "subrecordLimit", max, F77_MIN_SUBRECORD);
  }

  begin(): WriteOp[] {
    return [];
  }

  /** Continues at byte `offset` (the end of an existing file) instead of 0. */
  startAt(offset: number): this {
    this.#offset = offset;
    return this;
  }

  /** Number of subrecords a payload of `n` bytes is cut into. */
  #pieces(n: number): number {
    return n === 0 ? 1 : Math.ceil(n / this.#limit);
  }

  writeFrame(frame: Frame): WriteOp[] {
    const w = this.#w;
    const datas = frame.chunks.map(chunkBytes);
    let markBytes = 0, dataBytes = 0;
    for (const d of datas) {
      markBytes += 2 * w * this.#pieces(d.length);
      dataBytes += d.length;
    }
    const swap = this.#order !== NATIVE_ORDER &&
      frame.chunks.some((c, k) => DTYPE_SIZE[c.dtype] > 1 && datas[k]!.length > 0);
    return swap
      ? this.#swapped(frame, datas, markBytes + dataBytes)
      : this.#aliased(datas, markBytes);
  }

  /** Native order: the data is written from the caller's arrays, markers from a scratch buffer. */
  #aliased(datas: readonly Uint8Array[], markBytes: number): WriteOp[] {
    if (this.#marks.length < markBytes) {
      this.#marks = new Uint8Array(Math.max(markBytes, this.#marks.length * 2));
      this.#marksView = new DataView(this.#marks.buffer);
    }
    const w = this.#w, limit = this.#limit, little = this.#little, mv = this.#marksView;
    const ops: WriteOp[] = [];
    let m = 0, group = 0, groupAt = this.#offset, at = this.#offset;
    const mark = (value: number) => {
      putMarker(mv, m, w, value, little);
      m += w;
      at += w;
    };
    for (const d of datas) {
      const k = this.#pieces(d.length);
      for (let i = 0; i < k; i++) {
        const start = i * limit;
        const len = Math.min(limit, d.length - start);
        mark(i < k - 1 ? -len : len);
        if (len > 0) {
          ops.push({ kind: "write", offset: groupAt, data: this.#marks.subarray(group, m) });
          ops.push({ kind: "write", offset: at, data: d.subarray(start, start + len) });
          at += len;
          group = m;
          groupAt = at;
        }
        mark(i > 0 ? -len : len);
      }
    }
    if (m > group) {
      ops.push({ kind: "write", offset: groupAt, data: this.#marks.subarray(group, m) });
    }
    this.#offset = at;
    return ops;
  }

  /** Foreign order: markers and byte-swapped data go into one scratch buffer, one write. */
  #swapped(frame: Frame, datas: readonly Uint8Array[], total: number): WriteOp[] {
    if (this.#scratch.length < total) {
      this.#scratch = new Uint8Array(
        Math.max(total, Math.min(this.#scratch.length * 2, total * 2)),
      );
      this.#scratchView = new DataView(this.#scratch.buffer);
    }
    const w = this.#w, limit = this.#limit, little = this.#little;
    const buf = this.#scratch, view = this.#scratchView;
    let p = 0;
    datas.forEach((d, c) => {
      const width = DTYPE_SIZE[frame.chunks[c]!.dtype];
      const k = this.#pieces(d.length);
      // Pieces are cut at byte offsets; swapping the whole record first keeps elements intact.
      const dst = buf.subarray(p, p + d.length + 2 * w * k);
      let q = 0;
      for (let i = 0; i < k; i++) {
        const start = i * limit;
        const len = Math.min(limit, d.length - start);
        putMarker(view, p + q, w, i < k - 1 ? -len : len, little);
        q += w + len;
        putMarker(view, p + q, w, i > 0 ? -len : len, little);
        q += w;
      }
      if (k === 1) {
        copySwapped(d, dst.subarray(w, w + d.length), width);
      } else {
        const tmp = new Uint8Array(d.length);
        copySwapped(d, tmp, width);
        let r = w;
        for (let i = 0; i < k; i++) {
          const start = i * limit;
          const len = Math.min(limit, d.length - start);
          dst.set(tmp.subarray(start, start + len), r);
          r += len + 2 * w;
        }
      }
      p += q;
    });
    const op: WriteOp = { kind: "write", offset: this.#offset, data: buf.subarray(0, p) };
    this.#offset += p;
    return [op];
  }

  finish(): WriteOp[] {
    return [];
  }
}

/**
 * A growing list of byte offsets or sizes in a Float64Array (8 bytes each, exact below 2^53):
 * a file of millions of records holds no JavaScript array of them.
 */
class Offsets {
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
interface RecordTable {
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
const NO_BYTES = new Uint8Array(0);
const NO_VIEW: DataView = new DataView(NO_BYTES.buffer);

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

function comboName(w: MarkerWidth, order: ByteOrder): string {
  return `${w}-byte ${order}-endian markers`;
}

/**
 * Scans every record of the file with markers of width `w` in `order`; FormatError on the first
 * inconsistency. `reads`: what a marker detection read already (its bytes are not read again).
 */
function scanRecords(
  src: ByteSource,
  w: MarkerWidth,
  order: ByteOrder,
  reads?: DetectionReads,
): RecordTable {
  const size = src.size;
  const path = src.path;
  const rd = new MarkerReader(src, w, order === "little");
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

/** Bytes of the file's start a marker detection reads once (every combination's leading marker). */
const HEAD_BYTES = 64;
/** Bytes a detection reads at a trailing marker past the head: the other widths' fall in them too. */
const DETECT_AHEAD = 16;
/** Reads past the head a detection makes at most: a trailing marker a width and byte order. */
const DETECT_FAR = 4;
/**
 * The copies of what a detection read (its head, then its reads past it, DETECT_AHEAD bytes
 * each) in one buffer that every detection reuses, as one runs to its end (and the scans it
 * seeds) before another starts: an open makes no array for them, nor the view an array of its
 * own would need (each a new ArrayBuffer: more than the reads cost once the CPU's caches hold
 * none of the open's data, as after a read through a large file).
 */
const DETECTED = new Uint8Array(HEAD_BYTES + DETECT_FAR * DETECT_AHEAD);
const DETECTED_VIEW: DataView = new DataView(DETECTED.buffer);

/**
 * The reads of a marker detection: the file's first bytes, read once for every marker width and
 * byte order tried (not once each), and the last read past them, which a trailing marker of
 * another width at the same record boundary usually falls in too.
 */
class DetectionReads {
  /** Bytes [0, head.length) of the file (a copy in DETECTED: kept while the other reads go on). */
  readonly head: Uint8Array;
  /** True when the head came from a window of the source's (read in place). */
  readonly #headInPlace: boolean;
  /** The last read past the head (a copy), from byte #start of the file. */
  #buf: Uint8Array = NO_BYTES;
  /** A view of #buf's ArrayBuffer, where #buf starts at #viewAt. */
  #view = NO_VIEW;
  #viewAt = 0;
  #start = 0;
  #inPlace = false;
  /** The reads past the head (copies, a few bytes each): the scan starts from them. */
  readonly far: { start: number; bytes: Uint8Array }[] = [];
  /** Marker bytes read in place, told to the source by {@link done}. */
  #inPlaceBytes = 0;

  constructor(readonly src: ByteSource) {
    const length = Math.min(src.size, HEAD_BYTES);
    const window = src.window?.(0, length);
    this.#headInPlace = window !== undefined;
    // a window is the source's until its next call: the head is copied out of it
    DETECTED.set(window !== undefined ? window.subarray(0, length) : src.read(0, length));
    this.head = DETECTED.subarray(0, length);
  }

  /**
   * The signed `w`-byte marker at `offset` (which with the marker lies in the file), or undefined
   * for an 8-byte marker larger than any file.
   */
  marker(offset: number, w: MarkerWidth, little: boolean): number | undefined {
    let view: DataView, p: number;
    if (offset + w <= this.head.length) {
      view = DETECTED_VIEW;
      p = offset;
      if (this.#headInPlace) this.#inPlaceBytes += w;
    } else {
      if (offset < this.#start || offset + w > this.#start + this.#buf.length) {
        const want = Math.min(this.src.size - offset, Math.max(w, DETECT_AHEAD));
        const window = this.src.window?.(offset, want);
        this.#inPlace = window !== undefined;
        // a window is the source's until its next call: copied, for the scan after
        const got = window !== undefined ? window.subarray(0, want) : this.src.read(offset, want);
        const slot = HEAD_BYTES + this.far.length * DETECT_AHEAD;
        if (this.far.length < DETECT_FAR) {
          DETECTED.set(got, slot);
          this.#buf = DETECTED.subarray(slot, slot + want);
          this.#view = DETECTED_VIEW;
          this.#viewAt = slot;
        } else {
          this.#buf = got.slice();
          this.#view = new DataView(this.#buf.buffer);
          this.#viewAt = this.#buf.byteOffset;
        }
        this.#start = offset;
        this.far.push({ start: offset, bytes: this.#buf });
      }
      view = this.#view;
      p = offset - this.#start + this.#viewAt;
      if (this.#inPlace) this.#inPlaceBytes += w;
    }
    return w === 4 ? view.getInt32(p, little) : int64At(view, p, little);
  }

  /** Tells the source the marker bytes read in place (ByteSource.readInPlace). */
  done(): void {
    if (this.#inPlaceBytes > 0) this.src.readInPlace?.(this.#inPlaceBytes);
    this.#inPlaceBytes = 0;
  }
}

/** Why a marker width and byte order do not fit a file's first record, said when asked. */
type Problem = () => string;

/**
 * null when the first record is consistent with `w` and `order`, else why not (its text made
 * only when a detection fails: a detection that succeeds rules out other combinations at every
 * open, and their texts' number formatting cost more than its reads).
 */
function firstRecordProblem(
  reads: DetectionReads,
  w: MarkerWidth,
  order: ByteOrder,
): Problem | null {
  const size = reads.src.size;
  if (size < 2 * w) return () => `the file (${size} bytes) is shorter than two markers`;
  const little = order === "little";
  const lead = reads.marker(0, w, little);
  if (lead === undefined) return () => "a marker is larger than any file";
  const n = Math.abs(lead);
  if (2 * w + n > size) return () => `leading marker ${lead} runs past the end of the file`;
  if (lead < 0 && 4 * w + n > size) {
    return () => `leading marker ${lead} says a subrecord follows, but there is no room`;
  }
  const trail = reads.marker(w + n, w, little);
  if (trail === undefined) return () => "a marker is larger than any file";
  if (trail !== n) {
    return () => `leading marker ${lead}, trailing marker ${trail} at byte ${w + n}`;
  }
  return null;
}

/** True when the leading marker at byte 0, read with `w` and `order`, announces a record that fits the file. */
function leadFits(reads: DetectionReads, w: MarkerWidth, order: ByteOrder): boolean {
  if (reads.src.size < 2 * w) return false;
  const lead = reads.marker(0, w, order === "little");
  return lead !== undefined && 2 * w + Math.abs(lead) <= reads.src.size;
}

/** A parsed entry of the `dtype` option: type and trailing dimensions. */
interface TypeSpec {
  readonly dtype: DType;
  readonly inner: readonly number[];
}

function parseTypeSpec(text: string): TypeSpec {
  const m = /^([a-z0-9]+)(?::(\d+(?:x\d+)*))?$/.exec(text.trim());
  const dtype = m?.[1];
  if (!m || dtype === undefined || !(dtype in DTYPE_SIZE)) {
    throw new UsageError(
      `f77: bad dtype '${text}': expected one of ${
        Object.keys(DTYPE_SIZE).join(", ")
      }, optionally with trailing dimensions such as float32:3`,
    );
  }
  const inner = m[2] === undefined ? [] : m[2].split("x").map(Number);
  if (inner.some((d) => d < 1)) {
    throw new UsageError(`f77: bad dtype '${text}': dimensions must be positive`);
  }
  return { dtype: dtype as DType, inner };
}

/** How records map to the chunks of a frame. */
interface FramePlan {
  readonly perFrame: number;
  /**
   * How the layout was chosen: `given` (options or a layout), `table` (sciobench's own table
   * frames recognised), `assumed` (nothing given: one float64 record per frame, said so).
   */
  readonly source?: "given" | "table";
  /** True when neither a layout nor dtype, names or recordsPerFrame was given. */
  readonly assumed?: boolean;
  /** Layout per record position when the caller gave one (then every record must match). */
  readonly layout?: readonly ChunkLayout[];
  readonly types: readonly TypeSpec[];
  readonly names?: readonly string[];
}

function framePlan(options: ReaderOptions): FramePlan {
  const layout = options.layout;
  if (layout !== undefined && layout.length > 0) {
    return { perFrame: layout.length, layout, types: [] };
  }
  const assumed = options.dtype === undefined && options.names === undefined &&
    options.recordsPerFrame === undefined;
  const types = (listOption(options.dtype, "dtype") ?? ["float64"]).map(parseTypeSpec);
  const names = listOption(options.names, "names");
  const listed = Math.max(types.length, names?.length ?? 1);
  const perFrame = options.recordsPerFrame === undefined
    ? listed
    : positiveInt(options.recordsPerFrame, "recordsPerFrame");
  if (types.length !== 1 && types.length !== perFrame) {
    throw new UsageError(`f77: ${types.length} dtypes given for ${perFrame} records per frame`);
  }
  if (names !== undefined && names.length !== perFrame) {
    throw new UsageError(`f77: ${names.length} names given for ${perFrame} records per frame`);
  }
  return { perFrame, types, names, assumed };
}

/**
 * The layout of sciobench's own table frames when `t` holds them (an even number of records,
 * alternately 12 N and 16 N bytes for one N: position N x 3 and orientation N x 4 float32, as
 * `sciobench write` stores them), else undefined.
 */
function tablePlan(t: RecordTable): FramePlan | undefined {
  const sizes = t.sizes;
  const n = sizes.length > 0 ? sizes.at(0) / 12 : 0;
  if (sizes.length === 0 || sizes.length % 2 !== 0 || !Number.isInteger(n) || n < 1) {
    return undefined;
  }
  for (let r = 0; r < sizes.length; r += 2) {
    if (sizes.at(r) !== 12 * n || sizes.at(r + 1) !== 16 * n) return undefined;
  }
  return {
    perFrame: 2,
    source: "table",
    types: [],
    layout: [
      { name: "particles/position", dtype: "float32", shape: [n, 3] },
      { name: "particles/orientation", dtype: "float32", shape: [n, 4] },
    ],
  };
}

/** How every record of a frame position reads: a layout's chunk, or a type spec and name. */
interface PositionType {
  /** The caller's layout at this position (every record must match it). */
  readonly layout?: ChunkLayout;
  /** Otherwise the requested type and trailing dimensions. */
  readonly spec: TypeSpec;
  /** Bytes of one element with its trailing dimensions (the spec's unit). */
  readonly unit: number;
  /** The chunk name given for the position (else `record/<r>`). */
  readonly name?: string;
}

class F77Index implements FrameIndex {
  readonly framing = FORMAT;
  readonly frameCount: number;
  readonly warnings: string[];
  readonly #t: RecordTable;
  readonly #plan: FramePlan;
  readonly #detected: boolean;
  /** How the records at each position of a frame read (one entry a position, not a record). */
  readonly #positions: readonly PositionType[];

  constructor(
    src: ByteSource,
    t: RecordTable,
    plan: FramePlan,
    detected: boolean,
    warnings: string[],
  ) {
    this.#t = t;
    this.#plan = plan;
    this.#detected = detected;
    this.warnings = warnings;
    const records = t.starts.length;
    this.frameCount = Math.floor(records / plan.perFrame);
    this.#positions = Array.from({ length: plan.perFrame }, (_, pos) => {
      const layout = plan.layout?.[pos];
      const spec = plan.types[plan.types.length === 1 ? 0 : pos] ?? { dtype: "uint8", inner: [] };
      const unit = layout !== undefined
        ? layout.shape.reduce((a, b) => a * b, 1) * DTYPE_SIZE[layout.dtype]
        : DTYPE_SIZE[spec.dtype] * spec.inner.reduce((a, b) => a * b, 1);
      return { layout, spec, unit, name: plan.names?.[pos] };
    });
    // the records that do not read as asked: refused (a layout), or counted for one warning
    let fallback = 0;
    const shown: number[] = [];
    for (let r = 0; r < this.frameCount * plan.perFrame; r++) {
      const p = this.#positions[r % plan.perFrame]!;
      const bytes = t.sizes.at(r);
      if (p.layout !== undefined) {
        if (bytes !== p.unit) {
          const lay = p.layout;
          throw new FormatError(
            FORMAT,
            src.path,
            t.starts.at(r) - t.w,
            `record ${r + 1} holds ${bytes} bytes, but chunk '${lay.name}' (${lay.dtype} ${
              lay.shape.join("x")
            }) needs ${p.unit}`,
          );
        }
      } else if (bytes % p.unit !== 0) {
        if (fallback++ < 5) shown.push(r + 1);
      }
    }
    if (fallback > 0) {
      warnings.push(
        `f77: ${src.path}: ${fallback} record(s) (${shown.join(", ")}${
          fallback > 5 ? ", ..." : ""
        }) are not a whole number of the requested elements; read as uint8`,
      );
    }
    const left = records - this.frameCount * plan.perFrame;
    if (left > 0) {
      warnings.push(
        `f77: ${src.path}: the last ${left} record(s) do not fill a frame of ${plan.perFrame} records and are ignored`,
      );
    }
  }

  /** The chunks of `frame`, made when asked from the record table (no object kept a record). */
  chunks(frame: number): readonly ChunkRef[] {
    const t = this.#t;
    const per = this.#plan.perFrame;
    const out = new Array<ChunkRef>(per);
    for (let k = 0, r = frame * per; k < per; k++, r++) {
      const p = this.#positions[k]!;
      const bytes = t.sizes.at(r);
      let dtype: DType, shape: readonly number[], name: string;
      if (p.layout !== undefined) {
        ({ dtype, shape, name } = p.layout);
      } else {
        name = p.name ?? `record/${r + 1}`;
        if (bytes % p.unit === 0) {
          dtype = p.spec.dtype;
          shape = [bytes / p.unit, ...p.spec.inner];
        } else {
          dtype = "uint8";
          shape = [bytes];
        }
      }
      const pieces = t.pieces.get(r);
      out[k] = {
        name,
        dtype,
        shape,
        offset: t.starts.at(r),
        bytes,
        order: t.order,
        ...(pieces ? { pieces } : {}),
      };
    }
    return out;
  }

  describe(): Record<string, unknown> {
    const t = this.#t;
    let largest = 0;
    for (let r = 0; r < t.sizes.length; r++) largest = Math.max(largest, t.sizes.at(r));
    return {
      marker_bytes: t.w,
      byte_order: t.order,
      markers: this.#detected ? "detected" : "given",
      records: t.starts.length,
      records_per_frame: this.#plan.perFrame,
      // f77 stores no types: say where the frames' layout came from
      layout: this.#plan.source === "table"
        ? "sciobench table frames (position N x 3, orientation N x 4 float32; detected)"
        : this.#plan.assumed
        ? "assumed: one float64 record per frame (--option dtype=, names=, recordsPerFrame= set it)"
        : "given",
      split_records: t.pieces.size,
      subrecords: t.subrecords,
      largest_record_bytes: largest,
    };
  }
}

/** Chooses the marker width and byte order (given or detected) and scans the file. */
function readTable(
  src: ByteSource,
  options: ReaderOptions,
  warnings: string[],
): { t: RecordTable; detected: boolean } {
  const wantW = markerOption(options.marker, "marker");
  const wantO = endianOption(options.endian);
  const other: ByteOrder = NATIVE_ORDER === "little" ? "big" : "little";
  const combos =
    ([[4, NATIVE_ORDER], [8, NATIVE_ORDER], [4, other], [8, other]] as [MarkerWidth, ByteOrder][])
      .filter(([w, o]) => (wantW === "auto" || w === wantW) && (wantO === "auto" || o === wantO));
  const detected = combos.length > 1;
  if (combos.length === 1) return { t: scanRecords(src, ...combos[0]!), detected };
  if (src.size === 0) {
    return {
      t: {
        w: combos[0]![0],
        order: combos[0]![1],
        starts: new Offsets(1),
        sizes: new Offsets(1),
        pieces: new Map(),
        subrecords: 0,
      },
      detected,
    };
  }
  const reads = new DetectionReads(src);
  const reasons: [MarkerWidth, ByteOrder, Problem][] = [];
  const fits = combos.filter(([w, o]) => {
    const why = firstRecordProblem(reads, w, o);
    if (why !== null) reasons.push([w, o, why]);
    return why === null;
  });
  if (fits.length === 0) {
    // Report the precise problem of the first combination whose leading marker fits the file.
    const plausible = combos.find(([w, o]) => leadFits(reads, w, o));
    reads.done();
    if (plausible !== undefined) scanRecords(src, ...plausible, reads);
    throw new FormatError(
      FORMAT,
      src.path,
      0,
      `not a Fortran unformatted sequential file: no marker width and byte order fits the first record (${
        reasons.map(([w, o, why]) => `${comboName(w, o)}: ${why()}`).join("; ")
      })`,
    );
  }
  reads.done();
  if (fits.length === 1) return { t: scanRecords(src, ...fits[0]!, reads), detected };
  const ok: RecordTable[] = [];
  let furthest: FormatError | undefined;
  for (const [w, o] of fits) {
    try {
      ok.push(scanRecords(src, w, o, reads));
    } catch (e) {
      if (!(e instanceof FormatError)) throw e;
      if (furthest === undefined || e.offset > furthest.offset) furthest = e;
    }
  }
  if (ok.length === 0) throw furthest!;
  const names = fits.map(([w, o]) => comboName(w, o));
  if (ok.length > 1) {
    throw new FormatError(
      FORMAT,
      src.path,
      0,
      `ambiguous: the whole file is consistent with ${
        ok.map((t) => comboName(t.w, t.order)).join(" and with ")
      }; name them with the options marker=4|8 and endian=little|big`,
    );
  }
  const t = ok[0]!;
  warnings.push(
    `f77: ${src.path}: the first record fits ${names.join(" and ")}; only ${
      comboName(t.w, t.order)
    } fit the whole file, so they are used`,
  );
  return { t, detected };
}

/**
 * True when the file's first non-empty record (after any empty ones) is consistent with width
 * `w` and `order` as far as `head` shows it, and fits in a file of `size` bytes. Later records are
 * not judged, so a file broken further on is still recognised and its reader says where.
 */
function headFits(head: Uint8Array, size: number, w: MarkerWidth, order: ByteOrder): boolean {
  const view = new DataView(head.buffer, head.byteOffset, head.byteLength);
  const little = order === "little";
  const get = (at: number): number =>
    w === 4 ? view.getInt32(at, little) : Number(view.getBigInt64(at, little));
  let off = 0, piece = 0, recordBytes = 0;
  while (off < size) {
    if (off + w > head.length) return false;
    const lead = get(off);
    const n = Math.abs(lead);
    if (!Number.isSafeInteger(n) || off + 2 * w + n > size) return false;
    if (w === 4 && n > INT32_MAX) return false;
    const trailAt = off + w + n;
    piece++;
    if (trailAt + w > head.length) {
      // The trailing marker is beyond the head: the record must at least leave room for whole records.
      const rest = size - trailAt - w;
      return n > 0 && (rest === 0 || rest >= 2 * w) && (lead >= 0 || rest >= 2 * w);
    }
    const trail = get(trailAt);
    if (Math.abs(trail) !== n) return false;
    if (n > 0 && (piece === 1 ? trail < 0 : trail > 0)) return false;
    recordBytes += n;
    off = trailAt + w;
    if (lead >= 0) {
      if (recordBytes > 0) return true;
      piece = 0;
    } else if (off >= size) {
      return false;
    }
  }
  return false;
}

/** The Fortran unformatted sequential framing (`f77`): gfortran's record markers, 4 or 8 bytes, either byte order. */
export const f77: Framing = {
  name: FORMAT,
  description:
    "Fortran unformatted sequential records (gfortran markers: 4 or 8 bytes, subrecords)",
  orders: ["little", "big"],
  options: [
    {
      name: "marker",
      type: "integer",
      choices: [4, 8],
      help: "record marker bytes (written: default 4; read: detected when not given)",
      workloads: ALL_WORKLOADS,
    },
    {
      name: "subrecordLimit",
      type: "integer",
      min: F77_MIN_SUBRECORD,
      help: "largest subrecord payload, bytes (default 2^31-9 with 4-byte markers, none with 8)",
      workloads: WRITING_WORKLOADS,
    },
    {
      name: "dtype",
      type: "list",
      default: ["float64"],
      help: "type of each record of a frame, float32:3 adds trailing dimensions (reading)",
      workloads: ["read", "info"],
    },
    {
      name: "names",
      type: "list",
      help: "chunk name of each record of a frame (reading; default record/<r>)",
      workloads: ["read", "info"],
    },
    {
      name: "recordsPerFrame",
      type: "integer",
      min: 1,
      help: "records per frame (reading; default: the number of dtypes or names)",
      workloads: ["read", "info"],
    },
  ],
  magic: [],
  detect(head: Uint8Array, fileSize: number): boolean {
    for (const w of [4, 8] as const) {
      for (const o of ["little", "big"] as const) {
        if (headFits(head, fileSize, w, o)) return true;
      }
    }
    return false;
  },
  createWriter(options: WriterOptions = {}): FrameWriter {
    return new F77Writer(options);
  },
  appendWriter(source: ByteSource, options: WriterOptions = {}): FrameWriter {
    // The existing records decide marker width and byte order (given options must agree).
    const { t } = readTable(source, { ...options, endian: undefined }, []);
    checkAppendOrder(FORMAT, source.path, t.order, options.endian);
    return new F77Writer({ ...options, marker: t.w, endian: t.order }).startAt(source.size);
  },
  openIndex(source: ByteSource, options: ReaderOptions = {}): FrameIndex {
    const given = framePlan(options);
    const warnings: string[] = [];
    const { t, detected } = readTable(source, options, warnings);
    const plan = given.assumed ? tablePlan(t) ?? given : given;
    if (t.starts.length > 0 && plan.perFrame > t.starts.length) {
      throw new UsageError(
        `f77: ${source.path} holds ${t.starts.length} record(s): recordsPerFrame=${plan.perFrame} ` +
          `leaves no frame; give at most ${t.starts.length}`,
      );
    }
    return new F77Index(source, t, plan, detected, warnings);
  },
};
