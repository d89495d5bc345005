/**
 * Run by tests/mpi_hdf5_mpio_test.ts under a launcher: the `records` workload writes the same
 * records through `raw` and through `hdf5-mpio` (parallel HDF5) for each configuration
 * `LAYOUT:COLLECTIVE:ENDIAN:SHAPE:DATASETS` (shared or per-rank, on or off, native, little or big,
 * records x record shape joined by x, chunked or contiguous), each rank its own records, and keeps
 * a copy of every file written: `TAG.BACKEND` of a shared file (rank 0), `TAG.BACKEND.rRANK` of a
 * rank's own, TAG being the configuration's index.
 * Usage: _mpi_hdf5_mpio_probe.ts DIR CONFIG[,CONFIG...]
 * @module
 */
import { backendByName } from "../lib/backends/registry.ts";
import { installedMpiIo } from "../lib/backends/mpi_io.ts";
import type { EndianOption } from "../lib/framings/types.ts";
import { initWorld } from "../lib/mpi/world.ts";
import { recordsTargets, runRecords } from "../lib/workloads/records/mod.ts";

const [dir, configs] = Deno.args;
const w = initWorld();
const io = installedMpiIo()!;
const backends = [backendByName("raw"), backendByName("hdf5-mpio")];
for (const [tag, config] of configs!.split(",").entries()) {
  const [layout, collective, endian, shapeText, datasets] = config.split(":") as [
    "shared" | "per-rank",
    "on" | "off",
    EndianOption,
    string,
    string,
  ];
  await runRecords({
    targets: recordsTargets(backends, [endian]),
    shape: shapeText.split("x").map(Number),
    dtype: "float32",
    repeat: 1,
    seed: 7,
    dir,
    layout,
    mpiIo: { io, collective: collective === "on", hints: [] },
    backendOptions: new Map([["hdf5-mpio", { layout: datasets }]]),
    afterWrite(path, backend) {
      if (layout === "shared" && w.rank === 0) Deno.copyFileSync(path, `${dir}/${tag}.${backend}`);
      if (layout === "per-rank") Deno.copyFileSync(path, `${dir}/${tag}.${backend}.r${w.rank}`);
    },
  });
}
w.finalize();
