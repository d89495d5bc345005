import assert from "node:assert/strict";
import { runCli, tempDir } from "./_helpers.ts";
import { datasetArray, seedRenderer } from "../lib/workloads/scaling/mod.ts";

function csvRows(text: string): Record<string, string>[] {
  const [head, ...lines] = text.trim().split("\n");
  const cols = head!.split(",");
  return lines.map((l) => Object.fromEntries(l.split(",").map((v, i) => [cols[i]!, v])));
}

const COLUMNS =
  "framing,datasets,bytes,write_s,write_user_ticks,write_sys_ticks,write_cpu_ticks,clk_tck," +
  "write_user_s,write_sys_s,write_MiBps,endian,repeat,file_bytes,write_dev_bytes,fsync,order,bs_bytes," +
  "direct,huge_pages,stat,error";

Deno.test("scaling --datasets 1..2 (csv): one row per framing and count, payload bytes, ticks", async () => {
  using dir = tempDir();
  const r = await runCli([
    "scaling",
    "--framing",
    "ieeeio,f77,raw",
    "--datasets",
    "1..2",
    "--shape",
    "4x4x4",
    "--dir",
    dir.path,
  ]);
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.stdout.split("\n")[0], COLUMNS);
  const rows = csvRows(r.stdout);
  assert.deepEqual(rows.map((x) => [x["framing"], x["datasets"], x["bytes"]]), [
    ["ieeeio", "1", "512"],
    ["ieeeio", "2", "1024"],
    ["f77", "1", "512"],
    ["f77", "2", "1024"],
    ["raw", "1", "512"],
    ["raw", "2", "1024"],
  ]);
  for (const x of rows) {
    assert.equal(
      Number(x["write_cpu_ticks"]),
      Number(x["write_user_ticks"]) + Number(x["write_sys_ticks"]),
    );
    assert.ok(Number(x["clk_tck"]) > 0);
    assert.ok(Number(x["write_s"]) > 0);
    assert.ok(
      Math.abs(Number(x["write_MiBps"]) - Number(x["bytes"]) / 2 ** 20 / Number(x["write_s"])) <
        1e-3 * Number(x["write_MiBps"]),
    );
  }
  // Off a terminal, one timestamped line per cell on stderr; the scratch directory is gone.
  assert.match(r.stderr, /^\d{4}-\d\d-\d\dT[\d:.]+Z sciobench: cell 1\/6 ieeeio datasets=1\n/m);
  assert.match(r.stderr, /Z sciobench: cell 4\/6 f77 datasets=2\n/);
  assert.deepEqual([...Deno.readDirSync(dir.path)], []);
});

Deno.test("scaling file sizes (json): IEEEIO 16 + n x 2,097,188 for 64^3 float64; f77 n x (data + 8)", async () => {
  using dir = tempDir();
  const r = await runCli([
    "scaling",
    "--framing",
    "ieeeio,f77",
    "--datasets",
    "1..2",
    "--dir",
    dir.path,
    "--format",
    "json",
  ]);
  assert.equal(r.code, 0, r.stderr);
  const doc = JSON.parse(r.stdout) as {
    meta: Record<string, unknown>;
    rows: Record<string, unknown>[];
  };
  assert.deepEqual((doc.meta["options"] as Record<string, unknown>)["shape"], [64, 64, 64]);
  assert.deepEqual(
    doc.rows.map((x) => [x["framing"], x["datasets"], x["bytes"], x["file_bytes"], x["repeat"]]),
    [
      ["ieeeio", 1, 2_097_152, 16 + 2_097_188, 1],
      ["ieeeio", 2, 2 * 2_097_152, 16 + 2 * 2_097_188, 1],
      ["f77", 1, 2_097_152, 2_097_160, 1],
      ["f77", 2, 2 * 2_097_152, 2 * 2_097_160, 1],
    ],
  );
});

Deno.test("scaling --format seed: banners, Write lines with stars, Realtime lines, averages", async () => {
  using dir = tempDir();
  const r = await runCli([
    "scaling",
    "--framing",
    "ieeeio,f77",
    "--datasets",
    "1..2",
    "--shape",
    "2x3",
    "--type",
    "int32",
    "--trials",
    "2",
    "--dir",
    dir.path,
    "--format",
    "seed",
  ]);
  assert.equal(r.code, 0, r.stderr);
  const run = String.raw`        Realtime=\d+\.\d{3}, UserTime=\d+, SystemTime=\d+, Combined=\d+\n`;
  const ieee = String
    .raw`--------------IEEE--------------\nWrite  1:\*\n${run}Write  2:\*\*\n${run}`;
  const f77 = String
    .raw`-------------F77 Unformatted---------------\nWrite  1:\*\n${run}Write  2:\*\*\n${run}`;
  // the sections in the order they ran: the backends' order alternates between trials
  const trial = (t: number) =>
    `\\nTrial ${t} --------------\\n${t === 1 ? ieee + f77 : f77 + ieee}`;
  const avg = (label: string) =>
    String
      .raw`-------${label}: Average of 2 trials------------\n\tRealtime=\d+\.\d{6}, UserTime=\d+\.\d{6}, ` +
    String.raw`SystemTime=\d+\.\d{6}, Combined=\d+\.\d{6} Megs/sec=\d+\.\d{6}\n`;
  assert.match(
    r.stdout,
    new RegExp(`^Ntests=2\\n${trial(1)}${trial(2)}\\n${avg("IEEE")}${avg("F77 UNF")}$`),
  );
  // IOspeed's stars on stderr: one per dataset after its label.
  assert.match(r.stderr, /IEEEIO <open [^>]*speed\.ieeeio> Write {2}1 datasets:\*\n/);
  assert.match(r.stderr, /F77 Unf <open [^>]*speed\.f77> Write {2}2 datasets:\*\*\n/);
});

Deno.test("scaling --trials 2 (csv): summary rows per (framing, datasets) after the runs", async () => {
  using dir = tempDir();
  const r = await runCli([
    "scaling",
    "--framing",
    "raw",
    "--datasets",
    "1,3",
    "--shape",
    "8",
    "--trials",
    "2",
    "--dir",
    dir.path,
  ]);
  assert.equal(r.code, 0, r.stderr);
  const rows = csvRows(r.stdout);
  const stats = ["mean", "median", "stddev", "min", "max"];
  assert.deepEqual(rows.map((x) => [x["datasets"], x["bytes"], x["stat"], x["repeat"]]), [
    ["1", "64", "run", "1"],
    ["3", "192", "run", "1"],
    ["1", "64", "run", "2"],
    ["3", "192", "run", "2"],
    ...stats.map((s) => ["1", "64", s, "2"]),
    ...stats.map((s) => ["3", "192", s, "2"]),
  ]);
  const runs = rows.filter((x) => x["datasets"] === "1" && x["stat"] === "run");
  const mean = runs.reduce((a, x) => a + Number(x["write_s"]), 0) / 2;
  assert.equal(Number(rows[4]!["write_s"]), mean);
});

Deno.test("scaling --trials 2: the backends' order alternates between trials and rows say their place", async () => {
  using dir = tempDir();
  const r = await runCli([
    ...["scaling", "--framing", "raw,f77", "--datasets", "1", "--shape", "8", "--trials", "2"],
    ...["--dir", dir.path],
  ]);
  assert.equal(r.code, 0, r.stderr);
  const runs = csvRows(r.stdout).filter((x) => x["stat"] === "run");
  assert.deepEqual(runs.map((x) => [x["repeat"], x["framing"], x["order"]]), [
    ["1", "raw", "1"],
    ["1", "f77", "2"],
    ["2", "f77", "1"],
    ["2", "raw", "2"],
  ]);
});

Deno.test("scaling usage errors exit 2 with a message", async () => {
  for (
    const [args, re] of [
      [["--datasets", "0..2"], /--datasets/],
      [["--type", "complex"], /--type 'complex'/],
      [["--format", "xml"], /--format 'xml'/],
      [["--shape", "4xx4"], /--shape/],
      [["--framing", "nope"], /unknown backend 'nope'/],
      [["--dir", "/nonexistent/dir"], /does not exist/],
    ] as const
  ) {
    const r = await runCli(["scaling", "--datasets", "1", "--shape", "2", ...args]);
    assert.equal(r.code, 2, `${args.join(" ")}: ${r.stderr}`);
    assert.match(r.stderr, /^sciobench: error: /);
    assert.match(r.stderr, re);
    assert.equal(r.stdout, "");
  }
});

Deno.test("scaling helpers: pattern array, seed renderer without repeats", () => {
  const a = datasetArray([3000], "float64");
  assert.ok(a instanceof Float64Array);
  assert.equal(a.length, 3000);
  const bytes = new Uint8Array(a.buffer);
  for (const i of [0, 4095, 4096, 10_000, 23_999]) {
    assert.equal(bytes[i], ((i % 4096) * 131 + 7) & 255, `byte ${i}`);
  }
  assert.ok(datasetArray([2, 3], "int16") instanceof Int16Array);
  const r = seedRenderer(1);
  assert.equal(r.head(), "");
  assert.equal(
    r.row({
      framing: "ieeeio",
      datasets: 5,
      write_s: 1.2346,
      write_user_ticks: 2,
      write_sys_ticks: 10,
      write_cpu_ticks: 12,
      repeat: 1,
      stat: "run",
    }),
    "--------------IEEE--------------\nWrite  5:*****\n        Realtime=1.235, UserTime=2, SystemTime=10, Combined=12\n",
  );
  assert.equal(
    r.row({
      framing: "ieeeio",
      datasets: 10,
      write_s: 2,
      write_user_ticks: 0,
      write_sys_ticks: 1,
      write_cpu_ticks: 1,
      repeat: 1,
      stat: "run",
    }),
    "Write 10:**********\n        Realtime=2.000, UserTime=0, SystemTime=1, Combined=1\n",
  );
});
