/**
 * sciobench as a library: the backends that store frames in files (native framings, pure
 * encode/decode run by the engine; peers, C libraries through FFI and programs), their
 * registry and declared options, and the workloads that reproduce the seed benchmarks, each a
 * function that takes typed options and returns rows (the CSV columns of the matching command).
 *
 * Words: a *framing* is a native encoder/decoder, a *peer* a library or program doing the same
 * job, a *backend* anything `--framing` names.
 *
 * Runs from anywhere with the permissions of the CLI (`--allow-all`: files under /dev, such as
 * node-local /dev/shm, need it), importing this file by path or URL:
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
} from "./lib/core/errors.ts";
export { VERSION } from "./lib/core/version.ts";

// ---- the subpaths: sciobench/framings, /peers, /backends, /workloads (deno.json `exports`) -----
export * from "./lib/framings/mod.ts";
export * from "./lib/peers/mod.ts";
export * from "./lib/backends/mod.ts";
export * from "./lib/workloads/mod.ts";

// ---- the command line ------------------------------------------------------------------------
export { runCli } from "./lib/cli/main.ts";
