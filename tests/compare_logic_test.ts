/**
 * compare's cell matching, verdicts and control normalisation on rows made here, and the metrics
 * it compares by default.
 */
import assert from "node:assert/strict";
import {
  compareBackends,
  type CompareOptions,
  compareOrders,
  compareRows,
} from "../lib/report/compare/compare.ts";
import { metaDifferences } from "../lib/report/compare/meta.ts";
import type { Row } from "../lib/report/row.ts";
import { chooseMetrics } from "../lib/workloads/results.ts";
import { loaderWorkload } from "../lib/workloads/loader/workload.ts";
import { recordsWorkload } from "../lib/workloads/records/workload.ts";
import { tableWorkload } from "../lib/workloads/table/workload.ts";
import type { Workload } from "../lib/workloads/workload.ts";

const OPTIONS: CompareOptions = {
  keys: ["framing", "N"],
  backendColumn: "framing",
  metrics: [{ name: "read_MiBps", better: "higher" }, { name: "open_ms", better: "lower" }],
  threshold: 0.05,
  alpha: 0.05,
  confidence: 0.95,
  control: "raw",
};

/** Rows of one run: each backend's five repeats, with a per-repeat wobble shared by the run. */
function run(
  scale: Record<string, number>,
  drift = 1,
  wobble = [1, 1.02, 0.98, 1.01, 0.99],
): Row[] {
  const rows: Row[] = [];
  for (let repeat = 1; repeat <= wobble.length; repeat++) {
    for (const framing of Object.keys(scale)) {
      const w = wobble[repeat - 1]! * drift * scale[framing]!;
      rows.push({
        framing,
        N: 1024,
        repeat,
        stat: "run",
        error: "",
        read_MiBps: 1000 * w,
        open_ms: 2 / w,
      });
    }
  }
  // summary rows and failed cells are never compared
  rows.push({ framing: "gsd", N: 1024, stat: "mean", read_MiBps: 1 });
  rows.push({ framing: "gsd", N: 1024, stat: "run", error: "boom", read_MiBps: 1 });
  return rows;
}

Deno.test("compare: a backend 20% slower is a regression, also relative to the control", () => {
  const r = compareRows(run({ raw: 1, gsd: 1 }), run({ raw: 1, gsd: 0.8 }), OPTIONS);
  const gsd = r.comparisons.find((c) =>
    c.cell.framing === "gsd" && c.metric.name === "read_MiBps"
  )!;
  assert.equal(gsd.change.verdict, "regression");
  assert.ok(Math.abs(gsd.change.ratio - 0.8) < 0.02);
  assert.equal(gsd.relative?.verdict, "regression");
  assert.equal(gsd.machineChanged, false);
  // a time metric: larger is the regression
  const open = r.comparisons.find((c) => c.cell.framing === "gsd" && c.metric.name === "open_ms")!;
  assert.equal(open.change.verdict, "regression");
  assert.ok(open.change.ratio > 1.2);
  const raw = r.comparisons.find((c) =>
    c.cell.framing === "raw" && c.metric.name === "read_MiBps"
  )!;
  assert.equal(raw.change.verdict, "same");
  assert.equal(raw.relative, undefined);
  assert.equal(gsd.a.n, 5);
});

Deno.test("compare: the whole machine 20% slower is said to be the machine", () => {
  const r = compareRows(run({ raw: 1, gsd: 1 }), run({ raw: 1, gsd: 1 }, 0.8), OPTIONS);
  const gsd = r.comparisons.find((c) =>
    c.cell.framing === "gsd" && c.metric.name === "read_MiBps"
  )!;
  assert.equal(gsd.change.verdict, "regression");
  assert.equal(gsd.control?.verdict, "regression");
  assert.notEqual(gsd.relative?.verdict, "regression");
  assert.equal(gsd.machineChanged, true);
  assert.equal(gsd.verdict, "same", "the answer: no regression of gsd");
  // nor of the control, which every other backend followed
  const raw = r.comparisons.find((c) =>
    c.cell.framing === "raw" && c.metric.name === "read_MiBps"
  )!;
  assert.equal(raw.change.verdict, "regression");
  assert.equal(raw.machineChanged, true);
  assert.equal(raw.verdict, "same");
});

Deno.test("compare: a control that moved alone keeps its regression", () => {
  // raw 20% slower in B, gsd and hdf5 unchanged: raw's own regression
  const alone = compareRows(
    run({ raw: 1, gsd: 1, hdf5: 1 }),
    run({ raw: 0.8, gsd: 1, hdf5: 1 }),
    OPTIONS,
  ).comparisons.find((c) => c.cell.framing === "raw" && c.metric.name === "read_MiBps")!;
  assert.equal(alone.verdict, "regression");
  assert.equal(alone.machineChanged, false);
  // raw and gsd 20% slower, hdf5 unchanged: not every backend followed the control
  const partly = compareRows(
    run({ raw: 1, gsd: 1, hdf5: 1 }),
    run({ raw: 0.8, gsd: 0.8, hdf5: 1 }),
    OPTIONS,
  ).comparisons.find((c) => c.cell.framing === "raw" && c.metric.name === "read_MiBps")!;
  assert.equal(partly.verdict, "regression");
  assert.equal(partly.machineChanged, false);
});

Deno.test("compare: the control is the answer's reference only where it moved itself", () => {
  const gsdOf = (a: Row[], b: Row[]) =>
    compareRows(a, b, OPTIONS).comparisons.find((c) =>
      c.cell.framing === "gsd" && c.metric.name === "read_MiBps"
    )!;
  // the control's median 10% higher in B by noise of its own (not significant): gsd, unchanged,
  // is no regression, though relative to that median it is 10% slower
  const noisy = gsdOf(
    run({ raw: 1, gsd: 1 }),
    run({ raw: 1, gsd: 1 }).map((r) =>
      r.framing === "raw" && Number(r.repeat) >= 3
        ? { ...r, read_MiBps: 1100 + Number(r.repeat) }
        : r
    ),
  );
  assert.equal(noisy.control?.verdict, "same");
  assert.equal(noisy.relative?.verdict, "regression");
  assert.equal(noisy.verdict, "same");
  // the machine 20% faster in B (the control moved) and gsd unchanged: gsd fell behind it
  const hidden = gsdOf(run({ raw: 1, gsd: 1 }), run({ raw: 1.2, gsd: 1 }));
  assert.equal(hidden.change.verdict, "same");
  assert.equal(hidden.control?.verdict, "improvement");
  assert.equal(hidden.verdict, "regression");
  // no control moved, a real slowdown: the plain change
  const slower = gsdOf(run({ raw: 1, gsd: 1 }), run({ raw: 1, gsd: 0.8 }));
  assert.equal(slower.verdict, "regression");
});

Deno.test("compare: noise alone is not a change; 3 repeats give no verdict", () => {
  const a = run({ raw: 1, gsd: 1 }, 1, [1, 1.03, 0.97, 1.01, 0.99]);
  const b = run({ raw: 1, gsd: 1 }, 1, [0.99, 1.02, 1.0, 0.98, 1.03]);
  for (const c of compareRows(a, b, OPTIONS).comparisons) assert.equal(c.change.verdict, "same");
  const three = compareRows(
    run({ raw: 1, gsd: 1 }, 1, [1, 1, 1]),
    run({ raw: 1, gsd: 0.5 }, 1, [1, 1, 1]),
    OPTIONS,
  );
  const gsd = three.comparisons.find((c) => c.cell.framing === "gsd")!;
  assert.equal(gsd.change.verdict, "too-few");
  assert.ok(gsd.change.minP >= 0.1);
  // nor does a control that moved with the backend make one
  const moved = compareRows(
    run({ raw: 1, gsd: 1 }, 1, [1, 1, 1]),
    run({ raw: 1, gsd: 1 }, 0.8, [1, 1, 1]),
    OPTIONS,
  ).comparisons.find((c) => c.cell.framing === "gsd")!;
  assert.equal(moved.verdict, "too-few");
});

Deno.test("compare: cells on one side only are listed", () => {
  const b = run({ raw: 1, gsd: 1, hdf5: 1 });
  const r = compareRows(run({ raw: 1, gsd: 1 }), b, OPTIONS);
  assert.deepEqual(r.onlyB, [{ framing: "hdf5", N: 1024 }]);
  assert.deepEqual(r.onlyA, []);
});

Deno.test("compare --by: backends of one run against a reference backend", () => {
  const r = compareBackends(run({ raw: 1, gsd: 0.5, hdf5: 1 }), "raw", OPTIONS);
  const gsd = r.comparisons.find((c) =>
    c.cell.framing === "gsd" && c.metric.name === "read_MiBps"
  )!;
  assert.equal(gsd.change.verdict, "regression");
  assert.ok(Math.abs(gsd.change.ratio - 0.5) < 0.01);
  const hdf5 = r.comparisons.find((c) =>
    c.cell.framing === "hdf5" && c.metric.name === "read_MiBps"
  )!;
  assert.equal(hdf5.change.verdict, "same");
});

Deno.test("compare: the facts that differ between runs", () => {
  const base = {
    version: "0.1.0",
    kernel: "6.1",
    "file_system": { type: "ext4" },
    libraries: [{ name: "hdf5", version: "1.10.8" }],
    options: { repeat: 5 },
  };
  const d = metaDifferences([base, {
    ...base,
    kernel: "6.2",
    "file_system": { type: "xfs" },
    libraries: [{ name: "hdf5", version: "1.14.0" }],
  }]);
  assert.deepEqual(d.map((x) => x.field), ["kernel", "file_system.type", "libraries.hdf5"]);
  assert.deepEqual(d[0]!.values, ["6.1", "6.2"]);
  assert.deepEqual(metaDifferences([base, {}]), []);
});

Deno.test("compare --by order: a backend slower when measured first is an order effect", () => {
  // ten repeats, the two backends alternating places; gsd reads 30% slower when it goes first
  const rows: Row[] = [];
  for (let repeat = 1; repeat <= 10; repeat++) {
    const order = repeat % 2 === 1 ? ["raw", "gsd"] : ["gsd", "raw"];
    for (const [i, framing] of order.entries()) {
      const wobble = 1 + ((repeat * 7) % 5 - 2) / 100;
      const slow = framing === "gsd" && i === 0 ? 0.7 : 1;
      rows.push({
        framing,
        N: 1024,
        repeat,
        order: i + 1,
        read_MiBps: 1000 * wobble * slow,
        open_ms: 2 / wobble,
      });
    }
  }
  const { control: _, ...options } = OPTIONS;
  const found = compareOrders(rows, options).comparisons;
  const verdict = (framing: string, metric: string) =>
    found.find((c) => c.cell.framing === framing && c.metric.name === metric)?.change.verdict;
  // later (B) against first (A): gsd improves when it goes second; raw has no order effect
  assert.equal(verdict("gsd", "read_MiBps"), "improvement");
  assert.equal(verdict("raw", "read_MiBps"), "same");
  assert.equal(verdict("gsd", "open_ms"), "same");
  assert.equal(found.find((c) => c.cell.framing === "gsd")!.a.n, 5);
  // rows without the column: nothing to compare
  assert.deepEqual(compareOrders(rows.map(({ order: _o, ...r }) => r), options).comparisons, []);
});

Deno.test("compare: relative to the control's median in its run, not to the same repeat's value", () => {
  // B: the control's first repeat an outlier (the first timed phase of a process), gsd 20% slower
  const a = run({ raw: 1, gsd: 1 });
  const b = run({ raw: 1, gsd: 0.8 }).map((r) =>
    r.framing === "raw" && r.repeat === 1 ? { ...r, read_MiBps: 400 } : r
  );
  const gsd = compareRows(a, b, OPTIONS).comparisons.find((c) =>
    c.cell.framing === "gsd" && c.metric.name === "read_MiBps"
  )!;
  // each gsd value over raw's median (about 1000): the outlier moves no ratio
  assert.equal(gsd.relative?.verdict, "regression");
  assert.ok(Math.abs(gsd.relative!.ratio - 0.8) < 0.03, String(gsd.relative!.ratio));
});

Deno.test("compare: each phase's median latency is compared by default, its tail only when asked", () => {
  const names = (w: Workload) => chooseMetrics(w).map((m) => m.name);
  const table = names(tableWorkload as unknown as Workload);
  for (const m of ["read_MiBps", "random_MiBps", "read_p50_us", "random_p50_us"]) {
    assert.ok(table.includes(m), `${m}: ${table}`);
  }
  assert.ok(!table.includes("read_p99_us"), `${table}`);
  assert.ok(names(recordsWorkload as unknown as Workload).includes("record_p50_us"));
  assert.ok(names(loaderWorkload as unknown as Workload).includes("batch_p50_us"));
  assert.deepEqual(
    chooseMetrics(tableWorkload as unknown as Workload, ["read_p99_us"]),
    [{ name: "read_p99_us", better: "lower" }],
  );
});

Deno.test("compare: a backend that moved as the control did, though not significantly, did not change", () => {
  // B: the machine about 12% slower; raw's repeats too noisy for that to be significant, gsd's
  // all 12% slower: gsd's own change is significant, but it is the control's
  const a = run({ raw: 1, gsd: 1 });
  const b = run({ raw: 1, gsd: 0.88 }).map((r) =>
    r.framing === "raw" && typeof r.read_MiBps === "number" && Number(r.repeat) <= 3
      ? { ...r, read_MiBps: r.read_MiBps * 0.85 }
      : r
  );
  const gsd = compareRows(a, b, OPTIONS).comparisons.find((c) =>
    c.cell.framing === "gsd" && c.metric.name === "read_MiBps"
  )!;
  assert.equal(gsd.change.verdict, "regression");
  assert.notEqual(gsd.control?.verdict, "regression");
  assert.notEqual(gsd.relative?.verdict, "regression");
  assert.equal(gsd.verdict, "same");
  assert.equal(gsd.machineChanged, true);
});
