/**
 * `--direct` reads made as fio's (for the read's efficiency): at file offsets that are multiples
 * of a page, into page-aligned buffers, a frame's bytes each (raw: 448 KiB at N = 128^2 after the
 * first), on a file system that would take 512-byte alignment too (strace observer); and frame
 * k + 1's read planned while frame k's is in flight and submitted right at its reap (pipelined).
 * @module
 */
import assert from "node:assert/strict";
import { commandMissing, observeDuring, REQUIRE_PEERS, tempDir } from "./_helpers.ts";
import { DIRECT_REFUSED, isRead, parseStrace, straceSciobench } from "./_syscalls.ts";
import { type Transfer, transferAlignment } from "../lib/io/transfer.ts";
import { FRAMINGS } from "../lib/backends/registry.ts";
import { nativeBackend } from "../lib/backends/engine.ts";
import { readFramesOverlapped } from "../lib/backends/overlap.ts";
import { writeFrames } from "../lib/backends/write.ts";
import * as libc from "../lib/sys/libc.ts";
import { TableFrames } from "../lib/workloads/table/mod.ts";
import { verifyStoredFrame } from "../lib/workloads/pattern.ts";

const NO_DIRECT = DIRECT_REFUSED !== null;
const NO_STRACE = NO_DIRECT || (commandMissing("strace") !== null && !REQUIRE_PEERS);
const PAGE = 4096;
/** One frame of the table at N = 128^2, bytes. */
const FRAME = 28 * 128 * 128;

function tableArgs(dir: string, extra: string[]): string[] {
  return [
    ...["table", "--framing", "raw,gsd", "--size", "4MiB", "--n", "128^2"],
    ...["--sample", "2MiB", "--no-warmup", "--direct", "--dir", dir, "--format", "json"],
    ...extra,
  ];
}

Deno.test("transferAlignment: O_DIRECT reads and writes at pages, whatever smaller alignment the file takes", () => {
  const t = (align: number, memoryAlign: number) => ({ align, memoryAlign });
  assert.deepEqual(transferAlignment(t(512, 512), 4 << 20), t(PAGE, PAGE));
  assert.deepEqual(transferAlignment(t(512, 512), 64 << 10), t(PAGE, PAGE));
  // a bs that is no multiple of a page keeps the file's alignment; buffers still at pages
  assert.deepEqual(transferAlignment(t(512, 512), 1536), t(512, PAGE));
  // a file system that asks more keeps it
  assert.deepEqual(transferAlignment(t(8192, 8192), 4 << 20), t(8192, 8192));
  // without O_DIRECT nothing
  assert.deepEqual(transferAlignment(t(1, 1), 4 << 20), t(1, 1));
});

Deno.test({
  name: "table --direct: reads at page offsets into page-aligned buffers, a frame each (strace)",
  ignore: NO_STRACE,
  async fn() {
    using scratch = tempDir("sciobench-dreads-");
    using trace = tempDir("sciobench-strace-");
    // --no-huge-pages: buffers of 4 KiB pages (huge pages start on 2 MiB boundaries anyway)
    const runs = [[], ["--no-overlap"], ["--no-huge-pages"]];
    const out = await straceSciobench(runs.map((x) => tableArgs(scratch.path, x)), trace.path);
    for (const [k, extra] of runs.entries()) {
      const what = `table --direct ${extra.join(" ")}`;
      assert.equal(out[k]!.code, 0, out[k]!.stderr);
      const calls = parseStrace(trace.path, scratch.path, k);
      for (const name of ["raw", "gsd"]) {
        const reads = calls.filter((c) =>
          c.path.endsWith(`/table.${name}`) && isRead(c) && /^O_RDONLY\b.*O_DIRECT/.test(c.flags)
        );
        assert.ok(reads.length >= 8, `${what} ${name}: ${reads.length} reads`);
        for (const c of reads) {
          const where = `${what} ${name}: ${c.call} of ${c.count} at ${c.offset}`;
          assert.equal(c.offset % PAGE, 0, where);
          if (c.buffer !== undefined) assert.equal(c.buffer % BigInt(PAGE), 0n, `${where}: buffer`);
        }
        assert.equal(
          reads.some((c) => c.buffer !== undefined),
          !extra.includes("--no-overlap"),
          `${what} ${name}: io_submit's buffers seen`,
        );
        if (name !== "raw") continue;
        // raw's frames start 16 bytes into a page: the first covers 113 pages, each next read
        // is the next frame's 448 KiB (its first 4080 bytes came with the read before), as fio's
        const first = reads.findIndex((c) => c.offset === 0 && c.count === FRAME + PAGE);
        assert.ok(first >= 0, `${what}: the first frame's read`);
        for (let j = 1; j <= 3; j++) {
          const c = reads[first + j]!;
          assert.deepEqual([c.offset, c.count], [PAGE + j * FRAME, FRAME], `${what}: read ${j}`);
        }
      }
    }
  },
});

const DIRECT: Transfer = { bs: 4 << 20, direct: true, readAhead: false };

Deno.test({
  name: "pipelined: frame k + 1's read, asked while frame k's is in flight, reaps k then submits",
  ignore: NO_DIRECT,
  async fn() {
    using d = tempDir();
    const frames = new TableFrames(128 * 128, 3);
    for (const name of ["raw", "gsd"]) {
      const b = nativeBackend(FRAMINGS.find((f) => f.name === name)!);
      const path = `${d.path}/p.${name}`;
      await writeFrames(b, path, { create: "truncate", fsync: "none" }, 4, (i) => frames.frame(i));
      const buffered = b.openReader(path, { layout: frames.layout });
      assert.equal(buffered.pipelined ?? false, false, `${name}: buffered reads are not pipelined`);
      buffered.close();
      const source = b.openReader(path, { layout: frames.layout, transfer: DIRECT });
      const log: string[] = [];
      try {
        assert.equal(source.pipelined, true, name);
        const at = (i: number) => source.locate!(i)[0]!.offset;
        await observeDuring({ read: (_fd, offset) => log.push(`read ${offset}`) }, async () => {
          const first = source.readFrameStoredAsync!(0);
          assert.deepEqual(log, [], `${name}: frame 0's read in flight`);
          const second = source.readFrameStoredAsync!(1);
          // frame 0's read was reaped inside the call, frame 1's submitted after it
          assert.equal(log.length, 1, `${name}: ${log}`);
          const inFlight = libc.readInFlight();
          // (from the block holding its start, or the next when frame 0's read holds that one)
          assert.ok(
            inFlight !== undefined && inFlight.offset > at(1) - PAGE &&
              inFlight.offset <= at(1) + PAGE,
            `${name}: frame 1's read in flight (${JSON.stringify(inFlight)}, frame at ${at(1)})`,
          );
          verifyStoredFrame(path, 0, frames, await first);
          verifyStoredFrame(path, 1, frames, await second);
          assert.equal(libc.readInFlight(), undefined, `${name}: nothing left in flight`);
        });
      } finally {
        source.close();
      }
    }
  },
});

Deno.test("pipelined reads: frame k + 1's read is started before frame k is awaited", async () => {
  const log: string[] = [];
  const read = (frame: number): PromiseLike<readonly string[]> => {
    log.push(`start ${frame}`);
    return {
      then(done, failed) {
        log.push(`await ${frame}`);
        return Promise.resolve([`frame ${frame}`]).then(done, failed);
      },
    };
  };
  const visits: string[] = [];
  await readFramesOverlapped([4, 2, 7], { read: () => [], readAsync: read, pipelined: true }, (
    frame,
    chunks,
  ) => {
    log.push(`visit ${frame}`);
    visits.push(chunks[0]!);
  });
  assert.deepEqual(visits, ["frame 4", "frame 2", "frame 7"]);
  assert.deepEqual(log, [
    ...["start 4", "start 2", "await 4", "visit 4"],
    ...["start 7", "await 2", "visit 2", "await 7", "visit 7"],
  ]);
  // not pipelined: as before, frame k + 1 started once frame k is in
  log.length = 0;
  await readFramesOverlapped([4, 2], { read: () => [], readAsync: read }, (frame) => {
    log.push(`visit ${frame}`);
  });
  assert.deepEqual(log, ["start 4", "await 4", "start 2", "visit 4", "await 2", "visit 2"]);
});
