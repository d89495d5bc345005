/**
 * `sciobench compare`, the results store and `sciobench runs` on real runs: two small
 * `table --repeat 5` runs (raw and gsd) written to one store at once, listed, compared by
 * `latest~1 latest` and as files in every format; `--fail-on regression` on a backend whose reads
 * are delayed (tests/_slow_backend.ts) and on an A/A pair; a killed run leaves nothing in the
 * store; the refusals.
 * @module
 */
import assert from "node:assert/strict";
import { PERMISSIONS, runCli, spawnCli, tempDir } from "./_helpers.ts";
import { parseResults } from "../lib/report/plot.ts";
import { SLOW_FACTOR_ENV } from "./_slow_backend.ts";

const SMALL = ["--size", "4M", "--n", "32^2", "--sample", "2M", "--repeat", "5"];
const SLOW_CLI = new URL("./_slow_backend.ts", import.meta.url).pathname;

/** Runs the CLI with `slow` registered, its reads delayed by `factor`. */
async function slowCli(args: string[], factor: number) {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", "--quiet", ...PERMISSIONS, SLOW_CLI, ...args],
    stdout: "piped",
    stderr: "piped",
    env: { NO_COLOR: "1", [SLOW_FACTOR_ENV]: String(factor) },
  }).output();
  const d = new TextDecoder();
  return { code: out.code, stdout: d.decode(out.stdout), stderr: d.decode(out.stderr) };
}

/** The store's run files (no temporary ones). */
function storeFiles(dir: string): string[] {
  return [...Deno.readDirSync(dir)].map((e) => e.name).sort();
}

Deno.test("compare: two table runs at once go to the store, runs lists them, compare reads them", async () => {
  using dir = tempDir();
  const store = `${dir.path}/store`;
  Deno.mkdirSync(store);
  const table = (out: string) =>
    runCli(["table", "--framing", "raw,gsd", ...SMALL, "-o", out, "--format", "csv"], {
      env: { SCIOBENCH_STORE: store },
    });
  const [a, b] = await Promise.all([table(`${dir.path}/a.csv`), table(`${dir.path}/b.csv`)]);
  assert.equal(a.code, 0, a.stderr);
  assert.equal(b.code, 0, b.stderr);
  const files = storeFiles(store);
  assert.equal(files.length, 2, files.join(" "));
  assert.ok(files.every((f) => /^\d{8}T\d{9}Z-[0-9a-f]{8}\.jsonl$/.test(f)), files.join(" "));
  // each stored run is results: its meta with the run id, every run row
  for (const f of files) {
    const r = parseResults(Deno.readTextFileSync(`${store}/${f}`), f);
    assert.equal(r.meta.run_id, f.slice(0, -".jsonl".length));
    assert.equal(r.meta.command, "table");
    assert.equal(r.rows.filter((row) => row.stat === "run").length, 10);
  }

  const runs = await runCli(["runs", "--store", store, "--format", "json"]);
  assert.equal(runs.code, 0, runs.stderr);
  const listed = JSON.parse(runs.stdout) as { id: string; command: string; summary: string }[];
  assert.deepEqual(listed.map((r) => `${r.id}.jsonl`).sort(), files);
  assert.ok(listed.every((r) => r.command === "table" && r.summary === "10 rows; raw, gsd"));
  const none = await runCli(["runs", "--store", store, "--command", "records"]);
  assert.equal(none.code, 0, none.stderr);
  assert.equal(none.stdout.trim().split("\n").length, 1, none.stdout);

  const latest = await runCli(["compare", "--store", store, "latest~1", "latest"]);
  assert.equal(latest.code, 0, latest.stderr);
  assert.match(latest.stdout, /latest against latest~1/);
  for (const m of ["write_MiBps", "read_MiBps", "random_MiBps", "random_ms"]) {
    assert.match(latest.stdout, new RegExp(`^raw +${m} `, "m"));
    assert.match(latest.stdout, new RegExp(`^gsd +${m} `, "m"));
  }
  const tooMany = await runCli(["compare", "--store", store, "latest~2", "latest"]);
  assert.equal(tooMany.code, 2);
  assert.match(tooMany.stderr, /latest~2: the store .* holds 2 runs/);

  const csv = await runCli([
    "compare",
    `${dir.path}/a.csv`,
    `${dir.path}/b.csv`,
    "--format",
    "csv",
    "--metric",
    "read_MiBps",
  ]);
  assert.equal(csv.code, 0, csv.stderr);
  const rows = parseResults(csv.stdout, "compare.csv").rows;
  assert.deepEqual(rows.map((r) => r.framing), ["raw", "gsd"]);
  for (const r of rows) {
    assert.equal(r.a_n, 5);
    assert.equal(r.b_n, 5);
    assert.ok(Number(r.low) <= Number(r.ratio) && Number(r.ratio) <= Number(r.high));
    assert.ok(Math.abs(Number(r.min_p) - 2 / 252) < 1e-12, String(r.min_p));
  }
  // gsd's change relative to the control raw; raw has none
  assert.equal(rows[0]!.relative_ratio, "");
  assert.equal(typeof rows[1]!.relative_ratio, "number");

  const json = await runCli([
    "compare",
    "--store",
    store,
    "--by",
    "framing",
    "--reference",
    "raw",
    "latest",
    "--format",
    "json",
  ]);
  assert.equal(json.code, 0, json.stderr);
  const doc = JSON.parse(json.stdout) as { comparisons: { rows: { framing: string }[] }[] };
  assert.ok(doc.comparisons[0]!.rows.length > 0);
  assert.ok(doc.comparisons[0]!.rows.every((r) => r.framing === "gsd"));

  // 3 repeats against 3 can never be significant: said, not a verdict
  const three = (name: string) => {
    const text = Deno.readTextFileSync(`${dir.path}/${name}.csv`).split("\n");
    const header = text[0]!.split(",");
    const repeat = header.indexOf("repeat");
    const kept = text.filter((line, i) => {
      const v = Number(line.split(",")[repeat]);
      return i === 0 || (line !== "" && v >= 1 && v <= 3 && !line.includes(",mean,"));
    });
    Deno.writeTextFileSync(`${dir.path}/${name}3.csv`, kept.join("\n") + "\n");
    return `${dir.path}/${name}3.csv`;
  };
  const few = await runCli(["compare", three("a"), three("b"), "--metric", "read_MiBps"]);
  assert.equal(few.code, 0, few.stderr);
  assert.match(few.stdout, /^raw +read_MiBps .* too few repeats/m);
});

Deno.test("compare: --fail-on regression exits 1 on a slowed backend and 0 on an A/A pair", async () => {
  using dir = tempDir();
  const run = async (name: string, factor: number) => {
    const out = `${dir.path}/${name}.jsonl`;
    const r = await slowCli(
      ["table", "--framing", "raw,slow", ...SMALL, "--format", "jsonl", "-o", out],
      factor,
    );
    assert.equal(r.code, 0, r.stderr);
    return out;
  };
  const a = await run("a", 0);
  const b = await run("b", 0);
  // reads take 4 times as long: a change far beyond any noise of 5 repeats
  const c = await run("c", 3);
  const fail = ["--fail-on", "regression", "--metric", "read_MiBps", "--threshold", "50%"];
  const slowed = await runCli(["compare", a, c, ...fail]);
  assert.equal(slowed.code, 1, slowed.stdout + slowed.stderr);
  assert.match(
    slowed.stderr,
    /significant regression.* slow .*read_MiBps x0\.\d+\)/,
  );
  assert.match(slowed.stdout, /^slow +read_MiBps .* regression/m);
  const same = await runCli(["compare", a, b, ...fail]);
  assert.equal(same.code, 0, same.stdout + same.stderr);
});

Deno.test("compare: a killed run leaves nothing in the store", async () => {
  using dir = tempDir();
  const child = spawnCli(
    [
      "table",
      "--framing",
      "raw",
      "--size",
      "4M",
      "--n",
      "32^2",
      "--repeat",
      "50",
      "--format",
      "csv",
    ],
    { SCIOBENCH_STORE: dir.path },
  );
  // killed once it measures
  const reader = child.stderr.pipeThrough(new TextDecoderStream()).getReader();
  let seen = "";
  while (!/cell \d+\/\d+/.test(seen)) {
    const { value, done } = await reader.read();
    if (done) break;
    seen += value;
  }
  child.kill("SIGKILL");
  await child.status;
  await child.stdout.cancel();
  reader.releaseLock();
  await child.stderr.cancel().catch(() => {});
  assert.match(seen, /cell \d+\/\d+/);
  assert.deepEqual(storeFiles(dir.path), []);
});

Deno.test("compare: refusals are one line, exit 2", async () => {
  using dir = tempDir();
  const table = `${dir.path}/t.jsonl`;
  const r = await runCli([
    "table",
    "--framing",
    "raw",
    ...SMALL,
    "--repeat",
    "1",
    "--format",
    "jsonl",
    "-o",
    table,
  ]);
  assert.equal(r.code, 0, r.stderr);
  // the same rows, said to be records'
  const records = `${dir.path}/r.jsonl`;
  Deno.writeTextFileSync(
    records,
    Deno.readTextFileSync(table).replace('"command":"table"', '"command":"records"'),
  );
  const text = `${dir.path}/notes.txt`;
  Deno.writeTextFileSync(text, "a,b\n1,2\n");
  const cases: [string[], RegExp][] = [
    [
      [table, records],
      /holds results of 'records', .* of 'table': compare results of one workload/,
    ],
    [[table, text], /notes\.txt: not the results of a workload/],
    [[table, table, "--metric", "nope"], /--metric nope: not a rate or time column of 'table'/],
    [[table, table, "--metric", "size_bytes"], /--metric size_bytes: not a rate or time/],
    [[table], /give at least two results/],
    [["latest~1", "latest"], /latest~1: no results store/],
    [[table, table, "--threshold", "5"], /bad --threshold '5'/],
    [[table, table, "--fail-on", "everything"], /bad --fail-on 'everything'/],
    [["--by", "framing", table], /--by framing needs --reference/],
  ];
  for (const [args, message] of cases) {
    const out = await runCli(["compare", ...args], { env: { SCIOBENCH_STORE: "" } });
    assert.equal(out.code, 2, `${args.join(" ")}: ${out.stderr}`);
    assert.match(out.stderr, message);
    assert.equal(out.stderr.trim().split("\n").length, 1, out.stderr);
  }
  const runs = await runCli(["runs"], { env: { SCIOBENCH_STORE: "" } });
  assert.equal(runs.code, 2);
  assert.match(runs.stderr, /runs: give --store DIR or set SCIOBENCH_STORE/);
  const missing = await runCli(["runs", "--store", `${dir.path}/missing`]);
  assert.equal(missing.code, 2, missing.stderr);
  assert.match(missing.stderr.trim(), /^sciobench: error: --store .*missing: no such directory/);
  // a store named but missing is made (the user asked for it); a file in its place is refused
  const made = await runCli(["table", "--framing", "raw", "--store", `${dir.path}/new`, ...SMALL]);
  assert.equal(made.code, 0, made.stderr);
  assert.equal(
    [...Deno.readDirSync(`${dir.path}/new`)].filter((e) => e.name.endsWith(".jsonl")).length,
    1,
  );
  Deno.writeTextFileSync(`${dir.path}/file`, "");
  const notDir = await runCli([
    "table",
    "--framing",
    "raw",
    "--store",
    `${dir.path}/file`,
    ...SMALL,
  ]);
  assert.equal(notDir.code, 2);
  assert.match(notDir.stderr, /--store .*file: not a directory/);
});
