/**
 * The netCDF peers, both through the netCDF-C library (libnetcdf 4.9 on Debian 12) via Deno FFI:
 *
 * - `netcdf4`: netCDF-4 files (HDF5 storage). One variable per chunk name along an unlimited
 *   record dimension, chunked one record per HDF5 chunk; `endian` big or native
 *   (`nc_def_var_endian`), as in the 2003 netCDF-4 timing test.
 * - `netcdf-lib`: netCDF classic files written by the library (CDF-1 by default; option
 *   `variant` 2 / 5 or `64bit-offset` / `64bit-data` for CDF-2 / CDF-5), in the same data
 *   layout as the native `netcdf` framing, so the two writers can be compared on the same data.
 *   Classic data is always big-endian.
 *
 * Layout shared by both, the native `netcdf` framing's (`schemaForChunks` of lib/framings/netcdf/schema.ts, used by both): an unlimited
 * record dimension `record` (option `recordDim`), fixed dimensions shared by length and named
 * `n<length>`, one record variable per chunk; `particles/position` becomes variable
 * `particles_position` with attribute `chunk_name` = "particles/position", which readers use as
 * the chunk name. The classic files therefore have the native writer's header. Fill is off by default
 * (`nc_set_fill(NC_NOFILL)`), so the library writes each record once, like the native writer;
 * option `fill=true` restores the library default, which fills each new record first.
 *
 * Every library status other than NC_NOERR becomes a typed error with `nc_strerror`'s text;
 * files are closed on every path, also on error.
 *
 * Files: bindings.ts (the library), writer.ts, reader.ts; this module holds the two backends.
 * @module
 */
import { type DType, WRITING_WORKLOADS } from "../../framings/types.ts";
import type {
  Backend,
  FrameSink,
  FrameSource,
  LibraryInfo,
  SinkOptions,
} from "../../backends/backend.ts";
import { HDF5_SIGNATURE, hdf5FrameChunks, hdf5SuperblockVersion } from "../hdf5/mod.ts";
import { load, nc, NETCDF_SONAMES } from "./bindings.ts";
import { classicVariant, NC_PEER_OPTIONS, NcSink } from "./writer.ts";
import { NcSource } from "./reader.ts";

export { NETCDF_ENV, NETCDF_SONAMES, netcdfVersion } from "./bindings.ts";

// ---- backends ------------------------------------------------------------------------------

/** The library both libnetcdf peers load. */
const NETCDF_LIBRARY: LibraryInfo = { displayName: "netCDF", files: NETCDF_SONAMES };

/**
 * The types netCDF classic (CDF-1, CDF-2) holds, which netcdf-lib writes: CDF-5's unsigned and
 * 64-bit integers are left to the native netcdf framing.
 */
const CLASSIC_DTYPES: readonly DType[] = ["int8", "int16", "int32", "float32", "float64"];

function unavailable(): string | null {
  const s = load();
  return typeof s === "string" ? s : null;
}

/** netCDF-4 (HDF5 storage) through libnetcdf: one chunked record variable per chunk. */
export const netcdf4: Backend = {
  name: "netcdf4",
  description: "netCDF-4/HDF5 through libnetcdf (FFI): one record variable per chunk",
  kind: "peer",
  orders: ["little", "big"],
  options: NC_PEER_OPTIONS,
  magic: [HDF5_SIGNATURE],
  fsyncPolicies: ["end", "none"],
  transfer: false,
  sharedLayout: false,
  library: NETCDF_LIBRARY,
  unavailable,
  /** HDF5 files with superblock version 2 or later, as netCDF-C 4.9 writes them (ffi.md §8). */
  detect(head: Uint8Array): boolean {
    return hdf5SuperblockVersion(head) >= 2;
  },
  openWriter(path: string, options: SinkOptions): FrameSink {
    return new NcSink("netcdf4", nc("netcdf4"), "netcdf4", path, options);
  },
  openReader(path: string): FrameSource {
    return new NcSource("netcdf4", nc("netcdf4"), path);
  },
  // netCDF-4 files are HDF5 files: the HDF5 library reports where their records' chunks lie
  frameChunks: hdf5FrameChunks,
};

/**
 * netCDF classic (CDF-1, or CDF-2 / CDF-5 with option `variant`) written and read through
 * libnetcdf. Never chosen by detection: the native `netcdf` framing reads classic files.
 */
export const netcdfLib: Backend = {
  name: "netcdf-lib",
  description: "netCDF classic (CDF-1/2/5) through libnetcdf (FFI), same layout as netcdf",
  kind: "peer",
  orders: ["big"],
  options: [
    {
      name: "variant",
      type: "integer",
      choices: [1, 2, 5],
      default: 1,
      help: "1 classic, 2 64-bit offset, 5 CDF-5",
      workloads: WRITING_WORKLOADS,
    },
    ...NC_PEER_OPTIONS,
  ],
  magic: [],
  fsyncPolicies: ["end", "none"],
  transfer: false,
  sharedLayout: false,
  dtypes: {
    only: CLASSIC_DTYPES,
    refusal: (dtype) =>
      `netcdf-lib (netCDF classic through libnetcdf) cannot store ${dtype}: it holds ${
        CLASSIC_DTYPES.join(", ")
      }; the native netcdf framing writes CDF-5 for it`,
  },
  library: NETCDF_LIBRARY,
  unavailable,
  openWriter(path: string, options: SinkOptions): FrameSink {
    return new NcSink(
      "netcdf-lib",
      nc("netcdf-lib"),
      classicVariant(options.backendOptions),
      path,
      options,
    );
  },
  openReader(path: string): FrameSource {
    return new NcSource("netcdf-lib", nc("netcdf-lib"), path);
  },
};

/**
 * Calls `nc_inq_libvers` once (no arguments, pointer result, no string decoding): a trivial
 * library call for measuring FFI overhead in bench/ffi_bench.ts.
 */
export function netcdfLibversCall(): Deno.PointerValue {
  return nc("netcdf4").fn.nc_inq_libvers();
}
