/**
 * The table's sequential read phase of gsd against raw's, in one process (issue 17): both files
 * written as the table writes them, then in interleaved rounds (raw first in odd rounds, gsd first
 * in even: ABBA) each side opens its file as the table does (a fresh source) and reads the whole
 * sample in order through readVerifiedFrames, timed (wall and thread CPU); gsd's first lookup (the
 * index load) is also timed apart in a source of its own. Prints one line per phase and the
 * medians of gsd / raw.
 *
 *     deno run -A bench/gsd_read_phase.ts [--size 64MiB] [--n 1024] [--rounds 9] [--direct]
 *       [--dir DIR]
 * @module
 */
import { parseArgs } from "node:util";
import { parseCount, parseSize } from "../lib/cli/args.ts";
import { backendByName } from "../lib/backends/registry.ts";
import { withScratchDir } from "../lib/io/scratch.ts";
import { CLOCK, clockGettime } from "../lib/sys/libc.ts";
import { readVerifiedFrames } from "../lib/workloads/pattern.ts";
import { TableFrames, tableSizing } from "../lib/workloads/table/mod.ts";
import { DEFAULT_DIRECT_BS } from "../lib/io/transfer.ts";

const { values } = parseArgs({
  args: Deno.args,
  options: {
    size: { type: "string", default: "64MiB" },
    n: { type: "string", default: "1024" },
    rounds: { type: "string", default: "9" },
    direct: { type: "boolean", default: false },
    dir: { type: "string" },
    only: { type: "string" },
  },
});
const size = parseSize(values.size);
const n = parseCount(values.n);
const rounds = parseCount(values.rounds);
const transfer = values.direct
  ? { bs: DEFAULT_DIRECT_BS, direct: true, readAhead: false }
  : undefined;
const sizing = tableSizing(size, n);

/** CPU seconds of this thread so far. */
const threadCpuSeconds = () => clockGettime(CLOCK.THREAD_CPUTIME) / 1e9;

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

await withScratchDir(values.dir, async (dir) => {
  const frames = new TableFrames(n, 1);
  const sides = ["raw", "gsd"] as const;
  for (const name of sides) {
    const sink = backendByName(name).openWriter(`${dir}/t.${name}`, {
      create: "truncate",
      transfer,
    });
    for (let i = 0; i < sizing.frames; i++) sink.writeFrame(frames.frame(i));
    sink.close();
  }
  const seq = Uint32Array.from({ length: sizing.readFrames }, (_, i) => i);
  const open = (name: string) =>
    backendByName(name).openReader(`${dir}/t.${name}`, { layout: frames.layout, transfer });
  const wall: Record<string, number[]> = { raw: [], gsd: [] };
  const cpu: Record<string, number[]> = { raw: [], gsd: [] };
  const load: number[] = [];
  const overlap = values.direct;
  console.log(`# ${sizing.readFrames} frames of ${28 * n} bytes, direct=${values.direct}`);
  for (let r = 0; r < rounds; r++) {
    for (const name of r % 2 === 0 ? sides : [...sides].reverse()) {
      if (values.only !== undefined && values.only !== name) continue;
      const source = open(name);
      const c0 = threadCpuSeconds();
      const t0 = performance.now();
      await readVerifiedFrames(source, seq, frames, undefined, overlap);
      const ms = performance.now() - t0;
      const cms = (threadCpuSeconds() - c0) * 1000;
      source.close();
      wall[name]!.push(ms);
      cpu[name]!.push(cms);
      console.log(`${r},${name},${ms.toFixed(2)} ms,cpu ${cms.toFixed(2)} ms`);
    }
    const g = open("gsd");
    const t0 = performance.now();
    g.locate!(0);
    load.push(performance.now() - t0);
    g.close();
  }
  if (values.only !== undefined) return;
  const ratio = wall.raw!.map((x, i) => x / wall.gsd![i]!);
  const cratio = cpu.raw!.map((x, i) => x / cpu.gsd![i]!);
  console.log(
    `# median wall raw ${median(wall.raw!).toFixed(2)} gsd ${median(wall.gsd!).toFixed(2)} ms; ` +
      `rate gsd/raw ${median(ratio).toFixed(3)} (${Math.min(...ratio).toFixed(2)}-${
        Math.max(...ratio).toFixed(2)
      }); cpu gsd/raw ${median(cratio).toFixed(3)}; gsd first lookup ${median(load).toFixed(3)} ms`,
  );
});
