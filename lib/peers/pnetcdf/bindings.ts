/**
 * PnetCDF (parallel netCDF classic: CDF-1, CDF-2, CDF-5) through Deno FFI: the symbols the
 * `pnetcdf` backend calls, loaded once per process in the ABI of the run's MPI library (an
 * MPI_Comm, MPI_Info or MPI_Datatype is an address in Open MPI, a 32-bit integer in MPICH), and
 * only when the library file links that MPI (lib/peers/mpi_linked.ts): Debian builds PnetCDF for
 * Open MPI alone. Never closed.
 * @module
 */
import type { DType } from "../../framings/types.ts";
import { cStringAt, libraryFailure, loadLibrary, oneLineText, recordLoaded } from "../common.ts";
import { type LinkedMpi, loadOncePerMpi, mpiLibraryCandidate, mpiMismatch } from "../mpi_linked.ts";
import type { NcCalls } from "../nc_calls.ts";

/** Sonames tried in order when `SCIOBENCH_PNETCDF_LIB` is not set (Debian's first). */
export const PNETCDF_SONAMES: readonly string[] = [
  "libpnetcdf.so.0d",
  "libpnetcdf.so.4",
  "libpnetcdf.so",
];

/** Environment variable naming the PnetCDF shared library; tried before the sonames when set. */
export const PNETCDF_ENV = "SCIOBENCH_PNETCDF_LIB";

/** The symbols, with `h` the FFI type of the ABI's handles. */
function symbols<H extends "pointer" | "i32">(h: H) {
  return {
    ncmpi_inq_libvers: { parameters: [], result: "pointer" },
    ncmpi_strerror: { parameters: ["i32"], result: "pointer" },
    ncmpi_create: { parameters: [h, "buffer", "i32", h, "buffer"], result: "i32" },
    ncmpi_open: { parameters: [h, "buffer", "i32", h, "buffer"], result: "i32" },
    ncmpi_inq_file_info: { parameters: ["i32", "buffer"], result: "i32" },
    ncmpi__enddef: { parameters: ["i32", "i64", "i64", "i64", "i64"], result: "i32" },
    ncmpi_set_fill: { parameters: ["i32", "i32", "buffer"], result: "i32" },
    ncmpi_def_dim: { parameters: ["i32", "buffer", "i64", "buffer"], result: "i32" },
    ncmpi_def_var: {
      parameters: ["i32", "buffer", "i32", "i32", "buffer", "buffer"],
      result: "i32",
    },
    ncmpi_put_att_text: { parameters: ["i32", "i32", "buffer", "i64", "buffer"], result: "i32" },
    ncmpi_begin_indep_data: { parameters: ["i32"], result: "i32" },
    ncmpi_end_indep_data: { parameters: ["i32"], result: "i32" },
    ncmpi_sync: { parameters: ["i32"], result: "i32" },
    ncmpi_close: { parameters: ["i32"], result: "i32" },
    ncmpi_abort: { parameters: ["i32"], result: "i32" },
    ncmpi_inq: { parameters: ["i32", "buffer", "buffer", "buffer", "buffer"], result: "i32" },
    ncmpi_inq_format: { parameters: ["i32", "buffer"], result: "i32" },
    ncmpi_inq_dimlen: { parameters: ["i32", "i32", "buffer"], result: "i32" },
    ncmpi_inq_var: {
      parameters: ["i32", "i32", "buffer", "buffer", "buffer", "buffer", "buffer"],
      result: "i32",
    },
    ncmpi_inq_att: { parameters: ["i32", "i32", "buffer", "buffer", "buffer"], result: "i32" },
    ncmpi_get_att_text: { parameters: ["i32", "i32", "buffer", "buffer"], result: "i32" },
  } as const;
}

/** The C type names of PnetCDF's typed calls (`ncmpi_put_vara_float_all`), by element type. */
const TYPED: Readonly<Record<DType, string>> = {
  int8: "schar",
  char: "text",
  uint8: "uchar",
  int16: "short",
  uint16: "ushort",
  int32: "int",
  uint32: "uint",
  float32: "float",
  float64: "double",
  int64: "longlong",
  uint64: "ulonglong",
};

/** The name of the typed vara call: `put` or `get`, collective (`_all`) or independent. */
export function varaName(op: "put" | "get", dtype: DType, collective: boolean): string {
  return `ncmpi_${op}_vara_${TYPED[dtype]}${collective ? "_all" : ""}`;
}

/** Every typed vara call: (ncid, varid, start, count, buffer) -> status. */
function varaSymbols(): Record<string, Deno.ForeignFunction> {
  const out: Record<string, Deno.ForeignFunction> = {};
  for (const dtype of Object.keys(TYPED) as DType[]) {
    for (const op of ["put", "get"] as const) {
      for (const collective of [true, false]) {
        out[varaName(op, dtype, collective)] = {
          parameters: ["i32", "i32", "buffer", "buffer", "buffer"],
          result: "i32",
        };
      }
    }
  }
  return out;
}

/**
 * A typed vara call: writes (`put`) or reads (`get`) the elements of `count` from `start` of a
 * variable, in native byte order in the buffer; the status.
 */
export type VaraCall = (
  ncid: number,
  varid: number,
  start: BigInt64Array,
  count: BigInt64Array,
  data: ArrayBufferView,
) => number;

/** A handle of the run's MPI as the ABI passes it (see lib/backends/backend.ts MpiHandles). */
type Handle = Deno.PointerValue | number;

/** An 8-byte array of MPI_Offset values (start, count, lengths). */
type Offsets = BigInt64Array;

/** The calls shared with netCDF-C, MPI_Offset cells. */
type Nc = NcCalls<Offsets>;

/**
 * The calls as the code below makes them, the ABI's handles taken as they come (a function's
 * parameter type rather than an interface: the C names are not camelCase).
 */
function typed(s: {
  ncmpi_inq_libvers(): Deno.PointerValue;
  ncmpi_strerror(status: number): Deno.PointerValue;
  ncmpi_create(comm: Handle, path: Uint8Array, cmode: number, info: Handle, id: Int32Array): number;
  ncmpi_open(comm: Handle, path: Uint8Array, omode: number, info: Handle, id: Int32Array): number;
  ncmpi_inq_file_info(ncid: number, info: Uint8Array): number;
  ncmpi__enddef(ncid: number, hMin: bigint, vAlign: bigint, vMin: bigint, rAlign: bigint): number;
  ncmpi_set_fill(ncid: number, mode: number, old: Int32Array): number;
  ncmpi_def_dim: Nc["defDim"];
  ncmpi_def_var: Nc["defVar"];
  ncmpi_put_att_text: Nc["putAttText"];
  ncmpi_begin_indep_data(ncid: number): number;
  ncmpi_end_indep_data(ncid: number): number;
  ncmpi_put_vara(
    ...args: [number, number, Offsets, Offsets, ArrayBufferView, bigint, Handle]
  ): number;
  ncmpi_put_vara_all(
    ...args: [number, number, Offsets, Offsets, ArrayBufferView, bigint, Handle]
  ): number;
  ncmpi_get_vara(
    ...args: [number, number, Offsets, Offsets, ArrayBufferView, bigint, Handle]
  ): number;
  ncmpi_get_vara_all(
    ...args: [number, number, Offsets, Offsets, ArrayBufferView, bigint, Handle]
  ): number;
  ncmpi_sync(ncid: number): number;
  ncmpi_close(ncid: number): number;
  ncmpi_abort(ncid: number): number;
  ncmpi_inq: Nc["inq"];
  ncmpi_inq_format(ncid: number, format: Int32Array): number;
  ncmpi_inq_dimlen: Nc["inqDimlen"];
  ncmpi_inq_var: Nc["inqVar"];
  ncmpi_inq_att: Nc["inqAtt"];
  ncmpi_get_att_text: Nc["getAttText"];
}) {
  return s;
}

/** The PnetCDF calls, with the ABI's handles taken as they come. */
export type PnetcdfFns = ReturnType<typeof typed>;

/** The loaded library: its calls, the file it was loaded from, and its version. */
export interface Pnetcdf {
  readonly fn: PnetcdfFns;
  /** The calls shared with netCDF-C. */
  readonly nc: NcCalls<BigInt64Array>;
  /** The typed vara call for elements of `dtype` (PnetCDF converts them to big-endian). */
  vara(op: "put" | "get", dtype: DType, collective: boolean): VaraCall;
  readonly path: string;
  /** `1.12.3`, from ncmpi_inq_libvers. */
  readonly version: string;
}

/** Mode flags of ncmpi_create / ncmpi_open (pnetcdf.h, the same as netCDF-C's). */
export const NCMPI = {
  nowrite: 0,
  write: 0x1,
  clobber: 0,
  noclobber: 0x4,
  cdf2: 0x200,
  cdf5: 0x20,
  nofill: 0x100,
} as const;

const STATE = new Map<LinkedMpi, Pnetcdf | string>();

/** The library file the loader would load (the env variable's, else the first soname found). */
function candidate(): string | undefined {
  return mpiLibraryCandidate(PNETCDF_ENV, PNETCDF_SONAMES);
}

/**
 * Why PnetCDF cannot run with an MPI of `abi`: not installed, or built for the other MPI (read
 * from the file, without loading it); null when it looks usable.
 */
export function pnetcdfProblem(abi: LinkedMpi | undefined): string | null {
  const file = candidate();
  if (file === undefined) {
    return `PnetCDF library not found (tried ${PNETCDF_SONAMES.join(", ")}; set ${PNETCDF_ENV} ` +
      "to its path; Debian: libpnetcdf-dev)";
  }
  return mpiMismatch(file, abi, PNETCDF_ENV, "a PnetCDF");
}

/** The library for an MPI of `abi`, loaded once, or why it cannot load (one line). */
export function loadPnetcdf(abi: LinkedMpi): Pnetcdf | string {
  return loadOncePerMpi(STATE, abi, pnetcdfProblem, () => {
    const loaded = loadLibrary(
      "PnetCDF",
      [candidate()!],
      PNETCDF_ENV,
      { ...symbols(abi === "openmpi" ? "pointer" : "i32"), ...varaSymbols() },
    );
    if (!loaded.ok) return loaded.reason;
    const fn = typed(loaded.symbols as unknown as Parameters<typeof typed>[0]);
    const version = cStringAt(fn.ncmpi_inq_libvers()).split(/\s/)[0] ?? "unknown";
    recordLoaded("PnetCDF", loaded.path, version);
    const calls = loaded.symbols as unknown as Record<string, VaraCall>;
    const vara = (op: "put" | "get", dtype: DType, collective: boolean) =>
      calls[varaName(op, dtype, collective)]!;
    const nc: Nc = {
      defDim: fn.ncmpi_def_dim,
      defVar: fn.ncmpi_def_var,
      putAttText: fn.ncmpi_put_att_text,
      inq: fn.ncmpi_inq,
      inqDimlen: fn.ncmpi_inq_dimlen,
      inqVar: fn.ncmpi_inq_var,
      inqAtt: fn.ncmpi_inq_att,
      getAttText: fn.ncmpi_get_att_text,
    };
    return { fn, nc, vara, path: loaded.path, version };
  });
}

/** IoError with PnetCDF's text for `status` (one line) unless it is NC_NOERR. */
export function checkPnetcdf(lib: Pnetcdf, status: number, call: string, path: string): void {
  if (status === 0) return;
  const text = oneLineText(cStringAt(lib.fn.ncmpi_strerror(status)));
  throw libraryFailure("pnetcdf", path, call, `${text} (status ${status})`);
}
