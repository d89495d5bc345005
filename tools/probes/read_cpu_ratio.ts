/**
 * Read ratios in CPU time, which a loaded machine disturbs far less than wall time: the calling
 * thread's CPU time (CLOCK_THREAD_CPUTIME_ID) of reading a 64 MiB file from the page cache frame by
 * frame, in interleaved pairs, at N = 32^2, 128^2, 1024^2:
 * - FRAMING/raw: a verified read as the table's (readVerified: the frame read as stored, compared
 *   in the file's byte order, so big-endian netCDF is not swapped), sequential and random order
 *   (the perf table's read goal), for every native framing;
 * - netcdf/raw decoded: readFrame (netCDF swapped to native) + verifyFrame, the verified read
 *   before readVerified, sequential;
 * - raw verified/raw alone: what verifying every byte costs the raw engine (the bound of its
 *   ratio to fio psync, which does not verify).
 * A ratio is the throughput of the first over the second (above 1: the first is faster); each of a
 * pair's ratios times both sides twice, in the order A B B A.
 * `deno task perf` prints the FRAMING/raw rows (`read CPU FRAMING/raw`) from {@link readCpuRatios}.
 *
 *     deno run -A tools/probes/read_cpu_ratio.ts [--pairs 15] [--framings f77,ieeeio,gsd,netcdf]
 * @module
 */
import { backendByName } from "../../lib/backends/registry.ts";
import type { FrameSource } from "../../lib/backends/backend.ts";
import { CLOCK, clockGettime } from "../../lib/sys/libc.ts";
import { readVerified, Rng, shuffledOrder, verifyFrame } from "../../lib/workloads/pattern.ts";
import { TableFrames } from "../../lib/workloads/table/mod.ts";
import { countOption, formatSpread, probeArgs } from "./common.ts";

/** One cell's ratios over the pairs: raw's CPU time over the framing's (above 1: faster). */
export interface ReadCpuRatios {
  /** Per framing: verified sequential and random reads, and the decoded sequential read. */
  readonly framings: Map<
    string,
    { readonly sequential: number[]; readonly random: number[]; readonly decoded: number[] }
  >;
  /** raw's unverified read over its verified one (what verification costs it). */
  readonly rawVerify: number[];
}

/** CPU microseconds of this thread so far (exact, unlike getrusage's ticks). */
function cpuUs(): number {
  return clockGettime(CLOCK.THREAD_CPUTIME) / 1000;
}

/** verified: as the table reads; decoded: readFrame + verifyFrame; alone: readFrame only. */
type Mode = "verified" | "decoded" | "alone";

/**
 * Writes a file of about `bytes` of table frames (at least 4) at N = `n` for raw and each of
 * `framings` in `dir`, reads each from the page cache in `pairs` interleaved pairs against raw
 * (which side goes first alternates), and returns the thread-CPU ratios; the files are removed.
 */
export function readCpuRatios(
  options: {
    readonly framings: readonly string[];
    readonly n: number;
    readonly pairs: number;
    readonly bytes: number;
    readonly dir: string;
  },
): ReadCpuRatios {
  const { n, pairs, dir } = options;
  const data = new TableFrames(n, 1);
  // at least 8 frames, so a pass at N = 1024^2 (224 MiB) is more than a few long copies
  const frames = Math.max(8, Math.floor(options.bytes / (28 * n)));
  const open = (name: string): FrameSource => {
    const backend = backendByName(name);
    const path = `${dir}/read_cpu.${name}`;
    const sink = backend.openWriter(path, { create: "truncate" });
    for (let i = 0; i < frames; i++) sink.writeFrame(data.frame(i));
    sink.close();
    Deno.readFileSync(path); // warm
    const source = backend.openReader(path, { layout: data.layout });
    Deno.removeSync(path); // the open file stays readable
    return source;
  };
  const sequential = Array.from({ length: frames }, (_, i) => i);
  const random = Array.from(shuffledOrder(frames, frames, new Rng(3)));
  const timed = (source: FrameSource, order: readonly number[], mode: Mode) => {
    const t0 = cpuUs();
    for (const i of order) {
      if (mode === "verified") {
        readVerified(source, i, data);
        continue;
      }
      const got = source.readFrame(i);
      if (mode === "decoded") verifyFrame(source.path, i, data.frame(i).chunks, got);
    }
    return cpuUs() - t0;
  };
  const raw = open("raw");
  const out: ReadCpuRatios = { framings: new Map(), rawVerify: [] };
  try {
    for (const name of options.framings) {
      const source = open(name);
      const r = { sequential: [] as number[], random: [] as number[], decoded: [] as number[] };
      try {
        for (let p = 0; p < pairs; p++) {
          // raw's time over the framing's, each side timed twice in the order A B B A (which side
          // is A alternates): an effect of going first or second, and a drift of the machine's
          // load that is linear over the four passes, fall on both sides alike
          const ratio = (order: readonly number[], mode: Mode) => {
            let rawUs = 0;
            let sourceUs = 0;
            // ABBA in even pairs, BAAB in odd ones
            for (const side of p % 2 === 0 ? [0, 1, 1, 0] : [1, 0, 0, 1]) {
              if (side === 0) rawUs += timed(raw, order, mode);
              else sourceUs += timed(source, order, mode);
            }
            return rawUs / sourceUs;
          };
          r.sequential.push(ratio(sequential, "verified"));
          r.random.push(ratio(random, "verified"));
          r.decoded.push(ratio(sequential, "decoded"));
        }
      } finally {
        source.close();
      }
      out.framings.set(name, r);
    }
    for (let p = 0; p < pairs; p++) {
      const alone = timed(raw, sequential, "alone");
      out.rawVerify.push(alone / timed(raw, sequential, "verified"));
    }
  } finally {
    raw.close();
  }
  return out;
}

if (import.meta.main) {
  const PROBE = "read_cpu_ratio";
  const { values } = probeArgs(PROBE, {
    pairs: { type: "string", default: "15" },
    framings: { type: "string", default: "netcdf" },
  });
  const pairs = countOption(PROBE, values.pairs, "--pairs");
  const framings = values.framings.split(",");
  const dir = Deno.makeTempDirSync({ dir: ".", prefix: ".sciobench-bench-" });
  try {
    console.log(
      `# ${pairs} interleaved pairs, CPU time of the reading thread; ${Deno.loadavg()[0]} load`,
    );
    for (const n of [32 ** 2, 128 ** 2, 1024 ** 2]) {
      const got = readCpuRatios({ framings, n, pairs, bytes: 64 << 20, dir });
      const side = Math.sqrt(n);
      for (const [name, r] of got.framings) {
        console.log(`N=${side}^2 read ${name}/raw ${formatSpread(r.sequential)}`);
        console.log(`N=${side}^2 random ${name}/raw ${formatSpread(r.random)}`);
        console.log(`N=${side}^2 read ${name}/raw decoded ${formatSpread(r.decoded)}`);
      }
      console.log(`N=${side}^2 raw verified/raw alone ${formatSpread(got.rawVerify)}`);
    }
  } finally {
    Deno.removeSync(dir, { recursive: true });
  }
}
