/**
 * IEEEIO (John Shalf's FlexIO binary format): a 16-byte file header with a byte-order mark and a
 * dataset count (-1 while open), then a plain sequence of data, annotation and attribute records
 * with 12-byte record headers; no on-disk index. Byte layout: /work/shared/specs/ieeeio.md §2.
 *
 * ## How frames map to datasets
 *
 * - Each chunk of a frame becomes one data record (dataset). Dims are stored in Fortran order,
 *   fastest axis first, so a chunk of C-order shape `[s0, s1, ..., sN]` (slowest first) is stored
 *   with dims `[sN, ..., s1, s0]`; the bytes are the same, only the dim list is reversed. The
 *   reader reverses them back, so a 3x2 dataset on disk (dims 3,2) is a chunk of shape `[2, 3]`.
 * - Element types: `int8 int16 int32 int64 float32 float64 uint8 uint16 uint32 uint64 char` map to
 *   the IEEEIO codes 0..10 (Int8 .. Char8). The twelfth type, Char16 (code 11), has no DType: a
 *   chunk writes it with `numberType: "Char16"` ({@link IeeeioChunk}) and reads back as `uint16`
 *   (the per-dataset info keeps the name `Char16`).
 * - Chunk names: chunk k of a frame whose name is not the default `dataset/<k>` gets a Char8
 *   attribute `name` holding the chunk name (stored without a NUL, as FlexIO callers store
 *   strings). The reader names a chunk by its `name` attribute (Char8 or uInt8), else
 *   `dataset/<k>` (k = its position in its frame: `dataset/0` in one-dataset frames), so names
 *   repeat from frame to frame like variable names, as the other framings' do.
 * - Frames: a frame of k > 1 chunks marks its first dataset with an Int32 attribute
 *   `frame_datasets` = k, and a frame whose step differs from its 0-based frame index marks its
 *   first dataset with an Int64 attribute `step`. The reader groups datasets accordingly (a
 *   dataset without `frame_datasets` is a frame of one), so files of other IEEEIO writers read
 *   as one dataset per frame with step = frame index, and a one-chunk frame with step = index
 *   (the `scaling` workload) adds no attribute at all: 16 + n x (24 + 4 x rank + data) bytes.
 *   Reader option `datasetsPerFrame` (a positive integer) forces a fixed grouping instead; a
 *   `layout` of k > 1 chunks groups by k a file that has no `frame_datasets` attributes.
 * - Annotations and attributes: {@link IeeeioChunk} may carry `attributes` and `annotations`,
 *   written right after its dataset (attributes first); {@link IeeeioWriter} also has
 *   `writeAttribute` / `writeAnnotation` for the current (last written) dataset, as FlexIO does.
 *
 * ## Writer options
 *
 * `endian` (`native` default, `little`, `big`); `append` (a {@link ByteSource} over an existing
 * IEEEIO file: records are added after its last record, in that file's byte order, see
 * {@link appendWriter}). The header count is written as -1 by `begin()` and rewritten by
 * `finish()`.
 *
 * ## Reader
 *
 * One scan from byte 16 builds the record table; every header field is checked (unknown record
 * or number type, a record past end of file, a rank or dims that disagree with the data size
 * each throw {@link FormatError} with the offset). A header count of -1 (a writer that died) is
 * recovered by the scan without touching the file, and reported in `warnings`; a partial last
 * record is then dropped (with a warning) instead of being an error.
 * @module
 */
import { FormatError, UsageError } from "../errors.ts";
import { copySwapped, NATIVE_ORDER } from "../bytes/byteswap.ts";
import type {
  ByteOrder,
  ByteSource,
  Chunk,
  ChunkRef,
  DType,
  Frame,
  FrameIndex,
  FrameWriter,
  Framing,
  ReaderOptions,
  TypedArray,
  WriteOp,
  WriterOptions,
} from "./types.ts";
import { ALL_WORKLOADS, DTYPES, holdsDType, typedArray, WRITING_WORKLOADS } from "./types.ts";
import { cStringOf, elementCount, hexBytes } from "./kit.ts";
import { NumberColumn } from "./columns.ts";

const FORMAT = "ieeeio";
/** Bytes read at the start of each record during the scan. */
const PEEK_BYTES = 256;
/** A record whose first this many bytes are in the last peek is read from it, not read again. */
const PEEK_AGAIN_BYTES = 64;

/** Size of the file header in bytes. */
export const IEEEIO_FILE_HEADER_BYTES = 16;
/** Size of a record header in bytes (type, size, sequence id). */
export const IEEEIO_RECORD_HEADER_BYTES = 12;
/** Record type codes: 1 data, 2 annotation, 3 attribute. */
export const IEEEIO_RECORD = { data: 1, annotation: 2, attribute: 3 } as const;
/** Largest dataset or attribute payload in bytes (the size fields are 32-bit signed ints). */
export const IEEEIO_MAX_BYTES = 0x7fffffff;
/** Attribute names must be shorter than this many bytes (FlexIO's reader keeps them in a 64-byte buffer). */
export const IEEEIO_MAX_NAME_BYTES = 64;

/** The twelve IEEEIO number-type names, indexed by their type code (0..11). */
export const IEEEIO_TYPE_NAMES = [
  "Int8",
  "Int16",
  "Int32",
  "Int64",
  "Float32",
  "Float64",
  "uInt8",
  "uInt16",
  "uInt32",
  "uInt64",
  "Char8",
  "Char16",
] as const;

/** An IEEEIO number-type name (`Float64`, `Char16` ...). */
export type IeeeioTypeName = typeof IEEEIO_TYPE_NAMES[number];

/** Element size in bytes of each type code (0..11). */
const TYPE_SIZE = [1, 2, 4, 8, 4, 8, 1, 2, 4, 8, 1, 2] as const;
/** The type code each DType is written as. */
const DTYPE_CODE: Readonly<Record<DType, number>> = {
  int8: 0,
  int16: 1,
  int32: 2,
  int64: 3,
  float32: 4,
  float64: 5,
  uint8: 6,
  uint16: 7,
  uint32: 8,
  uint64: 9,
  char: 10,
};

/** The DType each type code reads back as: DTYPE_CODE inverted, and Char16 (11) as uint16. */
const TYPE_DTYPE: readonly DType[] = [
  ...Object.entries(DTYPE_CODE).sort((a, b) => a[1] - b[1]).map(([dtype]) => dtype as DType),
  "uint16",
];

/** The type code of an IEEEIO type name or a DType; throws UsageError for anything else. */
export function ieeeioTypeCode(type: IeeeioTypeName | DType): number {
  const byName = (IEEEIO_TYPE_NAMES as readonly string[]).indexOf(type);
  if (byName >= 0) return byName;
  const byDtype = (DTYPE_CODE as Record<string, number | undefined>)[type];
  if (byDtype === undefined) throw new UsageError(`ieeeio: unknown number type '${type}'`);
  return byDtype;
}

/** Element size in bytes of an IEEEIO type code; 0 for an unknown code. */
export function ieeeioTypeSize(code: number): number {
  return TYPE_SIZE[code as 0] ?? 0;
}

/** An attribute to attach to a dataset: a string (stored as Char8 without a NUL) or typed values. */
export interface IeeeioAttributeInput {
  /** Attribute name (fewer than 64 bytes, no NUL). */
  readonly name: string;
  /** Number type; default Char8 for a string, else the type of the typed array. */
  readonly type?: IeeeioTypeName;
  /** The value: a string, or elements in native byte order. */
  readonly value: string | TypedArray;
}

/** A chunk with IEEEIO extras; plain {@link Chunk}s are accepted everywhere too. */
export interface IeeeioChunk extends Chunk {
  /** Stored number type when it differs from `dtype` (same element size), e.g. `Char16` over uint16. */
  readonly numberType?: IeeeioTypeName;
  /** Attributes written right after the dataset, in order. */
  readonly attributes?: readonly IeeeioAttributeInput[];
  /** Annotations written after the attributes, in order. */
  readonly annotations?: readonly string[];
}

/** An attribute found by the reader. */
export interface IeeeioAttribute {
  /** Attribute name. */
  readonly name: string;
  /** Number type code (0..11). */
  readonly numberType: number;
  /** Number type name. */
  readonly type: IeeeioTypeName;
  /** Element count. */
  readonly count: number;
  /** Absolute byte offset of the attribute record's header. */
  readonly recordOffset: number;
  /** Absolute byte offset of the value. */
  readonly valueOffset: number;
  /** Value size in bytes. */
  readonly bytes: number;
  /** The value: text for Char8 (without a trailing NUL), else elements in native byte order. */
  readonly value: string | TypedArray;
}

/** An annotation found by the reader. */
export interface IeeeioAnnotation {
  /** Absolute byte offset of the annotation record's header. */
  readonly recordOffset: number;
  /** The text, without its terminating NUL. */
  readonly text: string;
}

/** One dataset (data record) found by the reader. */
export interface IeeeioDataset {
  /** 0-based dataset index (= its sequence id). */
  readonly index: number;
  /** Absolute byte offset of the record header. */
  readonly recordOffset: number;
  /** Absolute byte offset of the first data byte. */
  readonly dataOffset: number;
  /** Data size in bytes. */
  readonly bytes: number;
  /** Number type code (0..11). */
  readonly numberType: number;
  /** Number type name. */
  readonly type: IeeeioTypeName;
  /** The DType the data reads back as. */
  readonly dtype: DType;
  /** Dims as stored, Fortran order (fastest first). */
  readonly dims: readonly number[];
  /** Shape in C order (slowest first): `dims` reversed. */
  readonly shape: readonly number[];
  /** The stored `name` attribute (Char8 or uInt8), or null; chunks without one are `dataset/<k>`. */
  readonly name: string | null;
  /** Attributes attached to the dataset, in file order. */
  readonly attributes: readonly IeeeioAttribute[];
  /** Annotations attached to the dataset, in file order. */
  readonly annotations: readonly IeeeioAnnotation[];
}

/** The decoded layout of an IEEEIO file: datasets, grouped into frames. */
export interface IeeeioIndex extends FrameIndex {
  /** Byte order of the file. */
  readonly order: ByteOrder;
  /** The dataset count stored in the header (-1 for a file that was not closed). */
  readonly headerCount: number;
  /** Number of complete datasets. */
  readonly datasetCount: number;
  /** Dataset `i` (0-based); throws RangeError outside [0, datasetCount). */
  dataset(i: number): IeeeioDataset;
  /** Byte offset just after the last complete record (where an appender continues). */
  readonly endOffset: number;
}

/** Writer of IEEEIO files: frames, or datasets, attributes and annotations one at a time. */
export interface IeeeioWriter extends FrameWriter {
  /** Byte order being written. */
  readonly order: ByteOrder;
  /** Datasets in the file so far (including those of an appended-to file). */
  readonly datasetCount: number;
  /** Ops that append one dataset; `shape` is in C order (slowest first). */
  writeDataset(
    type: IeeeioTypeName | DType,
    shape: readonly number[],
    data: TypedArray,
  ): WriteOp[];
  /** Ops that attach an attribute to the current (last written) dataset. */
  writeAttribute(attribute: IeeeioAttributeInput): WriteOp[];
  /** Ops that attach an annotation (text, stored with a NUL) to the current dataset. */
  writeAnnotation(text: string): WriteOp[];
}

const encoder = new TextEncoder();

function byteView(data: TypedArray): Uint8Array {
  return data instanceof Uint8Array
    ? data
    : new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
}

function resolveOrder(endian: unknown): ByteOrder {
  if (endian === undefined || endian === "native") return NATIVE_ORDER;
  if (endian === "little" || endian === "big") return endian;
  throw new UsageError(`ieeeio: bad endian '${String(endian)}': expected little, big or native`);
}

/** The 16 header bytes for `order` and dataset `count` (-1 while open). */
function fileHeader(order: ByteOrder, count: number): Uint8Array {
  const b = new Uint8Array(IEEEIO_FILE_HEADER_BYTES);
  const v = new DataView(b.buffer);
  const le = order === "little";
  b.set([1, 2, 3, 4], 0);
  v.setInt32(4, 0x01020304, le);
  v.setInt32(8, count, le);
  v.setInt16(12, 1, le);
  v.setInt16(14, 0, le);
  return b;
}

/** Writes `bytes` (elements of `width` bytes, native order) into `dst` at `at` in the file order. */
function putData(
  dst: Uint8Array,
  at: number,
  bytes: Uint8Array,
  width: number,
  swap: boolean,
): void {
  const target = dst.subarray(at, at + bytes.length);
  if (swap && width > 1) copySwapped(bytes, target, width);
  else target.set(bytes);
}

class Writer implements IeeeioWriter {
  readonly order: ByteOrder;
  readonly #le: boolean;
  readonly #swap: boolean;
  #end: number;
  #count: number;
  #frames: number;
  #current: number;
  #began = false;
  #finished = false;
  /** Scratch for headers and swapped data; ops alias it until the next call. */
  #scratch = new Uint8Array(4096);
  #used = 0;

  constructor(order: ByteOrder, end: number, count: number, frames: number) {
    this.order = order;
    this.#le = order === "little";
    this.#swap = order !== NATIVE_ORDER;
    this.#end = end;
    this.#count = count;
    this.#frames = frames;
    this.#current = count - 1;
  }

  get datasetCount(): number {
    return this.#count;
  }

  begin(): WriteOp[] {
    if (this.#began) throw new Error("ieeeio: begin() called twice");
    this.#began = true;
    // Fresh file: the header with count -1. Append: the header rewritten with -1 ("open").
    return [{ kind: "write", offset: 0, data: fileHeader(this.order, -1) }];
  }

  finish(): WriteOp[] {
    this.#check();
    this.#finished = true;
    return [{ kind: "write", offset: 0, data: fileHeader(this.order, this.#count) }];
  }

  writeFrame(frame: Frame): WriteOp[] {
    this.#check();
    this.#used = 0;
    const ops: WriteOp[] = [];
    const frameIndex = this.#frames;
    frame.chunks.forEach((chunk: IeeeioChunk, k) => {
      const code = chunk.numberType === undefined
        ? DTYPE_CODE[chunk.dtype]
        : ieeeioTypeCode(chunk.numberType);
      if (chunk.numberType !== undefined && TYPE_SIZE[code as 0] !== byteWidth(chunk.dtype)) {
        throw new UsageError(
          `ieeeio: chunk '${chunk.name}': number type ${chunk.numberType} does not fit dtype ${chunk.dtype}`,
        );
      }
      this.#dataset(ops, code, chunk.shape, chunk.data, chunk.name);
      if (chunk.name !== `dataset/${k}`) {
        this.#attribute(ops, { name: "name", value: chunk.name });
      }
      if (k === 0 && frame.chunks.length > 1) {
        this.#attribute(ops, {
          name: "frame_datasets",
          type: "Int32",
          value: new Int32Array([frame.chunks.length]),
        });
      }
      if (k === 0 && frame.step !== frameIndex) {
        this.#attribute(ops, {
          name: "step",
          type: "Int64",
          value: new BigInt64Array([BigInt(frame.step)]),
        });
      }
      for (const a of chunk.attributes ?? []) this.#attribute(ops, a);
      for (const t of chunk.annotations ?? []) this.#annotation(ops, t);
    });
    if (frame.chunks.length > 0) this.#frames++;
    return ops;
  }

  writeDataset(
    type: IeeeioTypeName | DType,
    shape: readonly number[],
    data: TypedArray,
  ): WriteOp[] {
    this.#check();
    this.#used = 0;
    const ops: WriteOp[] = [];
    this.#dataset(ops, ieeeioTypeCode(type), shape, data, `dataset ${this.#count}`);
    this.#frames++;
    return ops;
  }

  writeAttribute(attribute: IeeeioAttributeInput): WriteOp[] {
    this.#check();
    this.#used = 0;
    const ops: WriteOp[] = [];
    this.#attribute(ops, attribute);
    return ops;
  }

  writeAnnotation(text: string): WriteOp[] {
    this.#check();
    this.#used = 0;
    const ops: WriteOp[] = [];
    this.#annotation(ops, text);
    return ops;
  }

  #check(): void {
    if (!this.#began) throw new Error("ieeeio: begin() must be called first");
    if (this.#finished) throw new Error("ieeeio: the writer is finished");
  }

  /** A region of `n` scratch bytes that stays valid until the next public call. */
  #take(n: number): Uint8Array {
    if (this.#used + n > this.#scratch.length) {
      // Earlier regions of this call are already referenced by ops: start a new buffer.
      this.#scratch = new Uint8Array(Math.max(n, this.#scratch.length * 2));
      this.#used = 0;
    }
    const out = this.#scratch.subarray(this.#used, this.#used + n);
    this.#used += n;
    return out;
  }

  #dataset(
    ops: WriteOp[],
    code: number,
    shape: readonly number[],
    data: TypedArray,
    what: string,
  ): void {
    const width = TYPE_SIZE[code as 0];
    const bytes = byteView(data);
    if (shape.some((d) => !Number.isSafeInteger(d) || d < 0 || d > IEEEIO_MAX_BYTES)) {
      throw new UsageError(`ieeeio: '${what}': bad shape [${shape.join(", ")}]`);
    }
    const n = elementCount(shape);
    if (n * width !== bytes.length) {
      throw new RangeError(
        `ieeeio: '${what}': shape [${shape.join(", ")}] of ${IEEEIO_TYPE_NAMES[code as 0]} needs ${
          n * width
        } bytes, data has ${bytes.length}`,
      );
    }
    if (bytes.length > IEEEIO_MAX_BYTES) {
      throw new UsageError(
        `ieeeio: '${what}' is ${bytes.length} bytes; IEEEIO stores at most ${IEEEIO_MAX_BYTES} bytes per dataset`,
      );
    }
    const rank = shape.length;
    const head = 24 + 4 * rank;
    const le = this.#le;
    const index = this.#count;
    // Native order: the header and the caller's data as two ops (no copy). Swapped: one op.
    const buf = this.#take(this.#swap && width > 1 ? head + bytes.length : head);
    const v = new DataView(buf.buffer, buf.byteOffset, head);
    v.setInt32(0, IEEEIO_RECORD.data, le);
    v.setInt32(4, bytes.length + 12 + 4 * rank, le);
    v.setInt32(8, index, le);
    v.setInt32(12, bytes.length, le);
    v.setInt32(16, code, le);
    v.setInt32(20, rank, le);
    for (let i = 0; i < rank; i++) v.setInt32(24 + 4 * i, shape[rank - 1 - i]!, le);
    if (buf.length > head) {
      putData(buf, head, bytes, width, true);
      ops.push({ kind: "write", offset: this.#end, data: buf });
    } else {
      ops.push({ kind: "write", offset: this.#end, data: buf });
      if (bytes.length > 0) ops.push({ kind: "write", offset: this.#end + head, data: bytes });
    }
    this.#end += head + bytes.length;
    this.#count++;
    this.#current = index;
  }

  #attribute(ops: WriteOp[], a: IeeeioAttributeInput): void {
    if (this.#current < 0) {
      throw new UsageError(`ieeeio: attribute '${a.name}' written before any dataset`);
    }
    const name = encoder.encode(a.name);
    if (name.length >= IEEEIO_MAX_NAME_BYTES || name.includes(0) || name.length === 0) {
      throw new UsageError(
        `ieeeio: attribute name '${a.name}' must be 1..${
          IEEEIO_MAX_NAME_BYTES - 1
        } bytes without NUL`,
      );
    }
    let code: number;
    let value: Uint8Array;
    if (typeof a.value === "string") {
      code = ieeeioTypeCode(a.type ?? "Char8");
      value = encoder.encode(a.value);
      if (TYPE_SIZE[code as 0] !== 1) {
        throw new UsageError(
          `ieeeio: string attribute '${a.name}' needs a 1-byte type, not ${a.type}`,
        );
      }
    } else {
      code = ieeeioTypeCode(a.type ?? typedArrayDtype(a.value));
      value = byteView(a.value);
      if (value.length % TYPE_SIZE[code as 0] !== 0) {
        throw new UsageError(
          `ieeeio: attribute '${a.name}' is not a whole number of ${a.type} elements`,
        );
      }
    }
    if (value.length > IEEEIO_MAX_BYTES - 100) {
      throw new UsageError(`ieeeio: attribute '${a.name}' is too large (${value.length} bytes)`);
    }
    const size = 24 + name.length + 1 + value.length;
    const buf = this.#take(size);
    const v = new DataView(buf.buffer, buf.byteOffset, 24);
    const le = this.#le;
    v.setInt32(0, IEEEIO_RECORD.attribute, le);
    v.setInt32(4, size - 12, le);
    v.setInt32(8, this.#current, le);
    v.setInt32(12, value.length, le);
    v.setInt32(16, code, le);
    v.setInt32(20, name.length + 1, le);
    buf.set(name, 24);
    buf[24 + name.length] = 0;
    putData(buf, 25 + name.length, value, TYPE_SIZE[code as 0], this.#swap);
    ops.push({ kind: "write", offset: this.#end, data: buf });
    this.#end += size;
  }

  #annotation(ops: WriteOp[], text: string): void {
    if (this.#current < 0) throw new UsageError("ieeeio: annotation written before any dataset");
    const t = encoder.encode(text);
    if (t.includes(0)) throw new UsageError("ieeeio: an annotation cannot contain a NUL character");
    const size = 12 + t.length + 1;
    const buf = this.#take(size);
    const v = new DataView(buf.buffer, buf.byteOffset, 12);
    v.setInt32(0, IEEEIO_RECORD.annotation, this.#le);
    v.setInt32(4, t.length + 1, this.#le);
    v.setInt32(8, this.#current, this.#le);
    buf.set(t, 12);
    buf[12 + t.length] = 0;
    ops.push({ kind: "write", offset: this.#end, data: buf });
    this.#end += size;
  }
}

function byteWidth(dtype: DType): number {
  return TYPE_SIZE[DTYPE_CODE[dtype] as 0];
}

function typedArrayDtype(a: TypedArray): DType {
  return DTYPES.find((d) => holdsDType(a, d)) ?? "uint8";
}

/**
 * A writer that appends to an existing IEEEIO file (read through `source`), in that file's byte
 * order: `begin()` rewrites its header with count -1, records go after its last complete record,
 * `finish()` writes the new total. A file with count -1 is recovered first (as the reader does).
 */
export function appendWriter(source: ByteSource): IeeeioWriter {
  const index = openIeeeio(source, {});
  return new Writer(index.order, index.endOffset, index.datasetCount, index.frameCount);
}

/** A new writer; options `endian` (native default) and `append` (a ByteSource, see {@link appendWriter}). */
export function createIeeeioWriter(options: WriterOptions = {}): IeeeioWriter {
  const append = options["append"];
  if (append !== undefined) {
    if (!isByteSource(append)) throw new UsageError("ieeeio: option 'append' must be a ByteSource");
    if (options.endian !== undefined && options.endian !== "native") {
      // The file's own order wins (as FlexIO's append mode); a contradicting request is an error.
      const w = appendWriter(append);
      if (w.order !== options.endian) {
        throw new UsageError(
          `ieeeio: cannot append ${options.endian}-endian data to ${append.path}, a ${w.order}-endian file`,
        );
      }
      return w;
    }
    return appendWriter(append);
  }
  return new Writer(resolveOrder(options.endian), IEEEIO_FILE_HEADER_BYTES, 0, 0);
}

function isByteSource(x: unknown): x is ByteSource {
  return typeof x === "object" && x !== null && typeof (x as ByteSource).read === "function" &&
    typeof (x as ByteSource).size === "number";
}

// ---------------------------------------------------------------------------------------------
// Reader

/** Dims (file order) and the shape (C order) they give, shared by every dataset with them. */
interface DimsShape {
  readonly dims: readonly number[];
  readonly shape: readonly number[];
}

/** The data records found by the scan, a column per field, one entry per dataset. */
interface DatasetColumns {
  readonly recordOffset: NumberColumn;
  readonly dataOffset: NumberColumn;
  readonly bytes: NumberColumn;
  readonly numberType: NumberColumn;
  /** Id of the dims in the interner. */
  readonly dims: NumberColumn;
}

/** Number type recorded for an annotation in {@link AttachmentColumns} (not an IEEEIO code). */
const ANNOTATION = -1;

/**
 * The attribute and annotation records found by the scan, in file order, a column per field:
 * an annotation has number type ANNOTATION, its text as value, its body offset and size.
 */
interface AttachmentColumns {
  readonly seq: NumberColumn;
  readonly recordOffset: NumberColumn;
  readonly valueOffset: NumberColumn;
  readonly bytes: NumberColumn;
  readonly numberType: NumberColumn;
  /** Id of the name in the interner. */
  readonly name: NumberColumn;
  /** Id of the value in the interner, or -1 for a one-element number kept in `scalar`. */
  readonly value: NumberColumn;
  /** The value of a one-element numeric attribute (no typed array per attribute); else NaN. */
  readonly scalar: NumberColumn;
}

/** Distinct dims and short strings the interner compares directly before making a key. */
const RECENT = 8;
/** Strings up to this many bytes (attribute names, FlexIO's limit) are compared as bytes. */
const SHORT_STRING_BYTES = IEEEIO_MAX_NAME_BYTES;

/** True when `a` and `b` hold the same bytes (short arrays: names). */
function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/** Type codes whose one-element values are kept as a number (not a typed array): ints and floats but uInt8 and the chars. */
const SCALAR_CODES: ReadonlySet<number> = new Set([0, 1, 2, 3, 4, 5, 7, 8, 9]);

/** The one element of type `code` at byte `at` of `view` as a number; NaN when it is not one (a NaN, or a 64-bit integer past 2^53). */
function scalarAt(view: DataView, at: number, code: number, le: boolean): number {
  let v: number;
  switch (code) {
    case 0:
      return view.getInt8(at);
    case 1:
      return view.getInt16(at, le);
    case 2:
      return view.getInt32(at, le);
    case 3:
      v = Number(view.getBigInt64(at, le));
      return Number.isSafeInteger(v) ? v : NaN;
    case 4:
      return view.getFloat32(at, le);
    case 5:
      return view.getFloat64(at, le);
    case 7:
      return view.getUint16(at, le);
    case 8:
      return view.getUint32(at, le);
    case 9:
      v = Number(view.getBigUint64(at, le));
      return Number.isSafeInteger(v) ? v : NaN;
    default:
      return NaN;
  }
}

/** Largest attribute value (bytes) that is interned: equal small values share one array. */
const INTERN_VALUE_BYTES = 16;

/**
 * One copy of each distinct string, dims and small attribute value the scan meets, so an index
 * of a million frames holds a few of each, not a million (values handed out are shared: read
 * them, do not modify them).
 */
class Interner {
  /** Strings and values by id. */
  readonly values: (string | TypedArray)[] = [];
  /** Dims by id. */
  readonly dimsShapes: DimsShape[] = [];
  readonly #strings = new Map<string, number>();
  readonly #dims = new Map<string, number>();
  readonly #small = new Map<string, number>();
  readonly #recentStrings: { bytes: Uint8Array; id: number }[] = [];

  /** Id of string `s`. */
  string(s: string): number {
    let id = this.#strings.get(s);
    if (id === undefined) {
      id = this.values.push(s) - 1;
      this.#strings.set(s, id);
    }
    return id;
  }

  /** Id of `dims` (file order) and their shape; `dims` may be reused by the caller afterwards. */
  dims(dims: readonly number[]): number {
    // a file has a few distinct dims: they are compared before a key is made
    for (let id = 0; id < Math.min(this.dimsShapes.length, RECENT); id++) {
      const known = this.dimsShapes[id]!.dims;
      if (known.length === dims.length && known.every((d, i) => d === dims[i])) return id;
    }
    const key = dims.join(",");
    let id = this.#dims.get(key);
    if (id === undefined) {
      const copy = dims.slice();
      id = this.dimsShapes.push({ dims: copy, shape: copy.toReversed() }) - 1;
      this.#dims.set(key, id);
    }
    return id;
  }

  /** Id of the NUL-terminated UTF-8 string in `raw`: the first few distinct short ones are compared as bytes, not decoded again. */
  cString(raw: Uint8Array): number {
    const short = raw.length <= SHORT_STRING_BYTES;
    if (short) {
      for (const known of this.#recentStrings) {
        if (sameBytes(known.bytes, raw)) return known.id;
      }
    }
    const id = this.string(cStringOf(raw));
    if (short && this.#recentStrings.length < RECENT) {
      this.#recentStrings.push({ bytes: raw.slice(), id });
    }
    return id;
  }

  /** Id of the elements of `raw` (number type `code`, file order `order`) decoded. */
  elements(raw: Uint8Array, code: number, order: ByteOrder): number {
    if (raw.length > INTERN_VALUE_BYTES) {
      return this.values.push(decodeValues(raw, code, order)) - 1;
    }
    const key = `${code}:${raw.join(",")}`;
    let id = this.#small.get(key);
    if (id === undefined) {
      id = this.values.push(decodeValues(raw, code, order)) - 1;
      this.#small.set(key, id);
    }
    return id;
  }
}

/** For each dataset, its attachments in file order: `order[start[i] .. start[i + 1])`. */
function attachmentsByDataset(
  seqs: NumberColumn,
  datasets: number,
): { start: Int32Array; order: Int32Array } {
  const start = new Int32Array(datasets + 1);
  for (let k = 0; k < seqs.length; k++) start[seqs.at(k) + 1]!++;
  for (let i = 0; i < datasets; i++) start[i + 1]! += start[i]!;
  const fill = start.slice(0, datasets);
  const order = new Int32Array(seqs.length);
  for (let k = 0; k < seqs.length; k++) order[fill[seqs.at(k)]!++] = k;
  return { start, order };
}

/** Element values of `bytes` (file order `order`) as a native typed array of type `code` (a copy). */
function decodeValues(bytes: Uint8Array, code: number, order: ByteOrder): TypedArray {
  const copy = bytes.slice();
  const width = TYPE_SIZE[code as 0];
  if (order !== NATIVE_ORDER && width > 1) copySwapped(copy, copy, width);
  const dtype = TYPE_DTYPE[code];
  return dtype === undefined ? copy : typedArray(dtype, copy.length / width, copy.buffer);
}

function jsonValue(v: string | TypedArray, limit = 16): unknown {
  if (typeof v === "string") return v;
  const items: unknown[] = [];
  for (let i = 0; i < Math.min(v.length, limit); i++) {
    const x = v[i]!;
    items.push(
      typeof x === "bigint" ? (Number.isSafeInteger(Number(x)) ? Number(x) : x.toString()) : x,
    );
  }
  if (v.length > limit) items.push(`... (${v.length} values)`);
  return items;
}

/** Decodes an IEEEIO file's record table; options: `datasetsPerFrame` (positive integer). */
export function openIeeeio(source: ByteSource, options: ReaderOptions = {}): IeeeioIndex {
  const path = source.path;
  const size = source.size;
  const fail = (offset: number, problem: string): never => {
    throw new FormatError(FORMAT, path, offset, problem);
  };
  /**
   * The bytes [offset, offset + length), through the peek: one window (in place, from the
   * source's mapping) or read covers a record's headers, dims, short names and values, and often
   * the next records. What it returns is valid until the next call: use it at once.
   */
  const read = (offset: number, length: number, what: string): Uint8Array => {
    const at = cover(offset, length, what);
    return peek.subarray(at, at + length);
  };
  /** Puts [offset, offset + length) in the peek (or fails naming `what`); its index in the peek. */
  const cover = (offset: number, length: number, what: string): number => {
    if (offset + length > size) {
      fail(offset, `truncated ${what}: need ${length} bytes but the file ends at byte ${size}`);
    }
    if (offset < peekAt || offset + length > peekAt + peek.length) fetch(offset, length);
    if (peekInPlace) inPlaceBytes += length;
    return offset - peekAt;
  };
  /** Moves the peek to `offset`, at least `length` bytes (inside the file). */
  const fetch = (offset: number, length: number): void => {
    const want = Math.min(size - offset, Math.max(length, PEEK_BYTES));
    const window = source.window?.(offset, want);
    peekInPlace = window !== undefined;
    peek = window ?? source.read(offset, want);
    peekView = new DataView(peek.buffer, peek.byteOffset, peek.byteLength);
    peekAt = offset;
  };
  let peek: Uint8Array = new Uint8Array(0);
  let peekView = new DataView(peek.buffer);
  let peekAt = 0;
  /** True when the peek is a window of the source's; bytes read from such peeks. */
  let peekInPlace = false;
  let inPlaceBytes = 0;

  if (size < IEEEIO_FILE_HEADER_BYTES) {
    fail(0, `file is ${size} bytes, shorter than the 16-byte IEEEIO header`);
  }
  const head = source.read(0, IEEEIO_FILE_HEADER_BYTES);
  if (head[0] !== 1 || head[1] !== 2 || head[2] !== 3 || head[3] !== 4) {
    fail(0, `wrong magic number ${hexBytes(head.subarray(0, 4))}: expected 01 02 03 04`);
  }
  const mark = hexBytes(head.subarray(4, 8));
  if (mark !== "04 03 02 01" && mark !== "01 02 03 04") {
    fail(4, `byte-order mark ${mark} is neither 04 03 02 01 (little) nor 01 02 03 04 (big)`);
  }
  const order: ByteOrder = mark === "04 03 02 01" ? "little" : "big";
  const le = order === "little";
  const hv = new DataView(head.buffer, head.byteOffset, head.byteLength);
  const headerCount = hv.getInt32(8, le);
  const version = `${hv.getInt16(12, le)}.${hv.getInt16(14, le)}`;
  const recovering = headerCount < 0;
  const warnings: string[] = [];

  // Compact tables (memory linear in the records with a small constant): a column per field,
  // strings and small values interned, IeeeioDataset objects made only when asked for.
  const ds: DatasetColumns = {
    recordOffset: new NumberColumn("float64"),
    dataOffset: new NumberColumn("float64"),
    bytes: new NumberColumn("int32"),
    numberType: new NumberColumn("int32"),
    dims: new NumberColumn("int32"),
  };
  const at: AttachmentColumns = {
    seq: new NumberColumn("int32"),
    recordOffset: new NumberColumn("float64"),
    valueOffset: new NumberColumn("float64"),
    bytes: new NumberColumn("int32"),
    numberType: new NumberColumn("int32"),
    name: new NumberColumn("int32"),
    value: new NumberColumn("int32"),
    scalar: new NumberColumn("float64"),
  };
  const valueOf = (id: number) => intern.values[id]!;
  const intern = new Interner();
  /** The dims of the data record being read (copied by the interner when new). */
  const dimsScratch: number[] = [];
  /**
   * The 12-byte header of the data or attribute record at `pos` (body at `body`): its data size,
   * type code, third field (rank, or name size) and element width; fails on a record too small
   * for it or an unknown type code.
   */
  const typedHeader = (pos: number, body: number, recSize: number, what: string) => {
    if (recSize < 12) {
      fail(pos + 4, `${what} record size ${recSize} is smaller than its 12-byte header`);
    }
    const at = cover(body, 12, `${what} header`);
    const code = peekView.getInt32(at + 4, le);
    const width = ieeeioTypeSize(code);
    if (width === 0) fail(body + 4, `unknown number type code ${code}: expected 0..11`);
    return {
      dataSize: peekView.getInt32(at, le),
      code,
      third: peekView.getInt32(at + 8, le),
      width,
    };
  };
  let pos = IEEEIO_FILE_HEADER_BYTES;
  let end = pos;
  let dropped = "";
  scan: while (pos < size) {
    // A partial last record is an error in a closed file, and the crash's leftovers when recovering.
    const left = size - pos;
    if (left < IEEEIO_RECORD_HEADER_BYTES) {
      if (recovering) {
        dropped = `a partial record header (${left} bytes) at byte ${pos}`;
        break;
      }
      fail(pos, `truncated record header: ${left} bytes left, a record header needs 12`);
    }
    // Small attribute and annotation records follow one another: one peek covers several.
    if (pos < peekAt || pos + Math.min(left, PEEK_AGAIN_BYTES) > peekAt + peek.length) {
      fetch(pos, IEEEIO_RECORD_HEADER_BYTES);
    }
    if (peekInPlace) inPlaceBytes += IEEEIO_RECORD_HEADER_BYTES;
    const type = peekView.getInt32(pos - peekAt, le);
    const recSize = peekView.getInt32(pos - peekAt + 4, le);
    const seq = peekView.getInt32(pos - peekAt + 8, le);
    if (type < 1 || type > 3) {
      fail(pos, `unknown record type ${type}: expected 1 (data), 2 (annotation) or 3 (attribute)`);
    }
    if (recSize < 0) fail(pos + 4, `negative record size ${recSize}`);
    const body = pos + IEEEIO_RECORD_HEADER_BYTES;
    if (body + recSize > size) {
      if (recovering) {
        dropped = `a partial record (${recSize} bytes declared, ${
          size - body
        } present) at byte ${pos}`;
        break scan;
      }
      fail(
        pos + 4,
        `record size ${recSize} runs past the end of the file: the record would end at byte ${
          body + recSize
        }, the file ends at byte ${size}`,
      );
    }
    if (type === IEEEIO_RECORD.data) {
      const { dataSize, code, third: rank, width } = typedHeader(pos, body, recSize, "data");
      if (dataSize < 0) fail(body, `negative data size ${dataSize}`);
      if (rank < 0 || 12 + 4 * rank > recSize) {
        fail(body + 8, `rank ${rank} does not fit in a data record of ${recSize} bytes`);
      }
      if (recSize !== dataSize + 12 + 4 * rank) {
        fail(
          pos + 4,
          `record size ${recSize} does not match data size ${dataSize} + 12 + 4 x rank ${rank} = ${
            dataSize + 12 + 4 * rank
          }`,
        );
      }
      const dimsAt = cover(body + 12, 4 * rank, "dims");
      const dims = dimsScratch;
      dims.length = rank;
      for (let i = 0, at = dimsAt; i < rank; i++) {
        const d = peekView.getInt32(at + 4 * i, le);
        if (d < 0) fail(body + 12 + 4 * i, `negative dimension ${d}`);
        dims[i] = d;
      }
      const expect = elementCount(dims) * width;
      if (expect !== dataSize) {
        fail(
          body + 12,
          `dims [${dims.join(", ")}] of ${
            IEEEIO_TYPE_NAMES[code as 0]
          } need ${expect} bytes but the data size is ${dataSize}`,
        );
      }
      if (seq !== ds.dims.length) {
        fail(pos + 8, `data record has sequence id ${seq}, expected ${ds.dims.length}`);
      }
      ds.recordOffset.push(pos);
      ds.dataOffset.push(body + 12 + 4 * rank);
      ds.bytes.push(dataSize);
      ds.numberType.push(code);
      ds.dims.push(intern.dims(dims));
    } else if (type === IEEEIO_RECORD.annotation) {
      const text = intern.string(cStringOf(read(body, recSize, "annotation")));
      at.seq.push(seq);
      at.recordOffset.push(pos);
      at.valueOffset.push(body);
      at.bytes.push(recSize);
      at.numberType.push(ANNOTATION);
      at.name.push(-1);
      at.value.push(text);
      at.scalar.push(NaN);
    } else {
      const { dataSize, code, third: nameSize, width } = typedHeader(
        pos,
        body,
        recSize,
        "attribute",
      );
      if (dataSize < 0 || dataSize % width !== 0) {
        fail(
          body,
          `attribute data size ${dataSize} is not a whole number of ${width}-byte elements`,
        );
      }
      if (nameSize < 1 || recSize !== dataSize + nameSize + 12) {
        fail(
          pos + 4,
          `attribute record size ${recSize} does not match value ${dataSize} + name ${nameSize} + 12 bytes`,
        );
      }
      const name = intern.cString(read(body + 12, nameSize, "attribute name"));
      const valueOffset = body + 12 + nameSize;
      const valueAt = cover(valueOffset, dataSize, "attribute value");
      at.seq.push(seq);
      at.recordOffset.push(pos);
      at.valueOffset.push(valueOffset);
      at.bytes.push(dataSize);
      at.numberType.push(code);
      at.name.push(name);
      const scalar = dataSize === width && SCALAR_CODES.has(code)
        ? scalarAt(peekView, valueAt, code, le)
        : NaN;
      at.scalar.push(scalar);
      if (!Number.isNaN(scalar)) at.value.push(-1);
      else {
        const raw = peek.subarray(valueAt, valueAt + dataSize);
        at.value.push(code === 10 ? intern.cString(raw) : intern.elements(raw, code, order));
      }
    }
    pos = body + recSize;
    end = pos;
  }
  if (inPlaceBytes > 0) source.readInPlace?.(inPlaceBytes);
  // Attachments carry the sequence id of their dataset (usually the one before them).
  const datasetCount = ds.dims.length;
  for (const column of [...Object.values(ds), ...Object.values(at)]) column.trim();
  for (let k = 0; k < at.seq.length; k++) {
    const seq = at.seq.at(k);
    if (seq < 0 || seq >= datasetCount) {
      fail(
        at.recordOffset.at(k) + 8,
        `record belongs to dataset ${seq} but the file has ${datasetCount} datasets`,
      );
    }
  }
  const attached = attachmentsByDataset(at.seq, datasetCount);
  if (recovering) {
    warnings.push(
      `header dataset count is ${headerCount} (the writer did not close the file); ` +
        `found ${datasetCount} datasets by scanning (the file was not changed)`,
    );
    if (dropped) warnings.push(`ignored ${dropped} left by the unfinished write`);
  } else if (headerCount !== datasetCount) {
    fail(
      8,
      `header says ${headerCount} datasets but the file holds ${datasetCount} data records`,
    );
  }

  /** Attachment index of dataset i's first attribute named `name`, or -1. */
  const attr = (i: number, name: string): number => {
    const nameId = intern.string(name);
    for (let j = attached.start[i]!; j < attached.start[i + 1]!; j++) {
      const k = attached.order[j]!;
      if (at.numberType.at(k) !== ANNOTATION && at.name.at(k) === nameId) return k;
    }
    return -1;
  };
  /** The value of attribute k (a one-element number made a typed array again). */
  const attributeValue = (k: number): string | TypedArray => {
    const id = at.value.at(k);
    if (id >= 0) return valueOf(id);
    const code = at.numberType.at(k);
    const out = typedArray(TYPE_DTYPE[code]!, 1);
    if (out instanceof BigInt64Array || out instanceof BigUint64Array) {
      out[0] = BigInt(at.scalar.at(k));
    } else out[0] = at.scalar.at(k);
    return out;
  };
  /** The first element of numeric attribute k, as a number. */
  const numberAt = (k: number): number => {
    const id = at.value.at(k);
    return id < 0 ? at.scalar.at(k) : Number((valueOf(id) as TypedArray)[0]!);
  };
  // Per dataset, the interner's id of its name (-1: none): 4 bytes a dataset, no array of strings.
  const nameIds = new Int32Array(datasetCount).fill(-1);
  for (let i = 0; i < datasetCount; i++) {
    const k = attr(i, "name");
    const code = k < 0 ? -1 : at.numberType.at(k);
    if (code === 10) nameIds[i] = at.value.at(k);
    else if (code === 6) nameIds[i] = intern.string(cStringOf(attributeValue(k) as Uint8Array));
  }
  /** Dataset i's stored name, or null. */
  const nameOf = (i: number): string | null =>
    nameIds[i]! < 0 ? null : valueOf(nameIds[i]!) as string;
  /** The attribute at attachment k as the reader reports it. */
  const attributeAt = (k: number): IeeeioAttribute => {
    const code = at.numberType.at(k);
    return {
      name: valueOf(at.name.at(k)) as string,
      numberType: code,
      type: IEEEIO_TYPE_NAMES[code as 0],
      count: at.bytes.at(k) / ieeeioTypeSize(code),
      recordOffset: at.recordOffset.at(k),
      valueOffset: at.valueOffset.at(k),
      bytes: at.bytes.at(k),
      value: attributeValue(k),
    };
  };
  /** Dataset i as the reader reports it, made when asked for. */
  const datasetAt = (i: number): IeeeioDataset => {
    const attributes: IeeeioAttribute[] = [];
    const annotations: IeeeioAnnotation[] = [];
    for (let j = attached.start[i]!; j < attached.start[i + 1]!; j++) {
      const k = attached.order[j]!;
      if (at.numberType.at(k) === ANNOTATION) {
        annotations.push({
          recordOffset: at.recordOffset.at(k),
          text: valueOf(at.value.at(k)) as string,
        });
      } else {
        attributes.push(attributeAt(k));
      }
    }
    const code = ds.numberType.at(i);
    return {
      index: i,
      recordOffset: ds.recordOffset.at(i),
      dataOffset: ds.dataOffset.at(i),
      bytes: ds.bytes.at(i),
      numberType: code,
      type: IEEEIO_TYPE_NAMES[code as 0],
      dtype: TYPE_DTYPE[code]!,
      dims: intern.dimsShapes[ds.dims.at(i)]!.dims,
      shape: intern.dimsShapes[ds.dims.at(i)]!.shape,
      name: nameOf(i),
      attributes,
      annotations,
    };
  };

  // Group datasets into frames.
  const frameStart = new NumberColumn("int32");
  const frameLen = new NumberColumn("int32");
  // Grouping: an explicit datasetsPerFrame; else the writer's frame_datasets attributes; else,
  // for a file without them, the caller's layout (a workload reading its own k-chunk frames).
  let marked = false;
  for (let i = 0; i < datasetCount && !marked; i++) marked = attr(i, "frame_datasets") >= 0;
  const layout = options.layout;
  const perFrame = options["datasetsPerFrame"] ??
    (!marked && layout !== undefined && layout.length > 1 ? layout.length : undefined);
  if (perFrame !== undefined) {
    if (typeof perFrame !== "number" || !Number.isSafeInteger(perFrame) || perFrame < 1) {
      throw new UsageError(
        `ieeeio: datasetsPerFrame must be a positive integer, not ${String(perFrame)}`,
      );
    }
    for (let i = 0; i + perFrame <= datasetCount; i += perFrame) {
      frameStart.push(i);
      frameLen.push(perFrame);
    }
    const rest = datasetCount % perFrame;
    if (rest !== 0) {
      warnings.push(
        `the last ${rest} datasets do not make a whole frame of ${perFrame} and are not read`,
      );
    }
  } else {
    for (let i = 0; i < datasetCount;) {
      const fd = attr(i, "frame_datasets");
      let k = 1;
      if (fd >= 0 && at.numberType.at(fd) === 2 && at.bytes.at(fd) === 4) {
        k = numberAt(fd);
        if (k < 1) {
          fail(
            at.valueOffset.at(fd),
            `frame_datasets attribute is ${k}, expected a positive count`,
          );
        }
      }
      if (i + k > datasetCount) {
        if (!recovering) {
          fail(
            at.valueOffset.at(fd),
            `frame of ${k} datasets starts at dataset ${i} but the file has only ${datasetCount}`,
          );
        }
        warnings.push(`the last frame (datasets ${i}..) is incomplete and is not read`);
        break;
      }
      frameStart.push(i);
      frameLen.push(k);
      i += k;
    }
  }
  frameStart.trim();
  frameLen.trim();
  const frameCount = frameStart.length;
  const steps = new Float64Array(frameCount);
  for (let f = 0; f < frameCount; f++) {
    const st = perFrame === undefined ? attr(frameStart.at(f), "step") : -1;
    const code = st < 0 ? -1 : at.numberType.at(st);
    const stored = (code === 3 && at.bytes.at(st) === 8) || (code === 2 && at.bytes.at(st) === 4);
    steps[f] = stored ? numberAt(st) : f;
  }

  // The last frame's chunk refs only: a cache of every frame read would grow with the file.
  let refsFrame = -1;
  let refs: ChunkRef[] = [];
  const index: IeeeioIndex = {
    framing: FORMAT,
    order,
    headerCount,
    datasetCount,
    endOffset: end,
    frameCount,
    warnings,
    dataset(i: number): IeeeioDataset {
      if (!Number.isInteger(i) || i < 0 || i >= datasetCount) {
        throw new RangeError(`dataset ${i} is outside 0..${datasetCount - 1}`);
      }
      return datasetAt(i);
    },
    chunks(frame: number): readonly ChunkRef[] {
      if (!Number.isInteger(frame) || frame < 0 || frame >= frameCount) {
        throw new RangeError(`frame ${frame} is outside 0..${frameCount - 1}`);
      }
      if (refsFrame !== frame) {
        refs = [];
        const start = frameStart.at(frame);
        for (let k = 0; k < frameLen.at(frame); k++) {
          const i = start + k;
          refs.push({
            name: nameOf(i) ?? `dataset/${k}`,
            dtype: TYPE_DTYPE[ds.numberType.at(i)]!,
            shape: intern.dimsShapes[ds.dims.at(i)]!.shape,
            offset: ds.dataOffset.at(i),
            bytes: ds.bytes.at(i),
            order,
          });
        }
        refsFrame = frame;
      }
      return refs;
    },
    step(frame: number): number | undefined {
      return Number.isInteger(frame) && frame >= 0 && frame < frameCount ? steps[frame] : undefined;
    },
    describe(): Record<string, unknown> {
      return {
        format: "IEEEIO",
        version,
        byteOrder: order,
        headerCount,
        recovered: recovering,
        datasets: datasetCount,
        frames: frameCount,
        records: Array.from({ length: datasetCount }, (_, i) => datasetAt(i)).map((d) => ({
          index: d.index,
          name: d.name,
          type: d.type,
          rank: d.dims.length,
          dims: d.dims,
          shape: d.shape,
          offset: d.dataOffset,
          bytes: d.bytes,
          attributes: d.attributes.map((a) => ({
            name: a.name,
            type: a.type,
            count: a.count,
            value: jsonValue(a.value),
          })),
          annotations: d.annotations.map((a) => a.text),
        })),
      };
    },
  };
  return index;
}

/** The IEEEIO framing: either byte order, attributes and annotations, -1 count recovery. */
export const ieeeio: Framing = {
  name: FORMAT,
  description: "IEEEIO (FlexIO): 16-byte header, self-describing data/attribute/annotation records",
  orders: ["little", "big"],
  options: [
    {
      name: "datasetsPerFrame",
      type: "integer",
      min: 1,
      help: "datasets per frame when reading (default: the writer's frame_datasets attributes)",
      workloads: ALL_WORKLOADS,
    },
    {
      name: "append",
      type: "value",
      help: "a ByteSource of an existing file to append to (library API)",
      workloads: WRITING_WORKLOADS,
    },
  ],
  magic: [{ bytes: [1, 2, 3, 4] }],
  detect(head: Uint8Array, fileSize: number): boolean {
    if (fileSize < IEEEIO_FILE_HEADER_BYTES || head.length < 8) return false;
    if (head[0] !== 1 || head[1] !== 2 || head[2] !== 3 || head[3] !== 4) return false;
    const m = hexBytes(head.subarray(4, 8));
    return m === "04 03 02 01" || m === "01 02 03 04";
  },
  createWriter(options?: WriterOptions): FrameWriter {
    return createIeeeioWriter(options);
  },
  appendWriter(source: ByteSource, options: WriterOptions = {}): FrameWriter {
    return createIeeeioWriter({ ...options, append: source });
  },
  openIndex(source: ByteSource, options?: ReaderOptions): FrameIndex {
    return openIeeeio(source, options);
  },
};
