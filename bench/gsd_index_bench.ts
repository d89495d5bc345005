/**
 * The gsd index: open time and memory against the frames, and the writer's memory.
 * - open of a table file (N = 32^2, 64 MiB, 2340 frames) through the engine, page cache warm:
 *   the open alone, and the open with the first lookup (which reads and checks every entry);
 * - open of a synthetic index of 10^5 and 10^6 frames (one chunk each) in memory;
 * - bytes held per frame after the open and after the first lookup, and by a writer of 10^5
 *   frames (printed beside the timings);
 * - the 1st, 2nd and 3rd open of that file in fresh processes, after a write as in the table
 *   (printed: V8 compiles the reader at its first call and tiers it up over the next few; the
 *   table's open_ms is the 2nd).
 *
 * Run it in two trees to compare a change of the index:
 *     deno bench --allow-all bench/gsd_index_bench.ts
 * @module
 */
import { nativeBackend } from "../lib/backends/engine.ts";
import { writeFrames } from "../lib/backends/write.ts";
import { gsd } from "../lib/framings/gsd/mod.ts";
import type { Frame } from "../lib/framings/types.ts";
import { MemoryFile, memorySource } from "../lib/io/memory.ts";
import { TableFrames } from "../lib/workloads/table/mod.ts";
import { median } from "../tools/probes/common.ts";

const dir = Deno.makeTempDirSync({ prefix: "sciobench-gsd-index-bench-" });
globalThis.addEventListener("unload", () => Deno.removeSync(dir, { recursive: true }));

/** Bytes the JavaScript of this process holds: heap and typed arrays. */
function held(): number {
  const m = Deno.memoryUsage();
  return m.heapUsed + m.external;
}

// ---- a table file through the engine --------------------------------------------------------
const table = new TableFrames(32 ** 2, 1);
const path = `${dir}/table.gsd`;
const backend = nativeBackend(gsd);
await writeFrames(backend, path, { create: "new", fsync: "none" }, 2340, (i) => table.frame(i));

Deno.bench("gsd open, table file of 2340 frames (N = 32^2, 64 MiB)", {
  group: "gsd open, table file",
  baseline: true,
}, () => {
  backend.openReader(path, { layout: table.layout }).close();
});
Deno.bench("gsd open and first lookup, table file of 2340 frames", {
  group: "gsd open, table file",
}, () => {
  const s = backend.openReader(path, { layout: table.layout });
  s.locate!(1234);
  s.close();
});

// ---- the first opens of a process: V8 compiles and tiers up the reader's code at its first calls -
/**
 * Opens the table file in fresh processes, as the table does (after a write through the engine):
 * the 1st, 2nd and 3rd open's time each (the table times the 2nd), medians over `runs` processes.
 */
async function firstOpens(runs: number): Promise<number[][]> {
  const lib = new URL("../lib/", import.meta.url).href;
  const code = `
    import { nativeBackend } from "${lib}backends/engine.ts";
    import { writeFrames } from "${lib}backends/write.ts";
    import { gsd } from "${lib}framings/gsd/mod.ts";
    import { TableFrames } from "${lib}workloads/table/mod.ts";
    const backend = nativeBackend(gsd);
    const table = new TableFrames(32 ** 2, 1);
    await writeFrames(backend, "${dir}/warm.gsd", { create: "truncate", fsync: "none" }, 4,
      (i) => table.frame(i));
    const us = [];
    for (let k = 0; k < 3; k++) {
      const t0 = performance.now();
      const s = backend.openReader("${path}", { layout: table.layout });
      us.push((performance.now() - t0) * 1000);
      s.close();
    }
    console.log(JSON.stringify(us));`;
  const all: number[][] = [[], [], []];
  for (let r = 0; r < runs; r++) {
    const out = await new Deno.Command(Deno.execPath(), {
      args: ["eval", "--ext=ts", code],
      stdout: "piped",
    }).output();
    const us = JSON.parse(new TextDecoder().decode(out.stdout)) as number[];
    us.forEach((u, k) => all[k]!.push(u));
  }
  return all.map((xs) => xs.sort((a, b) => a - b));
}
{
  const opens = await firstOpens(7);
  const med = (xs: number[]) => median(xs).toFixed(0);
  console.log(
    `gsd open of the table file in a fresh process (median of 7): 1st ${med(opens[0]!)} us, ` +
      `2nd ${med(opens[1]!)} us (the table's open_ms), 3rd ${med(opens[2]!)} us`,
  );
}

// ---- synthetic indexes: linear in frames ----------------------------------------------------
/** A gsd file in memory with `frames` frames of one 1-element chunk (one index entry each). */
function synthetic(frames: number, options: Record<string, unknown> = {}): Uint8Array {
  const w = gsd.createWriter({ hoomd: false, ...options });
  const file = new MemoryFile();
  file.apply(w.begin());
  const x = new Float32Array(1);
  const frame: Frame = {
    step: 0,
    chunks: [{ name: "particles/position", dtype: "float32", shape: [1, 1], data: x }],
  };
  for (let i = 0; i < frames; i++) {
    x[0] = i;
    file.apply(w.writeFrame(frame));
  }
  file.apply(w.finish());
  return file.bytes().slice();
}

const sizes = [1e5, 1e6];
for (const [k, frames] of sizes.entries()) {
  const bytes = synthetic(frames);
  const keep = [];
  const before = held();
  for (let r = 0; r < 3; r++) keep.push(gsd.openIndex(memorySource(bytes)));
  const opened = held();
  for (const index of keep) index.chunks(frames - 1);
  const looked = held();
  console.log(
    `gsd index of ${frames} frames: ${((opened - before) / 3 / frames).toFixed(1)} bytes a ` +
      `frame after the open, ${((looked - before) / 3 / frames).toFixed(1)} after the first lookup`,
  );
  Deno.bench(`gsd open, synthetic index of ${frames} frames`, {
    group: "gsd open, linear in frames",
    baseline: k === 0,
  }, () => {
    gsd.openIndex(memorySource(bytes));
  });
  Deno.bench(`gsd open and first lookup, synthetic index of ${frames} frames`, {
    group: "gsd open and first lookup, linear in frames",
    baseline: k === 0,
  }, () => {
    gsd.openIndex(memorySource(bytes)).chunks(frames >> 1);
  });
}

// ---- the writer's memory --------------------------------------------------------------------
for (const fileCopies of [false, true]) {
  const w = gsd.createWriter({ hoomd: false, fileCopies });
  w.begin();
  const x = new Float32Array(1);
  const frame: Frame = {
    step: 0,
    chunks: [{ name: "particles/position", dtype: "float32", shape: [1, 1], data: x }],
  };
  const before = held();
  for (let i = 0; i < 1e5; i++) {
    x[0] = i;
    w.writeFrame(frame);
  }
  console.log(
    `gsd writer${fileCopies ? " with fileCopies" : ""}: ${
      ((held() - before) / 1e5).toFixed(1)
    } bytes a frame held after 10^5 frames`,
  );
}
