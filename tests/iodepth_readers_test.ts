/**
 * `readers --iodepth N --engine psync|libaio|io_uring`: each reader process's records with up to
 * N requests in flight (the settings passed to the reader processes as their other settings are).
 * At depth 1 the calls are today's (strace, reader processes followed); at depth 8 every reader's
 * trail shows 8 in flight (and strace an io_submit of 8 iocbs), the rows say the engine and depth,
 * a corrupted byte is still found, gfortran's rd and libaio without --direct are refused in one
 * line.
 * @module
 */
import assert from "node:assert/strict";
import { prepareReader, writePackmanFile } from "../lib/workloads/readers/mod.ts";
import type { AuditPhase, RowAudit } from "../lib/sys/audit.ts";
import { nativeBackend } from "../lib/backends/engine.ts";
import { FRAMINGS } from "../lib/backends/registry.ts";
import type { Row } from "../lib/report/row.ts";
import { flipByte, runCli, tempDir } from "./_helpers.ts";
import {
  DIRECT_REFUSED,
  isRead,
  parseStrace,
  straceDirectSkipped,
  straceSciobench,
} from "./_syscalls.ts";

const NO_DIRECT = DIRECT_REFUSED !== null;
const NO_STRACE = straceDirectSkipped("readers iodepth strace tests");

/** A readers run of 64 records of 600 doubles (4800 bytes) with sciobench's reader. */
function readersArgs(dir: string, ...extra: string[]): string[] {
  return [
    ...["readers", "--reader", "sciobench", "--records", "64", "--length", "600"],
    ...["--cache", "cold", "--dir", dir, ...extra],
  ];
}

Deno.test({
  name: "readers iodepth: --iodepth 1 makes today's calls, in today's order (strace)",
  ignore: NO_STRACE,
  async fn() {
    using d = tempDir("sciobench-iodepth-");
    using trace = tempDir("sciobench-strace-");
    const one = ["--procs", "1", "--mode", "shared"];
    const direct = ["--direct", "--bs", "4k"];
    const runs = [
      readersArgs(d.path, ...one),
      readersArgs(d.path, ...one, "--iodepth", "1"),
      readersArgs(d.path, ...one, ...direct),
      readersArgs(d.path, ...one, ...direct, "--iodepth", "1"),
    ];
    const out = await straceSciobench(runs, trace.path);
    for (const o of out) assert.equal(o.code, 0, o.stderr);
    // the reader's reads of its file (its warm-up file's name has the process id)
    const reads = (k: number) =>
      parseStrace(trace.path, d.path, k).filter((c) => isRead(c) && !c.path.includes("-warm-"))
        .map((c) => `${c.call} ${c.offset} ${c.count}`);
    for (const k of [0, 2]) {
      const today = reads(k);
      assert.ok(today.length >= 64, `run ${k}: ${today.length} reads`);
      assert.deepEqual(reads(k + 1), today, `--iodepth 1 against ${runs[k]!.join(" ")}`);
    }
  },
});

Deno.test({
  name: "readers iodepth: depth 8 through libaio: each reader submits 8 iocbs at once (strace)",
  ignore: NO_STRACE,
  async fn() {
    using d = tempDir("sciobench-iodepth-");
    using trace = tempDir("sciobench-strace-");
    const out = await straceSciobench([
      readersArgs(d.path, "--procs", "2", "--mode", "separate", "--direct", "--bs", "4k")
        .concat(["--iodepth", "8", "--engine", "libaio"]),
    ], trace.path);
    assert.equal(out[0]!.code, 0, out[0]!.stderr);
    const submits = parseStrace(trace.path, d.path, 0).filter((c) =>
      c.call === "io_submit" && c.path.includes("/separate-")
    );
    const files = new Set(submits.map((c) => c.path));
    assert.equal(files.size, 2, `two readers' files: ${[...files]}`);
    for (const f of files) {
      const most = Math.max(...submits.filter((c) => c.path === f).map((c) => c.queued ?? 0));
      assert.equal(most, 8, `${f}: largest io_submit ${most} iocbs`);
    }
  },
});

interface ReadersJson {
  rows: (Row & { audit: RowAudit })[];
}

/** Each reader process's trail of its file in a readers row. */
function readerFiles(row: { audit: RowAudit }): AuditPhase["files"] {
  const phase = row.audit.phases.find((p) => p.name === "read" && p.processes.length > 0)!;
  return phase.processes.map((c) => c.phase.files.find((f) => !f.path.includes("-warm-"))!);
}

for (
  const [engine, extra] of [
    ["io_uring", []],
    ["libaio", ["--direct", "--bs", "4k"]],
  ] as const
) {
  Deno.test({
    name: `readers iodepth: depth 8 through ${engine}: every reader's trail shows 8 in flight`,
    ignore: extra.length > 0 && NO_DIRECT,
    async fn() {
      using d = tempDir("sciobench-iodepth-");
      const r = await runCli([
        ...readersArgs(d.path, "--procs", "2", "--mode", "shared,separate", ...extra),
        ...["--iodepth", "8", "--engine", engine, "--format", "json", "--audit"],
      ]);
      assert.equal(r.code, 0, r.stderr);
      const rows = (JSON.parse(r.stdout) as ReadersJson).rows;
      assert.deepEqual(rows.map((x) => x.mode), ["shared", "separate"]);
      for (const row of rows) {
        assert.equal(row.engine, engine);
        assert.equal(row.iodepth, 8);
        const files = readerFiles(row);
        assert.equal(files.length, 2, `${row.mode}: two readers`);
        for (const f of files) {
          const q = f.queued!;
          assert.ok(q, `${row.mode} ${f.path}: reads through the queue`);
          assert.ok(q.requests >= 64, `${row.mode}: ${q.requests} requests for 64 records`);
          assert.equal(q.maxInFlight, 8, `${row.mode}: most in flight ${q.maxInFlight}`);
        }
      }
    },
  });
}

for (const [engine, direct] of [["io_uring", false], ["libaio", true]] as const) {
  Deno.test({
    name: `readers iodepth: a reader at depth 8 (${engine}) finds a corrupted byte`,
    ignore: direct && NO_DIRECT,
    fn() {
      using d = tempDir("sciobench-iodepth-");
      const path = `${d.path}/shared-0.f77`;
      const backend = nativeBackend(FRAMINGS.find((f) => f.name === "f77")!);
      const settings = {
        framing: "f77",
        records: 64,
        length: 600,
        seed: 1,
        fileIndex: 0,
        endian: "native",
        backendOptions: {},
        transfer: direct ? { bs: 4096, direct: true, readAhead: true } : undefined,
        queue: { engine, depth: 8 },
      } as const;
      writePackmanFile(backend, path, settings);
      // every record read and checked at depth 8
      const report = prepareReader(path, settings).run();
      assert.equal(report.records, 64);
      assert.equal(report.audit!.files.find((f) => f.path === path)!.queued!.maxInFlight, 8);
      // a byte of record 41's data (4-byte markers around each record of 4800 bytes)
      flipByte(path, 41 * 4808 + 4 + 100);
      assert.throws(() => prepareReader(path, settings).run(), /record 42: a\(13\)/);
    },
  });
}

Deno.test("readers iodepth: gfortran's rd and libaio without --direct refused in one line", async () => {
  using d = tempDir("sciobench-iodepth-");
  const common = ["readers", "--procs", "1", "--records", "4", "--length", "60", "--dir", d.path];
  for (
    const [extra, message] of [
      [["--engine", "libaio", "--iodepth", "8"], /--engine libaio needs --direct/],
      [["--reader", "gfortran", "--iodepth", "8"], /--reader (gfortran|sciobench)/],
    ] as const
  ) {
    const r = await runCli([...common, ...extra]);
    assert.equal(r.code, 2, r.stderr);
    const lines = r.stderr.trim().split("\n");
    assert.equal(lines.length, 1, r.stderr);
    assert.match(lines[0]!, message);
  }
});
