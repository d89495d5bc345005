/**
 * Driver of tests/full_disk_test.ts: writes `Deno.args[1]` (netcdf4 or hdf5) frames in-process
 * to `Deno.args[0]` until the disk is full, and prints the error's class and message as JSON. Run
 * as a process of its own: a library that failed keeps handles (and its removed file) open until
 * the process exits, which must not reach the other tests' handle counts.
 */
import { backendByName } from "../lib/backends/registry.ts";
import type { Frame } from "../lib/framings/types.ts";

const [path, name] = Deno.args as [string, string];
const n = 4096;
const frame: Frame = {
  step: 0,
  chunks: [{
    name: "particles/position",
    dtype: "float32",
    shape: [n, 3],
    data: new Float32Array(3 * n).fill(1),
  }],
};
let error: unknown;
try {
  const sink = backendByName(name).openWriter(path, { create: "new", fsync: "end" });
  try {
    for (let i = 0; i < 10; i++) sink.writeFrame({ ...frame, step: i });
    sink.close();
  } catch (e) {
    sink.abort();
    throw e;
  }
} catch (e) {
  error = e;
}
console.log(JSON.stringify({
  kind: error instanceof Error ? error.name : typeof error,
  message: error instanceof Error ? error.message : String(error),
}));
