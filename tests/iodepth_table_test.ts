/**
 * `table --iodepth N --engine libaio|io_uring`: the write phase's transfers with up to N write
 * requests in flight, as its reads. At depth 8 the audit trail shows 8 writes in flight and the
 * fsync inside the timed write phase after the last completion, and every frame reads back
 * verified; strace shows 8 write iocbs submitted before one is reaped and the fsync after the
 * last; `--iodepth 1` without `--engine` makes the writes of a run without it; `--baseline fio`
 * writes through the same engine at the same depth, in blocks the size of our write requests.
 * @module
 */
import assert from "node:assert/strict";
import { backendByName } from "../lib/backends/registry.ts";
import { audited, auditOf } from "../lib/sys/audit.ts";
import type { EngineName } from "../lib/sys/queue.ts";
import type { Transfer } from "../lib/io/transfer.ts";
import { Progress } from "../lib/report/progress.ts";
import { runTableCell } from "../lib/workloads/table/mod.ts";
import { commandMissing, peerUsable, runCli, tempDir } from "./_helpers.ts";
import { DIRECT_REFUSED, parseStrace, straceDirectSkipped, straceSciobench } from "./_syscalls.ts";

const NO_DIRECT = DIRECT_REFUSED !== null;
const NO_STRACE = straceDirectSkipped("table iodepth strace tests");

const DIRECT_4K: Transfer = { bs: 4096, direct: true, readAhead: true, hugePages: true };
const BUFFERED_4K: Transfer = { bs: 4096, direct: false, readAhead: true };

for (
  const [framing, engine, transfer] of [
    ["raw", "libaio", DIRECT_4K],
    ["raw", "io_uring", DIRECT_4K],
    ["gsd", "libaio", DIRECT_4K],
    ["gsd", "io_uring", DIRECT_4K],
    ["gsd", "io_uring", BUFFERED_4K],
  ] as [string, EngineName, Transfer][]
) {
  const how = transfer.direct ? "--direct --bs 4k" : "--bs 4k";
  Deno.test({
    name: `table iodepth: the write phase at depth 8 through ${engine} (${framing}, ${how}): ` +
      "8 writes in flight, all completed before the timed fsync, every frame read back",
    ignore: transfer.direct && NO_DIRECT,
    async fn() {
      using d = tempDir("sciobench-iodepth-");
      // 1 MiB of N = 64 frames (1792 bytes each): 585 frames, about 256 blocks of 4 KiB
      const row = await audited(() =>
        runTableCell(backendByName(framing), 1 << 20, 64, 1, {
          backends: [],
          sizes: [],
          ns: [],
          dir: d.path,
          repeat: 1,
          seed: 5,
          warmup: false,
          progress: new Progress({ quiet: true }),
          transfer,
          queue: { engine, depth: 8 },
        })
      );
      // every frame read (in order and at random) was verified against what was written
      assert.equal(row.error, "", String(row.error));
      assert.equal(row.engine, engine);
      assert.equal(row.iodepth, 8);
      const phase = auditOf(row)!.phases.find((p) => p.name === "write" && p.timed)!;
      const file = phase.files.find((f) => f.path.endsWith(`/table.${framing}`))!;
      const q = file.queuedWrites;
      assert.ok(q, `the write phase's requests in the trail of ${file.path}`);
      const blocks = Math.floor(Number(row.file_bytes) / 4096);
      assert.ok(q.requests >= blocks, `${q.requests} write requests, ${blocks} whole blocks`);
      assert.equal(q.maxInFlight, 8, `most writes in flight: ${q.maxInFlight}`);
      // the file's last fsync is in the timed phase, after the last request completed; every
      // fsync (gsd syncs before it moves its index) after the requests submitted before it
      const fsyncs = phase.syncs.filter((s) => s.call === "fsync" && s.path === file.path);
      assert.ok(fsyncs.length > 0, "fsync in the timed write phase");
      let lastDone = 0;
      for (let i = 0; i < q.log.length; i += 4) lastDone = Math.max(lastDone, q.log[i + 3]!);
      const last = fsyncs.at(-1)!;
      assert.ok(last.atS * 1e9 >= lastDone, `fsync at ${last.atS} s, last write ${lastDone} ns`);
      assert.equal(last.writesBefore, file.writes, "every write made before the last fsync");
      for (const s of fsyncs) {
        const at = s.atS * 1e9;
        for (let i = 0; i < q.log.length; i += 4) {
          if (q.log[i + 2]! > at) continue;
          assert.ok(q.log[i + 3]! <= at, `a write in flight across the fsync at ${s.atS} s`);
        }
      }
    },
  });
}

/** The write side of a traced table run's calls on its raw file. */
function writeCalls(trace: string, under: string, k: number): string[] {
  return parseStrace(trace, under, k)
    .filter((c) => c.path.endsWith("/table.raw"))
    .filter((c) => c.call === "pwrite64" || c.call === "fsync" || c.call === "ftruncate")
    .map((c) => `${c.call} ${c.offset} ${c.count}`);
}

Deno.test({
  name: "table iodepth: --iodepth 1 writes as a run without it; at depth 8 through libaio 8 " +
    "writes submitted before one is reaped, the fsync after the last (strace)",
  ignore: NO_STRACE,
  async fn() {
    using d = tempDir("sciobench-iodepth-");
    using trace = tempDir("sciobench-strace-");
    const common = [
      ...["table", "--framing", "raw", "--size", "1M", "--n", "64", "--no-warmup"],
      ...["--direct", "--bs", "4k", "--dir", d.path],
    ];
    const runs = [
      common,
      [...common, "--iodepth", "1"],
      [...common, "--iodepth", "8", "--engine", "libaio"],
    ];
    const out = await straceSciobench(runs, trace.path);
    for (const o of out) assert.equal(o.code, 0, o.stderr);
    const today = writeCalls(trace.path, d.path, 0);
    assert.ok(today.filter((c) => c.startsWith("pwrite64")).length > 200, today.join("\n"));
    assert.deepEqual(writeCalls(trace.path, d.path, 1), today, "--iodepth 1 against none");
    const calls = parseStrace(trace.path, d.path, 2).filter((c) => c.path.endsWith("/table.raw"));
    let inFlight = 0, most = 0, lastWriteDone = -1, writes = 0;
    const ids = new Set<string>();
    for (const [k, c] of calls.entries()) {
      if (c.call === "io_submit IOCB_CMD_PWRITE") {
        ids.add(c.id!);
        writes++;
        most = Math.max(most, ++inFlight);
      } else if (c.call === "io_getevents" && ids.delete(c.id!)) {
        inFlight--;
        lastWriteDone = k;
      }
    }
    assert.ok(writes > 200, `${writes} write requests`);
    assert.equal(most, 8, `most writes in flight: ${most}`);
    assert.equal(ids.size, 0, "every write reaped");
    // the first fsync of the file is the timed write phase's (the drops that follow fdatasync)
    const fsync = calls.findIndex((c) => c.call === "fsync");
    assert.ok(
      fsync > lastWriteDone,
      `fsync at call ${fsync}, last write reaped at ${lastWriteDone}`,
    );
  },
});

Deno.test({
  name: "table iodepth: --baseline fio writes at our depth through our engine (strace of fio)",
  ignore: NO_STRACE,
  async fn() {
    if (!peerUsable("table iodepth fio", commandMissing("fio"))) return;
    using d = tempDir("sciobench-iodepth-");
    using trace = tempDir("sciobench-strace-");
    const [out] = await straceSciobench([[
      ...["table", "--framing", "raw", "--size", "1M", "--n", "64", "--no-warmup"],
      ...["--direct", "--bs", "4k", "--iodepth", "8", "--engine", "libaio"],
      ...["--baseline", "fio", "--dir", d.path, "--format", "csv"],
    ]], trace.path);
    assert.equal(out!.code, 0, out!.stderr);
    const calls = parseStrace(trace.path, d.path, 0).filter((c) => c.path.endsWith("/fio.raw"));
    let inFlight = 0, most = 0, writes = 0;
    const ids = new Set<string>();
    for (const c of calls) {
      if (c.call === "io_submit IOCB_CMD_PWRITE") {
        ids.add(c.id!);
        writes++;
        most = Math.max(most, ++inFlight);
      } else if (c.call === "io_getevents" && ids.delete(c.id!)) inFlight--;
    }
    assert.equal(writes, 256, "fio's 4 KiB writes of 1 MiB, each an AIO request");
    assert.equal(most, 8, `most of fio's writes in flight: ${most}`);
    assert.equal(calls.filter((c) => c.call === "pwrite64").length, 0, "no psync write");
  },
});

Deno.test("table iodepth: buffered writes at depth are 4 MiB requests, and so are fio's blocks", async () => {
  if (!peerUsable("table iodepth fio", commandMissing("fio"))) return;
  using d = tempDir("sciobench-iodepth-");
  const r = await runCli([
    ...["table", "--framing", "raw", "--size", "16M", "--n", "100", "--no-warmup"],
    ...["--iodepth", "4", "--engine", "io_uring", "--baseline", "fio", "--dir", d.path],
    ...["--format", "json", "--audit"],
  ]);
  assert.equal(r.code, 0, r.stderr);
  const [row] = JSON.parse(r.stdout).rows as Record<string, unknown>[];
  assert.equal(row!.fio_write_bs_bytes, 4 << 20, "fio writes in our transfers' size");
  assert.ok(Number(row!.efficiency_write) > 0, `efficiency_write ${row!.efficiency_write}`);
  const audit = row!.audit as {
    phases: {
      name: string;
      timed: boolean;
      files: { path: string; queuedWrites?: { maxInFlight: number; log: number[] } }[];
    }[];
  };
  const phase = audit.phases.find((p) => p.timed && p.name === "write")!;
  const q = phase.files.find((f) => f.path.endsWith("/table.raw"))!.queuedWrites!;
  const sizes = q.log.filter((_, k) => k % 4 === 1);
  assert.equal(Math.max(...sizes), 4 << 20, `our write requests: ${sizes.join(", ")}`);
  assert.equal(q.maxInFlight, 4, `most writes in flight: ${q.maxInFlight}`);
});
