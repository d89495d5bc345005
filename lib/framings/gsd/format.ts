/**
 * GSD file layer constants shared by the writer and the reader: magic, header and entry sizes,
 * type codes, version packing.
 * @module
 */
import { VERSION } from "../../core/version.ts";
import { type DType, DTYPES } from "../types.ts";

/** The 8 bytes a GSD file starts with (u64 0x65DF65DF65DF65DF, little-endian). */
export const GSD_MAGIC: Uint8Array = new Uint8Array([
  0xdf,
  0x65,
  0xdf,
  0x65,
  0xdf,
  0x65,
  0xdf,
  0x65,
]);

/** Size of gsd 2.7's write buffer, bytes; chunks of half of it or more bypass it. */
export const GSD_WRITE_BUFFER_BYTES = 16 * 1024 * 1024;

/** Application string our writer stores unless told otherwise. */
export const GSD_DEFAULT_APPLICATION = `sciobench ${VERSION}`;

/** The framing name, used in errors. */
export const FORMAT = "gsd";
/** Size of the file header, bytes. */
export const HEADER_BYTES = 256;
/** Size of one index entry, bytes. */
export const ENTRY_BYTES = 32;
/** Name width of 1.x files and the 2.x namelist growth step, bytes. */
export const NAME_SEGMENT = 64;
/** Index entries allocated in a new file. */
export const FRESH_INDEX_SLOTS = 128;
/** Name list bytes allocated in a new file. */
export const FRESH_NAMELIST_BYTES = 1024;
/** Chunks at least this large bypass the write buffer, bytes. */
export const DIRECT_BYTES = GSD_WRITE_BUFFER_BYTES / 2;
/** Most distinct chunk names a file can hold. */
export const MAX_NAMES = 65535;
/** 2^32, for u64 fields split in two u32 halves. */
export const TWO32 = 4294967296;
/** Used index entries up to this size are read into memory; more are mapped where possible. */
export const GSD_WHOLE_INDEX_BYTES = 1024 * 1024;
/** Bytes read first on open: a fresh file's header, first index block and name list. */
export const HEAD_BYTES = HEADER_BYTES + FRESH_INDEX_SLOTS * ENTRY_BYTES + FRESH_NAMELIST_BYTES;

/** Packs a version as GSD stores it: (major << 16) | minor. */
export function packVersion(major: number, minor: number): number {
  return ((major << 16) | minor) >>> 0;
}

/** `major.minor` of a packed version. */
export function versionString(v: number): string {
  return `${v >>> 16}.${v & 0xffff}`;
}

/** GSD type code of each element type (char, 11, needs file layer 2.1). */
export const GSD_TYPE_CODE: Readonly<Record<DType, number>> = {
  uint8: 1,
  uint16: 2,
  uint32: 3,
  uint64: 4,
  int8: 5,
  int16: 6,
  int32: 7,
  int64: 8,
  float32: 9,
  float64: 10,
  char: 11,
};

/** Element size in bytes by GSD type code (0 for codes that are not types). */
export const TYPE_BYTES = new Float64Array([0, 1, 2, 4, 8, 1, 2, 4, 8, 4, 8, 1]);

/** DType of each GSD type code; code 0 is not a type. */
export const CODE_DTYPE: readonly (DType | undefined)[] = [undefined, ...DTYPES];

/** UTF-8 encoder for names. */
export const enc: TextEncoder = new TextEncoder();
