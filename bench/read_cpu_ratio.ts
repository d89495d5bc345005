/**
 * Read ratios in CPU time, which a loaded machine disturbs far less than wall time: the calling
 * thread's user + system time (getrusage RUSAGE_THREAD) of reading a 64 MiB file from the page
 * cache frame by frame, in interleaved pairs, at N = 32^2, 128^2, 1024^2:
 * - netcdf/raw: a verified read as the table's (readVerified: the frame read as stored, compared
 *   in the file's byte order, so big-endian netCDF is not swapped), sequential and random order
 *   (issue 17's read goal);
 * - netcdf/raw decoded: readFrame (netCDF swapped to native) + verifyFrame, the verified read
 *   before readVerified, sequential;
 * - raw verified/raw alone: what verifying every byte costs the raw engine (the bound of its
 *   ratio to fio psync, which does not verify).
 * A ratio is the throughput of the first over the second (above 1: the first is faster).
 *
 *     deno run -A bench/read_cpu_ratio.ts [--pairs 15]
 * @module
 */
import { parseArgs } from "node:util";
import { nativeBackend } from "../lib/backends/engine.ts";
import type { FrameSource } from "../lib/backends/backend.ts";
import { netcdf } from "../lib/framings/netcdf/mod.ts";
import { raw } from "../lib/framings/raw.ts";
import type { Framing } from "../lib/framings/types.ts";
import { CLOCK, clockGettime } from "../lib/sys/libc.ts";
import { readVerified, Rng, shuffledOrder, verifyFrame } from "../lib/workloads/pattern.ts";
import { TableFrames } from "../lib/workloads/table.ts";

const { values } = parseArgs({
  args: Deno.args,
  options: { pairs: { type: "string", default: "15" } },
});
const pairs = Number(values.pairs);
const dir = Deno.makeTempDirSync({ dir: ".", prefix: ".sciobench-bench-" });
globalThis.addEventListener("unload", () => Deno.removeSync(dir, { recursive: true }));

/** CPU time of the calling thread (exact, unlike getrusage's ticks). */
const THREAD_CPU = CLOCK.THREAD_CPUTIME;

/** CPU microseconds of this thread so far. */
function cpuUs(): number {
  return clockGettime(THREAD_CPU) / 1000;
}

function quantiles(xs: number[]): string {
  const s = [...xs].sort((a, b) => a - b);
  const f = (x: number) => x.toFixed(2);
  return `median ${f(s[s.length >> 1]!)} (min ${f(s[0]!)}, max ${f(s[s.length - 1]!)})`;
}

console.log(
  `# ${pairs} interleaved pairs, CPU time of the reading thread; ${Deno.loadavg()[0]} load`,
);
for (const n of [32 ** 2, 128 ** 2, 1024 ** 2]) {
  const data = new TableFrames(n, 1);
  const frames = Math.max(2, Math.floor((64 << 20) / (28 * n)));
  const open = (name: string, framing: Framing): { path: string; source: FrameSource } => {
    const backend = nativeBackend(framing);
    const path = `${dir}/bench.${name}`;
    const sink = backend.openWriter(path, { create: "truncate" });
    for (let i = 0; i < frames; i++) sink.writeFrame(data.frame(i));
    sink.close();
    Deno.readFileSync(path); // warm
    return { path, source: backend.openReader(path, { layout: data.layout }) };
  };
  const rawFile = open("raw", raw);
  const ncFile = open("nc", netcdf);
  const sequential = Array.from({ length: frames }, (_, i) => i);
  const random = Array.from(shuffledOrder(frames, frames, new Rng(3)));
  /** verified: as the table reads; decoded: readFrame + verifyFrame; alone: readFrame only. */
  type Mode = "verified" | "decoded" | "alone";
  const timed = (f: { path: string; source: FrameSource }, order: number[], mode: Mode) => {
    const t0 = cpuUs();
    for (const i of order) {
      if (mode === "verified") {
        readVerified(f.source, i, data);
        continue;
      }
      const got = f.source.readFrame(i);
      if (mode === "decoded") verifyFrame(f.path, i, data.frame(i).chunks, got);
    }
    return cpuUs() - t0;
  };
  const ratios: Record<string, number[]> = { seq: [], random: [], decoded: [], verify: [] };
  for (let p = 0; p < pairs; p++) {
    // alternate which side goes first
    const ab = (a: () => number, b: () => number) => {
      if (p % 2 === 0) {
        const x = a();
        return [x, b()];
      }
      const y = b();
      return [a(), y];
    };
    const [rs, ns] = ab(
      () => timed(rawFile, sequential, "verified"),
      () => timed(ncFile, sequential, "verified"),
    );
    ratios.seq!.push(rs! / ns!);
    const [rr, nr] = ab(
      () => timed(rawFile, random, "verified"),
      () => timed(ncFile, random, "verified"),
    );
    ratios.random!.push(rr! / nr!);
    const [rd, nd] = ab(
      () => timed(rawFile, sequential, "decoded"),
      () => timed(ncFile, sequential, "decoded"),
    );
    ratios.decoded!.push(rd! / nd!);
    const [alone, verified] = ab(
      () => timed(rawFile, sequential, "alone"),
      () => timed(rawFile, sequential, "verified"),
    );
    ratios.verify!.push(alone! / verified!);
  }
  const side = Math.sqrt(n);
  console.log(`N=${side}^2 read netcdf/raw ${quantiles(ratios.seq!)}`);
  console.log(`N=${side}^2 random netcdf/raw ${quantiles(ratios.random!)}`);
  console.log(`N=${side}^2 read netcdf/raw decoded ${quantiles(ratios.decoded!)}`);
  console.log(`N=${side}^2 raw verified/raw alone ${quantiles(ratios.verify!)}`);
  rawFile.source.close();
  ncFile.source.close();
}
