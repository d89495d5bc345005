/**
 * Tests of what is measured, through each row's audit trail (lib/sys/audit.ts): for every
 * workload and every framing and peer, each timed phase holds the calls it claims (the fsync of
 * a write inside its timing and after its last write; a cache drop of the file before each cold
 * read phase; reads in order in the sequential phase and out of order in the random one; no
 * writes while reading; one file per reader in `separate` mode, one file for all in `shared`),
 * and each row's numbers are the readings of the phase they describe (ticks, device bytes,
 * residency). Peers that do their I/O inside C libraries (HDF5, netCDF, HDF4) are checked on what
 * the trail can see there: the fsync and the drops sciobench issues, and the kernel's own
 * per-process counters (/proc/self/io). python3-gsd runs in its own process: nothing is seen.
 * @module
 */
import assert from "node:assert/strict";
import { backendByName } from "../lib/backends/registry.ts";
import type { Backend } from "../lib/backends/backend.ts";
import { Progress } from "../lib/report/progress.ts";
import type { Row } from "../lib/report/row.ts";
import {
  audited,
  auditOf,
  type AuditPhase,
  auditSummary,
  type RowAudit,
} from "../lib/sys/audit.ts";
import * as libc from "../lib/sys/libc.ts";
import { startMeter } from "../lib/sys/meter.ts";
import { recordsRow, recordsTargets, runRecords } from "../lib/workloads/records/mod.ts";
import { runScaling, scalingRow } from "../lib/workloads/scaling/mod.ts";
import { runTable, runTableCell, type TableOptions } from "../lib/workloads/table/mod.ts";
import { peerTest, runCli, tempDir } from "./_helpers.ts";
import { pythonGsdUnavailable } from "../lib/peers/python_gsd/mod.ts";

const NATIVE = ["raw", "f77", "ieeeio", "gsd", "netcdf"];
const PEERS = ["hdf5", "netcdf4", "netcdf-lib", "hdf4"];
const quiet = () => new Progress({ quiet: true });

/** A scratch directory on a disk (the test runs where cold reads are possible). */
function diskDir(): { path: string } & Disposable {
  const d = tempDir("sciobench-audit-");
  const fs = libc.statfs(d.path);
  if (fs.inMemory) {
    throw new Error(`${d.path} is on ${fs.typeName}: the audit tests need a disk (set TMPDIR)`);
  }
  return d;
}

function trailOf(row: object): RowAudit {
  const a = auditOf(row);
  assert.ok(a, "the row carries its audit trail");
  return a;
}

function phaseIndex(a: RowAudit, name: string): number {
  const i = a.phases.findIndex((p) => p.timed && p.name === name);
  assert.ok(i >= 0, `a timed '${name}' phase in ${a.phases.map((p) => p.name).join(",")}`);
  return i;
}

/** The file of `phase` whose name ends with `suffix` (scratch paths are unique per row). */
function fileIn(phase: AuditPhase, suffix: string) {
  return phase.files.find((f) => f.path.endsWith(suffix));
}

const delta = (pair: readonly [number, number]) => pair[1] - pair[0];

/** The claims of a timed phase's readings: the row's numbers are these readings' differences. */
function assertFromReadings(
  p: AuditPhase,
  fields: { wallS?: unknown; userTicks?: unknown; sysTicks?: unknown; clkTck?: unknown },
  what: string,
): void {
  const r = p.readings;
  assert.ok(r, `${what}: ${p.name} has the meter's readings`);
  if (fields.userTicks !== undefined) {
    assert.equal(fields.userTicks, delta(r.userTicks), `${what}: ${p.name} user ticks`);
  }
  if (fields.sysTicks !== undefined) {
    assert.equal(fields.sysTicks, delta(r.sysTicks), `${what}: ${p.name} system ticks`);
  }
  if (fields.clkTck !== undefined) assert.equal(fields.clkTck, r.clkTck, `${what}: clk_tck`);
  if (fields.wallS !== undefined) {
    const wall = delta(r.monotonicNs) / 1e9;
    assert.ok(
      Math.abs(Number(fields.wallS) - wall) <= wall * 1e-5 + 1e-9,
      `${what}: ${p.name} wall ${fields.wallS} s is the readings' ${wall} s`,
    );
  }
  assert.ok(p.startNs <= p.endNs, `${what}: ${p.name} ends after it starts`);
}

/**
 * A write phase of `suffix`: for native framings, writes of the file and an fsync of it after the
 * last of them, inside the phase; for peers (writes inside the C library), an fsync of the file
 * inside the phase and the kernel's count of written bytes.
 */
function assertWritePhase(
  p: AuditPhase,
  suffix: string,
  bytes: number,
  native: boolean,
  what: string,
) {
  const f = fileIn(p, suffix);
  assert.ok(f, `${what}: the write phase touches ${suffix}`);
  const syncs = p.syncs.filter((s) => s.call === "fsync" && s.path === f.path);
  assert.ok(syncs.length > 0, `${what}: an fsync of the file inside the timed write`);
  const last = syncs.at(-1)!;
  assert.ok(last.atS >= 0 && last.toEndS >= 0, `${what}: the fsync is inside the phase`);
  if (native) {
    assert.ok(f.writes > 0 && f.writeBytes >= bytes, `${what}: ${f.writeBytes} bytes written`);
    assert.equal(last.writesBefore, f.writes, `${what}: the last fsync follows the last write`);
  } else if (p.procIo) {
    assert.ok(p.procIo.wchar >= bytes, `${what}: the kernel saw ${p.procIo.wchar} bytes written`);
  }
}

/** The untimed stretch right before phase `i` drops `suffix` from the cache (fdatasync, DONTNEED). */
function assertDroppedBefore(a: RowAudit, i: number, suffix: string, what: string): number {
  const gap = a.phases[i - 1];
  assert.ok(gap && !gap.timed, `${what}: an untimed stretch before ${a.phases[i]!.name}`);
  const drop = gap.syncs.findLast((s) =>
    s.call === "fadvise" && s.advice === "DONTNEED" && s.path.endsWith(suffix)
  );
  assert.ok(drop, `${what}: POSIX_FADV_DONTNEED of ${suffix} before ${a.phases[i]!.name}`);
  const after = fileIn(gap, suffix)!.reads - drop.readsBefore;
  assert.equal(after, 0, `${what}: nothing read between the drop and the phase`);
  assert.ok(
    gap.syncs.some((s) => s.call === "fdatasync" && s.path === drop.path),
    `${what}: fdatasync before the drop`,
  );
  const res = gap.residency.findLast((r) => r.path === drop.path);
  assert.ok(res, `${what}: the residency after the drop is recorded`);
  return res.fraction;
}

/**
 * Offsets of the logged reads of at least `bytes` bytes and under twice that (whole records; with
 * `exact`, of `bytes` bytes), in call order: not an open's read of many records at once (a scan's
 * copy window, lib/io/mapped.ts).
 */
function dataOffsets(log: readonly number[], bytes: number, exact = false): number[] {
  const out: number[] = [];
  for (let k = 0; k < log.length; k += 2) {
    const n = log[k + 1]!;
    if (exact ? n === bytes : n >= bytes && n < 2 * bytes) out.push(log[k]!);
  }
  return out;
}

/**
 * A read phase: reads of `suffix` (native) in order or out of order, and no writes. With
 * `dataBytes` (a phase that also opens the file and reads its index), "in order" is judged on
 * the reads of at least that many bytes, the records.
 */
function assertReadPhase(
  p: AuditPhase,
  suffix: string,
  order: "in order" | "out of order",
  native: boolean,
  what: string,
  dataBytes = 0,
): void {
  assert.equal(p.writes, 0, `${what}: no writes in the ${p.name} phase`);
  assert.equal(p.syncs.length, 0, `${what}: no fsync or fadvise inside the ${p.name} phase`);
  if (!native) {
    if (p.procIo) assert.ok(p.procIo.syscr > 0, `${what}: the library read in ${p.name}`);
    return;
  }
  const f = fileIn(p, suffix);
  assert.ok(f && f.reads > 0, `${what}: ${p.name} reads ${suffix}`);
  if (order === "in order" && dataBytes > 0) {
    // Reads of whole records (the data, not the index read at open) go forward.
    const data = dataOffsets(f.readLog, dataBytes);
    assert.ok(data.length >= 2, `${what}: ${p.name} read records (${data.length})`);
    assert.ok(
      data.every((o, k) => k === 0 || o > data[k - 1]!),
      `${what}: records in order ${data}`,
    );
  } else if (order === "in order") {
    assert.equal(f.readBackwards, 0, `${what}: ${p.name} reads offsets in order`);
  } else assert.ok(f.readBackwards > 0, `${what}: ${p.name} reads out of order`);
}

function tableOptions(dir: string, backends: Backend[], extra: Partial<TableOptions> = {}) {
  return {
    backends,
    sizes: [256 * 1024],
    ns: [1024],
    dir,
    repeat: 1,
    seed: 7,
    warmup: false,
    sampleBytes: 128 * 1024,
    progress: quiet(),
    ...extra,
  };
}

/** Every claim about one table row and its trail. */
function assertTableRow(row: Row, native: boolean, suffix = `/table.${row.framing}`): void {
  const what = `table ${row.framing}`;
  const a = trailOf(row);
  const w = phaseIndex(a, "write"), o = phaseIndex(a, "open");
  const r = phaseIndex(a, "read"), x = phaseIndex(a, "random");
  assert.ok(w < o && o + 2 === r && r < x, `${what}: write, open, drop, read, random in order`);
  assertWritePhase(a.phases[w]!, suffix, Number(row.data_bytes), native, what);
  const resident = assertDroppedBefore(a, o, suffix, what);
  // what the open cached (f77 and IEEEIO scan the file) is dropped before the read
  assertDroppedBefore(a, r, suffix, what);
  assertDroppedBefore(a, x, suffix, what);
  assert.ok(
    Math.abs(Number(row.resident_after_drop) - resident) < 1e-4,
    `${what}: resident_after_drop ${row.resident_after_drop} is the drop before the read (${resident})`,
  );
  assertReadPhase(a.phases[r]!, suffix, "in order", native, what);
  assertReadPhase(a.phases[x]!, suffix, "out of order", native, what);
  assertReadPhase(a.phases[o]!, suffix, "in order", false, what);
  const [wp, op, rp, xp] = [a.phases[w]!, a.phases[o]!, a.phases[r]!, a.phases[x]!];
  assertFromReadings(wp, {
    wallS: row.write_s,
    userTicks: row.write_user_ticks,
    sysTicks: row.write_sys_ticks,
    clkTck: row.clk_tck,
  }, what);
  assertFromReadings(rp, {
    wallS: row.read_s,
    userTicks: row.read_user_ticks,
    sysTicks: row.read_sys_ticks,
  }, what);
  assertFromReadings(xp, {
    wallS: row.random_s,
    userTicks: row.random_user_ticks,
    sysTicks: row.random_sys_ticks,
  }, what);
  // every frame was verified inside the phase: the comparison took time, and no more than it
  for (const [verify, phase] of [["read_verify_s", "read_s"], ["random_verify_s", "random_s"]]) {
    const v = Number(row[verify!]);
    assert.ok(v > 0 && v < Number(row[phase!]), `${what}: ${verify} ${v} in (0, ${phase})`);
  }
  const blocks = (p: AuditPhase, k: "inBlocks" | "outBlocks") => delta(p.readings![k]) * 512;
  assert.equal(row.read_dev_bytes, blocks(rp, "inBlocks"), `${what}: read_dev_bytes`);
  assert.equal(row.open_dev_bytes, blocks(op, "inBlocks"), `${what}: open_dev_bytes`);
  assert.equal(row.random_dev_bytes, blocks(xp, "inBlocks"), `${what}: random_dev_bytes`);
  assert.equal(row.write_dev_bytes, blocks(wp, "outBlocks"), `${what}: write_dev_bytes`);
  // the run's first row begins with the untimed warm-up of every backend (warm_up.ts)
  assert.match(auditSummary(a), /^(backend warm-up: [^;]*; )?write: .*fsync/);
}

Deno.test("audit: --fsync each fsyncs once per frame, none never, end once at the end", async () => {
  using d = diskDir();
  // the framing's own syncs (gsd 2.7's at creation and new names), seen with --fsync end
  const own = new Map<string, number>();
  for (const fsync of ["end", "each", "none"] as const) {
    const rows: Row[] = [];
    await runTable(
      tableOptions(d.path, NATIVE.map(backendByName), { fsync }),
      (row) => rows.push(row),
    );
    for (const row of rows) {
      const what = `table ${row.framing} --fsync ${fsync}`;
      const name = String(row.framing);
      assert.equal(row.fsync, fsync, `${what}: the row says its policy`);
      const a = trailOf(row);
      const write = a.phases[phaseIndex(a, "write")]!;
      const f = fileIn(write, `/table.${name}`)!;
      const syncs = write.syncs.filter((s) => s.call === "fsync" && s.path === f.path);
      const frames = Number(row.frames);
      if (fsync === "none") {
        assert.equal(syncs.length, 0, `${what}: no fsync in the write`);
        assert.ok(a.phases.every((p) => p.syncs.every((s) => s.call !== "fsync")), what);
        continue;
      }
      assert.equal(syncs.at(-1)!.writesBefore, f.writes, `${what}: the last fsync ends the write`);
      if (fsync === "end") {
        if (name !== "gsd") assert.equal(syncs.length, 1, `${what}: one fsync`);
        own.set(name, syncs.length - 1);
        continue;
      }
      // one per frame, and one more when a trailer, index or header follows the last frame
      const trailer = name === "f77" ? 0 : 1;
      const before = syncs.map((s) => s.writesBefore);
      if (name === "raw") {
        // one pwrite per frame, then the trailer: a sync after each
        assert.deepEqual(before, Array.from({ length: frames + 1 }, (_, k) => k + 1), what);
      }
      assert.ok(
        syncs.length >= frames && syncs.length <= frames + trailer + own.get(name)!,
        `${what}: ${syncs.length} fsyncs for ${frames} frames`,
      );
      // never two in a row: each follows new writes
      assert.ok(before.every((n, k) => k === 0 || n > before[k - 1]!), `${what}: ${before}`);
    }
  }
});

Deno.test("--fsync: peers refuse each with one line; program peers refuse what they cannot do", async () => {
  for (
    const [args, pattern] of [
      [["table", "--framing", "hdf5", "--fsync", "each"], /hdf5 cannot honour --fsync each/],
      [["records", "--framing", "hdf4", "--fsync", "each"], /hdf4 cannot honour --fsync each/],
      [
        ["table", "--fsync", "sometimes"],
        /bad --fsync 'sometimes': expected one of end, each, none/,
      ],
      [
        ["scaling", "--framing", "f77-gfortran", "--fsync", "end"],
        /f77-gfortran cannot honour --fsync end .*use --fsync none/,
      ],
    ] as const
  ) {
    const r = await runCli([...args, "--dry-run"]);
    assert.equal(r.code, 2, `${args.join(" ")}: ${r.stderr}`);
    assert.match(r.stderr, pattern);
    assert.equal(r.stderr.trim().split("\n").length, 1, r.stderr);
  }
});

Deno.test("audit: table rows of every native framing are proven by their trail", async () => {
  using d = diskDir();
  const rows: Row[] = [];
  await runTable(tableOptions(d.path, NATIVE.map(backendByName)), (row) => rows.push(row));
  assert.deepEqual(rows.map((r) => r.framing), NATIVE);
  for (const row of rows) assertTableRow(row, true);
});

peerTest(
  "audit: table rows of the library peers show the fsync, the drops and the kernel's counters",
  () => {
    const why = PEERS.map((n) => backendByName(n).unavailable()).find((w) => w !== null);
    return why ?? null;
  },
  async () => {
    using d = diskDir();
    const rows: Row[] = [];
    await runTable(tableOptions(d.path, PEERS.map(backendByName)), (row) => rows.push(row));
    assert.deepEqual(rows.map((r) => r.framing), PEERS);
    for (const row of rows) assertTableRow(row, false);
  },
);

peerTest(
  "audit: python3-gsd rows carry the program's own trail: its fsync, drops, readings, kernel counters",
  () => pythonGsdUnavailable(),
  async () => {
    using d = diskDir();
    const rows: Row[] = [];
    await runTable(
      tableOptions(d.path, [backendByName("raw")], {
        peers: [backendByName("python-gsd"), backendByName("python-gsd-fl")],
      }),
      (row) => rows.push(row),
    );
    assert.deepEqual(rows.map((r) => r.framing), ["raw", "python-gsd", "python-gsd-fl"]);
    for (const row of rows.slice(1)) {
      assertTableRow(row, false, "/table.gsd");
      const a = trailOf(row);
      assert.notEqual(a.pid, Deno.pid, "the trail is the python program's");
      assert.ok(!("audit" in row), "the trail is not a column");
    }
  },
);

Deno.test("audit: table --cache warm reads the file instead of dropping it", async () => {
  using d = diskDir();
  const row = await audited(() =>
    runTableCell(
      backendByName("raw"),
      256 * 1024,
      1024,
      0,
      tableOptions(d.path, [], { cache: "warm" }),
    )
  );
  const a = trailOf(row);
  const gap = a.phases[phaseIndex(a, "open") - 1]!;
  assert.ok(!gap.syncs.some((s) => s.call === "fadvise"), "no drop");
  assert.ok(gap.reads > 0, "the file is read through before the phase");
});

Deno.test("audit: records rows, write and read, of every native framing and peer", async () => {
  using d = diskDir();
  const names = [...NATIVE, ...PEERS].filter((n) => backendByName(n).unavailable() === null);
  const shape = [8, 32, 32];
  const runs = await runRecords({
    targets: recordsTargets(names.map(backendByName), ["native"]),
    shape,
    dtype: "float32",
    repeat: 1,
    dir: d.path,
    seed: 3,
  });
  for (const run of runs) {
    const row = recordsRow(run, shape);
    const native = NATIVE.includes(run.framing);
    const what = `records ${run.framing} ${run.endian} ${run.phase}`;
    const a = trailOf(row);
    const suffix = `/records.${run.framing}.${run.endian}`;
    const i = phaseIndex(a, run.phase);
    const p = a.phases[i]!;
    assertFromReadings(p, { wallS: row.wall_s }, what);
    const r = p.readings!;
    assert.equal(row.user_s, Number((delta(r.userUs) / 1e6).toPrecision(6)), `${what}: user_s`);
    assert.equal(row.dev_read_bytes, delta(r.inBlocks) * 512, `${what}: dev_read_bytes`);
    assert.equal(row.dev_write_bytes, delta(r.outBlocks) * 512, `${what}: dev_write_bytes`);
    if (run.phase === "write") {
      assertWritePhase(p, suffix, run.bytes, native, what);
    } else {
      const resident = assertDroppedBefore(a, i, suffix, what);
      assert.equal(row.resident_after_drop, Number(resident.toPrecision(6)), `${what}: residency`);
      assertReadPhase(p, suffix, "in order", native, what, 32 * 32 * 4);
    }
  }
});

Deno.test("audit: scaling rows hold the fsync only when asked, ticks from the readings", async () => {
  using d = diskDir();
  const names = ["ieeeio", "f77", "raw", ...PEERS].filter((n) =>
    backendByName(n).unavailable() === null
  );
  for (const fsync of ["end", "none"] as const) {
    const runs = await runScaling({
      backends: names.map(backendByName),
      datasets: [2],
      shape: [16, 16, 16],
      dtype: "float64",
      repeat: 1,
      fsync,
      dir: d.path,
    });
    for (const run of runs) {
      const row = scalingRow(run);
      const what = `scaling ${run.framing} fsync=${fsync}`;
      const a = trailOf(row);
      const p = a.phases[phaseIndex(a, "write")]!;
      assertFromReadings(p, {
        wallS: row.write_s,
        userTicks: row.write_user_ticks,
        sysTicks: row.write_sys_ticks,
        clkTck: row.clk_tck,
      }, what);
      assert.equal(row.fsync, fsync, `${what}: the row says its policy`);
      if (fsync === "end") {
        assertWritePhase(p, `/speed.${run.framing}`, run.bytes, !PEERS.includes(run.framing), what);
      } else assert.equal(p.syncs.filter((s) => s.call === "fsync").length, 0, `${what}: no fsync`);
    }
  }
});

Deno.test("audit: the meter's ticks agree with getrusage's seconds and are not swapped", () => {
  // A CPU-bound phase: user time dominates, so swapped user/system ticks or ticks in the wrong
  // unit disagree with getrusage.
  const meter = startMeter("spin");
  const cpu0 = libc.clockGettime(libc.CLOCK.PROCESS_CPUTIME);
  let x = 0;
  while (libc.clockGettime(libc.CLOCK.PROCESS_CPUTIME) - cpu0 < 200e6) {
    for (let i = 0; i < 1000; i++) x += Math.sqrt(x + i);
  }
  const s = meter.stop();
  assert.ok(x > 0);
  const tick = 1 / s.clkTck;
  assert.equal(s.clkTck, libc.clockTicksPerSecond());
  assert.ok(s.userS > 0.1, `user ${s.userS} s`);
  for (
    const [ticks, secs, name] of [[s.userTicks, s.userS, "user"], [
      s.sysTicks,
      s.sysS,
      "sys",
    ]] as const
  ) {
    assert.ok(
      Math.abs(ticks * tick - secs) <= 3 * tick + 0.15 * secs,
      `${name}: ${ticks} ticks of ${s.clkTck}/s vs getrusage ${secs} s`,
    );
  }
});

interface ReadersJson {
  rows: (Row & { audit: RowAudit })[];
}

Deno.test("audit: readers shared and separate, cold: one file for all or one each, dropped first", async () => {
  using d = diskDir();
  const r = await runCli([
    "readers",
    "--reader",
    "sciobench",
    "--procs",
    "3",
    "--mode",
    "shared,separate",
    "--cache",
    "cold",
    "--records",
    "4",
    "--length",
    "2000",
    "--dir",
    d.path,
    "--format",
    "json",
    "--audit",
  ]);
  assert.equal(r.code, 0, r.stderr);
  const rows = (JSON.parse(r.stdout) as ReadersJson).rows;
  assert.deepEqual(rows.map((x) => x.mode), ["shared", "separate"]);
  for (const row of rows) {
    const what = `readers ${row.mode}`;
    const a = row.audit;
    const i = phaseIndex(a, "read");
    const p = a.phases[i]!;
    assert.equal(p.processes.length, 3, `${what}: three reader processes reported`);
    const pids = new Set(p.processes.map((c) => c.pid));
    assert.equal(pids.size, 3, `${what}: three distinct processes`);
    assert.ok(!pids.has(a.pid), `${what}: readers are not the parent`);
    const files = p.processes.map((c) => {
      assert.equal(c.phase.files.length, 1, `${what}: each reader reads one file`);
      const f = c.phase.files[0]!;
      assert.ok(f.reads > 0 && f.readBytes >= 4 * 2000 * 8, `${what}: the reader read it all`);
      // reads of a record's 16000 bytes (not the open's copy window, lib/io/mapped.ts)
      const data = dataOffsets(f.readLog, 2000 * 8, true);
      assert.equal(data.length, 4, `${what}: four records read`);
      assert.ok(data.every((o, k) => k === 0 || o > data[k - 1]!), `${what}: records in order`);
      assert.equal(c.phase.writes, 0, `${what}: no writes`);
      assert.equal(f.flags, "RDONLY");
      return f.path;
    });
    assert.equal(new Set(files).size, row.mode === "shared" ? 1 : 3, `${what}: files ${files}`);
    // Each file was dropped from the cache before the readers started.
    const gap = a.phases[i - 1]!;
    for (const f of new Set(files)) {
      assert.ok(
        gap.syncs.some((s) => s.call === "fadvise" && s.advice === "DONTNEED" && s.path === f),
        `${what}: ${f} dropped before the read`,
      );
    }
    // The row's sums are the readers' own readings.
    const sum = (f: (r: NonNullable<AuditPhase["readings"]>) => number) =>
      p.processes.reduce((acc, c) => acc + f(c.phase.readings!), 0);
    assert.equal(row.read_dev_bytes, sum((r) => delta(r.inBlocks) * 512), `${what}: dev bytes`);
    const userS = sum((r) => delta(r.userUs)) / 1e6;
    assert.ok(
      Math.abs(Number(row.read_user_s) - userS) <= 1e-5 * userS + 1e-9,
      `${what}: read_user_s`,
    );
  }
});

Deno.test("audit: read FILE --audit: drop, open, read in order, drop, random out of order", async () => {
  using d = diskDir();
  const file = `${d.path}/t.raw`;
  const w = await runCli(["write", "--framing", "raw", "--n", "256", "--frames", "40", file]);
  assert.equal(w.code, 0, w.stderr);
  for (const verify of [[], ["--verify"]]) {
    const r = await runCli(["read", ...verify, "--format", "json", "--audit", file]);
    assert.equal(r.code, 0, r.stderr);
    const row = (JSON.parse(r.stdout) as ReadersJson).rows[0]!;
    const a = row.audit;
    const o = phaseIndex(a, "open"), rd = phaseIndex(a, "read"), x = phaseIndex(a, "random");
    assert.ok(o + 2 === rd && rd < x);
    const resident = assertDroppedBefore(a, o, "/t.raw", "read");
    assertDroppedBefore(a, rd, "/t.raw", "read");
    assert.ok(Math.abs(Number(row.resident_after_drop) - resident) < 1e-4);
    assertDroppedBefore(a, x, "/t.raw", "read");
    assertReadPhase(a.phases[rd]!, "/t.raw", "in order", true, "read");
    assertReadPhase(a.phases[x]!, "/t.raw", "out of order", true, "read");
    const blocks = (p: AuditPhase) => delta(p.readings!.inBlocks) * 512;
    assert.equal(row.read_dev_bytes, blocks(a.phases[rd]!));
    assert.equal(row.open_dev_bytes, blocks(a.phases[o]!));
    assert.equal(row.random_dev_bytes, blocks(a.phases[x]!));
    assert.equal(row.verified, verify.length > 0);
  }
});

Deno.test("audit: read FILE --cache warm --audit: read through once first, no drop before any phase", async () => {
  using d = diskDir();
  const file = `${d.path}/t.raw`;
  const w = await runCli(["write", "--framing", "raw", "--n", "256", "--frames", "40", file]);
  assert.equal(w.code, 0, w.stderr);
  const size = Deno.statSync(file).size;
  const r = await runCli(["read", "--cache", "warm", "--format", "json", "--audit", file]);
  assert.equal(r.code, 0, r.stderr);
  const doc = JSON.parse(r.stdout) as ReadersJson & { meta: { options: { cache: string } } };
  assert.equal(doc.meta.options.cache, "warm");
  const row = doc.rows[0]!;
  assert.equal(row.cache, "warm");
  assert.equal(row.cold_ok, "", "warm rows have no cold reads to trust");
  const a = row.audit;
  // no drop anywhere: not before the open, the read or the random read, nor between them
  for (const p of a.phases) {
    const drops = p.syncs.filter((s) => s.call === "fadvise" && s.advice === "DONTNEED");
    assert.deepEqual(drops, [], `no cache drop in the ${p.name} phase`);
  }
  // the untimed stretch before the open read the whole file through
  const o = phaseIndex(a, "open"), rd = phaseIndex(a, "read"), x = phaseIndex(a, "random");
  const warm = fileIn(a.phases[o - 1]!, "/t.raw");
  assert.ok(warm && warm.readBytes >= size, `the warm-up read ${warm?.readBytes} of ${size} bytes`);
  for (const i of [rd, x]) assert.ok(!fileIn(a.phases[i - 1]!, "/t.raw")?.readBytes);
  // the file was cached when the phases began, and none of them fetched it from the device
  assert.ok(Number(row.resident_after_drop) > 0.95, `resident ${row.resident_after_drop}`);
  assert.equal(row.read_dev_bytes, 0);
  assert.equal(row.random_dev_bytes, 0);
  // the same file read cold is dropped first (and fetched from the device)
  const cold = await runCli(["read", "--format", "json", "--audit", file]);
  assert.equal(cold.code, 0, cold.stderr);
  const coldRow = (JSON.parse(cold.stdout) as ReadersJson).rows[0]!;
  assert.equal(coldRow.cache, "cold");
  assertDroppedBefore(coldRow.audit, phaseIndex(coldRow.audit, "read"), "/t.raw", "read");
  assert.ok(Number(coldRow.read_dev_bytes) > 0, "the cold read fetched from the device");
  // warm with O_DIRECT means nothing: one line, exit 2
  const direct = await runCli(["read", "--cache", "warm", "--direct", file]);
  assert.equal(direct.code, 2, direct.stderr);
  assert.match(
    direct.stderr,
    /^sciobench: error: --direct reads bypass the page cache: --cache warm means nothing with it\n$/,
  );
});

Deno.test("audit: read FILE --repeat 3: three cold run rows, each dropped before its phases, then the summaries", async () => {
  using d = diskDir();
  const file = `${d.path}/t.raw`;
  const w = await runCli(["write", "--framing", "raw", "--n", "256", "--frames", "40", file]);
  assert.equal(w.code, 0, w.stderr);
  const r = await runCli(["read", "--repeat", "3", "--format", "json", "--audit", file]);
  assert.equal(r.code, 0, r.stderr);
  const rows = (JSON.parse(r.stdout) as ReadersJson).rows;
  assert.deepEqual(rows.map((row) => [row.stat, row.repeat]), [
    ["run", 1],
    ["run", 2],
    ["run", 3],
    ["mean", 3],
    ["median", 3],
    ["stddev", 3],
    ["min", 3],
    ["max", 3],
  ]);
  const runs = rows.slice(0, 3);
  for (const row of runs) {
    assert.equal(row.cache, "cold");
    assert.equal(row.cold_ok, true, JSON.stringify(row));
    // each repeat is a read of its own: dropped before its open, read and random read
    const a = row.audit;
    for (const phase of ["open", "read", "random"]) {
      assertDroppedBefore(a, phaseIndex(a, phase), "/t.raw", `repeat ${row.repeat}`);
    }
  }
  // the summaries are the runs' statistics; the cell's key columns are copied
  const readS = runs.map((row) => Number(row.read_s));
  const byStat = Object.fromEntries(rows.slice(3).map((row) => [row.stat, row]));
  const mean = readS.reduce((a, v) => a + v, 0) / 3;
  assert.ok(Math.abs(Number(byStat.mean!.read_s) - mean) <= 1e-12 * mean);
  assert.equal(byStat.median!.read_s, [...readS].sort((a, b) => a - b)[1]);
  assert.equal(byStat.min!.read_s, Math.min(...readS));
  assert.equal(byStat.max!.read_s, Math.max(...readS));
  for (const row of rows.slice(3)) {
    assert.deepEqual([row.framing, row.path, row.cache], ["raw", file, "cold"]);
  }
  // CSV: the same rows, repeat and stat the last columns
  const csv = await runCli(["read", "--repeat", "2", "--format", "csv", file]);
  assert.equal(csv.code, 0, csv.stderr);
  const lines = csv.stdout.trimEnd().split("\n");
  assert.match(lines[0]!, /,repeat,stat$/);
  assert.deepEqual(lines.slice(1).map((l) => l.split(",").slice(-2).join(",")), [
    "1,run",
    "2,run",
    "2,mean",
    "2,median",
    "2,stddev",
    "2,min",
    "2,max",
  ]);
  // a repeat count that is not a positive integer: one line, exit 2
  const zero = await runCli(["read", "--repeat", "0", file]);
  assert.equal(zero.code, 2, zero.stderr);
  assert.equal(zero.stderr.trimEnd().split("\n").length, 1, zero.stderr);
  assert.match(zero.stderr, /--repeat/);
});

Deno.test("audit: table --format json rows carry a summary; --audit the trail; --audit needs JSON", async () => {
  using d = diskDir();
  const base = [
    "table",
    "--framing",
    "gsd,raw",
    "--size",
    "128KiB",
    "--n",
    "32^2",
    "--no-warmup",
    "--dir",
    d.path,
  ];
  const plain = await runCli([...base, "--format", "json"]);
  assert.equal(plain.code, 0, plain.stderr);
  for (const row of (JSON.parse(plain.stdout) as { rows: Row[] }).rows) {
    // the first row's trail begins with the untimed warm-up of every backend (warm_up.ts)
    assert.match(
      String(row.audit),
      /^(backend warm-up: [^;]*, 2 files; )?write: \d+ writes .*fsync \+[\d.]+s\/-[\d.]+s.*; first open: [^;]*; open warm-up: [1-9]\d* reads .*, 1 file; untimed: 1 file, fdatasync, fadvise DONTNEED; open: .*; read: \d+ reads .* 0 back, 1 file; untimed: .*fadvise DONTNEED.*; random: \d+ reads .* [1-9]\d* back/,
    );
  }
  const full = await runCli([...base, "--format", "json", "--audit"]);
  assert.equal(full.code, 0, full.stderr);
  const rows = (JSON.parse(full.stdout) as ReadersJson).rows;
  assert.deepEqual(rows.map((r) => r.framing), ["gsd", "raw"]);
  for (const row of rows) {
    assert.deepEqual(
      row.audit.phases.filter((p) => p.timed).map((p) => p.name),
      ["write", "first open", "open", "read", "random"],
    );
  }
  const csv = await runCli([...base, "--audit"]);
  assert.equal(csv.code, 2);
  assert.match(csv.stderr, /^sciobench: error: --audit .* --format json/);
});

Deno.test("audit: read_dev_bytes and resident_after_drop are the readings of the phase they describe", async () => {
  // A 4 MiB file read through a 256 KiB sample: the sequential and random phases fetch different
  // amounts from the device, and the pages read stay cached until the next drop, so a number taken
  // from another phase (or a residency measured later) differs from the trail's.
  using d = diskDir();
  const rows: Row[] = [];
  await runTable(
    tableOptions(d.path, [backendByName("raw")], { sizes: [4 << 20], sampleBytes: 256 << 10 }),
    (row) => rows.push(row),
  );
  assertTableRow(rows[0]!, true);
});
