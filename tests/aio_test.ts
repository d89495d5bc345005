/**
 * Linux native AIO for O_DIRECT reads: a read is submitted on the main thread
 * (io_submit) and waited for (io_getevents) only when its result is asked, so frame k is verified
 * while frame k + 1's read is in flight; one read in flight at a time, the same preads (offsets,
 * lengths, order) as the serial loop, the same typed errors, and a serial fallback where io_setup
 * is refused (SCIOBENCH_AIO=off makes it refuse).
 * @module
 */
import assert from "node:assert/strict";
import { FRAMINGS } from "../lib/backends/registry.ts";
import { nativeBackend } from "../lib/backends/engine.ts";
import { nativeReads, readFramesOverlapped } from "../lib/backends/overlap.ts";
import { writeFrames } from "../lib/backends/write.ts";
import type { Backend } from "../lib/backends/backend.ts";
import { alignedBytes, type Transfer } from "../lib/io/transfer.ts";
import { SysError } from "../lib/core/errors.ts";
import * as libc from "../lib/sys/libc.ts";
import type { RowAudit } from "../lib/sys/audit.ts";
import { TableFrames } from "../lib/workloads/table/mod.ts";
import { verifyFrame } from "../lib/workloads/pattern.ts";
import { commandMissing, observeDuring, REQUIRE_PEERS, tempDir } from "./_helpers.ts";
import { DIRECT_REFUSED, isRead, parseStrace, straceSciobench, type Traced } from "./_syscalls.ts";

const NO_DIRECT = DIRECT_REFUSED !== null;
const NO_STRACE = NO_DIRECT || (commandMissing("strace") !== null && !REQUIRE_PEERS);
const DIRECT: Transfer = { bs: 4 << 20, direct: true, readAhead: false };
const BS64: Transfer = { bs: 64 << 10, direct: true };

function backend(name: string): Backend {
  return nativeBackend(FRAMINGS.find((f) => f.name === name)!);
}

/** A file of `bytes` bytes (byte i = i * 7 + i / 4096, mod 256) in `dir`, and its bytes. */
function patterned(dir: string, bytes: number): { path: string; data: Uint8Array } {
  const data = new Uint8Array(bytes);
  for (let i = 0; i < bytes; i++) data[i] = (i * 7 + (i >> 12)) & 255;
  const path = `${dir}/aio.bin`;
  Deno.writeFileSync(path, data);
  return { path, data };
}

/** Runs `use` on an O_DIRECT descriptor of a {@link patterned} file of `bytes` bytes; closes it. */
async function withDirectFile(
  bytes: number,
  use: (fd: number, path: string, data: Uint8Array) => Promise<void>,
): Promise<void> {
  using d = tempDir();
  const { path, data } = patterned(d.path, bytes);
  const fd = libc.open(path, libc.O.RDONLY | libc.O.DIRECT);
  try {
    await use(fd, path, data);
  } finally {
    libc.close(fd, path);
  }
}

Deno.test({
  name: "aio: a submitted read is waited for when asked, and gives pread's count and bytes",
  ignore: NO_DIRECT,
  async fn() {
    assert.equal(libc.aioUnavailable(), undefined, "io_setup works on this machine");
    const log: number[][] = [];
    await withDirectFile((1 << 20) - 100, async (fd, path, data) => {
      const buf = alignedBytes(64 << 10, 4096);
      await observeDuring({ read: (_fd, offset, bytes) => log.push([offset, bytes]) }, async () => {
        const read = libc.preadSubmit(fd, buf, 64 << 10, path);
        // not reaped yet: the observer sees a read when it completes, at the wait
        assert.deepEqual(log, [], "nothing seen before the result is asked");
        assert.equal(await read, 64 << 10);
        assert.ok(buf.every((b, i) => b === data[(64 << 10) + i]), "the file's bytes");
        assert.equal(read.wait(), 64 << 10, "asked again: the same count, no second wait");
        // at the end of the file the count is short, as pread's
        assert.equal(libc.preadSubmit(fd, buf, (1 << 20) - (64 << 10), path).wait(), 65436);
      });
      assert.deepEqual(log, [[64 << 10, 64 << 10], [(1 << 20) - (64 << 10), 65436]]);
      // a length O_DIRECT refuses: the completion's -EINVAL as pread's typed error, naming the file
      await assert.rejects(
        async () => await libc.preadSubmit(fd, buf.subarray(0, 100), 0, path),
        (e: unknown) =>
          e instanceof SysError && e.code === "EINVAL" && e.call === "pread" && e.path === path,
      );
    });
  },
});

Deno.test({
  name: "aio: a read submitted while another is in flight waits for it first (queue depth 1)",
  ignore: NO_DIRECT,
  async fn() {
    const log: number[] = [];
    await withDirectFile(1 << 20, async (fd, path, data) => {
      const a = alignedBytes(256 << 10, 4096);
      const b = alignedBytes(256 << 10, 4096);
      await observeDuring({ read: (_fd, offset) => log.push(offset) }, async () => {
        const first = libc.preadSubmit(fd, a, 0, path);
        const second = libc.preadSubmit(fd, b, 256 << 10, path);
        assert.deepEqual(log, [0], "the first read completed before the second was submitted");
        // awaited in the other order: each still gets its own read's result
        assert.equal(await second, 256 << 10);
        assert.equal(await first, 256 << 10);
      });
      assert.ok(a.every((v, i) => v === data[i]), "first buffer");
      assert.ok(b.every((v, i) => v === data[(256 << 10) + i]), "second buffer");
      assert.deepEqual(log, [0, 256 << 10]);
    });
  },
});

Deno.test({
  name: "aio: frame k + 1's read is in flight (submitted, not waited for) while frame k is visited",
  ignore: NO_DIRECT,
  async fn() {
    using d = tempDir();
    const frames = new TableFrames(128 * 128, 5);
    const order = [0, 4, 1, 5, 2, 3];
    for (const [how, transfer] of [["--direct", DIRECT], ["--direct --bs 64k", BS64]] as const) {
      for (const name of ["raw", "gsd"]) {
        const b = backend(name);
        const path = `${d.path}/f.${name}`;
        await writeFrames(b, path, { create: "truncate", transfer }, 6, (i) => frames.frame(i));
        const source = b.openReader(path, { layout: frames.layout, transfer });
        const starts = order.map((i) => source.locate!(i)[0]!.offset);
        const seen: (number | undefined)[] = [];
        try {
          await readFramesOverlapped(order, nativeReads(source), (i, chunks) => {
            const next = libc.readInFlight();
            seen.push(next === undefined ? undefined : next.offset);
            verifyFrame(path, i, frames.frame(i).chunks, chunks);
          });
        } finally {
          source.close();
        }
        assert.equal(libc.readInFlight(), undefined, "nothing left in flight");
        // the read in flight during frame k's visit is frame k + 1's first (from its first
        // block, or the next when the frame before's read holds that one)
        const blocks = seen.map((at, k) =>
          at !== undefined && k + 1 < order.length && Math.abs(at - starts[k + 1]!) <= 65536
        );
        assert.deepEqual(
          blocks,
          order.map((_, k) => k + 1 < order.length),
          `${name} ${how}: in flight at each visit: ${seen.join(", ")}; frames at ${starts}`,
        );
      }
    }
  },
});

Deno.test({
  name: "aio: a file cut after its open gives the overlapped reads the serial reads' error",
  ignore: NO_DIRECT,
  async fn() {
    using d = tempDir();
    const frames = new TableFrames(128 * 128, 5);
    for (const name of ["raw", "gsd", "f77", "netcdf"]) {
      const b = backend(name);
      const path = `${d.path}/cut.${name}`;
      const errors: string[] = [];
      for (const overlap of [false, true]) {
        await writeFrames(
          b,
          path,
          { create: "truncate", fsync: "none" },
          4,
          (i) => frames.frame(i),
        );
        const source = b.openReader(path, { layout: frames.layout, transfer: DIRECT });
        try {
          // the last frame loses its last 100 kB once the index is read
          Deno.truncateSync(path, Deno.statSync(path).size - 100_000);
          await readFramesOverlapped([0, 1, 2, 3], nativeReads(source), (i, chunks) => {
            verifyFrame(path, i, frames.frame(i).chunks, chunks);
          }, overlap);
          errors.push("no error");
        } catch (e) {
          errors.push(`${(e as Error).name}: ${(e as Error).message}`);
        } finally {
          source.close();
        }
      }
      assert.notEqual(errors[0], "no error", name);
      assert.equal(errors[1], errors[0], `${name}: the same error overlapped`);
    }
  },
});

/** The framings whose reads the strace test compares. */
const NAMES = ["raw", "gsd", "f77", "netcdf"];

/** A table run over {@link NAMES} with `extra` options: 448 KiB frames, --direct, its audit. */
function tableArgs(dir: string, extra: string[]): string[] {
  return [
    ...["table", "--framing", NAMES.join(","), "--size", "4MiB", "--n", "128^2"],
    ...["--sample", "2MiB", "--no-warmup", "--direct", "--dir", dir],
    ...["--format", "json", "--audit", ...extra],
  ];
}

interface TableOut {
  readonly meta: { readonly options: Record<string, unknown> };
  readonly rows: (Record<string, unknown> & { audit: RowAudit })[];
}

/**
 * The reads (offset, bytes) strace saw of each framing's table file from its last open on (the
 * timed open's and the read phases'; the untimed warm-up opens before it stop after a time), by
 * framing.
 */
function readsByFraming(calls: readonly Traced[]): Map<string, number[][]> {
  const out = new Map<string, number[][]>();
  for (const name of NAMES) {
    const mine = calls.filter((c) => c.path.endsWith(`/table.${name}`));
    const open = mine.findLastIndex((c) => c.call === "openat");
    out.set(name, mine.slice(open).filter(isRead).map((c) => [c.offset, c.count]));
  }
  return out;
}

Deno.test({
  name:
    "table --direct: io_submit on the main thread, one read in flight, the serial preads (strace)",
  ignore: NO_STRACE,
  async fn() {
    using scratch = tempDir("sciobench-aio-");
    using trace = tempDir("sciobench-strace-");
    // (the files' alignment: 512 or a multiple, as ext4 and xfs report it for a file)
    const align = 512;
    const runs = [[], ["--no-overlap"], ["--bs", "64k"], ["--bs", "64k", "--no-overlap"]];
    const out = await straceSciobench(runs.map((x) => tableArgs(scratch.path, x)), trace.path);
    const serial = new Map<number, Map<string, number[][]>>();
    for (const [k, extra] of runs.entries()) {
      const what = `table --direct ${extra.join(" ")}`;
      assert.equal(out[k]!.code, 0, out[k]!.stderr);
      const doc = JSON.parse(out[k]!.stdout) as TableOut;
      const overlapped = !extra.includes("--no-overlap");
      assert.equal(doc.meta.options.read_overlap, overlapped ? "aio" : "none", what);
      const calls = parseStrace(trace.path, scratch.path, k);
      const aio = calls.filter((c) => c.call.startsWith("io_"));
      if (!overlapped) {
        assert.deepEqual(aio, [], `${what}: no AIO`);
        serial.set(extra.includes("--bs") ? 2 : 0, readsByFraming(calls));
        continue;
      }
      // the device never has two reads: each submission of one read, reaped before the next
      for (const [j, c] of aio.entries()) {
        const where = `${what}: AIO call ${j} (${c.call} ${c.path} at ${c.offset})`;
        assert.equal(c.call, j % 2 === 0 ? "io_submit" : "io_getevents", where);
        if (c.call === "io_submit") assert.equal(c.queued, 1, where);
        else assert.equal(c.id, aio[j - 1]!.id, `${where}: the completion of the read before`);
      }
      assert.equal(aio.length % 2, 0, `${what}: every read reaped`);
      const main = calls.find((c) => c.call === "openat")!.tid;
      for (const row of doc.rows) {
        const name = String(row.framing);
        const mine = calls.filter((c) => c.path.endsWith(`/table.${name}`));
        const submits = mine.filter((c) => c.call === "io_submit");
        // 2 read phases of 4-5 frames of 448 KiB, each frame's first read through AIO
        assert.ok(submits.length >= 8, `${what} ${name}: ${submits.length} io_submit`);
        for (const c of submits) {
          const where = `${what} ${name}: io_submit at ${c.offset} of ${c.count}`;
          assert.equal(c.tid, main, `${where}: on the main thread`);
          assert.match(c.flags, /O_DIRECT/, where);
          assert.equal(c.offset % align, 0, where);
          assert.equal(c.count % align, 0, where);
          if (extra.includes("--bs")) assert.ok(c.count <= 65536, where);
        }
        // the audit trail counted the reads the kernel saw, submissions included
        const files = row.audit.phases.flatMap((p) => p.files).filter((f) =>
          f.path.endsWith(`/table.${name}`)
        );
        const trail = files.reduce((a, f) => a + f.reads, 0);
        assert.equal(trail, mine.filter(isRead).length, `${what} ${name}: reads in trail, strace`);
      }
    }
    // the same reads (offsets, lengths, order) as the serial loop's preads
    for (const [k, extra] of runs.entries()) {
      if (extra.includes("--no-overlap")) continue;
      const base = serial.get(extra.includes("--bs") ? 2 : 0)!;
      const reads = readsByFraming(parseStrace(trace.path, scratch.path, k));
      for (const name of NAMES) {
        assert.ok(base.get(name)!.length > 0, name);
        assert.deepEqual(
          reads.get(name),
          base.get(name),
          `table --direct ${extra.join(" ")} ${name}: the serial run's reads`,
        );
      }
    }
  },
});

Deno.test({
  name: "table --direct where io_setup fails: one line, serial preads, no AIO (strace)",
  ignore: NO_STRACE,
  async fn() {
    using scratch = tempDir("sciobench-aio-");
    using trace = tempDir("sciobench-strace-");
    const [out] = await straceSciobench(
      [tableArgs(scratch.path, ["--repeat", "2"])],
      trace.path,
      { SCIOBENCH_AIO: "off" },
    );
    assert.equal(out!.code, 0, out!.stderr);
    const lines = out!.stderr.split("\n").filter((l) => l.includes("native AIO"));
    assert.equal(lines.length, 1, out!.stderr);
    assert.match(lines[0]!, /io_setup: EINVAL .*each frame is read, then verified/);
    const doc = JSON.parse(out!.stdout) as TableOut;
    assert.equal(doc.meta.options.read_overlap, "none");
    assert.ok(doc.rows.every((r) => r.error === "" || r.error === undefined), "every row ran");
    const calls = parseStrace(trace.path, scratch.path);
    assert.deepEqual(calls.filter((c) => c.call.startsWith("io_")), [], "no AIO");
    for (const name of NAMES) {
      // 2 repeats x 2 read phases x 4-5 frames, each frame's chunks in one or two preads
      const reads = calls.filter((c) => c.call === "pread64" && c.path.endsWith(`/table.${name}`));
      assert.ok(reads.filter((c) => c.count >= 12 * 128 * 128).length >= 16, name);
    }
  },
});

Deno.test({
  name: "records --direct: each record's read through native AIO, one in flight (strace)",
  ignore: NO_STRACE,
  async fn() {
    using scratch = tempDir("sciobench-aio-");
    using trace = tempDir("sciobench-strace-");
    const args = [
      ...["records", "--framing", "raw,netcdf", "--endian", "big", "--shape", "12x300x500"],
      ...["--direct", "--dir", scratch.path, "--format", "json"],
    ];
    const out = await straceSciobench([args], trace.path);
    assert.equal(out[0]!.code, 0, out[0]!.stderr);
    const calls = parseStrace(trace.path, scratch.path, 0);
    const aio = calls.filter((c) => c.call.startsWith("io_"));
    for (const [j, c] of aio.entries()) {
      assert.equal(c.call, j % 2 === 0 ? "io_submit" : "io_getevents", `AIO call ${j}`);
      if (c.call === "io_submit") assert.equal(c.queued, 1);
    }
    // 12 records of 600 kB each, in each of the two files
    for (const name of ["raw", "netcdf"]) {
      const mine = aio.filter((c) => c.call === "io_submit" && c.path.includes(`/records.${name}`));
      assert.equal(mine.length, 12, `records ${name}: io_submit`);
    }
  },
});

Deno.test({
  name: "read --verify --direct: frame k verified while frame k + 1 is read (strace), as serial",
  ignore: NO_STRACE,
  async fn() {
    using scratch = tempDir("sciobench-aio-");
    using trace = tempDir("sciobench-strace-");
    const file = `${scratch.path}/f.gsd`;
    await writeFrames(
      backend("gsd"),
      file,
      { create: "truncate", fsync: "none" },
      12,
      (i) => new TableFrames(128 * 128, 1).frame(i),
    );
    const args = ["read", "--verify", "--direct", "--sample", "2300000", "--format", "json", file];
    using serialTrace = tempDir("sciobench-strace-");
    const [aio] = await straceSciobench([args], trace.path);
    const [serial] = await straceSciobench([args], serialTrace.path, { SCIOBENCH_AIO: "off" });
    assert.equal(aio!.code, 0, aio!.stderr);
    assert.equal(serial!.code, 0, serial!.stderr);
    const row = (out: string) => (JSON.parse(out) as TableOut).rows[0]!;
    for (const key of ["read_frames", "read_bytes", "random_bytes", "verified"]) {
      assert.deepEqual(row(aio!.stdout)[key], row(serial!.stdout)[key], key);
    }
    assert.equal(row(aio!.stdout).read_frames, 6, "the frames the sample asks for, not one more");
    const calls = parseStrace(trace.path, scratch.path).filter((c) => c.path === file);
    const serialCalls = parseStrace(serialTrace.path, scratch.path).filter((c) => c.path === file);
    assert.deepEqual(
      calls.filter(isRead).map((c) => [c.offset, c.count]),
      serialCalls.filter(isRead).map((c) => [c.offset, c.count]),
      "the serial run's reads",
    );
    assert.ok(!serialCalls.some((c) => c.call.startsWith("io_")), "no AIO where io_setup failed");
    const aioCalls = calls.filter((c) => c.call.startsWith("io_"));
    for (const [j, c] of aioCalls.entries()) {
      assert.equal(c.call, j % 2 === 0 ? "io_submit" : "io_getevents", `AIO call ${j}`);
    }
    // 6 frames in order, 6 in a random order, each one read submitted through AIO
    assert.equal(aioCalls.filter((c) => c.call === "io_submit").length, 12);
  },
});

Deno.test("preadMany: many small reads in one submission give pread's bytes and counts, in order to the observer", async () => {
  using d = tempDir();
  const path = `${d.path}/many.bin`;
  const size = 3_000_000;
  const want = new Uint8Array(size).map((_, i) => (i * 7 + (i >> 9)) & 255);
  Deno.writeFileSync(path, want);
  const fd = libc.open(path, libc.O.RDONLY);
  try {
    const count = libc.PREAD_MANY_MAX;
    const offsets = new Float64Array(count);
    const lengths = new Int32Array(count);
    for (let k = 0; k < count; k++) {
      offsets[k] = k === count - 1 ? size - 5 : 1000 + k * 40_003; // the last one runs past the end
      lengths[k] = 8 + (k % 3) * 100;
    }
    const stride = 4096;
    const into = new Uint8Array(count * stride);
    const counts = new Int32Array(count);
    const seen: number[] = [];
    await observeDuring({ read: (_fd, offset, bytes) => seen.push(offset, bytes) }, () => {
      libc.preadMany(fd, offsets, lengths, count, into, stride, counts, path);
    });
    for (let k = 0; k < count; k++) {
      const o = offsets[k]!;
      const n = Math.min(lengths[k]!, size - o);
      assert.equal(counts[k], n, `read ${k}'s count`);
      assert.deepEqual(into.subarray(k * stride, k * stride + n), want.subarray(o, o + n), `${k}`);
    }
    assert.deepEqual(seen, [...offsets].flatMap((o, k) => [o, counts[k]!]), "the observer's reads");
  } finally {
    libc.close(fd, path);
  }
});

Deno.test({
  name:
    "preadMany: reads the kernel refuses (unaligned, O_DIRECT) fail as a pread's, naming the file",
  ignore: NO_DIRECT,
  fn: () => {
    using d = tempDir();
    const path = `${d.path}/refused.bin`;
    Deno.writeFileSync(path, new Uint8Array(1 << 20));
    const fd = libc.open(path, libc.O.RDONLY | libc.O.DIRECT);
    try {
      const into = new Uint8Array(2 * 4096);
      const counts = new Int32Array(2);
      assert.throws(
        () => libc.preadMany(fd, [5, 70_001], [8, 8], 2, into, 4096, counts, path),
        (e: unknown) =>
          e instanceof SysError && /pread/.test(e.message) && e.message.includes(path),
      );
    } finally {
      libc.close(fd, path);
    }
  },
});
