/**
 * Results a person can read and compare: summary rows over repeats, numbers in every numeric
 * column of every workload, JSON lines that survive SIGTERM, human tables and help for every
 * command, options checked before any output, did-you-mean, preflights, library settings.
 */
import assert from "node:assert/strict";
import { parse } from "npm:csv-parse@6.1.0/sync";
import { didYouMean } from "../lib/core/suggest.ts";
import { dlopenProblem } from "../lib/peers/common.ts";
import type { ColumnDoc } from "../lib/report/human.ts";
import { missWithinNoise, statistic, STATS, summaryRows } from "../lib/report/stats.ts";
import { COMMANDS } from "../lib/cli/commands.ts";
import { READERS_COLUMN_DOCS } from "../lib/workloads/readers/mod.ts";
import { RECORDS_COLUMN_DOCS } from "../lib/workloads/records/mod.ts";
import { SCALING_COLUMN_DOCS } from "../lib/workloads/scaling/mod.ts";
import { TABLE_COLUMN_DOCS, TABLE_KEYS } from "../lib/workloads/table/mod.ts";
import { commandMissing, PERMISSIONS, runCli, spawnCli, tempDir } from "./_helpers.ts";

const MAIN = new URL("../main.ts", import.meta.url).pathname;

function csv(text: string): Record<string, string>[] {
  return parse(text, { columns: true }) as Record<string, string>[];
}

/**
 * Every numeric column holds a finite number in every row that did not fail; every flag column
 * says true or false (cold_ok: empty too, when warm or direct).
 */
function assertNumeric(rows: Record<string, string>[], docs: readonly ColumnDoc[], what: string) {
  assert.ok(rows.length > 0, `${what}: no rows`);
  for (const doc of docs.filter((d) => d.kind === "flag")) {
    for (const [i, row] of rows.entries()) {
      assert.match(row[doc.name] ?? "?", /^(true|false|)$/, `${what} row ${i} ${doc.name}`);
    }
  }
  for (const doc of docs.filter((d) => d.kind !== "text" && d.kind !== "flag")) {
    for (const [i, row] of rows.entries()) {
      const v = row[doc.name];
      assert.ok(v !== undefined, `${what}: column ${doc.name} missing`);
      if (row.error) {
        assert.ok(v === "" || Number.isFinite(Number(v)), `${what} row ${i} ${doc.name}='${v}'`);
        continue;
      }
      assert.ok(v !== "" && Number.isFinite(Number(v)), `${what} row ${i} ${doc.name}='${v}'`);
    }
  }
}

Deno.test("summary rows equal the statistics of the run rows (table --repeat 3)", async () => {
  using d = tempDir();
  const r = await runCli([
    "table",
    "--framing",
    "raw",
    "--framing",
    "gsd",
    "--size",
    "256KiB",
    "--n",
    "64",
    "--repeat",
    "3",
    "--dir",
    d.path,
    "--format",
    "csv",
  ]);
  assert.equal(r.code, 0, r.stderr);
  const rows = csv(r.stdout);
  assertNumeric(rows, TABLE_COLUMN_DOCS, "table");
  const runs = rows.filter((x) => x.stat === "run");
  // Repeated --framing accumulates: both framings ran, repeats numbered 1..3, the framings'
  // order alternating between repeats (the row's order)
  assert.deepEqual(runs.map((x) => `${x.framing}${x.repeat}@${x.order}`), [
    "raw1@1",
    "gsd1@2",
    "gsd2@1",
    "raw2@2",
    "raw3@1",
    "gsd3@2",
  ]);
  for (const framing of ["raw", "gsd"]) {
    const mine = runs.filter((x) => x.framing === framing);
    for (const stat of STATS) {
      const row = rows.find((x) => x.framing === framing && x.stat === stat);
      assert.ok(row, `${framing} ${stat}`);
      assert.equal(row.repeat, "3");
      for (const c of ["write_MiBps", "read_MiBps", "random_ms", "open_ms", "write_s"]) {
        const want = statistic(stat, mine.map((x) => Number(x[c])));
        const got = Number(row[c]);
        assert.ok(Math.abs(got - want) <= 1e-12 * Math.abs(want), `${framing} ${stat} ${c}`);
      }
      for (const k of TABLE_KEYS) assert.equal(row[k], mine[0]![k], `${stat} key ${k}`);
    }
  }
});

Deno.test("statistics: median, sample stddev, min, max; one run gives no summary", () => {
  assert.equal(statistic("median", [3, 1, 2]), 2);
  assert.equal(statistic("median", [4, 1, 2, 3]), 2.5);
  assert.equal(statistic("stddev", [2, 4, 4, 4, 5, 5, 7, 9]), Math.sqrt(32 / 7));
  assert.equal(statistic("min", [3, 1, 2]), 1);
  assert.equal(statistic("max", [3, 1, 2]), 3);
  assert.deepEqual(summaryRows([{ framing: "raw", x: 1, stat: "run" }], ["framing"]), []);
  const rows = summaryRows([
    { framing: "raw", x: 1, note: "a", stat: "run", error: "" },
    { framing: "raw", x: 3, note: "b", stat: "run", error: "" },
    { framing: "raw", x: null, stat: "run", error: "disk full" },
  ], ["framing"]);
  assert.deepEqual(rows.map((r) => [r.stat, r.x, r.note, r.repeat]), [
    ["mean", 2, null, 2],
    ["median", 2, null, 2],
    ["stddev", Math.SQRT2, null, 2],
    ["min", 1, null, 2],
    ["max", 3, null, 2],
  ]);
});

Deno.test("a missed goal is noise only when the shortfall is inside half the A/A spread", () => {
  const atLeast = { op: ">=", value: 0.9 } as const;
  // A/A 0.61-0.83: half the log spread is ln(0.83 / 0.61) / 2 = 0.154, a shortfall up to 1.167x
  const aa = [0.61, 0.7, 0.83];
  assert.equal(missWithinNoise(0.84, atLeast, aa), true); // 0.9 / 0.84 = 1.071
  assert.equal(missWithinNoise(0.78, atLeast, aa), true); // 1.154, just inside
  assert.equal(missWithinNoise(0.77, atLeast, aa), false); // 1.169, just outside
  assert.equal(missWithinNoise(0.7, atLeast, aa), false); // 1.286
  assert.equal(missWithinNoise(0.95, atLeast, aa), false); // met: not a miss
  // an at-most goal misses upwards
  const atMost = { op: "<=", value: 1 } as const;
  assert.equal(missWithinNoise(1.09, atMost, [0.9, 1.0, 1.2]), true); // 1.09 <= e^0.144 = 1.155
  assert.equal(missWithinNoise(1.63, atMost, [0.9, 1.0, 1.2]), false);
  // no spread to judge by: never noise
  assert.equal(missWithinNoise(0.84, atLeast, [0.7]), false);
  assert.equal(missWithinNoise(0.84, atLeast, []), false);
  assert.equal(missWithinNoise(0.84, atLeast, [0.8, 0.8]), false);
});

Deno.test("every numeric column holds a number in every row: scaling, records, readers", async () => {
  using d = tempDir();
  const runs: [string[], readonly ColumnDoc[]][] = [
    [
      ["scaling", "--framing", "raw,f77", "--datasets", "1,2", "--shape", "8x8", "--trials", "2"],
      SCALING_COLUMN_DOCS,
    ],
    [
      ["records", "--shape", "4x8x8", "--framing", "raw", "--endian", "big", "--repeat", "2"],
      RECORDS_COLUMN_DOCS,
    ],
    [
      ["readers", "--procs", "1,2", "--records", "2", "--length", "64", "--repeat", "2"],
      READERS_COLUMN_DOCS,
    ],
  ];
  for (const [args, docs] of runs) {
    const r = await runCli([...args, "--dir", d.path, "--format", "csv"]);
    assert.equal(r.code, 0, `${args.join(" ")}: ${r.stderr}`);
    const rows = csv(r.stdout);
    assertNumeric(rows, docs, args[0]!);
    assert.ok(rows.some((x) => x.stat === "mean"), `${args[0]}: summary rows`);
    assert.ok(
      rows.filter((x) => x.stat === "run").every((x) => x.repeat === "1" || x.repeat === "2"),
    );
    assert.doesNotMatch(r.stdout, /\b(all|avg|average)\b/);
  }
});

Deno.test("jsonl keeps finished rows after SIGTERM; json is written with interrupted: true", async () => {
  using d = tempDir();
  for (const format of ["jsonl", "json"]) {
    const out = `${d.path}/run.${format}`;
    // Many small cells: the first few finish quickly, the run goes on far longer.
    const child = spawnCli([
      "table",
      "--framing",
      "raw",
      "--size",
      "256KiB",
      "--n",
      "64",
      "--repeat",
      "1000",
      "--dir",
      d.path,
      "--format",
      format,
      "--out",
      out,
    ]);
    const stderr = child.stderr.getReader();
    let seen = "";
    const dec = new TextDecoder();
    while (!/cell 4\//.test(seen)) {
      const { value, done } = await stderr.read();
      if (done) break;
      seen += dec.decode(value);
    }
    child.kill("SIGTERM");
    stderr.releaseLock();
    const status = await child.output();
    assert.equal(status.code, 143, seen);
    const text = Deno.readTextFileSync(out);
    if (format === "jsonl") {
      const lines = text.trim().split("\n").map((l) => JSON.parse(l));
      assert.ok(lines[0].meta, "first line is the meta");
      assert.equal(lines[0].meta.command, "table");
      const rows = lines.filter((l) => l.framing === "raw");
      assert.ok(rows.length >= 3, `finished rows kept: ${rows.length}`);
      assert.deepEqual(rows.slice(0, 3).map((x) => x.repeat), [1, 2, 3]);
      assert.ok(rows.every((x) => typeof x.write_MiBps === "number"));
      assert.deepEqual(lines.at(-1), { interrupted: true });
    } else {
      const doc = JSON.parse(text);
      assert.equal(doc.meta.interrupted, true);
      assert.ok(doc.rows.length >= 3);
    }
  }
  assert.deepEqual([...Deno.readDirSync(d.path)].filter((e) => e.name.startsWith(".scio")), []);
});

Deno.test("JSON meta describes the run: options, host, kernel, CPU, memory, file system, commit", async () => {
  using d = tempDir();
  const r = await runCli([
    "table",
    "--framing",
    "raw",
    "--size",
    "64KiB",
    "--n",
    "64",
    "--dir",
    d.path,
    "--format",
    "json",
  ]);
  assert.equal(r.code, 0, r.stderr);
  const { meta } = JSON.parse(r.stdout);
  assert.deepEqual(meta.options.framing, ["raw"]);
  assert.deepEqual(meta.options.size, [65536]);
  assert.equal(meta.options.repeat, 1);
  for (const k of ["hostname", "kernel", "cpu_model", "version", "deno", "date"]) {
    assert.equal(typeof meta[k], "string", k);
  }
  assert.ok(meta.cores >= 1 && meta.memory_bytes > 0);
  // what --direct's buffers and fio's baseline get: THP mode, reserved huge pages free
  assert.match(meta.transparent_huge_pages, /^(always|madvise|never|)$/);
  assert.ok(Number.isInteger(meta.huge_pages_free) && meta.huge_pages_free >= 0);
  assert.match(meta.commit, /^([0-9a-f]{40})?$/);
  assert.equal(meta.file_system.dir, d.path);
  assert.ok(meta.file_system.free_bytes > 0 && meta.file_system.mount_point.startsWith("/"));
  assert.ok(typeof meta.file_system.mount_source === "string");
  assert.ok(Array.isArray(meta.libraries));
});

Deno.test("--format table and --help for every command; info --format json", async () => {
  using d = tempDir();
  for (const cmd of COMMANDS) {
    const help = await runCli([cmd.name, "--help"]);
    assert.equal(help.code, 0);
    assert.match(help.stdout, /--format (F|table)/, cmd.name);
  }
  // Every column of every workload is described in --help with its unit.
  for (
    const [cmd, docs] of [
      ["table", TABLE_COLUMN_DOCS],
      ["scaling", SCALING_COLUMN_DOCS],
      ["records", RECORDS_COLUMN_DOCS],
      ["readers", READERS_COLUMN_DOCS],
    ] as const
  ) {
    const help = (await runCli([cmd, "--help"])).stdout;
    for (const doc of docs) {
      const label = doc.unit ? `${doc.name} (${doc.unit})` : doc.name;
      assert.ok(help.includes(`  ${label}`), `${cmd} --help describes ${label}`);
    }
  }
  assert.match((await runCli(["table", "--help"])).stdout, /resident_after_drop \(0\.\.1\)/);
  const t = await runCli([
    "table",
    "--framing",
    "raw",
    "--size",
    "64KiB",
    "--n",
    "64",
    "--dir",
    d.path,
    "--format",
    "table",
  ]);
  assert.equal(t.code, 0, t.stderr);
  const lines = t.stdout.trim().split("\n");
  assert.match(lines[0]!, /^framing\s+size\s+N\s+cache\s+repeat\s+open \(ms\)\s+write \(MiB\/s\)/);
  assert.match(lines[2]!, /^raw\s+64 KiB\s+8\^2\s+cold\s+1\s+\d/);
  assert.equal(new Set(lines.map((l) => l.length)).size <= 2, true, "aligned columns");
  const w = await runCli([
    "write",
    "--framing",
    "raw",
    "--n",
    "8",
    "--frames",
    "2",
    `${d.path}/f.raw`,
    "--format",
    "table",
  ]);
  assert.equal(w.code, 0, w.stderr);
  assert.match(w.stdout, /^framing\s+path/);
  const i = await runCli(["info", "--format", "json", `${d.path}/f.raw`]);
  assert.equal(JSON.parse(i.stdout).frames, 2);
  const f = await runCli(["framings", "--format", "csv"]);
  assert.match(f.stdout, /^name,kind,orders,available,description\n/);
  for (const cmd of ["scaling", "records", "readers", "read"]) {
    const args = cmd === "read" ? [`${d.path}/f.raw`] : ["--dir", d.path];
    const small: Record<string, string[]> = {
      scaling: ["--framing", "raw", "--datasets", "1", "--shape", "4"],
      records: ["--shape", "2x4", "--framing", "raw", "--endian", "native"],
      readers: ["--procs", "1", "--records", "1", "--length", "8", "--mode", "shared"],
      read: [],
    };
    const r = await runCli([cmd, ...small[cmd]!, ...args, "--format", "table"]);
    assert.equal(r.code, 0, `${cmd}: ${r.stderr}`);
    assert.match(r.stdout.split("\n")[1]!, /^-+( {2}-+)+$/, `${cmd} has an aligned table`);
    if (cmd === "scaling") {
      // plot prints what it drew as a table too
      const csvPath = `${d.path}/scaling.csv`;
      const s = await runCli([cmd, ...small[cmd]!, ...args, "--out", csvPath]);
      assert.equal(s.code, 0, s.stderr);
      const p = await runCli(["plot", csvPath, "-o", `${d.path}/s.svg`, "--format", "table"]);
      assert.equal(p.code, 0, p.stderr);
      assert.match(
        p.stdout,
        /^chart +workload +rows +series\n-+( {2}-+)+\n\S+s\.svg +scaling +1 +raw\n$/,
      );
    }
  }
  // The commands that print facts rather than rows take --format table as their text layout.
  for (
    const [args, first] of [
      [["info", `${d.path}/f.raw`], /^path: /],
      [["framings"], /^\S+ +(native|peer|program) /],
      [["version"], /^sciobench \d+\.\d+\.\d+\ncommit /],
    ] as const
  ) {
    const r = await runCli([...args, "--format", "table"]);
    assert.equal(r.code, 0, `${args[0]}: ${r.stderr}`);
    assert.match(r.stdout, first, args[0]);
  }
});

Deno.test("before any output: a bad option never truncates --out; usage errors exit 2", async () => {
  using d = tempDir();
  const out = `${d.path}/results.csv`;
  Deno.writeTextFileSync(out, "precious\n");
  for (
    const bad of [
      ["--cache", "cld"],
      ["--framing", "nope"],
      ["--n", "1000000000"],
      ["--format", "xml"],
      ["--size", "1PiB"],
    ]
  ) {
    const r = await runCli(["table", ...bad, "--dir", d.path, "--out", out, "--force"]);
    assert.equal(r.code, 2, `${bad.join(" ")}: ${r.stderr}`);
    assert.equal(r.stdout, "");
    assert.equal(Deno.readTextFileSync(out), "precious\n", bad.join(" "));
  }
});

Deno.test("memory preflight: table --n 1000000000 is refused with exit 2 before allocating", async () => {
  const child = spawnCli(["table", "--n", "1000000000", "--size", "1MiB"]);
  const r = await child.output();
  const stderr = new TextDecoder().decode(r.stderr);
  assert.equal(r.code, 2, stderr);
  assert.match(
    stderr,
    /^sciobench: error: a frame of N = 1000000000 particles needs .* of memory/m,
  );
  assert.equal(r.stdout.length, 0);
  // Refused before allocating: the run's peak resident memory (getrusage of the finished child,
  // read by python3) stays far below the 26 GiB one such frame of 28-byte particles takes.
  const python = "/usr/bin/python3";
  if (commandMissing(python) === null) {
    const peak = await new Deno.Command(python, {
      args: [
        "-c",
        "import resource, subprocess, sys\n" +
        "subprocess.run(sys.argv[1:], capture_output=True)\n" +
        "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)",
        Deno.execPath(),
        ...["run", "--quiet", ...PERMISSIONS, MAIN, "table", "--n", "1000000000", "--size", "1MiB"],
      ],
      stdout: "piped",
    }).output();
    const kib = Number(new TextDecoder().decode(peak.stdout).trim());
    assert.ok(kib > 0 && kib < 512 * 1024, `peak resident memory ${kib} KiB`);
  }
});

Deno.test("did you mean: commands, options, framings, values", async () => {
  const cases: [string[], RegExp][] = [
    [["tabel"], /unknown command 'tabel'.*did you mean 'table'\?/],
    [["table", "--framng", "raw"], /Unknown option '--framng'; did you mean '--framing'\?/],
    [["table", "--framing", "gdd"], /unknown backend 'gdd'.*did you mean 'gsd'\?/],
    [["table", "--cache", "cld"], /bad --cache 'cld'.*did you mean 'cold'\?/],
    [["table", "--format", "jsnl"], /bad --format 'jsnl'.*did you mean 'jsonl'\?/],
    [["records", "--endian", "bgi"], /did you mean 'big'\?/],
    [["table", "--peer", "python-gds"], /did you mean 'python-gsd'\?/],
  ];
  for (const [args, re] of cases) {
    const r = await runCli(args);
    assert.equal(r.code, 2, `${args.join(" ")}: ${r.stderr}`);
    assert.match(r.stderr, re);
  }
  assert.equal(didYouMean("xyzzy", ["table", "scaling"]), "");
});

Deno.test("a set SCIOBENCH_*_LIB that cannot load is an error naming it; a missing dependency is named", async () => {
  const child = spawnCli(["records", "--framing", "hdf5", "--shape", "2x4"], {
    SCIOBENCH_HDF5_LIB: "/nonexistent/libhdf5.so",
  });
  const r = await child.output();
  const stderr = new TextDecoder().decode(r.stderr);
  assert.equal(r.code, 2, stderr);
  assert.match(stderr, /SCIOBENCH_HDF5_LIB=\/nonexistent\/libhdf5\.so cannot be loaded/);
  assert.equal(
    dlopenProblem(
      "libnetcdf.so.19",
      "Could not open library: libhdf5_serial.so.103: cannot open shared object file: No such file or directory",
    ),
    "needs libhdf5_serial.so.103, which is not installed",
  );
  assert.equal(
    dlopenProblem(
      "libnetcdf.so.19",
      "Could not open library: libnetcdf.so.19: cannot open shared object file: No such file or directory",
    ),
    "not found",
  );
});

Deno.test("summary rows copy a setting the runs share, and still summarize one that differs", () => {
  const runs = [
    { framing: "raw", iodepth: 8, x: 1, stat: "run", error: "" },
    { framing: "raw", iodepth: 8, x: 3, stat: "run", error: "" },
  ];
  const rows = summaryRows(runs, ["framing"], [], ["iodepth"]);
  assert.deepEqual(rows.map((r) => [r.stat, r.iodepth, r.x]), [
    ["mean", 8, 2],
    ["median", 8, 2],
    ["stddev", 8, Math.SQRT2],
    ["min", 8, 1],
    ["max", 8, 3],
  ]);
  const apart = summaryRows([runs[0]!, { ...runs[1]!, iodepth: 4 }], ["framing"], [], ["iodepth"]);
  assert.deepEqual(apart.map((r) => r.iodepth), [6, 6, Math.SQRT2 * 2, 4, 8]);
});

Deno.test("read --repeat 2 --iodepth 4: every summary row says the depth and the block size", async () => {
  using d = tempDir("sciobench-summary-");
  const path = `${d.path}/t.raw`;
  const w = await runCli(["write", "--framing", "raw", "--n", "64", "--size", "1M", path]);
  assert.equal(w.code, 0, w.stderr);
  const r = await runCli([
    ...["read", "--repeat", "2", "--iodepth", "4", "--engine", "psync", "--bs", "4k"],
    ...["--format", "json", path],
  ]);
  assert.equal(r.code, 0, r.stderr);
  const rows = JSON.parse(r.stdout).rows as Record<string, unknown>[];
  const stats = rows.filter((x) => x.stat !== "run");
  assert.equal(stats.length, 5);
  for (const s of stats) assert.deepEqual([s.stat, s.iodepth, s.bs_bytes], [s.stat, 4, 4096]);
});
