/**
 * Results an earlier sciobench wrote (tests/testdata/results_fc26ef3/: `table`, `scaling`,
 * `records`, `readers` and `read` as JSON, JSON lines and CSV, made by commit fc26ef3, before
 * the latency, per-phase cache and order columns existed) still work with `compare`, `plot`,
 * `report` and `runs`; a metric such a file lacks is named in one line, not silently empty.
 * @module
 */
import assert from "node:assert/strict";
import { runCli, tempDir } from "./_helpers.ts";

const DATA = new URL("./testdata/results_fc26ef3/", import.meta.url).pathname;
const file = (name: string) => `${DATA}${name}`;

Deno.test("previous results: compare matches a CSV (no meta) with JSON lines of the same run", async () => {
  const r = await runCli(["compare", "--format", "csv", file("table.csv"), file("table.jsonl")]);
  assert.equal(r.code, 0, r.stderr);
  const lines = r.stdout.trim().split("\n");
  // 2 backends x 5 metrics, one cell each
  assert.equal(lines.length, 1 + 10, r.stdout);
  assert.match(lines[1]!, /^.*raw.*open_ms/);
  assert.equal(r.stderr, "");
});

Deno.test("previous results: compare --by order says in one line that the file has no order", async () => {
  const r = await runCli(["compare", "--by", "order", file("table.json")]);
  assert.equal(r.code, 2);
  assert.match(
    r.stderr,
    /^sciobench: error: .*table\.json: no backend measured both first and later/,
  );
  assert.equal(r.stderr.trim().split("\n").length, 1);
});

Deno.test("previous results: a metric the earlier release did not measure is named, in one line", async () => {
  using d = tempDir("sciobench-prev-");
  const now = `${d.path}/now.json`;
  const t = await runCli([
    ...["table", "--framing", "raw,gsd", "--size", "1M", "--n", "32^2", "--no-warmup"],
    ...["--repeat", "2", "--dir", d.path, "--format", "json", "-o", now],
  ]);
  assert.equal(t.code, 0, t.stderr);
  const r = await runCli([
    ...["compare", "--format", "csv", "--metric", "random_p99_us,read_MiBps"],
    ...[file("table.json"), now],
  ]);
  assert.equal(r.code, 0, r.stderr);
  assert.deepEqual(r.stderr.trim().split("\n"), [
    `sciobench: ${file("table.json")} has no random_p99_us (written by sciobench ` +
    "fc26ef394c34): left out of the comparison",
  ]);
  const [header, ...rows] = r.stdout.trim().split("\n").map((l) => l.split(","));
  const at = header!.indexOf("metric");
  const metrics = new Set(rows.map((row) => row[at]));
  assert.ok(metrics.has("read_MiBps") && !metrics.has("random_p99_us"), r.stdout);
});

Deno.test("previous results: plot and report draw every workload's file, without a warning", async () => {
  using d = tempDir("sciobench-prev-");
  for (const w of ["table", "scaling", "records", "readers"]) {
    const r = await runCli(["plot", file(`${w}.json`), "-o", `${d.path}/${w}.svg`]);
    assert.equal(r.code, 0, `${w}: ${r.stderr}`);
    assert.equal(r.stderr, "", w);
    assert.match(Deno.readTextFileSync(`${d.path}/${w}.svg`), /<svg/);
  }
  const names = ["table.json", "table.jsonl", "scaling.json", "records.json", "readers.json"];
  const html = `${d.path}/report.html`;
  const r = await runCli(["report", ...names.map(file), "-o", html, "--format", "csv"]);
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.stderr, "");
  // the two table files are one workload: compared; every file charted
  assert.deepEqual(r.stdout.trim().split("\n")[1], `${html},5,1,6`);
});

Deno.test("previous results: runs lists a store holding an earlier release's JSON lines", async () => {
  using d = tempDir("sciobench-prev-");
  Deno.copyFileSync(file("table.jsonl"), `${d.path}/table.jsonl`);
  const r = await runCli(["runs", "--store", d.path, "--format", "csv"]);
  assert.equal(r.code, 0, r.stderr);
  const lines = r.stdout.trim().split("\n");
  assert.equal(lines.length, 2, r.stdout);
  assert.match(lines[1]!, /table.*ext4.*0\.1\.0/);
  const c = await runCli(["compare", "--store", d.path, "--format", "csv", "table", "table"]);
  assert.equal(c.code, 0, c.stderr);
});

Deno.test("compare -o FILE: written whole, never over a file without --force, no temporary left", async () => {
  using d = tempDir("sciobench-prev-");
  const out = `${d.path}/cmp.csv`;
  const args = ["compare", "--format", "csv", file("table.csv"), file("table.jsonl"), "-o", out];
  const r = await runCli(args);
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.stdout, "");
  const first = Deno.readTextFileSync(out);
  assert.match(first, /^a,b,framing,/);
  assert.equal(first.trim().split("\n").length, 11);
  Deno.writeTextFileSync(out, "mine\n");
  const again = await runCli(args);
  assert.equal(again.code, 1);
  assert.match(again.stderr, /cmp\.csv exists; refusing to overwrite it \(pass --force/);
  assert.equal(Deno.readTextFileSync(out), "mine\n");
  const forced = await runCli([...args, "--force"]);
  assert.equal(forced.code, 0, forced.stderr);
  assert.equal(Deno.readTextFileSync(out), first);
  assert.deepEqual([...Deno.readDirSync(d.path)].map((e) => e.name), ["cmp.csv"]);
});
