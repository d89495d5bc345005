/**
 * The interface every record framing implements: pure encoding of frames to positioned byte
 * writes, and pure decoding of a file's layout from bytes handed in by the I/O layer.
 * @module
 */
import type { ByteOrder } from "../bytes/byteswap.ts";
import type { ByteSource, StoreMembers, WriteOp } from "../io/types.ts";

/** Element types a chunk can hold; sizes in bytes are in {@link DTYPE_SIZE}. */
export type DType =
  | "uint8"
  | "uint16"
  | "uint32"
  | "uint64"
  | "int8"
  | "int16"
  | "int32"
  | "int64"
  | "float32"
  | "float64"
  | "char";

/**
 * Every {@link DType}, in the order of GSD's type codes 1..11 (which raw's codes share): the
 * unsigned integers, the signed integers, float32, float64, then char.
 */
export const DTYPES: readonly DType[] = [
  "uint8",
  "uint16",
  "uint32",
  "uint64",
  "int8",
  "int16",
  "int32",
  "int64",
  "float32",
  "float64",
  "char",
];

/** Size in bytes of one element of each {@link DType}. */
export const DTYPE_SIZE: Readonly<Record<DType, number>> = {
  uint8: 1,
  uint16: 2,
  uint32: 4,
  uint64: 8,
  int8: 1,
  int16: 2,
  int32: 4,
  int64: 8,
  float32: 4,
  float64: 8,
  char: 1,
};

/** Every typed array a chunk's data may be held in. */
export type TypedArray =
  | Uint8Array
  | Int8Array
  | Uint16Array
  | Int16Array
  | Uint32Array
  | Int32Array
  | BigUint64Array
  | BigInt64Array
  | Float32Array
  | Float64Array;

/** The typed-array constructor holding each {@link DType} (char as bytes). */
const TYPED_ARRAY: Readonly<
  Record<DType, new (buffer: ArrayBuffer, offset: number, length: number) => TypedArray>
> = {
  uint8: Uint8Array,
  uint16: Uint16Array,
  uint32: Uint32Array,
  uint64: BigUint64Array,
  int8: Int8Array,
  int16: Int16Array,
  int32: Int32Array,
  int64: BigInt64Array,
  float32: Float32Array,
  float64: Float64Array,
  char: Uint8Array,
};

/**
 * A typed array of `dtype` with `length` elements: over `buffer` from byte `offset` when given
 * (no copy; the offset must be aligned to the element size), else newly allocated.
 */
export function typedArray(
  dtype: DType,
  length: number,
  buffer: ArrayBuffer = new ArrayBuffer(length * DTYPE_SIZE[dtype]),
  offset = 0,
): TypedArray {
  return new TYPED_ARRAY[dtype](buffer, offset, length);
}

/** Whether `a` is the kind of typed array that holds `dtype` (char: Uint8Array). */
export function holdsDType(a: ArrayBufferView, dtype: DType): boolean {
  return a instanceof TYPED_ARRAY[dtype];
}

export type { ByteOrder } from "../bytes/byteswap.ts";
export type { ByteSource, StoreMembers, WriteOp } from "../io/types.ts";

/** Byte order requested on the command line: `native` is the machine's (little on x86-64). */
export type EndianOption = ByteOrder | "native";

/** One named array of a frame; `data` is in the machine's native byte order. */
export interface Chunk {
  /** Name such as `particles/position`; formats without names use generated names. */
  readonly name: string;
  /** Element type. */
  readonly dtype: DType;
  /** Shape, slowest dimension first (C order); the product is the element count. */
  readonly shape: readonly number[];
  /** The elements, native byte order; `data.byteLength` = product(shape) x element size. */
  readonly data: TypedArray;
}

/** One frame (record, dataset, time step): a step number and its chunks in write order. */
export interface Frame {
  /** Simulation step of the frame (the table workload uses 10 x frame index). */
  readonly step: number;
  /** Chunks in the order they are written. */
  readonly chunks: readonly Chunk[];
}

/**
 * Encodes frames into positioned writes. The I/O layer applies the ops in order;
 * `data` arrays may alias the caller's chunk data or a scratch buffer reused on the next call.
 */
export interface FrameWriter {
  /** Ops that create the file (header, empty index): call once, first. */
  begin(): WriteOp[];
  /** Ops that append one frame (and update headers or indexes in place). */
  writeFrame(frame: Frame): WriteOp[];
  /** Ops that complete the file (trailer, final header rewrite): call once, last. */
  finish(): WriteOp[];
}

/** Where a chunk of a frame is stored, as found by a decoder. */
export interface ChunkRef {
  /** Chunk name (generated names such as `record/3` for unnamed formats). */
  readonly name: string;
  /** Element type. */
  readonly dtype: DType;
  /** Shape, slowest dimension first. */
  readonly shape: readonly number[];
  /** Absolute byte offset of the first data byte. */
  readonly offset: number;
  /** Stored data size in bytes (without markers or headers). */
  readonly bytes: number;
  /** Byte order of the stored elements. */
  readonly order: ByteOrder;
  /**
   * Set when the data is not contiguous (Fortran subrecords): [offset, length] pieces in order,
   * whose lengths add up to `bytes`. `offset` is then the first piece's offset.
   */
  readonly pieces?: readonly (readonly [number, number])[];
  /**
   * Set for a chunk of a store (Framing.store): the member file that holds it (relative to the
   * store's root); `offset` is then a byte offset in that file.
   */
  readonly member?: string;
  /**
   * Set when the member's bytes are encoded (`zlib`, `gzip`): the whole member file is read and
   * {@link FrameIndex.decodeChunk} makes the chunk's `bytes` bytes of elements from it.
   */
  readonly codec?: string;
  /**
   * Set with `codec` when the encoded bytes are a range of the member (an inner chunk of a
   * shard): their length from `offset`, which is all that is read; 0 when nothing is stored (the
   * chunk is the fill value). Unset: the whole member is read.
   */
  readonly storedBytes?: number;
}

/** A whole stored array (a netCDF variable): its name, type and the byte pieces that hold it. */
export interface StoredVariable {
  /** Variable name. */
  readonly name: string;
  /** Element type. */
  readonly dtype: DType;
  /** [offset, length] pieces in storage order; lengths exclude padding. */
  readonly pieces: readonly (readonly [number, number])[];
}

/** The decoded layout of a file: frame count and where each frame's chunks are. */
export interface FrameIndex {
  /** Registry name of the framing that decoded the file. */
  readonly framing: string;
  /** Number of complete frames. */
  readonly frameCount: number;
  /**
   * Chunks of frame `frame` (0-based) in storage order; `frame` is in [0, frameCount) (the engine
   * checks the range before it asks, lib/backends/engine.ts).
   */
  chunks(frame: number): readonly ChunkRef[];
  /** Step number of a frame when the format stores one. */
  step?(frame: number): number | undefined;
  /** Format-specific facts for `sciobench info` (dimensions, attributes, versions). */
  describe?(): Record<string, unknown>;
  /**
   * Whole stored arrays that span frames (netCDF variables), each as [offset, length] pieces in
   * order, so `info` can give one CRC-32 per variable; made one at a time as they are iterated
   * (a file of a million variables holds no list of them).
   */
  variables?(): Iterable<StoredVariable>;
  /**
   * For a store's chunks: the chunk `ref`'s elements, in its stored byte order, written into
   * `into` (`ref.bytes` bytes) from `stored`, the whole content of its member file (decoded by
   * its `codec`), or with `stored` undefined when the member does not exist, the format's fill
   * value. FormatError when the bytes do not decode to the chunk.
   */
  decodeChunk?(ref: ChunkRef, stored: Uint8Array | undefined, into: Uint8Array): void;
  /** Notes for stderr, such as a recovered dataset count. */
  readonly warnings?: readonly string[];
  /**
   * Departures from the format specification that the format's own library reads anyway (such
   * as non-NUL header padding), each naming its byte offset: `info --strict` reports them.
   */
  readonly departures?: readonly string[];
  /**
   * True when data past the end of the file reads as zeros rather than an error (netCDF classic:
   * data never written, as libnetcdf reads it).
   */
  readonly pastEndReadsZero?: boolean;
  /**
   * Largest gap (bytes) between a frame's chunks that a reader reads through in one request
   * rather than read the chunks apart; absent: 1 MiB. An index whose frames' chunks lie among
   * other frames' data (HDF5's chunks, allocated dataset by dataset) sets a small one.
   */
  readonly readGap?: number;
  /**
   * The byte order every chunk of the file is stored in, when the format fixes one for the whole
   * file at open (netCDF classic: big; raw: its header's flag); absent when chunks may differ.
   */
  readonly order?: ByteOrder;
}

/** Options a framing's writer understands; each framing documents which it honours. */
export interface WriterOptions {
  /** Byte order of the data on disk (framings that allow a choice). */
  readonly endian?: EndianOption;
  /**
   * The consumer applies `copy` write ops (the engine and MemoryFile do; a shared MPI file does
   * not), so the writer may leave in the file what it would otherwise keep in memory.
   */
  readonly fileCopies?: boolean;
  /**
   * A copy of `data` that the writer keeps across frames (gsd's HOOMD reference: frame 0's
   * chunks); default `data.slice()`. The engine's copies of a MiB and more reuse the process's
   * spare buffers, or new huge pages (lib/io/buffers.ts), and go back to the spares at close.
   */
  readonly keepCopy?: <T extends TypedArray>(data: T) => T;
  /** Framing-specific settings (marker width, variant, subrecord limit ...). */
  readonly [key: string]: unknown;
}

/** The expected name, type and shape of one chunk of every frame. */
export interface ChunkLayout {
  /** Chunk name. */
  readonly name: string;
  /** Element type. */
  readonly dtype: DType;
  /** Shape, slowest dimension first. */
  readonly shape: readonly number[];
}

/** Options a framing's decoder understands. */
export interface ReaderOptions {
  /**
   * What each frame holds, when the caller knows (a workload reading its own file). Formats that
   * store no names or types (Fortran records) use it to group records into frames and to type them.
   */
  readonly layout?: readonly ChunkLayout[];
  /** Byte order to expect, for formats that cannot tell (default: detected or the file's). */
  readonly endian?: EndianOption;
  /** Framing-specific settings. */
  readonly [key: string]: unknown;
}

/** Bytes a file of a format holds at one of `offsets` (default: at byte 0). */
export interface MagicNumber {
  /** The bytes. */
  readonly bytes: readonly number[];
  /** Byte offsets where they may stand (HDF5's signature may be at 0, 512, 1024 ...). */
  readonly offsets?: readonly number[];
}

/** True when `head` holds one of `magic` at one of its offsets. */
export function matchesMagic(magic: readonly MagicNumber[], head: Uint8Array): boolean {
  return magic.some((m) =>
    (m.offsets ?? [0]).some((at) =>
      at + m.bytes.length <= head.length && m.bytes.every((b, i) => head[at + i] === b)
    )
  );
}

/** The commands that use backends; an option declares which of them honour it. */
export type Workload = "table" | "scaling" | "readers" | "records" | "write" | "read" | "info";

/** A value of a backend option once parsed: by its declared {@link OptionType}. */
export type OptionValue = string | number | boolean | readonly string[];

/**
 * The type of a backend option: `integer`, `boolean` (true/false), `string`, `list` (comma
 * separated strings), or `value` (any value, given only through the library API, not `--option`).
 */
export type OptionType = "integer" | "boolean" | "string" | "list" | "value";

/** One option a backend declares (as fio's engines declare theirs): the schema `--option` is checked against. */
export interface OptionSpec {
  /** Key, as in `--option KEY=VALUE`. */
  readonly name: string;
  /** How the value is parsed and checked. */
  readonly type: OptionType;
  /**
   * The value used when the option is not given (omitted when it depends on other options). The
   * guard hands writers of new files these defaults filled in; readers and appends take what they
   * are not told from the file where it tells (f77's marker is detected), else this.
   */
  readonly default?: OptionValue;
  /** The only values allowed, when the option is an enumeration. */
  readonly choices?: readonly (string | number)[];
  /** Smallest allowed value of an `integer` option. */
  readonly min?: number;
  /** Largest allowed value of an `integer` option. */
  readonly max?: number;
  /**
   * A rule the value must follow besides its type (a `string` option's grammar, such as a netCDF
   * name): what is wrong with `value` in a few words, or undefined when it is allowed.
   */
  readonly rule?: (value: OptionValue) => string | undefined;
  /** One line for `--help` and `sciobench framings`. */
  readonly help: string;
  /** The commands whose runs honour it (others refuse it rather than ignore it). */
  readonly workloads: readonly Workload[];
}

/**
 * The workloads that write files with the options given by `--option` (table and scaling run
 * every backend with its defaults and take no `--option`).
 */
export const WRITING_WORKLOADS: readonly Workload[] = ["readers", "records", "write"];

/** Every workload that takes `--option`: the writing ones, `read` and `info`. */
export const ALL_WORKLOADS: readonly Workload[] = [...WRITING_WORKLOADS, "read", "info"];

/**
 * How a framing whose files are directories of member files (stores, such as Zarr's) is found
 * and decoded. Its writer's ops name the member each write is the whole content of
 * (WriteOp.member); its decoder reads members by name.
 */
export interface StoreFraming {
  /** Member names whose presence in a directory shows it is a store of this framing (detection). */
  readonly markers: readonly string[];
  /** Decodes and validates the layout of the store `store` reads; FormatError on malformed input. */
  openStore(store: StoreMembers, options?: ReaderOptions): FrameIndex;
  /**
   * An encoder that continues the existing store `store` reads, keeping its settings: its frames'
   * chunks are new member files, its `finish()` the metadata that makes them visible (each member
   * the sink replaces atomically). UsageError when the store is not one it can continue as it
   * was written. Absent when the format cannot append.
   */
  appendWriter?(store: StoreMembers, options?: WriterOptions): FrameWriter;
  /**
   * Members of `store` (files or directories) that its metadata does not reach, as an append
   * interrupted before its metadata leaves them: removed when that append is rolled back.
   */
  strays?(store: StoreMembers): string[];
}

/** A record framing: one file (or folder) per format in lib/framings, registered in lib/backends/registry.ts. */
export interface Framing {
  /** Registry name (`raw`, `gsd`, `f77`, `ieeeio`, `netcdf`). */
  readonly name: string;
  /** One line for `--help` and `info`. */
  readonly description: string;
  /** Byte orders the writer can produce. */
  readonly orders: readonly ByteOrder[];
  /** The options its writer and reader take (besides `endian` and `layout`). */
  readonly options: readonly OptionSpec[];
  /** Magic numbers a file of this format holds; detection matches them first (empty: none). */
  readonly magic: readonly MagicNumber[];
  /**
   * Set when its files are stores (directories of member files): how a directory is recognised
   * as one and decoded. The engine then writes and reads members, one file each, and a file's
   * size, cache drop and removal cover every file of the store.
   */
  readonly store?: StoreFraming;
  /**
   * True when its layout follows from the frame sizes alone, so MPI ranks can write one file
   * together (`--layout shared`), each computing the same positioned writes.
   */
  readonly sharedLayout: boolean;
  /**
   * Bytes a record of `payloadBytes` takes in its files, written with `options`: the payload plus
   * the format's framing of it (f77: two record markers). Absent: the payload alone.
   */
  recordBytes?(payloadBytes: number, options: WriterOptions): number;
  /**
   * For a format with magic numbers: a further check once one matched (a byte-order mark, the
   * file size). Without magic numbers: the whole check, a heuristic tried only when no backend's
   * magic number matched (Fortran records). `head` is the first bytes of the file (up to 4096).
   */
  detect?(head: Uint8Array, fileSize: number): boolean;
  /** A new encoder for a file written from scratch. */
  createWriter(options?: WriterOptions): FrameWriter;
  /**
   * An encoder that continues the existing file read through `source`, keeping its byte order
   * and settings: `begin()` gives the ops that reopen it (e.g. mark a header as open),
   * `writeFrame` appends, `finish()` completes it. Absent when the format cannot append.
   * Throws UsageError when `options` contradict the file (another byte order).
   */
  appendWriter?(source: ByteSource, options?: WriterOptions): FrameWriter;
  /** Decodes and validates the layout of an existing file; throws FormatError on malformed input. */
  openIndex(source: ByteSource, options?: ReaderOptions): FrameIndex;
}
