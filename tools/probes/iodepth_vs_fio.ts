/**
 * `read --direct --iodepth N --engine E` against fio at the same depth, engine, block size and
 * direct flag, in one run, on the same files: random 4 KiB reads of a 1 GiB raw file (N = 64:
 * frames of 1792 bytes, each one or two 4 KiB requests; ours: the random phase's requests/s,
 * fio: randread bs=4k IOPS) and sequential reads of a 1 GiB raw file of 448 KiB frames (N = 128^2;
 * ours: --direct with no --bs, one request per frame's aligned blocks, 452 KiB; fio: read bs=448k
 * MiB/s). Depths 1, 4, 16, 32; libaio and io_uring; ours and fio alternate, fio first at odd
 * repeats. Prints a Markdown table (medians of the repeats).
 *
 *     deno run -A tools/probes/iodepth_vs_fio.ts [DIR] [REPEATS] [seq|random]
 * @module
 */
const dir = Deno.args[0] ?? ".";
const repeats = Number(Deno.args[1] ?? 3);
/** `seq` or `random`: only that half (each row's other columns left empty); default both. */
const only = Deno.args[2];
const MAIN = new URL("../../main.ts", import.meta.url).pathname;
const SAMPLE_4K = "192M";
const SAMPLE_SEQ = "512M";

async function run(cmd: string, args: string[]): Promise<string> {
  const out = await new Deno.Command(cmd, { args, stdout: "piped", stderr: "piped" }).output();
  const text = new TextDecoder().decode(out.stdout);
  if (out.code !== 0) {
    throw new Error(`${cmd} ${args.join(" ")}: ${new TextDecoder().decode(out.stderr)}`);
  }
  return text;
}

async function sciobench(args: string[]): Promise<Record<string, string>> {
  const csv = await run(Deno.execPath(), ["run", "-A", "--quiet", MAIN, ...args]);
  const [head, row] = csv.trim().split("\n").map((l) => l.split(","));
  return Object.fromEntries(head!.map((h, i) => [h, row![i]!]));
}

async function fio(args: string[]): Promise<{ iops: number; MiBps: number }> {
  const json = await run("fio", [...args, "--output-format=json", "--readonly"]);
  const doc = JSON.parse(json.slice(json.indexOf("{")));
  const r = doc.jobs[0].read;
  return { iops: r.iops, MiBps: r.bw_bytes / 2 ** 20 };
}

async function ensure(path: string, n: string): Promise<void> {
  try {
    Deno.statSync(path);
  } catch {
    await run(Deno.execPath(), [
      ...["run", "-A", "--quiet", MAIN, "write", "--framing", "raw", "--n", n, "--size", "1G"],
      path,
    ]);
  }
}

const median = (v: number[]) => [...v].sort((a, b) => a - b)[Math.floor(v.length / 2)] ?? NaN;

const small = `${dir}/iodepth-4k.raw`;
const large = `${dir}/iodepth-448k.raw`;
await ensure(small, "64");
await ensure(large, "16384");
console.log(
  "| engine | depth | ours 4k IOPS | fio 4k IOPS | ratio | ours p50 us | ours p99 us | " +
    "ours seq MiB/s | fio seq MiB/s | ratio |",
);
console.log("|---|---|---|---|---|---|---|---|---|---|");
for (const engine of ["libaio", "io_uring"]) {
  for (const depth of [1, 4, 16, 32]) {
    const q = ["--iodepth", String(depth), "--engine", engine];
    const f = [`--ioengine=${engine}`, `--iodepth=${depth}`, "--direct=1", "--name=probe"];
    const ours4k: number[] = [], fio4k: number[] = [], p50: number[] = [], p99: number[] = [];
    const oursSeq: number[] = [], fioSeq: number[] = [];
    for (let r = 0; r < repeats; r++) {
      const steps = [
        async () => {
          const row = await sciobench([
            ...["read", "--direct", "--bs", "4k", ...q, "--sample", SAMPLE_4K],
            ...["--format", "csv", small],
          ]);
          ours4k.push(Number(row.random_iops));
          p50.push(Number(row.random_p50_us));
          p99.push(Number(row.random_p99_us));
        },
        async () => {
          const x = await fio([
            ...f,
            ...[`--filename=${small}`, "--rw=randread", "--bs=4k", "--size=1G"],
            ...[`--io_size=${SAMPLE_4K}`, "--randseed=2"],
          ]);
          fio4k.push(x.iops);
        },
        async () => {
          const row = await sciobench([
            ...["read", "--direct", ...q, "--sample", SAMPLE_SEQ, "--format", "csv", large],
          ]);
          oursSeq.push(Number(row.read_MiBps));
        },
        async () => {
          const x = await fio([
            ...f,
            ...[`--filename=${large}`, "--rw=read", "--bs=448k", "--size=1G"],
            `--io_size=${SAMPLE_SEQ}`,
          ]);
          fioSeq.push(x.MiBps);
        },
      ];
      const all = r % 2 === 0 ? [1, 0, 3, 2] : [0, 1, 2, 3];
      const order = all.filter((k) => only === undefined || (only === "seq") === k >= 2);
      for (const k of order) await steps[k]!();
    }
    const [a, b, c, d] = [median(ours4k), median(fio4k), median(oursSeq), median(fioSeq)];
    console.log(
      `| ${engine} | ${depth} | ${a.toFixed(0)} | ${b.toFixed(0)} | ${(a / b).toFixed(2)} | ` +
        `${median(p50).toFixed(0)} | ${median(p99).toFixed(0)} | ${c.toFixed(0)} | ` +
        `${d.toFixed(0)} | ${(c / d).toFixed(2)} |`,
    );
  }
}
