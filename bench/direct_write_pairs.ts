/**
 * O_DIRECT writes from a staging buffer at a page boundary vs 512 bytes past one (issue 14's
 * write efficiency), measured in interleaved rounds beside fio: the table's frames (N = 128^2)
 * copied into a 4 MiB staging buffer and written in 4 MiB pwrites at multiples of 4 MiB, then
 * fsync, as the engine's --direct writer does; fio writes the same size (`--ioengine=psync
 * --direct=1 --bs=4194304 --end_fsync=1`). Each round runs the three in turn (the order reversed
 * every other round); prints each one's MiB/s and the median ratio to fio of the same round.
 * ext4 on a virtio disk takes 512-byte-aligned buffers, but one 512 bytes past a page ran at
 * 0.32-0.37 of fio's on this machine, the page-aligned one at 0.97-1.00 (512 MiB, 8 rounds, two
 * runs at load 2-4, 2026-12-01).
 *
 *     deno run -A bench/direct_write_pairs.ts [--mib 512] [--rounds 8] [--dir DIR]
 * @module
 */
import { parseArgs } from "node:util";
import { FileHandle } from "../lib/io/file.ts";
import { withScratchDir } from "../lib/io/scratch.ts";
import { alignedBytes } from "../lib/io/transfer.ts";
import { TableFrames } from "../lib/workloads/table/mod.ts";

const { values } = parseArgs({
  options: {
    mib: { type: "string", default: "512" },
    rounds: { type: "string", default: "8" },
    dir: { type: "string" },
  },
});
const BS = 4 << 20;
const SIZE = Number(values.mib) << 20;
const frames = new TableFrames(128 * 128, 1);

/** Our write of SIZE bytes through a staging buffer `skew` bytes past a page; MiB/s. */
function ours(path: string, skew: number): number {
  const t0 = performance.now();
  const f = FileHandle.open(path, "truncate", { direct: true });
  const buf = alignedBytes(BS + 4096, 4096).subarray(skew, skew + BS);
  let fill = 0;
  let start = 0;
  for (let i = 0; start < SIZE; i++) {
    for (const c of frames.frame(i).chunks) {
      const b = new Uint8Array(c.data.buffer, c.data.byteOffset, c.data.byteLength);
      for (let k = 0; k < b.length && start < SIZE;) {
        const n = Math.min(b.length - k, BS - fill);
        buf.set(b.subarray(k, k + n), fill);
        fill += n;
        k += n;
        if (fill === BS) {
          f.writeAt(buf, start);
          start += BS;
          fill = 0;
        }
      }
    }
  }
  f.sync();
  f.close();
  return SIZE / 2 ** 20 / ((performance.now() - t0) / 1000);
}

/** fio's write of SIZE bytes in 4 MiB psync O_DIRECT calls; its MiB/s. */
async function fio(path: string): Promise<number> {
  const out = await new Deno.Command("fio", {
    args: [
      ...["--name=w", `--filename=${path}`, "--rw=write", `--bs=${BS}`, `--size=${SIZE}`],
      ...["--ioengine=psync", "--direct=1", "--fallocate=none", "--create_on_open=1"],
      ...["--end_fsync=1", "--output-format=json"],
    ],
  }).output();
  return JSON.parse(new TextDecoder().decode(out.stdout)).jobs[0].write.bw_bytes / 2 ** 20;
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

await withScratchDir(values.dir, async (dir) => {
  const rate: Record<string, number[]> = { fio: [], page: [], skew512: [] };
  for (let k = 0; k < Number(values.rounds); k++) {
    const order = k % 2 ? ["skew512", "page", "fio"] : ["fio", "page", "skew512"];
    for (const way of order) {
      const path = `${dir}/${way}`;
      rate[way]!.push(way === "fio" ? await fio(path) : ours(path, way === "page" ? 0 : 512));
      Deno.removeSync(path);
    }
  }
  for (const [way, xs] of Object.entries(rate)) {
    console.log(
      `${way.padEnd(8)} median ${median(xs).toFixed(0)} MiB/s | ${
        xs.map((x) => x.toFixed(0)).join(" ")
      }`,
    );
  }
  const ratio = (way: string) => median(rate[way]!.map((x, i) => x / rate.fio![i]!)).toFixed(2);
  console.log(
    `median ratio to fio's of the same round: page ${ratio("page")}, 512 past a page ${
      ratio("skew512")
    }`,
  );
});
