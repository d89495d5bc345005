/**
 * The cost of MPI fencing per phase, run under a launcher with 4 ranks (Open MPI's mpirun and
 * MPICH's mpiexec): the median time of an empty fenced phase (a barrier, then an Allreduce of the
 * failure flag), of the gather of one result row to rank 0, of a phase in which the ranks work
 * unequally (rank r spins (r + 1) ms of CPU, so early ranks wait in the fence while others still
 * work: busy-polling waiters then take cores from the working ones), and, for scale, of a table
 * write phase of SIZE bytes (fsync included) on each rank. Rank 0 prints one JSON line.
 * `SCIOBENCH_MPI_WAIT=block` measures the library's blocking collectives instead of the polled
 * nonblocking ones (lib/mpi/library.ts).
 * Usage: mpirun -np 4 deno run -A tools/probes/mpi_fence.ts [SIZE_MiB] [DIR]
 * @module
 */
import { rankRows } from "../../lib/mpi/aggregate.ts";
import { fencedPhase, rankScratchShare } from "../../lib/mpi/phase.ts";
import { initWorld } from "../../lib/mpi/world.ts";
import { withScratchDir } from "../../lib/io/scratch.ts";
import { writeFrames } from "../../lib/backends/write.ts";
import { backendByName } from "../../lib/backends/registry.ts";
import { TABLE_AGGREGATE, TABLE_COLUMNS, TableFrames } from "../../lib/workloads/table/mod.ts";
import { countOption, median, probeArgs } from "./common.ts";

const w = initWorld();
const PROBE = "mpi_fence";
const { positionals } = probeArgs(PROBE, {});
const sizeMiB = countOption(PROBE, positionals[0] ?? "16", "SIZE_MiB");
const dir = positionals[1];
const REPS = 200;

const fence: number[] = [];
for (let i = 0; i < REPS; i++) {
  const t0 = performance.now();
  await fencedPhase("bench", () => {});
  fence.push(performance.now() - t0);
}
// unequal work: rank r spins (r + 1) ms, then the fence
const skewed: number[] = [];
for (let i = 0; i < REPS / 4; i++) {
  const t0 = performance.now();
  await fencedPhase("bench", () => {
    const until = performance.now() + (w.rank + 1);
    while (performance.now() < until) { /* CPU work */ }
  });
  skewed.push(performance.now() - t0);
}
// a full table row, as each cell gathers
const sample = Object.fromEntries(
  TABLE_COLUMNS.map((c, k) => [c, c === "framing" ? "raw" : k + 1]),
);
const gather: number[] = [];
for (let i = 0; i < REPS; i++) {
  const t0 = performance.now();
  rankRows(sample, TABLE_AGGREGATE, false);
  gather.push(performance.now() - t0);
}
const n = 128 * 128;
const frames = new TableFrames(n, 1, w.rank);
const count = Math.ceil((sizeMiB * 2 ** 20) / (28 * n));
const writes: number[] = [];
await withScratchDir(dir, async (d) => {
  for (let i = 0; i < 3; i++) {
    const t = await fencedPhase("write", async () => {
      const t0 = performance.now();
      await writeFrames(
        backendByName("raw"),
        `${d}/w.r${w.rank}`,
        { create: "truncate", fsync: "end" },
        count,
        (k) => frames.frame(k),
      );
      return performance.now() - t0;
    });
    writes.push(Math.max(...w.allreduce([t], "max")));
  }
}, rankScratchShare());
if (w.rank === 0) {
  const f = median(fence), g = median(gather), p = median(writes);
  console.log(JSON.stringify({
    ranks: w.size,
    library: w.facts().mpi_library,
    wait: w.mpi?.wait ?? null,
    cores: navigator.hardwareConcurrency,
    "fence_ms": Number(f.toFixed(4)),
    "gather_row_ms": Number(g.toFixed(4)),
    // the work alone would take the slowest rank's 4 ms, or the sum of 10 ms over the cores
    "unequal_phase_ms": Number(median(skewed).toFixed(3)),
    "unequal_work_ms": Math.max(
      w.size,
      (w.size * (w.size + 1)) / 2 / navigator.hardwareConcurrency,
    ),
    "write_phase_ms": Number(p.toFixed(2)),
    "write_phase_MiB_per_rank": sizeMiB,
    "table_cell_overhead_ms": Number((7 * f + g).toFixed(3)),
    "overhead_vs_one_phase": Number(((7 * f + g) / p).toFixed(5)),
  }));
}
w.finalize();
