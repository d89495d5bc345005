/**
 * sciobench as a library: record framings (pure encode/decode), the I/O engine and backends,
 * cache control, phase measurement, and the workloads that reproduce the seed benchmarks.
 *
 * ```ts
 * import { backendByName, runTable, Progress } from "./mod.ts";
 * await runTable({
 *   backends: [backendByName("raw")], sizes: [16 << 20], ns: [1024], repeat: 1, seed: 1,
 *   warmup: false, progress: new Progress({ quiet: true }),
 * }, (row) => console.log(row));
 * ```
 * @module
 */
export * from "./lib/errors.ts";
export * from "./lib/version.ts";
export * from "./lib/framings/types.ts";
export { raw, RAW_MAGIC } from "./lib/framings/raw.ts";
export * from "./lib/bytes/byteswap.ts";
export * from "./lib/backends/backend.ts";
export * from "./lib/io/file.ts";
export * from "./lib/backends/engine.ts";
export * from "./lib/backends/registry.ts";
export * from "./lib/io/cache.ts";
export * from "./lib/io/memory.ts";
export * from "./lib/io/scratch.ts";
export * from "./lib/sys/meter.ts";
export * from "./lib/report/output.ts";
export * from "./lib/report/progress.ts";
export * from "./lib/report/rst.ts";
export * from "./lib/workloads/pattern.ts";
export * from "./lib/workloads/table.ts";
export { runCli } from "./lib/cli/main.ts";
export * from "./lib/backends/write.ts";
