/**
 * The f77 marker width and byte order: given by the options, or detected from the first record
 * (its bytes read once for every combination tried) and confirmed by a scan of the whole file;
 * and the framing's recognition of a file from its first bytes.
 * @module
 */
import { NATIVE_ORDER } from "../../bytes/byteswap.ts";
import { FormatError } from "../../core/errors.ts";
import { type ByteOrder, type ByteSource, type ReaderOptions } from "../types.ts";
import {
  endianOption,
  FORMAT,
  INT32_MAX,
  int64At,
  markerOption,
  type MarkerWidth,
} from "./format.ts";
import { comboName, NO_BYTES, NO_VIEW, Offsets, type RecordTable, scanRecords } from "./scan.ts";

/** Bytes of the file's start a marker detection reads once (every combination's leading marker). */
const HEAD_BYTES = 64;
/** Bytes a detection reads at a trailing marker past the head: the other widths' fall in them too. */
// mutant: f77-detect-ahead
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
    // mutant: f77-detect-head
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

/** Chooses the marker width and byte order (given or detected) and scans the file. */
export function readTable(
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
export function headFits(
  head: Uint8Array,
  size: number,
  w: MarkerWidth,
  order: ByteOrder,
): boolean {
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
