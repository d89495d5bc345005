/**
 * `records` and `readers` at depth under mpirun (Open MPI) and mpiexec (MPICH) with 2 ranks: one
 * JSON document on stdout, every rank's rows saying the engine and depth asked, every record
 * verified, each rank's trail showing its own file's requests with up to N in flight, no file
 * left. `--layout shared` writes one at a time and reads at depth; a backend that makes its own
 * calls is refused in one line; a rank whose kernel refuses io_uring makes every rank read with
 * psync, in one line naming it; a rank's corrupted record stops both ranks in one line naming it.
 * @module
 */
import assert from "node:assert/strict";
import type { AuditFile, AuditPhase, RowAudit } from "../lib/sys/audit.ts";
import { tempDir } from "./_helpers.ts";
import { DIRECT_REFUSED } from "./_syscalls.ts";
import { type JsonDoc, type Launcher, leftovers, mpiTest, type Row, runMpi } from "./_mpi.ts";

const RANKS = 2;
/** Records per rank: 32 of 30 x 20 int32 (2400 bytes each), big-endian (netCDF classic's). */
const RECORDS = 32;
const RECORD_BYTES = 30 * 20 * 4;
const SHAPE = `${RECORDS}x30x20`;

/**
 * Runs `args` with `--per-rank --audit --format json` under `launcher` with 2 ranks (each with
 * `rankEnvs` when given); asserts exit 0, no error line, and stdout one JSON document alone.
 */
async function runDoc(
  launcher: Launcher,
  args: readonly string[],
  rankEnvs?: readonly Record<string, string>[],
): Promise<{ doc: JsonDoc; stderr: string }> {
  const r = await runMpi(launcher, [...args, "--per-rank", "--audit", "--format", "json"], {
    ranks: RANKS,
    rankEnvs,
    timeoutS: 60,
  });
  assert.equal(r.code, 0, r.stderr);
  assert.doesNotMatch(r.stderr, /error/i);
  // the document alone: a stray line of a library on stdout would not parse
  assert.match(r.stdout, /^\{\n[^]*\n\}\n$/);
  return { doc: JSON.parse(r.stdout) as JsonDoc, stderr: r.stderr };
}

/** The rows of a document, [aggregate, rank 0, rank 1] per cell. */
function cells(doc: JsonDoc): [Row, Row, Row][] {
  const rows = doc.rows as Row[];
  assert.equal(rows.length % (RANKS + 1), 0, JSON.stringify(rows.map((x) => x.rank)));
  const out: [Row, Row, Row][] = [];
  for (let k = 0; k < rows.length; k += RANKS + 1) {
    const cell = rows.slice(k, k + RANKS + 1) as [Row, Row, Row];
    assert.deepEqual(cell.map((x) => x.rank), ["all", 0, 1]);
    out.push(cell);
  }
  return out;
}

/** A rank row's timed phase `name` of its own trail. */
function timedPhase(row: Row, name: string): AuditPhase {
  const audit = row.audit as unknown as RowAudit;
  const phase = audit.phases.find((p) => p.name === name && p.timed);
  assert.ok(phase, `rank ${row.rank}: no timed ${name} phase`);
  return phase;
}

const base = (path: string) => path.replace(/^.*\//, "");

/** The one file of `phase`, checked to be `name`. */
function onlyFile(phase: AuditPhase, name: string, what: string): AuditFile {
  assert.deepEqual(phase.files.map((f) => base(f.path)), [name], what);
  return phase.files[0]!;
}

/** The bytes the requests of a queue's log asked for (offset, bytes, submitted, completed). */
function requestedBytes(log: readonly number[]): number {
  let sum = 0;
  for (let i = 1; i < log.length; i += 4) sum += log[i]!;
  return sum;
}

/**
 * Asserts a `records --reorder 1` document of `framings` at `depth` through `engine`, each rank
 * its own file: per cell, every row's engine and depth, no error (every record verified), bytes
 * summed over ranks; each rank's write queued in its own file (up to `depth` in flight, all in
 * before the fsync) and its read of the next rank's file queued record by record.
 */
function assertRecordsAtDepth(
  doc: JsonDoc,
  framings: readonly string[],
  engine: string,
  depth: number,
): void {
  const got = cells(doc);
  assert.deepEqual(
    got.map(([all]) => `${all.framing} ${all.phase}`),
    framings.flatMap((f) => [`${f} write`, `${f} read`]),
  );
  for (const [all, ...ranks] of got) {
    const what = `${all.framing} ${all.phase}`;
    for (const x of [all, ...ranks]) {
      assert.equal(x.engine, engine, `${what} rank ${x.rank}`);
      assert.equal(x.iodepth, depth, `${what} rank ${x.rank}`);
      // a record that differs from what was written is the row's error
      assert.equal(x.error, "", `${what} rank ${x.rank}`);
      assert.equal(x.layout, "per-rank");
    }
    assert.equal(all.bytes, RANKS * RECORDS * RECORD_BYTES, what);
    assert.equal(all.file_bytes, ranks.reduce((s, x) => s + Number(x.file_bytes), 0), what);
    for (const x of ranks) {
      const rank = Number(x.rank);
      assert.equal(x.bytes, RECORDS * RECORD_BYTES, `${what} rank ${rank}`);
      const phase = timedPhase(x, String(x.phase));
      // its own file written, the next rank's read (--reorder 1)
      const owner = x.phase === "write" ? rank : (rank + 1) % RANKS;
      const file = onlyFile(phase, `records.${x.framing}.big.r${owner}`, `${what} ${rank}`);
      const latency = x.record_latency as unknown as { count: number };
      if (x.phase === "read") {
        const q = file.queued!;
        assert.ok(q, `${what} rank ${rank}: reads through the queue`);
        assert.ok(q.requests >= RECORDS, `${what} rank ${rank}: ${q.requests} requests`);
        assert.equal(q.maxInFlight, depth, `${what} rank ${rank}: most in flight`);
        assert.equal(latency.count, q.requests, `${what} rank ${rank}: each request timed`);
        assert.ok(requestedBytes(q.log) >= RECORDS * RECORD_BYTES, `${what} rank ${rank}`);
        assert.equal(file.queuedWrites, undefined);
        continue;
      }
      const q = file.queuedWrites!;
      assert.ok(q, `${what} rank ${rank}: writes through the queue`);
      // every whole 4 KiB block of the rank's file a write request (the tail written at the end)
      assert.equal(q.requests, Math.floor(Number(x.file_bytes) / 4096), `${what} rank ${rank}`);
      assert.equal(q.maxInFlight, depth, `${what} rank ${rank}: most writes in flight`);
      const fsync = phase.syncs.find((s) => s.call === "fsync" && s.path === file.path);
      assert.ok(fsync, `${what} rank ${rank}: the fsync in the timed phase`);
      assert.equal(fsync.writesBefore, file.writes, `${what} rank ${rank}: all in before it`);
    }
  }
}

mpiTest("mpi iodepth: records at depth 8 through io_uring, each rank its own file", async (l) => {
  using tmp = tempDir();
  const { doc } = await runDoc(l, [
    ...["records", "--shape", SHAPE, "--framing", "raw,f77", "--endian", "big"],
    ...["--iodepth", "8", "--engine", "io_uring", "--bs", "4k", "--reorder", "1"],
    ...["--dir", tmp.path],
  ]);
  assert.equal(doc.meta.ranks, RANKS);
  assertRecordsAtDepth(doc, ["raw", "f77"], "io_uring", 8);
  assert.deepEqual(leftovers(tmp.path), []);
});

mpiTest("mpi iodepth: records at depth 8 through libaio (--direct)", async (l) => {
  if (DIRECT_REFUSED !== null) {
    console.error(`skip: ${DIRECT_REFUSED}`);
    return;
  }
  using tmp = tempDir();
  const { doc } = await runDoc(l, [
    ...["records", "--shape", SHAPE, "--framing", "raw,netcdf", "--endian", "big"],
    ...["--iodepth", "8", "--engine", "libaio", "--direct", "--bs", "4k", "--reorder", "1"],
    ...["--dir", tmp.path],
  ]);
  assertRecordsAtDepth(doc, ["raw", "netcdf"], "libaio", 8);
  for (const x of doc.rows) assert.equal(x.direct, true);
  assert.deepEqual(leftovers(tmp.path), []);
});

mpiTest(
  "mpi iodepth: records --layout shared writes one at a time (psync) and reads at depth 8; " +
    "mpiio refused in one line",
  async (l) => {
    using tmp = tempDir();
    const { doc } = await runDoc(l, [
      ...["records", "--shape", SHAPE, "--framing", "raw,f77", "--endian", "big"],
      ...["--layout", "shared", "--iodepth", "8", "--engine", "io_uring", "--dir", tmp.path],
    ]);
    for (const [all, ...ranks] of cells(doc)) {
      const what = `${all.framing} ${all.phase}`;
      const name = `records.${all.framing}.big.shared`;
      // the ranks write their parts of the one file one request at a time, as the rows say
      const [engine, depth] = all.phase === "write" ? ["psync", 1] : ["io_uring", 8];
      for (const x of [all, ...ranks]) {
        assert.deepEqual([x.engine, x.iodepth, x.error, x.layout], [engine, depth, "", "shared"]);
      }
      assert.equal(all.bytes, RANKS * RECORDS * RECORD_BYTES, what);
      // the shared file counted once, on rank 0's row
      assert.deepEqual(ranks.map((x) => x.file_bytes), [all.file_bytes, 0], what);
      for (const x of ranks) {
        const file = onlyFile(timedPhase(x, String(x.phase)), name, `${what} ${x.rank}`);
        if (all.phase === "write") {
          assert.equal(file.queuedWrites, undefined, `${what} rank ${x.rank}`);
          continue;
        }
        // each rank reads its own part of the file at depth, every record of it
        const q = file.queued!;
        assert.ok(q, `${what} rank ${x.rank}: reads through the queue`);
        assert.equal(q.requests, RECORDS, `${what} rank ${x.rank}`);
        assert.equal(q.maxInFlight, 8, `${what} rank ${x.rank}`);
        assert.equal(requestedBytes(q.log), RECORDS * RECORD_BYTES, `${what} rank ${x.rank}`);
      }
    }
    assert.deepEqual(leftovers(tmp.path), []);
    const r = await runMpi(l, [
      ...["records", "--shape", SHAPE, "--framing", "raw,mpiio", "--layout", "shared"],
      ...["--iodepth", "8", "--dir", tmp.path],
    ], { ranks: RANKS, timeoutS: 60 });
    assert.equal(r.code, 2, r.stderr);
    const errors = r.stderr.split("\n").filter((line) => line.startsWith("sciobench: error:"));
    assert.equal(errors.length, 1, r.stderr);
    assert.match(errors[0]!, /--iodepth\/--engine: mpiio makes its own system calls/);
    assert.deepEqual(leftovers(tmp.path), []);
  },
);

mpiTest(
  "mpi iodepth: readers at depth 4 through io_uring, each rank a reader of the shared file or " +
    "its own",
  async (l) => {
    using tmp = tempDir();
    const { doc } = await runDoc(l, [
      ...["readers", "--records", String(RECORDS), "--length", "600"],
      ...["--mode", "shared,separate", "--iodepth", "4", "--engine", "io_uring"],
      ...["--dir", tmp.path],
    ]);
    const got = cells(doc);
    assert.deepEqual(got.map(([all]) => all.mode), ["shared", "separate"]);
    for (const [all, ...ranks] of got) {
      const mode = String(all.mode);
      for (const x of [all, ...ranks]) {
        assert.deepEqual([x.engine, x.iodepth, x.error], ["io_uring", 4, ""], `${mode} ${x.rank}`);
      }
      assert.equal(all.procs, RANKS);
      // every reader read its whole file (each record checked as it read it)
      assert.equal(all.reader_bytes, RANKS * Number(all.file_bytes), mode);
      const read = (all.audit as unknown as RowAudit).phases.find((p) => p.name === "read")!;
      assert.deepEqual(read.processes.map((p) => p.rank), [0, 1]);
      for (const x of ranks) {
        const rank = Number(x.rank);
        const name = mode === "shared" ? "shared-0.f77" : `separate-${rank}.f77`;
        assert.equal(x.reader_bytes, x.file_bytes, `${mode} rank ${rank}`);
        // the rank's own read in its trail and as its process in the aggregate's
        for (
          const phase of [timedPhase(x, "read"), read.processes[rank]!.phase]
        ) {
          const q = onlyFile(phase, name, `${mode} rank ${rank}`).queued!;
          assert.ok(q, `${mode} rank ${rank}: reads through the queue`);
          assert.ok(q.requests >= RECORDS, `${mode} rank ${rank}: ${q.requests} requests`);
          assert.equal(q.maxInFlight, 4, `${mode} rank ${rank}: most in flight`);
        }
      }
    }
    assert.deepEqual(leftovers(tmp.path), []);
  },
);

mpiTest(
  "mpi iodepth: a rank whose kernel refuses io_uring makes every rank read with psync, in one " +
    "line naming it",
  async (l) => {
    using tmp = tempDir();
    const off: Record<string, string>[] = [{}, { SCIOBENCH_IO_URING: "off" }];
    for (
      const args of [
        ["records", "--shape", SHAPE, "--framing", "raw", "--bs", "4k"],
        ["readers", "--records", String(RECORDS), "--length", "600", "--mode", "separate"],
      ]
    ) {
      const { doc, stderr } = await runDoc(l, [
        ...args,
        ...["--iodepth", "8", "--engine", "io_uring", "--dir", tmp.path],
      ], off);
      const lines = stderr.split("\n").filter((line) => line.includes("--engine"));
      assert.equal(lines.length, 1, stderr);
      assert.match(
        lines[0]!,
        /--engine io_uring: rank 1 on \S+: io_uring_setup: refused as SCIOBENCH_IO_URING=off asks; reading with psync instead on every rank/,
      );
      assert.equal((doc.meta.options as unknown as { engine: string }).engine, "psync");
      for (const x of doc.rows) {
        assert.deepEqual([x.engine, x.iodepth, x.error], ["psync", 8, ""], `${args[0]} ${x.rank}`);
        const audit = x.audit as unknown as RowAudit | undefined;
        const phases = audit?.phases.flatMap((p) => [p, ...p.processes.map((c) => c.phase)]);
        for (const f of phases?.flatMap((p) => p.files) ?? []) {
          if (f.path.includes("-warm-")) continue;
          assert.equal(f.queued, undefined, `${args[0]} rank ${x.rank} ${f.path}`);
          assert.equal(f.queuedWrites, undefined, `${args[0]} rank ${x.rank} ${f.path}`);
        }
      }
      assert.deepEqual(leftovers(tmp.path), []);
    }
  },
);

const DEPTH_PROBE = new URL("./_mpi_depth_probe.ts", import.meta.url).pathname;

mpiTest(
  "mpi iodepth: a corrupted record of rank 1 read at depth 8 stops both ranks, one naming it",
  async (l) => {
    using tmp = tempDir();
    // the probe's ENGINE and DIRECT
    const engines = [["io_uring", "0"]];
    if (DIRECT_REFUSED === null) engines.push(["libaio", "1"]);
    else console.error(`skip part (libaio --direct): ${DIRECT_REFUSED}`);
    for (const [engine, direct] of engines as [string, string][]) {
      const r = await runMpi(l, [tmp.path, engine, direct, "1"], {
        ranks: RANKS,
        script: DEPTH_PROBE,
        timeoutS: 60,
      });
      assert.equal(r.code, 0, r.stderr);
      const out = r.stdout.trim().split("\n").map((t) => JSON.parse(t) as Record<string, unknown>)
        .sort((a, b) => Number(a.rank) - Number(b.rank));
      assert.deepEqual(out.map((o) => [o.rank, o.failed, o.report]), [[0, 1, true], [1, 1, false]]);
      assert.match(
        String(out[0]!.message),
        /^rank 1 on \S+ failed in read: \S+\/records\.raw\.native\.r1: frame 41: /,
      );
      assert.deepEqual(leftovers(tmp.path), [], engine);
    }
  },
);
