/**
 * `--direct` buffers in 2 MiB transparent huge pages, and `--no-huge-pages`: every O_DIRECT read
 * and write of the native framings goes through a buffer advised MADV_HUGEPAGE (strace), the
 * kernel backs such a buffer with huge pages (smaps), and the fio baseline is given huge pages
 * (mem=shmhuge) exactly when the machine can give them, else one line says the two differ.
 * O_DIRECT pins every page of its buffer and hands the device a segment per page, so huge pages
 * read faster, fio's own reads alike (docs/measurement.md, "Transfer size and direct I/O", gives the rates).
 * @module
 */
import assert from "node:assert/strict";
import { keepCopy } from "../lib/backends/native_sink.ts";
import { alignedBytes, HUGE_PAGES_MIN } from "../lib/io/transfer.ts";
import { fioArgs, type FioCell, fioHugePagesRefused, hugePageFacts } from "../lib/baselines/fio.ts";
import { HUGE_PAGE, readProc, transparentHugePages } from "../lib/sys/libc.ts";
import { commandMissing, REQUIRE_PEERS, runCli, tempDir } from "./_helpers.ts";
import {
  DIRECT_REFUSED,
  hugePageRanges,
  parseStrace,
  rawIoCalls,
  straceSciobench,
  TRACED_CALLS,
} from "./_syscalls.ts";

const NO_STRACE = DIRECT_REFUSED !== null || (commandMissing("strace") !== null && !REQUIRE_PEERS);

/** The kernel's THP mode ([always] madvise never), or undefined without THP. */
function thpMode(): string | undefined {
  return transparentHugePages() || undefined;
}

/** AnonHugePages of the mapping of this process that holds `address`, bytes. */
function hugeBytesAt(address: bigint): number {
  let inside = false;
  for (const line of readProc("/proc/self/smaps").split("\n")) {
    const range = /^([0-9a-f]+)-([0-9a-f]+) /.exec(line);
    if (range) {
      inside = BigInt(`0x${range[1]}`) <= address && address < BigInt(`0x${range[2]}`);
      continue;
    }
    const huge = /^AnonHugePages:\s+(\d+) kB/.exec(line);
    if (inside && huge) return Number(huge[1]) * 1024;
  }
  return 0;
}

Deno.test({
  name: "keepCopy (gsd's frame-0 reference): a copy of its own, in huge pages from 1 MiB",
  ignore: thpMode() === undefined || thpMode() === "never",
  fn() {
    const data = Float32Array.from({ length: (HUGE_PAGES_MIN >> 2) + 1024 }, (_, i) => i);
    const copy = keepCopy(data);
    assert.ok(copy instanceof Float32Array && copy.length === data.length);
    assert.notEqual(copy.buffer, data.buffer, "not the caller's memory");
    assert.ok(copy.every((v, i) => v === i), "the same values");
    data[7] = -1;
    assert.equal(copy[7], 7, "the caller's later writes do not reach it");
    const address = BigInt(Deno.UnsafePointer.value(Deno.UnsafePointer.of(copy)));
    assert.equal(address % BigInt(HUGE_PAGE), 0n, "starts on a 2 MiB boundary");
    assert.ok(hugeBytesAt(address) >= HUGE_PAGE, "the copy's mapping holds huge pages");
    // a small chunk: a plain copy
    const small = new BigUint64Array([1n, 2n]);
    const kept = keepCopy(small);
    assert.ok(kept instanceof BigUint64Array && kept.buffer !== small.buffer && kept[1] === 2n);
  },
});

Deno.test({
  name: "alignedBytes with huge pages: 2 MiB-aligned, and the kernel backs it with huge pages",
  ignore: thpMode() === undefined || thpMode() === "never",
  fn() {
    const buf = alignedBytes(4 << 20, 4096, true);
    const address = BigInt(Deno.UnsafePointer.value(Deno.UnsafePointer.of(buf)));
    assert.equal(address % BigInt(HUGE_PAGE), 0n, "starts on a 2 MiB boundary");
    assert.equal(buf.length, 4 << 20);
    assert.ok(buf.every((b) => b === 0), "a new buffer is zeros");
    buf.fill(7);
    assert.ok(hugeBytesAt(address) >= HUGE_PAGE, "the buffer's mapping holds huge pages");
    // small buffers stay in 4 KiB pages, page-aligned
    const small = alignedBytes(HUGE_PAGES_MIN - 4096, 4096, true);
    assert.equal(BigInt(Deno.UnsafePointer.value(Deno.UnsafePointer.of(small))) % 4096n, 0n);
  },
});

Deno.test({
  name:
    "table --direct: every read and write buffer is advised MADV_HUGEPAGE; --no-huge-pages: none (strace)",
  ignore: NO_STRACE,
  async fn() {
    const base = [
      ...["table", "--framing", "raw,gsd,f77", "--size", "8MiB", "--n", "128^2"],
      ...["--sample", "4MiB", "--no-warmup", "--direct", "--format", "json"],
    ];
    for (const huge of [true, false]) {
      using scratch = tempDir("sciobench-huge-");
      using trace = tempDir("sciobench-strace-");
      const [out] = await straceSciobench(
        [[...base, "--dir", scratch.path, ...(huge ? [] : ["--no-huge-pages"])]],
        trace.path,
        {},
        ["-e", `${TRACED_CALLS},madvise`, "-e", "raw=pwrite64,pread64"],
      );
      assert.equal(out!.code, 0, out!.stderr);
      const rows = JSON.parse(out!.stdout).rows as Record<string, unknown>[];
      for (const row of rows) assert.equal(row.huge_pages, huge);
      const ranges = hugePageRanges(trace.path);
      const inHuge = (buffer: bigint, count: number) =>
        ranges.some(([lo, hi]) => lo <= buffer && buffer + BigInt(count) <= hi);
      // the framings' transfers: pwrite64 and pread64 of at least a frame's 448 KiB (the 4 KiB
      // read-backs of a partial block use a small buffer), and every AIO read
      const io = [
        ...rawIoCalls(trace.path, scratch.path).filter((c) => c.count >= 28 * 128 * 128),
        ...parseStrace(trace.path, scratch.path).filter((c) => c.call === "io_submit")
          .map((c) => ({ ...c, buffer: c.buffer! })),
      ];
      for (const name of ["raw", "gsd", "f77"]) {
        const mine = io.filter((c) => c.path.endsWith(`/table.${name}`));
        assert.ok(mine.some((c) => c.call === "pwrite64"), `${name}: no large pwrite`);
        assert.ok(mine.some((c) => c.call !== "pwrite64"), `${name}: no large read`);
        for (const c of mine) {
          const what = `${name} ${huge ? "" : "--no-huge-pages "}${c.call} of ${c.count} at ` +
            `${c.offset} from 0x${c.buffer.toString(16)}`;
          assert.equal(inHuge(c.buffer, c.count), huge, what);
        }
      }
      if (!huge) assert.deepEqual(ranges, [], "--no-huge-pages: nothing advised");
    }
  },
});

Deno.test({
  name:
    "buffered table: the write batcher's buffer and the large read buffers are advised huge pages (strace)",
  ignore: commandMissing("strace") !== null && !REQUIRE_PEERS,
  async fn() {
    // 32^2: 28 KiB frames, written through the 4 MiB batcher; 256^2: 1.75 MiB frames, each read
    // into the engine's read buffer (2 MiB and more)
    for (const n of ["32^2", "256^2"]) {
      using scratch = tempDir("sciobench-huge-buffered-");
      using trace = tempDir("sciobench-strace-");
      const [out] = await straceSciobench(
        [[
          ...["table", "--framing", "raw", "--size", "8MiB", "--n", n, "--no-warmup"],
          ...["--cache", "warm", "--format", "json", "--dir", scratch.path],
        ]],
        trace.path,
        {},
        ["-e", `${TRACED_CALLS},madvise`, "-e", "raw=pwrite64,pread64"],
      );
      assert.equal(out!.code, 0, out!.stderr);
      const ranges = hugePageRanges(trace.path);
      const inHuge = (buffer: bigint, count: number) =>
        ranges.some(([lo, hi]) => lo <= buffer && buffer + BigInt(count) <= hi);
      const calls = rawIoCalls(trace.path, scratch.path);
      const mine = n === "32^2"
        ? calls.filter((c) => c.call === "pwrite64" && c.count >= 1 << 20)
        : calls.filter((c) => c.call === "pread64" && c.count === 28 * 256 * 256);
      assert.ok(mine.length > 0, `${n}: no batched pwrite / frame read`);
      for (const c of mine) {
        const what = `${n}: ${c.call} of ${c.count} from 0x${c.buffer.toString(16)}`;
        assert.ok(inHuge(c.buffer, c.count), what);
      }
    }
  },
});

Deno.test({
  name:
    "gsd writer: frame 0's kept copy is made from the spares, no new huge buffer per cell (strace)",
  ignore: commandMissing("strace") !== null && !REQUIRE_PEERS,
  async fn() {
    // N = 256^2: orientation is 1 MiB, kept as gsd's frame-0 reference in a huge buffer; the
    // sink gives it and the write batcher's 4 MiB buffer back at close, the source its read
    // buffers, so later cells take them instead of new memory, which on a VM with free page
    // reporting costs host faults inside the timed write
    const advised: number[] = [];
    for (const repeat of ["1", "3"]) {
      using scratch = tempDir("sciobench-huge-kept-");
      using trace = tempDir("sciobench-strace-");
      const [out] = await straceSciobench(
        [[
          ...["table", "--framing", "gsd", "--size", "8MiB", "--n", "256^2", "--no-warmup"],
          ...["--repeat", repeat, "--cache", "warm", "--format", "json", "--dir", scratch.path],
        ]],
        trace.path,
        {},
        ["-e", "trace=madvise"],
      );
      assert.equal(out!.code, 0, out!.stderr);
      advised.push(hugePageRanges(trace.path).length);
    }
    assert.ok(advised[0]! > 0, "the first cell advises its huge buffers");
    assert.equal(advised[1], advised[0], `huge buffers advised with 1 and 3 repeats: ${advised}`);
  },
});

Deno.test("--no-huge-pages without --direct: one line, exit 2", async () => {
  const r = await runCli(["table", "--framing", "raw", "--quick", "--no-huge-pages"]);
  assert.equal(r.code, 2);
  assert.equal(r.stderr.trim().split("\n").length, 1, r.stderr);
  assert.match(r.stderr, /--no-huge-pages .* give it with --direct/);
});

const CELL: FioCell = {
  path: "/scratch/fio.raw",
  fileBytes: 1 << 26,
  readBytes: 1 << 25,
  blockBytes: 4 << 20,
  readBlockBytes: 458_752,
  direct: true,
  fsync: "end",
  seed: 1,
  cold: false,
};

Deno.test("fio baseline: mem=shmhuge exactly when reserved huge pages can hold fio's buffer", () => {
  const page = 2 << 20;
  assert.match(
    fioHugePagesRefused(4 << 20, { free: 0, pageBytes: page, allowed: true })!,
    /no huge pages are reserved \(vm\.nr_hugepages\)/,
  );
  // 4 MiB and fio's page of alignment: three 2 MiB pages
  assert.match(
    fioHugePagesRefused(4 << 20, { free: 2, pageBytes: page, allowed: true })!,
    /2 reserved huge pages are free, fio needs 3/,
  );
  assert.match(
    fioHugePagesRefused(4 << 20, { free: 3, pageBytes: page, allowed: false })!,
    /CAP_IPC_LOCK/,
  );
  assert.equal(fioHugePagesRefused(4 << 20, { free: 3, pageBytes: page, allowed: true }), null);
  for (const phase of ["write", "read", "random"] as const) {
    assert.ok(fioArgs({ ...CELL, hugePages: true }, phase).includes("--mem=shmhuge"), phase);
    assert.ok(!fioArgs(CELL, phase).some((a) => a.startsWith("--mem")), phase);
  }
  // this machine's facts are read without error
  const facts = hugePageFacts();
  assert.ok(facts.free >= 0 && facts.pageBytes >= 0, JSON.stringify(facts));
});

Deno.test("table --direct --baseline fio: fio's buffers as ours where the machine allows, else one line", async () => {
  const missing = commandMissing("fio");
  if (missing !== null || DIRECT_REFUSED !== null) {
    if (REQUIRE_PEERS && missing !== null) throw new Error(missing);
    console.log(`skipped: ${missing ?? DIRECT_REFUSED}`);
    return;
  }
  using d = tempDir("sciobench-fio-huge-");
  const table = ["table", "--framing", "raw", "--size", "4M", "--n", "64^2", "--no-warmup"];
  const run = (extra: string[]) =>
    runCli([...table, "--direct", "--baseline", "fio", "--repeat", "2", "--dir", d.path, ...extra]);
  const r = await run(["--format", "json"]);
  assert.equal(r.code, 0, r.stderr);
  const rows = (JSON.parse(r.stdout).rows as Record<string, unknown>[])
    .filter((row) => row.stat === "run");
  // fio's largest buffer: the 4 MiB write block (the file is 4 MiB)
  const refused = fioHugePagesRefused(4 << 20);
  const notes = r.stderr.split("\n").filter((l) => /fio's buffers are 4 KiB pages/.test(l));
  for (const row of rows) {
    assert.equal(row.huge_pages, true);
    assert.equal(row.fio_huge_pages, refused === null, refused ?? "");
  }
  assert.equal(notes.length, refused === null ? 0 : 1, r.stderr);
  if (refused !== null) assert.ok(notes[0]!.includes(refused), notes[0]);
  // ours in 4 KiB pages too: no note, fio's malloc
  const small = await run(["--no-huge-pages", "--format", "json"]);
  assert.equal(small.code, 0, small.stderr);
  assert.doesNotMatch(small.stderr, /fio's buffers are 4 KiB pages/);
  for (const row of JSON.parse(small.stdout).rows as Record<string, unknown>[]) {
    if (row.stat !== "run") continue;
    assert.equal(row.huge_pages, false);
    assert.equal(row.fio_huge_pages, false);
  }
});
