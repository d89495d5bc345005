/**
 * Where the table's read efficiency against fio goes: one cell of
 * `table --framing F --size S --n N --baseline fio [--direct]`, its read phase only, measured in
 * interleaved rounds (fio first in odd rounds, ours first in even: ABBA) beside fio's read of its
 * own file with the args lib/baselines/fio.ts `fioArgs` builds. Each phase starts from the table's
 * cache state (dropped, or O_DIRECT) and is measured by wall time (ours: the table's read path,
 * readVerifiedFrames; fio: its bw_bytes) and by the device's counters (/sys/block/DEV/stat: reads,
 * sectors, read ticks). Prints one CSV row per phase and the medians of ours / fio.
 *
 *     deno run -A tools/probes/read_gap.ts [--framing raw] [--size 1GiB] [--n 16384] [--rounds 8]
 *       [--direct] [--no-overlap] [--random] [--dev vda] [--dir DIR]
 * @module
 */
import { backendByName } from "../../lib/backends/registry.ts";
import { dropCache } from "../../lib/io/cache.ts";
import { withScratchDir } from "../../lib/io/scratch.ts";
import { fioArgs, fioBandwidth, type FioCell } from "../../lib/baselines/fio.ts";
import { directAlignment } from "../../lib/sys/libc.ts";
import { startMeter } from "../../lib/sys/meter.ts";
import { readVerifiedFrames, Rng, shuffledOrder } from "../../lib/workloads/pattern.ts";
import { TableFrames, tableSizing } from "../../lib/workloads/table/mod.ts";
import { DEFAULT_DIRECT_BS } from "../../lib/io/transfer.ts";
import { countOption, median, probeArgs, roundOrder, sizeOption } from "./common.ts";

const PROBE = "read_gap";
const { values } = probeArgs(PROBE, {
  framing: { type: "string", default: "raw" },
  size: { type: "string", default: "1GiB" },
  n: { type: "string", default: "16384" },
  rounds: { type: "string", default: "8" },
  direct: { type: "boolean", default: false },
  "no-overlap": { type: "boolean", default: false },
  random: { type: "boolean", default: false },
  dev: { type: "string", default: "vda" },
  dir: { type: "string" },
});
const size = sizeOption(PROBE, values.size, "--size");
const n = countOption(PROBE, values.n, "--n");
const rounds = countOption(PROBE, values.rounds, "--rounds");
const direct = values.direct;
const phase = values.random ? "random" : "read";
const backend = backendByName(values.framing);
const sizing = tableSizing(size, n);
const frameBytes = 28 * n;

/** The device's read counters: reads completed, sectors read, ms spent reading. */
function devStat(): [number, number, number] {
  const f = Deno.readTextFileSync(`/sys/block/${values.dev}/stat`).trim().split(/\s+/).map(Number);
  return [f[0]!, f[2]!, f[3]!];
}

await withScratchDir(values.dir, async (dir) => {
  const path = `${dir}/gap.${backend.name}`;
  const frames = new TableFrames(n, 1);
  const transfer = direct ? { bs: DEFAULT_DIRECT_BS, direct: true, readAhead: false } : undefined;
  const sink = backend.openWriter(path, { create: "truncate", transfer });
  for (let i = 0; i < sizing.frames; i++) sink.writeFrame(frames.frame(i));
  sink.close();
  const cell: FioCell = {
    path: `${dir}/fio.${backend.name}`,
    fileBytes: sizing.dataBytes,
    readBytes: sizing.readBytes,
    blockBytes: direct ? DEFAULT_DIRECT_BS : frameBytes,
    readBlockBytes: frameBytes,
    direct,
    fsync: "end",
    seed: 2,
    cold: !direct,
  };
  const w = await new Deno.Command("fio", { args: fioArgs(cell, "write"), stdout: "null" })
    .output();
  if (!w.success) throw new Error("fio write failed");
  const align = direct ? directAlignment(cell.path).offset : 1;
  const fioCell = { ...cell, readBlockBytes: Math.ceil(frameBytes / align) * align };
  const source = backend.openReader(path, {
    layout: frames.layout,
    transfer,
  });
  const order = values.random
    ? shuffledOrder(sizing.frames, sizing.readFrames, new Rng(2))
    : Uint32Array.from({ length: sizing.readFrames }, (_, i) => i);
  const overlap = direct && !values["no-overlap"];
  console.log(
    `# ${backend.name} ${phase} ${sizing.readFrames} frames of ${frameBytes} bytes, ` +
      `direct=${direct} overlap=${overlap}; fio ${fioArgs(fioCell, phase).join(" ")}`,
  );
  console.log("round,side,MiBps,wall_s,user_s,sys_s,dev_reads,dev_MiB,dev_ms,avg_req_KiB");
  const ratios: number[] = [];
  const rates: Record<string, number[]> = { ours: [], fio: [] };
  for (let r = 0; r < rounds; r++) {
    const rate: Record<string, number> = {};
    for (const side of roundOrder(["fio", "ours"], r)) {
      if (!direct) dropCache(side === "fio" ? cell.path : path);
      const d0 = devStat();
      let mibps: number, wall: number, user = 0, sys = 0;
      if (side === "fio") {
        const t0 = performance.now();
        const out = await new Deno.Command("fio", {
          args: fioArgs(fioCell, phase),
          stdout: "piped",
        }).output();
        wall = (performance.now() - t0) / 1000;
        const text = new TextDecoder().decode(out.stdout);
        mibps = fioBandwidth(text, phase) / 2 ** 20;
        const job = JSON.parse(text.slice(text.indexOf("{"))).jobs[0];
        user = job.usr_cpu * job.read.runtime / 1e5;
        sys = job.sys_cpu * job.read.runtime / 1e5;
      } else {
        const m = startMeter(phase);
        await readVerifiedFrames(source, order, frames, undefined, overlap);
        const s = m.stop();
        wall = s.wallS;
        user = s.userS;
        sys = s.sysS;
        mibps = sizing.readBytes / 2 ** 20 / s.wallS;
      }
      const d1 = devStat();
      const reads = d1[0] - d0[0], mib = (d1[1] - d0[1]) / 2048, ms = d1[2] - d0[2];
      rate[side] = mibps;
      rates[side]!.push(mibps);
      console.log(
        [
          r,
          side,
          mibps.toFixed(0),
          wall.toFixed(3),
          user.toFixed(3),
          sys.toFixed(3),
          reads,
          mib.toFixed(1),
          ms,
          reads ? ((mib * 1024) / reads).toFixed(0) : 0,
        ].join(","),
      );
    }
    ratios.push(rate.ours! / rate.fio!);
  }
  source.close();
  console.log(
    `# median ours ${median(rates.ours!).toFixed(0)} MiB/s, fio ${
      median(rates.fio!).toFixed(0)
    } MiB/s, ours/fio ${median(ratios).toFixed(3)} (min ${Math.min(...ratios).toFixed(2)}, max ${
      Math.max(...ratios).toFixed(2)
    })`,
  );
});
