/**
 * cold_ok: the file systems where a cache drop cannot make a read cold (by statfs magic), a drop
 * that leaves pages resident, reads that fetch nothing from the device; and real runs of every
 * workload that reads cold (table, records, readers, read): this machine's disk (cold_ok=true),
 * and a file another process keeps mapped, which the drop cannot evict (cold_ok=false, one line
 * on stderr recommending --direct).
 * @module
 */
import assert from "node:assert/strict";
import { coldReadsDistrusted, DROP_DOES_NOT_WORK } from "../lib/io/cache.ts";
import * as libc from "../lib/sys/libc.ts";
import { backendByName } from "../lib/backends/registry.ts";
import type { Row } from "../lib/report/row.ts";
import { Progress } from "../lib/report/progress.ts";
import { runTable } from "../lib/workloads/table/mod.ts";
import { coldWarning } from "../lib/workloads/transfer.ts";
import { recordsRow, recordsTargets, runRecords } from "../lib/workloads/records/mod.ts";
import { commandMissing, REQUIRE_PEERS, runCli, tempDir } from "./_helpers.ts";

const MIB = 2 ** 20;
const clean = { residentAfterDrop: 0, readBytes: 4 * MIB, deviceReadBytes: 4 * MIB };

Deno.test("cold_ok: each file system where the drop does not work is named by its magic", () => {
  const magics: [number, RegExp][] = [
    [0x6969, /NFS/],
    [0x0bd00bd0, /Lustre/],
    [0x47504653, /GPFS/],
    [0x19830326, /BeeGFS/],
    [0x00c36400, /CephFS/],
    [0x65735546, /FUSE/],
    [0x01021994, /tmpfs/],
  ];
  for (const [fsType, name] of magics) {
    const why = coldReadsDistrusted({ fsType, ...clean });
    assert.ok(why !== null, `0x${fsType.toString(16)} is distrusted`);
    assert.match(why, name);
  }
  assert.equal(Object.keys(DROP_DOES_NOT_WORK).length, magics.length + 1); // and ramfs
  // ext4, xfs, btrfs: the drop works, and the evidence decides
  for (const fsType of [0xef53, 0x58465342, 0x9123683e]) {
    assert.equal(coldReadsDistrusted({ fsType, ...clean }), null);
    assert.match(
      coldReadsDistrusted({ fsType, ...clean, residentAfterDrop: 0.5 })!,
      /the drop left 50% of the file in the page cache/,
    );
    assert.equal(coldReadsDistrusted({ fsType, ...clean, residentAfterDrop: 0.04 }), null);
    assert.match(
      coldReadsDistrusted({ fsType, ...clean, deviceReadBytes: 0 })!,
      /reading 4194304 bytes fetched only 0 from the device/,
    );
    assert.equal(coldReadsDistrusted({ fsType, ...clean, deviceReadBytes: 3 * MIB }), null);
  }
});

const TABLE = ["table", "--framing", "raw", "--size", "2M", "--n", "32^2", "--no-warmup"];

function rowsOf(stdout: string): Record<string, unknown>[] {
  return JSON.parse(stdout).rows;
}

Deno.test("cold_ok: true on this machine's disk, empty with --cache warm", async () => {
  using d = tempDir("sciobench-cold-");
  const fs = libc.statfs(d.path);
  if (fs.inMemory) throw new Error(`${d.path} is on ${fs.typeName}: set TMPDIR to a disk`);
  const cold = await runCli([...TABLE, "--dir", d.path, "--format", "json"]);
  assert.equal(cold.code, 0, cold.stderr);
  const [row] = rowsOf(cold.stdout);
  assert.equal(row!.cold_ok, true, JSON.stringify(row));
  assert.doesNotMatch(cold.stderr, /cannot be trusted/);
  const warm = await runCli([...TABLE, "--dir", d.path, "--cache", "warm", "--format", "csv"]);
  assert.equal(warm.code, 0, warm.stderr);
  const [head, line] = warm.stdout.trim().split("\n");
  const at = head!.split(",").indexOf("cold_ok");
  assert.ok(at >= 0, head);
  assert.equal(line!.split(",")[at], "", "warm rows leave cold_ok empty");
});

/**
 * Maps `path` in a process of its own, touches every page and keeps them mapped (a mapped page is
 * one posix_fadvise(DONTNEED) cannot drop): a real drop that does not work. Returns its pid.
 */
function holdMapped(path: string): number {
  const script = `
import mmap, os, sys, time
r, w = os.pipe()
pid = os.fork()
if pid == 0:
    f = open(sys.argv[1], "rb")
    m = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
    sum(m[i] for i in range(0, len(m), 4096))
    os.write(w, b"1")
    os.close(1)
    os.close(2)
    time.sleep(120)
    os._exit(0)
os.read(r, 1)
print(pid)
`;
  const out = new Deno.Command("python3", { args: ["-c", script, path] }).outputSync();
  assert.ok(out.success, new TextDecoder().decode(out.stderr));
  return Number(new TextDecoder().decode(out.stdout).trim());
}

Deno.test("cold_ok: false when the drop leaves the file resident (another process maps it)", async () => {
  if (commandMissing("python3") !== null) {
    if (Deno.env.get("SCIOBENCH_REQUIRE_PEERS") === "1") throw new Error("python3 is missing");
    console.log("skipped: python3 is missing");
    return;
  }
  using d = tempDir("sciobench-cold-");
  const holders: number[] = [];
  try {
    const rows: Row[] = [];
    await runTable({
      backends: [backendByName("raw")],
      sizes: [2 * MIB],
      ns: [1024],
      dir: d.path,
      repeat: 1,
      seed: 1,
      warmup: false,
      progress: new Progress({ quiet: true }),
      afterWrite: (path) => holders.push(holdMapped(path)),
    }, (row) => rows.push(row));
    assert.equal(holders.length, 1);
    const [row] = rows;
    assert.ok(Number(row!.resident_after_drop) > 0.5, `resident ${row!.resident_after_drop}`);
    assert.equal(row!.cold_ok, false);
    assert.match(
      coldWarning(d.path, "the drop left 100% of the file in the page cache"),
      /^cold reads in .* cannot be trusted: the drop left 100% .*; cold_ok=false in these rows; use --direct/,
    );
  } finally {
    for (const pid of holders) {
      try {
        Deno.kill(pid, "SIGKILL");
      } catch {
        // already gone
      }
    }
  }
});

/** Runs `body` with a helper that keeps files mapped, ending every holder it started afterwards. */
async function withHolders(body: (hold: (path: string) => void) => Promise<void>): Promise<void> {
  if (commandMissing("python3") !== null) {
    if (Deno.env.get("SCIOBENCH_REQUIRE_PEERS") === "1") throw new Error("python3 is missing");
    console.log("skipped: python3 is missing");
    return;
  }
  const holders: number[] = [];
  try {
    await body((path) => holders.push(holdMapped(path)));
  } finally {
    for (const pid of holders) {
      try {
        Deno.kill(pid, "SIGKILL");
      } catch {
        // already gone
      }
    }
  }
}

/** The stderr lines saying cold reads cannot be trusted. */
function coldLines(stderr: string): string[] {
  return stderr.split("\n").filter((l) => l.includes("cannot be trusted"));
}

/**
 * A Packman file (readers --file): `records` records of `length` float64 with 4-byte markers,
 * element `length` of record i (1-based) equal to i.
 */
function packmanFile(path: string, records: number, length: number): void {
  const rec = 8 + 8 * length;
  const bytes = new Uint8Array(records * rec);
  const view = new DataView(bytes.buffer);
  for (let i = 0; i < records; i++) {
    const at = i * rec;
    view.setUint32(at, 8 * length, true);
    view.setFloat64(at + 4 + 8 * (length - 1), i + 1, true);
    view.setUint32(at + rec - 4, 8 * length, true);
  }
  Deno.writeFileSync(path, bytes);
}

Deno.test("cold_ok in records, readers and read rows: true on this machine's disk", async () => {
  using d = tempDir("sciobench-cold-");
  const fs = libc.statfs(d.path);
  if (fs.inMemory) throw new Error(`${d.path} is on ${fs.typeName}: set TMPDIR to a disk`);
  const records = await runCli([
    ...["records", "--framing", "raw,netcdf", "--shape", "8x64x64", "--dir", d.path],
    ...["--format", "json"],
  ]);
  assert.equal(records.code, 0, records.stderr);
  for (const row of rowsOf(records.stdout)) {
    assert.equal(row.cold_ok, row.phase === "read" ? true : "", JSON.stringify(row));
  }
  const readers = await runCli([
    // three readers of one shared file read 3 MiB and fetch 1 MiB: the file counts once
    ...["readers", "--reader", "sciobench", "--procs", "1,3", "--records", "4"],
    ...["--length", "32768", "--cache", "cold,warm", "--dir", d.path, "--format", "json"],
  ]);
  assert.equal(readers.code, 0, readers.stderr);
  const rows = rowsOf(readers.stdout);
  assert.equal(rows.length, 8);
  for (const row of rows) {
    assert.equal(row.cold_ok, row.cache === "cold" ? true : "", JSON.stringify(row));
  }
  const file = `${d.path}/t.gsd`;
  const w = await runCli(["write", "--framing", "gsd", "--n", "1000", "--frames", "20", file]);
  assert.equal(w.code, 0, w.stderr);
  const read = await runCli(["read", "--format", "json", file]);
  assert.equal(read.code, 0, read.stderr);
  const [row] = rowsOf(read.stdout);
  assert.equal(row!.cache, "cold");
  assert.equal(row!.cold_ok, true, JSON.stringify(row));
  for (const out of [records, readers, read]) assert.deepEqual(coldLines(out.stderr), []);
  const direct = await runCli(["read", "--format", "json", "--direct", file]);
  assert.equal(direct.code, 0, direct.stderr);
  const [drow] = rowsOf(direct.stdout);
  assert.equal(drow!.cache, "direct");
  assert.equal(drow!.cold_ok, "", "O_DIRECT rows have nothing to trust");
});

Deno.test("cold_ok: false in records, readers and read when the drop is defeated (the file is mapped)", async () => {
  using d = tempDir("sciobench-cold-");
  await withHolders(async (hold) => {
    // records: the file is held mapped as soon as it is written
    const runs = await runRecords({
      targets: recordsTargets([backendByName("raw")], ["native"]),
      shape: [8, 64, 64],
      dtype: "float32",
      repeat: 1,
      dir: d.path,
      seed: 1,
      progress: new Progress({ quiet: true }),
      afterWrite: (path) => hold(path),
    });
    const rows = runs.map((run) => recordsRow(run, [8, 64, 64]));
    assert.deepEqual(rows.map((r) => [r.phase, r.cold_ok]), [["write", ""], ["read", false]]);
    // read and readers --file: a user's file, held mapped
    const user = `${d.path}/user.raw`;
    const w = await runCli(["write", "--framing", "raw", "--n", "1000", "--frames", "20", user]);
    assert.equal(w.code, 0, w.stderr);
    const packman = `${d.path}/packman.f77`;
    packmanFile(packman, 4, 32768);
    hold(user);
    hold(packman);
    const read = await runCli(["read", "--format", "json", user]);
    assert.equal(read.code, 0, read.stderr);
    assert.equal(rowsOf(read.stdout)[0]!.cold_ok, false);
    const outs = [read];
    // readers --file is read by Packman's rd, compiled with gfortran
    if (commandMissing("gfortran") !== null && !REQUIRE_PEERS) {
      console.log("skipped readers --file: gfortran is missing");
    } else {
      const readers = await runCli([
        ...["readers", "--reader", "gfortran", "--file", packman, "--procs", "1"],
        ...["--dir", d.path, "--format", "json"],
      ]);
      assert.equal(readers.code, 0, readers.stderr);
      assert.equal(rowsOf(readers.stdout)[0]!.cold_ok, false);
      outs.push(readers);
    }
    for (const out of outs) {
      const lines = coldLines(out.stderr);
      assert.equal(lines.length, 1, out.stderr);
      assert.match(lines[0]!, /the drop left \d+% of the file in the page cache.*use --direct/);
    }
  });
});
