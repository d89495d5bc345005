/**
 * libnetcdf through Deno FFI: the symbols the netCDF peers call, the library's constants, loading
 * it once (after HDF5 is prepared), and its status codes as typed errors.
 * @module
 */
import { PeerUnavailableError } from "../../core/errors.ts";
import type { DType } from "../../framings/types.ts";
import { cStringAt, libraryFailure, loadLibrary, oneLineText, recordLoaded } from "../common.ts";
import { prepareHdf5 } from "../hdf5/bindings.ts";

/** Sonames tried in order when `SCIOBENCH_NETCDF_LIB` is not set. */
export const NETCDF_SONAMES: readonly string[] = ["libnetcdf.so.19", "libnetcdf.so"];

/** Environment variable naming the netCDF-C shared library; tried before the sonames when set. */
export const NETCDF_ENV = "SCIOBENCH_NETCDF_LIB";

/**
 * The libnetcdf functions the serial library and the parallel one (lib/peers/netcdf_par/) both
 * have and the peers call, with their FFI signatures.
 */
export const NC_SHARED_SYMBOLS = {
  nc_inq_libvers: { parameters: [], result: "pointer" },
  nc_strerror: { parameters: ["i32"], result: "pointer" },
  nc_close: { parameters: ["i32"], result: "i32" },
  nc_sync: { parameters: ["i32"], result: "i32" },
  nc_abort: { parameters: ["i32"], result: "i32" },
  nc_enddef: { parameters: ["i32"], result: "i32" },
  nc_set_fill: { parameters: ["i32", "i32", "buffer"], result: "i32" },
  nc_def_dim: { parameters: ["i32", "buffer", "usize", "buffer"], result: "i32" },
  nc_def_var: {
    parameters: ["i32", "buffer", "i32", "i32", "buffer", "buffer"],
    result: "i32",
  },
  nc_def_var_endian: { parameters: ["i32", "i32", "i32"], result: "i32" },
  nc_def_var_chunking: { parameters: ["i32", "i32", "i32", "buffer"], result: "i32" },
  nc_put_vara: { parameters: ["i32", "i32", "buffer", "buffer", "buffer"], result: "i32" },
  nc_get_vara: { parameters: ["i32", "i32", "buffer", "buffer", "buffer"], result: "i32" },
  nc_inq: { parameters: ["i32", "buffer", "buffer", "buffer", "buffer"], result: "i32" },
  nc_inq_var: {
    parameters: ["i32", "i32", "buffer", "buffer", "buffer", "buffer", "buffer"],
    result: "i32",
  },
  nc_inq_att: { parameters: ["i32", "i32", "buffer", "buffer", "buffer"], result: "i32" },
  nc_get_att_text: { parameters: ["i32", "i32", "buffer", "buffer"], result: "i32" },
  nc_put_att_text: { parameters: ["i32", "i32", "buffer", "usize", "buffer"], result: "i32" },
} as const;

/** The libnetcdf functions the serial peers call, with their FFI signatures. */
const SYMBOLS = {
  ...NC_SHARED_SYMBOLS,
  nc_create: { parameters: ["buffer", "i32", "buffer"], result: "i32" },
  nc_open: { parameters: ["buffer", "i32", "buffer"], result: "i32" },
  nc_inq_format: { parameters: ["i32", "buffer"], result: "i32" },
  nc_inq_dim: { parameters: ["i32", "i32", "buffer", "buffer"], result: "i32" },
  nc_inq_var_endian: { parameters: ["i32", "i32", "buffer"], result: "i32" },
  nc_inq_grp_full_ncid: { parameters: ["i32", "buffer", "buffer"], result: "i32" },
  nc_inq_varid: { parameters: ["i32", "buffer", "buffer"], result: "i32" },
} as const;

/** The loaded functions of {@link SYMBOLS}. */
type NcLib = Deno.DynamicLibrary<typeof SYMBOLS>["symbols"];

// Constants from netcdf.h 4.9.0 (ffi.md §5.2), for the peers' calls (mode flags, ids, limits).
/** nc_open mode: read only. */
export const NC_NOWRITE = 0;
/** nc_create mode: replace an existing file. */
export const NC_CLOBBER = 0;
/** nc_create mode: refuse an existing file. */
export const NC_NOCLOBBER = 0x4;
/** nc_create format flag: CDF-5. */
export const NC_64BIT_DATA = 0x20;
/** nc_create format flag: CDF-2. */
export const NC_64BIT_OFFSET = 0x200;
/** nc_create format flag: netCDF-4 (HDF5 storage). */
export const NC_NETCDF4 = 0x1000;
/** nc_set_fill mode: no fill values written. */
export const NC_NOFILL = 0x100;
/** nc_set_fill mode: the library's fill values written first. */
export const NC_FILL = 0;
/** Variable id of global attributes. */
export const NC_GLOBAL = -1;
/** nc_def_var_chunking storage: chunked. */
export const NC_CHUNKED = 0;
/** nc_def_var_endian: little-endian. */
export const NC_ENDIAN_LITTLE = 1;
/** nc_def_var_endian: big-endian. */
export const NC_ENDIAN_BIG = 2;
/** Longest name the library returns, in bytes (without its NUL). */
export const NC_MAX_NAME = 256;
/** Most dimensions of one variable. */
export const NC_MAX_VAR_DIMS = 1024;

/** The netCDF external type (nc_type) each DType is stored as. */
export const NC_TYPE: Readonly<Record<DType, number>> = {
  int8: 1,
  char: 2,
  int16: 3,
  int32: 4,
  float32: 5,
  float64: 6,
  uint8: 7,
  uint16: 8,
  uint32: 9,
  int64: 10,
  uint64: 11,
};

/** The DType each netCDF external type reads as ({@link NC_TYPE} inverted). */
export const DTYPE_OF_NC: Readonly<Record<number, DType>> = Object.fromEntries(
  Object.entries(NC_TYPE).map(([k, v]) => [v, k as DType]),
);

/** nc_inq_format's format codes, as `describe()` names them. */
export const FORMAT_NAMES: Readonly<Record<number, string>> = {
  1: "classic (CDF-1)",
  2: "64-bit offset (CDF-2)",
  3: "netCDF-4",
  4: "netCDF-4 classic model",
  5: "64-bit data (CDF-5)",
};

/** The loaded library: its functions, the file it was loaded from, and its version. */
export interface NetCdf {
  readonly fn: NcLib;
  readonly path: string;
  readonly version: string;
}

let state: NetCdf | string | undefined;

/** The library, loaded once (HDF5 prepared first), or why it cannot load. */
export function load(): NetCdf | string {
  if (state !== undefined) return state;
  prepareHdf5(); // before libnetcdf initialises HDF5: no HDF5 exit handler (see hdf5/bindings.ts)
  const loaded = loadLibrary("netCDF-C", NETCDF_SONAMES, NETCDF_ENV, SYMBOLS);
  if (!loaded.ok) return (state = loaded.reason);
  const fn = loaded.symbols;
  const version = cStringAt(fn.nc_inq_libvers()).split(" ")[0] ?? "unknown";
  recordLoaded("netCDF-C", loaded.path, version);
  return (state = { fn, path: loaded.path, version });
}

/** The library for `backend`; PeerUnavailableError naming the backend when it cannot load. */
export function nc(backend: string): NetCdf {
  const s = load();
  if (typeof s === "string") throw new PeerUnavailableError(`${backend}: ${s}`);
  return s;
}

/** netCDF-C library version such as `4.9.0`, or null when the library is not available. */
export function netcdfVersion(): string | null {
  const s = load();
  return typeof s === "string" ? null : s.version;
}

/** `nc_strerror` text of a status code. */
export function strerror(lib: NetCdf, status: number): string {
  return oneLineText(cStringAt(lib.fn.nc_strerror(status)));
}

/** Throws IoError with the library's message when `status` is not NC_NOERR. */
export function check(
  lib: NetCdf,
  backend: string,
  status: number,
  call: string,
  path: string,
): void {
  if (status !== 0) {
    throw libraryFailure(backend, path, call, `${strerror(lib, status)} (status ${status})`);
  }
}
