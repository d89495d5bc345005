/**
 * The table's `--direct` read path against a psync loop as fio's, in one process,
 * interleaved in blocks of `--block` frames (each block at a seeded random frame of the file, so
 * no way reads right after another and gains from the host's readahead; the ways in a seeded
 * random order each round), so a disk whose rate swings within seconds favours none:
 * - `psync`: O_DIRECT preads of one frame's bytes (28 N) at multiples of it into a page-aligned
 *   buffer, nothing verified: fio's `--rw=read --bs=28N --ioengine=psync --direct=1`;
 * - `psync512`: the same, every offset and the buffer 512 bytes past a page boundary;
 * - `ours`: the table's read path (readVerifiedFrames, overlapped through native AIO) over a raw
 *   file's frames; `serial`: the same with `--no-overlap`.
 * Prints each way's MiB/s (total bytes / total seconds) and its ratio to psync.
 *
 *     deno run -A tools/probes/direct_pairs.ts [--mib 1024] [--rounds 30] [--n 16384] [--block 16]
 *       [--framing raw] [--dir DIR]
 * @module
 */
import { backendByName } from "../../lib/backends/registry.ts";
import { FileHandle } from "../../lib/io/file.ts";
import { alignedBytes } from "../../lib/io/transfer.ts";
import { withScratchDir } from "../../lib/io/scratch.ts";
import { readVerifiedFrames, Rng, shuffledOrder } from "../../lib/workloads/pattern.ts";
import { TableFrames } from "../../lib/workloads/table/mod.ts";
import { countOption, probeArgs } from "./common.ts";

const PROBE = "direct_pairs";
const { values } = probeArgs(PROBE, {
  mib: { type: "string", default: "1024" },
  rounds: { type: "string", default: "30" },
  n: { type: "string", default: "16384" },
  block: { type: "string", default: "16" },
  framing: { type: "string", default: "raw" },
  dir: { type: "string" },
});
const n = countOption(PROBE, values.n, "--n");
const BLOCK = countOption(PROBE, values.block, "--block");
const L = 28 * n;
const frames = Math.floor(countOption(PROBE, values.mib, "--mib") * 2 ** 20 / L);
const backend = backendByName(values.framing);
const data = new TableFrames(n, 1);

await withScratchDir(values.dir, async (dir) => {
  const path = `${dir}/pairs.${backend.name}`;
  const sink = backend.openWriter(path, { create: "truncate" });
  for (let i = 0; i < frames; i++) sink.writeFrame(data.frame(i));
  sink.close();
  const transfer = { bs: 4 << 20, direct: true, readAhead: false } as const;
  const source = backend.openReader(path, { layout: data.layout, transfer });
  const file = FileHandle.open(path, "read", { direct: true });
  const page = alignedBytes(L + 4096, 4096);
  const ways = ["psync", "psync512", "ours", "serial"] as const;
  const seconds: Record<string, number> = {};
  const bytes: Record<string, number> = {};
  for (const w of ways) seconds[w] = bytes[w] = 0;
  const rng = new Rng(11);
  const rounds = countOption(PROBE, values.rounds, "--rounds");
  for (let r = 0; r < rounds; r++) {
    for (const j of shuffledOrder(ways.length, ways.length, rng)) {
      const way = ways[j]!;
      const at = rng.below(frames - BLOCK - 1);
      const t0 = performance.now();
      if (way === "psync" || way === "psync512") {
        const shift = way === "psync" ? 0 : 512;
        const buf = page.subarray(shift, shift + L);
        for (let k = 0; k < BLOCK; k++) file.preadOnce(buf, (at + k) * L + shift);
      } else {
        const order = Uint32Array.from({ length: BLOCK }, (_, k) => at + k);
        await readVerifiedFrames(source, order, data, undefined, way === "ours");
      }
      seconds[way]! += (performance.now() - t0) / 1000;
      bytes[way]! += BLOCK * L;
    }
  }
  file.close();
  source.close();
  const rate = (w: string) => bytes[w]! / 2 ** 20 / seconds[w]!;
  for (const w of ways) {
    console.log(
      `${w}: ${rate(w).toFixed(0)} MiB/s, / psync ${(rate(w) / rate("psync")).toFixed(3)}`,
    );
  }
});
