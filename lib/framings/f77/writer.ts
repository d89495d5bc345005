/**
 * The f77 writer: every chunk of a frame one record, framed by its markers, split into subrecords
 * past the subrecord limit as gfortran splits them.
 * @module
 */
import { copySwapped, NATIVE_ORDER } from "../../bytes/byteswap.ts";
import {
  type ByteOrder,
  type Chunk,
  DTYPE_SIZE,
  type Frame,
  type FrameWriter,
  type WriteOp,
  type WriterOptions,
} from "../types.ts";
import { bytesOf, checkChunkSize } from "../kit.ts";
import { optionOrDefault } from "../options.ts";
import {
  endianOption,
  F77_MAX_SUBRECORD,
  F77_MIN_SUBRECORD,
  F77_OPTION_OWNER,
  INT32_MAX,
  markerOption,
  type MarkerWidth,
  positiveInt,
} from "./format.ts";

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

/**
 * The marker width and the largest subrecord payload (bytes) a writer with `options` uses: the
 * declared default marker when none is given, and the largest payload its markers can announce
 * when no `subrecordLimit` is given.
 */
export function writtenRecords(
  options: WriterOptions,
): { marker: MarkerWidth; subrecordLimit: number } {
  const m = markerOption(optionOrDefault(F77_OPTION_OWNER, options, "marker"), "marker");
  const marker = m === "auto" ? 4 : m;
  const max = marker === 4 ? INT32_MAX : Number.MAX_SAFE_INTEGER;
  const subrecordLimit = options.subrecordLimit === undefined
    ? (marker === 4 ? F77_MAX_SUBRECORD : Number.MAX_SAFE_INTEGER)
    : positiveInt(options.subrecordLimit, "subrecordLimit", max, F77_MIN_SUBRECORD);
  return { marker, subrecordLimit };
}

/** Writer of f77 files: options `marker`, `endian`, `subrecordLimit` (see the module of mod.ts). */
export class F77Writer implements FrameWriter {
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
    const { marker, subrecordLimit } = writtenRecords(options);
    this.#w = marker;
    const e = options.endian ?? "native";
    this.#order = e === "native" ? NATIVE_ORDER : endianOption(e) as ByteOrder;
    this.#little = this.#order === "little";
    this.#limit = subrecordLimit;
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
