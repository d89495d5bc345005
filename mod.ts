/**
 * sciobench as a library: the backends that store frames in files (native framings, pure
 * encode/decode run by the engine; peers, C libraries through FFI and programs), their
 * registry and declared options, and the workloads that reproduce the seed benchmarks, each a
 * function that takes typed options and returns rows (the CSV columns of the matching command).
 *
 * Words: a *framing* is a native encoder/decoder, a *peer* a library or program doing the same
 * job, a *backend* anything `--framing` names.
 *
 * Runs from anywhere with the permissions of the CLI (`--allow-ffi --allow-read --allow-write
 * --allow-env --allow-run --allow-sys`), importing this file by path or URL:
 *
 * ```ts
 * import { backendByName, Progress, runTable } from "./mod.ts";
 *
 * const rows = await runTable({
 *   backends: [backendByName("raw"), backendByName("gsd")],
 *   sizes: [1 << 20],
 *   ns: [1024],
 *   repeat: 1,
 *   seed: 1,
 *   warmup: false,
 *   progress: new Progress({ quiet: true }),
 * });
 * for (const row of rows) console.log(row.framing, row.write_MiBps, row.read_MiBps);
 * ```
 *
 * A framing alone encodes and decodes in memory, no files involved:
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
 * const index = raw.openIndex(memorySource(file.bytes()));
 * console.log(index.frameCount, index.chunks(0)[0]?.bytes); // 1 12
 * ```
 * @module
 */

// ---- errors and version ----------------------------------------------------------------------
export {
  FormatError,
  IoError,
  PeerUnavailableError,
  SciobenchError,
  ShortReadError,
  SysError,
  UsageError,
  VerifyError,
} from "./lib/errors.ts";
export { VERSION } from "./lib/version.ts";

// ---- the framing contract and its types ------------------------------------------------------
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
  TypedArray,
  Workload,
  WriteOp,
  WriterOptions,
} from "./lib/framings/types.ts";
export { DTYPE_SIZE, DTYPES, matchesMagic, typedArray } from "./lib/framings/types.ts";
export { checkOptions, type OptionValues, parseOptionArgs } from "./lib/framings/options.ts";
export { MemoryFile, memorySource } from "./lib/io/memory.ts";

// ---- the native framings ---------------------------------------------------------------------
export { raw } from "./lib/framings/raw.ts";
export { gsd } from "./lib/framings/gsd/mod.ts";
export { f77 } from "./lib/framings/f77.ts";
export { ieeeio } from "./lib/framings/ieeeio.ts";
export { netcdf } from "./lib/framings/netcdf/mod.ts";

// ---- the peers -------------------------------------------------------------------------------
export { hdf5 } from "./lib/peers/hdf5/mod.ts";
export { netcdf4, netcdfLib } from "./lib/peers/netcdf4.ts";
export { hdf4 } from "./lib/peers/hdf4.ts";
export { pythonGsd, pythonGsdFl } from "./lib/peers/python_gsd.ts";

// ---- backends: the contract, the engine, the registry ----------------------------------------
export type {
  Backend,
  CreateMode,
  FrameSink,
  FrameSource,
  ReadChunk,
  SinkOptions,
  SourceOptions,
  TableCell,
} from "./lib/backends/backend.ts";
export { nativeBackend } from "./lib/backends/engine.ts";
export { type FrameHook, writeFrames } from "./lib/backends/write.ts";
export {
  backendByName,
  BACKENDS,
  detectBackend,
  detectFormat,
  FRAMINGS,
  registerBackend,
  unregisterBackend,
  usableBackend,
} from "./lib/backends/registry.ts";

// ---- workloads: typed options in, rows out ---------------------------------------------------
export { runTable, TABLE_COLUMNS, TableFrames, type TableOptions } from "./lib/workloads/table.ts";
export {
  runScaling,
  SCALING_COLUMNS,
  type ScalingOptions,
  scalingRow,
  type ScalingRun,
} from "./lib/workloads/scaling.ts";
export {
  RECORDS_COLUMNS,
  type RecordsOptions,
  recordsRow,
  type RecordsRun,
  recordsTargets,
  runRecords,
} from "./lib/workloads/records.ts";
export { READERS_COLUMNS, type ReadersOptions, runReaders } from "./lib/workloads/readers.ts";
export type { Row } from "./lib/report/output.ts";
export { Progress } from "./lib/report/progress.ts";

// ---- the command line ------------------------------------------------------------------------
export { runCli } from "./lib/cli/main.ts";
