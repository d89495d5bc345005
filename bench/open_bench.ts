/**
 * Opening a file: f77's and IEEEIO's open of a table file at N = 32^2 (2 records, or
 * 2 datasets and 4 attribute records, per frame: records of 12 and 16 KiB) warm and cold, and at
 * N = 128^2 (records of 192 and 256 KiB) warm, through the engine as the table opens it
 * (lib/io/mapped.ts windows: near records in place from a mapping, far cached ones one pread, cold
 * ones through the mapping's readahead) and through a pread per read (the file handle itself as
 * the decoder's source, no windows). At 128^2, the floor
 * beside them: an 8-byte pread at each record boundary and nothing else, with the opens hot and
 * after a read-through of the file (the table's open follows one). And the open time and
 * memory of synthetic gsd and IEEEIO indexes of 10^5 and 10^6 records: linear in the records.
 * First of all, the process's first open of each framing at N = 32^2, warm (raw's first, which
 * loads the libraries), printed: what the table's one open a cell costs before the JIT has
 * compiled the decoder (and per record, a record being a chunk's); run it a few times for the
 * spread.
 *
 * Run: deno bench --allow-all --v8-flags=--expose-gc bench/open_bench.ts (writes 4 x 32 MiB in a
 * temporary directory; SCIOBENCH_BENCH_FRAMES changes the frames of the 32^2 files, default 1170 =
 * 32 MiB; without --expose-gc the memory figures include garbage not yet collected)
 * @module
 */
import { nativeBackend } from "../lib/backends/engine.ts";
import { writeFrames } from "../lib/backends/write.ts";
import { f77 } from "../lib/framings/f77/mod.ts";
import { gsd } from "../lib/framings/gsd/mod.ts";
import { ieeeio } from "../lib/framings/ieeeio/mod.ts";
import { raw } from "../lib/framings/raw.ts";
import type { ChunkLayout, Frame, Framing } from "../lib/framings/types.ts";
import { dropCache } from "../lib/io/cache.ts";
import { FileHandle } from "../lib/io/file.ts";
import { MemoryFile, memorySource } from "../lib/io/memory.ts";
import { TableFrames } from "../lib/workloads/table/mod.ts";
import { CLOCK, clockGettime } from "../lib/sys/libc.ts";

const FRAMES = Number(Deno.env.get("SCIOBENCH_BENCH_FRAMES") ?? 1170);
const dir = Deno.makeTempDirSync({ prefix: "sciobench-open-bench-" });
globalThis.addEventListener("unload", () => Deno.removeSync(dir, { recursive: true }));
/** The table files: N, frames (32 MiB each), and the caches they are opened with. */
const CELLS = [
  { side: 32, frames: FRAMES, caches: ["warm", "cold"] as const },
  { side: 128, frames: 73, caches: ["warm"] as const },
];
const layouts = new Map(CELLS.map((c) => [c.side, new TableFrames(c.side ** 2, 1).layout]));

const files = new Map<string, string>();
for (const { side, frames } of CELLS) {
  const data = new TableFrames(side ** 2, 1);
  for (const framing of side === 32 ? [raw, f77, ieeeio] : [f77, ieeeio]) {
    const path = `${dir}/open${side}.${framing.name}`;
    await writeFrames(
      nativeBackend(framing),
      path,
      { create: "new", fsync: "none" },
      frames,
      (i) => data.frame(i),
    );
    files.set(`${framing.name} ${side}`, path);
  }
}

/** Before: every read the decoder makes is a pread of its own (the file handle as its source). */
function openWithPreads(framing: Framing, path: string, layout: readonly ChunkLayout[]): number {
  const file = FileHandle.open(path, "read");
  try {
    return framing.openIndex(file, { layout }).frameCount;
  } finally {
    file.close();
  }
}

/** After: the engine's open, as the table and `read` open a file. */
function openWithEngine(framing: Framing, path: string, layout: readonly ChunkLayout[]): number {
  const source = nativeBackend(framing).openReader(path, { layout });
  const frames = source.frameCount;
  source.close();
  return frames;
}

// The process's first open of each framing (no open has run before: the writes above do not
// read), timed once and printed, wall and this thread's CPU time (which a loaded machine's waits
// for a core do not inflate): the bench's iterations below time the compiled code.
{
  const first = new Map<string, { wall: number; cpu: number }>();
  for (const framing of [raw, f77, ieeeio]) {
    const c0 = clockGettime(CLOCK.THREAD_CPUTIME);
    const t0 = performance.now();
    openWithEngine(framing, files.get(`${framing.name} 32`)!, layouts.get(32)!);
    const wall = performance.now() - t0;
    first.set(framing.name, { wall, cpu: (clockGettime(CLOCK.THREAD_CPUTIME) - c0) / 1e6 });
  }
  const records = FRAMES * layouts.get(32)!.length;
  const raw0 = first.get("raw")!;
  for (const [name, { wall, cpu }] of first) {
    const over = (ms: number, rawMs: number) => ((ms - rawMs) * 1000 / records).toFixed(2);
    console.log(
      `${name} 32^2 warm, the process's first open: ${wall.toFixed(2)} ms wall, ${
        cpu.toFixed(2)
      } ms CPU` +
        (name === "raw"
          ? ""
          : `; over raw's, a record: ${over(wall, raw0.wall)} us wall, ${
            over(cpu, raw0.cpu)
          } us CPU`),
    );
  }
}

/**
 * The record boundaries of an f77 file (the offset of each trailing marker): where its open's
 * scan reads, one 8-byte pread each (the trailing marker and the next leading one).
 */
function boundaries(path: string): number[] {
  const file = FileHandle.open(path, "read");
  const at: number[] = [];
  try {
    for (let o = 0; o < file.size;) {
      const n = new DataView(file.read(o, 4).buffer).getInt32(0, true);
      at.push(o + 4 + n);
      o += n + 8;
    }
  } finally {
    file.close();
  }
  return at;
}

/** Reads the file through a 4 MiB buffer, as the table's warm cache preparation does. */
function readThrough(path: string): void {
  const file = FileHandle.open(path, "read");
  try {
    const buf = new Uint8Array(4 << 20);
    for (let at = 0; at < file.size; at += buf.length) file.readInto(buf, at);
  } finally {
    file.close();
  }
}

// The floor at N = 128^2: one 8-byte pread at every record boundary of the f77 file, nothing
// else (what an open that checks every marker cannot go under), beside the opens, hot (opens one
// after the other) and after a read-through of the file (the table's open comes after one: the
// kernel's page lookups and the code start from caches another 64 MiB went through).
{
  const path = files.get("f77 128")!;
  const at = boundaries(path);
  const buf = new Uint8Array(8);
  const floor = () => {
    const file = FileHandle.open(path, "read");
    try {
      for (const offset of at) file.readInto(buf, offset);
    } finally {
      file.close();
    }
  };
  const layout = layouts.get(128)!;
  for (const after of [false, true]) {
    const group = `open 128^2 warm${after ? ", after a read-through" : ""}: ${at.length} records`;
    const cases: [string, () => void, string][] = [
      ["floor: an 8-byte pread a record boundary", floor, path],
      ["f77, the engine's open", () => openWithEngine(f77, path, layout), path],
      [
        "ieeeio, the engine's open",
        () => openWithEngine(ieeeio, files.get("ieeeio 128")!, layout),
        files.get("ieeeio 128")!,
      ],
    ];
    for (const [what, fn, file] of cases) {
      Deno.bench(`${group}: ${what}`, { group, baseline: fn === floor }, (b) => {
        if (after) readThrough(file);
        b.start();
        fn();
        b.end();
      });
    }
  }
}

for (const { side, frames, caches } of CELLS) {
  for (const framing of [f77, ieeeio]) {
    const path = files.get(`${framing.name} ${side}`)!;
    const layout = layouts.get(side)!;
    for (const cache of caches) {
      const group = `${framing.name} open ${side}^2 ${frames} frames ${cache}`;
      const prepare = () => {
        if (cache === "cold") dropCache(path);
      };
      const cases = [
        ["a pread per read", openWithPreads],
        ["the engine's open", openWithEngine],
      ] as const;
      for (const [what, open] of cases) {
        Deno.bench(`${framing.name} ${side}^2 ${cache}: ${what}`, {
          group,
          baseline: open === openWithPreads,
          n: cache === "cold" ? 5 : undefined,
        }, (b) => {
          prepare();
          b.start();
          open(framing, path, layout);
          b.end();
        });
      }
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

/** V8's collector when the bench runs with --v8-flags=--expose-gc (exact memory figures), else none. */
const gc = (globalThis as { gc?: () => void }).gc;
const sizes = [1e5, 1e6];
const gsdFiles = sizes.map((n) => synthetic(n));
for (const [k, bytes] of gsdFiles.entries()) {
  // memory: what open indexes keep, per frame (heap and typed arrays, printed beside the timings)
  const used = () => {
    const m = Deno.memoryUsage();
    return m.heapUsed + m.external;
  };
  const keep = [];
  gc?.();
  const before = used();
  for (let r = 0; r < 5; r++) keep.push(gsd.openIndex(memorySource(bytes)));
  gc?.();
  const perFrame = (used() - before) / keep.length / sizes[k]!;
  console.log(`gsd index of ${sizes[k]} frames: about ${perFrame.toFixed(0)} bytes a frame`);
  Deno.bench(`gsd open, synthetic index of ${sizes[k]} frames`, {
    group: "gsd open, linear in frames",
    baseline: k === 0,
  }, () => {
    gsd.openIndex(memorySource(bytes));
  });
}

// ---- a synthetic IEEEIO index of 10^5 and 10^6 datasets: open time and memory per record ------
/**
 * An IEEEIO file in memory of `frames` table-like frames: 2 one-element datasets named position
 * and orientation, with frame_datasets and step attributes (6 records, 2 datasets, a frame).
 */
function syntheticIeeeio(frames: number): Uint8Array {
  const w = ieeeio.createWriter({});
  const file = new MemoryFile();
  file.apply(w.begin());
  const x = new Float32Array(1);
  const frame: Frame = {
    step: 0,
    chunks: [
      { name: "position", dtype: "float32", shape: [1], data: x },
      { name: "orientation", dtype: "float32", shape: [1], data: x },
    ],
  };
  for (let i = 0; i < frames; i++) {
    x[0] = i;
    file.apply(w.writeFrame({ ...frame, step: 10 * i }));
  }
  file.apply(w.finish());
  return file.bytes().slice();
}

const datasets = [1e5, 1e6];
const ieeeioFiles = datasets.map((n) => syntheticIeeeio(n / 2));
for (const [k, bytes] of ieeeioFiles.entries()) {
  const used = () => {
    const m = Deno.memoryUsage();
    return m.heapUsed + m.external;
  };
  const keep = [];
  gc?.();
  const before = used();
  for (let r = 0; r < 3; r++) keep.push(ieeeio.openIndex(memorySource(bytes)));
  gc?.();
  const perDataset = (used() - before) / keep.length / datasets[k]!;
  console.log(
    `ieeeio index of ${datasets[k]} datasets (${datasets[k]! * 3} records): about ${
      perDataset.toFixed(0)
    } bytes a dataset`,
  );
  Deno.bench(`ieeeio open, synthetic index of ${datasets[k]} datasets`, {
    group: "ieeeio open, linear in records",
    baseline: k === 0,
  }, () => {
    ieeeio.openIndex(memorySource(bytes));
  });
}
