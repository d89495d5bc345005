/**
 * `records --iodepth N --engine psync|libaio|io_uring`: the read phase's records, and the write
 * phase's transfers, with up to N requests in flight. At depth 1 the calls are today's (strace);
 * at depth 8 every record is verified, the audit trail shows 8 reads and 8 writes in flight (and
 * strace an io_submit of 8 iocbs, 8 writes submitted before the first is reaped, the fsync after
 * the last completion), a corrupted byte is still found, the rows say the engine and depth, and
 * libaio without --direct is refused in one line.
 * @module
 */
import assert from "node:assert/strict";
import { runRecords } from "../lib/workloads/records/mod.ts";
import type { RecordsOptions, RecordsRun } from "../lib/workloads/records/options.ts";
import { auditOf } from "../lib/sys/audit.ts";
import type { EngineName } from "../lib/sys/queue.ts";
import type { Transfer } from "../lib/io/transfer.ts";
import { nativeBackend } from "../lib/backends/engine.ts";
import { FRAMINGS } from "../lib/backends/registry.ts";
import { flipByte, runCli, tempDir } from "./_helpers.ts";
import {
  DIRECT_REFUSED,
  isRead,
  parseStrace,
  straceDirectSkipped,
  straceSciobench,
} from "./_syscalls.ts";

const NO_DIRECT = DIRECT_REFUSED !== null;
const NO_STRACE = straceDirectSkipped("records iodepth strace tests");

const DIRECT_4K: Transfer = { bs: 4096, direct: true, readAhead: true, hugePages: true };
/** 64 records of 30 x 20 float32 (2400 bytes each). */
const SHAPE = [64, 30, 20];
const RECORD_BYTES = 30 * 20 * 4;

/** One records run of `framing` (big-endian: the read compares swapped data) in `dir`. */
function records(
  framing: string,
  dir: string,
  extra: Partial<RecordsOptions> = {},
): Promise<RecordsRun[]> {
  const backend = nativeBackend(FRAMINGS.find((f) => f.name === framing)!);
  return runRecords({
    targets: [{ backend, endian: "big" }],
    shape: SHAPE,
    dtype: "float32",
    repeat: 1,
    seed: 3,
    dir,
    ...extra,
  });
}

/** The read phase's run, and the queued requests of its file in the audit trail. */
function readOf(runs: RecordsRun[]) {
  const run = runs.find((r) => r.phase === "read")!;
  const phase = auditOf(run)!.phases.find((p) => p.name === "read" && p.timed)!;
  const file = phase.files.find((f) => f.path.includes("/records."))!;
  return { run, file };
}

Deno.test({
  name: "records iodepth: --iodepth 1 makes today's calls, in today's order (strace)",
  ignore: NO_STRACE,
  async fn() {
    using d = tempDir("sciobench-iodepth-");
    using trace = tempDir("sciobench-strace-");
    const common = ["records", "--framing", "raw,f77", "--shape", "64x30x20", "--dir", d.path];
    const runs = [
      common,
      [...common, "--iodepth", "1"],
      [...common, "--direct", "--bs", "4k"],
      [...common, "--direct", "--bs", "4k", "--iodepth", "1"],
    ];
    const out = await straceSciobench(runs, trace.path);
    for (const o of out) assert.equal(o.code, 0, o.stderr);
    const reads = (k: number) =>
      parseStrace(trace.path, d.path, k).filter(isRead).map((c) =>
        `${c.call} ${c.offset} ${c.count}`
      );
    const writes = (k: number) =>
      parseStrace(trace.path, d.path, k).filter((c) =>
        c.call === "pwrite64" || c.call === "fsync" || c.call === "ftruncate"
      ).map((c) => `${c.call} ${c.offset} ${c.count}`);
    for (const k of [0, 2]) {
      const today = reads(k);
      assert.ok(today.length > 100, `run ${k}: ${today.length} reads`);
      assert.deepEqual(reads(k + 1), today, `--iodepth 1 against ${runs[k]!.join(" ")}`);
      assert.ok(writes(k).length > 2, `run ${k}: ${writes(k).length} writes`);
      assert.deepEqual(writes(k + 1), writes(k), `writes: --iodepth 1 against ${runs[k]}`);
    }
  },
});

Deno.test({
  name: "records iodepth: depth 8 through libaio submits 8 iocbs at once (strace)",
  ignore: NO_STRACE,
  async fn() {
    using d = tempDir("sciobench-iodepth-");
    using trace = tempDir("sciobench-strace-");
    const out = await straceSciobench([[
      ...["records", "--framing", "raw", "--shape", "64x30x20", "--dir", d.path],
      ...["--direct", "--bs", "4k", "--iodepth", "8", "--engine", "libaio"],
    ]], trace.path);
    assert.equal(out[0]!.code, 0, out[0]!.stderr);
    const submits = parseStrace(trace.path, d.path, 0).filter((c) => c.call === "io_submit");
    const most = Math.max(...submits.map((c) => c.queued ?? 0));
    assert.equal(most, 8, `largest io_submit: ${most} iocbs`);
  },
});

for (
  const [framing, engine, transfer] of [
    ["raw", "libaio", DIRECT_4K],
    ["raw", "io_uring", undefined],
    ["f77", "io_uring", DIRECT_4K],
    ["netcdf", "io_uring", undefined],
    ["raw", "psync", undefined],
  ] as [string, EngineName, Transfer | undefined][]
) {
  const how = transfer ? "--direct --bs 4k" : "buffered";
  Deno.test({
    name: `records iodepth: ${framing} at depth 8 through ${engine} (${how}) verifies every ` +
      "record; its requests in the trail",
    ignore: transfer !== undefined && NO_DIRECT,
    async fn() {
      using d = tempDir("sciobench-iodepth-");
      const runs = await records(framing, d.path, {
        transfer,
        queue: { engine, depth: 8 },
      });
      const { run, file } = readOf(runs);
      assert.equal(run.error, undefined, run.error);
      // every record's read timed, each verified (a difference is the row's error)
      assert.equal(run.latency!.count, engine === "psync" ? 64 : file.queued!.requests);
      if (engine === "psync") {
        assert.equal(file.queued, undefined, "psync: preads, no queue");
        return;
      }
      const q = file.queued!;
      assert.ok(q.requests >= 64, `${q.requests} requests for 64 records`);
      assert.equal(q.maxInFlight, 8, `most in flight: ${q.maxInFlight}`);
      // every request's read in the trail, beside the open's own reads of the header
      assert.ok(file.reads >= q.requests, `${file.reads} reads, ${q.requests} requests`);
      assert.equal(q.log.length, 4 * q.requests, "the log: offset, bytes, submitted, completed");
    },
  });
}

for (const engine of ["libaio", "io_uring"] as const) {
  Deno.test({
    name: `records iodepth: a corrupted byte is found at depth 8 (${engine}, --direct)`,
    ignore: NO_DIRECT,
    async fn() {
      using d = tempDir("sciobench-iodepth-");
      const runs = await records("raw", d.path, {
        transfer: DIRECT_4K,
        queue: { engine, depth: 8 },
        // a byte of record 41 (a raw file: a 16-byte header, then the records)
        afterWrite: (path) => flipByte(path, 16 + 41 * RECORD_BYTES + 100),
      });
      const read = runs.find((r) => r.phase === "read")!;
      assert.match(read.error ?? "", /frame 41\b/);
    },
  });
}

Deno.test("records iodepth: rows say engine and depth; libaio without --direct refused", async () => {
  using d = tempDir("sciobench-iodepth-");
  const common = ["records", "--framing", "raw", "--shape", "16x30x20", "--dir", d.path];
  const r = await runCli([...common, "--iodepth", "4", "--engine", "io_uring", "--format", "csv"]);
  assert.equal(r.code, 0, r.stderr);
  const [head, ...rows] = r.stdout.trim().split("\n").map((l) => l.split(","));
  const col = (row: string[], name: string) => row[head!.indexOf(name)];
  const byPhase = (phase: string) => rows.find((row) => col(row, "phase") === phase)!;
  assert.equal(col(byPhase("read"), "engine"), "io_uring");
  assert.equal(col(byPhase("read"), "iodepth"), "4");
  // the write phase's transfers at the same depth
  assert.equal(col(byPhase("write"), "engine"), "io_uring");
  assert.equal(col(byPhase("write"), "iodepth"), "4");
  const aio = await runCli([...common, "--iodepth", "8", "--engine", "libaio"]);
  assert.equal(aio.code, 2);
  const lines = aio.stderr.trim().split("\n");
  assert.equal(lines.length, 1, aio.stderr);
  assert.match(lines[0]!, /--engine libaio needs --direct/);
});

for (
  const [engine, transfer] of [
    ["libaio", DIRECT_4K],
    ["io_uring", { bs: 4096, direct: false, readAhead: true }],
    ["psync", { bs: 4096, direct: false, readAhead: true }],
  ] as [EngineName, Transfer][]
) {
  Deno.test({
    name: `records iodepth: the write phase at depth 8 through ${engine} (${
      transfer.direct ? "--direct " : ""
    }--bs 4k): its requests in the trail, all in before the fsync, every byte read back`,
    ignore: transfer.direct && NO_DIRECT,
    async fn() {
      using d = tempDir("sciobench-iodepth-");
      const runs = await records("raw", d.path, { transfer, queue: { engine, depth: 8 } });
      const write = runs.find((r) => r.phase === "write")!;
      assert.equal(write.error, undefined, write.error);
      assert.deepEqual(write.queue, { engine, depth: 8 });
      // the read phase verified every byte the queued writes left in the file
      assert.equal(readOf(runs).run.error, undefined);
      const phase = auditOf(write)!.phases.find((p) => p.name === "write" && p.timed)!;
      const file = phase.files.find((f) => f.path.includes("/records."))!;
      if (engine === "psync") {
        assert.equal(file.queuedWrites, undefined, "psync: pwrites, no queue");
        assert.ok(file.writes >= Math.floor(write.fileBytes / 4096), `${file.writes} pwrites`);
        return;
      }
      const q = file.queuedWrites!;
      // every whole 4 KiB block of the file through the queue (the tail written at the end)
      assert.equal(q.requests, Math.floor(write.fileBytes / 4096));
      assert.ok(write.fileBytes > 64 * RECORD_BYTES, `${write.fileBytes} bytes written`);
      assert.equal(q.maxInFlight, 8, `most writes in flight: ${q.maxInFlight}`);
      // the fsync is in the timed phase, after the last request completed
      const fsync = phase.syncs.find((s) => s.call === "fsync" && s.path === file.path)!;
      assert.ok(fsync, "fsync in the timed write phase");
      let lastDone = 0;
      for (let i = 0; i < q.log.length; i += 4) lastDone = Math.max(lastDone, q.log[i + 3]!);
      assert.ok(fsync.atS * 1e9 >= lastDone, `fsync at ${fsync.atS} s, last write ${lastDone} ns`);
      assert.equal(fsync.writesBefore, file.writes, "every write made before the fsync");
    },
  });
}

Deno.test({
  name: "records iodepth: writes at depth 8 through libaio: 8 submitted before one is reaped, " +
    "the fsync after the last (strace)",
  ignore: NO_STRACE,
  async fn() {
    using d = tempDir("sciobench-iodepth-");
    using trace = tempDir("sciobench-strace-");
    const out = await straceSciobench([[
      ...["records", "--framing", "raw", "--shape", "64x30x20", "--dir", d.path],
      ...["--direct", "--bs", "4k", "--iodepth", "8", "--engine", "libaio"],
    ]], trace.path);
    assert.equal(out[0]!.code, 0, out[0]!.stderr);
    const calls = parseStrace(trace.path, d.path, 0).filter((c) => c.path.includes("/records."));
    let inFlight = 0, most = 0, lastWriteDone = -1;
    const ids = new Set<string>();
    for (const [k, c] of calls.entries()) {
      if (c.call === "io_submit IOCB_CMD_PWRITE") {
        ids.add(c.id!);
        most = Math.max(most, ++inFlight);
      } else if (c.call === "io_getevents" && ids.delete(c.id!)) {
        inFlight--;
        lastWriteDone = k;
      }
    }
    assert.equal(most, 8, `most writes in flight: ${most}`);
    assert.equal(ids.size, 0, "every write reaped");
    const fsync = calls.findIndex((c) => c.call === "fsync");
    assert.ok(
      fsync > lastWriteDone,
      `fsync at call ${fsync}, last write reaped at ${lastWriteDone}`,
    );
  },
});
