/**
 * Run by tests/mpi_mpiio_test.ts and tests/mpi_hdf5_mpio_test.ts under a launcher: the `records`
 * workload writes the same records through `raw` and through BACKEND (`mpiio`, `hdf5-mpio`) for
 * each configuration `LAYOUT:COLLECTIVE:ENDIAN:SHAPE[:DATASETS]` (shared or per-rank, on or off,
 * native, little or big, records x record shape joined by x, and for hdf5-mpio chunked or
 * contiguous), each rank its own records, and keeps a copy of every file written: `TAG.NAME` of a
 * shared file (rank 0), `TAG.NAME.rRANK` of a rank's own, TAG being the configuration's index.
 * Usage: _mpi_raw_probe.ts BACKEND DIR CONFIG[,CONFIG...]
 * @module
 */
import { backendByName } from "../lib/backends/registry.ts";
import { installedMpiIo } from "../lib/backends/mpi_io.ts";
import type { EndianOption } from "../lib/framings/types.ts";
import { initWorld } from "../lib/mpi/world.ts";
import { recordsTargets, runRecords } from "../lib/workloads/records/mod.ts";
import { keepCopies } from "./_mpi.ts";

const [backend, dir, configs] = Deno.args as [string, string, string];
const w = initWorld();
const io = installedMpiIo()!;
const backends = [backendByName("raw"), backendByName(backend)];
for (const [tag, config] of configs.split(",").entries()) {
  const [layout, collective, endian, shapeText, datasets] = config.split(":") as [
    "shared" | "per-rank",
    "on" | "off",
    EndianOption,
    string,
    string | undefined,
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
    ...(datasets === undefined ? {} : {
      backendOptions: new Map([[backend, { layout: datasets }]]),
    }),
    afterWrite: keepCopies(dir, tag, layout, w.rank),
  });
}
w.finalize();
