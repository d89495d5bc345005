/**
 * The A/A check of `sciobench compare`: N pairs (default 20) of the same small `table` run (raw and
 * `slow`, tests/_slow_backend.ts's gsd with no delay; 5 repeats, --cache cold or warm), each pair
 * compared, counting the cells and metrics flagged (a regression or improvement: significant at
 * 0.05 and beyond the threshold) without and with the control (raw); then, per pair, a third run
 * whose `slow` reads are delayed by `--factor` of their time (touching one backend and not the
 * control; 0.15 makes the read rate about 20% lower) compared with the pair's first, counting how
 * often the slowed cell shows a regression. Prints the measured false-positive rates beside the
 * theoretical one (the exact test's size at alpha for these repeat counts, which the threshold
 * only lowers), the detection rate, and the slowdown each metric measured.
 *
 *   deno run -A tools/aa_compare.ts [--pairs N] [--repeat K] [--factor F] [--size S] [--n N]
 *     [--cache cold|warm] [--dir DIR] [--v8-flags FLAGS] [--keep DIR]
 *
 * `--keep DIR` copies every run's JSON lines there (a0, b0, c0, a1, ...) for a second look.
 * @module
 */
import { parseArgs } from "node:util";
import { parseResults } from "../lib/report/plot.ts";
import {
  type CompareOptions,
  compareRows,
  type Comparison,
  type Verdict,
} from "../lib/report/compare/compare.ts";
import { uDistribution } from "../lib/report/compare/significance.ts";
import { tableWorkload } from "../lib/workloads/table/workload.ts";
import { chooseMetrics } from "../lib/workloads/results.ts";
import type { Workload } from "../lib/workloads/workload.ts";
import type { Row } from "../lib/report/row.ts";
import { SLOW_FACTOR_ENV } from "../tests/_slow_backend.ts";

const { values } = parseArgs({
  options: {
    pairs: { type: "string", default: "20" },
    repeat: { type: "string", default: "5" },
    factor: { type: "string", default: "0.15" },
    size: { type: "string", default: "32M" },
    n: { type: "string", default: "32^2" },
    cache: { type: "string", default: "cold" },
    dir: { type: "string" },
    "v8-flags": { type: "string" },
    keep: { type: "string" },
  },
});
const PAIRS = Number(values.pairs);
const REPEAT = Number(values.repeat);
const FACTOR = Number(values.factor);
const ALPHA = 0.05;
const THRESHOLD = 0.05;
const CLI = new URL("../tests/_slow_backend.ts", import.meta.url).pathname;
const RUN_ARGS = [
  "table",
  "--framing",
  "raw,slow",
  "--size",
  values.size,
  "--n",
  values.n,
  "--cache",
  values.cache,
  "--repeat",
  String(REPEAT),
  "--format",
  "jsonl",
];
/** The metrics the slowdown touches (slow's read path). */
const READ_METRICS = new Set([
  "read_MiBps",
  "random_MiBps",
  "random_ms",
  "read_p50_us",
  "random_p50_us",
]);

const work = Deno.makeTempDirSync({ prefix: "aa_compare_" });

/** One `table` run with `slow` delayed by `factor`: its rows. */
async function run(name: string, factor: number) {
  const out = `${work}/${name}.jsonl`;
  const args = [
    "run",
    "-A",
    ...(values["v8-flags"] ? [`--v8-flags=${values["v8-flags"]}`] : []),
    CLI,
    ...RUN_ARGS,
    "-o",
    out,
    ...(values.dir ? ["--dir", values.dir] : []),
  ];
  const child = new Deno.Command(Deno.execPath(), {
    args,
    env: { [SLOW_FACTOR_ENV]: String(factor) },
    stdout: "null",
    stderr: "piped",
  });
  const { code, stderr } = await child.output();
  if (code !== 0) {
    throw new Error(`${name}: exit ${code}: ${new TextDecoder().decode(stderr).slice(-400)}`);
  }
  if (values.keep) Deno.copyFileSync(out, `${values.keep}/${name}.jsonl`);
  return parseResults(Deno.readTextFileSync(out), out).rows;
}

const metrics = chooseMetrics(tableWorkload as unknown as Workload);
const options = (control: string | undefined): CompareOptions => ({
  keys: tableWorkload.keys,
  backendColumn: "framing",
  metrics,
  threshold: THRESHOLD,
  alpha: ALPHA,
  confidence: 0.95,
  control,
});
const flagged = (v: Verdict | undefined) => v === "regression" || v === "improvement";
/** The verdict with the control (compare's answer: relative to it where the control moved). */
const withControl = (c: Comparison) => c.verdict;

/** The exact two-sided Mann-Whitney test's real size at `alpha` for `m` against `n` values. */
function exactSize(m: number, n: number, alpha: number): number {
  const counts = uDistribution(m, n);
  const total = counts.reduce((s, c) => s + c, 0);
  const mean = (m * n) / 2;
  let size = 0;
  for (let u = 0; u < counts.length; u++) {
    const far = Math.abs(u - mean);
    let extreme = 0;
    for (let v = 0; v < counts.length; v++) if (Math.abs(v - mean) >= far) extreme += counts[v]!;
    if (extreme / total < alpha) size += counts[u]! / total;
  }
  return size;
}

let aaTests = 0, aaRaw = 0, aaControl = 0;
let aaCellsAnyRaw = 0, aaCellsAnyControl = 0, aaCells = 0;
let aaCellsRegressionRaw = 0, aaCellsRegressionControl = 0;
let injectedPairsRaw = 0, injectedPairsControl = 0;
let injectedCellsRaw = 0, injectedCellsControl = 0;
/** Per read metric, slow's B/A ratio (Hodges-Lehmann) in each slowed pair. */
const injectedRatios = new Map<string, number[]>();
let injectedTests = 0, injectedRaw = 0, injectedControl = 0;
const started = Date.now();
for (let i = 0; i < PAIRS; i++) {
  const a = await run(`a${i}`, 0);
  const b = await run(`b${i}`, 0);
  const c = await run(`c${i}`, FACTOR);
  const raw = compareRows(a, b, options(undefined)).comparisons;
  const ctl = compareRows(a, b, options("raw")).comparisons;
  aaTests += raw.length;
  aaRaw += raw.filter((x) => flagged(x.change.verdict)).length;
  aaControl += ctl.filter((x) => flagged(withControl(x))).length;
  // cells (backend x size x N ...): flagged when any of its metrics is
  const cellsOf = (list: readonly Comparison[], hit: (x: Comparison) => boolean) => {
    const cells = new Map<string, boolean>();
    for (const x of list) {
      const id = JSON.stringify(x.cell);
      cells.set(id, (cells.get(id) ?? false) || hit(x));
    }
    return [...cells.values()];
  };
  const cellsRaw = cellsOf(raw, (x) => flagged(x.change.verdict));
  aaCells += cellsRaw.length;
  aaCellsAnyRaw += cellsRaw.filter(Boolean).length;
  aaCellsAnyControl += cellsOf(ctl, (x) => flagged(withControl(x))).filter(Boolean).length;
  aaCellsRegressionRaw += cellsOf(raw, (x) => x.change.verdict === "regression")
    .filter(Boolean).length;
  aaCellsRegressionControl += cellsOf(ctl, (x) => withControl(x) === "regression")
    .filter(Boolean).length;
  const slowRead = (list: readonly Comparison[]) =>
    list.filter((x) => x.cell.framing === "slow" && READ_METRICS.has(x.metric.name));
  const injRaw = slowRead(compareRows(a, c, options(undefined)).comparisons);
  const injCtl = slowRead(compareRows(a, c, options("raw")).comparisons);
  injectedTests += injRaw.length;
  injectedRaw += injRaw.filter((x) => x.change.verdict === "regression").length;
  injectedControl += injCtl.filter((x) => withControl(x) === "regression").length;
  for (const x of injRaw) {
    injectedRatios.set(x.metric.name, [...injectedRatios.get(x.metric.name) ?? [], x.change.ratio]);
  }
  const readFlag = (list: readonly Comparison[], v: (x: Comparison) => Verdict) =>
    list.some((x) => x.metric.name === "read_MiBps" && v(x) === "regression");
  // the criterion, as the A/A one: the slowed backend's cell shows a regression in any metric
  const slowCell = (list: readonly Comparison[]) => list.filter((x) => x.cell.framing === "slow");
  if (
    slowCell(compareRows(a, c, options(undefined)).comparisons).some((x) =>
      x.change.verdict === "regression"
    )
  ) injectedCellsRaw++;
  if (
    slowCell(compareRows(a, c, options("raw")).comparisons).some((x) =>
      withControl(x) === "regression"
    )
  ) injectedCellsControl++;
  if (readFlag(injRaw, (x) => x.change.verdict)) injectedPairsRaw++;
  else {
    // a slowdown missed: the repeats' values, to see what hid it
    const slowReads = (rows: readonly Row[]) =>
      rows.filter((r) => r.framing === "slow" && r.stat === "run")
        .map((r) => `${Number(r.read_MiBps).toFixed(0)}@${r.order}`).join(" ");
    console.error(`  missed: slow read_MiBps A ${slowReads(a)} | slowed ${slowReads(c)}`);
  }
  if (readFlag(injCtl, withControl)) injectedPairsControl++;
  for (const x of raw.filter((x) => flagged(x.change.verdict))) {
    console.error(
      `  A/A flagged: ${x.cell.framing} ${x.metric.name} ${x.change.verdict} B/A ${
        x.change.ratio.toFixed(3)
      }`,
    );
  }
  console.error(
    `pair ${i + 1}/${PAIRS}: A/A flagged ${raw.filter((x) => flagged(x.change.verdict)).length} ` +
      `of ${raw.length} (with the control ${
        ctl.filter((x) => flagged(withControl(x))).length
      }); slowdown flagged in ${injRaw.filter((x) => x.change.verdict === "regression").length} ` +
      `of ${injRaw.length} (with the control ${
        injCtl.filter((x) => withControl(x) === "regression").length
      })`,
  );
}
Deno.removeSync(work, { recursive: true });

const pct = (x: number, n: number) => `${(100 * x / Math.max(n, 1)).toFixed(1)}% (${x} of ${n})`;
const size = exactSize(REPEAT, REPEAT, ALPHA);
console.log(`A/A check: ${PAIRS} pairs of 'table ${RUN_ARGS.slice(1, -2).join(" ")}'`);
console.log(`metrics: ${metrics.map((m) => m.name).join(", ")}; threshold 5%, alpha 0.05`);
console.log(
  `theoretical false-positive rate per test: at most ${size.toFixed(4)} (the exact test's ` +
    `size at alpha ${ALPHA} for ${REPEAT} against ${REPEAT}; half of it each way; the threshold ` +
    "only lowers it)",
);
const perCell = 1 - (1 - size) ** metrics.length;
console.log(
  `theoretical rate of a cell with any of its ${metrics.length} metrics flagged: at most ` +
    `${perCell.toFixed(3)} (were the metrics independent)`,
);
console.log(`A/A tests flagged, without the control: ${pct(aaRaw, aaTests)}`);
console.log(`A/A tests flagged, with the control:    ${pct(aaControl, aaTests)}`);
console.log(
  `theoretical rate of a cell with any of its metrics a regression (one side of the test): ` +
    `at most ${(1 - (1 - size / 2) ** metrics.length).toFixed(3)}`,
);
console.log(
  `A/A cells with a regression flagged (the criterion), without the control: ${
    pct(aaCellsRegressionRaw, aaCells)
  }`,
);
console.log(
  `A/A cells with a regression flagged (the criterion), with the control:    ${
    pct(aaCellsRegressionControl, aaCells)
  }`,
);
console.log(
  `A/A cells with any metric flagged, without the control: ${pct(aaCellsAnyRaw, aaCells)}`,
);
console.log(
  `A/A cells with any metric flagged, with the control:    ${pct(aaCellsAnyControl, aaCells)}`,
);
console.log(
  `injected slowdown (slow's reads x${1 + FACTOR}): pairs whose read_MiBps is flagged as a ` +
    `regression, without the control ${pct(injectedPairsRaw, PAIRS)}, with it ${
      pct(injectedPairsControl, PAIRS)
    }`,
);
console.log(
  `injected slowdown: read metrics flagged (${[...READ_METRICS].join(", ")}), without the ` +
    `control ${pct(injectedRaw, injectedTests)}, with it ${pct(injectedControl, injectedTests)}`,
);
console.log(
  `injected slowdown: pairs whose slowed cell shows a regression (the criterion), without the ` +
    `control ${pct(injectedCellsRaw, PAIRS)}, with it ${pct(injectedCellsControl, PAIRS)}`,
);
for (const [name, ratios] of injectedRatios) {
  const sorted = [...ratios].sort((x, y) => x - y);
  console.log(
    `injected slowdown: slow's ${name} B/A per pair, median ${
      (sorted[sorted.length >> 1] ?? NaN).toFixed(3)
    }, range ${(sorted[0] ?? NaN).toFixed(3)} .. ${(sorted[sorted.length - 1] ?? NaN).toFixed(3)}`,
  );
}
console.log(`took ${((Date.now() - started) / 1000).toFixed(0)} s`);
