/**
 * Tests of `sciobench readers` (the Packman workload): real reader processes in both modes,
 * the reader's own checks, and failures of a reader failing the run with its message.
 * @module
 */
import assert from "node:assert/strict";
import { SciobenchError } from "../lib/core/errors.ts";
import { backendByName } from "../lib/backends/registry.ts";
import { selfCommand } from "../lib/core/self.ts";
import {
  type ReaderReport,
  runReaderProcesses,
  writePackmanFile,
} from "../lib/workloads/readers/mod.ts";
import { runCli, tempDir } from "./_helpers.ts";

const LENGTH = 1000; // 8000-byte records: the marker scan reads exactly the markers
const RECORD = LENGTH * 8 + 8;

function writeFile(path: string, fileIndex = 0): void {
  writePackmanFile(backendByName("f77"), path, {
    records: 10,
    length: LENGTH,
    seed: 1,
    fileIndex,
    endian: "native",
    backendOptions: {},
  });
}

function launcher(extra: string[] = []) {
  const self = selfCommand();
  return (path: string, fileIndex: number) =>
    new Deno.Command(self.cmd, {
      args: [
        ...self.args,
        ...["readers", "_reader", path, "--length", String(LENGTH), "--option", "marker=4"],
        ...["--endian", "native"],
        ...["--file-index", String(fileIndex), ...extra],
      ],
      stdin: "piped",
      stdout: "piped",
      stderr: "piped",
    }).spawn();
}

Deno.test("readers: 2 processes in both modes and both cache states; every reader read the whole file", async () => {
  using tmp = tempDir();
  const r = await runCli([
    ...["readers", "--procs", "2", "--mode", "shared,separate", "--cache", "cold,warm"],
    ...["--reader", "sciobench"],
    ...["--records", "10", "--length", String(LENGTH), "--dir", tmp.path, "--format", "json"],
  ]);
  assert.equal(r.code, 0, r.stderr);
  const doc = JSON.parse(r.stdout) as {
    columns: string[];
    rows: Record<string, number | string>[];
  };
  assert.deepEqual(doc.columns.slice(0, 12), [
    ...["mode", "procs", "file_bytes", "wall_s", "mean_s", "max_s", "min_s", "aggregate_MiBps"],
    ...["read_user_s", "read_sys_s", "read_dev_bytes", "slope_s_per_proc"],
  ]);
  assert.deepEqual(doc.rows.map((x) => `${x.cache}/${x.mode}`), [
    "cold/shared",
    "cold/separate",
    "warm/shared",
    "warm/separate",
  ]);
  for (const row of doc.rows) {
    assert.equal(row.procs, 2);
    assert.equal(row.file_bytes, 10 * RECORD);
    assert.equal(row.reader_bytes, 2 * 10 * RECORD, "each reader read every byte of its file once");
    const [wall, max, min, mean] = [row.wall_s, row.max_s, row.min_s, row.mean_s] as number[];
    assert.ok(wall! > 0 && min! > 0 && min! <= mean! && mean! <= max! && max! <= wall! * 1.0001);
    assert.ok(
      Math.abs((row.slope_s_per_proc as number) - wall! / 2) <= 1e-5 * wall!,
      "first row: wall / procs",
    );
    assert.ok((row.read_user_s as number) + (row.read_sys_s as number) > 0);
  }
  assert.deepEqual([...Deno.readDirSync(tmp.path)], [], "scratch files removed");
});

Deno.test("readers: a reader's failed check fails the run with that reader's message", async () => {
  using tmp = tempDir();
  const good = `${tmp.path}/good.f77`;
  const bad = `${tmp.path}/bad.f77`;
  writeFile(good);
  writeFile(bad);
  // Record 7's last element becomes 99 (the seed's rd would print " i= 7 bad value = 9.9D+01").
  const bytes = await Deno.readFile(bad);
  new DataView(bytes.buffer).setFloat64(6 * RECORD + 4 + (LENGTH - 1) * 8, 99, true);
  await Deno.writeFile(bad, bytes);

  const reports: ReaderReport[] = await runReaderProcesses([good, good], launcher(), () => 0);
  assert.equal(reports.length, 2);
  for (const rep of reports) {
    assert.equal(rep.bytes, 10 * RECORD);
    assert.equal(rep.records, 10);
    assert.ok(rep.t1Ns > rep.t0Ns);
  }

  const err = await runReaderProcesses([good, bad], launcher(), () => 0).then(
    () => undefined,
    (e: unknown) => e,
  );
  assert.ok(err instanceof SciobenchError, String(err));
  assert.equal(err.exitCode, 1);
  assert.match(err.message, /^reader 2 of 2 \(.*bad\.f77\): .*bad\.f77: i=7 bad value = 99/);

  // A pattern from another file (wrong --file-index) is caught beyond the seed's check.
  const other = await runReaderProcesses([good], launcher(), () => 3).then(
    () => undefined,
    (e) => e,
  );
  assert.ok(other instanceof SciobenchError);
  assert.match(other.message, /record 1: a\(1\) = .* expected .*seeded pattern/);

  // A malformed file keeps its exit code 2 through the run.
  await Deno.writeFile(bad, bytes.subarray(0, bytes.length - 3));
  const cut = await runReaderProcesses([bad], launcher(), () => 0).then(() => undefined, (e) => e);
  assert.ok(cut instanceof SciobenchError);
  assert.equal(cut.exitCode, 2);
  assert.match(cut.message, /reader 1 of 1 .*record 10 is cut short/);
  assert.ok(!cut.message.includes("\n"));
});

Deno.test("readers: the reader process alone, and usage errors as one line with exit 2", async () => {
  using tmp = tempDir();
  const path = `${tmp.path}/p.f77`;
  writeFile(path, 2);
  const r = await runCli([
    ...["readers", "_reader", path, "--length", String(LENGTH), "--file-index", "2"],
    ...["--option", "marker=4", "--endian", "native", "--no-wait"],
  ]);
  assert.equal(r.code, 0, r.stderr);
  const rep = JSON.parse(r.stdout) as ReaderReport;
  assert.equal(rep.bytes, 10 * RECORD);
  assert.ok(rep.wallS > 0);
  for (
    const args of [
      ["readers", "--mode", "both"],
      ["readers", "--procs", "0"],
      ["readers", "--cache", "lukewarm"],
      ["readers", "--framing", "nosuch"],
      ["readers", "--dir", `${tmp.path}/missing`],
    ]
  ) {
    const u = await runCli(args);
    assert.equal(u.code, 2, `${args.join(" ")}: ${u.stderr}`);
    assert.equal(u.stderr.trimEnd().split("\n").length, 1, u.stderr);
    assert.match(u.stderr, /^sciobench: error: /);
  }
});
