/**
 * The native framings and their contract (`sciobench/framings`): the six pure encoders/decoders
 * (raw, gsd, f77, ieeeio, netcdf, and zarr, whose files are stores: directories of member files;
 * zarr-v3 is zarr writing v3 shards by default), the Framing interface and its types, the declared options and their one validator, and an
 * in-memory file and store to encode into and decode from. No file I/O: the
 * engine (`sciobench/backends`) runs a framing against files.
 *
 * ```ts
 * import { MemoryFile, memorySource, raw } from "./mod.ts";
 *
 * const file = new MemoryFile();
 * const writer = raw.createWriter();
 * file.apply(writer.begin());
 * const data = new Float32Array([1, 2, 3]);
 * file.apply(writer.writeFrame({ step: 0, chunks: [{ name: "x", dtype: "float32", shape: [3], data }] }));
 * file.apply(writer.finish());
 * console.log(raw.openIndex(memorySource(file.bytes())).frameCount); // 1
 * ```
 * @module
 */
export type {
  ByteOrder,
  ByteSource,
  Chunk,
  ChunkLayout,
  ChunkRef,
  DType,
  EndianOption,
  Frame,
  FrameIndex,
  FrameWriter,
  Framing,
  MagicNumber,
  OptionSpec,
  OptionType,
  OptionValue,
  ReaderOptions,
  StoredVariable,
  StoreFraming,
  StoreMembers,
  TypedArray,
  Workload,
  WriteOp,
  WriterOptions,
} from "./types.ts";
export { DTYPE_SIZE, DTYPES, matchesMagic, typedArray } from "./types.ts";
export { checkOptions, type OptionValues, parseOptionArgs } from "./options.ts";
export { MemoryFile, memorySource, MemoryStore } from "../io/memory.ts";
export { raw } from "./raw.ts";
export { gsd } from "./gsd/mod.ts";
export { f77 } from "./f77/mod.ts";
export { ieeeio } from "./ieeeio/mod.ts";
export { netcdf } from "./netcdf/mod.ts";
export { zarr, zarrV3 } from "./zarr/mod.ts";
