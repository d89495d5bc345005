/**
 * cold_ok decided per phase (open_cold_ok, read_cold_ok, random_cold_ok, cold_why): the reasons
 * as words, a netCDF-4 file whose random phase the library's chunk cache serves (random_cold_ok
 * false, `random: device bytes`, the human table's mark on the random rate and its footnote), a
 * table on tmpfs (every phase `fs type`, never `cold` unmarked), and a cold table on this
 * machine's disk (every phase true, nothing marked).
 * @module
 */
import assert from "node:assert/strict";
import { coldVerdict } from "../lib/io/cache.ts";
import * as libc from "../lib/sys/libc.ts";
import { humanTable, humanValue } from "../lib/report/human.ts";
import { columnDocs } from "../lib/workloads/columns.ts";
import { coldMark, judgeCold } from "../lib/workloads/transfer.ts";
import { netcdf4 } from "../lib/peers/netcdf4/mod.ts";
import type { Row } from "../lib/report/row.ts";
import { peerTest, runCli, tempDir } from "./_helpers.ts";

const MIB = 2 ** 20;
const EXT4 = 0xef53;
const TMPFS = 0x01021994;

function rowsOf(stdout: string): Record<string, unknown>[] {
  return JSON.parse(stdout).rows;
}

/** The data lines of a human table (after the header and its rule) and the lines after them. */
function humanLines(stdout: string): { rows: string[]; notes: string[] } {
  const lines = stdout.trimEnd().split("\n").slice(2);
  return {
    rows: lines.filter((l) => !l.startsWith("* ")),
    notes: lines.filter((l) => l.startsWith("* ")),
  };
}

Deno.test("cold phases: each reason named by its word", () => {
  const clean = {
    fsType: EXT4,
    residentAfterDrop: 0,
    readBytes: 4 * MIB,
    deviceReadBytes: 4 * MIB,
  };
  assert.equal(coldVerdict(clean), null);
  assert.equal(coldVerdict({ ...clean, fsType: TMPFS })?.reason, "fs type");
  assert.equal(coldVerdict({ ...clean, residentAfterDrop: 0.5 })?.reason, "resident");
  assert.equal(coldVerdict({ ...clean, deviceReadBytes: 0 })?.reason, "device bytes");
  // an open's reads are not counted: only the file system and the residency judge it
  assert.equal(coldVerdict({ ...clean, readBytes: 0, deviceReadBytes: 0 }), null);
});

Deno.test("cold phases: one phase a cache served fails alone; the others and the AND follow", () => {
  const phase = (readBytes: number, deviceReadBytes: number) => ({
    fsType: EXT4,
    residentAfterDrop: 0,
    readBytes,
    deviceReadBytes,
  });
  const row: Row = {};
  const why = judgeCold(row, "cold", {
    open: phase(0, 4096),
    read: phase(4 * MIB, 4 * MIB),
    random: phase(4 * MIB, 0),
  });
  assert.match(why!, /^the random phase: reading 4194304 bytes fetched only 0 from the device$/);
  assert.deepEqual(
    [row.open_cold_ok, row.read_cold_ok, row.random_cold_ok, row.cold_ok, row.cold_why],
    [true, true, false, false, "random: device bytes"],
  );
  // warm: nothing to trust, every verdict empty
  const warm: Row = {};
  assert.equal(judgeCold(warm, "warm", { open: phase(0, 0), random: phase(4 * MIB, 0) }), null);
  assert.deepEqual(warm, { open_cold_ok: "", random_cold_ok: "", cold_ok: "", cold_why: "" });
  // a row of one phase (records, readers): cold_ok and cold_why alone
  const one: Row = {};
  judgeCold(one, "cold", { read: { ...phase(4 * MIB, 0), residentAfterDrop: 0.9 } }, false);
  assert.deepEqual(one, { cold_ok: false, cold_why: "read: resident" });
});

Deno.test("cold phases: the human table marks the failing phase's rate and says why once", () => {
  const docs = columnDocs(["framing", "cache", "read_MiBps", "random_MiBps", "random_ms"]);
  const table = humanTable(docs, coldMark);
  const base = { framing: "netcdf4", cache: "cold", "read_MiBps": 119, "random_ms": 0.5 };
  const failed = {
    "read_cold_ok": true,
    "random_cold_ok": false,
    "cold_ok": false,
    "cold_why": "random: device bytes",
  };
  table.row({ ...base, random_MiBps: 1612, ...failed });
  table.row({ ...base, random_MiBps: 1613, ...failed });
  table.row({ ...base, random_MiBps: 118, cold_ok: true, cold_why: "" });
  const { rows, notes } = humanLines(table.foot());
  assert.equal(rows.length, 3);
  assert.match(rows[0]!, /^netcdf4\s+cold\*\s+119\s+1612\*\s+0\.5\*$/);
  assert.match(rows[2]!, /^netcdf4\s+cold\s+119\s+118\s+0\.5$/);
  assert.deepEqual(notes, [
    "* not from the device (cold_ok false): random: the phase fetched under half its bytes " +
    "from the device (a cache served them)",
  ]);
  // a row of one phase: its rate
  const records = humanTable(columnDocs(["framing", "phase", "MiBps"]), coldMark);
  records.row({
    framing: "raw",
    phase: "read",
    MiBps: 900,
    cold_ok: false,
    cold_why: "read: resident",
  });
  const out = humanLines(records.foot());
  assert.match(out.rows[0]!, /^raw\s+read\s+900\*$/);
  assert.match(out.notes[0]!, /read: the cache drop left the file in the page cache$/);
  assert.equal(humanValue("number", 1612), "1612");
});

peerTest(
  "cold phases: a netCDF-4 file whose random phase the chunk cache serves: random_cold_ok false",
  () => netcdf4.unavailable(),
  async () => {
    using d = tempDir("sciobench-cold-");
    const fs = libc.statfs(d.path);
    if (fs.inMemory) throw new Error(`${d.path} is on ${fs.typeName}: set TMPDIR to a disk`);
    // 3.4 MB of frames: the sequential phase fills the library's chunk cache, which outlives
    // the page cache drop before the random phase
    const file = `${d.path}/small.nc`;
    const w = await runCli([
      "write",
      "--framing",
      "netcdf4",
      "--n",
      "10000",
      "--frames",
      "12",
      file,
    ]);
    assert.equal(w.code, 0, w.stderr);
    const read = await runCli(["read", "--format", "json", file]);
    assert.equal(read.code, 0, read.stderr);
    const [row] = rowsOf(read.stdout);
    const verdicts = [row!.open_cold_ok, row!.read_cold_ok, row!.random_cold_ok, row!.cold_ok];
    assert.deepEqual(verdicts, [true, true, false, false], JSON.stringify(row));
    assert.equal(row!.random_dev_bytes, 0);
    assert.equal(row!.cold_why, "random: device bytes");
    assert.match(
      read.stderr,
      /cannot be trusted: the random phase: reading \d+ bytes fetched only 0/,
    );
    const human = await runCli(["read", "--format", "table", file]);
    assert.equal(human.code, 0, human.stderr);
    const { rows, notes } = humanLines(human.stdout);
    assert.equal(rows.length, 1);
    assert.match(rows[0]!, /\d\*\s/, "the random rate is marked");
    assert.match(rows[0]!, /\bcold\*/);
    assert.equal(notes.length, 1, human.stdout);
    assert.match(notes[0]!, /^\* not from the device.*random: the phase fetched under half/);
  },
);

const TABLE = ["table", "--framing", "raw,gsd", "--size", "2M", "--n", "32^2", "--no-warmup"];

Deno.test("cold phases: on tmpfs every phase fails by fs type and no row says cold unmarked", async () => {
  const shm = "/dev/shm";
  if (!libc.statfs(shm).inMemory) throw new Error(`${shm} is not in memory here`);
  const json = await runCli([...TABLE, "--dir", shm, "--format", "json"]);
  assert.equal(json.code, 0, json.stderr);
  for (const row of rowsOf(json.stdout)) {
    assert.deepEqual(
      [row.open_cold_ok, row.read_cold_ok, row.random_cold_ok, row.cold_ok],
      [false, false, false, false],
    );
    assert.equal(row.cold_why, "open: fs type; read: fs type; random: fs type");
  }
  const human = await runCli([...TABLE, "--dir", shm, "--format", "table"]);
  assert.equal(human.code, 0, human.stderr);
  const { rows, notes } = humanLines(human.stdout);
  assert.equal(rows.length, 2, human.stdout);
  for (const line of rows) {
    assert.doesNotMatch(line, /\bcold\b(?!\*)/, "cold is always marked on tmpfs");
    // open, read and random rates (and random_ms) marked; write is the device's
    assert.equal(line.match(/\d\*/g)?.length, 4, line);
  }
  assert.equal(notes.length, 1, human.stdout);
  assert.match(notes[0]!, /open, read, random: the file system keeps the file/);
});

Deno.test("cold phases: a cold table on this machine's disk: every phase true, nothing marked", async () => {
  using d = tempDir("sciobench-cold-");
  const fs = libc.statfs(d.path);
  if (fs.inMemory) throw new Error(`${d.path} is on ${fs.typeName}: set TMPDIR to a disk`);
  const json = await runCli([...TABLE, "--dir", d.path, "--format", "json"]);
  assert.equal(json.code, 0, json.stderr);
  const rows = rowsOf(json.stdout);
  assert.equal(rows.length, 2);
  for (const row of rows) {
    assert.deepEqual(
      [row.open_cold_ok, row.read_cold_ok, row.random_cold_ok, row.cold_ok, row.cold_why],
      [true, true, true, true, ""],
      JSON.stringify(row),
    );
  }
  const human = await runCli([...TABLE, "--dir", d.path, "--format", "table"]);
  assert.equal(human.code, 0, human.stderr);
  assert.doesNotMatch(human.stdout, /\*/);
});
