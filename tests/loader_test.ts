/**
 * The loader workload: every native framing and the hdf5 and netcdf4 peers read in seeded
 * batches; each shuffled epoch reads every frame exactly once (counted from the audit trail),
 * random draws repeat with the seed, a damaged byte is a VerifyError, --compute gives a
 * utilisation, and rows carry batch latency percentiles.
 * @module
 */
import assert from "node:assert/strict";
import { openUserFile } from "../lib/workloads/open.ts";
import { hdf5 } from "../lib/peers/hdf5/mod.ts";
import { netcdf4 } from "../lib/peers/netcdf4/mod.ts";
import type { Row } from "../lib/report/row.ts";
import { auditOf } from "../lib/sys/audit.ts";
import { epochOrder } from "../lib/workloads/loader/mod.ts";
import { VerifyError } from "../lib/core/errors.ts";
import { flipByte, peerTest, runCli, tempDir } from "./_helpers.ts";
import { loaderRows, writeTableFile } from "./_loader.ts";
import { parseStrace, straceSciobench } from "./_syscalls.ts";

/** The offsets the reads of each epoch row started at (the file's reads, in order). */
function epochReads(row: Row, path: string): number[] {
  const phase = auditOf(row)!.phases.find((p) => p.name === "epoch")!;
  const file = phase.files.find((f) => f.path === path)!;
  assert.ok(file.reads <= 128, "the read log keeps 128 reads");
  const log = file.readLog;
  return Array.from({ length: log.length / 2 }, (_, k) => log[2 * k]!);
}

/**
 * The POSIX_FADV_DONTNEED calls on `path` in the untimed stretch before a row's epoch phase, and
 * the reads of `path` made there after the last of them.
 */
function dropsBefore(row: Row, path: string): { drops: number; readsAfter: number } {
  const phases = auditOf(row)!.phases;
  const i = phases.findIndex((p) => p.name === "epoch");
  const gap = phases[i - 1];
  if (gap === undefined || gap.timed) return { drops: 0, readsAfter: 0 };
  const drops = gap.syncs.filter((c) =>
    c.call === "fadvise" && c.advice === "DONTNEED" && c.path === path
  );
  const reads = gap.files.find((f) => f.path === path)?.reads ?? 0;
  return { drops: drops.length, readsAfter: reads - (drops.at(-1)?.readsBefore ?? reads) };
}

/** The file offset of each frame's first chunk (from the format's own index). */
function frameOffsets(framing: string, path: string): number[] {
  const source = openUserFile(path, framing, undefined, "read");
  try {
    return Array.from({ length: source.frameCount }, (_, i) => source.locate!(i)[0]!.offset);
  } finally {
    source.close();
  }
}

for (const framing of ["raw", "gsd", "netcdf", "f77", "ieeeio"]) {
  Deno.test(`loader ${framing}: two shuffled epochs read every frame exactly once each`, async () => {
    using dir = tempDir();
    const path = `${dir.path}/data.${framing}`;
    await writeTableFile(framing, path, 24);
    const rows = await loaderRows({ file: path, framing, verify: true });
    assert.equal(rows.length, 2);
    const starts = frameOffsets(framing, path);
    assert.equal(starts.length, 24);
    for (const [k, row] of rows.entries()) {
      assert.equal(row.epoch, k + 1);
      assert.equal(row.cache, k === 0 ? "cold" : "as left");
      assert.equal(row.samples, 24);
      assert.equal(row.batches, 3);
      assert.equal(row.verified, true);
      const reads = epochReads(row, path);
      for (const [i, at] of starts.entries()) {
        assert.equal(reads.filter((r) => r === at).length, 1, `epoch ${k + 1}: frame ${i}`);
      }
    }
    // cold at the first epoch: dropped after the open, nothing read between; the second as left
    assert.ok(dropsBefore(rows[0]!, path).drops > 0, "a drop before epoch 1");
    assert.equal(dropsBefore(rows[0]!, path).readsAfter, 0);
    assert.equal(dropsBefore(rows[1]!, path).drops, 0, "no drop before epoch 2");
    // the two epochs read the frames in different orders
    assert.notDeepEqual(epochReads(rows[0]!, path), epochReads(rows[1]!, path));
  });
}

for (const framing of ["raw", "gsd"]) {
  Deno.test(`loader ${framing} --iodepth 8 --engine io_uring: each batch's samples in flight together, all verified`, async () => {
    using dir = tempDir();
    const path = `${dir.path}/data.${framing}`;
    await writeTableFile(framing, path, 24);
    const rows = await loaderRows({
      file: path,
      framing,
      verify: true,
      iodepth: "8",
      engine: "io_uring",
    });
    assert.equal(rows.length, 2);
    for (const row of rows) {
      assert.equal(row.engine, "io_uring");
      assert.equal(row.iodepth, 8);
      assert.equal(row.samples, 24);
      const phase = auditOf(row)!.phases.find((p) => p.name === "epoch")!;
      const queued = phase.files.find((f) => f.path === path)!.queued!;
      assert.ok(queued.requests >= 24, `${queued.requests} requests for 24 samples`);
      assert.equal(queued.maxInFlight, 8, "a batch of 8 samples in flight at once");
    }
    // the same samples read one at a time: today's rows, psync at depth 1
    const [plain] = await loaderRows({ file: path, framing, verify: true, epochs: "1" });
    assert.equal(plain!.engine, "psync");
    assert.equal(plain!.iodepth, 1);
    // a damaged byte is found at depth too
    flipByte(path, frameOffsets(framing, path)[5]! + 40);
    await assert.rejects(
      loaderRows({ file: path, framing, verify: true, iodepth: "8", engine: "io_uring" }),
      /frame 5: chunk .* differs from what was written/,
    );
  });
}

peerTest(
  "loader --iodepth over a library's file is refused in one line",
  () => hdf5.unavailable(),
  async () => {
    using dir = tempDir();
    const rows = loaderRows({
      dir: dir.path,
      framing: "hdf5",
      size: "96KiB",
      n: "64",
      iodepth: "4",
    });
    await assert.rejects(rows, /--iodepth\/--engine: hdf5 is read through its library/);
  },
);

Deno.test("loader: random draws with replacement repeat with the seed", async () => {
  assert.deepEqual(epochOrder(50, 1, "random", 7), epochOrder(50, 1, "random", 7));
  assert.notDeepEqual(epochOrder(50, 1, "random", 7), epochOrder(50, 1, "random", 8));
  assert.notDeepEqual(epochOrder(50, 1, "random", 7), epochOrder(50, 2, "random", 7));
  // with replacement: some frame drawn twice (a permutation would draw each once)
  assert.ok(new Set(epochOrder(50, 1, "random", 7)).size < 50);
  using dir = tempDir();
  const path = `${dir.path}/data.raw`;
  await writeTableFile("raw", path, 30);
  const flags = { file: path, sample: "random", epochs: "1", seed: "5" };
  const [a] = await loaderRows(flags);
  const [b] = await loaderRows(flags);
  const [c] = await loaderRows({ ...flags, seed: "6" });
  assert.equal(a!.samples, 30);
  assert.deepEqual(epochReads(a!, path), epochReads(b!, path));
  assert.notDeepEqual(epochReads(a!, path), epochReads(c!, path));
  assert.ok(new Set(epochReads(a!, path)).size < 30);
});

Deno.test("loader: a damaged byte of a sample is a VerifyError naming the file (exit 1)", async () => {
  using dir = tempDir();
  const path = `${dir.path}/data.gsd`;
  await writeTableFile("gsd", path, 12);
  const at = frameOffsets("gsd", path)[7]! + 100;
  const ok = await runCli(["loader", "--file", path, "--verify", "--epochs", "1"]);
  assert.equal(ok.code, 0, ok.stderr);
  flipByte(path, at);
  const bad = await runCli(["loader", "--file", path, "--verify", "--epochs", "1"]);
  assert.equal(bad.code, 1);
  assert.match(bad.stderr, /frame 7: chunk .* differs from what was written/);
  assert.ok(bad.stderr.includes(path));
  assert.ok(!bad.stderr.includes("    at "), "no stack trace");
});

Deno.test("loader: --compute gives a utilisation between 0 and 1; rows carry percentiles", async () => {
  using dir = tempDir();
  const rows = await loaderRows({ dir: dir.path, size: "96KiB", n: "64", compute: "2" });
  assert.equal(rows.length, 2);
  for (const row of rows) {
    const util = Number(row.accel_util);
    assert.ok(util > 0 && util < 1, `accel_util ${util}`);
    // as DLIO: the time computing over the time computing or waiting for data
    const computeS = Number(row.compute_s);
    assert.ok(Math.abs(util - computeS / (computeS + Number(row.load_s))) < 1e-9);
    assert.ok(Number(row.compute_s) >= Number(row.batches) * 0.002);
    const p50 = Number(row.batch_p50_us);
    const p99 = Number(row.batch_p99_us);
    assert.ok(p50 > 0 && p50 <= p99 && p99 <= Number(row.batch_max_us));
    assert.ok(Number(row.sample_rate) > 0 && Number(row.load_MiBps) > 0);
    assert.equal(row.verified, true);
  }
  assert.equal(typeof rows[0]!.cold_ok, "boolean");
  assert.equal(rows[1]!.cold_ok, "");
  const plain = await loaderRows({ dir: dir.path, size: "32KiB", n: "64", epochs: "1" });
  assert.equal(plain[0]!.accel_util, null);
  // nothing left behind in --dir
  assert.deepEqual([...Deno.readDirSync(dir.path)], []);
});

Deno.test("loader: --batches reads that many batches across epochs", async () => {
  using dir = tempDir();
  // 19 frames, batches of 8: 3 per epoch; 5 batches = one epoch and 2 batches of the next
  const rows = await loaderRows({ dir: dir.path, size: `${19 * 28 * 64}`, n: "64", batches: "5" });
  assert.deepEqual(rows.map((r) => [r.batches, r.samples]), [[3, 19], [2, 16]]);
});

Deno.test("loader: bad flags are one line, exit 2", async () => {
  for (
    const args of [
      ["--batches", "3", "--epochs", "2"],
      ["--file", "/nonexistent", "--size", "1MiB"],
      ["--sample", "sorted"],
      ["--compute", "-1"],
      ["--verify"],
      ["--readers", "0"],
      ["--readers", "1.5"],
      ["--readers", "two"],
      ["--readers", "65"],
    ]
  ) {
    const r = await runCli(["loader", ...args]);
    assert.equal(r.code, 2, `${args.join(" ")}: ${r.stderr}`);
    assert.equal(r.stderr.trim().split("\n").length, 1, r.stderr);
  }
});

for (
  const [framing, missing] of [
    ["hdf5", () => hdf5.unavailable()],
    ["netcdf4", () => netcdf4.unavailable()],
  ] as const
) {
  peerTest(`loader ${framing}: every sample through the library, two epochs`, missing, async () => {
    using dir = tempDir();
    const rows = await loaderRows({ dir: dir.path, framing, size: "128KiB", n: "64" });
    assert.equal(rows.length, 2);
    for (const row of rows) {
      assert.equal(row.framing, framing);
      assert.equal(row.samples, row.frames);
      assert.equal(row.samples, 74);
      assert.equal(row.verified, true);
      assert.ok(Number(row.bytes) >= 74 * 28 * 64);
    }
  });
}

/** The processes this process started that are still there (their ids, from /proc). */
function children(): number[] {
  const out: number[] = [];
  for (const e of Deno.readDirSync("/proc")) {
    if (!/^\d+$/.test(e.name)) continue;
    try {
      const stat = Deno.readTextFileSync(`/proc/${e.name}/stat`);
      // pid (comm) state ppid ...: the fields after the last ')'
      const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
      if (ppid === Deno.pid) out.push(Number(e.name));
    } catch {
      // gone meanwhile
    }
  }
  return out;
}

/** The offsets the reads of each reader process of an epoch row started at, by process. */
function readerReads(row: Row, path: string): Map<number, number[]> {
  const phase = auditOf(row)!.phases.find((p) => p.name === "epoch")!;
  const out = new Map<number, number[]>();
  for (const p of phase.processes) {
    const log = p.phase.files.find((f) => f.path === path)?.readLog ?? [];
    out.set(p.pid, Array.from({ length: log.length / 2 }, (_, k) => log[2 * k]!));
  }
  return out;
}

for (
  const [framing, queue] of [
    ["raw", {}],
    ["gsd", {}],
    ["raw", { iodepth: "4", engine: "io_uring" }],
  ] as const
) {
  const depth = "iodepth" in queue ? " --iodepth 4" : "";
  Deno.test(`loader ${framing} --readers 2${depth}: each shuffled epoch reads every frame once across the readers, all verified`, async () => {
    using dir = tempDir();
    const path = `${dir.path}/data.${framing}`;
    await writeTableFile(framing, path, 24);
    const before = children();
    const rows = await loaderRows({ file: path, framing, verify: true, readers: "2", ...queue });
    assert.deepEqual(children(), before, "no reader process left");
    assert.equal(rows.length, 2);
    const starts = frameOffsets(framing, path);
    for (const [k, row] of rows.entries()) {
      assert.equal(row.readers, 2);
      assert.equal(row.samples, 24);
      assert.equal(row.batches, 3);
      assert.equal(row.verified, true);
      assert.equal(row.iodepth, "iodepth" in queue ? 4 : 1);
      // the consumer reads nothing; each of two other processes reads its batches
      const own = auditOf(row)!.phases.find((p) => p.name === "epoch")!.files;
      assert.equal(own.find((f) => f.path === path)?.reads ?? 0, 0, "the consumer reads nothing");
      const byReader = readerReads(row, path);
      assert.equal(byReader.size, 2);
      assert.ok(!byReader.has(Deno.pid));
      // batches 0 and 2 by the first reader, batch 1 by the second: 16 and 8 samples
      const samplesRead = [...byReader.values()].map((r) => r.filter((at) => starts.includes(at)));
      assert.deepEqual(samplesRead.map((r) => r.length).sort(), [16, 8].sort());
      const reads = samplesRead.flat();
      for (const [i, at] of starts.entries()) {
        assert.equal(reads.filter((r) => r === at).length, 1, `epoch ${k + 1}: frame ${i}`);
      }
      assert.ok(Number(row.user_s) > 0 && Number(row.sample_rate) > 0);
    }
    assert.ok(dropsBefore(rows[0]!, path).drops > 0, "a drop before epoch 1");
  });
}

Deno.test("loader --readers 2: a damaged sample is a VerifyError naming the file and frame; no reader left", async () => {
  using dir = tempDir();
  const path = `${dir.path}/data.gsd`;
  await writeTableFile("gsd", path, 24);
  flipByte(path, frameOffsets("gsd", path)[5]! + 100);
  const before = children();
  const run = loaderRows({ file: path, verify: true, readers: "2", epochs: "1" });
  await assert.rejects(run, (e: unknown) => {
    assert.ok(e instanceof VerifyError, String(e));
    assert.match(e.message, /frame 5: chunk .* differs from what was written/);
    assert.ok(e.message.includes(path), e.message);
    return true;
  });
  assert.deepEqual(children(), before, "no reader process left");
});

Deno.test("loader --readers 2: a reader that fails stops the other; no process or scratch file left", async () => {
  using dir = tempDir();
  using scratch = tempDir();
  // a reader program: the first reader fails at its first batch, the second hangs
  const fake = `${dir.path}/reader.ts`;
  const alive = `${dir.path}/alive`;
  Deno.writeTextFileSync(
    fake,
    `const lines = Deno.stdin.readable.pipeThrough(new TextDecoderStream()).getReader();
let text = "";
while (!text.includes("\\n")) text += (await lines.read()).value;
const job = JSON.parse(text.slice(0, text.indexOf("\\n")));
const say = (m) => console.log(JSON.stringify(m));
Deno.writeTextFileSync("${alive}." + job.reader, String(Deno.pid));
say({ t: "ready", frames: 12 });
if (job.reader === 1) setInterval(() => {}, 1000);
else {
  await lines.read();
  say({ t: "error", kind: "verify", message: "/x: frame 3: broken", exitCode: 1 });
  Deno.exit(1);
}
`,
  );
  const r = await runCli(
    ["loader", "--dir", scratch.path, "--size", `${12 * 28 * 64}`, "--n", "64", "--readers", "2"],
    { env: { SCIOBENCH_SELF: fake } },
  );
  assert.equal(r.code, 1, r.stderr);
  assert.match(r.stderr, /reader 1 of 2: \/x: frame 3: broken/);
  const errors = r.stderr.split("\n").filter((l) => l.startsWith("sciobench: error: "));
  assert.equal(errors.length, 1, r.stderr);
  assert.deepEqual([...Deno.readDirSync(scratch.path)], [], "the scratch file removed");
  const pids = [0, 1].map((k) => Number(Deno.readTextFileSync(`${alive}.${k}`)));
  for (const pid of pids) {
    assert.ok(!existsProcess(pid), `reader process ${pid} left running`);
  }
});

/** Whether process `pid` exists (and is not a zombie). */
function existsProcess(pid: number): boolean {
  try {
    const stat = Deno.readTextFileSync(`/proc/${pid}/stat`);
    return stat.slice(stat.lastIndexOf(")") + 2)[0] !== "Z";
  } catch {
    return false;
  }
}

Deno.test("loader --readers 1 makes the calls of a run without it; --readers 2 reads each frame once in its readers", async () => {
  using scratch = tempDir();
  using trace = tempDir();
  const args = ["loader", "--dir", scratch.path, "--size", `${24 * 28 * 64}`, "--n", "64"];
  args.push("--samples-per-batch", "8");
  const out = await straceSciobench(
    [[...args, "--epochs", "1"], [...args, "--epochs", "1", "--readers", "1"], [
      ...args,
      "--epochs",
      "1",
      "--readers",
      "2",
    ]],
    trace.path,
  );
  for (const o of out) assert.equal(o.code, 0, o.stderr);
  const calls = [0, 1, 2].map((k) =>
    parseStrace(trace.path, scratch.path, k).filter((c) => c.path.endsWith("loader.raw"))
  );
  const shape = (k: number) => calls[k]!.map((c) => [c.call, c.flags, c.count, c.offset]);
  assert.ok(calls[0]!.filter((c) => c.call === "pread64").length >= 24);
  assert.deepEqual(shape(1), shape(0), "--readers 1: the same calls in the same order");
  assert.equal(new Set(calls[0]!.map((c) => c.tid)).size, 1, "one thread reads");
  // --readers 2: every frame (1792 bytes after the 16-byte header) read once, by two processes
  const reads = calls[2]!.filter((c) => c.call === "pread64" && c.count === 28 * 64);
  const offsets = reads.map((c) => c.offset).sort((a, b) => a - b);
  assert.deepEqual(offsets, Array.from({ length: 24 }, (_, i) => 16 + i * 28 * 64));
  assert.equal(new Set(reads.map((c) => c.tid)).size, 2, "two reader processes read");
  const opens = calls[2]!.filter((c) => c.call === "openat");
  assert.ok(opens.length >= 3, "the consumer and each reader open the file");
});
