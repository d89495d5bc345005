/**
 * Overlapped reads: the table's read phase, serial (read frame k, verify it, read frame k + 1) vs
 * overlapped (frame k + 1's pread in flight while frame k is verified:
 * submitted through Linux native AIO with O_DIRECT, on another thread from the page cache), on a
 * 64 MiB raw file in 448 KiB frames (N = 128^2) and in 28 KiB frames (N = 32^2, under
 * OVERLAP_MIN_BYTES: read at once either way), with O_DIRECT (device reads at queue depth 1, where
 * the overlap can hide the verification) and from the page cache (where the pread is a CPU copy).
 * The same preads in the same order in both cases.
 * One bare nonblocking FFI call's round trip, and one O_DIRECT pread made through native AIO, are
 * measured beside them: what an overlap costs.
 *
 *     deno bench -A bench/overlap_bench.ts
 * @module
 */
import { nativeBackend } from "../lib/backends/engine.ts";
import { raw } from "../lib/framings/raw.ts";
import type { Transfer } from "../lib/io/transfer.ts";
import { FileHandle } from "../lib/io/file.ts";
import { preadAsync, preadSubmit } from "../lib/sys/libc.ts";
import { alignedBytes } from "../lib/io/transfer.ts";
import { readVerifiedFrames } from "../lib/workloads/pattern.ts";
import { TableFrames } from "../lib/workloads/table/mod.ts";

const dir = Deno.makeTempDirSync({ dir: ".", prefix: ".sciobench-bench-" });
globalThis.addEventListener("unload", () => Deno.removeSync(dir, { recursive: true }));
const FILE_BYTES = 64 << 20;
const backend = nativeBackend(raw);
const DIRECT: Transfer = { bs: 4 << 20, direct: true, readAhead: false };

function written(n: number): { path: string; data: TableFrames; order: Uint32Array } {
  const data = new TableFrames(n, 1);
  const frames = Math.floor(FILE_BYTES / (28 * n));
  const path = `${dir}/bench.${n}.raw`;
  const sink = backend.openWriter(path, { create: "truncate" });
  for (let i = 0; i < frames; i++) sink.writeFrame(data.frame(i));
  sink.close();
  Deno.readFileSync(path); // warm for the page-cache cases (O_DIRECT bypasses it)
  return { path, data, order: Uint32Array.from({ length: frames }, (_, i) => i) };
}

for (const n of [128 * 128, 32 * 32]) {
  const { path, data, order } = written(n);
  for (const [cache, transfer] of [["O_DIRECT", DIRECT], ["page cache", undefined]] as const) {
    const source = backend.openReader(path, { layout: data.layout, transfer });
    const group = `read 64 MiB verified, N=${n}, ${cache}`;
    for (const overlap of [false, true]) {
      Deno.bench({
        name: overlap ? "overlapped" : "serial",
        group,
        baseline: !overlap,
        async fn() {
          await readVerifiedFrames(source, order, data, undefined, overlap);
        },
      });
    }
  }
}

const probe = FileHandle.open(written(128).path, "read");
const small = new Uint8Array(4096);
Deno.bench({
  name: "pread 4 KiB cached, on this thread",
  group: "one call's cost",
  baseline: true,
  fn() {
    probe.preadOnce(small, 0);
  },
});
Deno.bench({
  name: "pread 4 KiB cached, nonblocking FFI (another thread and back)",
  group: "one call's cost",
  async fn() {
    await preadAsync(probe.fd, small, 0);
  },
});

// O_DIRECT: the device (or the host's cache behind it) answers each call
const directProbe = FileHandle.open(written(128).path, "read", { direct: true });
const block = alignedBytes(4096, 4096);
Deno.bench({
  name: "pread 4 KiB O_DIRECT, on this thread",
  group: "one O_DIRECT call's cost",
  baseline: true,
  fn() {
    directProbe.preadOnce(block, 0);
  },
});
Deno.bench({
  name: "pread 4 KiB O_DIRECT, native AIO (io_submit, then io_getevents)",
  group: "one O_DIRECT call's cost",
  fn() {
    preadSubmit(directProbe.fd, block, 0).wait();
  },
});
Deno.bench({
  name: "pread 4 KiB O_DIRECT, native AIO awaited (as the frame reads are)",
  group: "one O_DIRECT call's cost",
  async fn() {
    await preadSubmit(directProbe.fd, block, 0);
  },
});
