/**
 * Run by tests/mpi_segments_test.ts under a launcher: one table cell of `BACKEND` (raw or mpiio)
 * with `--layout shared` and `SEGMENTS` (`-`: the option left out), rank 0 keeping a copy of the
 * shared file as `DIR/TAG`; every rank prints its row's `error`, `segments` and `frames` as one
 * JSON line. With BACKEND `records:NAME` the records workload instead, N records of SIZE float32
 * a rank, each run's phase and error printed. Usage: _mpi_segments_probe.ts DIR BACKEND SEGMENTS
 * TAG SIZE N
 * @module
 */
import { backendByName } from "../lib/backends/registry.ts";
import { installedMpiIo } from "../lib/backends/mpi_io.ts";
import { initWorld } from "../lib/mpi/world.ts";
import { Progress } from "../lib/report/progress.ts";
import { runTableCell } from "../lib/workloads/table/mod.ts";
import { recordsTargets, runRecords } from "../lib/workloads/records/mod.ts";

const [dir, name, segments, tag, size, n] = Deno.args as [
  string,
  string,
  string,
  string,
  string,
  string,
];
const w = initWorld();
const io = installedMpiIo()!;
if (name.startsWith("records:")) {
  // records:BACKEND, SIZE x N the shape: N records of SIZE float32 each, a rank
  const backend = backendByName(name.slice("records:".length));
  const runs = await runRecords({
    targets: recordsTargets([backend], ["native"]),
    shape: [Number(n), Number(size)],
    dtype: "float32",
    repeat: 1,
    seed: 5,
    dir,
    reorder: 1,
    layout: "shared",
    ...(segments === "-" ? {} : { segments: Number(segments) }),
    ...(backend.mpiIo === undefined ? {} : { mpiIo: { io, collective: true, hints: [] } }),
    afterWrite(path) {
      if (w.rank === 0) Deno.copyFileSync(path, `${dir}/${tag}`);
    },
  });
  for (const run of runs) {
    console.log(JSON.stringify({ rank: w.rank, phase: run.phase, error: run.error ?? "" }));
  }
  w.finalize();
  Deno.exit(0);
}
const backend = backendByName(name);
const row = await runTableCell(backend, Number(size), Number(n), 1, {
  backends: [backend],
  sizes: [],
  ns: [],
  dir,
  repeat: 1,
  seed: 5,
  warmup: true,
  reorder: 1,
  layout: "shared",
  ...(segments === "-" ? {} : { segments: Number(segments) }),
  ...(backend.mpiIo === undefined ? {} : { mpiIo: { io, collective: true, hints: [] } }),
  progress: new Progress({ quiet: true }),
  afterWrite(path) {
    if (w.rank === 0) Deno.copyFileSync(path, `${dir}/${tag}`);
  },
});
console.log(JSON.stringify({
  rank: w.rank,
  error: row.error,
  segments: row.segments,
  frames: row.frames,
}));
w.finalize();
