/**
 * Serial vs overlapped reads (issue 14) measured in interleaved pairs, for a machine whose disk
 * and CPU share swing within seconds: one 448 KiB-frame raw file (N = 128^2), read with O_DIRECT
 * (or from the page cache with `--cached`, or buffered after a drop before each block with `--cold`) through the table's read path (readVerifiedFrames),
 * alternating blocks of `--block` frames (16) read serially and overlapped (which goes first alternates),
 * each block at the next place in the file. Prints each way's MiB/s and overlapped / serial.
 *
 * With `--bs BYTES` the O_DIRECT reads are BYTES each (--direct --bs), a frame in several.
 *
 *     deno run -A bench/overlap_pairs.ts [--mib 256] [--rounds 40] [--cached | --cold] [--n 16384] [--block 16] [--bs 65536]
 * @module
 */
import { parseArgs } from "node:util";
import { nativeBackend } from "../lib/backends/engine.ts";
import { raw } from "../lib/framings/raw.ts";
import { dropCache } from "../lib/io/cache.ts";
import { readVerifiedFrames } from "../lib/workloads/pattern.ts";
import { TableFrames } from "../lib/workloads/table/mod.ts";

const { values } = parseArgs({
  options: {
    mib: { type: "string", default: "256" },
    rounds: { type: "string", default: "40" },
    n: { type: "string", default: "16384" },
    cached: { type: "boolean", default: false },
    cold: { type: "boolean", default: false },
    block: { type: "string", default: "16" },
    bs: { type: "string" },
  },
});
const n = Number(values.n);
const BLOCK = Number(values.block);
const backend = nativeBackend(raw);
const data = new TableFrames(n, 1);
const frames = Math.floor((Number(values.mib) << 20) / (28 * n));
const dir = Deno.makeTempDirSync({ dir: ".", prefix: ".sciobench-bench-" });
try {
  const path = `${dir}/pairs.raw`;
  const sink = backend.openWriter(path, { create: "truncate" });
  for (let i = 0; i < frames; i++) sink.writeFrame(data.frame(i));
  sink.close();
  if (values.cached) Deno.readFileSync(path);
  const transfer = values.cached || values.cold
    ? undefined
    : values.bs
    ? { bs: Number(values.bs), direct: true }
    : { bs: 4 << 20, direct: true, readAhead: false } as const;
  const source = backend.openReader(path, { layout: data.layout, transfer });
  const seconds = [0, 0];
  let at = 0;
  const rounds = Number(values.rounds);
  for (let r = 0; r < rounds; r++) {
    for (const way of r % 2 === 0 ? [0, 1] : [1, 0]) {
      if (at + BLOCK > frames) at = 0;
      const order = Uint32Array.from({ length: BLOCK }, (_, k) => at + k);
      if (values.cold) dropCache(path); // untimed
      const t0 = performance.now();
      await readVerifiedFrames(source, order, data, undefined, way === 1);
      seconds[way]! += (performance.now() - t0) / 1000;
      at += BLOCK;
    }
  }
  source.close();
  const mib = (rounds * BLOCK * 28 * n) / 2 ** 20;
  const [serial, overlapped] = seconds.map((s) => mib / s) as [number, number];
  console.log(
    `N=${n} ${
      values.cached ? "page cache" : values.cold ? "cold, buffered" : `O_DIRECT bs ${transfer!.bs}`
    }: serial ${serial.toFixed(0)} MiB/s, ` +
      `overlapped ${overlapped.toFixed(0)} MiB/s, overlapped/serial ${
        (overlapped / serial).toFixed(3)
      }`,
  );
} finally {
  Deno.removeSync(dir, { recursive: true });
}
