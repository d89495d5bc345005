/**
 * `records --iodepth N --engine psync|libaio|io_uring`: the read phase's records with up to N
 * requests in flight. At depth 1 the calls are today's (strace); at depth 8 every record is
 * verified, the audit trail shows 8 in flight (and strace an io_submit of 8 iocbs), a corrupted
 * byte is still found, the rows say the engine and depth, and libaio without --direct is refused
 * in one line.
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
import { commandMissing, flipByte, REQUIRE_PEERS, runCli, tempDir } from "./_helpers.ts";
import { DIRECT_REFUSED, isRead, parseStrace, straceSciobench } from "./_syscalls.ts";

const NO_DIRECT = DIRECT_REFUSED !== null;
const STRACE_MISSING = commandMissing("strace");
if (STRACE_MISSING !== null && REQUIRE_PEERS) {
  throw new Error(`strace is required (SCIOBENCH_REQUIRE_PEERS=1): ${STRACE_MISSING}`);
}
const NO_STRACE = NO_DIRECT || STRACE_MISSING !== null;
if (NO_STRACE) {
  console.error(`skip: records iodepth strace tests: ${DIRECT_REFUSED ?? STRACE_MISSING}`);
}

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
    for (const k of [0, 2]) {
      const today = reads(k);
      assert.ok(today.length > 100, `run ${k}: ${today.length} reads`);
      assert.deepEqual(reads(k + 1), today, `--iodepth 1 against ${runs[k]!.join(" ")}`);
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
      "record; 8 in flight in the trail",
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
  // the write phase writes one record at a time
  assert.equal(col(byPhase("write"), "engine"), "psync");
  assert.equal(col(byPhase("write"), "iodepth"), "1");
  const aio = await runCli([...common, "--iodepth", "8", "--engine", "libaio"]);
  assert.equal(aio.code, 2);
  const lines = aio.stderr.trim().split("\n");
  assert.equal(lines.length, 1, aio.stderr);
  assert.match(lines[0]!, /--engine libaio needs --direct/);
});
