/**
 * Peer backends (`sciobench/peers`): real C libraries (HDF5, netCDF-4, HDF4) through FFI, and
 * programs (python3-gsd, python3-zarr, the Fortran runtime). Each is a {@link Backend}; one that cannot load
 * reports why through `unavailable()`. The registry (`sciobench/backends`, `backendByName`) runs
 * them behind the engine's frame-range check.
 *
 * ```ts
 * import { hdf5, PEERS } from "./mod.ts";
 *
 * console.log(hdf5.name, PEERS.length > 0); // hdf5 true
 * ```
 * @module
 */
import type { Backend } from "../backends/backend.ts";
import { hdf4 } from "./hdf4/mod.ts";
import { hdf5 } from "./hdf5/mod.ts";
import { hdf5Mpio } from "./hdf5/mpio.ts";
import { netcdf4, netcdfLib } from "./netcdf4/mod.ts";
import { pythonGsd, pythonGsdFl } from "./python_gsd/mod.ts";
import { f77Gfortran } from "./gfortran/mod.ts";
import { zarrPython, zarrPythonNested } from "./zarr_python/mod.ts";

/** Every peer backend, in the order `sciobench framings` lists them: libraries, then programs. */
export const PEERS: readonly Backend[] = [
  hdf5,
  hdf5Mpio,
  netcdf4,
  netcdfLib,
  hdf4,
  pythonGsd,
  pythonGsdFl,
  zarrPython,
  zarrPythonNested,
  f77Gfortran,
];

export {
  f77Gfortran,
  hdf4,
  hdf5,
  hdf5Mpio,
  netcdf4,
  netcdfLib,
  pythonGsd,
  pythonGsdFl,
  zarrPython,
  zarrPythonNested,
};
