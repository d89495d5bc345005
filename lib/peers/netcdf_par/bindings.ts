/**
 * netCDF-4 parallel (libnetcdf built with parallel HDF5: Debian's `libnetcdf_mpi.so.19`, linked
 * to libhdf5_openmpi) through Deno FFI: the symbols the `netcdf4-par` backend calls, loaded once
 * per process in the ABI of the run's MPI library (MPI_Comm and MPI_Info are addresses in Open
 * MPI, 32-bit integers in MPICH), only when the library file links that MPI (Debian builds it for
 * Open MPI alone), and only in MPI runs. Its functions have the names of the serial libnetcdf's
 * (`nc_create`, `nc_put_vara`, ...): both are loaded `RTLD_LOCAL`, so each library's calls bind
 * within itself and its own HDF5 (libhdf5_openmpi against libhdf5_serial), and a run may load
 * both (the serial netcdf4 peer beside this one). Never closed.
 * @module
 */
import { cStringAt, libraryFailure, loadLibrary, oneLineText, recordLoaded } from "../common.ts";
import { type LinkedMpi, loadOncePerMpi, mpiLibraryCandidate, mpiMismatch } from "../mpi_linked.ts";
import type { NcCalls } from "../nc_calls.ts";
import { NC_SHARED_SYMBOLS } from "../netcdf4/bindings.ts";

/** Sonames tried in order when `SCIOBENCH_NETCDF_PAR_LIB` is not set (Debian's first). */
export const NETCDF_PAR_SONAMES: readonly string[] = ["libnetcdf_mpi.so.19", "libnetcdf_mpi.so"];

/** Environment variable naming the parallel netCDF-C library; tried before the sonames. */
export const NETCDF_PAR_ENV = "SCIOBENCH_NETCDF_PAR_LIB";

/** The symbols, with `h` the FFI type of the ABI's handles. */
function symbols<H extends "pointer" | "i32">(h: H) {
  return {
    ...NC_SHARED_SYMBOLS,
    nc_create_par: { parameters: ["buffer", "i32", h, h, "buffer"], result: "i32" },
    nc_open_par: { parameters: ["buffer", "i32", h, h, "buffer"], result: "i32" },
    nc_var_par_access: { parameters: ["i32", "i32", "i32"], result: "i32" },
    nc_inq_dimlen: { parameters: ["i32", "i32", "buffer"], result: "i32" },
  } as const;
}

/** A handle of the run's MPI as the ABI passes it (see lib/backends/backend.ts MpiHandles). */
type Handle = Deno.PointerValue | number;

/** The calls shared with PnetCDF and the serial library, size_t cells. */
type Nc = NcCalls<BigUint64Array>;

/**
 * The calls as the code below makes them, the ABI's handles taken as they come (a function's
 * parameter type rather than an interface: the C names are not camelCase).
 */
function typed(s: {
  nc_inq_libvers(): Deno.PointerValue;
  nc_strerror(status: number): Deno.PointerValue;
  nc_create_par(
    path: Uint8Array,
    cmode: number,
    comm: Handle,
    info: Handle,
    id: Int32Array,
  ): number;
  nc_open_par(path: Uint8Array, mode: number, comm: Handle, info: Handle, id: Int32Array): number;
  nc_var_par_access(ncid: number, varid: number, access: number): number;
  nc_close(ncid: number): number;
  nc_sync(ncid: number): number;
  nc_abort(ncid: number): number;
  nc_enddef(ncid: number): number;
  nc_set_fill(ncid: number, mode: number, old: Int32Array): number;
  nc_def_dim: Nc["defDim"];
  nc_def_var: Nc["defVar"];
  nc_def_var_endian(ncid: number, varid: number, endian: number): number;
  nc_def_var_chunking(ncid: number, varid: number, storage: number, sizes: BigUint64Array): number;
  nc_put_att_text: Nc["putAttText"];
  nc_put_vara(
    ncid: number,
    varid: number,
    start: BigUint64Array,
    count: BigUint64Array,
    data: ArrayBufferView,
  ): number;
  nc_get_vara(
    ncid: number,
    varid: number,
    start: BigUint64Array,
    count: BigUint64Array,
    data: ArrayBufferView,
  ): number;
  nc_inq: Nc["inq"];
  nc_inq_dimlen: Nc["inqDimlen"];
  nc_inq_var: Nc["inqVar"];
  nc_inq_att: Nc["inqAtt"];
  nc_get_att_text: Nc["getAttText"];
}) {
  return s;
}

/** The calls of the parallel library, with the ABI's handles taken as they come. */
export type NetcdfParFns = ReturnType<typeof typed>;

/** The loaded library: its calls, the file it was loaded from, and its version. */
export interface NetcdfPar {
  readonly fn: NetcdfParFns;
  /** The calls shared with PnetCDF. */
  readonly nc: NcCalls<BigUint64Array>;
  readonly path: string;
  /** `4.9.0`, from nc_inq_libvers. */
  readonly version: string;
}

/** nc_var_par_access's modes (netcdf_par.h). */
export const NC_PAR_ACCESS = { independent: 0, collective: 1 } as const;

const STATE = new Map<LinkedMpi, NetcdfPar | string>();

/** The library file the loader would load (the env variable's, else the first soname found). */
function candidate(): string | undefined {
  return mpiLibraryCandidate(NETCDF_PAR_ENV, NETCDF_PAR_SONAMES);
}

/**
 * Why netCDF-4 parallel cannot run with an MPI of `abi`: not installed, or built for the other
 * MPI (read from the file, without loading it); null when it looks usable.
 */
export function netcdfParProblem(abi: LinkedMpi | undefined): string | null {
  const file = candidate();
  if (file === undefined) {
    return `parallel netCDF-C library not found (tried ${NETCDF_PAR_SONAMES.join(", ")}; set ` +
      `${NETCDF_PAR_ENV} to its path; Debian: libnetcdf-mpi-dev)`;
  }
  return mpiMismatch(file, abi, NETCDF_PAR_ENV, "a parallel netCDF-C");
}

/** The library for an MPI of `abi`, loaded once, or why it cannot load (one line). */
export function loadNetcdfPar(abi: LinkedMpi): NetcdfPar | string {
  return loadOncePerMpi(STATE, abi, netcdfParProblem, () => {
    const loaded = loadLibrary(
      "parallel netCDF-C",
      [candidate()!],
      NETCDF_PAR_ENV,
      symbols(abi === "openmpi" ? "pointer" : "i32"),
    );
    if (!loaded.ok) return loaded.reason;
    const fn = typed(loaded.symbols as unknown as Parameters<typeof typed>[0]);
    const version = cStringAt(fn.nc_inq_libvers()).split(/\s/)[0] ?? "unknown";
    recordLoaded("netCDF-C parallel", loaded.path, version);
    const nc: Nc = {
      defDim: fn.nc_def_dim,
      defVar: fn.nc_def_var,
      putAttText: fn.nc_put_att_text,
      inq: fn.nc_inq,
      inqDimlen: fn.nc_inq_dimlen,
      inqVar: fn.nc_inq_var,
      inqAtt: fn.nc_inq_att,
      getAttText: fn.nc_get_att_text,
    };
    return { fn, nc, path: loaded.path, version };
  });
}

/** IoError with the library's text for `status` (one line) unless it is NC_NOERR. */
export function checkNetcdfPar(lib: NetcdfPar, status: number, call: string, path: string): void {
  if (status === 0) return;
  const text = oneLineText(cStringAt(lib.fn.nc_strerror(status)));
  throw libraryFailure("netcdf4-par", path, call, `${text} (status ${status})`);
}
