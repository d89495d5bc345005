/**
 * `deno task perf --quick --format json` (tools/perf.ts): the document's shape, and every goal row
 * the project sets present with its pairs, or its peer skipped with one line (never skipped when
 * SCIOBENCH_REQUIRE_PEERS=1).
 */
import assert from "node:assert/strict";
import { PERMISSIONS, REQUIRE_PEERS, tempDir } from "./_helpers.ts";

const PERF = new URL("../tools/perf.ts", import.meta.url).pathname;

interface PerfRow {
  metric: string;
  N: string;
  cache: string;
  unit: string;
  pairs: number;
  min: number;
  median: number;
  max: number;
  values: number[];
  goal: string;
  met: boolean | null;
  "miss_within_aa_spread": boolean | null;
}

Deno.test("perf --quick --format json: every ratio and goal row, with its spread", async () => {
  using dir = tempDir();
  const out = await new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "--quiet",
      ...PERMISSIONS,
      PERF,
      "--quick",
      "--format",
      "json",
      "--dir",
      dir.path,
    ],
    stdout: "piped",
    stderr: "piped",
  }).output();
  const stderr = new TextDecoder().decode(out.stderr);
  assert.equal(out.code, 0, stderr);
  const doc = JSON.parse(new TextDecoder().decode(out.stdout)) as {
    meta: { pairs: number; ns: number[]; quick: boolean; date: string };
    skipped: string[];
    rows: PerfRow[];
  };
  assert.equal(doc.meta.quick, true);
  assert(doc.meta.pairs >= 3, "at least three interleaved pairs");
  assert.equal(doc.meta.ns.length, 3);
  // the scratch directory is left empty
  assert.equal([...Deno.readDirSync(dir.path)].length, 0);
  for (const r of doc.rows) {
    assert(typeof r.metric === "string" && r.metric.length > 0);
    assert(r.values.length >= 1 && r.values.every((v) => Number.isFinite(v)), r.metric);
    assert.equal(r.pairs, r.values.length);
    assert(r.min <= r.median && r.median <= r.max, `${r.metric}: min <= median <= max`);
    assert.equal(r.min, Math.min(...r.values));
    if (r.goal === "") assert.equal(r.met, null);
    else {
      assert(/^(>=|<=) [0-9.]+$/.test(r.goal), r.goal);
      assert.equal(typeof r.met, "boolean");
    }
  }
  const find = (metric: string, n: string, cache: string) =>
    doc.rows.find((r) => r.metric === metric && r.N === n && r.cache === cache);
  const need = (metric: string, n: string, cache: string, goal?: string) => {
    const r = find(metric, n, cache);
    assert.ok(r, `row ${metric} N=${n} ${cache} missing`);
    // a ratio has one value per pair, and so has the peak RSS (a run per size in each pair)
    if (r.unit === "x" || r.metric.startsWith("peak RSS")) {
      assert.equal(r.pairs, doc.meta.pairs, `${metric}: one value per pair`);
    }
    if (goal !== undefined) assert.equal(r.goal, goal, metric);
  };
  const label = (n: number) => `${Math.round(Math.sqrt(n))}^2`;
  for (const cache of ["warm", "cold"]) {
    for (const n of doc.meta.ns) {
      const readGoal = n >= 128 ** 2 ? ">= 0.9" : ">= 0.8";
      for (const f of ["f77", "ieeeio", "gsd", "netcdf"]) {
        need(`write ${f}/raw`, label(n), cache);
        need(`read ${f}/raw`, label(n), cache, readGoal);
        need(`random ${f}/raw`, label(n), cache, readGoal);
        need(`open ${f}/raw`, label(n), cache);
      }
      // raw against itself in the same pair: the noise of a wall-time ratio, no goal
      for (const what of ["write", "read", "random", "open"]) {
        need(`${what} raw/raw (A/A)`, label(n), cache, "");
      }
      for (const f of ["f77", "ieeeio"]) {
        need(`open ${f} per record`, label(n), cache, "");
        need(`open ${f} per record over raw`, label(n), cache, cache === "warm" ? "<= 1" : "");
      }
    }
  }
  for (const n of doc.meta.ns) {
    const readGoal = n >= 128 ** 2 ? ">= 0.9" : ">= 0.8";
    for (const f of ["f77", "ieeeio", "gsd", "netcdf"]) {
      // thread CPU, page cache warm: the read goals with less of the machine's load in them
      need(`read CPU ${f}/raw`, label(n), "warm", readGoal);
      need(`random CPU ${f}/raw`, label(n), "warm", readGoal);
    }
  }
  need("peak RSS at 16 GiB (extrapolated)", "32^2", "warm", "<= 256");
  need("peak RSS slope", "32^2", "warm");
  const skippedFor = (word: string) => doc.skipped.some((s) => s.includes(word));
  const peerRows: [string, string[]][] = [
    ["python3-gsd", ["open gsd/python-gsd", "write CPU gsd/python-gsd", "read gsd/python-gsd"]],
    ["netcdf-lib", ["records write netcdf/netcdf-lib", "records read netcdf/netcdf-lib"]],
    ["gfortran", ["readers sciobench/gfortran rd"]],
    ["fio", ["read raw engine/fio psync", "read raw engine unverified/fio psync"]],
  ];
  for (const [peer, metrics] of peerRows) {
    if (skippedFor(peer)) {
      assert(!REQUIRE_PEERS, `${peer} skipped although SCIOBENCH_REQUIRE_PEERS=1`);
      for (const m of metrics) assert(!doc.rows.some((r) => r.metric === m), m);
      continue;
    }
    for (const m of metrics) {
      assert(doc.rows.some((r) => r.metric === m && r.goal !== ""), `${m} missing or no goal`);
    }
  }
  // a miss is called noise only for a framing's wall-time ratio to raw, from its A/A row
  for (const r of doc.rows) {
    const phase = /^(write|read|random|open) [a-z0-9-]+\/raw$/.exec(r.metric)?.[1];
    const aa = phase && find(`${phase} raw/raw (A/A)`, r.N, r.cache);
    if (r.met !== false || !aa) {
      assert.equal(r.miss_within_aa_spread, null, r.metric);
      continue;
    }
    const logs = aa.values.map(Math.log);
    const half = (Math.max(...logs) - Math.min(...logs)) / 2;
    const [op, goal] = r.goal.split(" ");
    const shortfall = op === ">=" ? Number(goal) / r.median : r.median / Number(goal);
    assert.equal(r.miss_within_aa_spread, Math.log(shortfall) <= half, `${r.metric} ${r.N}`);
  }
  if (!skippedFor("python3-gsd")) {
    // the kernel's part of our write CPU, against python3-gsd's whole write CPU, without a goal
    for (const cache of ["warm", "cold"]) {
      for (const n of doc.meta.ns) {
        const sys = find("write sys gsd/CPU python-gsd", label(n), cache);
        const cpu = find("write CPU gsd/python-gsd", label(n), cache);
        assert(sys && cpu && sys.goal === "", `write sys row N=${label(n)} ${cache}`);
        // our system time is a part of our CPU, pair by pair
        sys.values.forEach((v, i) => assert(v >= 0 && v <= cpu.values[i]! + 1e-9, sys.metric));
      }
    }
    // the first open of each process (code not yet compiled) beside the goal's, without a goal
    const first = doc.rows.find((r) => r.metric === "first open gsd/python-gsd");
    assert(first && first.goal === "" && first.values.every((v) => v > 0), "first open row");
  }
  for (const s of doc.skipped) assert(!s.includes("\n"), "one line per skipped peer");
});

Deno.test("perf with a bad option or value: one line, exit 2, no stack trace, nothing measured", async () => {
  for (const bad of [["--pairs", "0"], ["--size", "12xyz"], ["--bogus"], ["--format", "xml"]]) {
    const out = await new Deno.Command(Deno.execPath(), {
      args: ["run", "--quiet", ...PERMISSIONS, PERF, ...bad],
      stdout: "piped",
      stderr: "piped",
    }).output();
    const stderr = new TextDecoder().decode(out.stderr);
    assert.equal(out.code, 2, `${bad.join(" ")}: ${stderr}`);
    assert.equal(out.stdout.length, 0);
    assert.equal(stderr.trim().split("\n").length, 1, stderr);
    assert.match(stderr, /^perf: .*\(usage: deno task perf /, stderr);
  }
});

Deno.test("perf --only with a section it does not have: one line, exit 2, nothing measured", async () => {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", "--quiet", ...PERMISSIONS, PERF, "--only", "table,tabel"],
    stdout: "piped",
    stderr: "piped",
  }).output();
  assert.equal(out.code, 2);
  assert.equal(out.stdout.length, 0);
  assert.equal(
    new TextDecoder().decode(out.stderr),
    "perf: --only tabel: give some of table,readcpu,records,readers,fio,rss\n",
  );
});
