/**
 * `read --iodepth N --engine psync|libaio|io_uring`: up to N read requests in flight. At depth 1
 * the calls are today's (strace); at depth 8 every engine verifies every byte, the audit trail
 * and strace show 8 requests in flight (io_submit with 8 iocbs, io_uring_enter submitting 8),
 * libaio without --direct is refused in one line, and a corrupted byte is still found.
 * @module
 */
import assert from "node:assert/strict";
import { measureRead, type ReadSettings } from "../lib/workloads/read/mod.ts";
import { type AuditFile, auditOf } from "../lib/sys/audit.ts";
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
  TRACED_CALLS,
} from "./_syscalls.ts";

const NO_DIRECT = DIRECT_REFUSED !== null;
const NO_STRACE = straceDirectSkipped("iodepth strace tests");

const DIRECT_4K: Transfer = { bs: 4096, direct: true, readAhead: true };

/** A raw file of about 2 MiB (N = 64: frames of 1792 bytes, seed 1) written by sciobench. */
async function rawFile(dir: string): Promise<string> {
  const path = `${dir}/t.raw`;
  const w = await runCli(["write", "--framing", "raw", "--n", "64", "--size", "2M", path]);
  assert.equal(w.code, 0, w.stderr);
  return path;
}

/** The file's entry of the `random` phase's audit trail of a read row. */
function randomPhaseFile(row: object, path: string): AuditFile {
  const phase = auditOf(row)!.phases.find((p) => p.name === "random" && p.timed)!;
  return phase.files.find((f) => f.path === path)!;
}

Deno.test({
  name: "iodepth: --iodepth 1 makes today's calls, in today's order (strace)",
  ignore: NO_STRACE,
  async fn() {
    using d = tempDir("sciobench-iodepth-");
    using trace = tempDir("sciobench-strace-");
    const path = await rawFile(d.path);
    const runs = [
      ["read", "--verify", path],
      ["read", "--verify", "--iodepth", "1", path],
      ["read", "--verify", "--direct", "--bs", "4k", path],
      ["read", "--verify", "--direct", "--bs", "4k", "--iodepth", "1", path],
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

for (
  const [engine, transfer] of [
    ["libaio", DIRECT_4K],
    ["io_uring", DIRECT_4K],
    ["io_uring", undefined],
    ["psync", DIRECT_4K],
  ] as [EngineName, Transfer | undefined][]
) {
  const how = transfer ? "--direct --bs 4k" : "buffered";
  Deno.test({
    name: `iodepth: depth 8 through ${engine} (${how}) verifies every byte; the trail's requests`,
    ignore: transfer !== undefined && NO_DIRECT,
    async fn() {
      using d = tempDir("sciobench-iodepth-");
      const path = await rawFile(d.path);
      const settings: ReadSettings = {
        seed: 1,
        verify: true,
        sample: Infinity,
        transfer,
        queue: { engine, depth: 8 },
      };
      const row = await measureRead(path, "raw", undefined, settings);
      const frames = Number(row.frames);
      assert.equal(row.engine, engine);
      assert.equal(row.iodepth, 8);
      assert.equal(row.verified, true);
      // every frame of both phases read (and verified: a difference throws)
      assert.equal(row.read_frames, frames);
      assert.equal(row.random_units, frames);
      assert.equal(row.random_bytes, frames * 64 * 28);
      const f = randomPhaseFile(row, path);
      if (engine === "psync") {
        assert.equal(f.queued, undefined, "psync: preads, no queue");
        return;
      }
      // with --direct --bs 4k a frame is one or two 4 KiB requests; buffered one of the frame
      const q = f.queued!;
      assert.ok(q.requests >= frames, `${q.requests} requests for ${frames} frames`);
      // the latency columns time each request
      const timed = Number(row.random_iops) * Number(row.random_s);
      assert.equal(Math.round(timed), q.requests);
      assert.equal(q.maxInFlight, 8, `most in flight: ${q.maxInFlight}`);
      assert.equal(f.reads, q.requests, "every request's read in the trail");
      // the log: offset, bytes, submitted, completed; each completed after its submission
      for (let i = 0; i < q.log.length; i += 4) {
        assert.ok(q.log[i + 3]! >= q.log[i + 2]!, `request ${i / 4} completed before submitted`);
        if (transfer) assert.equal(q.log[i + 1], 4096);
      }
    },
  });
}

Deno.test({
  name: "iodepth: io_submit with 8 iocbs, io_uring_enter submitting 8 (strace)",
  ignore: NO_STRACE,
  async fn() {
    using d = tempDir("sciobench-iodepth-");
    using trace = tempDir("sciobench-strace-");
    const path = await rawFile(d.path);
    const common = ["read", "--verify", "--direct", "--bs", "4k", "--iodepth", "8"];
    const out = await straceSciobench(
      [[...common, "--engine", "libaio", path], [...common, "--engine", "io_uring", path]],
      trace.path,
      {},
      // (a second trace= replaces the first: the same calls and io_uring_enter)
      ["-e", `${TRACED_CALLS},io_uring_enter`],
    );
    for (const o of out) assert.equal(o.code, 0, o.stderr);
    const submits = parseStrace(trace.path, d.path, 0).filter((c) => c.call === "io_submit");
    const most = Math.max(...submits.map((c) => c.queued ?? 0));
    assert.equal(most, 8, `largest io_submit: ${most} iocbs`);
    // io_uring: the rings are in memory; io_uring_enter's second argument is what it submits
    let enters = 0, largest = 0;
    for (const entry of Deno.readDirSync(trace.path)) {
      if (!entry.name.startsWith("tr1.")) continue;
      for (const line of Deno.readTextFileSync(`${trace.path}/${entry.name}`).split("\n")) {
        const m = /io_uring_enter\(\d+<[^>]*>, (\d+), /.exec(line);
        if (!m) continue;
        enters++;
        largest = Math.max(largest, Number(m[1]));
      }
    }
    assert.ok(enters > 0, "io_uring_enter made");
    assert.equal(largest, 8, `largest io_uring_enter submission: ${largest}`);
  },
});

Deno.test("iodepth: libaio without --direct is refused in one line (exit 2)", async () => {
  using d = tempDir("sciobench-iodepth-");
  const path = await rawFile(d.path);
  const r = await runCli(["read", "--iodepth", "8", "--engine", "libaio", path]);
  assert.equal(r.code, 2);
  const lines = r.stderr.trim().split("\n");
  assert.equal(lines.length, 1, r.stderr);
  assert.match(lines[0]!, /--engine libaio needs --direct/);
  const bad = await runCli(["read", "--iodepth", "0", path]);
  assert.equal(bad.code, 2);
  assert.match(bad.stderr, /--iodepth/);
});

Deno.test("iodepth: io_uring refused by the kernel: one line, psync runs and says so", async () => {
  using d = tempDir("sciobench-iodepth-");
  const path = await rawFile(d.path);
  const r = await runCli(
    ["read", "--verify", "--iodepth", "8", "--engine", "io_uring", "--format", "csv", path],
    { env: { SCIOBENCH_IO_URING: "off" } },
  );
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stderr, /--engine io_uring: .*reading with psync instead/);
  const [head, row] = r.stdout.trim().split("\n").map((l) => l.split(","));
  assert.equal(row![head!.indexOf("engine")], "psync");
});

for (const engine of ["libaio", "io_uring"] as const) {
  Deno.test({
    name: `iodepth: a corrupted byte is found at depth 8 (${engine}, --direct)`,
    ignore: NO_DIRECT,
    async fn() {
      using d = tempDir("sciobench-iodepth-");
      const path = await rawFile(d.path);
      // a byte of frame 700's positions (a 16-byte header, then frames of 1792 bytes)
      flipByte(path, 16 + 700 * 64 * 28 + 100);
      const r = await runCli([
        ...["read", "--verify", "--direct", "--bs", "4k", "--iodepth", "8", "--engine", engine],
        path,
      ]);
      assert.notEqual(r.code, 0);
      const lines = r.stderr.trim().split("\n");
      assert.equal(lines.length, 1, r.stderr);
      assert.match(lines[0]!, /frame 700/);
    },
  });
}

Deno.test({
  name: "iodepth: table --iodepth 4 --engine io_uring: native rows say so, fio reads the same way",
  ignore: NO_DIRECT,
  async fn() {
    using d = tempDir("sciobench-iodepth-");
    const r = await runCli([
      ...["table", "--framing", "raw", "--size", "1M", "--n", "64", "--direct", "--bs", "4k"],
      ...["--iodepth", "4", "--engine", "io_uring", "--dir", d.path, "--format", "csv"],
    ]);
    assert.equal(r.code, 0, r.stderr);
    const [head, row] = r.stdout.trim().split("\n").map((l) => l.split(","));
    const col = (name: string) => row![head!.indexOf(name)];
    assert.equal(col("engine"), "io_uring");
    assert.equal(col("iodepth"), "4");
    assert.equal(col("read_frames"), col("frames"));
  },
});

for (const framing of ["netcdf", "gsd", "f77", "ieeeio"]) {
  Deno.test(`iodepth: ${framing} frames at depth 8 (io_uring) equal those read one at a time`, async () => {
    using d = tempDir("sciobench-iodepth-");
    const path = `${d.path}/t.${framing}`;
    const w = await runCli(["write", "--framing", framing, "--n", "100", "--frames", "40", path]);
    assert.equal(w.code, 0, w.stderr);
    const backend = nativeBackend(FRAMINGS.find((f) => f.name === framing)!);
    const one = backend.openReader(path, {});
    const many = backend.openReader(path, {});
    try {
      const order = Uint32Array.from({ length: one.frameCount }, (_, i) => (i * 7) % 40);
      const seen = new Set<number>();
      many.readFramesQueued!(order, { engine: "io_uring", depth: 8 }, (frame, chunks) => {
        seen.add(frame);
        const want = one.readFrame(frame);
        assert.equal(chunks.length, want.length);
        for (const [c, x] of chunks.map((c, i) => [c, want[i]!] as const)) {
          assert.equal(c.name, x.name);
          assert.deepEqual(c.data, x.data, `${framing} frame ${frame} ${c.name}`);
        }
      });
      assert.equal(seen.size, 40);
    } finally {
      one.close();
      many.close();
    }
  });
}

Deno.test("iodepth: the queue's buffers reserved before a phase fault no page inside it", async () => {
  using d = tempDir("sciobench-iodepth-");
  const path = `${d.path}/t.raw`;
  // frames of 448 KiB: 16 slot buffers of 113 pages each at depth 8
  const w = await runCli(["write", "--framing", "raw", "--n", "16384", "--size", "8M", path]);
  assert.equal(w.code, 0, w.stderr);
  const faults = async (mode: string) => {
    const out = await new Deno.Command(Deno.execPath(), {
      args: ["run", "--quiet", "-A", new URL("./_queue_faults_probe.ts", import.meta.url).pathname]
        .concat([path, mode]),
    }).output();
    assert.equal(out.code, 0, new TextDecoder().decode(out.stderr));
    return Number(new TextDecoder().decode(out.stdout));
  };
  const pages = 16 * 113;
  const fresh = await faults("none");
  const reserved = await faults("reserve");
  assert.ok(fresh >= 0.8 * pages, `without a reserve: ${fresh} faults`);
  assert.ok(reserved < 0.25 * pages, `after a reserve: ${reserved} faults (without: ${fresh})`);
});
