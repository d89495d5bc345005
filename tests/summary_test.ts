import assert from "node:assert/strict";
import type { Row } from "../lib/report/row.ts";
import { MEAN_OF_RATIOS, summaryRows } from "../lib/report/stats.ts";
import { ratioOfMeans, referenceBackend, summaryText } from "../lib/report/summary.ts";
import { summaryStream } from "../lib/cli/output.ts";
import { columnDoc } from "../lib/workloads/columns.ts";
import { TABLE_KEYS, tableColumnDocs } from "../lib/workloads/table/mod.ts";
import { commandMissing, MAIN, peerTest, tempDir } from "./_helpers.ts";

const KEYS = TABLE_KEYS.map((k) => columnDoc(k));

/** A run row of `framing` at N = `n` with the given write and read rates. */
const run = (framing: string, n: number, write: number, read: number): Row => ({
  framing,
  "size_bytes": 1 << 20,
  N: n,
  cache: "cold",
  fsync: "end",
  "fs_type": "ext4",
  seed: 1,
  "write_MiBps": write,
  "read_MiBps": read,
  stat: "run",
  error: "",
});

Deno.test("summary: each cell with repeats as mean ± sd (min … max), n; single runs left out", () => {
  const rows = [
    run("gsd", 1024, 100, 10),
    run("gsd", 1024, 110, 20),
    run("gsd", 1024, 120, 30),
    run("raw", 1024, 200, 40),
    // one run only, and a failed one: no summary of that cell
    run("raw", 4096, 1, 1),
    { ...run("raw", 4096, 2, 2), error: "boom", "write_MiBps": "" },
  ];
  const text = summaryText(rows, KEYS, ["write_MiBps", "read_MiBps"]);
  const lines = text.trimEnd().split("\n");
  assert.match(lines[0]!, /mean ± sd \(min … max\), n/);
  assert.equal(lines[1], "gsd");
  assert.equal(lines[2], "  write rate  110 ± 10 (100 … 120), n = 3");
  assert.equal(lines[3], "  read rate   20 ± 10 (10 … 30), n = 3");
  assert.equal(lines.length, 4, text);
  assert.equal(summaryText([run("gsd", 1024, 1, 1)], KEYS, ["write_MiBps"]), "");
});

Deno.test("summary: each backend against the reference, hyperfine-style, per cell", () => {
  assert.equal(referenceBackend(["gsd", "raw", "python-gsd"]), "python-gsd");
  assert.equal(referenceBackend(["gsd", "raw"]), "raw");
  assert.equal(referenceBackend(["hdf5", "gsd"]), "hdf5");
  const { ratio, sd } = ratioOfMeans(
    { mean: 120, sd: 12, min: 0, max: 0, n: 2 },
    { mean: 100, sd: 5, min: 0, max: 0, n: 2 },
  );
  assert.equal(ratio, 1.2);
  assert.ok(Math.abs(sd - 1.2 * Math.sqrt(0.01 + 0.0025)) < 1e-12);
  const rows = [
    run("gsd", 1024, 120, 50),
    run("python-gsd", 1024, 100, 100),
    run("gsd", 1024, 120, 50),
    run("python-gsd", 1024, 100, 100),
    run("gsd", 4096, 300, 1),
    run("python-gsd", 4096, 100, 1),
    run("gsd", 4096, 300, 1),
    run("python-gsd", 4096, 100, 1),
  ];
  const text = summaryText(rows, KEYS, ["write_MiBps", "read_MiBps"]);
  // the cells differ in N only: N names them, the keys all share are left out
  assert.match(text, /^gsd \(N 32\^2\)$/m);
  assert.match(
    text,
    /^against python-gsd \(N 32\^2\):\n {2}gsd: 1\.20 ± 0\.00 × the write rate of python-gsd\n {2}gsd: 0\.50 ± 0\.00 × the read rate of python-gsd$/m,
  );
  assert.match(text, /^against python-gsd \(N 64\^2\):\n {2}gsd: 3\.00 ± 0\.00 × the write rate/m);
  assert.doesNotMatch(text, /python-gsd: .* × the/, "the reference is not compared with itself");
});

Deno.test("summary rows: an efficiency's mean is the ratio of the mean rates; JSON keeps the mean of ratios", () => {
  const docs = tableColumnDocs(true);
  const ratios = docs.filter((d) => d.ratio !== undefined);
  assert.deepEqual(ratios.map((d) => d.name), [
    "efficiency_write",
    "efficiency_read",
    "efficiency_random",
  ]);
  assert.deepEqual(ratios[1]!.ratio, { numerator: "read_io_MiBps", denominator: "fio_read_MiBps" });
  // a fast run at 0.9 of fio, a slow one at 0.1: their mean 0.5, the mean rates' ratio 455 / 550
  const runs: Row[] = [
    { framing: "gsd", "write_MiBps": 900, "fio_write_MiBps": 1000, "efficiency_write": 0.9 },
    { framing: "gsd", "write_MiBps": 10, "fio_write_MiBps": 100, "efficiency_write": 0.1 },
  ];
  const rows = summaryRows(runs, ["framing"], ratios);
  const mean = rows.find((r) => r.stat === "mean")!;
  assert.equal(mean.efficiency_write, 455 / 550);
  assert.equal(mean["efficiency_write" + MEAN_OF_RATIOS], 0.5);
  const median = rows.find((r) => r.stat === "median")!;
  assert.equal(median.efficiency_write, 455 / 550);
  assert.equal(
    rows.find((r) => r.stat === "max")!.efficiency_write,
    0.9,
    "max: of the runs' ratios",
  );
  // without the ratio declaration, the plain mean of the runs
  assert.equal(
    summaryRows(runs, ["framing"]).find((r) => r.stat === "mean")!.efficiency_write,
    0.5,
  );
});

Deno.test("summary: after the table on a terminal, else on stderr when it is a terminal, else nowhere", () => {
  const both = { stdout: true, stderr: true };
  assert.equal(summaryStream("table", undefined, both), "stdout");
  assert.equal(summaryStream("table", "out.txt", both), "stderr");
  assert.equal(summaryStream("csv", undefined, both), "stderr");
  assert.equal(summaryStream("table", undefined, { stdout: false, stderr: true }), "stderr");
  assert.equal(summaryStream("json", "r.json", { stdout: false, stderr: false }), undefined);
});

peerTest(
  "summary: table --out on a terminal shows the summary, then the file written",
  () => commandMissing("script"),
  async () => {
    using d = tempDir();
    const out = `${d.path}/r.json`;
    const cli = [Deno.execPath(), "run", "-A", MAIN, "table", "--framing", "gsd,raw"]
      .concat(["--size", "128KiB", "--n", "32^2", "--repeat", "2", "--sample", "64KiB"])
      .concat(["--dir", d.path, "--format", "json", "--out", out]);
    // script(1) gives the command a terminal for stdout and stderr
    const result = await new Deno.Command("script", {
      args: ["-qec", cli.join(" "), "/dev/null"],
      stdout: "piped",
      stderr: "piped",
      env: { NO_COLOR: "1" },
    }).output();
    const text = new TextDecoder().decode(result.stdout).replaceAll("\r", "");
    assert.equal(result.code, 0, text);
    assert.match(text, /summary over the repeats/);
    assert.match(text, /^ {2}write rate +[\d.]+ ± [\d.]+ \([\d.]+ … [\d.]+\), n = 2$/m);
    assert.match(text, /^ {2}gsd: [\d.]+ ± [\d.]+ × the read rate of raw$/m);
    assert.match(text, new RegExp(`wrote ${out}\\n`));
    assert.ok(text.indexOf("summary over") < text.indexOf(`wrote ${out}`));
    const rows = (JSON.parse(Deno.readTextFileSync(out)) as { rows: Row[] }).rows;
    assert.equal(rows.length, 4 + 10);
  },
);
