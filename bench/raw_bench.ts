/**
 * Benchmarks of the raw framing and the FFI read engine.
 * - encode/decode of one table frame at several N;
 * - cached sequential and random reads of a 64 MiB file: the FFI engine vs Deno.FsFile;
 * - a 16 MiB write with fsync: straight to a scratch file vs temporary name + rename.
 * Run: deno task bench (or deno bench -A bench/raw_bench.ts). Times are per iteration.
 */
import { raw } from "../lib/framings/raw.ts";
import { MemoryFile, memorySource } from "../lib/io/memory.ts";
import { nativeBackend } from "../lib/backends/engine.ts";
import { FileHandle } from "../lib/io/file.ts";
import { checkOutputTarget, commitTemp, tempPathFor } from "../lib/io/atomic.ts";
import { TableFrames } from "../lib/workloads/table/mod.ts";
import { Rng, shuffledOrder } from "../lib/workloads/pattern.ts";

// ---- encode / decode of one frame ----------------------------------------------------------
for (const n of [1024, 16384, 1048576]) {
  const frames = new TableFrames(n, 1);
  const w = raw.createWriter();
  w.begin();
  Deno.bench({
    name: `raw encode frame N=${n}`,
    group: `encode N=${n}`,
    baseline: true,
    fn() {
      w.writeFrame(frames.frame(1));
    },
  });
  const m = new MemoryFile();
  const w2 = raw.createWriter();
  m.apply(w2.begin());
  for (let i = 0; i < 4; i++) m.apply(w2.writeFrame(frames.frame(i)));
  m.apply(w2.finish());
  const bytes = m.bytes().slice();
  const idx = raw.openIndex(memorySource(bytes));
  Deno.bench({
    name: `raw decode frame N=${n}`,
    group: `decode N=${n}`,
    baseline: true,
    fn() {
      for (const r of idx.chunks(2)) {
        const view = bytes.subarray(r.offset, r.offset + r.bytes);
        if (view.length !== r.bytes) throw new Error("short");
      }
    },
  });
}

// ---- cached reads: FFI engine vs Deno.FsFile -------------------------------------------------
const dir = Deno.makeTempDirSync({ dir: ".", prefix: ".sciobench-bench-" });
globalThis.addEventListener("unload", () => Deno.removeSync(dir, { recursive: true }));
const N = 16384; // 448 KiB frames
const FRAMES = 146; // ~64 MiB
const path = `${dir}/bench.raw`;
const backend = nativeBackend(raw);
{
  const frames = new TableFrames(N, 1);
  const sink = backend.openWriter(path, { create: "truncate" });
  for (let i = 0; i < FRAMES; i++) sink.writeFrame(frames.frame(i));
  sink.close();
  Deno.readFileSync(path); // warm the cache
}
const frameBytes = 28 * N;
const source = backend.openReader(path);
const order = shuffledOrder(FRAMES, FRAMES, new Rng(5));
const fsFile = Deno.openSync(path, { read: true });
const fsBuf = new Uint8Array(frameBytes);
const ffi = FileHandle.open(path, "read");
const ffiBuf = new Uint8Array(frameBytes);
const firstOffset = source.locate!(0)[0]!.offset;

Deno.bench({
  name: "FFI engine readFrame, sequential 64 MiB (448 KiB frames)",
  group: "cached sequential read",
  baseline: true,
  fn() {
    for (let i = 0; i < FRAMES; i++) source.readFrame(i);
  },
});
Deno.bench({
  name: "FFI pread loop, sequential 64 MiB (448 KiB blocks)",
  group: "cached sequential read",
  fn() {
    for (let i = 0; i < FRAMES; i++) ffi.readInto(ffiBuf, firstOffset + i * frameBytes);
  },
});
Deno.bench({
  name: "Deno.FsFile seek+readSync, sequential 64 MiB (448 KiB blocks)",
  group: "cached sequential read",
  fn() {
    fsFile.seekSync(firstOffset, Deno.SeekMode.Start);
    for (let i = 0; i < FRAMES; i++) {
      let done = 0;
      while (done < frameBytes) done += fsFile.readSync(fsBuf.subarray(done)) ?? frameBytes;
    }
  },
});
Deno.bench({
  name: "FFI engine readFrame, random order",
  group: "cached random read",
  baseline: true,
  fn() {
    for (const i of order) source.readFrame(i);
  },
});
Deno.bench({
  name: "Deno.FsFile seek+readSync, random order",
  group: "cached random read",
  fn() {
    for (const i of order) {
      fsFile.seekSync(firstOffset + i * frameBytes, Deno.SeekMode.Start);
      let done = 0;
      while (done < frameBytes) done += fsFile.readSync(fsBuf.subarray(done)) ?? frameBytes;
    }
  },
});

// ---- write with fsync: a benchmark's scratch file vs the write command's temp + rename -------
const WRITE_FRAMES = 37; // ~16 MiB of 448 KiB frames
const writeFrames16 = new TableFrames(N, 2);
const scratchPath = `${dir}/scratch.raw`;
const keptPath = `${dir}/kept.raw`;
Deno.bench({
  name: "write 16 MiB + fsync to a scratch file (benchmarks)",
  group: "write with fsync",
  baseline: true,
  fn() {
    const sink = backend.openWriter(scratchPath, { create: "truncate" });
    for (let i = 0; i < WRITE_FRAMES; i++) sink.writeFrame(writeFrames16.frame(i));
    sink.close();
  },
});
Deno.bench({
  name: "write 16 MiB + fsync to a temporary name, rename, fsync dir (write --force)",
  group: "write with fsync",
  fn() {
    const target = checkOutputTarget(keptPath, true);
    const temp = tempPathFor(target.path);
    const sink = backend.openWriter(temp, { create: "new" });
    for (let i = 0; i < WRITE_FRAMES; i++) sink.writeFrame(writeFrames16.frame(i));
    sink.close();
    commitTemp(temp, target);
  },
});
