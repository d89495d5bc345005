/**
 * sciobench's read latency percentiles against fio's on the same file and pattern: one raw file of
 * 4 KiB frames (one float32 chunk of 1024 elements each, back to back after the 16-byte header),
 * read at random one frame at a time by `sciobench read` (one pread of 4096 bytes per frame, no
 * --bs: a --bs block reader would read the two aligned blocks a frame straddles), and by fio
 * `randread`, ioengine=psync, iodepth=1, bs=4k over the same byte range (offset=16), both the same
 * number of reads, cold (a drop before the phase: sciobench's default, fio's invalidate=1) and
 * warm (the file read through first; `--cache warm`, invalidate=0), neither giving an access hint
 * (fadvise_hint=0, as --baseline fio). Rounds alternate the two (ABBA). Prints each round's p50 and
 * p99 (us; sciobench's frame reads, random_p50_us and random_p99_us, and its pread calls alone,
 * random_call_p50_us and random_call_p99_us; fio's clat percentiles) and the median ratio
 * sciobench / fio of each.
 *
 * Run: deno run -A tools/probes/latency_vs_fio.ts [--size 256MiB] [--reads 4096] [--rounds 3]
 * [--dir DIR]
 * @module
 */
import { raw } from "../../lib/framings/raw.ts";
import { nativeBackend } from "../../lib/backends/engine.ts";
import { withScratchDir } from "../../lib/io/scratch.ts";
import { fillRandom, Rng } from "../../lib/workloads/pattern.ts";
import { countOption, interleaved, median, probeArgs, sizeOption } from "./common.ts";

const PROBE = "latency_vs_fio";
const { values } = probeArgs(PROBE, {
  size: { type: "string", default: "256MiB" },
  reads: { type: "string", default: "4096" },
  rounds: { type: "string", default: "3" },
  dir: { type: "string" },
});
const size = sizeOption(PROBE, values.size, "--size");
const reads = countOption(PROBE, values.reads, "--reads");
const rounds = countOption(PROBE, values.rounds, "--rounds");
const BLOCK = 4096;
const frames = Math.floor(size / BLOCK);
const MAIN = new URL("../../main.ts", import.meta.url).pathname;
const dec = new TextDecoder();

/** p50 and p99 of one measurement, us (sciobench's also of its pread calls alone). */
interface Percentiles {
  readonly p50: number;
  readonly p99: number;
  readonly callP50?: number;
  readonly callP99?: number;
}

/** Writes `frames` frames of 4096 seeded bytes each; returns the first frame's file offset. */
function makeFile(path: string): number {
  const backend = nativeBackend(raw);
  const data = new Float32Array(BLOCK / 4);
  const rng = new Rng(1);
  const sink = backend.openWriter(path, { create: "truncate", fsync: "end" });
  for (let i = 0; i < frames; i++) {
    fillRandom(data, rng);
    sink.writeFrame({
      step: i,
      chunks: [{ name: "data", dtype: "float32", shape: [BLOCK / 4], data }],
    });
  }
  sink.close();
  const source = backend.openReader(path, {});
  const offset = source.locate!(0)[0]!.offset;
  source.close();
  return offset;
}

async function run(program: string, args: readonly string[]): Promise<string> {
  const out = await new Deno.Command(program, { args: [...args], stdout: "piped", stderr: "piped" })
    .output();
  if (!out.success) throw new Error(`${program} failed: ${dec.decode(out.stderr)}`);
  return dec.decode(out.stdout);
}

/** sciobench read's random phase over `reads` frames of `path`: its p50 and p99, us. */
async function sciobench(path: string, warm: boolean): Promise<Percentiles> {
  const doc = JSON.parse(
    await run(Deno.execPath(), [
      ...["run", "--quiet", "--allow-all", MAIN, "read", path, "--format", "json"],
      ...["--sample", String(reads * BLOCK), ...(warm ? ["--cache", "warm"] : [])],
    ]),
  );
  const row = doc.rows[0];
  if (Number(row.random_units) !== reads) throw new Error(`read ${row.random_units} frames`);
  return {
    p50: Number(row.random_p50_us),
    p99: Number(row.random_p99_us),
    callP50: Number(row.random_call_p50_us),
    callP99: Number(row.random_call_p99_us),
  };
}

/** fio randread psync QD1 of `reads` 4 KiB blocks from `offset` of `path`: clat p50, p99, us. */
async function fio(path: string, offset: number, warm: boolean): Promise<Percentiles> {
  if (warm) Deno.readFileSync(path);
  const doc = JSON.parse(
    await run("fio", [
      ...["--name=randread", `--filename=${path}`, "--rw=randread", `--bs=${BLOCK}`],
      ...[
        "--ioengine=psync",
        "--iodepth=1",
        "--fadvise_hint=0",
        `--offset=${offset}`,
        `--size=${frames * BLOCK}`,
      ],
      ...[`--number_ios=${reads}`, `--invalidate=${warm ? 0 : 1}`, "--output-format=json"],
    ]),
  );
  const read = doc.jobs[0].read;
  if (Number(read.total_ios) !== reads) throw new Error(`fio read ${read.total_ios} blocks`);
  const p = read.clat_ns.percentile;
  return { p50: p["50.000000"] / 1000, p99: p["99.000000"] / 1000 };
}

await withScratchDir(values.dir, async (dir) => {
  const path = `${dir}/latency.raw`;
  const offset = makeFile(path);
  const version = (await run("fio", ["--version"])).trim();
  console.log(
    `# ${frames} frames of ${BLOCK} bytes from byte ${offset}; ${reads} random reads a ` +
      `measurement; ${version} randread psync iodepth=1 bs=4k offset=${offset}`,
  );
  console.log("cache,round,way,p50_us,p99_us,call_p50_us,call_p99_us");
  for (const cache of ["cold", "warm"] as const) {
    const warm = cache === "warm";
    const seen: Record<string, Percentiles[]> = { sciobench: [], fio: [] };
    await interleaved(rounds, {
      sciobench: async (round) => {
        const p = await sciobench(path, warm);
        seen.sciobench!.push(p);
        console.log(
          `${cache},${round},sciobench,${p.p50.toFixed(2)},${p.p99.toFixed(2)},` +
            `${p.callP50!.toFixed(2)},${p.callP99!.toFixed(2)}`,
        );
        return p.p50;
      },
      fio: async (round) => {
        const p = await fio(path, offset, warm);
        seen.fio!.push(p);
        console.log(`${cache},${round},fio,${p.p50.toFixed(2)},${p.p99.toFixed(2)},,`);
        return p.p50;
      },
    });
    for (const q of ["p50", "p99"] as const) {
      const theirs = median(seen.fio!.map((p) => p[q]));
      const call = q === "p50" ? "callP50" : "callP99";
      for (const [what, key] of [["frame read", q], ["pread call", call]] as const) {
        const ours = median(seen.sciobench!.map((p) => p[key]!));
        console.log(
          `# ${cache} ${q}: sciobench's ${what} ${ours.toFixed(2)} us, fio ${theirs.toFixed(2)} ` +
            `us, ratio ${(ours / theirs).toFixed(3)}`,
        );
      }
    }
  }
});
