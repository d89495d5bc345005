/**
 * netCDF classic files (CDF-1 classic, CDF-2 64-bit offset, CDF-5 64-bit data): a native writer
 * that lays files out exactly as netCDF-C 4.9 does, and a validating reader.
 *
 * Layout (everything big-endian): `CDF` + version byte, numrecs, the dimension, global attribute
 * and variable lists, then the data of the fixed-size variables one after another, then the
 * records: record r holds the r-th slab of every record variable in header order, each padded
 * to 4 bytes with the variable's fill value (no padding when there is a single record variable).
 *
 * Frame mapping: each frame is one record; each chunk is one record variable with dimensions
 * (record, ...chunk shape). Dimensions are shared by length and named `n<length>`; the record
 * dimension is `record`. A chunk name that is not a valid netCDF name (`particles/position`)
 * becomes a valid one (`particles_position`) and the original is kept in the variable attribute
 * `chunk_name`, which the reader uses as the chunk name. A file without record variables reads
 * as one frame of its fixed variables.
 *
 * Appending (`appendWriter`) continues any classic file with record variables, ours or the
 * library's, byte for byte as netCDF-C's `nc_open(NC_WRITE)` + `nc_put_vara` at records numrecs..
 * with fill on: each frame is one more record, numrecs is rewritten at the end.
 * @module
 */
import { copySwapped } from "../bytes/byteswap.ts";
import { FormatError, UsageError } from "../errors.ts";
import type {
  ByteSource,
  Chunk,
  ChunkLayout,
  ChunkRef,
  DType,
  Frame,
  FrameIndex,
  FrameWriter,
  Framing,
  StoredVariable,
  TypedArray,
  WriteOp,
  WriterOptions,
} from "./types.ts";
import { DTYPE_SIZE, typedArray } from "./types.ts";
import { checkAppendOrder } from "./raw.ts";

const FORMAT = "netcdf";

/** The netCDF classic external types (CDF-5 adds the unsigned and 64-bit integer ones). */
export type NcType =
  | "byte"
  | "char"
  | "short"
  | "int"
  | "float"
  | "double"
  | "ubyte"
  | "ushort"
  | "uint"
  | "int64"
  | "uint64";

/** The three classic variants, by their version byte. */
export type NcVariant = 1 | 2 | 5;

const TYPES: readonly NcType[] = [
  "byte",
  "char",
  "short",
  "int",
  "float",
  "double",
  "ubyte",
  "ushort",
  "uint",
  "int64",
  "uint64",
];

/** nc_type code of each type (NC_BYTE = 1 ... NC_UINT64 = 11). */
export const NC_TYPE_CODE: Readonly<Record<NcType, number>> = Object.fromEntries(
  TYPES.map((t, i) => [t, i + 1]),
) as Record<NcType, number>;

/** The sciobench element type each netCDF type maps to. */
export const NC_TYPE_DTYPE: Readonly<Record<NcType, DType>> = {
  byte: "int8",
  char: "char",
  short: "int16",
  int: "int32",
  float: "float32",
  double: "float64",
  ubyte: "uint8",
  ushort: "uint16",
  uint: "uint32",
  int64: "int64",
  uint64: "uint64",
};

/** The netCDF type each sciobench element type is stored as. */
export const DTYPE_NC_TYPE: Readonly<Record<DType, NcType>> = {
  int8: "byte",
  char: "char",
  int16: "short",
  int32: "int",
  float32: "float",
  float64: "double",
  uint8: "ubyte",
  uint16: "ushort",
  uint32: "uint",
  int64: "int64",
  uint64: "uint64",
};

/** Size in bytes of one element of each type on disk. */
export function ncTypeSize(type: NcType): number {
  return DTYPE_SIZE[NC_TYPE_DTYPE[type]];
}

/** True for the types only CDF-5 has (ubyte, ushort, uint, int64, uint64). */
export function isCdf5Type(type: NcType): boolean {
  return NC_TYPE_CODE[type] > 6;
}

/** Default fill values of netCDF-C (NC_FILL_BYTE ... NC_FILL_UINT64), big-endian bytes. */
const DEFAULT_FILL: Readonly<Record<NcType, readonly number[]>> = {
  byte: [0x81],
  char: [0x00],
  short: [0x80, 0x01],
  int: [0x80, 0x00, 0x00, 0x01],
  float: [0x7c, 0xf0, 0x00, 0x00],
  double: [0x47, 0x9e, 0, 0, 0, 0, 0, 0],
  ubyte: [0xff],
  ushort: [0xff, 0xff],
  uint: [0xff, 0xff, 0xff, 0xff],
  int64: [0x80, 0, 0, 0, 0, 0, 0, 0x02],
  uint64: [0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xfe],
};

/** Values of an attribute or variable: text for char, numbers, bigints, or a typed array (native order). */
export type NcValues = string | Uint8Array | TypedArray | readonly number[] | readonly bigint[];

/** One attribute: name, type and values. */
export interface NcAttribute {
  /** Attribute name. */
  readonly name: string;
  /** External type. */
  readonly type: NcType;
  /** Values; a string for char attributes (UTF-8 bytes are stored). */
  readonly values: NcValues;
}

/** One dimension; length 0 marks the record (unlimited) dimension. */
export interface NcDimension {
  /** Dimension name. */
  readonly name: string;
  /** Length in elements; 0 = the record dimension. */
  readonly length: number;
}

/** One variable of a schema. */
export interface NcVariable {
  /** Variable name. */
  readonly name: string;
  /** External type. */
  readonly type: NcType;
  /** Dimension ids (indexes into the schema's dimensions), slowest first. */
  readonly dims: readonly number[];
  /** Variable attributes in order. */
  readonly attributes: readonly NcAttribute[];
}

/** Everything a netCDF classic header holds except numrecs and the data offsets. */
export interface NcSchema {
  /** Version byte: 1 classic, 2 64-bit offset, 5 64-bit data. */
  readonly variant: NcVariant;
  /** Dimensions in order (ids are indexes). */
  readonly dimensions: readonly NcDimension[];
  /** Global attributes in order. */
  readonly attributes: readonly NcAttribute[];
  /** Variables in order. */
  readonly variables: readonly NcVariable[];
}

/** Where one variable's data lives, as netCDF-C 4.9 lays it out. */
export interface NcVarLayout {
  /** Variable name. */
  readonly name: string;
  /** External type. */
  readonly type: NcType;
  /** True when the first dimension is the record dimension. */
  readonly record: boolean;
  /** Shape without the record dimension (the shape of one record's slab for record variables). */
  readonly shape: readonly number[];
  /** Data bytes of the variable (fixed) or of one record's slab (record), unpadded. */
  readonly slabBytes: number;
  /** The slab rounded up to 4 bytes, the `vsize` netCDF computes (before the 32-bit clamp). */
  readonly paddedBytes: number;
  /** Absolute byte offset of the data (for record variables: in record 0). */
  readonly begin: number;
  /** Big-endian bytes of one fill element (from `_FillValue` or the default). */
  readonly fill: Uint8Array;
}

/** The data layout of a schema: header size, variable offsets and the record stride. */
export interface NcLayout {
  /** Header size in bytes = first data offset. */
  readonly headerBytes: number;
  /** Per-variable layout, in header order. */
  readonly vars: readonly NcVarLayout[];
  /** Offset of record 0 (the first record variable's begin), or the end of the fixed data. */
  readonly recordBegin: number;
  /** Bytes from one record to the next (0 without record variables). */
  readonly recsize: number;
  /** Size of the file without records (the end of the fixed data, or the header). */
  readonly fixedEnd: number;
}

const enc = new TextEncoder();
const dec = new TextDecoder("utf-8", { fatal: true });

const TAG_DIMENSION = 0x0a;
const TAG_VARIABLE = 0x0b;
const TAG_ATTRIBUTE = 0x0c;

/** The numrecs value meaning "unknown, derive from the file length" (all ones). */
export const STREAMING_NUMRECS = -1;

function product(shape: readonly number[]): number {
  let p = 1;
  for (const d of shape) p *= d;
  return p;
}

function pad4(n: number): number {
  return Math.ceil(n / 4) * 4;
}

function recordDimId(dims: readonly NcDimension[]): number {
  return dims.findIndex((d) => d.length === 0);
}

// ---------------------------------------------------------------------------------------------
// Values to big-endian bytes
// ---------------------------------------------------------------------------------------------

function typedFor(type: NcType, n: number): TypedArray {
  return typedArray(NC_TYPE_DTYPE[type], n);
}

/** Element count of a value list (UTF-8 bytes for strings). */
function valueCount(values: NcValues): number {
  return typeof values === "string" ? enc.encode(values).length : values.length;
}

/** The values as big-endian bytes of `type` (unpadded). */
export function encodeValues(type: NcType, values: NcValues): Uint8Array {
  if (typeof values === "string") {
    if (type !== "char") {
      throw new UsageError(`netcdf: text given for a ${type} attribute or variable`);
    }
    return enc.encode(values);
  }
  const size = ncTypeSize(type);
  let typed: TypedArray;
  const wanted = NC_TYPE_DTYPE[type];
  if (ArrayBuffer.isView(values) && sameElement(values, wanted)) {
    typed = values;
  } else {
    typed = typedFor(type, values.length);
    if (typed instanceof BigInt64Array || typed instanceof BigUint64Array) {
      for (let i = 0; i < values.length; i++) typed[i] = BigInt(values[i]!);
    } else {
      for (let i = 0; i < values.length; i++) typed[i] = Number(values[i]!);
    }
  }
  const src = new Uint8Array(typed.buffer, typed.byteOffset, typed.byteLength);
  const out = new Uint8Array(src.length);
  copySwapped(src, out, size);
  return out;
}

function sameElement(a: TypedArray | Uint8Array, dtype: DType): boolean {
  switch (dtype) {
    case "int8":
      return a instanceof Int8Array;
    case "char":
    case "uint8":
      return a instanceof Uint8Array;
    case "int16":
      return a instanceof Int16Array;
    case "uint16":
      return a instanceof Uint16Array;
    case "int32":
      return a instanceof Int32Array;
    case "uint32":
      return a instanceof Uint32Array;
    case "float32":
      return a instanceof Float32Array;
    case "float64":
      return a instanceof Float64Array;
    case "int64":
      return a instanceof BigInt64Array;
    case "uint64":
      return a instanceof BigUint64Array;
  }
}

/** Big-endian bytes of a variable's fill element: its `_FillValue` attribute or the default. */
export function fillBytes(v: NcVariable): Uint8Array {
  const fv = v.attributes.find((a) => a.name === "_FillValue");
  if (fv !== undefined) {
    if (fv.type !== v.type) {
      throw new UsageError(
        `netcdf: _FillValue of '${v.name}' is ${fv.type}, the variable is ${v.type}`,
      );
    }
    const b = encodeValues(v.type, fv.values);
    if (b.length >= ncTypeSize(v.type)) return b.slice(0, ncTypeSize(v.type));
  }
  return new Uint8Array(DEFAULT_FILL[v.type]);
}

/** Fills `dst` with repeats of the element `fill` (dst length a multiple of its length). */
function fillPattern(dst: Uint8Array, fill: Uint8Array): void {
  if (dst.length === 0) return;
  const n = Math.min(fill.length, dst.length);
  dst.set(fill.subarray(0, n));
  let have = n;
  while (have < dst.length) {
    const k = Math.min(have, dst.length - have);
    dst.copyWithin(have, 0, k);
    have += k;
  }
}

// ---------------------------------------------------------------------------------------------
// Header encoding
// ---------------------------------------------------------------------------------------------

class HeaderEncoder {
  #buf = new Uint8Array(1024);
  #view = new DataView(this.#buf.buffer);
  pos = 0;
  readonly #wide: boolean;
  readonly #beginWide: boolean;

  constructor(variant: NcVariant) {
    this.#wide = variant === 5;
    this.#beginWide = variant !== 1;
  }

  #ensure(n: number): void {
    if (this.pos + n <= this.#buf.length) return;
    let cap = this.#buf.length * 2;
    while (cap < this.pos + n) cap *= 2;
    const next = new Uint8Array(cap);
    next.set(this.#buf.subarray(0, this.pos));
    this.#buf = next;
    this.#view = new DataView(next.buffer);
  }

  u32(v: number): void {
    this.#ensure(4);
    this.#view.setUint32(this.pos, v, false);
    this.pos += 4;
  }

  u64(v: number): void {
    this.#ensure(8);
    this.#view.setBigUint64(this.pos, BigInt(v), false);
    this.pos += 8;
  }

  /** A count, length, rank, dimid or vsize: 4 bytes, 8 in CDF-5. */
  count(v: number): void {
    if (this.#wide) this.u64(v);
    else this.u32(v);
  }

  begin(v: number): void {
    if (this.#beginWide) this.u64(v);
    else this.u32(v);
  }

  bytes(b: Uint8Array): void {
    this.#ensure(b.length + 3);
    this.#buf.set(b, this.pos);
    this.pos += b.length;
    const padded = pad4(this.pos);
    this.#buf.fill(0, this.pos, padded);
    this.pos = padded;
  }

  name(s: string): void {
    const b = enc.encode(s.normalize("NFC"));
    this.count(b.length);
    this.bytes(b);
  }

  absent(): void {
    this.u32(0);
    this.count(0);
  }

  attributes(list: readonly NcAttribute[]): void {
    if (list.length === 0) return this.absent();
    this.u32(TAG_ATTRIBUTE);
    this.count(list.length);
    for (const a of list) {
      this.name(a.name);
      this.u32(NC_TYPE_CODE[a.type]);
      this.count(valueCount(a.values));
      this.bytes(encodeValues(a.type, a.values));
    }
  }

  result(): Uint8Array {
    return this.#buf.slice(0, this.pos);
  }
}

function checkSchema(schema: NcSchema): void {
  const { variant } = schema;
  if (variant !== 1 && variant !== 2 && variant !== 5) {
    throw new UsageError(`netcdf: variant must be 1, 2 or 5, got ${String(variant)}`);
  }
  let unlimited = 0;
  for (const d of schema.dimensions) {
    if (!Number.isSafeInteger(d.length) || d.length < 0) {
      throw new UsageError(`netcdf: dimension '${d.name}' has bad length ${d.length}`);
    }
    if (d.length === 0) unlimited++;
    if (variant !== 5 && d.length > 0x7fffffff) {
      throw new UsageError(
        `netcdf: dimension '${d.name}' of ${d.length} is too long for CDF-${variant}; use variant 5`,
      );
    }
  }
  if (unlimited > 1) throw new UsageError("netcdf: at most one dimension may be unlimited");
  const rec = recordDimId(schema.dimensions);
  const all = [...schema.attributes, ...schema.variables.flatMap((v) => v.attributes)];
  for (const v of schema.variables) {
    if (variant !== 5 && isCdf5Type(v.type)) {
      throw new UsageError(
        `netcdf: variable '${v.name}' of type ${v.type} needs variant 5 (CDF-5)`,
      );
    }
    v.dims.forEach((id, k) => {
      if (!(id >= 0 && id < schema.dimensions.length)) {
        throw new UsageError(`netcdf: variable '${v.name}' names dimension id ${id}`);
      }
      if (id === rec && k > 0) {
        throw new UsageError(
          `netcdf: variable '${v.name}' uses the record dimension other than first`,
        );
      }
    });
  }
  for (const a of all) {
    if (variant !== 5 && isCdf5Type(a.type)) {
      throw new UsageError(
        `netcdf: attribute '${a.name}' of type ${a.type} needs variant 5 (CDF-5)`,
      );
    }
  }
}

/** Computes where every variable's data goes, exactly as netCDF-C 4.9's `nc_enddef` (no reserved space). */
export function layoutSchema(schema: NcSchema): NcLayout {
  checkSchema(schema);
  const headerBytes = encodeHeader(schema, null, 0).length;
  const rec = recordDimId(schema.dimensions);
  const shapes = schema.variables.map((v) => {
    const isRec = v.dims.length > 0 && v.dims[0] === rec;
    const dims = isRec ? v.dims.slice(1) : v.dims;
    return { isRec, shape: dims.map((id) => schema.dimensions[id]!.length) };
  });
  const out: NcVarLayout[] = [];
  let cursor = headerBytes;
  const begins = new Array<number>(schema.variables.length);
  // Fixed variables first, then record variables, each group in header order.
  for (const pass of [false, true]) {
    schema.variables.forEach((v, i) => {
      if (shapes[i]!.isRec !== pass) return;
      begins[i] = cursor;
      cursor += pad4(product(shapes[i]!.shape) * ncTypeSize(v.type));
    });
  }
  let recvars = 0;
  let recsize = 0;
  let fixedEnd = headerBytes;
  let recordBegin = -1;
  schema.variables.forEach((v, i) => {
    const { isRec, shape } = shapes[i]!;
    const slabBytes = product(shape) * ncTypeSize(v.type);
    const paddedBytes = pad4(slabBytes);
    const begin = begins[i]!;
    const limit = variantLimit(schema.variant, begin, paddedBytes);
    if (limit !== null) throw new UsageError(`netcdf: ${limit} ('${v.name}')`);
    if (isRec) {
      recvars++;
      recsize += paddedBytes;
      if (recordBegin < 0) recordBegin = begin;
    } else {
      fixedEnd = Math.max(fixedEnd, begin + paddedBytes);
    }
    out.push({
      name: v.name,
      type: v.type,
      record: isRec,
      shape,
      slabBytes,
      paddedBytes,
      begin,
      fill: fillBytes(v),
    });
  });
  if (recvars === 1) recsize = out.find((v) => v.record)!.slabBytes; // single record variable: no padding
  return {
    headerBytes,
    vars: out,
    recordBegin: recordBegin < 0 ? fixedEnd : recordBegin,
    recsize,
    fixedEnd,
  };
}

function variantLimit(
  variant: NcVariant,
  begin: number,
  vsize: number,
): string | null {
  if (variant === 1 && begin > 0x7fffffff) {
    return `data offset ${begin} does not fit CDF-1; use variant 2 or 5`;
  }
  if (variant !== 5 && vsize > 0xfffffffc) {
    return `variable of ${vsize} bytes per record is too large for CDF-${variant}; use variant 5`;
  }
  return null;
}

/**
 * Encodes a header. `layout` gives the begins (null writes zeros, to measure the size);
 * `numrecs` is the record count, or {@link STREAMING_NUMRECS} for all ones.
 */
export function encodeHeader(
  schema: NcSchema,
  layout: NcLayout | null,
  numrecs: number,
): Uint8Array {
  const e = new HeaderEncoder(schema.variant);
  e.bytes(new Uint8Array([0x43, 0x44, 0x46, schema.variant]));
  writeNumrecs(e, schema.variant, numrecs);
  if (schema.dimensions.length === 0) {
    e.absent();
  } else {
    e.u32(TAG_DIMENSION);
    e.count(schema.dimensions.length);
    for (const d of schema.dimensions) {
      e.name(d.name);
      e.count(d.length);
    }
  }
  e.attributes(schema.attributes);
  if (schema.variables.length === 0) {
    e.absent();
  } else {
    e.u32(TAG_VARIABLE);
    e.count(schema.variables.length);
    schema.variables.forEach((v, i) => {
      e.name(v.name);
      e.count(v.dims.length);
      for (const id of v.dims) e.count(id);
      e.attributes(v.attributes);
      e.u32(NC_TYPE_CODE[v.type]);
      const l = layout?.vars[i];
      const vsize = l ? l.paddedBytes : 0;
      e.count(schema.variant !== 5 && vsize > 0xfffffffc ? 0xffffffff : vsize);
      e.begin(l ? l.begin : 0);
    });
  }
  return e.result();
}

function writeNumrecs(e: HeaderEncoder, variant: NcVariant, numrecs: number): void {
  if (variant === 5) {
    if (numrecs === STREAMING_NUMRECS) {
      e.u32(0xffffffff);
      e.u32(0xffffffff);
    } else e.u64(numrecs);
  } else e.u32(numrecs === STREAMING_NUMRECS ? 0xffffffff : numrecs);
}

/** The bytes of the numrecs field (4 bytes, 8 in CDF-5) for a rewrite at byte 4. */
export function numrecsBytes(variant: NcVariant, numrecs: number): Uint8Array {
  const e = new HeaderEncoder(variant);
  writeNumrecs(e, variant, numrecs);
  return e.result();
}

/**
 * Encodes a whole file as netCDF-C writes it: header, fixed data, `numrecs` records. `data` maps
 * variable names to all their values in row-major order (records included). With `fill` (the
 * default, as ncgen) missing values and padding are the fill value; without (NC_NOFILL, as
 * nccopy) they are zero bytes. Used to reproduce the golden files byte for byte.
 */
export function encodeFile(
  schema: NcSchema,
  data: Readonly<Record<string, NcValues>>,
  numrecs: number,
  options: { readonly fill?: boolean } = {},
): Uint8Array {
  const fill = options.fill ?? true;
  const layout = layoutSchema(schema);
  const header = encodeHeader(schema, layout, numrecs);
  const end = layout.vars.some((v) => v.record)
    ? layout.recordBegin + numrecs * layout.recsize
    : layout.fixedEnd;
  const file = new Uint8Array(schema.variables.length === 0 ? header.length : end);
  file.set(header);
  for (const v of layout.vars) {
    const values = data[v.name];
    const bytes = values === undefined ? new Uint8Array(0) : encodeValues(v.type, values);
    if (!v.record) {
      const slot = file.subarray(v.begin, v.begin + v.paddedBytes);
      if (fill) fillPattern(slot, v.fill);
      slot.set(bytes.subarray(0, v.slabBytes));
      continue;
    }
    const stride = layout.recsize;
    const slab = layout.vars.filter((x) => x.record).length === 1 ? v.slabBytes : v.paddedBytes;
    for (let r = 0; r < numrecs; r++) {
      const at = v.begin + r * stride;
      const slot = file.subarray(at, at + slab);
      if (fill) fillPattern(slot, v.fill);
      slot.set(bytes.subarray(r * v.slabBytes, Math.min(bytes.length, (r + 1) * v.slabBytes)));
    }
  }
  return file;
}

// ---------------------------------------------------------------------------------------------
// Header decoding
// ---------------------------------------------------------------------------------------------

/** A decoded attribute: values as text (char) or a typed array in native order. */
export interface NcDecodedAttribute extends NcAttribute {
  /** Text for char, else a typed array of the attribute's type. */
  readonly values: string | TypedArray;
}

/** A decoded variable with its stored vsize and begin. */
export interface NcDecodedVariable extends NcVariable {
  /** Attributes with decoded values. */
  readonly attributes: readonly NcDecodedAttribute[];
  /** The vsize field as stored (readers recompute it). */
  readonly storedVsize: number;
  /** The begin field: absolute offset of the data. */
  readonly begin: number;
  /** Byte offset of the begin field itself in the header (for error messages). */
  readonly beginFieldOffset: number;
}

/** A decoded header. */
export interface NcHeader extends NcSchema {
  /** Variables with stored offsets. */
  readonly variables: readonly NcDecodedVariable[];
  /** Global attributes with decoded values. */
  readonly attributes: readonly NcDecodedAttribute[];
  /** numrecs as stored; {@link STREAMING_NUMRECS} for all ones. */
  readonly storedNumrecs: number;
  /** Header size in bytes. */
  readonly headerBytes: number;
}

class HeaderDecoder {
  pos = 0;
  #buf: Uint8Array = new Uint8Array(0);
  #view: DataView = new DataView(new ArrayBuffer(0));
  readonly #src: ByteSource;
  wide = false;
  beginWide = false;

  constructor(src: ByteSource) {
    this.#src = src;
  }

  fail(offset: number, problem: string): never {
    throw new FormatError(FORMAT, this.#src.path, offset, problem);
  }

  need(n: number, what: string): void {
    const end = this.pos + n;
    if (end <= this.#buf.length) return;
    if (end > this.#src.size) {
      this.fail(
        this.pos,
        `header ends inside ${what}: need ${n} bytes but the file ends at byte ${this.#src.size}`,
      );
    }
    const want = Math.min(this.#src.size, Math.max(end, this.#buf.length * 2, 4096));
    this.#buf = this.#src.read(0, want);
    this.#view = new DataView(this.#buf.buffer, this.#buf.byteOffset, this.#buf.byteLength);
  }

  u32(what: string): number {
    this.need(4, what);
    const v = this.#view.getUint32(this.pos, false);
    this.pos += 4;
    return v;
  }

  u64(what: string): number {
    this.need(8, what);
    const v = this.#view.getBigUint64(this.pos, false);
    if (v > BigInt(Number.MAX_SAFE_INTEGER)) this.fail(this.pos, `${what} ${v} is too large`);
    this.pos += 8;
    return Number(v);
  }

  count(what: string): number {
    return this.wide ? this.u64(what) : this.u32(what);
  }

  begin(what: string): number {
    if (!this.beginWide) {
      const at = this.pos;
      const v = this.u32(what);
      if (v > 0x7fffffff) this.fail(at, `${what} ${v} is negative as a CDF-1 offset`);
      return v;
    }
    return this.u64(what);
  }

  /** `n` bytes followed by padding to 4 bytes, which must be NUL. */
  bytes(n: number, what: string): Uint8Array {
    const remaining = this.#src.size - this.pos;
    if (n > remaining) {
      this.fail(
        this.pos,
        `${what} of ${n} bytes runs past the end of the file (${this.#src.size} bytes)`,
      );
    }
    const padded = pad4(n);
    this.need(padded, what);
    const out = this.#buf.slice(this.pos, this.pos + n);
    for (let i = this.pos + n; i < this.pos + padded; i++) {
      if (this.#buf[i] !== 0) {
        this.fail(i, `padding after ${what} must be NUL, found 0x${this.#buf[i]!.toString(16)}`);
      }
    }
    this.pos += padded;
    return out;
  }

  name(what: string): string {
    const at = this.pos;
    const len = this.count(`${what} name length`);
    if (len === 0) this.fail(at, `${what} has an empty name`);
    const b = this.bytes(len, `${what} name`);
    try {
      return dec.decode(b);
    } catch {
      return this.fail(at + (this.wide ? 8 : 4), `${what} name is not UTF-8`);
    }
  }

  /** A list count checked against the bytes left (each element takes at least `minBytes`). */
  listCount(minBytes: number, what: string): number {
    const at = this.pos;
    const n = this.count(`${what} count`);
    if (n * minBytes > this.#src.size - this.pos) {
      this.fail(
        at,
        `${n} ${what}s cannot fit in the ${this.#src.size - this.pos} bytes left in the file`,
      );
    }
    return n;
  }

  type(variant: NcVariant, what: string): NcType {
    const at = this.pos;
    const code = this.u32(`${what} type`);
    const t = TYPES[code - 1];
    if (t === undefined || (variant !== 5 && isCdf5Type(t))) {
      this.fail(
        at,
        `${what} has unknown nc_type ${code}; expected 1..6${
          variant === 5 ? " or 7..11 (CDF-5)" : ""
        }`,
      );
    }
    return t;
  }

  /** A list tag: returns the element count (0 for ABSENT). */
  list(tag: number, what: string, minBytes: number): number {
    const at = this.pos;
    const t = this.u32(`${what} list tag`);
    if (t === 0) {
      const cAt = this.pos;
      const n = this.count(`${what} list count`);
      if (n !== 0) this.fail(cAt, `ABSENT ${what} list must have count 0, found ${n}`);
      return 0;
    }
    if (t !== tag) {
      this.fail(
        at,
        `bad tag 0x${t.toString(16).padStart(8, "0")}: expected the ${what} list tag 0x${
          tag.toString(16).padStart(8, "0")
        } or ABSENT (0)`,
      );
    }
    return this.listCount(minBytes, what);
  }

  attributes(variant: NcVariant, owner: string): NcDecodedAttribute[] {
    const n = this.list(TAG_ATTRIBUTE, "attribute", this.wide ? 24 : 12);
    const out: NcDecodedAttribute[] = [];
    for (let i = 0; i < n; i++) {
      const name = this.name(`${owner} attribute ${i}`);
      const type = this.type(variant, `attribute '${name}'`);
      const count = this.count(`attribute '${name}' value count`);
      const size = ncTypeSize(type);
      const raw = this.bytes(count * size, `values of attribute '${name}'`);
      let values: string | TypedArray;
      if (type === "char") {
        values = new TextDecoder("utf-8").decode(raw);
      } else {
        copySwapped(raw, raw, size);
        values = viewAs(type, raw);
      }
      out.push({ name, type, values });
    }
    return out;
  }
}

function viewAs(type: NcType, b: Uint8Array): TypedArray {
  const n = b.length / ncTypeSize(type);
  const t = typedFor(type, n);
  new Uint8Array(t.buffer).set(b);
  return t;
}

/** Decodes and checks a header (magic, version, tags, types, names, padding, dimension ids). */
export function decodeHeader(src: ByteSource): NcHeader {
  const d = new HeaderDecoder(src);
  if (src.size < 4) d.fail(0, `file of ${src.size} bytes is too short for a netCDF header`);
  d.need(4, "magic");
  const magic = src.read(0, 4);
  if (magic[0] !== 0x43 || magic[1] !== 0x44 || magic[2] !== 0x46) {
    d.fail(0, "bad magic: expected 'CDF' followed by version byte 1, 2 or 5");
  }
  const version = magic[3]!;
  if (version !== 1 && version !== 2 && version !== 5) {
    d.fail(
      3,
      `unknown version byte ${version}: expected 1 (classic), 2 (64-bit offset) or 5 (CDF-5)`,
    );
  }
  const variant = version as NcVariant;
  d.pos = 4;
  d.wide = variant === 5;
  d.beginWide = variant !== 1;
  let storedNumrecs: number;
  if (variant === 5) {
    d.need(8, "numrecs");
    const hi = d.u32("numrecs");
    const lo = d.u32("numrecs");
    storedNumrecs = hi === 0xffffffff && lo === 0xffffffff ? STREAMING_NUMRECS : hi * 2 ** 32 + lo;
    if (storedNumrecs > Number.MAX_SAFE_INTEGER) d.fail(4, `numrecs ${storedNumrecs} is too large`);
  } else {
    const n = d.u32("numrecs");
    storedNumrecs = n === 0xffffffff ? STREAMING_NUMRECS : n;
  }

  const nd = d.list(TAG_DIMENSION, "dimension", d.wide ? 16 : 8);
  const dimensions: NcDimension[] = [];
  let recDim = -1;
  for (let i = 0; i < nd; i++) {
    const name = d.name(`dimension ${i}`);
    const at = d.pos;
    const length = d.count(`length of dimension '${name}'`);
    if (length === 0) {
      if (recDim >= 0) d.fail(at, `dimension '${name}' is a second unlimited dimension (length 0)`);
      recDim = i;
    }
    dimensions.push({ name, length });
  }
  const attributes = d.attributes(variant, "global");
  const nv = d.list(TAG_VARIABLE, "variable", d.wide ? 48 : 24);
  const variables: NcDecodedVariable[] = [];
  for (let i = 0; i < nv; i++) {
    const name = d.name(`variable ${i}`);
    const rank = d.listCount(d.wide ? 8 : 4, `dimension id of variable '${name}'`);
    const dims: number[] = [];
    for (let k = 0; k < rank; k++) {
      const at = d.pos;
      const id = d.count(`dimension id ${k} of '${name}'`);
      if (id >= dimensions.length) {
        d.fail(
          at,
          `variable '${name}' names dimension id ${id}, but there are ${dimensions.length}`,
        );
      }
      if (id === recDim && k > 0) {
        d.fail(
          at,
          `variable '${name}' uses the unlimited dimension at index ${k}; it must be the first`,
        );
      }
      dims.push(id);
    }
    const vattrs = d.attributes(variant, `variable '${name}'`);
    const type = d.type(variant, `variable '${name}'`);
    const storedVsize = d.count(`vsize of '${name}'`);
    const beginFieldOffset = d.pos;
    const begin = d.begin(`begin of '${name}'`);
    variables.push({ name, type, dims, attributes: vattrs, storedVsize, begin, beginFieldOffset });
  }
  return { variant, dimensions, attributes, variables, storedNumrecs, headerBytes: d.pos };
}

/** A checked file: header, data layout from the stored begins, and the resolved record count. */
export interface NcFile {
  /** The decoded header. */
  readonly header: NcHeader;
  /** Per-variable layout with the stored begins. */
  readonly layout: NcLayout;
  /** Number of records (derived from the file length when numrecs is streaming). */
  readonly numrecs: number;
  /** Notes such as a recomputed vsize or a partial last record. */
  readonly warnings: readonly string[];
}

/** Decodes a header and checks it against the file: offsets, overlaps, and the size the records need. */
export function openNetcdf(src: ByteSource): NcFile {
  const h = decodeHeader(src);
  const fail = (offset: number, problem: string): never => {
    throw new FormatError(FORMAT, src.path, offset, problem);
  };
  const warnings: string[] = [];
  const rec = recordDimId(h.dimensions);
  const beginField = (i: number): number => h.variables[i]!.beginFieldOffset;
  const vars: NcVarLayout[] = h.variables.map((v) => {
    const isRec = v.dims.length > 0 && v.dims[0] === rec;
    const shape = (isRec ? v.dims.slice(1) : v.dims).map((id) => h.dimensions[id]!.length);
    const slabBytes = product(shape) * ncTypeSize(v.type);
    if (!Number.isSafeInteger(slabBytes)) fail(-1, `variable '${v.name}' is too large`);
    const paddedBytes = pad4(slabBytes);
    const clamp = h.variant !== 5 && paddedBytes > 0xfffffffc && v.storedVsize === 0xffffffff;
    if (v.storedVsize !== paddedBytes && !clamp) {
      warnings.push(
        `variable '${v.name}': stored vsize ${v.storedVsize}, computed ${paddedBytes} (using the computed size)`,
      );
    }
    let fill: Uint8Array;
    try {
      fill = fillBytes(v);
    } catch {
      fill = new Uint8Array(DEFAULT_FILL[v.type]);
      warnings.push(
        `variable '${v.name}': _FillValue type differs from the variable's; using the default fill`,
      );
    }
    return {
      name: v.name,
      type: v.type,
      record: isRec,
      shape,
      slabBytes,
      paddedBytes,
      begin: v.begin,
      fill,
    };
  });
  const fixed = vars.filter((v) => !v.record);
  const recs = vars.filter((v) => v.record);
  for (const [i, v] of vars.entries()) {
    if (v.begin < h.headerBytes) {
      fail(
        beginField(i),
        `begin ${v.begin} of variable '${v.name}' lies inside the header (${h.headerBytes} bytes)`,
      );
    }
    if (v.begin > src.size) {
      fail(
        beginField(i),
        `begin ${v.begin} of variable '${v.name}' is past the end of the file (${src.size} bytes)`,
      );
    }
  }
  // Fixed variables must not overlap each other.
  const sorted = [...fixed].sort((a, b) => a.begin - b.begin);
  for (let i = 1; i < sorted.length; i++) {
    const p = sorted[i - 1]!, q = sorted[i]!;
    if (p.begin + p.slabBytes > q.begin) {
      fail(
        q.begin,
        `variable '${q.name}' at byte ${q.begin} overlaps '${p.name}' [${p.begin}, ${
          p.begin + p.slabBytes
        })`,
      );
    }
  }
  let recsize = recs.reduce((a, v) => a + v.paddedBytes, 0);
  if (recs.length === 1) recsize = recs[0]!.slabBytes;
  const recordBegin = recs.length > 0 ? Math.min(...recs.map((v) => v.begin)) : h.headerBytes;
  const fixedEnd = fixed.reduce((a, v) => Math.max(a, v.begin + v.paddedBytes), h.headerBytes);
  if (recs.length > 0) {
    const lastFixed = sorted[sorted.length - 1];
    if (lastFixed !== undefined && lastFixed.begin + lastFixed.slabBytes > recordBegin) {
      fail(
        recordBegin,
        `record data at byte ${recordBegin} overlaps fixed variable '${lastFixed.name}'`,
      );
    }
    const inRecord = [...recs].sort((a, b) => a.begin - b.begin);
    for (const [k, v] of inRecord.entries()) {
      const rel = v.begin - recordBegin;
      const next = inRecord[k + 1];
      const limit = next === undefined ? recsize : next.begin - recordBegin;
      if (rel + v.slabBytes > limit) {
        fail(
          v.begin,
          `record variable '${v.name}' (${v.slabBytes} bytes at byte ${v.begin}) does not fit its record of ${recsize} bytes`,
        );
      }
    }
  }
  // Sizes the data needs, as netCDF-C's NC_calcsize: fixed data, then numrecs full records.
  for (const v of fixed) {
    if (v.begin + v.slabBytes > src.size) {
      fail(
        v.begin,
        `variable '${v.name}' needs bytes [${v.begin}, ${
          v.begin + v.slabBytes
        }) but the file has ${src.size} bytes`,
      );
    }
  }
  let numrecs = h.storedNumrecs;
  if (numrecs === STREAMING_NUMRECS) {
    numrecs = recs.length === 0 || recsize === 0
      ? 0
      : Math.floor(Math.max(0, src.size - recordBegin) / recsize);
    const extra = recs.length === 0 || recsize === 0
      ? 0
      : (src.size - recordBegin) - numrecs * recsize;
    if (extra > 0) {
      warnings.push(`streaming numrecs: ${numrecs} whole records, ${extra} trailing bytes ignored`);
    }
  } else if (recs.length > 0 && numrecs > 0) {
    const need = recordBegin + numrecs * recsize;
    if (need > src.size) {
      fail(
        src.size,
        `file is ${src.size} bytes but its header promises ${numrecs} records of ${recsize} bytes from byte ${recordBegin} (${need} bytes): truncated?`,
      );
    }
  }
  return {
    header: h,
    layout: { headerBytes: h.headerBytes, vars, recordBegin, recsize, fixedEnd },
    numrecs,
    warnings,
  };
}

// ---------------------------------------------------------------------------------------------
// Frame index
// ---------------------------------------------------------------------------------------------

function chunkNameOf(v: NcDecodedVariable): string {
  const a = v.attributes.find((x) => x.name === CHUNK_NAME_ATTR && x.type === "char");
  return a !== undefined && typeof a.values === "string" && a.values !== "" ? a.values : v.name;
}

function jsonValues(values: string | TypedArray): unknown {
  if (typeof values === "string") return values;
  if (values instanceof BigInt64Array || values instanceof BigUint64Array) {
    return Array.from(
      values,
      (b) => (b >= -(2n ** 53n) && b <= 2n ** 53n ? Number(b) : b.toString()),
    );
  }
  return Array.from(values);
}

const KIND_NAMES: Readonly<Record<NcVariant, string>> = {
  1: "classic",
  2: "64-bit offset",
  5: "cdf5",
};

class NetcdfIndex implements FrameIndex {
  readonly framing = FORMAT;
  readonly frameCount: number;
  readonly warnings: readonly string[];
  readonly #file: NcFile;
  readonly #refs: readonly ChunkRef[]; // record 0 (or the fixed variables)
  readonly #stride: number;

  constructor(src: ByteSource) {
    const f = openNetcdf(src);
    this.#file = f;
    this.warnings = f.warnings;
    const { vars, recsize } = f.layout;
    const hasRecords = vars.some((v) => v.record);
    const chosen = vars
      .map((v, i) => ({ v, d: f.header.variables[i]! }))
      .filter((x) => x.v.record === hasRecords)
      .sort((a, b) => a.v.begin - b.v.begin);
    this.#refs = chosen.map(({ v, d }) => ({
      name: chunkNameOf(d),
      dtype: NC_TYPE_DTYPE[v.type],
      shape: v.shape,
      offset: v.begin,
      bytes: v.slabBytes,
      order: "big" as const,
    }));
    this.#stride = hasRecords ? recsize : 0;
    this.frameCount = hasRecords ? f.numrecs : chosen.length > 0 ? 1 : 0;
  }

  chunks(frame: number): readonly ChunkRef[] {
    if (!(Number.isInteger(frame) && frame >= 0 && frame < this.frameCount)) {
      throw new RangeError(`frame ${frame} out of range [0, ${this.frameCount})`);
    }
    const shift = frame * this.#stride;
    if (shift === 0) return this.#refs;
    return this.#refs.map((r) => ({ ...r, offset: r.offset + shift }));
  }

  variables(): readonly StoredVariable[] {
    const { header: h, layout, numrecs } = this.#file;
    return h.variables.map((v, i) => {
      const l = layout.vars[i]!;
      const pieces: [number, number][] = [];
      if (!l.record) pieces.push([l.begin, l.slabBytes]);
      else {for (let r = 0; r < numrecs; r++) {
          pieces.push([l.begin + r * layout.recsize, l.slabBytes]);
        }}
      return { name: v.name, dtype: NC_TYPE_DTYPE[v.type], pieces };
    });
  }

  describe(): Record<string, unknown> {
    const { header: h, layout, numrecs } = this.#file;
    const attrs = (list: readonly NcDecodedAttribute[]) =>
      Object.fromEntries(list.map((a) => [a.name, { type: a.type, values: jsonValues(a.values) }]));
    return {
      kind: KIND_NAMES[h.variant],
      version: h.variant,
      numrecs,
      numrecs_streaming: h.storedNumrecs === STREAMING_NUMRECS,
      header_bytes: h.headerBytes,
      record_begin: layout.recordBegin,
      recsize: layout.recsize,
      dimensions: h.dimensions.map((d) => ({
        name: d.name,
        length: d.length === 0 ? numrecs : d.length,
        unlimited: d.length === 0,
      })),
      attributes: attrs(h.attributes),
      variables: h.variables.map((v, i) => ({
        name: v.name,
        type: v.type,
        dimensions: v.dims.map((id) => h.dimensions[id]!.name),
        record: layout.vars[i]!.record,
        shape: layout.vars[i]!.shape,
        begin: v.begin,
        vsize: layout.vars[i]!.paddedBytes,
        attributes: attrs(v.attributes),
      })),
    };
  }
}

// ---------------------------------------------------------------------------------------------
// Frame writer
// ---------------------------------------------------------------------------------------------

/** Variable attribute holding the original chunk name when it is not a valid netCDF name. */
export const CHUNK_NAME_ATTR = "chunk_name";

/** A valid netCDF classic name for a chunk name: `/` and control characters become `_`. */
export function netcdfName(name: string): string {
  // deno-lint-ignore no-control-regex
  let s = name.normalize("NFC").replace(/[\u0000-\u001f\u007f/]/g, "_").replace(/\s+$/, "");
  if (s === "" || !/^[\p{L}\p{N}_]/u.test(s)) s = `_${s}`;
  return s;
}

/** One chunk declared to the writer: name, element type, per-record shape. */
export type NcChunkSpec = ChunkLayout;

/** The options the netcdf writer honours (all optional). */
export interface NetcdfWriterOptions {
  /** 1 classic, 2 64-bit offset, 5 CDF-5; default 1, or 5 when a type or size needs it. */
  readonly variant?: NcVariant;
  /** Name of the record dimension; default `record`. */
  readonly recordDim?: string;
  /**
   * When numrecs is written: `close` (default; netCDF-C without NC_SHARE) or `frame` (after every
   * record, as with NC_SHARE).
   */
  readonly numrecs?: "close" | "frame";
  /** Prefill each new record with fill values before writing it, as netCDF-C with fill on; default false. */
  readonly fill?: boolean;
  /** Declare the variables up front so `begin()` writes the header; else the first frame defines them. */
  readonly chunks?: readonly NcChunkSpec[];
  /** Global attributes. */
  readonly attributes?: readonly NcAttribute[];
}

/** Builds the schema the frame writer uses for a list of chunks (one record variable each). */
export function schemaForChunks(
  chunks: readonly NcChunkSpec[],
  options: NetcdfWriterOptions = {},
): NcSchema {
  const dims: NcDimension[] = [{ name: options.recordDim ?? "record", length: 0 }];
  const byLength = new Map<number, number>();
  const names = new Set<string>();
  const variables: NcVariable[] = chunks.map((c) => {
    const type = DTYPE_NC_TYPE[c.dtype];
    const ids = [0];
    for (const len of c.shape) {
      if (!Number.isSafeInteger(len) || len <= 0) {
        throw new UsageError(
          `netcdf: chunk '${c.name}' has dimension ${len}; netCDF needs positive lengths`,
        );
      }
      let id = byLength.get(len);
      if (id === undefined) {
        id = dims.length;
        dims.push({ name: `n${len}`, length: len });
        byLength.set(len, id);
      }
      ids.push(id);
    }
    let name = netcdfName(c.name);
    while (names.has(name)) name += "_";
    names.add(name);
    const attributes: NcAttribute[] = name === c.name
      ? []
      : [{ name: CHUNK_NAME_ATTR, type: "char", values: c.name }];
    return { name, type, dims: ids, attributes };
  });
  const needs5 = variables.some((v) => isCdf5Type(v.type));
  let variant = options.variant;
  if (variant === undefined) {
    const big = chunks.some((c) => product(c.shape) * DTYPE_SIZE[c.dtype] > 0xfffffffc);
    variant = needs5 || big ? 5 : 1;
  }
  return { variant, dimensions: dims, attributes: options.attributes ?? [], variables };
}

function chunkBytes(c: Chunk): Uint8Array {
  return new Uint8Array(c.data.buffer, c.data.byteOffset, c.data.byteLength);
}

/** Where one chunk of every frame goes inside a record. */
interface RecordSlot {
  /** Chunk name frames carry (the `chunk_name` attribute, else the variable name). */
  readonly chunk: string;
  /** netCDF variable name. */
  readonly variable: string;
  /** Element type. */
  readonly dtype: DType;
  /** Shape of one record's slab. */
  readonly shape: readonly number[];
  /** Offset of the slab inside the record, bytes. */
  readonly rel: number;
  /** Slab size, bytes, unpadded. */
  readonly bytes: number;
  /** Element size, bytes. */
  readonly size: number;
}

/** What a writer needs to lay down records: variant, where records go, slots, record templates. */
interface RecordPlan {
  /** Version byte of the file (decides the numrecs width and the record limit). */
  readonly variant: NcVariant;
  /** Offset of record 0, bytes. */
  readonly recordBegin: number;
  /** Bytes from one record to the next. */
  readonly recsize: number;
  /** Slots in the order frames give their chunks. */
  readonly slots: readonly RecordSlot[];
  /** One record whose padding holds fill values; each frame copies its slabs in. */
  readonly record: Uint8Array;
  /** One record of fill values, written first with the `fill` option (else empty). */
  readonly fillRecord: Uint8Array;
}

/**
 * The record plan of `vars` (record variables with their chunk names, in frame order). Padding
 * after a slab, up to its padded size (or the next slab, or the record's end: none with a single
 * record variable), holds the variable's fill value, as netCDF-C's record fill leaves it.
 */
function recordPlan(
  variant: NcVariant,
  layout: NcLayout,
  vars: readonly { readonly v: NcVarLayout; readonly chunk: string }[],
  fill: boolean,
): RecordPlan {
  const { recordBegin, recsize } = layout;
  const record = new Uint8Array(recsize);
  const fillRecord = new Uint8Array(fill ? recsize : 0);
  const byRel = [...vars].sort((a, b) => a.v.begin - b.v.begin);
  byRel.forEach(({ v }, k) => {
    const rel = v.begin - recordBegin;
    const next = byRel[k + 1];
    const end = Math.min(
      rel + v.paddedBytes,
      next === undefined ? recsize : next.v.begin - recordBegin,
    );
    fillPattern(record.subarray(rel + v.slabBytes, end), v.fill);
    if (fill) fillPattern(fillRecord.subarray(rel, end), v.fill);
  });
  const slots = vars.map(({ v, chunk }) => ({
    chunk,
    variable: v.name,
    dtype: NC_TYPE_DTYPE[v.type],
    shape: v.shape,
    rel: v.begin - recordBegin,
    bytes: v.slabBytes,
    size: ncTypeSize(v.type),
  }));
  return { variant, recordBegin, recsize, slots, record, fillRecord };
}

function describeSlot(s: RecordSlot): string {
  const variable = s.variable === s.chunk ? "" : ` (variable '${s.variable}')`;
  return `'${s.chunk}'${variable} ${s.dtype} [${s.shape.join("x")}]`;
}

function describeChunk(c: Chunk): string {
  return `'${c.name}' ${c.dtype} [${c.shape.join("x")}]`;
}

function sameShape(a: readonly number[], b: readonly number[]): boolean {
  return a.length === b.length && a.every((x, j) => x === b[j]);
}

/** What a writer continuing an existing file knows about it. */
interface AppendState {
  /** Path for messages. */
  readonly path: string;
  /** numrecs is all ones (streaming): it is left so, the count stays derived from the length. */
  readonly streaming: boolean;
  /** Slot index of each chunk name (the first slot when names repeat). */
  readonly byName: ReadonlyMap<string, number>;
  /** Per-frame marks of the slots already filled (names matched, not positions). */
  readonly used: Uint8Array;
  /** numrecs as it now stands in the file. */
  written: number;
}

class NetcdfWriter implements FrameWriter {
  readonly #options: NetcdfWriterOptions;
  #plan: RecordPlan | null = null;
  #numrecs = 0;
  #started = false;
  #append: AppendState | undefined;

  constructor(options: NetcdfWriterOptions) {
    this.#options = options;
  }

  /**
   * A writer that continues `file` at record `numrecs`, with the same record variables: frames
   * give one chunk per record variable, matched by chunk name. Nothing is written until a frame.
   */
  static continuing(file: NcFile, path: string, options: NetcdfWriterOptions): NetcdfWriter {
    const h = file.header;
    const recs = file.layout.vars
      .map((v, i) => ({ v, chunk: chunkNameOf(h.variables[i]!) }))
      .filter((x) => x.v.record)
      .sort((a, b) => a.v.begin - b.v.begin);
    if (recs.length === 0) {
      const what = h.variables.length === 0
        ? "it has no variables"
        : `it has only fixed-size variables (${h.variables.map((v) => `'${v.name}'`).join(", ")})`;
      throw new UsageError(
        `netcdf: cannot append records to ${path}: ${what}, so no record dimension to grow; write a new file instead`,
      );
    }
    const w = new NetcdfWriter(options);
    w.#plan = recordPlan(h.variant, file.layout, recs, options.fill === true);
    const byName = new Map<string, number>();
    w.#plan.slots.forEach((s, i) => {
      if (!byName.has(s.chunk)) byName.set(s.chunk, i);
    });
    w.#numrecs = file.numrecs;
    w.#started = true;
    w.#append = {
      path,
      streaming: h.storedNumrecs === STREAMING_NUMRECS,
      byName,
      used: new Uint8Array(recs.length),
      written: file.numrecs,
    };
    return w;
  }

  #define(specs: readonly NcChunkSpec[]): WriteOp[] {
    const schema = schemaForChunks(specs, this.#options);
    const layout = layoutSchema(schema);
    this.#plan = recordPlan(
      schema.variant,
      layout,
      layout.vars.map((v, k) => ({ v, chunk: specs[k]!.name })),
      this.#options.fill === true,
    );
    return [{ kind: "write", offset: 0, data: encodeHeader(schema, layout, 0) }];
  }

  begin(): WriteOp[] {
    if (this.#append) return [];
    if (this.#started) throw new Error("netcdf writer: begin() called twice");
    this.#started = true;
    const specs = this.#options.chunks;
    return specs === undefined ? [] : this.#define(specs);
  }

  /** The slot chunk `k` of a frame goes to; throws UsageError when the frame does not fit. */
  #slot(c: Chunk, k: number): RecordSlot {
    const slots = this.#plan!.slots;
    const append = this.#append;
    if (append === undefined) {
      const s = slots[k]!;
      if (c.name !== s.chunk || c.dtype !== s.dtype || !sameShape(c.shape, s.shape)) {
        throw new UsageError(
          `netcdf: frame ${this.#numrecs} chunk ${k} is '${c.name}' ${c.dtype} [${
            c.shape.join("x")
          }], the file's variable is '${s.chunk}' ${s.dtype} [${s.shape.join("x")}]`,
        );
      }
      return s;
    }
    let i = k;
    if (slots[k]!.chunk !== c.name || append.used[k] !== 0) {
      const j = append.byName.get(c.name);
      if (j === undefined) {
        throw new UsageError(
          `netcdf: cannot append chunk '${c.name}' to ${append.path}: the file has no record variable for it (its record variables: ${
            slots.map(describeSlot).join(", ")
          })`,
        );
      }
      i = j;
      // Repeated chunk names (possible in files from other writers): the next unused one.
      while (i < slots.length && (append.used[i] !== 0 || slots[i]!.chunk !== c.name)) i++;
      if (i === slots.length) {
        throw new UsageError(
          `netcdf: cannot append to ${append.path}: frame ${this.#numrecs} gives chunk '${c.name}' twice`,
        );
      }
    }
    append.used[i] = 1;
    const s = slots[i]!;
    if (c.dtype !== s.dtype || !sameShape(c.shape, s.shape)) {
      throw new UsageError(
        `netcdf: cannot append chunk ${describeChunk(c)} to ${append.path}: its record variable ${
          describeSlot(s)
        } holds another type or shape`,
      );
    }
    return s;
  }

  writeFrame(frame: Frame): WriteOp[] {
    const ops: WriteOp[] = this.#plan === null ? this.#define(frame.chunks) : [];
    const plan = this.#plan!;
    const append = this.#append;
    if (frame.chunks.length !== plan.slots.length) {
      throw new UsageError(
        append === undefined
          ? `netcdf: frame ${this.#numrecs} has ${frame.chunks.length} chunks, the file's records have ${plan.slots.length} variables`
          : `netcdf: cannot append a frame of ${frame.chunks.length} chunks (${
            frame.chunks.map(describeChunk).join(", ")
          }) to ${append.path}: its records hold ${plan.slots.length} variables (${
            plan.slots.map(describeSlot).join(", ")
          })`,
      );
    }
    append?.used.fill(0);
    const rec = plan.record;
    frame.chunks.forEach((c, k) => {
      const s = this.#slot(c, k);
      if (c.data.byteLength !== s.bytes) {
        throw new RangeError(
          `chunk '${c.name}': shape needs ${s.bytes} bytes, data has ${c.data.byteLength}`,
        );
      }
      copySwapped(chunkBytes(c), rec.subarray(s.rel, s.rel + s.bytes), s.size);
    });
    if (plan.variant !== 5 && this.#numrecs >= 0xfffffffe) {
      throw new UsageError(
        `netcdf: CDF-${plan.variant} holds at most 4294967294 records; use variant 5`,
      );
    }
    const at = plan.recordBegin + this.#numrecs * plan.recsize;
    if (this.#options.fill) ops.push({ kind: "write", offset: at, data: plan.fillRecord });
    ops.push({ kind: "write", offset: at, data: rec });
    this.#numrecs++;
    if (this.#options.numrecs === "frame" && !append?.streaming) {
      ops.push({ kind: "write", offset: 4, data: numrecsBytes(plan.variant, this.#numrecs) });
      if (append) append.written = this.#numrecs;
    }
    return ops;
  }

  finish(): WriteOp[] {
    const plan = this.#plan;
    if (plan === null) {
      // No frame and no declared chunks: an empty dataset (header only).
      const schema: NcSchema = {
        variant: this.#options.variant ?? 1,
        dimensions: [],
        attributes: this.#options.attributes ?? [],
        variables: [],
      };
      return [{ kind: "write", offset: 0, data: encodeHeader(schema, layoutSchema(schema), 0) }];
    }
    const append = this.#append;
    if (append !== undefined) {
      // Appending: rewrite numrecs only when it changed (a streaming file keeps its all ones).
      if (append.streaming || append.written === this.#numrecs) return [];
      append.written = this.#numrecs;
    }
    return [{ kind: "write", offset: 4, data: numrecsBytes(plan.variant, this.#numrecs) }];
  }
}

function writerOptions(options: WriterOptions): NetcdfWriterOptions {
  if (options.endian === "little") {
    throw new UsageError("netcdf: classic netCDF stores data big-endian only; use --endian big");
  }
  const variant = options.variant;
  if (variant !== undefined && variant !== 1 && variant !== 2 && variant !== 5) {
    throw new UsageError(`netcdf: variant must be 1, 2 or 5, got ${String(variant)}`);
  }
  const numrecs = options.numrecs;
  if (numrecs !== undefined && numrecs !== "close" && numrecs !== "frame") {
    throw new UsageError(`netcdf: numrecs must be 'close' or 'frame', got ${String(numrecs)}`);
  }
  return {
    variant: variant as NcVariant | undefined,
    numrecs: numrecs as "close" | "frame" | undefined,
    recordDim: typeof options.recordDim === "string" ? options.recordDim : undefined,
    fill: options.fill === true,
    chunks: Array.isArray(options.chunks) ? (options.chunks as NcChunkSpec[]) : undefined,
    attributes: Array.isArray(options.attributes)
      ? (options.attributes as NcAttribute[])
      : undefined,
  };
}

/**
 * A writer continuing the netCDF classic file read through `source` along its record dimension,
 * as `nc_open(NC_WRITE)` + `nc_put_vara` at records numrecs.. do: records go on at
 * recordBegin + numrecs x recsize with the file's record variables (each frame gives one chunk
 * per record variable, matched by chunk name, same type and shape), padding holds fill values,
 * numrecs is rewritten at finish (or per frame with `numrecs=frame`). A streaming numrecs (all
 * ones) is counted from the file size and left as it is. Options `numrecs` and `fill` as for a
 * new file; `variant` and `recordDim`, when given, must be the file's. Throws FormatError on a
 * malformed file, UsageError when it has no record variables or the options contradict it.
 */
export function netcdfAppendWriter(source: ByteSource, options: WriterOptions = {}): FrameWriter {
  checkAppendOrder(FORMAT, source.path, "big", options.endian);
  const opts = writerOptions(options);
  const file = openNetcdf(source);
  const h = file.header;
  if (opts.variant !== undefined && opts.variant !== h.variant) {
    throw new UsageError(
      `netcdf: cannot append to ${source.path} as CDF-${opts.variant}: it is a CDF-${h.variant} (${
        KIND_NAMES[h.variant]
      }) file`,
    );
  }
  const rec = recordDimId(h.dimensions);
  if (opts.recordDim !== undefined && rec >= 0 && opts.recordDim !== h.dimensions[rec]!.name) {
    throw new UsageError(
      `netcdf: cannot append along '${opts.recordDim}' to ${source.path}: its record dimension is '${
        h.dimensions[rec]!.name
      }'`,
    );
  }
  if (opts.chunks !== undefined || opts.attributes !== undefined) {
    throw new UsageError(
      "netcdf: options chunks and attributes define a new file; an append keeps the file's",
    );
  }
  return NetcdfWriter.continuing(file, source.path, opts);
}

/**
 * The netCDF classic framing (`netcdf`): big-endian, one record per frame. Writer options:
 * `variant` (1, 2, 5), `numrecs` (`close` | `frame`), `fill` (boolean), `recordDim`, `chunks`,
 * `attributes` (see {@link NetcdfWriterOptions}). Appends along the record dimension (see
 * {@link netcdfAppendWriter}).
 */
export const netcdf: Framing = {
  name: FORMAT,
  description:
    "netCDF classic (CDF-1, CDF-2 64-bit offset, CDF-5), one record per frame, big-endian",
  orders: ["big"],
  // Any version byte after "CDF" is claimed, so an unknown version gets the reader's precise error.
  detect(head: Uint8Array): boolean {
    return head.length >= 4 && head[0] === 0x43 && head[1] === 0x44 && head[2] === 0x46;
  },
  createWriter(options: WriterOptions = {}): FrameWriter {
    return new NetcdfWriter(writerOptions(options));
  },
  appendWriter: netcdfAppendWriter,
  openIndex(source: ByteSource): FrameIndex {
    return new NetcdfIndex(source);
  },
};
