/**
 * A probe run by tests/mpi_test.ts under mpirun/mpiexec: initialises the world and exercises
 * every collective; rank 0 prints one JSON line with what it saw.
 * @module
 */
import { initWorld } from "../lib/mpi/world.ts";

const w = initWorld();
w.barrier();
const sum = w.allreduce([w.rank, 1], "sum");
const max = w.allreduce([w.rank], "max");
const min = w.allreduce([w.rank + 10], "min");
const plan = w.bcastString(w.rank === 0 ? "plan-from-rank-0 é" : "ignored");
const gathered = w.gatherStrings(`r${w.rank}`.repeat(w.rank));
const t0 = w.mpi?.wtime() ?? 0;
w.barrier();
const wtime = (w.mpi?.wtime() ?? 1) - t0;
if (w.rank === 0) {
  console.log(
    JSON.stringify({
      rank: w.rank,
      size: w.size,
      sum,
      max,
      min,
      plan,
      gathered,
      wtime,
      facts: w.facts(),
    }),
  );
} else if (plan !== "plan-from-rank-0 é") {
  console.log(`rank ${w.rank} got plan ${plan}`);
}
w.finalize();
