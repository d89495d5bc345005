/**
 * IEEEIO's byte-level vocabulary, shared by the writer and the reader: the header and record
 * sizes, the record type codes, the twelve number types (names, element sizes, the DType each
 * writes and reads as), and the shapes of what the writer takes and the reader reports.
 * @module
 */
import { UsageError } from "../../core/errors.ts";
import type {
  ByteOrder,
  Chunk,
  DType,
  FrameIndex,
  FrameWriter,
  TypedArray,
  WriteOp,
} from "../types.ts";

/** The framing's name, as `--framing` and error messages say it. */
export const FORMAT = "ieeeio";

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
export const TYPE_SIZE = [1, 2, 4, 8, 4, 8, 1, 2, 4, 8, 1, 2] as const;
/** The type code each DType is written as. */
export const DTYPE_CODE: Readonly<Record<DType, number>> = {
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
export const TYPE_DTYPE: readonly DType[] = [
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
