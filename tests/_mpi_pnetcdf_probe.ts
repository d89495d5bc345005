/**
 * Run by tests/mpi_pnetcdf_test.ts under a launcher: the `records` workload writes the same
 * records through the native `netcdf` framing, through `pnetcdf` and, for files of a rank's own,
 * through the serial `netcdf-lib` peer, for each configuration
 * `LAYOUT:COLLECTIVE:VARIANT:TYPE:SHAPE` (shared or per-rank, on or off, 1, 2 or 5, an element
 * type, records x record shape joined by x), and keeps a copy of every file written: `TAG.BACKEND`
 * of a shared file (rank 0), `TAG.BACKEND.rRANK` of a rank's own, TAG being the configuration's
 * index. A configuration `frames:LAYOUT:COLLECTIVE:VARIANT` writes frames of two chunks of
 * different types (one named `particles/position`, kept in a `chunk_name` attribute) through
 * `pnetcdf` first, every rank its own frames, and then through `netcdf` the same frame objects
 * (rank 0 all frames of a shared file, in one process): `TAG.pnetcdf`, `TAG.netcdf` (per-rank:
 * with `.rRANK`). A configuration `par:LAYOUT:COLLECTIVE:ENDIAN` writes such frames through
 * `netcdf4-par` (`TAG.netcdf4-par`, per-rank with `.rRANK`), then reads each file with the
 * serial `netcdf4` peer in the same process and writes beside it (`.serial`) how many of its
 * frames are the frames written, byte for byte. Usage: _mpi_pnetcdf_probe.ts DIR CONFIG[,...]
 * @module
 */
import { backendByName } from "../lib/backends/registry.ts";
import { installedMpiIo } from "../lib/backends/mpi_io.ts";
import { initWorld } from "../lib/mpi/world.ts";
import { sharedPart } from "../lib/mpi/shared.ts";
import { ownFrames } from "../lib/workloads/cells.ts";
import { recordsTargets, runRecords } from "../lib/workloads/records/mod.ts";
import type { RecordsType } from "../lib/workloads/records/options.ts";
import type { Frame } from "../lib/framings/types.ts";
import { keepCopies } from "./_mpi.ts";

/** Frame `g` of a file: 50 float32 positions x 3 and 50 int16 ids, from `g` alone. */
function frameOf(g: number): Frame {
  const position = Float32Array.from({ length: 150 }, (_, i) => g * 1000 + i * 0.25);
  const ids = Int16Array.from({ length: 50 }, (_, i) => g * 50 + i);
  return {
    step: 10 * g,
    chunks: [
      { name: "particles/position", dtype: "float32", shape: [50, 3], data: position },
      { name: "ids", dtype: "int16", shape: [50], data: ids },
    ],
  };
}

/** Writes frames `first` .. `first + count - 1` through `backend` into `path`. */
function writeFrames(
  backend: string,
  path: string,
  first: number,
  count: number,
  options: Parameters<ReturnType<typeof backendByName>["openWriter"]>[1],
): void {
  const sink = backendByName(backend).openWriter(path, options);
  for (let g = first; g < first + count; g++) sink.writeFrame(frameOf(g));
  sink.close();
}

const [dir, configs] = Deno.args;
const w = initWorld();
const io = installedMpiIo()!;
/**
 * Reads `path` with the serial `netcdf4` peer (libnetcdf, in this process beside the parallel
 * one) and returns how many of its frames are frames `0 ..` byte for byte.
 */
function serialMatches(path: string): number {
  const source = backendByName("netcdf4").openReader(path);
  let same = 0;
  try {
    for (let g = 0; g < source.frameCount; g++) {
      const got = source.readFrame(g);
      const want = frameOf(g).chunks;
      const equal = got.length === want.length && got.every((c, i) => {
        const w = want[i]!;
        const bytes = new Uint8Array(w.data.buffer, w.data.byteOffset, w.data.byteLength);
        return c.name === w.name && c.data.length === bytes.length &&
          c.data.every((b, k) => b === bytes[k]);
      });
      if (equal) same++;
    }
  } finally {
    source.close();
  }
  return same;
}

for (const [tag, config] of configs!.split(",").entries()) {
  if (config.startsWith("par:")) {
    // netcdf4-par: frames of two chunks, then the serial netcdf4 peer reads them back
    const [, layout, collective, endian] = config.split(":") as [
      string,
      "shared" | "per-rank",
      string,
      "native" | "big" | "little",
    ];
    const shared = layout === "shared";
    const count = 3;
    const part = shared ? sharedPart(count) : ownFrames(count);
    const own = shared ? `${dir}/${tag}.netcdf4-par` : `${dir}/${tag}.netcdf4-par.r${w.rank}`;
    writeFrames("netcdf4-par", own, part.first, count, {
      create: "truncate",
      endian,
      mpiIo: { io, collective: collective === "on", hints: [], layout, part },
    });
    w.barrier();
    if (!shared || w.rank === 0) {
      Deno.writeTextFileSync(`${own}.serial`, String(serialMatches(own)));
    }
    continue;
  }
  if (config.startsWith("frames:")) {
    const [, layout, collective, variant] = config.split(":") as [
      string,
      "shared" | "per-rank",
      string,
      string,
    ];
    const shared = layout === "shared";
    const count = 3;
    const part = sharedPart(count);
    const own = shared ? `${dir}/${tag}` : `${dir}/${tag}.r${w.rank}`;
    const backendOptions = { variant: Number(variant) };
    const mpiIo = {
      io,
      collective: collective === "on",
      hints: [],
      layout,
      ...(shared ? { part } : {}),
    };
    writeFrames("pnetcdf", `${own}.pnetcdf`, shared ? part.first : 0, count, {
      create: "truncate",
      endian: "big",
      backendOptions,
      mpiIo,
    });
    if (!shared || w.rank === 0) {
      const frames = shared ? part.total : count;
      writeFrames("netcdf", `${own}.netcdf`, 0, frames, {
        create: "truncate",
        endian: "big",
        backendOptions,
      });
    }
    continue;
  }
  const [layout, collective, variant, dtype, shapeText] = config.split(":") as [
    "shared" | "per-rank",
    "on" | "off",
    string,
    RecordsType,
    string,
  ];
  const names = layout === "shared" ? ["netcdf", "pnetcdf"] : ["netcdf", "netcdf-lib", "pnetcdf"];
  const options = { variant: Number(variant) };
  await runRecords({
    targets: recordsTargets(names.map(backendByName), ["big"]),
    shape: shapeText.split("x").map(Number),
    dtype,
    repeat: 1,
    seed: 7,
    dir,
    layout,
    backendOptions: new Map(names.map((n) => [n, options])),
    mpiIo: { io, collective: collective === "on", hints: [] },
    afterWrite: keepCopies(dir!, tag, layout, w.rank),
  });
}
w.finalize();
