/**
 * Backends (`sciobench/backends`): the contract every backend implements (native framings run by
 * the engine, and peers), the engine, the write loop, and the one registry with detection by
 * declared magic numbers. Backends from the registry ({@link backendByName}) read through the
 * engine's frame-range check.
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
  CreateMode,
  FrameSink,
  FrameSource,
  ReadChunk,
  SinkOptions,
  SourceOptions,
  StoredChunk,
  TableCell,
} from "./backend.ts";
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
