/**
 * Run by tests/mpi_iodepth_test.ts under a launcher: the `records` workload of raw at depth 8
 * through ENGINE (`--direct --bs 4k` when DIRECT is 1), each rank its own file, rank CORRUPT
 * flipping a byte of record 41 of its file after the write. Every rank prints one line of JSON:
 * its rank, and the failure it stopped with (`report`: whether it is the rank that says it) or
 * the read phase's error. Usage: _mpi_depth_probe.ts DIR ENGINE DIRECT CORRUPT
 * @module
 */
import { backendByName } from "../lib/backends/registry.ts";
import type { EngineName } from "../lib/sys/queue.ts";
import { initWorld } from "../lib/mpi/world.ts";
import { RankFailure } from "../lib/mpi/phase.ts";
import { recordsTargets, runRecords } from "../lib/workloads/records/mod.ts";
import { flipByte } from "./_helpers.ts";

/** 64 records of 30 x 20 float32 (2400 bytes each) after the raw framing's 16-byte header. */
const SHAPE = [64, 30, 20];
const RECORD_BYTES = 30 * 20 * 4;

const [dir, engine, direct, corrupt] = Deno.args;
const w = initWorld();
let out: Record<string, unknown> = { rank: w.rank };
try {
  const runs = await runRecords({
    targets: recordsTargets([backendByName("raw")], ["native"]),
    shape: SHAPE,
    dtype: "float32",
    repeat: 1,
    seed: 3,
    dir,
    transfer: direct === "1" ? { bs: 4096, direct: true, readAhead: true } : undefined,
    queue: { engine: engine as EngineName, depth: 8 },
    afterWrite(path) {
      if (w.rank === Number(corrupt)) flipByte(path, 16 + 41 * RECORD_BYTES + 100);
    },
  });
  out = { ...out, error: runs.find((r) => r.phase === "read")?.error ?? null };
} catch (e) {
  out = e instanceof RankFailure
    ? { ...out, failed: e.rank, report: e.report, message: e.message }
    : { ...out, thrown: String(e) };
}
console.log(JSON.stringify(out));
w.finalize();
