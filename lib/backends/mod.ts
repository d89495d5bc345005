/**
 * Backends (`sciobench/backends`): the contract every backend implements (native framings run by
 * the engine, and peers) with the capabilities it declares and their readers, the guard, the
 * engine, the write loop, and the one registry with detection by declared magic numbers. Backends
 * from the registry ({@link backendByName}) run behind the guard.
 *
 * ```ts
 * import { backendByName, BACKENDS } from "./mod.ts";
 *
 * console.log(backendByName("gsd").kind, BACKENDS.some((b) => b.kind === "peer")); // native true
 * ```
 * @module
 */
export type {
  Backend,
  Capabilities,
  CreateMode,
  DatasetLimit,
  DTypeLimit,
  FrameSink,
  FrameSource,
  LibraryInfo,
  Limits,
  ReadChunk,
  SinkOptions,
  SourceOptions,
  StoredChunk,
  TableCell,
} from "./backend.ts";
export {
  checkSharedLayout,
  exceededDatasetLimit,
  libraryName,
  recordFileBytes,
  refuseUnstorable,
  unstorableReason,
} from "./capabilities.ts";
export { nativeBackend } from "./engine.ts";
export { checkTransfer, engineBackend } from "./guard.ts";
export { type FrameHook, writeFrames } from "./write.ts";
export {
  backendByName,
  BACKENDS,
  detectBackend,
  detectFormat,
  FRAMINGS,
  registerBackend,
  unregisterBackend,
  usableBackend,
} from "./registry.ts";
