/**
 * GSD framing against the raw framing, in memory (no file I/O), for one table frame
 * (position N x 3 + orientation N x 4 float32) at N = 32^2, 128^2, 1024^2:
 * - encode: `writeFrame` of frame i on a long-lived writer (gsd: hoomd chunk choice, the 16 MiB
 *   buffer copy for chunks under 8 MiB, index entries; raw: references only);
 * - locate: `chunks(frame)` on an opened index (gsd: binary search of the index);
 * - decode: locate, then copy every chunk's bytes into an aligned buffer (what the engine's
 *   pread does with a file).
 *
 *     deno bench --allow-read --allow-ffi bench/gsd_bench.ts
 * @module
 */
import { gsd } from "../lib/framings/gsd/mod.ts";
import { raw } from "../lib/framings/raw.ts";
import type { FrameWriter, Framing } from "../lib/framings/types.ts";
import { MemoryFile, memorySource } from "../lib/io/memory.ts";
import { TableFrames } from "../lib/workloads/table/mod.ts";

const FRAMINGS: readonly Framing[] = [raw, gsd];

for (const n of [1024, 16384, 1048576]) {
  const frames = new TableFrames(n, 1);
  const count = n >= 1048576 ? 3 : 64;

  for (const f of FRAMINGS) {
    // Encode: a writer reused for 4096 frames, then replaced, so its index stays bounded.
    let w: FrameWriter = f.createWriter({});
    w.begin();
    let i = 0;
    Deno.bench({
      name: `${f.name} encode N=${n}`,
      group: `gsd-encode N=${n}`,
      baseline: f === raw,
      fn() {
        if (++i % 4096 === 0) {
          w = f.createWriter({});
          w.begin();
        }
        w.writeFrame(frames.frame(i));
      },
    });

    const m = new MemoryFile();
    const w2 = f.createWriter({});
    m.apply(w2.begin());
    for (let k = 0; k < count; k++) m.apply(w2.writeFrame(frames.frame(k)));
    m.apply(w2.finish());
    const bytes = m.bytes().slice();
    const index = f.openIndex(memorySource(bytes));
    const out = new Uint8Array(28 * n + 64);
    let j = 0;
    Deno.bench({
      name: `${f.name} locate N=${n}`,
      group: `gsd-locate N=${n}`,
      baseline: f === raw,
      fn() {
        j = (j + 7) % count;
        if (index.chunks(j).length < 2) throw new Error("missing chunks");
      },
    });
    Deno.bench({
      name: `${f.name} decode N=${n}`,
      group: `gsd-decode N=${n}`,
      baseline: f === raw,
      fn() {
        j = (j + 7) % count;
        let at = 0;
        for (const r of index.chunks(j)) {
          out.set(bytes.subarray(r.offset, r.offset + r.bytes), at);
          at += r.bytes;
        }
      },
    });
  }
}

// Opening an index: 4682 frames of N = 1024 (gsd's 128 MiB row; 14046 index entries).
{
  const frames = new TableFrames(1024, 1);
  for (const f of FRAMINGS) {
    const m = new MemoryFile();
    const w = f.createWriter({});
    m.apply(w.begin());
    for (let k = 0; k < 4682; k++) m.apply(w.writeFrame(frames.frame(k)));
    m.apply(w.finish());
    const bytes = m.bytes().slice();
    Deno.bench({
      name: `${f.name} open index, 4682 frames N=1024`,
      group: "gsd-open",
      baseline: f === raw,
      fn() {
        if (f.openIndex(memorySource(bytes)).frameCount !== 4682) throw new Error("frames");
      },
    });
  }
}
