/**
 * Run by tests/mpi_shared_test.ts under a launcher: the `records` workload with `--layout shared`
 * (4 ranks, one file per framing, each rank its own records), rank 0 keeping a copy of each
 * shared file as `shared.NAME` in DIR, then writing the same records alone, in one process, into
 * `serial.NAME` for comparison. Usage: _mpi_records_probe.ts DIR FRAMINGS RECORDS_PER_RANK
 * @module
 */
import { backendByName } from "../lib/backends/registry.ts";
import { writeFrames } from "../lib/backends/write.ts";
import { initWorld } from "../lib/mpi/world.ts";
import { RecordFrames, recordsTargets, runRecords } from "../lib/workloads/records/mod.ts";

const [dir, framings, perRankText] = Deno.args;
const w = initWorld();
const perRank = Number(perRankText);
const shape = [perRank, 10, 100];
const backends = framings!.split(",").map((name) => backendByName(name));
const targets = recordsTargets(backends, ["native"]);
await runRecords({
  targets,
  shape,
  dtype: "float32",
  repeat: 1,
  seed: 7,
  dir,
  layout: "shared",
  afterWrite(path, backend) {
    if (w.rank === 0) Deno.copyFileSync(path, `${dir}/shared.${backend}`);
  },
});
if (w.rank === 0) {
  const owners = Array.from({ length: w.size }, (_, r) => new RecordFrames(shape, "float32", 7, r));
  for (const t of targets) {
    await writeFrames(
      t.backend,
      `${dir}/serial.${t.backend.name}`,
      { create: "new", endian: t.endian },
      perRank * w.size,
      (g) => owners[Math.floor(g / perRank)]!.frame(g),
    );
  }
}
w.finalize();
