/**
 * A new writer's first three frames at N = 1024^2 (28 MiB each) through the engine into a file
 * (page cache, `fsync: "none"`), gsd against raw. gsd keeps frame 0's chunks as its HOOMD
 * reference (gsd.hoomd 2.7 `append` compares later frames with frame 0); the copy is made inside
 * the timed write, so its first touch is part of the write phase: 7,168 page faults of 4 KiB, or
 * 14 of 2 MiB with the engine's huge-page copy (WriterOptions.keepCopy). raw keeps nothing.
 *
 *     deno bench --allow-all bench/gsd_first_frame_bench.ts
 * @module
 */
import { backendByName } from "../lib/backends/registry.ts";
import { TableFrames } from "../lib/workloads/table/mod.ts";

const n = 1024 * 1024;
const frames = new TableFrames(n, 1);
const dir = Deno.makeTempDirSync({ prefix: "sciobench-bench-" });
globalThis.addEventListener("unload", () => Deno.removeSync(dir, { recursive: true }));

for (const name of ["raw", "gsd"]) {
  const backend = backendByName(name);
  const path = `${dir}/first.${name}`;
  Deno.bench({
    name: `${name} new writer, frames 0-2, N=${n}`,
    group: "first frames",
    baseline: name === "raw",
    fn() {
      const sink = backend.openWriter(path, { create: "truncate", fsync: "none" });
      for (let i = 0; i < 3; i++) sink.writeFrame(frames.frame(i));
      sink.close();
    },
  });
}
