/**
 * The IEEEIO writer: the file header (count -1 while open, the total at `finish()`), then one
 * data record a chunk with the attributes that name it and group it into its frame, and the
 * caller's attributes and annotations; either byte order, or appended to an existing file in its
 * own order.
 * @module
 */
import { UsageError } from "../../core/errors.ts";
import { copySwapped, NATIVE_ORDER } from "../../bytes/byteswap.ts";
import type {
  ByteOrder,
  ByteSource,
  DType,
  Frame,
  TypedArray,
  WriteOp,
  WriterOptions,
} from "../types.ts";
import { DTYPES, holdsDType } from "../types.ts";
import { elementCount } from "../kit.ts";
import {
  DTYPE_CODE,
  IEEEIO_FILE_HEADER_BYTES,
  IEEEIO_MAX_BYTES,
  IEEEIO_MAX_NAME_BYTES,
  IEEEIO_RECORD,
  IEEEIO_TYPE_NAMES,
  type IeeeioAttributeInput,
  type IeeeioChunk,
  ieeeioTypeCode,
  type IeeeioTypeName,
  type IeeeioWriter,
  TYPE_SIZE,
} from "./format.ts";
import { openIeeeio } from "./index.ts";

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
