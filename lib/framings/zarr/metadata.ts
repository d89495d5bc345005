/**
 * Zarr v2 metadata: the `.zarray` of an array (shape, chunks, dtype with its byte order,
 * fill_value, order, compressor, filters, dimension_separator), `.zgroup`, `.zattrs` and the
 * consolidated `.zmetadata`, made as zarr-python 2.13 writes them and checked as they are read:
 * anything sciobench cannot read (another compressor, filters, Fortran order, a dtype it has no
 * type for, a chunk too large to hold) is a FormatError in one line naming the file.
 * @module
 */
import { FormatError } from "../../core/errors.ts";
import { NATIVE_ORDER } from "../../bytes/byteswap.ts";
import type { ByteOrder, DType } from "../types.ts";
import { DTYPE_SIZE } from "../types.ts";
import { PyFloat, type PyJson } from "./json.ts";

/** The compressors sciobench writes and reads (numcodecs' `zlib` and `gzip`). */
export type ZarrCodec = "zlib" | "gzip";

/** The compressors sciobench writes and reads, in the order `--option compressor` lists them. */
export const ZARR_CODECS: readonly ZarrCodec[] = ["zlib", "gzip"];

/** The separators of the parts of a chunk key (`0.0.0`, or `0/0/0` as NestedDirectoryStore's). */
export type DimensionSeparator = "." | "/";

/** Most dimensions of an array (numpy's limit). */
export const MAX_RANK = 32;

/**
 * Most bytes of one chunk sciobench reads, decoded: 1 GiB. A `.zarray` whose chunk is larger is
 * refused in one line before anything is allocated for it.
 */
export const MAX_CHUNK_BYTES = 1 << 30;

/** Most bytes of one metadata file read whole (`.zarray`, `.zattrs`, `.zmetadata`): 16 MiB. */
export const MAX_METADATA_BYTES = 16 << 20;

/** An array of a store as its `.zarray` describes it, checked. */
export interface ZarrArray {
  /** Path of the array in the store (`particles/position`; "" for an array at the root). */
  readonly path: string;
  /** Shape, slowest dimension first. */
  readonly shape: readonly number[];
  /** Chunk shape. */
  readonly chunks: readonly number[];
  /** Element type. */
  readonly dtype: DType;
  /** The dtype as the file spells it (`<f4`). */
  readonly typestr: string;
  /** Byte order of the stored elements (a 1-byte type: the machine's). */
  readonly order: ByteOrder;
  /** The fill value's bytes (one element, stored order), or null for `fill_value: null`. */
  readonly fill: Uint8Array | null;
  /** The fill value as the file gives it. */
  readonly fillValue: unknown;
  /** The compressor, or null for uncompressed chunks. */
  readonly compressor: { readonly id: ZarrCodec; readonly level?: number } | null;
  /** How the parts of a chunk key are separated. */
  readonly separator: DimensionSeparator;
  /** The Zarr version of its metadata (2: `.zarray`, 3: `zarr.json`). */
  readonly format: 2 | 3;
  /**
   * How chunk keys are made: `v2` (`0.0.0`, every v2 array) or v3's `default` (`c/0/0/0`, the
   * indices after a `c`).
   */
  readonly encoding: "v2" | "default";
  /** v3: each chunk (each inner chunk of a shard) ends with its CRC-32C (the `crc32c` codec). */
  readonly crc32c: boolean;
  /** v3: how each chunk (then a shard) is divided into inner chunks, or null when it is not. */
  readonly shard: ZarrShard | null;
  /** v3: the array's `codecs` and `dimension_names` as the file gives them, for `info`. */
  readonly v3?: { readonly codecs: unknown; readonly dimensionNames: unknown };
}

/** The `sharding_indexed` codec of a v3 array: its inner chunks and its index, checked. */
export interface ZarrShard {
  /** Shape of one inner chunk (divides the shard's shape, `ZarrArray.chunks`). */
  readonly chunks: readonly number[];
  /** Inner chunks of one shard (its index's entries). */
  readonly count: number;
  /** True when the index is at the end of the shard file (`index_location` "end"). */
  readonly indexAtEnd: boolean;
  /** True when the index ends with its CRC-32C (`index_codecs` bytes, crc32c). */
  readonly indexCrc: boolean;
}

/** numpy's kind letter and size of each dtype sciobench stores (char as unsigned bytes). */
const TYPESTR: Readonly<Record<DType, string>> = {
  uint8: "u1",
  uint16: "u2",
  uint32: "u4",
  uint64: "u8",
  int8: "i1",
  int16: "i2",
  int32: "i4",
  int64: "i8",
  float32: "f4",
  float64: "f8",
  char: "u1",
};

/** The dtype of each numpy kind and size sciobench reads (`b1`, numpy's bool, as uint8). */
const DTYPE_OF: Readonly<Record<string, DType>> = {
  b1: "uint8",
  u1: "uint8",
  u2: "uint16",
  u4: "uint32",
  u8: "uint64",
  i1: "int8",
  i2: "int16",
  i4: "int32",
  i8: "int64",
  f4: "float32",
  f8: "float64",
};

/** The `.zarray` dtype of `dtype` in byte order `order` (`<f4`, `>i8`, `|u1`). */
export function typestrOf(dtype: DType, order: ByteOrder): string {
  const t = TYPESTR[dtype];
  return DTYPE_SIZE[dtype] === 1 ? `|${t}` : `${order === "little" ? "<" : ">"}${t}`;
}

/** The fill value zarr-python writes for a new array of `dtype` (0, or 0.0 for floats). */
export function defaultFill(dtype: DType): PyJson {
  return dtype.startsWith("float") ? new PyFloat(0) : 0;
}

/** What is checked while reading one metadata file: its name in messages. */
export class MetadataReader {
  /** `store/member` as messages name it. */
  readonly where: string;
  constructor(where: string) {
    this.where = where;
  }

  /** FormatError naming the file. */
  fail(problem: string): never {
    throw new FormatError("zarr", this.where, -1, problem);
  }

  /** The JSON object in `bytes`; FormatError when it is not UTF-8 JSON holding an object. */
  object(bytes: Uint8Array): Record<string, unknown> {
    let value: unknown;
    try {
      value = JSON.parse(new TextDecoder("utf-8", { fatal: true }).decode(bytes));
    } catch (e) {
      this.fail(`not JSON: ${e instanceof Error ? e.message : String(e)}`);
    }
    if (value === null || typeof value !== "object" || Array.isArray(value)) {
      this.fail("not a JSON object");
    }
    return value as Record<string, unknown>;
  }

  /** Checks `zarr_format` is 2. */
  format(meta: Record<string, unknown>): void {
    const f = meta.zarr_format;
    if (f === 3) this.fail("zarr_format 3 in a Zarr v2 metadata file");
    if (f !== 2) this.fail(`zarr_format ${JSON.stringify(f)}, expected 2`);
  }

  /** A list of 1..MAX_RANK integers from `min` up (`key` names it in messages). */
  dims(value: unknown, key: string, min: number): number[] {
    if (!Array.isArray(value) || value.length === 0 || value.length > MAX_RANK) {
      this.fail(`${key} ${short(value)} is not a list of 1 to ${MAX_RANK} integers`);
    }
    for (const d of value) {
      if (!Number.isSafeInteger(d) || (d as number) < min) {
        this.fail(`${key} ${short(value)} holds ${short(d)}, not an integer from ${min} up`);
      }
    }
    return value as number[];
  }

  /**
   * Checks an array of `shape` and `chunks` (same rank) of `dtype` fits: its bytes a safe
   * integer, a chunk at most {@link MAX_CHUNK_BYTES} bytes.
   */
  sizes(shape: readonly number[], chunks: readonly number[], dtype: DType, typestr: string): void {
    let elements = 1;
    for (const d of shape) elements *= d;
    if (!Number.isSafeInteger(elements * DTYPE_SIZE[dtype])) {
      this.fail(`shape ${short(shape)} holds more bytes than a store can (2^53)`);
    }
    let chunkBytes = DTYPE_SIZE[dtype];
    for (const d of chunks) chunkBytes *= d;
    if (chunkBytes > MAX_CHUNK_BYTES) {
      this.fail(
        `chunks ${short(chunks)} of ${typestr} are ${chunkBytes} bytes each, more than the ` +
          `${MAX_CHUNK_BYTES} sciobench reads in one piece`,
      );
    }
  }

  /** The array at `path` its `.zarray` object `meta` describes, checked. */
  array(path: string, meta: Record<string, unknown>): ZarrArray {
    this.format(meta);
    const shape = this.dims(meta.shape, "shape", 0);
    const chunks = this.dims(meta.chunks, "chunks", 1);
    if (chunks.length !== shape.length) {
      this.fail(`chunks ${short(chunks)} and shape ${short(shape)} differ in rank`);
    }
    const { dtype, typestr, order } = this.#dtype(meta.dtype);
    this.sizes(shape, chunks, dtype, typestr);
    if (meta.order !== "C") {
      this.fail(`order ${short(meta.order)}: sciobench reads C-order arrays only`);
    }
    if (meta.filters !== null && meta.filters !== undefined) {
      if (!Array.isArray(meta.filters) || meta.filters.length > 0) {
        this.fail(`filters ${short(meta.filters)}: sciobench reads arrays without filters only`);
      }
    }
    const separator = meta.dimension_separator ?? ".";
    if (separator !== "." && separator !== "/") {
      this.fail(`dimension_separator ${short(separator)}, expected "." or "/"`);
    }
    return {
      path,
      shape,
      chunks,
      dtype,
      typestr,
      order,
      fill: this.fill(meta.fill_value, dtype, typestr, order),
      fillValue: meta.fill_value,
      compressor: this.#compressor(meta.compressor),
      separator,
      format: 2,
      encoding: "v2",
      crc32c: false,
      shard: null,
    };
  }

  /** The dtype of a `.zarray`'s `dtype` field. */
  #dtype(value: unknown): { dtype: DType; typestr: string; order: ByteOrder } {
    const m = typeof value === "string" ? /^([<>|])([biuf]\d+)$/.exec(value) : null;
    const dtype = m ? DTYPE_OF[m[2]!] : undefined;
    if (!m || dtype === undefined) {
      this.fail(
        `dtype ${short(value)} is not one sciobench reads (b1, i1-i8, u1-u8, f4, f8 with a ` +
          `byte order <, > or |)`,
      );
    }
    const one = DTYPE_SIZE[dtype] === 1;
    if (one !== (m[1] === "|")) {
      this.fail(`dtype ${short(value)}: '|' is the byte order of 1-byte types, and only of those`);
    }
    const order: ByteOrder = one ? NATIVE_ORDER : m[1] === "<" ? "little" : "big";
    return { dtype, typestr: value as string, order };
  }

  /** One element of `fill_value` in the stored order (null: none). */
  fill(value: unknown, dtype: DType, typestr: string, order: ByteOrder): Uint8Array | null {
    if (value === null || value === undefined) return null;
    const out = new Uint8Array(DTYPE_SIZE[dtype]);
    const view = new DataView(out.buffer);
    const little = order === "little";
    let x: number;
    if (typeof value === "boolean") x = value ? 1 : 0;
    else if (typeof value === "number") x = value;
    else if (dtype.startsWith("float") && typeof value === "string") {
      const special: Record<string, number> = {
        NaN: NaN,
        Infinity: Infinity,
        "-Infinity": -Infinity,
      };
      if (!(value in special)) this.fail(`fill_value ${short(value)} is not a value of ${typestr}`);
      x = special[value]!;
    } else this.fail(`fill_value ${short(value)} is not a value of ${typestr}`);
    if (dtype === "float32") view.setFloat32(0, x, little);
    else if (dtype === "float64") view.setFloat64(0, x, little);
    else {
      if (!Number.isInteger(x)) this.fail(`fill_value ${short(value)} is not an integer`);
      const n = BigInt(x);
      if (dtype === "int64") view.setBigInt64(0, n, little);
      else if (dtype === "uint64") view.setBigUint64(0, BigInt.asUintN(64, n), little);
      else {
        // the low bytes of the two's complement, in order: what numpy makes of the value
        const low = BigInt.asUintN(64, n);
        const size = out.length;
        for (let i = 0; i < size; i++) {
          out[little ? i : size - 1 - i] = Number((low >> BigInt(8 * i)) & 0xffn);
        }
      }
    }
    return out;
  }

  /** The compressor of a `.zarray` (null or numcodecs' zlib or gzip). */
  #compressor(value: unknown): ZarrArray["compressor"] {
    if (value === null || value === undefined) return null;
    if (typeof value !== "object" || Array.isArray(value)) {
      this.fail(`compressor ${short(value)} is not an object or null`);
    }
    const c = value as Record<string, unknown>;
    if (!ZARR_CODECS.includes(c.id as ZarrCodec)) {
      this.fail(
        `compressor ${short(c.id)} is not one sciobench reads (${ZARR_CODECS.join(", ")} or none)`,
      );
    }
    const level = typeof c.level === "number" ? c.level : undefined;
    return { id: c.id as ZarrCodec, ...(level !== undefined ? { level } : {}) };
  }
}

/** `value` as JSON, cut to 48 characters, for messages. */
export function short(value: unknown): string {
  let text: string;
  try {
    text = JSON.stringify(value) ?? String(value);
  } catch {
    text = String(value);
  }
  return text.length > 48 ? `${text.slice(0, 45)}...` : text;
}

/**
 * The parts of an array or group path (`particles/position`), or undefined when it is not one a
 * store can hold: empty parts, `.` or `..`, parts starting with `.` (reserved for metadata keys),
 * NUL.
 */
export function pathParts(path: string): string[] | undefined {
  if (path === "") return [];
  const parts = path.split("/");
  return parts.every((p) => p !== "" && !p.startsWith(".") && !p.includes("\0"))
    ? parts
    : undefined;
}

/** The key of the chunk at `index` (one number per dimension) of `array`. */
export function chunkKey(array: ZarrArray, index: readonly number[]): string {
  const parts = array.encoding === "default" ? ["c", ...index] : index;
  const key = parts.join(array.separator);
  return array.path === "" ? key : `${array.path}/${key}`;
}
