/**
 * `loader --access direct`: the samples of a file written by the hdf5 peer and of one written by
 * the netcdf4 peer read as their chunks' bytes, at the addresses the HDF5 library reports, with
 * sciobench's own reads: every sample verified, each epoch reading every frame's chunks once; the
 * library and the direct rows in one table; at --iodepth 8 (io_uring, and libaio with --direct)
 * 8 requests in flight; with --readers 2, every chunk read once across the reader processes; a
 * damaged chunk byte found; a compressed dataset (h5repack -f GZIP=1) refused in one line; under strace, preads at the chunks only after the
 * library's reads at the open, and at --iodepth 8 through io_uring, 8 requests in flight; a
 * user's file (--file) looked up first in the library child, so a file that crashes the library
 * is one line and exit 2 (and a fault injected in the child stops the loader).
 * @module
 */
import assert from "node:assert/strict";
import type { FlagValues } from "../lib/cli/flags.ts";
import { hdf5, hdf5FrameChunks } from "../lib/peers/hdf5/mod.ts";
import { netcdf4 } from "../lib/peers/netcdf4/mod.ts";
import { Progress } from "../lib/report/progress.ts";
import type { Row } from "../lib/report/row.ts";
import { auditOf } from "../lib/sys/audit.ts";
import { loaderWorkload } from "../lib/workloads/loader/workload.ts";
import { commandMissing, flipByte, peerTest, runCli, tempDir } from "./_helpers.ts";
import { loaderRows, writeTableFile } from "./_loader.ts";
import {
  DIRECT_REFUSED,
  parseStrace,
  straceMissing,
  straceSciobench,
  TRACED_CALLS,
} from "./_syscalls.ts";

/** Each frame's chunks as `offset:bytes`, as the HDF5 library reports them. */
function chunkReads(path: string): string[][] {
  const index = hdf5FrameChunks(path);
  return Array.from(
    { length: index.frameCount },
    (_, i) => index.chunks(i).map((c) => `${c.offset}:${c.bytes}`),
  );
}

/** The reads (`offset:bytes`) of `path` in a row's epoch phase, from its audit trail. */
function epochReads(row: Row, path: string): string[] {
  const phase = auditOf(row)!.phases.find((p) => p.name === "epoch")!;
  const file = phase.files.find((f) => f.path === path);
  assert.ok(file !== undefined, "sciobench's own reads of the file in the epoch");
  assert.ok(file.reads <= 128, "the read log keeps 128 reads");
  const log = file.readLog;
  return Array.from({ length: log.length / 2 }, (_, k) => `${log[2 * k]}:${log[2 * k + 1]}`);
}

/** Why the hdf5 or the netcdf4 peer cannot run here (both are needed), or null. */
const peersMissing = () => hdf5.unavailable() ?? netcdf4.unavailable();

for (const framing of ["hdf5", "netcdf4"]) {
  peerTest(
    `loader --access direct: a file of the ${framing} peer, every chunk read once per epoch, verified`,
    peersMissing,
    async () => {
      using dir = tempDir();
      const path = `${dir.path}/data.${framing}`;
      await writeTableFile(framing, path, 20);
      const chunks = chunkReads(path);
      assert.equal(chunks.length, 20);
      // two datasets (variables) per frame, each frame's chunks apart from each other
      assert.ok(chunks.every((c) => c.length === 2), JSON.stringify(chunks[0]));
      const rows = await loaderRows({ file: path, verify: true, access: "direct" });
      assert.equal(rows.length, 2);
      for (const [k, row] of rows.entries()) {
        assert.equal(row.framing, framing);
        assert.equal(row.access, "direct");
        assert.equal(row.verified, true);
        assert.equal(row.samples, 20);
        // each epoch reads each chunk exactly once, and nothing else: the chunks alone
        assert.deepEqual(epochReads(row, path).sort(), chunks.flat().sort(), `epoch ${k + 1}`);
      }
      // at depth 8 through io_uring, and libaio with O_DIRECT, every sample verified
      const engines = [{ engine: "io_uring", direct: false }, { engine: "libaio", direct: true }];
      for (const how of DIRECT_REFUSED === null ? engines : engines.slice(0, 1)) {
        const queued = await loaderRows({
          file: path,
          verify: true,
          access: "direct",
          iodepth: "8",
          ...how,
        });
        for (const row of queued) {
          assert.equal(row.engine, how.engine);
          assert.equal(row.direct, how.direct);
          assert.equal(row.cache, how.direct ? "direct" : row.epoch === 1 ? "cold" : "as left");
          assert.equal(row.samples, 20);
          const phase = auditOf(row)!.phases.find((p) => p.name === "epoch")!;
          const q = phase.files.find((f) => f.path === path)!.queued!;
          // buffered: one request per chunk; O_DIRECT: a chunk's aligned blocks, one or two
          assert.ok(q.requests >= 40, `${q.requests} requests for 40 chunks`);
          if (!how.direct) assert.equal(q.requests, 40);
          assert.equal(q.maxInFlight, 8, `${how.engine}: 8 in flight`);
        }
      }
      // a damaged byte of frame 7's second chunk is found, at depth 1 and at depth 8
      flipByte(path, Number(chunks[7]![1]!.split(":")[0]) + 40);
      for (const depth of ["1", "8"]) {
        await assert.rejects(
          loaderRows({ file: path, verify: true, access: "direct", iodepth: depth }),
          /frame 7: chunk .* differs from what was written/,
        );
      }
    },
  );
}

peerTest(
  "loader --access library,direct: both paths in one table, rows per epoch saying which ran",
  peersMissing,
  async () => {
    using dir = tempDir();
    const rows = await loaderRows({
      dir: dir.path,
      framing: "hdf5",
      size: "96KiB",
      n: "64",
      access: "library,direct",
      iodepth: "4",
    });
    assert.deepEqual(
      rows.map((r) => `${r.access} ${r.epoch} ${r.cache} ${r.engine} ${r.iodepth}`),
      [
        "library 1 cold psync 1",
        "library 2 as left psync 1",
        "direct 1 cold io_uring 4",
        "direct 2 as left io_uring 4",
      ],
    );
    for (const r of rows) {
      assert.equal(r.verified, true);
      assert.equal(r.samples, rows[0]!.samples);
      assert.equal(r.bytes, rows[0]!.bytes);
    }
    if (DIRECT_REFUSED !== null) return;
    // with --direct: the library's rows through the page cache, the direct rows with O_DIRECT
    const direct = await loaderRows({
      dir: dir.path,
      framing: "hdf5",
      size: "96KiB",
      n: "64",
      access: "library,direct",
      direct: true,
    });
    assert.deepEqual(direct.map((r) => `${r.access} ${r.epoch} ${r.cache} ${r.direct}`), [
      "library 1 cold false",
      "library 2 as left false",
      "direct 1 direct true",
      "direct 2 direct true",
    ]);
  },
);

/** The reads (`offset:bytes`) of `path` by each reader process in a row's epoch, by process. */
function readerChunkReads(row: Row, path: string): Map<number, string[]> {
  const phase = auditOf(row)!.phases.find((p) => p.name === "epoch")!;
  const out = new Map<number, string[]>();
  for (const p of phase.processes) {
    const log = p.phase.files.find((f) => f.path === path)?.readLog ?? [];
    out.set(
      p.pid,
      Array.from({ length: log.length / 2 }, (_, k) => `${log[2 * k]}:${log[2 * k + 1]}`),
    );
  }
  return out;
}

peerTest(
  "loader --framing hdf5 --access direct --readers 2: each epoch reads every chunk once across the readers, verified",
  () => hdf5.unavailable(),
  async () => {
    using dir = tempDir();
    // 24 frames of 64 particles (28 bytes each): 3 batches of 8, 2 by one reader and 1 by the other
    const values = {
      seed: "1",
      "samples-per-batch": "8",
      sample: "shuffle",
      verify: false,
      dir: dir.path,
      framing: "hdf5",
      size: "42KiB",
      n: "64",
      access: "direct",
      readers: "2",
    } as unknown as FlagValues<"loader">;
    const planned = await loaderWorkload.plan(values, [], { format: "csv" }, []);
    const rows: Row[] = [];
    let chunks: string[][] = [];
    // the loader's file is removed at the end: its chunks asked of the library while it is there
    await planned.run((row) => {
      if (rows.length === 0) chunks = chunkReads(String(row.path));
      rows.push(row);
    }, new Progress({ quiet: true }));
    assert.equal(chunks.length, 24);
    assert.equal(rows.length, 2);
    for (const [k, row] of rows.entries()) {
      const path = String(row.path);
      assert.equal(row.access, "direct");
      assert.equal(row.readers, 2);
      assert.equal(row.verified, true);
      assert.equal(row.samples, 24);
      assert.equal(row.batches, 3);
      const own = auditOf(row)!.phases.find((p) => p.name === "epoch")!.files;
      assert.equal(own.find((f) => f.path === path)?.reads ?? 0, 0, "the consumer reads nothing");
      const byReader = readerChunkReads(row, path);
      assert.equal(byReader.size, 2, "two reader processes");
      assert.ok(!byReader.has(Deno.pid));
      // two variables per frame: 16 and 8 samples' chunks, each chunk once across the readers
      const counts = [...byReader.values()].map((r) => r.length).sort((a, b) => a - b);
      assert.deepEqual(counts, [16, 32], `epoch ${k + 1}: chunk reads by reader`);
      const reads = [...byReader.values()].flat().sort();
      assert.deepEqual(reads, chunks.flat().sort(), `epoch ${k + 1}: every chunk once`);
    }
  },
);

peerTest(
  "loader --access direct: a compressed dataset or a native framing is refused in one line",
  () => hdf5.unavailable() ?? commandMissing("h5repack"),
  async () => {
    using dir = tempDir();
    const path = `${dir.path}/data.h5`;
    await writeTableFile("hdf5", path, 8);
    const gz = `${dir.path}/gz.h5`;
    const repack = await new Deno.Command("h5repack", { args: ["-f", "GZIP=1", path, gz] })
      .output();
    assert.equal(repack.code, 0, new TextDecoder().decode(repack.stderr));
    const r = await runCli(["loader", "--file", gz, "--access", "direct", "--verify"]);
    assert.equal(r.code, 2, r.stderr);
    const lines = r.stderr.trim().split("\n");
    assert.equal(lines.length, 1, r.stderr);
    assert.match(lines[0]!, /--access direct: .*gz\.h5: dataset '.*' is filtered \(deflate\)/);
    // the library reads it still
    assert.equal((await runCli(["read", "--verify", gz])).code, 0);
    const raw = `${dir.path}/data.raw`;
    await writeTableFile("raw", raw, 8);
    const native = await runCli(["loader", "--file", raw, "--access", "direct"]);
    assert.equal(native.code, 2);
    // a library without chunk addresses (netCDF classic through libnetcdf)
    const classic = await runCli(
      ["loader", "--framing", "netcdf-lib", "--size", "64KiB", "--access", "direct"],
    );
    assert.equal(classic.code, 2);
    assert.match(classic.stderr.trim(), /^sciobench: error: --access direct: netcdf-lib's files/);
    assert.match(
      native.stderr.trim(),
      /^sciobench: error: --access: raw is read by sciobench's own/,
    );
  },
);

const STRACE_MISSING = straceMissing();

peerTest(
  "loader --access direct (strace): preads of the chunks alone after the library's, 8 in flight",
  () => hdf5.unavailable() ?? STRACE_MISSING,
  async () => {
    using dir = tempDir("sciobench-chunks-");
    using trace = tempDir("sciobench-strace-");
    const path = `${dir.path}/data.h5`;
    await writeTableFile("hdf5", path, 20);
    const frames = chunkReads(path);
    const chunks = new Set(frames.flat());
    const common = ["loader", "--file", path, "--access", "direct", "--verify"];
    const out = await straceSciobench(
      [common, [...common, "--iodepth", "8", "--engine", "io_uring"]],
      trace.path,
      {},
      ["-e", `${TRACED_CALLS},io_uring_enter`],
    );
    for (const o of out) assert.equal(o.code, 0, o.stderr);
    // depth 1: the library's reads at the opens (its metadata; --verify's probe of frame 0 opens
    // the file once more first), then the chunks' and nothing else
    const reads = parseStrace(trace.path, dir.path, 0).filter((c) => c.call === "pread64")
      .map((c) => `${c.offset}:${c.count}`);
    const last = reads.findLastIndex((r) => !chunks.has(r));
    assert.ok(last > 0, "the library reads the file's metadata at the open");
    const timed = reads.slice(last + 1);
    assert.equal(timed.length, 2 * chunks.size, "two epochs of every chunk");
    assert.ok(timed.every((r) => chunks.has(r)), "only chunks read after the open");
    // io_uring at depth 8: no chunk pread but --verify's probe of frame 0 before the epochs;
    // 8 submitted at once
    const preads = parseStrace(trace.path, dir.path, 1).filter((c) => c.call === "pread64")
      .map((c) => `${c.offset}:${c.count}`).filter((r) => chunks.has(r));
    assert.deepEqual(preads, frames[0], "the probe's preads only");
    let largest = 0;
    for (const entry of Deno.readDirSync(trace.path)) {
      if (!entry.name.startsWith("tr1.")) continue;
      for (const line of Deno.readTextFileSync(`${trace.path}/${entry.name}`).split("\n")) {
        const m = /io_uring_enter\(\d+<[^>]*>, (\d+), /.exec(line);
        if (m) largest = Math.max(largest, Number(m[1]));
      }
    }
    assert.equal(largest, 8, `largest io_uring_enter submission: ${largest}`);
  },
);

/** The one line on `stderr` (`sciobench: error: ...`): no second line, no stack trace. */
function oneErrorLine(stderr: string): string {
  const lines = stderr.trimEnd().split("\n");
  assert.equal(lines.length, 1, `expected one error line, got:\n${stderr}`);
  assert.match(lines[0]!, /^sciobench: error: /);
  return lines[0]!;
}

/** A file that crashes the HDF5 library's open (from the fuzzer; tests/testdata/fuzz). */
const CRASHING_H5 = new URL("./testdata/fuzz/hdf5-crash-0da0825b.h5", import.meta.url).pathname;

peerTest(
  "loader --file --access direct: a file that crashes the HDF5 library is one line, exit 2",
  () => hdf5.unavailable(),
  async () => {
    using dir = tempDir("sciobench-chunks-");
    const path = `${dir.path}/damaged.h5`;
    Deno.copyFileSync(CRASHING_H5, path);
    for (const readers of ["1", "2"]) {
      const r = await runCli([
        "loader",
        "--file",
        path,
        "--access",
        "direct",
        "--readers",
        readers,
      ]);
      assert.equal(r.code, 2, `--readers ${readers}: exit ${r.code}\n${r.stderr}`);
      assert.match(
        oneErrorLine(r.stderr),
        /the HDF5 library crashed \(SIGSEGV.*\) reading '.*damaged\.h5'; the file is probably damaged$/,
      );
      assert.equal(r.stdout, "", "no row");
    }
  },
);

peerTest(
  "loader --file --access direct: the chunk lookup runs first in the library child, with its limits",
  () => hdf5.unavailable(),
  async () => {
    using dir = tempDir("sciobench-chunks-");
    const path = `${dir.path}/data.h5`;
    await writeTableFile("hdf5", path, 4);
    const args = ["loader", "--file", path, "--access", "direct", "--readers", "2"];
    // a fault strikes only in the library child: the loader stops on it before any read
    const segv = await runCli(args, { env: { SCIOBENCH_CHILD_FAULT: "segv" } });
    assert.equal(segv.code, 2, segv.stderr);
    assert.match(
      oneErrorLine(segv.stderr),
      /the HDF5 library crashed \(SIGSEGV\) reading '.*data\.h5'; the file is probably damaged$/,
    );
    assert.equal(segv.stdout, "", "no row");
    const spin = await runCli(args, {
      env: { SCIOBENCH_CHILD_FAULT: "spin", SCIOBENCH_LIBRARY_SECONDS: "1" },
    });
    assert.equal(spin.code, 2, spin.stderr);
    assert.match(oneErrorLine(spin.stderr), /used more than 1 s of CPU time without progress/);
    // the library's own file is not a user's: no child, the fault never strikes
    const written = await runCli(
      ["loader", "--framing", "hdf5", "--size", "64KiB", "--n", "64", "--access", "direct"],
      { env: { SCIOBENCH_CHILD_FAULT: "segv" } },
    );
    assert.equal(written.code, 0, written.stderr);
  },
);
