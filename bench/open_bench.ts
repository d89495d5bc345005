/**
 * Opening a file (issue 17): f77's and IEEEIO's open of a table file at N = 32^2 (2 records, or
 * 2 data and 4 attribute records, per frame) warm and cold, through the engine as the table
 * opens it (after: lib/io/mapped.ts, a mapping while cold, pread while cached) and through a
 * pread per read (before: the file handle itself as the decoder's source). And the open time and
 * memory of a synthetic gsd index of 10^5 and 10^6 frames: linear in the frames.
 *
 * Run: deno bench --allow-all bench/open_bench.ts (writes 2 x 32 MiB in a temporary directory;
 * SCIOBENCH_BENCH_FRAMES changes the frames of the table files, default 1170 = 32 MiB)
 * @module
 */
import { nativeBackend } from "../lib/backends/engine.ts";
import { writeFrames } from "../lib/backends/write.ts";
import { f77 } from "../lib/framings/f77.ts";
import { gsd } from "../lib/framings/gsd/mod.ts";
import { ieeeio } from "../lib/framings/ieeeio.ts";
import type { Frame, Framing } from "../lib/framings/types.ts";
import { dropCache } from "../lib/io/cache.ts";
import { FileHandle } from "../lib/io/file.ts";
import { MemoryFile, memorySource } from "../lib/io/memory.ts";
import { TableFrames } from "../lib/workloads/table.ts";

const N = 32 ** 2;
const FRAMES = Number(Deno.env.get("SCIOBENCH_BENCH_FRAMES") ?? 1170);
const dir = Deno.makeTempDirSync({ prefix: "sciobench-open-bench-" });
globalThis.addEventListener("unload", () => Deno.removeSync(dir, { recursive: true }));
const data = new TableFrames(N, 1);
const layout = data.layout;

const files = new Map<string, string>();
for (const framing of [f77, ieeeio]) {
  const path = `${dir}/open.${framing.name}`;
  await writeFrames(
    nativeBackend(framing),
    path,
    { create: "new", fsync: "none" },
    FRAMES,
    (i) => data.frame(i),
  );
  files.set(framing.name, path);
}

/** Before: every read the decoder makes is a pread of its own (the file handle as its source). */
function openWithPreads(framing: Framing, path: string): number {
  const file = FileHandle.open(path, "read");
  try {
    return framing.openIndex(file, { layout }).frameCount;
  } finally {
    file.close();
  }
}

/** After: the engine's open, as the table and `read` open a file. */
function openWithEngine(framing: Framing, path: string): number {
  const source = nativeBackend(framing).openReader(path, { layout });
  const frames = source.frameCount;
  source.close();
  return frames;
}

for (const framing of [f77, ieeeio]) {
  const path = files.get(framing.name)!;
  for (const cache of ["warm", "cold"] as const) {
    const group = `${framing.name} open ${FRAMES} frames ${cache}`;
    const prepare = () => {
      if (cache === "cold") dropCache(path);
    };
    const cases = [
      ["before, a pread per read", openWithPreads],
      ["after, the engine's open", openWithEngine],
    ] as const;
    for (const [what, open] of cases) {
      Deno.bench(`${framing.name} ${cache}: ${what}`, {
        group,
        baseline: open === openWithPreads,
        n: cache === "cold" ? 5 : undefined,
      }, (b) => {
        prepare();
        b.start();
        open(framing, path);
        b.end();
      });
    }
  }
}

// ---- a synthetic gsd index of 10^5 and 10^6 frames: open time and memory per frame ----------
/** A gsd file in memory with `frames` frames of one 1-particle chunk: its index has `frames` entries. */
function synthetic(frames: number): Uint8Array {
  const w = gsd.createWriter({});
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
const gsdFiles = sizes.map((n) => synthetic(n));
for (const [k, bytes] of gsdFiles.entries()) {
  // memory: what open indexes keep, per frame (heap and typed arrays, printed beside the timings)
  const used = () => {
    const m = Deno.memoryUsage();
    return m.heapUsed + m.external;
  };
  const keep = [];
  const before = used();
  for (let r = 0; r < 5; r++) keep.push(gsd.openIndex(memorySource(bytes)));
  const perFrame = (used() - before) / keep.length / sizes[k]!;
  console.log(`gsd index of ${sizes[k]} frames: about ${perFrame.toFixed(0)} bytes a frame`);
  Deno.bench(`gsd open, synthetic index of ${sizes[k]} frames`, {
    group: "gsd open, linear in frames",
    baseline: k === 0,
  }, () => {
    gsd.openIndex(memorySource(bytes));
  });
}
