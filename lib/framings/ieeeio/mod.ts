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
 * record is then dropped (with a warning) instead of being an error. The index keeps 16 bytes a
 * dataset (data offset, shape id, name id) and 12 a frame; of the attributes the scan keeps only
 * those it acts on (`name`, `frame_datasets`, `step`): a dataset's attributes and annotations are
 * read from the file when `dataset(i)` (or `describe()`) asks for them.
 * @module
 */
import { FormatError, UsageError } from "../../core/errors.ts";
import { copySwapped, NATIVE_ORDER } from "../../bytes/byteswap.ts";
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
} from "../types.ts";
import { ALL_WORKLOADS, DTYPES, holdsDType, typedArray, WRITING_WORKLOADS } from "../types.ts";
import { cStringOf, elementCount, hexBytes } from "../kit.ts";
import { COLUMN_BLOCK, FIRST_BLOCK, NumberColumn } from "../columns.ts";

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

/** A distinct number type and dims of data records, shared by every dataset that has them. */
interface RecordShape {
  /** Number type code (0..11). */
  readonly code: number;
  /** Dims as stored (Fortran order, fastest first). */
  readonly dims: readonly number[];
  /** Shape in C order (slowest first): `dims` reversed. */
  readonly shape: readonly number[];
  /** Data bytes of a record of this shape. */
  readonly bytes: number;
}

/** Distinct shapes and names the scan compares directly before making a key. */
const RECENT = 8;

/**
 * One copy of each distinct (number type, dims) of the data records, by id: a file of a million
 * frames has a few. A record is compared with the first few as it lies in the file (no key made).
 */
class ShapeTable {
  /** Shapes by id. */
  readonly shapes: RecordShape[] = [];
  readonly #ids = new Map<string, number>();

  /**
   * Id of the known shape with type `code` and the `rank` dims at byte `at` of `view` (order
   * `le`), when it is one of the first few known; else -1.
   */
  find(view: DataView, at: number, le: boolean, code: number, rank: number): number {
    const shapes = this.shapes;
    const known = shapes.length < RECENT ? shapes.length : RECENT;
    for (let id = 0; id < known; id++) {
      const s = shapes[id]!;
      if (s.code !== code || s.dims.length !== rank) continue;
      let d = 0;
      while (d < rank && view.getInt32(at + 4 * d, le) === s.dims[d]) d++;
      if (d === rank) return id;
    }
    return -1;
  }

  /**
   * Id of type `code` with `dims` (checked: their element count times `width` is `bytes`), which
   * {@link find} did not find among the first few: a new one while there are no more than those
   * (no key made: a file's one or two shapes cost an open no text), else looked up by key.
   */
  id(code: number, dims: readonly number[], bytes: number): number {
    if (this.shapes.length < RECENT) {
      return this.shapes.push({ code, dims, shape: dims.toReversed(), bytes }) - 1;
    }
    const key = `${code}:${dims.join(",")}`;
    let id = this.#ids.get(key);
    if (id === undefined) {
      id = this.shapes.push({ code, dims, shape: dims.toReversed(), bytes }) - 1;
      this.#ids.set(key, id);
    }
    return id;
  }
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
class NameTable {
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

/**
 * The attributes of one name that the reader acts on (`frame_datasets`, `step`; `name` where it
 * is not after its dataset), in file order: the dataset each belongs to, its value as a number (a
 * name's id; NaN when it is not of the type acted on) and the offset of its value (of its record
 * for a name), three numbers an attribute in one array.
 */
class NamedAttributes {
  /** Blocks of COLUMN_BLOCK attributes (three numbers each), the last being filled. */
  readonly #blocks: Float64Array[] = [];
  #length = 0;
  /** Attributes the first block holds (it doubles from there up to COLUMN_BLOCK). */
  readonly #first: number;

  /** `first`: attributes the first block holds (at most the datasets expected are enough). */
  constructor(first = FIRST_BLOCK) {
    this.#first = Math.max(1, Math.min(COLUMN_BLOCK, first));
  }

  /** Attributes held. */
  get length(): number {
    return this.#length;
  }

  /** Appends the attribute of dataset `seq` with `value`, its value at byte `valueOffset`. */
  push(seq: number, value: number, valueOffset: number): void {
    const k = this.#length++ % COLUMN_BLOCK;
    const blocks = this.#blocks;
    let block = blocks[blocks.length - 1];
    if (block === undefined || k === 0 || 3 * k >= block.length) {
      // the first block doubles from #first attributes (a small file's few), then whole ones
      const first = block !== undefined && blocks.length === 1 && k > 0;
      const next = new Float64Array(
        3 * (first ? Math.min(COLUMN_BLOCK, 2 * k) : blocks.length ? COLUMN_BLOCK : this.#first),
      );
      if (first) {
        next.set(block!);
        blocks.pop();
      }
      blocks.push(block = next);
    }
    block[3 * k] = seq;
    block[3 * k + 1] = value;
    block[3 * k + 2] = valueOffset;
  }

  /** The dataset attribute k belongs to. */
  seq(k: number): number {
    return this.#blocks[(k / COLUMN_BLOCK) | 0]![3 * (k % COLUMN_BLOCK)]!;
  }

  /** The value of attribute k. */
  value(k: number): number {
    return this.#blocks[(k / COLUMN_BLOCK) | 0]![3 * (k % COLUMN_BLOCK) + 1]!;
  }

  /** The value offset of attribute k. */
  valueOffset(k: number): number {
    return this.#blocks[(k / COLUMN_BLOCK) | 0]![3 * (k % COLUMN_BLOCK) + 2]!;
  }

  /** Per dataset (of `datasets`, every seq below it), the index of its first attribute here, or -1. */
  firstByDataset(datasets: number): Int32Array {
    const first = new Int32Array(datasets).fill(-1);
    for (let b = 0; b < this.#blocks.length; b++) {
      const block = this.#blocks[b]!;
      const n = Math.min(COLUMN_BLOCK, this.#length - b * COLUMN_BLOCK);
      for (let j = 0; j < n; j++) {
        const seq = block[3 * j]!;
        if (first[seq] === -1) first[seq] = b * COLUMN_BLOCK + j;
      }
    }
    return first;
  }
}

/** `name` and `step` as the little-endian int32 of their four bytes (attribute names). */
const NAME_WORD = 0x656d616e;
const STEP_WORD = 0x70657473;
/** Bytes the scan compares records with, and their whole 4-byte words (big-endian int32s). */
interface KnownBytes {
  readonly bytes: Uint8Array;
  readonly words: Int32Array;
}

/** `bytes` as {@link KnownBytes}. */
function knownBytes(bytes: Uint8Array): KnownBytes {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const words = new Int32Array(bytes.length >> 2);
  for (let w = 0; w < words.length; w++) words[w] = view.getInt32(4 * w);
  return { bytes, words };
}

/** `frame_datasets` as stored (without the NUL), and its first four bytes as a little-endian int32. */
const FRAME_DATASETS_ATTRIBUTE = knownBytes(encoder.encode("frame_datasets"));
const FRAME_DATASETS_WORD = 0x6d617266;
/** Name id of a dataset whose `name` attribute the scan has not met yet. */
const UNSEEN = -2;

/**
 * True when `bytes` (and `view`, a DataView of it) hold the bytes of `known` at byte `at`,
 * compared a word (one DataView call) at a time.
 */
function sameBytesAt(bytes: Uint8Array, view: DataView, at: number, known: KnownBytes): boolean {
  const words = known.words;
  let w = 0;
  while (w < words.length && words[w] === view.getInt32(at + 4 * w)) w++;
  if (w < words.length) return false;
  const tail = known.bytes;
  let i = 4 * w;
  while (i < tail.length && tail[i] === bytes[at + i]) i++;
  return i === tail.length;
}

/** No bytes, and a view of them: where a peek starts (no array made an open). */
const NO_BYTES = new Uint8Array(0);
const NO_VIEW: DataView = new DataView(NO_BYTES.buffer);

/**
 * Bytes of a source a scan reads records from: a window of its mapping (in place) or a read. The
 * scan reads them through `bytes` and `view`, which span the whole buffer the window is in (kept
 * while the windows come from one buffer, as a source's mapping and its far reads do: no view
 * made per record), at index (file offset - `at`).
 */
class Peek {
  readonly #source: ByteSource;
  /** The window's whole buffer, bytes `start` to `end` of the file at indexes from start - at. */
  bytes: Uint8Array = NO_BYTES;
  /** A DataView of `bytes`. */
  view: DataView = NO_VIEW;
  /** File offset of index 0 of `bytes` (bytes before `start` are not the window's). */
  at = 0;
  start = 0;
  end = 0;
  /** True when the window is the source's (read in place). */
  inPlace = false;

  constructor(source: ByteSource) {
    this.#source = source;
  }

  /** Moves to `offset`, at least `length` bytes (inside the file); returns this. */
  fetch(offset: number, length: number): this {
    const source = this.#source;
    const want = Math.min(source.size - offset, Math.max(length, PEEK_BYTES));
    const window = source.window?.(offset, want, true);
    this.inPlace = window !== undefined;
    const bytes = window ?? source.read(offset, want);
    if (bytes.buffer !== this.view.buffer) {
      this.view = new DataView(bytes.buffer);
      this.bytes = new Uint8Array(bytes.buffer);
    }
    this.at = offset - bytes.byteOffset;
    this.start = offset;
    this.end = offset + bytes.length;
    return this;
  }

  /** Starts at `head`, the file's first bytes (read already, not read again); returns this. */
  seed(head: Uint8Array): this {
    this.inPlace = false;
    this.view = new DataView(head.buffer);
    this.bytes = new Uint8Array(head.buffer);
    this.at = -head.byteOffset;
    this.start = 0;
    this.end = head.length;
    return this;
  }
}

/** What one pass over the records finds (see {@link scanRecords}). */
interface RecordScan {
  /** Datasets found. */
  readonly datasets: number;
  /** Per dataset: the byte offset of its data. */
  readonly dataOffset: NumberColumn;
  /** Per dataset: its shape's id in `shapes`. */
  readonly shapeId: NumberColumn;
  readonly shapes: readonly RecordShape[];
  /** Per dataset: its name's id in `names` (negative: none), from its first `name` attribute. */
  readonly nameId: NumberColumn;
  readonly names: readonly string[];
  /** The `frame_datasets` attributes (value: the count, NaN when not one Int32). */
  readonly frameDatasets: NamedAttributes;
  /** The `step` attributes (value: the step, NaN when not one Int32 or Int64). */
  readonly steps: NamedAttributes;
  /** Attributes and annotations that do not belong to the data record before them: dataset. */
  readonly displacedSeq: NumberColumn;
  /** ... and byte offset of each (file order). */
  readonly displacedOffset: NumberColumn;
  /** Byte offset just after the last complete record. */
  readonly end: number;
  /** What a recovering scan ignored at the end of the file ("" when nothing). */
  readonly dropped: string;
}

/**
 * One pass over the records from byte 16, checking every header field (a FormatError with the
 * offset for each broken rule; with `recovering`, a partial last record ends the scan instead).
 * It keeps per dataset its data offset, shape and name, and only the attributes the reader acts
 * on; the other attributes and the annotations are read when a dataset is asked for. Records
 * are read through a peek of at least 256 bytes: a window of the source's mapping (in place) or
 * a read, which covers a record's headers, dims and short names and often the next records.
 * Written for the first open of a process, which runs before the JIT has compiled it: few calls
 * and no allocation per record. `head`: the file's first bytes, read with its header (the first
 * records' peek: not read again). `first`: entries of the first block of each column (the
 * datasets the header counts, when it does: a small file's columns are made once, to size).
 */
function scanRecords(
  source: ByteSource,
  le: boolean,
  recovering: boolean,
  fail: (offset: number, problem: string) => never,
  head: Uint8Array,
  first: number,
): RecordScan {
  const size = source.size;
  // The peek, in locals the loop reads; `fetch` (one function for every scan, so that compiled
  // code made in one open stays valid in the next) moves `p` and the locals are read back.
  const p = new Peek(source).seed(head);
  let peek = p.bytes;
  let view = p.view;
  let peekAt = p.at;
  let peekStart = p.start;
  let peekEnd = p.end;
  let inPlaceBytes = 0;
  // per dataset: blocks of COLUMN_BLOCK entries, filled here (no call per entry)
  const offsetBlocks: Float64Array[] = [];
  const shapeBlocks: Int32Array[] = [];
  const nameBlocks: Int32Array[] = [];
  let offsets = new Float64Array(0);
  let shapeIds = new Int32Array(0);
  let nameIds = new Int32Array(0);
  /** Entries of the last blocks filled. */
  let filled = 0;
  const shapes = new ShapeTable();
  const names = new NameTable();
  /** `name` attributes not after their dataset (value: the name id): set after the scan. */
  const displacedNames = new NamedAttributes(first);
  const frameDatasets = new NamedAttributes(first);
  const steps = new NamedAttributes(first);
  const displacedSeq = new NumberColumn("int32");
  const displacedOffset = new NumberColumn("float64");
  const DATA = IEEEIO_RECORD.data;
  const ANNOTATION = IEEEIO_RECORD.annotation;
  let datasets = 0;
  let pos = IEEEIO_FILE_HEADER_BYTES;
  let end = pos;
  let dropped = "";
  while (pos < size) {
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
    if (pos < peekStart || pos + (left < PEEK_AGAIN_BYTES ? left : PEEK_AGAIN_BYTES) > peekEnd) {
      ({ bytes: peek, view, at: peekAt, start: peekStart, end: peekEnd } = p.fetch(
        pos,
        IEEEIO_RECORD_HEADER_BYTES,
      ));
    }
    let read = IEEEIO_RECORD_HEADER_BYTES;
    const type = view.getInt32(pos - peekAt, le);
    const recSize = view.getInt32(pos - peekAt + 4, le);
    const seq = view.getInt32(pos - peekAt + 8, le);
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
        break;
      }
      fail(
        pos + 4,
        `record size ${recSize} runs past the end of the file: the record would end at byte ${
          body + recSize
        }, the file ends at byte ${size}`,
      );
    }
    if (type !== ANNOTATION) {
      // Data and attribute records: a 12-byte header of data size, type code and rank or name size.
      if (recSize < 12) {
        fail(
          pos + 4,
          `${
            type === DATA ? "data" : "attribute"
          } record size ${recSize} is smaller than its 12-byte header`,
        );
      }
      if (body + 12 > peekEnd) {
        ({ bytes: peek, view, at: peekAt, start: peekStart, end: peekEnd } = p.fetch(body, 12));
      }
      read += 12;
      const dataSize = view.getInt32(body - peekAt, le);
      const code = view.getInt32(body - peekAt + 4, le);
      const third = view.getInt32(body - peekAt + 8, le);
      const width = code >= 0 && code < 12 ? TYPE_SIZE[code as 0] : 0;
      if (width === 0) fail(body + 4, `unknown number type code ${code}: expected 0..11`);
      const after = body + 12; // the dims, or the attribute's name
      if (type === DATA) {
        const rank = third;
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
        if (after + 4 * rank > peekEnd) {
          ({ bytes: peek, view, at: peekAt, start: peekStart, end: peekEnd } = p.fetch(
            after,
            4 * rank,
          ));
        }
        read += 4 * rank;
        let id = shapes.find(view, after - peekAt, le, code, rank);
        if (id < 0 || shapes.shapes[id]!.bytes !== dataSize) {
          id = newShape(view, after, peekAt, le, code, rank, width, dataSize, shapes, fail);
        }
        if (seq !== datasets) {
          fail(pos + 8, `data record has sequence id ${seq}, expected ${datasets}`);
        }
        if (filled === offsets.length) {
          // the first blocks double from `first` entries (up to COLUMN_BLOCK), then whole blocks
          const grown = offsetBlocks.length > 0 && offsets.length < COLUMN_BLOCK;
          const next = grown
            ? Math.min(COLUMN_BLOCK, 2 * offsets.length)
            : offsetBlocks.length > 0
            ? COLUMN_BLOCK
            : first;
          const o = new Float64Array(next), sh = new Int32Array(next), nm = new Int32Array(next);
          if (grown) {
            o.set(offsets);
            sh.set(shapeIds);
            nm.set(nameIds);
            offsetBlocks.pop();
            shapeBlocks.pop();
            nameBlocks.pop();
          } else filled = 0;
          offsetBlocks.push(offsets = o);
          shapeBlocks.push(shapeIds = sh);
          nameBlocks.push(nameIds = nm);
        }
        offsets[filled] = after + 4 * rank;
        shapeIds[filled] = id;
        nameIds[filled] = UNSEEN;
        filled++;
        datasets++;
      } else {
        const nameSize = third;
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
        if (after + nameSize > peekEnd) {
          ({ bytes: peek, view, at: peekAt, start: peekStart, end: peekEnd } = p.fetch(
            after,
            nameSize,
          ));
        }
        read += nameSize;
        // the names acted on, told apart by their first four bytes
        const word = nameSize < 4 ? 0 : view.getInt32(after - peekAt, true);
        const short = nameSize === 4 || (nameSize > 4 && peek[after - peekAt + 4] === 0);
        const valueOffset = after + nameSize;
        if (word === NAME_WORD && short) {
          let id = -1;
          if (code === 10 || code === 6) {
            if (valueOffset + dataSize > peekEnd) {
              ({ bytes: peek, view, at: peekAt, start: peekStart, end: peekEnd } = p.fetch(
                valueOffset,
                dataSize,
              ));
            }
            read += dataSize;
            id = names.id(peek, view, valueOffset - peekAt, dataSize);
          }
          if (seq !== datasets - 1) displacedNames.push(seq, id, pos);
          else if (nameIds[filled - 1] === UNSEEN) nameIds[filled - 1] = id;
        } else if (word === STEP_WORD && short) {
          let step = NaN;
          if ((code === 2 && dataSize === 4) || (code === 3 && dataSize === 8)) {
            if (valueOffset + dataSize > peekEnd) {
              ({ bytes: peek, view, at: peekAt, start: peekStart, end: peekEnd } = p.fetch(
                valueOffset,
                dataSize,
              ));
            }
            read += dataSize;
            const at = valueOffset - peekAt;
            step = code === 2
              ? view.getInt32(at, le)
              // an Int64 as its two halves: the nearest double, as Number(BigInt) gives, no BigInt
              : view.getInt32(at + (le ? 4 : 0), le) * 2 ** 32 +
                view.getUint32(at + (le ? 0 : 4), le);
          }
          steps.push(seq, step, valueOffset);
        } else if (
          word === FRAME_DATASETS_WORD && nameSize >= FRAME_DATASETS_ATTRIBUTE.bytes.length &&
          (nameSize === FRAME_DATASETS_ATTRIBUTE.bytes.length ||
            peek[after - peekAt + FRAME_DATASETS_ATTRIBUTE.bytes.length] === 0) &&
          sameBytesAt(peek, view, after - peekAt, FRAME_DATASETS_ATTRIBUTE)
        ) {
          let count = NaN;
          if (code === 2 && dataSize === 4) {
            if (valueOffset + 4 > peekEnd) {
              ({ bytes: peek, view, at: peekAt, start: peekStart, end: peekEnd } = p.fetch(
                valueOffset,
                4,
              ));
            }
            read += 4;
            count = view.getInt32(valueOffset - peekAt, le);
          }
          frameDatasets.push(seq, count, valueOffset);
        }
      }
    }
    // An attachment carries the sequence id of its dataset, usually the data record's before it.
    if (type !== DATA && seq !== datasets - 1) {
      displacedSeq.push(seq);
      displacedOffset.push(pos);
    }
    if (p.inPlace) inPlaceBytes += read;
    pos = body + recSize;
    end = pos;
  }
  if (inPlaceBytes > 0) source.readInPlace?.(inPlaceBytes);
  displacedSeq.trim();
  displacedOffset.trim();
  const dataOffset = NumberColumn.ofBlocks("float64", offsetBlocks, datasets);
  const shapeId = NumberColumn.ofBlocks("int32", shapeBlocks, datasets);
  const nameId = NumberColumn.ofBlocks("int32", nameBlocks, datasets);
  // A `name` attribute before its dataset (first in the file) names it; one after a later
  // dataset only when none came before it.
  const named = displacedNames;
  for (let k = named.length - 1; k >= 0; k--) {
    const seq = named.seq(k);
    if (seq >= 0 && seq < datasets && named.valueOffset(k) < dataOffset.at(seq)) {
      nameId.set(seq, named.value(k));
    }
  }
  for (let k = 0; k < named.length; k++) {
    const seq = named.seq(k);
    if (seq >= 0 && seq < datasets && named.valueOffset(k) > dataOffset.at(seq)) {
      if (nameId.at(seq) === UNSEEN) nameId.set(seq, named.value(k));
    }
  }
  return {
    datasets,
    dataOffset,
    shapeId,
    shapes: shapes.shapes,
    nameId,
    names: names.names,
    frameDatasets,
    steps,
    displacedSeq,
    displacedOffset,
    end,
    dropped,
  };
}

/**
 * The id of the shape of the data record whose `rank` dims are at byte `at` of the file (in
 * `view`, which starts at byte `viewAt`), after checking them: none negative, and as many
 * elements of `width` bytes as its data size says.
 */
function newShape(
  view: DataView,
  at: number,
  viewAt: number,
  le: boolean,
  code: number,
  rank: number,
  width: number,
  dataSize: number,
  shapes: ShapeTable,
  fail: (offset: number, problem: string) => never,
): number {
  const dims: number[] = [];
  for (let i = 0; i < rank; i++) {
    const d = view.getInt32(at - viewAt + 4 * i, le);
    if (d < 0) fail(at + 4 * i, `negative dimension ${d}`);
    dims.push(d);
  }
  const expect = elementCount(dims) * width;
  if (expect !== dataSize) {
    fail(
      at,
      `dims [${dims.join(", ")}] of ${
        IEEEIO_TYPE_NAMES[code as 0]
      } need ${expect} bytes but the data size is ${dataSize}`,
    );
  }
  return shapes.id(code, dims, dataSize);
}

/** Element values of `bytes` (file order `order`) as a native typed array of type `code` (a copy). */
function decodeValues(bytes: Uint8Array, code: number, order: ByteOrder): TypedArray {
  const copy = bytes.slice();
  const width = TYPE_SIZE[code as 0];
  if (order !== NATIVE_ORDER && width > 1) copySwapped(copy, copy, width);
  const dtype = TYPE_DTYPE[code];
  return dtype === undefined ? copy : typedArray(dtype, copy.length / width, copy.buffer);
}

/**
 * The attribute or annotation record at byte `offset` of `source` (checked by the scan), read
 * and decoded; in `into` (attributes or annotations).
 */
function readAttachment(
  source: ByteSource,
  offset: number,
  order: ByteOrder,
  into: { attributes: IeeeioAttribute[]; annotations: IeeeioAnnotation[] },
): void {
  const le = order === "little";
  const head = source.read(offset, IEEEIO_RECORD_HEADER_BYTES);
  const hv = new DataView(head.buffer, head.byteOffset, head.byteLength);
  const type = hv.getInt32(0, le);
  const body = source.read(offset + IEEEIO_RECORD_HEADER_BYTES, hv.getInt32(4, le));
  if (type === IEEEIO_RECORD.annotation) {
    into.annotations.push({ recordOffset: offset, text: cStringOf(body) });
    return;
  }
  const bv = new DataView(body.buffer, body.byteOffset, body.byteLength);
  const bytes = bv.getInt32(0, le);
  const code = bv.getInt32(4, le);
  const nameSize = bv.getInt32(8, le);
  const raw = body.subarray(12 + nameSize, 12 + nameSize + bytes);
  into.attributes.push({
    name: cStringOf(body.subarray(12, 12 + nameSize)),
    numberType: code,
    type: IEEEIO_TYPE_NAMES[code as 0],
    count: bytes / ieeeioTypeSize(code),
    recordOffset: offset,
    valueOffset: offset + 24 + nameSize,
    bytes,
    value: code === 10 ? cStringOf(raw) : decodeValues(raw, code, order),
  });
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

/**
 * The copy of a file's first bytes (its header and the first records' peek) an open reads from its
 * source's window: one buffer that every open reuses, as an open is done with it when its scan
 * has started (a new array an open cost more than its read, after a read through a large file).
 */
const HEAD = new Uint8Array(IEEEIO_FILE_HEADER_BYTES + PEEK_BYTES);

/** Decodes an IEEEIO file's record table; options: `datasetsPerFrame` (positive integer). */
export function openIeeeio(source: ByteSource, options: ReaderOptions = {}): IeeeioIndex {
  const path = source.path;
  const size = source.size;
  const fail = (offset: number, problem: string): never => {
    throw new FormatError(FORMAT, path, offset, problem);
  };
  if (size < IEEEIO_FILE_HEADER_BYTES) {
    fail(0, `file is ${size} bytes, shorter than the 16-byte IEEEIO header`);
  }
  // the header and the first records' peek in one read (the source's window when it has one:
  // no array made; copied, as the scan's next window replaces it, into the buffer every open uses)
  const headBytes = Math.min(size, IEEEIO_FILE_HEADER_BYTES + PEEK_BYTES);
  const window = source.window?.(0, headBytes);
  let head: Uint8Array;
  if (window === undefined) head = source.read(0, headBytes);
  else {
    HEAD.set(window.subarray(0, headBytes));
    head = HEAD.subarray(0, headBytes);
    source.readInPlace?.(headBytes);
  }
  if (head[0] !== 1 || head[1] !== 2 || head[2] !== 3 || head[3] !== 4) {
    fail(0, `wrong magic number ${hexBytes(head.subarray(0, 4))}: expected 01 02 03 04`);
  }
  // the byte-order mark 0x01020304 as the file stores it (compared as bytes: no string made)
  const little = head[4] === 4 && head[5] === 3 && head[6] === 2 && head[7] === 1;
  if (!little && !(head[4] === 1 && head[5] === 2 && head[6] === 3 && head[7] === 4)) {
    fail(
      4,
      `byte-order mark ${
        hexBytes(head.subarray(4, 8))
      } is neither 04 03 02 01 (little) nor 01 02 03 04 (big)`,
    );
  }
  const order: ByteOrder = little ? "little" : "big";
  const le = order === "little";
  const hv = new DataView(head.buffer, head.byteOffset, head.byteLength);
  const headerCount = hv.getInt32(8, le);
  // the version's text is made when described (formatting numbers costs an open more than a read)
  const major = hv.getInt16(12, le), minor = hv.getInt16(14, le);
  const recovering = headerCount < 0;
  const warnings: string[] = [];

  // Compact tables (memory linear in the datasets with a small constant): a column per field,
  // shapes and names interned, attributes and annotations read when a dataset is asked for.
  // columns sized by the header's count (a wrong count only costs their doubling or room)
  const first = recovering ? FIRST_BLOCK : Math.max(1, Math.min(COLUMN_BLOCK, headerCount));
  const scan = scanRecords(source, le, recovering, fail, head, first);
  const { dataOffset, shapeId, shapes, names, end } = scan;
  const datasetCount = dataOffset.length;
  // Attachments carry the sequence id of their dataset (checked here: the file's count is known).
  for (let k = 0; k < scan.displacedSeq.length; k++) {
    const seq = scan.displacedSeq.at(k);
    if (seq < 0 || seq >= datasetCount) {
      fail(
        scan.displacedOffset.at(k) + 8,
        `record belongs to dataset ${seq} but the file has ${datasetCount} datasets`,
      );
    }
  }
  if (recovering) {
    warnings.push(
      `header dataset count is ${headerCount} (the writer did not close the file); ` +
        `found ${datasetCount} datasets by scanning (the file was not changed)`,
    );
    if (scan.dropped) warnings.push(`ignored ${scan.dropped} left by the unfinished write`);
  } else if (headerCount !== datasetCount) {
    fail(
      8,
      `header says ${headerCount} datasets but the file holds ${datasetCount} data records`,
    );
  }

  const nameIds = scan.nameId;
  // what the index's functions keep of the scan (not `scan`: its attribute lists go after the open)
  const { displacedSeq, displacedOffset } = scan;
  /** Dataset i's stored name, or null. */
  const nameOf = (i: number): string | null => nameIds.at(i) < 0 ? null : names[nameIds.at(i)]!;
  const shapeOf = (i: number): RecordShape => shapes[shapeId.at(i)]!;
  /** Byte offset of dataset i's record header. */
  const recordOffsetOf = (i: number): number => dataOffset.at(i) - 24 - 4 * shapeOf(i).dims.length;
  /** Dataset i as the reader reports it, made (its attachments read) when asked for. */
  const datasetAt = (i: number): IeeeioDataset => {
    const shape = shapeOf(i);
    // its attachments: the records after it that carry its sequence id, and the displaced ones
    const offsets: number[] = [];
    const stop = i + 1 < datasetCount ? recordOffsetOf(i + 1) : end;
    for (let at = dataOffset.at(i) + shape.bytes; at < stop;) {
      const h = source.read(at, IEEEIO_RECORD_HEADER_BYTES);
      const v = new DataView(h.buffer, h.byteOffset, h.byteLength);
      if (v.getInt32(8, le) === i) offsets.push(at);
      at += IEEEIO_RECORD_HEADER_BYTES + v.getInt32(4, le);
    }
    for (let k = 0; k < displacedSeq.length; k++) {
      if (displacedSeq.at(k) === i) offsets.push(displacedOffset.at(k));
    }
    offsets.sort((a, b) => a - b);
    const found = { attributes: [] as IeeeioAttribute[], annotations: [] as IeeeioAnnotation[] };
    for (const at of offsets) readAttachment(source, at, order, found);
    return {
      index: i,
      recordOffset: recordOffsetOf(i),
      dataOffset: dataOffset.at(i),
      bytes: shape.bytes,
      numberType: shape.code,
      type: IEEEIO_TYPE_NAMES[shape.code as 0],
      dtype: TYPE_DTYPE[shape.code]!,
      dims: shape.dims,
      shape: shape.shape,
      name: nameOf(i),
      ...found,
    };
  };

  // Group datasets into frames: frame f is datasets starts[f] .. starts[f + 1] - 1, its step
  // the value of its first dataset's first `step` attribute (without one, or with a fixed
  // grouping, f).
  const starts = new NumberColumn("int32", first + 1);
  const stepOf = new NumberColumn("float64", first);
  // Grouping: an explicit datasetsPerFrame; else the writer's frame_datasets attributes; else,
  // for a file without them, the caller's layout (a workload reading its own k-chunk frames).
  const fd = scan.frameDatasets;
  const marked = fd.length > 0;
  const layout = options.layout;
  const perFrame = options["datasetsPerFrame"] ??
    (!marked && layout !== undefined && layout.length > 1 ? layout.length : undefined);
  let grouped = 0;
  if (perFrame !== undefined) {
    if (typeof perFrame !== "number" || !Number.isSafeInteger(perFrame) || perFrame < 1) {
      throw new UsageError(
        `ieeeio: datasetsPerFrame must be a positive integer, not ${String(perFrame)}`,
      );
    }
    for (; grouped + perFrame <= datasetCount; grouped += perFrame) {
      stepOf.push(starts.length);
      starts.push(grouped);
    }
    const rest = datasetCount % perFrame;
    if (rest !== 0) {
      warnings.push(
        `the last ${rest} datasets do not make a whole frame of ${perFrame} and are not read`,
      );
    }
  } else {
    const first = fd.firstByDataset(datasetCount);
    const firstStep = scan.steps.firstByDataset(datasetCount);
    while (grouped < datasetCount) {
      const k = first[grouped]!;
      const stored = k < 0 ? NaN : fd.value(k);
      const count = Number.isNaN(stored) ? 1 : stored;
      if (count < 1) {
        fail(
          fd.valueOffset(k),
          `frame_datasets attribute is ${count}, expected a positive count`,
        );
      }
      if (grouped + count > datasetCount) {
        if (!recovering) {
          fail(
            fd.valueOffset(k),
            `frame of ${count} datasets starts at dataset ${grouped} but the file has only ${datasetCount}`,
          );
        }
        warnings.push(`the last frame (datasets ${grouped}..) is incomplete and is not read`);
        break;
      }
      const s = firstStep[grouped]!;
      const step = s < 0 ? NaN : scan.steps.value(s);
      stepOf.push(Number.isNaN(step) ? starts.length : step);
      starts.push(grouped);
      grouped += count;
    }
  }
  starts.push(grouped);
  starts.trim();
  stepOf.trim();
  const frameCount = starts.length - 1;

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
        const start = starts.at(frame);
        for (let i = start; i < starts.at(frame + 1); i++) {
          const shape = shapeOf(i);
          refs.push({
            name: nameOf(i) ?? `dataset/${i - start}`,
            dtype: TYPE_DTYPE[shape.code]!,
            shape: shape.shape,
            offset: dataOffset.at(i),
            bytes: shape.bytes,
            order,
          });
        }
        refsFrame = frame;
      }
      return refs;
    },
    step(frame: number): number | undefined {
      return Number.isInteger(frame) && frame >= 0 && frame < frameCount
        ? stepOf.at(frame)
        : undefined;
    },
    describe(): Record<string, unknown> {
      return {
        format: "IEEEIO",
        version: `${major}.${minor}`,
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
