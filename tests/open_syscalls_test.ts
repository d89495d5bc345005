/**
 * The system calls of a warm open of f77 and IEEEIO files whose records lie over 1 MiB apart (the
 * table's at N = 1024^2, here N = 2^17: records of 1.5 and 2 MiB), seen by strace (a file of a
 * few records, where an open's fixed costs are most of it): one small read a record
 * boundary and nothing else; the first of them, a pread with RWF_NOWAIT, tells that the file is
 * cached, so no cachestat probes it, and no mapping or lease is set up.
 * @module
 */
import assert from "node:assert/strict";
import { nativeBackend } from "../lib/backends/engine.ts";
import { writeFrames } from "../lib/backends/write.ts";
import { f77 } from "../lib/framings/f77/mod.ts";
import { ieeeio } from "../lib/framings/ieeeio/mod.ts";
import type { Framing } from "../lib/framings/types.ts";
import { TableFrames } from "../lib/workloads/table/mod.ts";
import { commandMissing, PERMISSIONS, REQUIRE_PEERS, tempDir } from "./_helpers.ts";

const N = 1 << 17;
const FRAMES = 2;
/** cachestat(2), as strace names it (6.1 does not: by its number). */
const CACHESTAT = /^(cachestat|syscall_0x1c3)\(/;
const PROBE = new URL("./_open_probe.ts", import.meta.url).pathname;

/** The calls on the file (and every cachestat) of the probe's timed open, as strace prints them. */
async function openCalls(framing: Framing, n = N, count = FRAMES): Promise<string[]> {
  using d = tempDir();
  const path = `${d.path}/table.${framing.name}`;
  const frames = new TableFrames(n, 1);
  await writeFrames(
    nativeBackend(framing),
    path,
    { create: "new", fsync: "none" },
    count,
    (i) => frames.frame(i),
  );
  const out = await new Deno.Command("strace", {
    args: [
      // a file a thread (-ff): a call is never split by another thread's in its lines
      ...["-f", "-ff", "-qq", "-y", "-s", "12", "-o", `${d.path}/tr`, "-e", "trace=all"],
      ...[Deno.execPath(), "run", "--quiet", ...PERMISSIONS, PROBE, framing.name, path, `${n}`],
    ],
    stdout: "piped",
    stderr: "piped",
    env: { NO_COLOR: "1" },
  }).output();
  assert.equal(out.code, 0, new TextDecoder().decode(out.stderr));
  assert.equal(new TextDecoder().decode(out.stdout).trim(), `${count}`);
  // the thread that opens the file and writes the markers
  const lines = [...Deno.readDirSync(d.path)]
    .filter((e) => e.name.startsWith("tr."))
    .map((e) => Deno.readTextFileSync(`${d.path}/${e.name}`).split("\n"))
    .find((l) => l.some((line) => line.includes("=====OPEN"))) ?? [];
  const from = lines.findIndex((l) => l.includes("=====OPEN"));
  const to = lines.findIndex((l) => l.includes("=====DONE"));
  assert.ok(from > 0 && to > from, "the probe's markers are in the trace");
  // strace -y names the file at each call on its descriptor; cachestat (unnamed) is ours alone
  return lines.slice(from + 1, to)
    .filter((l) => (l.includes(`<${path}>`) && !l.startsWith("openat(")) || CACHESTAT.test(l));
}

/** The name of each call and, for reads, the bytes asked, the offset and the flags (`name count @offset flags`). */
function summary(calls: string[]): string[] {
  return calls.map((l) => {
    const name = l.slice(0, l.indexOf("("));
    if (name === "pread64") {
      const m = /, (\d+), (\d+)\) = /.exec(l)!;
      return `pread64 ${m[1]} @${m[2]}`;
    }
    if (name === "preadv2") {
      const m = /iov_len=(\d+)\}\], 1, (\d+), (\w+)/.exec(l)!;
      // RWF_DONTCACHE, which strace 6.1 does not name
      return `preadv2 ${m[1]} @${m[2]} ${m[3] === "RWF_DONTCACHE" ? "0x80" : m[3]}`;
    }
    return CACHESTAT.test(l) ? "cachestat" : name;
  });
}

const missing = commandMissing("strace");
/** Chunk bytes of a frame: position (float32 x 3) and orientation (x 4). */
const CHUNKS = [12 * N, 16 * N];

Deno.test({
  name:
    "f77 warm open of records over 1 MiB apart: a read a record boundary, the first a RWF_NOWAIT probe; no cachestat, no mapping",
  ignore: missing !== null && !REQUIRE_PEERS,
  fn: async () => {
    const calls = summary(await openCalls(f77));
    // fstat's size (lseek), the detection's head (a probe: cached), the first record's trailing
    // marker as 4-byte little reads it (16 bytes, the 8-byte little one too: 1.5 MiB ahead, so a
    // read that drops what it brings in, RWF_DONTCACHE = 0x80), 4-byte big's (byte 6148, near the
    // head: a plain pread, its window known cached), then each record boundary's two markers
    const end1 = 8 + CHUNKS[0]!, end2 = end1 + 8 + CHUNKS[1]!, end3 = end2 + 8 + CHUNKS[0]!;
    assert.deepEqual(calls.filter((c) => c !== "lseek" && c !== "fstat" && c !== "close"), [
      "preadv2 64 @0 RWF_NOWAIT",
      `preadv2 16 @${CHUNKS[0]! + 4} 0x80`,
      "pread64 16 @6148",
      `preadv2 8 @${end2 - 4} 0x80`,
      `preadv2 8 @${end3 - 4} 0x80`,
      `preadv2 4 @${end3 + 8 + CHUNKS[1]! - 4} 0x80`,
    ], calls.join("\n"));
  },
});

Deno.test({
  name:
    "ieeeio warm open of datasets over 1 MiB apart: the header (a RWF_NOWAIT probe), then a read a dataset; no cachestat, no mapping",
  ignore: missing !== null && !REQUIRE_PEERS,
  fn: async () => {
    const calls = summary(await openCalls(ieeeio));
    const reads = calls.filter((c) => c !== "lseek" && c !== "fstat" && c !== "close");
    // the header with the first records' peek, then per dataset a peek at the records after its
    // data (its attributes, the next dataset's header), each over 1 MiB ahead of the last: a read
    // that drops what it brings in (RWF_DONTCACHE)
    assert.equal(reads.length, 1 + 2 * FRAMES, calls.join("\n"));
    assert.equal(reads[0], "preadv2 272 @0 RWF_NOWAIT");
    for (const r of reads.slice(1)) assert.match(r, /^preadv2 \d+ @\d+ 0x80$/);
  },
});

for (const framing of [f77, ieeeio]) {
  Deno.test({
    name:
      `${framing.name} warm open of records 192 and 256 KiB apart: once the boundaries' reads repeat, the next ones read ahead in one io_submit`,
    ignore: missing !== null && !REQUIRE_PEERS,
    fn: async () => {
      const frames = 24;
      const calls = await openCalls(framing, 128 * 128, frames);
      const preads = calls.filter((c) => c.startsWith("pread64(") || c.startsWith("preadv2("));
      const submits = calls.filter((c) => c.startsWith("io_submit("));
      // two records a frame: a read a record boundary (a dataset's peek), of which the first
      // few are preads (the detection's, and the pattern's first rounds: a period of 2 reads
      // seen twice), the rest in io_submit calls of up to 64 reads
      const batched = submits.reduce((n, c) => n + Number(/\) = (\d+)$/.exec(c)![1]), 0);
      assert.ok(submits.length >= 1 && submits.length <= 2, calls.join("\n"));
      assert.ok(preads.length <= 10, `${preads.length} preads:\n${calls.join("\n")}`);
      assert.ok(preads.length + batched >= 2 * frames, `${preads.length} + ${batched} reads`);
    },
  });
}
