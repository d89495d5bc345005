/**
 * The perf table's `read gsd/raw` rows alone (issue 17): pairs of table cells raw, FRAMINGS, raw
 * in one process (the order reversed in odd pairs, as tools/perf.ts runs them), after one raw
 * cell not counted; prints each cell's read_s and read CPU, and the median of gsd's read rate over
 * the geometric mean of the two raws'.
 *
 *     deno run -A bench/gsd_table_pairs.ts [--size 64MiB] [--n 1024] [--pairs 6] [--cache warm]
 *       [--framings gsd] [--dir DIR]
 * @module
 */
import { parseArgs } from "node:util";
import { parseCount } from "../lib/cli/args.ts";
import { parseSize } from "../lib/core/sizes.ts";
import { backendByName } from "../lib/backends/registry.ts";
import { Progress } from "../lib/report/progress.ts";
import type { Row } from "../lib/report/row.ts";
import { runTable } from "../lib/workloads/table/mod.ts";

const { values } = parseArgs({
  args: Deno.args,
  options: {
    size: { type: "string", default: "64MiB" },
    n: { type: "string", default: "1024" },
    pairs: { type: "string", default: "6" },
    cache: { type: "string", default: "warm" },
    framings: { type: "string", default: "gsd" },
    dir: { type: "string" },
  },
});
const size = parseSize(values.size);
const n = parseCount(values.n);
const pairs = parseCount(values.pairs);
const cache: "cold" | "warm" = values.cache === "cold" ? "cold" : "warm";
const framings = values.framings.split(",").map((f) => backendByName(f));
const raw = backendByName("raw");
const progress = new Progress({ quiet: true });
const base = { sizes: [size], ns: [n], repeat: 1, seed: 1, warmup: false, cache, progress };
await runTable({ ...base, backends: [raw], dir: values.dir });

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}
const num = (r: Row, c: string) => Number(r[c]);
const ratios = new Map<string, number[]>();
for (let p = 0; p < pairs; p++) {
  const got = await runTable({
    ...base,
    backends: [raw, ...(p % 2 === 0 ? framings : [...framings].reverse()), raw],
    dir: values.dir,
  });
  const [a, b] = got.filter((r) => r.framing === "raw");
  const rawRate = Math.sqrt(num(a!, "read_MiBps") * num(b!, "read_MiBps"));
  const line = got.map((r) =>
    `${r.framing} ${(num(r, "read_s") * 1000).toFixed(1)}ms (u ${
      (num(r, "read_user_s") * 1000).toFixed(0)
    } s ${(num(r, "read_sys_s") * 1000).toFixed(0)})`
  );
  for (const f of framings) {
    const r = got.find((x) => x.framing === f.name)!;
    const list = ratios.get(f.name) ?? [];
    list.push(num(r, "read_MiBps") / rawRate);
    ratios.set(f.name, list);
  }
  console.log(`pair ${p}: ${line.join(", ")}`);
}
for (const [name, xs] of ratios) {
  console.log(
    `# read ${name}/raw median ${median(xs).toFixed(3)} (${Math.min(...xs).toFixed(2)}-${
      Math.max(...xs).toFixed(2)
    }) ${xs.map((x) => x.toFixed(2)).join(" ")}; load ${Deno.loadavg()[0]}`,
  );
}
