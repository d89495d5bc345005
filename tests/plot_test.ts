/**
 * Charts: each workload's rows render to SVG (Vega-Lite, headless) that parses as XML, holds one
 * line or bar series per backend and carries its axis titles; `--plot` and `sciobench plot`.
 */
import assert from "node:assert/strict";
import { XMLValidator } from "npm:fast-xml-parser@5.2.5";
import { parseResults, type Results, resultsChart } from "../lib/workloads/charts.ts";
import { renderChart as renderSpec } from "../lib/report/plot.ts";
import type { Workload } from "../lib/workloads/workload.ts";
import { col } from "../lib/report/human.ts";
import { UsageError } from "../lib/core/errors.ts";
import { tableColumnDocs } from "../lib/workloads/table/mod.ts";
import { SCALING_COLUMNS } from "../lib/workloads/scaling/mod.ts";
import { RECORDS_COLUMNS } from "../lib/workloads/records/mod.ts";
import { READERS_COLUMNS } from "../lib/workloads/readers/mod.ts";
import type { Row } from "../lib/report/row.ts";
import { commandMissing, peerTest, peerUsable, runCli, tempDir } from "./_helpers.ts";
import { FONT_DIR, svgToPng } from "../tools/chart_png.ts";

/** The text content of every <text> element of an SVG. */
function texts(svg: string): string[] {
  return [...svg.matchAll(/<text[^>]*>([^<]*)<\/text>/g)].map((m) => m[1]!);
}

/** Distinct stroke colours of line marks (one per series). */
function lineColors(svg: string): Set<string> {
  return new Set(
    [...svg.matchAll(/<g class="mark-line role-mark[^>]*><path[^>]*stroke="([^"]*)"/g)].map((m) =>
      m[1]!
    ),
  );
}

/** Distinct fill colours of bar marks. */
function barColors(svg: string): Set<string> {
  const group = svg.match(/<g class="mark-rect role-mark[^"]*marks"[^>]*>.*?<\/g>/s)?.[0] ?? "";
  return new Set([...group.matchAll(/fill="([^"]*)"/g)].map((m) => m[1]!));
}

/** The built-in workloads with a chart. */
type ChartWorkload = "table" | "scaling" | "records" | "readers";

/** The SVG chart of `workload` (found by name, as a results file's meta names it) of `results`. */
function renderChart(workload: ChartWorkload, results: Results): Promise<string> {
  const w = resultsChart({ meta: { command: workload }, rows: [] }, "test");
  return renderSpec(w.name, w.chart, results);
}

const META = {
  command: "",
  hostname: "node7",
  date: "2026-11-30T10:00:00.000Z",
  "file_system": { type: "lustre", "mount_source": "10.0.0.1@tcp:/scratch" },
};

function rows(workload: ChartWorkload): Row[] {
  const out: Row[] = [];
  const backends = ["gsd", "raw", "hdf5"];
  for (const [k, framing] of backends.entries()) {
    for (const rep of [1, 2]) {
      if (workload === "table") {
        for (const size of [2 ** 20, 2 ** 22]) {
          for (const N of [64, 1024, 16384]) {
            out.push({
              framing,
              size_bytes: size,
              N,
              write_MiBps: 100 * (k + 1) + rep,
              read_MiBps: 300 + k * 10 + rep,
              random_MiBps: 50 + k + rep,
              repeat: rep,
              stat: "run",
              error: "",
            });
          }
        }
      } else if (workload === "scaling") {
        for (const datasets of [5, 10, 15]) {
          out.push({
            framing,
            datasets,
            write_s: datasets * 0.01 * (k + 1) + rep * 1e-3,
            write_user_s: 0.001 * datasets,
            write_sys_s: 0.002 * datasets,
            repeat: rep,
            stat: "run",
          });
        }
      } else if (workload === "records") {
        for (const endian of ["big", "native"]) {
          for (const phase of ["write", "read"]) {
            out.push({
              framing,
              endian,
              phase,
              wall_s: 0.5 + k + rep / 10,
              cpu_s: 0.2 + k / 10,
              repeat: rep,
              stat: "run",
            });
          }
        }
      }
    }
  }
  if (workload === "readers") {
    for (const mode of ["shared", "separate"]) {
      for (const procs of [1, 2, 3, 4]) {
        out.push({ mode, cache: "cold", procs, wall_s: procs * (mode === "shared" ? 1 : 1.5) });
      }
    }
  }
  // A summary row and a failed cell are not drawn.
  out.push({ ...out[0]!, stat: "mean" }, { ...out[0]!, error: "disk full" });
  return out;
}

Deno.test("plot: a chart per workload is SVG that parses as XML, one series per backend, axis titles", async () => {
  const expected: Record<ChartWorkload, { axes: string[]; series: string[] }> = {
    table: {
      axes: ["N (particles per frame)", "MiB/s (÷ fio: ratio), mean ± sd"],
      series: ["gsd", "raw", "hdf5"],
    },
    scaling: { axes: ["datasets written", "time (s, mean ± sd)"], series: ["gsd", "raw", "hdf5"] },
    records: { axes: ["backend", "time (s, mean ± sd)"], series: ["gsd", "raw", "hdf5"] },
    readers: {
      axes: ["reader processes", "wall time (s, mean ± sd)"],
      series: ["shared cold", "separate cold"],
    },
  };
  for (const workload of ["table", "scaling", "records", "readers"] as const) {
    const svg = await renderChart(workload, {
      meta: { ...META, command: workload },
      rows: rows(workload),
    });
    assert.equal(XMLValidator.validate(svg), true, `${workload}: well-formed XML`);
    assert.match(svg, /^<svg [^>]*xmlns="http:\/\/www.w3.org\/2000\/svg"/);
    const t = texts(svg);
    for (const axis of expected[workload].axes) {
      assert.ok(t.includes(axis), `${workload}: axis '${axis}'`);
    }
    for (const s of expected[workload].series) {
      assert.ok(t.includes(s), `${workload}: legend '${s}'`);
    }
    assert.ok(t.some((x) => x.startsWith(`sciobench ${workload}:`)), `${workload}: title`);
    assert.ok(
      t.includes("host node7, lustre (10.0.0.1@tcp:/scratch), 2026-11-30"),
      `${workload}: subtitle`,
    );
    const colors = workload === "records" ? barColors(svg) : lineColors(svg);
    assert.equal(
      colors.size,
      expected[workload].series.length,
      `${workload}: one series per backend`,
    );
  }
  await assert.rejects(
    () => renderChart("table", { meta: {}, rows: [{ framing: "raw", stat: "mean" }] }),
    /no measured rows/,
  );
});

Deno.test("plot: results read back from CSV, JSON lines and JSON", () => {
  const csv = parseResults(
    "framing,N,write_MiBps,error\nraw,64,1.5,\nraw,64,,disk full\n",
    "r.csv",
  );
  assert.deepEqual(csv.rows[0], { framing: "raw", N: 64, write_MiBps: 1.5, error: "" });
  const jsonl = parseResults(
    '{"meta":{"command":"table"},"columns":["framing"]}\n{"framing":"raw"}\n{"interrupted":true}\n',
    "r.jsonl",
  );
  assert.deepEqual([jsonl.meta.command, jsonl.rows.length], ["table", 1]);
  const json = parseResults('{"meta":{"command":"scaling"},"rows":[{"framing":"f77"}]}', "r.json");
  assert.deepEqual([json.meta.command, json.rows.length], ["scaling", 1]);
  assert.throws(() => parseResults("{nope", "x.json"), /not sciobench results/);
});

Deno.test("plot: the chart is the meta's command's, or the workload whose columns a CSV declares", () => {
  const csv = (columns: readonly string[]) =>
    parseResults(`${columns.join(",")}\n${columns.map(() => "1").join(",")}\n`, "r.csv");
  for (
    const [workload, columns] of [
      ["table", tableColumnDocs(false).map((d) => d.name)],
      ["table", tableColumnDocs(true).map((d) => d.name)],
      ["scaling", SCALING_COLUMNS],
      ["records", RECORDS_COLUMNS],
      ["readers", READERS_COLUMNS],
    ] as const
  ) {
    assert.equal(resultsChart(csv(columns), "r.csv").name, workload);
    // under MPI the rank columns follow the workload's own
    assert.equal(resultsChart(csv([...columns, "ranks", "rank", "host"]), "r.csv").name, workload);
  }
  // a few telling columns are not a workload's results: nothing is guessed
  assert.throws(
    () => resultsChart(csv(["framing", "datasets", "write_s", "write_user_s"]), "r.csv"),
    /r\.csv: not the results of table, scaling, records, readers \(/,
  );
  const named = parseResults('{"meta":{"command":"records"},"rows":[]}', "r.json");
  assert.equal(resultsChart(named, "r.json").name, "records");
});

Deno.test("plot: a results file is drawn by the chart of the workload that wrote it, registered ones too", () => {
  const line = resultsChart({ meta: { command: "scaling" }, rows: [] }, "x").chart;
  const toy = (chart: Workload["chart"]): Workload => ({
    name: "toy",
    summary: "",
    help: { title: "", intro: "" },
    flags: [],
    columns: [col("step", "", "count", "the step")],
    keys: [],
    human: [],
    chart,
    plan: () => {
      throw new Error("not run");
    },
  });
  const withChart = toy(line);
  const named = { meta: { command: "toy" }, rows: [] };
  assert.equal(resultsChart(named, "t.json", [withChart]), withChart);
  const csv = parseResults("step,extra\n1,2\n", "t.csv");
  assert.equal(resultsChart(csv, "t.csv", [withChart]), withChart, "by its declared columns");
  // a workload without a chart: one line naming it and those that have one
  assert.throws(
    () => resultsChart(named, "t.json", [toy(undefined), withChart]),
    (e: Error) => e instanceof UsageError && e.message === "t.json: 'toy' has no chart (toy do)",
  );
});

Deno.test("plot: --plot on a workload and 'sciobench plot' on its CSV; no overwrite without --force", async () => {
  using d = tempDir();
  const chart = `${d.path}/scaling.svg`;
  const csvPath = `${d.path}/scaling.csv`;
  const r = await runCli([
    "scaling",
    ...["--framing", "raw,f77", "--datasets", "1,2", "--shape", "8x8", "--repeat", "2"],
    ...["--dir", d.path, "--out", csvPath, "--plot", chart],
  ]);
  assert.equal(r.code, 0, r.stderr);
  const svg = Deno.readTextFileSync(chart);
  assert.equal(XMLValidator.validate(svg), true);
  assert.ok(texts(svg).includes("datasets written"));
  assert.equal(lineColors(svg).size, 2);
  const again = await runCli(["plot", csvPath, "-o", chart]);
  assert.equal(again.code, 1);
  assert.match(again.stderr, /exists; refusing to overwrite it/);
  const forced = await runCli(["plot", csvPath, "-o", chart, "--force"]);
  assert.equal(forced.code, 0, forced.stderr);
  assert.equal(XMLValidator.validate(Deno.readTextFileSync(chart)), true);
  const bad = await runCli(["read", csvPath, "--plot", `${d.path}/x.svg`]);
  assert.equal(bad.code, 2);
  assert.match(bad.stderr, /--plot: 'read' has no chart/);
  const png = await runCli(["scaling", "--datasets", "1", "--plot", `${d.path}/x.png`]);
  assert.equal(png.code, 2);
  assert.match(png.stderr, /ending in \.svg/);
});

/** null when the charts' font is installed, else why not. */
function fontMissing(): string | null {
  try {
    if (Deno.statSync(FONT_DIR).isDirectory) return null;
  } catch {
    // not there
  }
  return `no DejaVu fonts in ${FONT_DIR} (apt-get install fonts-dejavu-core)`;
}

Deno.test("plot: each workload's chart renders to a PNG with its text drawn (resvg, dev only)", async () => {
  for (const workload of ["table", "scaling", "records", "readers"] as const) {
    const svg = await renderChart(workload, {
      meta: { ...META, command: workload },
      rows: rows(workload),
    });
    const size = /^<svg [^>]*width="(\d+)" height="(\d+)"/.exec(svg);
    assert.ok(size, `${workload}: SVG size`);
    const image = svgToPng(svg, 1);
    assert.deepEqual([image.width, image.height], [Number(size[1]), Number(size[2])]);
    assert.deepEqual([...image.png.subarray(0, 8)], [137, 80, 78, 71, 13, 10, 26, 10], "PNG");
    // Dark pixels where the title is (text drawn with a real font); coloured lines or bars below.
    const count = (x0: number, y0: number, x1: number, y1: number, limit: number) => {
      let n = 0;
      for (let y = y0; y < y1; y++) {
        for (let x = x0; x < x1; x++) {
          const i = (y * image.width + x) * 4;
          if (image.pixels[i]! + image.pixels[i + 1]! + image.pixels[i + 2]! < limit) n++;
        }
      }
      return n;
    };
    const dark = (x0: number, y0: number, x1: number, y1: number) => count(x0, y0, x1, y1, 300);
    const coloured = (x0: number, y0: number, x1: number, y1: number) => count(x0, y0, x1, y1, 600);
    // Text needs a font: DejaVu (fonts-dejavu-core), which a machine may not have.
    if (peerUsable("fonts-dejavu-core", fontMissing())) {
      assert.ok(dark(0, 0, 300, 30) > 200, `${workload}: the title is drawn`);
    }
    assert.ok(
      coloured(0, 40, image.width, image.height) > 1500,
      `${workload}: the plot is drawn`,
    );
  }
});

Deno.test("plot: axes start at 0 (no negative ticks from wide error bars); readers' legend names the dashed model", async () => {
  const noisy: Row[] = [];
  for (const framing of ["raw", "gsd"]) {
    for (const [rep, t] of [[1, 0.001], [2, 0.2], [3, 0.001]] as const) {
      for (const datasets of [1, 2]) {
        noisy.push({
          framing,
          datasets,
          write_s: t,
          write_user_s: t / 2,
          write_sys_s: 0,
          repeat: rep,
        });
      }
    }
  }
  const svg = await renderChart("scaling", { meta: {}, rows: noisy });
  const labels = texts(svg).filter((t) => /^[−-]?[\d.]+$/.test(t));
  assert.ok(labels.length > 4, labels.join(" "));
  assert.deepEqual(labels.filter((t) => /^[−-]/.test(t)), [], "no negative tick labels");
  const readers = texts(await renderChart("readers", { meta: {}, rows: rows("readers") }));
  assert.ok(readers.includes("measured") && readers.includes("seed: procs × time of 1"));
});

peerTest(
  "plot: table --baseline fio's fio_* columns are a dashed fio line in each panel",
  () => commandMissing("fio"),
  async () => {
    using d = tempDir("sciobench-plot-fio-");
    const out = `${d.path}/fio.jsonl`;
    const r = await runCli([
      ...["table", "--framing", "raw,gsd", "--size", "4M", "--n", "32^2,64^2", "--no-warmup"],
      ...["--repeat", "2", "--baseline", "fio", "--dir", d.path, "--format", "jsonl", "--out", out],
    ]);
    assert.equal(r.code, 0, r.stderr);
    const results = parseResults(Deno.readTextFileSync(out), out);
    const svg = await renderChart("table", results);
    // a fio point per phase and N at the mean of the fio_* column over that N's run rows
    const points = [
      ...svg.matchAll(
        /aria-label="N \(particles per frame\): (\d+); [^"]*: ([\d.]+); baseline: fio" role="graphics-symbol" aria-roledescription="point"/g,
      ),
    ].map((m) => [Number(m[1]), Number(m[2])] as const);
    const runs = results.rows.filter((row) => row.stat === "run");
    const expected = ["write", "read", "random"].flatMap((phase) =>
      [1024, 4096].map((n) => {
        const at = runs.filter((row) => row.N === n).map((row) =>
          Number(row[`fio_${phase}_MiBps`])
        );
        return [n, at.reduce((a, v) => a + v, 0) / at.length] as const;
      })
    );
    assert.equal(points.length, expected.length, JSON.stringify(points));
    for (const [n, mean] of expected) {
      assert.ok(
        points.some(([pn, pv]) => pn === n && Math.abs(pv - mean) <= 1e-6 * mean),
        `fio at N=${n}: ${mean} in ${JSON.stringify(points)}`,
      );
    }
    assert.match(
      svg,
      /baseline: fio" role="graphics-symbol" aria-roledescription="line mark"[^>]*stroke-dasharray="6,4"/,
    );
    // the efficiency (ours / fio) in panels of its own, a point per backend and N at its mean
    for (const phase of ["write", "read", "random"]) {
      assert.ok(texts(svg).includes(`${phase} ÷ fio`), phase);
    }
    const measured = [
      ...svg.matchAll(
        /aria-label="N \(particles per frame\): [\d.]+; [^"]*: ([\d.]+); backend: (\w+)" role="graphics-symbol" aria-roledescription="point"/g,
      ),
    ].map((m) => [m[2], Number(m[1])] as const);
    for (const framing of ["raw", "gsd"]) {
      for (const n of [1024, 4096]) {
        const at = runs.filter((row) => row.N === n && row.framing === framing);
        const mean = at.reduce((a, row) => a + Number(row.efficiency_read), 0) / at.length;
        assert.ok(
          measured.some(([f, v]) => f === framing && Math.abs(v - mean) <= 1e-6 * mean),
          `efficiency_read of ${framing} at N=${n}: ${mean}`,
        );
      }
    }
    assert.ok(texts(svg).includes("baseline") && texts(svg).includes("fio"), "legend");
    assert.equal(lineColors(svg).size, 3, "two backends and the black fio line");
    assert.ok(lineColors(svg).has("black"), "fio is black, not a series");
  },
);

Deno.test("plot: N ticks are the run's N values, as the run labels them", async () => {
  const svg = await renderChart("table", {
    meta: { ...META, command: "table" },
    rows: rows("table"),
  });
  const ticks = texts(svg).filter((t) => /^[\d,^]+$/.test(t) && !/^0$/.test(t));
  for (const label of ["8^2", "32^2", "128^2"]) assert.ok(ticks.includes(label), ticks.join(" "));
  assert.ok(!ticks.includes("1,000") && !ticks.includes("10,000"), ticks.join(" "));
});

Deno.test("plot: backends' error bars at one N stand apart, and no point sits on an axis", async () => {
  const svg = await renderChart("table", {
    meta: { ...META, command: "table" },
    rows: rows("table"),
  });
  const points = [
    ...svg.matchAll(
      /aria-label="N \(particles per frame\): ([\d.]+); [^"]*; backend: (\w+)" role="graphics-symbol" aria-roledescription="point" transform="translate\(([\d.]+),([\d.]+)\)"/g,
    ),
  ].map((m) => ({ x: Number(m[1]), backend: m[2]!, px: Number(m[3]), py: Number(m[4]) }));
  assert.equal(points.length, 3 * 3 * 3 * 2, "a point per backend, N, phase and size");
  for (const n of [64, 1024, 16384]) {
    const at = points.filter((p) => Math.abs(Math.log(p.x / n)) < Math.log(1.3));
    const byBackend = new Map(at.map((p) => [p.backend, p.x]));
    assert.equal(byBackend.size, 3, `three backends at N=${n}`);
    assert.equal(new Set(byBackend.values()).size, 3, `apart at N=${n}: ${[...byBackend]}`);
  }
  // the error bars are drawn where their points are
  const bars = [
    ...svg.matchAll(/aria-roledescription="errorbar" transform="translate\(([\d.]+),/g),
  ]
    .map((m) => Number(m[1]));
  assert.ok(points.every((p) => bars.some((b) => Math.abs(b - p.px) < 0.01)), "bars at the points");
  // N at powers of ten, where a log axis would begin: the smallest point still stands off it
  const decades = rows("table").filter((r) => r.framing === "raw").map((r) => ({
    ...r,
    N: r.N === 64 ? 100 : r.N === 1024 ? 1000 : 10000,
  }));
  const lone = await renderChart("table", { meta: { command: "table" }, rows: decades });
  const xs = [
    ...lone.matchAll(/aria-roledescription="point" transform="translate\(([\d.]+),/g),
  ].map((m) => Number(m[1]));
  assert.ok(xs.length > 0 && xs.every((x) => x >= 10), `off the y axis: ${Math.min(...xs)}`);
});
