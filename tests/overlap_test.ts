/**
 * Overlapped reads: the read of frame k + 1 is in flight on another thread while frame k is
 * verified, with the same system calls (offsets, lengths, order) as a plain loop, and every
 * frame's bytes intact although two buffers alternate; a collective source (MPI-IO) makes every
 * read call after a failure, so other ranks' collective reads complete.
 * @module
 */
import assert from "node:assert/strict";
import { backendByName, FRAMINGS } from "../lib/backends/registry.ts";
import { nativeBackend } from "../lib/backends/engine.ts";
import { nativeReads, readFramesOverlapped, storedReads } from "../lib/backends/overlap.ts";
import { writeFrames } from "../lib/backends/write.ts";
import type { Backend } from "../lib/backends/backend.ts";
import type { Transfer } from "../lib/io/transfer.ts";
import { OVERLAP_MIN_BYTES } from "../lib/io/file.ts";
import { TableFrames } from "../lib/workloads/table/mod.ts";
import { Rng, shuffledOrder, verifyFrame, verifyStoredFrame } from "../lib/workloads/pattern.ts";
import {
  commandMissing,
  observeDuring,
  peerTest,
  REQUIRE_PEERS,
  runCli,
  tempDir,
} from "./_helpers.ts";
import { DIRECT_REFUSED, parseStrace, straceSciobench } from "./_syscalls.ts";

/** 448 KiB frames (N = 128^2): each frame's read is large enough to go to another thread. */
const N = 128 * 128;
const FRAMES = 10;

function backend(name: string): Backend {
  return nativeBackend(FRAMINGS.find((f) => f.name === name)!);
}

/** Records the reads (offset, bytes) made through lib/sys/libc.ts into `log` while `run` runs. */
function recordReads(log: number[][], run: () => Promise<void>): Promise<void> {
  return observeDuring({ read: (_fd, offset, bytes) => log.push([offset, bytes]) }, run);
}

const TRANSFERS: readonly [string, Transfer | undefined][] = [
  ["buffered", undefined],
  ["--bs 64k", { bs: 64 << 10, direct: false }],
  ...(DIRECT_REFUSED === null
    ? [
      ["--direct", { bs: 4 << 20, direct: true, readAhead: false }],
      ["--direct --bs 64k", { bs: 64 << 10, direct: true }],
    ] as [string, Transfer][]
    : []),
];

Deno.test("overlapped reads: the same preads as a plain loop, every frame intact", async () => {
  assert.ok(28 * N >= OVERLAP_MIN_BYTES, "the frames are large enough to overlap");
  using d = tempDir();
  // 448 KiB frames (their reads on another thread) and 28 kB frames (read at once)
  for (const n of [N, 1000]) await sameReads(d.path, n);
});

async function sameReads(dir: string, n: number): Promise<void> {
  const frames = new TableFrames(n, 5);
  // forwards, a seeded random order, and re-reads of the last frames read
  const order = [
    ...Array.from({ length: FRAMES }, (_, i) => i),
    ...shuffledOrder(FRAMES, FRAMES, new Rng(3)),
    FRAMES - 1,
    FRAMES - 1,
    0,
  ];
  const cases: [string, string, "native" | "big"][] = [
    ["raw", "raw", "native"],
    ["f77", "f77", "native"],
    ["gsd", "gsd", "native"],
    ["netcdf big-endian (byte-swapped reads)", "netcdf", "big"],
  ];
  for (const [what, name, endian] of cases) {
    const b = backend(name);
    for (const [how, transfer] of TRANSFERS) {
      const label = `${what} N=${n} ${how}`;
      const path = `${dir}/f.${name}`;
      await writeFrames(
        b,
        path,
        { create: "truncate", fsync: "none", endian, transfer },
        FRAMES,
        (i) => frames.frame(i),
      );
      const logs: number[][][] = [];
      for (const overlap of [false, true]) {
        const log: number[][] = [];
        const source = b.openReader(path, { layout: frames.layout, transfer });
        try {
          // each frame is verified while the next one is read into the other buffer
          await recordReads(log, async () => {
            await readFramesOverlapped(order, nativeReads(source), (i, chunks) => {
              verifyFrame(path, i, frames.frame(i).chunks, chunks);
            }, overlap);
            // as stored (the table's reads): the same bytes for native-order files
            await readFramesOverlapped(order, storedReads(source)!, (i, chunks) => {
              if (endian === "native") verifyFrame(path, i, frames.frame(i).chunks, chunks);
              else verifyStoredFrame(path, i, frames, chunks);
            }, overlap);
          });
        } finally {
          source.close();
        }
        logs.push(log);
      }
      assert.ok(logs[0]!.length >= order.length / 2, `${label}: reads recorded`);
      assert.deepEqual(
        logs[1],
        logs[0],
        `${label}: the overlapped loop's preads are the plain loop's`,
      );
    }
  }
}

/** Waits up to `ms` for `seen()`; true when it came. */
async function within(ms: number, seen: () => boolean): Promise<boolean> {
  const end = performance.now() + ms;
  while (!seen()) {
    if (performance.now() > end) return false;
    await new Promise((r) => setTimeout(r, 5));
  }
  return true;
}

Deno.test("overlapped reads: frame k + 1's pread is in flight while frame k is visited", async () => {
  using d = tempDir();
  const frames = new TableFrames(N, 5);
  const b = backend("raw");
  const path = `${d.path}/f.raw`;
  await writeFrames(b, path, { create: "truncate", fsync: "none" }, 6, (i) => frames.frame(i));
  const order = [0, 4, 1, 5, 2, 3];
  for (const overlap of [true, false]) {
    const source = b.openReader(path, { layout: frames.layout });
    const starts = order.map((i) => source.locate!(i)[0]!.offset);
    const log: number[][] = [];
    const during: boolean[] = [];
    try {
      await recordReads(
        log,
        () =>
          readFramesOverlapped(order, nativeReads(source), async (i, chunks, k) => {
            // a slow verification: the next frame's read completes meanwhile when it is in flight
            const next = starts[k + 1];
            if (next !== undefined) {
              const wait = overlap ? 5000 : 100;
              during.push(await within(wait, () => log.some(([offset]) => offset === next)));
            }
            verifyFrame(path, i, frames.frame(i).chunks, chunks);
          }, overlap),
      );
    } finally {
      source.close();
    }
    assert.deepEqual(log.map(([o]) => o), starts, "one pread per frame, in the order asked");
    assert.deepEqual(
      during,
      order.slice(1).map(() => overlap),
      overlap
        ? "the next frame's pread completed while the frame before was verified"
        : "the plain loop reads a frame only after the one before is verified",
    );
  }
});

Deno.test({
  name: "table --overlap N=128^2: the read phases' preads run on another thread (strace)",
  ignore: commandMissing("strace") !== null && !REQUIRE_PEERS,
  async fn() {
    using scratch = tempDir("sciobench-overlap-");
    using trace = tempDir("sciobench-strace-");
    // (with --direct the reads go through native AIO on the main thread: tests/aio_test.ts)
    const runs: string[][] = [[]];
    const out = await straceSciobench(
      runs.map((extra) => [
        ...["table", "--framing", "raw", "--size", "8MiB", "--n", "128^2", "--sample", "4MiB"],
        ...["--no-warmup", "--overlap", "--dir", scratch.path, "--format", "json", ...extra],
      ]),
      trace.path,
    );
    for (const [k, extra] of runs.entries()) {
      const what = `table ${extra.join(" ") || "buffered"}`;
      assert.equal(out[k]!.code, 0, out[k]!.stderr);
      const calls = parseStrace(trace.path, scratch.path, k).filter((c) =>
        c.path.endsWith("/table.raw")
      );
      // sciobench opens (and drops) its files on its main thread
      const main = calls.find((c) => c.call === "openat")!.tid;
      // 2 phases x 9 frames of 448 KiB (4 MiB sample), each a pread of one frame
      const reads = calls.filter((c) => c.call === "pread64" && c.count >= 28 * N);
      assert.ok(reads.length >= 18, `${what}: ${reads.length} reads`);
      const away = reads.filter((c) => c.tid !== main);
      assert.ok(
        away.length >= 16,
        `${what}: ${away.length} of ${reads.length} frame reads on another thread than the main one`,
      );
    }
  },
});

peerTest(
  "table --overlap with a peer: one line says the peer reads one frame after the other",
  () => backendByName("hdf5").unavailable(),
  async () => {
    const r = await runCli(["table", "--framing", "raw,hdf5", "--overlap", "--dry-run"]);
    assert.equal(r.code, 0, r.stderr);
    const lines = r.stderr.split("\n").filter((l) => l.includes("--overlap"));
    assert.deepEqual(lines, [
      "sciobench: --overlap: not for hdf5 (peers read one frame after the other)",
    ]);
  },
);

Deno.test("collective reads: after a failure the rest are still read, then the failure is thrown", async () => {
  for (const collective of [true, false]) {
    const read: number[] = [];
    const reads = {
      collective,
      read(frame: number): readonly number[] {
        read.push(frame);
        if (frame === 5) throw new Error("read of frame 5 failed");
        return [frame];
      },
    };
    for (const failAt of ["read", "visit"] as const) {
      read.length = 0;
      const visited: number[] = [];
      await assert.rejects(
        readFramesOverlapped(
          [3, 4, 5, 6, 7].map((f) => (failAt === "visit" && f === 5 ? 2 : f)),
          reads,
          (frame) => {
            visited.push(frame);
            if (frame === 2) throw new Error("frame 2 differs");
          },
        ),
        failAt === "read" ? /read of frame 5 failed/ : /frame 2 differs/,
      );
      // a collective source: every rank makes as many read calls, the failing one included
      assert.deepEqual(
        read,
        failAt === "read"
          ? (collective ? [3, 4, 5, 6, 7] : [3, 4, 5])
          : (collective ? [3, 4, 2, 6, 7] : [3, 4, 2]),
        `${failAt} collective=${collective}`,
      );
      assert.deepEqual(visited, failAt === "read" ? [3, 4] : [3, 4, 2], "nothing visited after");
    }
  }
});
