/**
 * The raw engine's cached sequential read as a ratio to fio (--ioengine=psync) at the same block
 * size, measured in interleaved pairs (fio, sciobench, fio, sciobench ...), as
 * shared/specs/measurement.md §6 asks. Prints one CSV row per pair and the median ratio.
 *
 * Run: deno task fio-ratio [--size 1GiB] [--n 16384] [--pairs 7] [--dir DIR] [--verify]
 * The block size is one frame, 28 N bytes (N = 16384: 448 KiB).
 */
import { raw } from "../../lib/framings/raw.ts";
import { nativeBackend } from "../../lib/backends/engine.ts";
import { withScratchDir } from "../../lib/io/scratch.ts";
import { startMeter } from "../../lib/sys/meter.ts";
import { verifyFrame } from "../../lib/workloads/pattern.ts";
import { TableFrames } from "../../lib/workloads/table/mod.ts";
import { countOption, formatSpread, probeArgs, sizeOption } from "./common.ts";

const PROBE = "fio_ratio";
const { values } = probeArgs(PROBE, {
  size: { type: "string", default: "1GiB" },
  n: { type: "string", default: "16384" },
  pairs: { type: "string", default: "7" },
  dir: { type: "string" },
  verify: { type: "boolean", default: false },
});
const size = sizeOption(PROBE, values.size, "--size");
const n = countOption(PROBE, values.n, "--n");
const pairs = countOption(PROBE, values.pairs, "--pairs");
const block = 28 * n;
const frames = Math.ceil(size / block);

await withScratchDir(values.dir, async (dir) => {
  const path = `${dir}/ratio.raw`;
  const backend = nativeBackend(raw);
  const data = new TableFrames(n, 1);
  const sink = backend.openWriter(path, { create: "truncate" });
  for (let i = 0; i < frames; i++) sink.writeFrame(data.frame(i));
  sink.close();
  Deno.readFileSync(path); // warm: both sides read from the page cache
  const source = backend.openReader(path, { layout: data.layout });
  const offset = source.locate!(0)[0]!.offset;
  const fioArgs = [
    "--name=seqread",
    `--filename=${path}`,
    "--rw=read",
    `--bs=${block}`,
    "--ioengine=psync",
    "--invalidate=0",
    `--offset=${offset}`,
    `--size=${frames * block}`,
    "--output-format=json",
  ];
  const version = new TextDecoder().decode(
    (await new Deno.Command("fio", { args: ["--version"] }).output()).stdout,
  ).trim();
  console.log(`# fio ${version}: fio ${fioArgs.join(" ")}`);
  console.log(
    `# sciobench: raw engine readFrame of ${frames} frames of ${block} bytes${
      values.verify ? ", verified" : ""
    }`,
  );
  console.log("pair,fio_MiBps,sciobench_MiBps,ratio");
  const ratios: number[] = [];
  for (let p = 0; p < pairs; p++) {
    const out = await new Deno.Command("fio", { args: fioArgs, stdout: "piped", stderr: "piped" })
      .output();
    if (!out.success) throw new Error(`fio failed: ${new TextDecoder().decode(out.stderr)}`);
    const doc = JSON.parse(new TextDecoder().decode(out.stdout));
    const fioBps = Number(doc.jobs[0].read.bw_bytes);
    const m = startMeter();
    for (let i = 0; i < frames; i++) {
      const got = source.readFrame(i);
      if (values.verify) verifyFrame(path, i, data.frame(i).chunks, got);
    }
    const s = m.stop();
    const ourBps = (frames * block) / s.wallS;
    const ratio = ourBps / fioBps;
    ratios.push(ratio);
    console.log(
      `${p},${(fioBps / 2 ** 20).toFixed(0)},${(ourBps / 2 ** 20).toFixed(0)},${ratio.toFixed(3)}`,
    );
  }
  source.close();
  console.log(`# ratio ${formatSpread(ratios, 3)}`);
});
