/**
 * netCDF classic data model: external types, the schema and layout types, and values to
 * big-endian bytes (attribute values, fill values). Shared by the header codec, reader, index
 * and writer in this folder.
 * @module
 */
import { copySwapped } from "../../bytes/byteswap.ts";
import { UsageError } from "../../core/errors.ts";
import type { DType, TypedArray } from "../types.ts";
import { DTYPE_SIZE, holdsDType, typedArray } from "../types.ts";
import { elementCount } from "../kit.ts";

/** The framing name, used in errors. */
export const FORMAT = "netcdf";

/** Longest name of a dimension, variable or attribute, in UTF-8 bytes (netCDF-C's NC_MAX_NAME). */
export const NC_MAX_NAME = 256;

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

/** The external types in the order of their codes (1-based). */
export const TYPES: readonly NcType[] = [
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
export const DEFAULT_FILL: Readonly<Record<NcType, readonly number[]>> = {
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

/** {@link DEFAULT_FILL} as bytes, one array per type shared by every variable without `_FillValue`. */
const DEFAULT_FILL_BYTES: Readonly<Record<NcType, Uint8Array>> = Object.fromEntries(
  Object.entries(DEFAULT_FILL).map(([t, b]) => [t, new Uint8Array(b)]),
) as Record<NcType, Uint8Array>;

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

/** UTF-8 encoder for names and char values. */
export const enc: TextEncoder = new TextEncoder();

/** The numrecs value meaning "unknown, derive from the file length" (all ones). */
export const STREAMING_NUMRECS = -1;

/** Number of elements of a shape (1 for a scalar): the kit's {@link elementCount}. */
export const product: (shape: readonly number[]) => number = elementCount;

/** `n` rounded up to a multiple of 4 bytes. */
export function pad4(n: number): number {
  return Math.ceil(n / 4) * 4;
}

/**
 * Bytes of one slab of `type` and `shape` (a fixed variable's data, or one record of a record
 * variable): as stored, and padded to 4 bytes (the variable's vsize).
 */
export function slabOf(
  type: NcType,
  shape: readonly number[],
): { slabBytes: number; paddedBytes: number } {
  const slabBytes = product(shape) * ncTypeSize(type);
  return { slabBytes, paddedBytes: pad4(slabBytes) };
}

/** Index of the record (unlimited) dimension, or -1. */
export function recordDimId(dims: readonly NcDimension[]): number {
  return dims.findIndex((d) => d.length === 0);
}

// ---------------------------------------------------------------------------------------------
// Values to big-endian bytes
// ---------------------------------------------------------------------------------------------

/** A typed array of `n` elements of a netCDF type. */
export function typedFor(type: NcType, n: number): TypedArray {
  return typedArray(NC_TYPE_DTYPE[type], n);
}

/** Element count of a value list (UTF-8 bytes for strings). */
export function valueCount(values: NcValues): number {
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
  if (ArrayBuffer.isView(values) && holdsDType(values, wanted)) {
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

/**
 * Big-endian bytes of a variable's fill element: its `_FillValue` attribute or the default (an
 * array shared by every variable of the type: read it, never write it).
 */
export function fillBytes(v: NcVariable): Uint8Array {
  if (v.attributes.length === 0) return DEFAULT_FILL_BYTES[v.type];
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
  return DEFAULT_FILL_BYTES[v.type];
}

/** Fills `dst` with repeats of the element `fill` (dst length a multiple of its length). */
export function fillPattern(dst: Uint8Array, fill: Uint8Array): void {
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

/** The ncdump kind name of each variant. */
export const KIND_NAMES: Readonly<Record<NcVariant, string>> = {
  1: "classic",
  2: "64-bit offset",
  5: "cdf5",
};

/** Header list tags: a dimension, variable and attribute list (NC_DIMENSION, NC_VARIABLE, NC_ATTRIBUTE). */
export const TAG_DIMENSION = 0x0a;
/** See {@link TAG_DIMENSION}. */
export const TAG_VARIABLE = 0x0b;
/** See {@link TAG_DIMENSION}. */
export const TAG_ATTRIBUTE = 0x0c;
