/**
 * The bare workloads are the seeds' experiments: `--dry-run --format json` of table, scaling,
 * readers and records shows the seed's parameters. Every expected number is quoted from the seed
 * texts (../shared/seeds/, cited by file and line); where those files are present the quoted line
 * is checked too, so a citation cannot drift.
 */
import assert from "node:assert/strict";
import { REQUIRE_PEERS, runCli, tempDir } from "./_helpers.ts";
import { hdf4Version } from "../lib/peers/hdf4/mod.ts";
import { gfortranUnavailable } from "../lib/baselines/gfortran/compile.ts";

const SEEDS = new URL("../../shared/seeds/", import.meta.url);

/** A seed line, checked against the seed file where the seeds are present. */
function quote(file: string, line: number, text: string): void {
  let body: string;
  try {
    body = Deno.readTextFileSync(new URL(file, SEEDS));
  } catch {
    return; // the seeds are not shipped with the repository; the numbers below stand alone
  }
  const got = body.split("\n")[line - 1] ?? "";
  assert.ok(got.includes(text), `${file}:${line} should contain '${text}', has '${got}'`);
}

interface Plan {
  command: string;
  parameters: Record<string, unknown>;
  backends: { name: string; endian?: string }[];
  skipped: { name: string; reason: string }[];
  files: { name: string; count: number; bytes: number }[];
  "write_bytes": number;
  "read_bytes": number;
  warnings: string[];
}

async function dryRun(args: string[], cwd: string): Promise<Plan> {
  const r = await runCli([...args, "--dry-run", "--format", "json"], { cwd });
  assert.equal(r.code, 0, r.stderr);
  assert.deepEqual([...Deno.readDirSync(cwd)], [], "a dry run touches no disk");
  return JSON.parse(r.stdout) as Plan;
}

Deno.test("table --dry-run: gsd's benchmark-hoomd table (seed 002)", async () => {
  using d = tempDir();
  const p = await dryRun(["table"], d.path);
  // 002 lines 20, 41: sizes "128 MiB" and "1 GiB".
  quote("002_5ec106a7565b01ea.txt", 20, "128 MiB");
  quote("002_5ec106a7565b01ea.txt", 41, "1 GiB");
  assert.deepEqual(p.parameters["size_bytes"], [128 * 2 ** 20, 2 ** 30]);
  // 002 lines 21, 28, 35: N = 32^2, 128^2, 1024^2.
  quote("002_5ec106a7565b01ea.txt", 21, "32^2");
  quote("002_5ec106a7565b01ea.txt", 28, "128^2");
  quote("002_5ec106a7565b01ea.txt", 35, "1024^2");
  assert.deepEqual(p.parameters["N"], [32 ** 2, 128 ** 2, 1024 ** 2]);
  // 002 line 8: "storing position and orientation in a hoomd schema GSD file".
  quote("002_5ec106a7565b01ea.txt", 8, "a hoomd schema GSD file");
  assert.deepEqual(p.parameters["framing"], ["gsd"]);
  assert.equal(p.parameters["warmup"], true);
  assert.equal(p.parameters["cache"], "cold");
  const peers = p.parameters["peer"] as string[];
  const skippedPeer = p.skipped.find((s) => s.name === "python-gsd");
  assert.ok(peers.includes("python-gsd") !== (skippedPeer !== undefined), "peer run or skipped");
  if (REQUIRE_PEERS) assert.deepEqual(peers, ["python-gsd"]);
  // Warm-up and timed write of every cell for each of gsd and the peer.
  const perWriter = p.files.filter((f) => f.name.startsWith("table.gsd "));
  assert.equal(perWriter.length, 6);
  assert.ok(perWriter.every((f) => f.count === 2));

  const noPeers = await dryRun(["table", "--no-peers", "--no-warmup"], d.path);
  assert.deepEqual(noPeers.parameters["peer"], []);
  assert.equal(noPeers.parameters["warmup"], false);
});

Deno.test("table --dry-run warns about a cell over HDF4's dataset limit", async () => {
  using d = tempDir();
  const p = await dryRun(
    ["table", "--framing", "hdf4,raw", "--size", "128MiB", "--n", "32^2,128^2", "--no-warmup"],
    d.path,
  );
  if (p.backends.some((b) => b.name === "hdf4")) {
    assert.equal(p.warnings.length, 1, JSON.stringify(p.warnings));
    assert.match(p.warnings[0]!, /hdf4 at size 128 MiB, N 32\^2: 9364 datasets/);
  } else {
    assert.ok(!REQUIRE_PEERS, "hdf4 must be available");
  }
});

Deno.test("scaling --dry-run: IOspeed's three sections (seed 000)", async () => {
  using d = tempDir();
  const p = await dryRun(["scaling"], d.path);
  // 000 lines 13-14: "write between 5 and 40 datasets. Each dataset is 64^3 double precision".
  quote("000_fdb9b22c05dbe876.txt", 13, "between 5 and 40");
  quote("000_fdb9b22c05dbe876.txt", 14, "64^3 double precision");
  assert.deepEqual(p.parameters["datasets"], [5, 10, 15, 20, 25, 30, 35, 40]);
  assert.deepEqual(p.parameters["shape"], [64, 64, 64]);
  assert.equal(p.parameters["type"], "float64");
  assert.equal(p.parameters["dataset_bytes"], 64 ** 3 * 8);
  // 000 lines 52, 69, 86: the sections IEEE, HDF, F77 Unformatted, in this order.
  quote("000_fdb9b22c05dbe876.txt", 52, "IEEE");
  quote("000_fdb9b22c05dbe876.txt", 69, "HDF");
  quote("000_fdb9b22c05dbe876.txt", 86, "F77 Unformatted");
  const expected = hdf4Version() === null ? ["ieeeio", "f77"] : ["ieeeio", "hdf4", "f77"];
  if (REQUIRE_PEERS) assert.equal(expected.length, 3);
  assert.deepEqual(p.backends.map((b) => b.name), expected);
  // ieeeio.md §4: IOspeed's SDcreate used DFNT_FLOAT64, big-endian; IEEEIO and F77 native.
  const endian = Object.fromEntries(p.backends.map((b) => [b.name, b.endian]));
  assert.equal(endian["ieeeio"], "native");
  assert.equal(endian["f77"], "native");
  if (expected.includes("hdf4")) assert.equal(endian["hdf4"], "big");
  else assert.ok(p.skipped.some((s) => s.name === "hdf4"), "a missing HDF4 is noted");
  // 180 datasets per section plus one warm-up each.
  assert.equal(p.write_bytes, expected.length * (180 + 1) * 64 ** 3 * 8);

  const perFraming = await dryRun(["scaling", "--endian", "big"], d.path);
  assert.ok(perFraming.backends.every((b) => b.endian === "big"), "a bare order applies to all");
});

Deno.test("readers --dry-run: Packman's rd programs (seed 001)", async () => {
  using d = tempDir();
  const p = await dryRun(["readers"], d.path);
  // 001 line 25: "double precision a(130000)"; line 27: "do 10 i=1,10".
  quote("001_e6154a8531c82adb.txt", 25, "a(130000)");
  quote("001_e6154a8531c82adb.txt", 27, "do 10 i=1,10");
  assert.equal(p.parameters["length"], 130000);
  assert.equal(p.parameters["records"], 10);
  // 001 line 11: 1 to 7 simultaneous processes; lines 13, 15: one tmpfle and n tmpfles.
  quote("001_e6154a8531c82adb.txt", 11, "| 1 | 2 | 3 | 4 | 5 | 6 | 7 |");
  quote("001_e6154a8531c82adb.txt", 13, "one tmpfle");
  quote("001_e6154a8531c82adb.txt", 15, "n tmpfles");
  assert.deepEqual(p.parameters["procs"], [1, 2, 3, 4, 5, 6, 7]);
  assert.deepEqual(p.parameters["mode"], ["shared", "separate"]);
  assert.deepEqual(p.parameters["cache"], ["cold"]);
  // 001 line 5: "The tmp file is about 10 megabytes": 10 x (1,040,000 + 8) bytes (fortran.md §6.2).
  quote("001_e6154a8531c82adb.txt", 5, "about 10 megabytes");
  assert.equal(p.files[0]!.bytes, 10_400_080);
  // The seed timed Fortran rd programs: gfortran's where it is installed.
  const gfortran = gfortranUnavailable() === null;
  if (REQUIRE_PEERS) assert.ok(gfortran, "gfortran must be installed");
  assert.equal(p.parameters["reader"], gfortran ? "gfortran" : "sciobench");
});

Deno.test("records --dry-run: netCDF-4's four files of 2000 x 300 x 500 (seed 003)", async () => {
  using d = tempDir();
  const p = await dryRun(["records"], d.path);
  // 003 lines 72-73: "record by record: x 2000 y 300 z 500".
  quote("003_531cd0ed2351ddbd.txt", 72, "x 2000 y");
  quote("003_531cd0ed2351ddbd.txt", 73, "300 z 500");
  assert.deepEqual(p.parameters["shape"], [2000, 300, 500]);
  // Integers (003 line 38 promises "floating point stuff" later): 1.2 GB per file.
  quote("003_531cd0ed2351ddbd.txt", 38, "floating point stuff");
  assert.equal(p.parameters["type"], "int32");
  assert.equal(p.parameters["file_bytes"], 1_200_000_000);
  // 003 lines 58-64: HDF5 (BE on LE, line 59), netcdf-3, netcdf-4 classic, netcdf-4/HDF5
  // native (line 64); our native classic writer beside them.
  quote("003_531cd0ed2351ddbd.txt", 59, "Writing BE on a LE system");
  quote("003_531cd0ed2351ddbd.txt", 64, "writing LE on a LE system");
  const all = ["hdf5=big", "netcdf-lib=big", "netcdf4=native", "netcdf=big"];
  const got = p.parameters["endian"] as string[];
  if (REQUIRE_PEERS) assert.deepEqual(got, all);
  else assert.deepEqual(got, all.filter((x) => got.includes(x)));
  assert.ok(got.includes("netcdf=big"));
  assert.equal(p.write_bytes, got.length * 1_200_000_000);
});

Deno.test("--quick is the same experiment scaled down, on every workload", async () => {
  using d = tempDir();
  for (const command of ["table", "scaling", "readers", "records"]) {
    const full = await dryRun([command], d.path);
    const quick = await dryRun([command, "--quick"], d.path);
    assert.ok(
      quick.write_bytes * 3 < full.write_bytes,
      `${command}: --quick writes ${quick.write_bytes}, the seed ${full.write_bytes}`,
    );
    assert.deepEqual(quick.backends, full.backends, `${command}: the same subjects`);
  }
});

Deno.test("--type: every number type where the backend stores it, one line where it cannot", async () => {
  using d = tempDir();
  const p = await dryRun(["records", "--type", "uint16", "--framing", "netcdf4,raw"], d.path);
  assert.equal(p.parameters["type"], "uint16");
  const r = await runCli(["records", "--type", "uint16", "--framing", "netcdf-lib", "--dry-run"]);
  if (r.code === 0) {
    assert.ok(!REQUIRE_PEERS, "netcdf-lib must be available");
    return;
  }
  assert.equal(r.code, 2, r.stderr);
  assert.match(
    r.stderr,
    /^sciobench: error: --type uint16: netcdf-lib \(netCDF classic through libnetcdf\) cannot/,
  );
  assert.equal(r.stderr.trim().split("\n").length, 1);
  const cdf5 = await dryRun(["records", "--type", "uint16", "--framing", "netcdf"], d.path);
  assert.equal(cdf5.parameters["type"], "uint16");
});

Deno.test("a cell a backend cannot hold: error column, the sweep goes on, exit 1", async () => {
  if (hdf4Version() === null) {
    assert.ok(!REQUIRE_PEERS, "hdf4 must be available");
    return;
  }
  using d = tempDir();
  // N = 1: 5,852 frames of 28 bytes, 11,704 HDF4 datasets (the limit is 9,361), in a second.
  const r = await runCli(
    [
      "table",
      "--framing",
      "hdf4,raw",
      "--size",
      "160KiB",
      "--n",
      "1",
      "--no-warmup",
      "--dir",
      d.path,
    ],
  );
  assert.equal(r.code, 1, r.stderr);
  const [head, ...lines] = r.stdout.trim().split("\n");
  const columns = head!.split(",");
  const errorAt = columns.indexOf("error");
  assert.ok(errorAt > 0);
  assert.equal(lines.length, 2, r.stdout);
  const hdf4 = lines[0]!.split(",");
  const raw = lines[1]!.split(",");
  assert.equal(hdf4[0], "hdf4");
  assert.match(lines[0]!, /SDcreate .*HDF4 error 62/);
  assert.equal(hdf4[columns.indexOf("write_MiBps")], "", "numbers empty");
  assert.equal(raw[0], "raw");
  assert.equal(raw[errorAt] ?? "", "");
  assert.ok(Number(raw[columns.indexOf("write_MiBps")]) > 0);
  assert.match(r.stderr, /warning: hdf4 at size 160 KiB, N 1: 11704 datasets/);
  assert.match(r.stderr, /1 of 2 cells failed/);
  assert.deepEqual([...Deno.readDirSync(d.path)], [], "the scratch file is removed");
  const table = await runCli([
    ...["table", "--framing", "hdf4,raw", "--size", "160KiB", "--n", "1", "--no-warmup"],
    ...["--dir", d.path, "--format", "seed"],
  ]);
  assert.equal(table.code, 1);
  assert.match(table.stdout, /^hdf4 +160 KiB 1 +failed: .*HDF4 error 62/m);
  assert.match(table.stdout, /^raw +160 KiB 1 +\d/m);
});

Deno.test("scaling and records sweeps go on past a run the backend cannot hold", async () => {
  if (hdf4Version() === null) {
    assert.ok(!REQUIRE_PEERS, "hdf4 must be available");
    return;
  }
  using d = tempDir();
  const scaling = await runCli([
    ...["scaling", "--framing", "hdf4,f77", "--datasets", "1,9400", "--shape", "2"],
    ...["--dir", d.path, "--format", "json"],
  ]);
  assert.equal(scaling.code, 1, scaling.stderr);
  const runs = JSON.parse(scaling.stdout).rows as Record<string, unknown>[];
  // every row has an error column: empty for a run that worked
  assert.deepEqual(runs.map((r) => [r["framing"], r["datasets"], r["error"] ? "string" : ""]), [
    ["hdf4", 1, ""],
    ["hdf4", 9400, "string"],
    ["f77", 1, ""],
    ["f77", 9400, ""],
  ]);
  assert.match(String(runs[1]!["error"]), /HDF4 error 62/);
  assert.equal(runs[1]!["write_s"], undefined, "no numbers for the failed run");
  const records = await runCli([
    ...["records", "--framing", "hdf4,raw", "--shape", "9400x2", "--endian", "native"],
    ...["--dir", d.path, "--format", "json"],
  ]);
  assert.equal(records.code, 1, records.stderr);
  const phases = JSON.parse(records.stdout).rows as Record<string, unknown>[];
  assert.deepEqual(phases.map((r) => [r["framing"], r["phase"], r["error"] ? "string" : ""]), [
    ["hdf4", "write", "string"],
    ["raw", "write", ""],
    ["raw", "read", ""],
  ]);
  assert.deepEqual([...Deno.readDirSync(d.path)], [], "scratch files removed");
});
