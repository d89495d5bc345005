/**
 * libhdf5 through FFI: the symbols and constants sciobench uses, loading the library (pinned for
 * the life of the process), the error stack as typed errors, and HDF5 path components.
 * @module
 */
import { FormatError, IoError, PeerUnavailableError } from "../../core/errors.ts";
import type { ByteOrder, DType } from "../../framings/types.ts";
import {
  cStringAt,
  decodeCBuffer,
  libraryFailure,
  loadLibrary,
  oneLineText,
  recordLoaded,
} from "../common.ts";

/** The backend name, used in errors. */
export const NAME = "hdf5";

/** Sonames tried in order when `SCIOBENCH_HDF5_LIB` is not set (Debian's serial build, then upstream names). */
export const HDF5_SONAMES: readonly string[] = [
  "libhdf5_serial.so.103",
  "libhdf5.so.103",
  "libhdf5_serial.so",
  "libhdf5.so",
];

/** Environment variable naming the HDF5 shared library; tried before the sonames when set. */
export const HDF5_ENV = "SCIOBENCH_HDF5_LIB";

const STATIC = { type: "pointer" } as const;

const SYMBOLS = {
  H5open: { parameters: [], result: "i32" },
  H5dont_atexit: { parameters: [], result: "i32" },
  H5get_libversion: { parameters: ["buffer", "buffer", "buffer"], result: "i32" },
  H5Eset_auto2: { parameters: ["i64", "pointer", "pointer"], result: "i32" },
  H5Eclear2: { parameters: ["i64"], result: "i32" },
  H5Ewalk2: { parameters: ["i64", "i32", "function", "pointer"], result: "i32" },
  H5Eget_msg: { parameters: ["i64", "pointer", "buffer", "usize"], result: "isize" },
  H5Fcreate: { parameters: ["buffer", "u32", "i64", "i64"], result: "i64" },
  H5Fopen: { parameters: ["buffer", "u32", "i64"], result: "i64" },
  H5Fclose: { parameters: ["i64"], result: "i32" },
  H5Fflush: { parameters: ["i64", "i32"], result: "i32" },
  H5Fget_obj_count: { parameters: ["i64", "u32"], result: "isize" },
  H5Pcreate: { parameters: ["i64"], result: "i64" },
  H5Pclose: { parameters: ["i64"], result: "i32" },
  H5Pset_chunk: { parameters: ["i64", "i32", "buffer"], result: "i32" },
  H5Pset_link_creation_order: { parameters: ["i64", "u32"], result: "i32" },
  H5Pget_link_creation_order: { parameters: ["i64", "buffer"], result: "i32" },
  H5Gcreate2: { parameters: ["i64", "buffer", "i64", "i64", "i64"], result: "i64" },
  H5Gopen2: { parameters: ["i64", "buffer", "i64"], result: "i64" },
  H5Gclose: { parameters: ["i64"], result: "i32" },
  H5Gget_info: { parameters: ["i64", "buffer"], result: "i32" },
  H5Gget_create_plist: { parameters: ["i64"], result: "i64" },
  H5Lget_name_by_idx: {
    parameters: ["i64", "buffer", "i32", "i32", "u64", "buffer", "usize", "i64"],
    result: "isize",
  },
  H5Oopen: { parameters: ["i64", "buffer", "i64"], result: "i64" },
  H5Oclose: { parameters: ["i64"], result: "i32" },
  H5Oget_info2: { parameters: ["i64", "buffer", "u32"], result: "i32" },
  H5Iget_type: { parameters: ["i64"], result: "i32" },
  H5Aexists: { parameters: ["i64", "buffer"], result: "i32" },
  H5Screate_simple: { parameters: ["i32", "buffer", "buffer"], result: "i64" },
  H5Sselect_hyperslab: {
    parameters: ["i64", "i32", "buffer", "buffer", "buffer", "buffer"],
    result: "i32",
  },
  H5Sget_simple_extent_ndims: { parameters: ["i64"], result: "i32" },
  H5Sget_simple_extent_dims: { parameters: ["i64", "buffer", "buffer"], result: "i32" },
  H5Sclose: { parameters: ["i64"], result: "i32" },
  H5Dcreate2: { parameters: ["i64", "buffer", "i64", "i64", "i64", "i64", "i64"], result: "i64" },
  H5Dopen2: { parameters: ["i64", "buffer", "i64"], result: "i64" },
  H5Dwrite: { parameters: ["i64", "i64", "i64", "i64", "i64", "buffer"], result: "i32" },
  H5Dread: { parameters: ["i64", "i64", "i64", "i64", "i64", "buffer"], result: "i32" },
  H5Dset_extent: { parameters: ["i64", "buffer"], result: "i32" },
  H5Dget_space: { parameters: ["i64"], result: "i64" },
  H5Dget_type: { parameters: ["i64"], result: "i64" },
  H5Dclose: { parameters: ["i64"], result: "i32" },
  H5Tget_class: { parameters: ["i64"], result: "i32" },
  H5Tget_size: { parameters: ["i64"], result: "usize" },
  H5Tget_sign: { parameters: ["i64"], result: "i32" },
  H5Tget_order: { parameters: ["i64"], result: "i32" },
  H5Tclose: { parameters: ["i64"], result: "i32" },
  // Describing any dataset (lib/peers/hdf5/catalog.ts).
  H5Dget_create_plist: { parameters: ["i64"], result: "i64" },
  H5Dget_offset: { parameters: ["i64"], result: "u64" },
  H5Dget_storage_size: { parameters: ["i64"], result: "u64" },
  H5Pget_layout: { parameters: ["i64"], result: "i32" },
  H5Pget_chunk: { parameters: ["i64", "i32", "buffer"], result: "i32" },
  H5Pget_nfilters: { parameters: ["i64"], result: "i32" },
  H5Pget_filter2: {
    parameters: ["i64", "u32", "buffer", "buffer", "buffer", "usize", "buffer", "buffer"],
    result: "i32",
  },
  H5Tis_variable_str: { parameters: ["i64"], result: "i32" },
  H5Lget_info: { parameters: ["i64", "buffer", "buffer", "i64"], result: "i32" },
  H5Aopen: { parameters: ["i64", "buffer", "i64"], result: "i64" },
  H5Aget_type: { parameters: ["i64"], result: "i64" },
  H5Aread: { parameters: ["i64", "i64", "buffer"], result: "i32" },
  H5Aclose: { parameters: ["i64"], result: "i32" },
  H5Pset_chunk_cache: { parameters: ["i64", "usize", "usize", "f64"], result: "i32" },
  // Reading files sciobench did not write (links, external storage, sparse datasets).
  H5Literate: {
    parameters: ["i64", "i32", "i32", "buffer", "function", "pointer"],
    result: "i32",
  },
  H5Dget_num_chunks: { parameters: ["i64", "i64", "buffer"], result: "i32" },
  // Reading unfiltered chunks' bytes without the library (lib/peers/hdf5/chunks.ts): hid_t,
  // const hsize_t *offset, unsigned *filter_mask, haddr_t *addr, hsize_t *size.
  H5Dget_chunk_info_by_coord: {
    parameters: ["i64", "buffer", "buffer", "buffer", "buffer"],
    result: "i32",
  },
  H5Pget_external_count: { parameters: ["i64"], result: "i32" },
  H5Pget_external: {
    parameters: ["i64", "u32", "usize", "buffer", "buffer", "buffer"],
    result: "i32",
  },
  H5Pset_efile_prefix: { parameters: ["i64", "buffer"], result: "i32" },
  H5Pset_elink_cb: { parameters: ["i64", "function", "pointer"], result: "i32" },
  // Writing the fuzzer's hostile seed (lib/peers/hdf5/hostile.ts).
  H5Pset_external: { parameters: ["i64", "buffer", "i64", "u64"], result: "i32" },
  H5Pset_fill_time: { parameters: ["i64", "i32"], result: "i32" },
  H5Lcreate_external: {
    parameters: ["buffer", "buffer", "i64", "buffer", "i64", "i64"],
    result: "i32",
  },
  H5Screate: { parameters: ["i32"], result: "i64" },
  H5Oget_info_by_name2: {
    parameters: ["i64", "buffer", "buffer", "u32", "i64"],
    result: "i32",
  },
  H5Sget_simple_extent_type: { parameters: ["i64"], result: "i32" },
  // Globals: declared as pointers (their addresses), read after H5open (ffi.md §6.3).
  H5T_NATIVE_SCHAR_g: STATIC,
  H5T_NATIVE_UCHAR_g: STATIC,
  H5T_NATIVE_SHORT_g: STATIC,
  H5T_NATIVE_USHORT_g: STATIC,
  H5T_NATIVE_INT_g: STATIC,
  H5T_NATIVE_UINT_g: STATIC,
  H5T_NATIVE_LLONG_g: STATIC,
  H5T_NATIVE_ULLONG_g: STATIC,
  H5T_NATIVE_FLOAT_g: STATIC,
  H5T_NATIVE_DOUBLE_g: STATIC,
  H5T_IEEE_F32BE_g: STATIC,
  H5T_IEEE_F32LE_g: STATIC,
  H5T_IEEE_F64BE_g: STATIC,
  H5T_IEEE_F64LE_g: STATIC,
  H5T_STD_I8BE_g: STATIC,
  H5T_STD_I8LE_g: STATIC,
  H5T_STD_U8BE_g: STATIC,
  H5T_STD_U8LE_g: STATIC,
  H5T_STD_I16BE_g: STATIC,
  H5T_STD_I16LE_g: STATIC,
  H5T_STD_U16BE_g: STATIC,
  H5T_STD_U16LE_g: STATIC,
  H5T_STD_I32BE_g: STATIC,
  H5T_STD_I32LE_g: STATIC,
  H5T_STD_U32BE_g: STATIC,
  H5T_STD_U32LE_g: STATIC,
  H5T_STD_I64BE_g: STATIC,
  H5T_STD_I64LE_g: STATIC,
  H5T_STD_U64BE_g: STATIC,
  H5T_STD_U64LE_g: STATIC,
  H5P_CLS_FILE_CREATE_ID_g: STATIC,
  H5P_CLS_GROUP_CREATE_ID_g: STATIC,
  H5P_CLS_DATASET_CREATE_ID_g: STATIC,
  H5P_CLS_DATASET_ACCESS_ID_g: STATIC,
  // The MPI-IO driver's property lists and calls (lib/peers/hdf5/mpio.ts); in every build.
  H5P_CLS_FILE_ACCESS_ID_g: STATIC,
  H5P_CLS_DATASET_XFER_ID_g: STATIC,
  H5Sselect_none: { parameters: ["i64"], result: "i32" },
  H5Fget_vfd_handle: { parameters: ["i64", "i64", "buffer"], result: "i32" },
} as const;

type H5Lib = Deno.DynamicLibrary<typeof SYMBOLS>["symbols"];

// Constants (HDF5 1.10 headers; checked with a C program against libhdf5_serial 1.10.8).
/** HDF5 1.10 constant `H5P_DEFAULT`. */
export const H5P_DEFAULT = 0n;
/** HDF5 1.10 constant `H5E_DEFAULT`. */
export const H5E_DEFAULT = 0n;
/** HDF5 1.10 constant `H5S_SELECT_SET`. */
export const H5S_SELECT_SET = 0;
/** HDF5 1.10 constant `H5S_UNLIMITED`. */
export const H5S_UNLIMITED = 0xffffffffffffffffn;
/** HDF5 1.10 constant `H5F_ACC_RDONLY`. */
export const H5F_ACC_RDONLY = 0;
/** HDF5 1.10 constant `H5F_ACC_TRUNC`. */
export const H5F_ACC_TRUNC = 2;
/** HDF5 1.10 constant `H5F_ACC_EXCL`. */
export const H5F_ACC_EXCL = 4;
/** HDF5 1.10 constant `H5F_SCOPE_LOCAL`. */
export const H5F_SCOPE_LOCAL = 0;
const H5F_OBJ_ALL = 0x1f;
/** HDF5 1.10 constant `H5P_CRT_ORDER_TRACKED`. */
export const H5P_CRT_ORDER_TRACKED = 1;
/** HDF5 1.10 constant `H5P_CRT_ORDER_INDEXED`. */
export const H5P_CRT_ORDER_INDEXED = 2;
/** HDF5 1.10 constant `H5_INDEX_NAME`. */
export const H5_INDEX_NAME = 0;
/** HDF5 1.10 constant `H5_INDEX_CRT_ORDER`. */
export const H5_INDEX_CRT_ORDER = 1;
/** HDF5 1.10 constant `H5_ITER_INC`. */
export const H5_ITER_INC = 0;
const H5E_WALK_UPWARD = 0;
/** HDF5 1.10 constant `H5O_INFO_BASIC` (H5Oget_info2 fills fileno, addr, type, rc). */
export const H5O_INFO_BASIC = 1;
/** HDF5 1.10 constant `H5I_GROUP`. */
export const H5I_GROUP = 2;
/** HDF5 1.10 constant `H5I_DATASET`. */
export const H5I_DATASET = 5;
/** HDF5 1.10 constant `H5T_INTEGER`. */
export const H5T_INTEGER = 0;
/** HDF5 1.10 constant `H5T_FLOAT`. */
export const H5T_FLOAT = 1;
/** HDF5 1.10 type class names by `H5T_class_t` value (0 integer .. 10 array). */
export const H5T_CLASS_NAMES: readonly string[] = [
  "integer",
  "float",
  "time",
  "string",
  "bitfield",
  "opaque",
  "compound",
  "reference",
  "enum",
  "vlen",
  "array",
];
/** HDF5 1.10 dataset layouts by `H5D_layout_t` value. */
export const H5D_LAYOUT_NAMES: readonly string[] = ["compact", "contiguous", "chunked", "virtual"];
/** HDF5 1.10 constant `HADDR_UNDEF` (an address not allocated). */
export const HADDR_UNDEF = 0xffffffffffffffffn;
/** HDF5 1.10 constant `H5L_TYPE_HARD`. */
export const H5L_TYPE_HARD = 0;
/** HDF5 1.10 constant `H5L_TYPE_SOFT`. */
export const H5L_TYPE_SOFT = 1;
/** HDF5 1.10 constant `H5S_NULL` (a dataspace class: no elements). */
export const H5S_NULL = 2;
/** HDF5 1.10 constant `H5S_ALL`. */
export const H5S_ALL = 0n;
/** HDF5 1.10 constant `H5T_SGN_NONE`. */
export const H5T_SGN_NONE = 0;
/** HDF5 1.10 constant `H5T_ORDER_BE`. */
export const H5T_ORDER_BE = 1;

/** The loaded library and the predefined ids read after H5open. */
export interface Hdf5 {
  readonly fn: H5Lib;
  readonly path: string;
  readonly version: string;
  /** Native memory type of each dtype. */
  readonly native: Readonly<Record<DType, bigint>>;
  /** File type of each dtype in each byte order. */
  readonly fileType: Readonly<Record<ByteOrder, Readonly<Record<DType, bigint>>>>;
  readonly fileCreate: bigint;
  readonly groupCreate: bigint;
  readonly datasetCreate: bigint;
  /** The dataset access property class (for a dataset opened without a chunk cache). */
  readonly datasetAccess: bigint;
  /** The file access property class (a file opened through the MPI-IO driver). */
  readonly fileAccess: bigint;
  /** The data transfer property class (collective or independent MPI-IO reads and writes). */
  readonly datasetXfer: bigint;
}

let state: Hdf5 | string | undefined;

function readId(p: Deno.PointerValue): bigint {
  if (p === null) return -1n;
  return new Deno.UnsafePointerView(p).getBigInt64();
}

/** The loaded library, or the reason it cannot be loaded (tried once, cached). */
export function load(): Hdf5 | string {
  if (state !== undefined) return state;
  return (state = openHdf5("HDF5", HDF5_SONAMES, HDF5_ENV));
}

/**
 * Loads an HDF5 build (the serial one, or one built for an MPI library) by `envVar` or the
 * first of `sonames` that opens, and reads its predefined ids after H5open; the reason in one
 * line when it cannot. `label` names it in messages and in the run's list of loaded libraries.
 * Each build is loaded once by its caller, which caches the result.
 */
export function openHdf5(label: string, sonames: readonly string[], envVar: string): Hdf5 | string {
  const loaded = loadLibrary(label, sonames, envVar, SYMBOLS);
  if (!loaded.ok) return loaded.reason;
  const fn = loaded.symbols;
  // No exit handler: every file sciobench opens is closed explicitly, and H5_term_library at
  // exit crashed (SIGSEGV in H5F__close_cb) on a file a failed close left half open (ENOSPC).
  fn.H5dont_atexit();
  // Where external raw-data files are is decided from the file's directory (external.ts), not
  // by an environment variable that overrides it at each H5Dopen.
  try {
    Deno.env.delete("HDF5_EXTFILE_PREFIX");
  } catch {
    // no --allow-env: the library sees the variable, external.ts still checks the paths it names
  }
  if (fn.H5open() < 0) return `${label} library ${loaded.path}: H5open failed`;
  fn.H5Eset_auto2(H5E_DEFAULT, null, null);
  const v = new Uint32Array(3);
  fn.H5get_libversion(v.subarray(0, 1), v.subarray(1, 2), v.subarray(2, 3));
  const g = (name: keyof typeof SYMBOLS) => readId(fn[name] as Deno.PointerValue);
  const native: Record<DType, bigint> = {
    int8: g("H5T_NATIVE_SCHAR_g"),
    uint8: g("H5T_NATIVE_UCHAR_g"),
    char: g("H5T_NATIVE_UCHAR_g"),
    int16: g("H5T_NATIVE_SHORT_g"),
    uint16: g("H5T_NATIVE_USHORT_g"),
    int32: g("H5T_NATIVE_INT_g"),
    uint32: g("H5T_NATIVE_UINT_g"),
    int64: g("H5T_NATIVE_LLONG_g"),
    uint64: g("H5T_NATIVE_ULLONG_g"),
    float32: g("H5T_NATIVE_FLOAT_g"),
    float64: g("H5T_NATIVE_DOUBLE_g"),
  };
  const big: Record<DType, bigint> = {
    int8: g("H5T_STD_I8BE_g"),
    uint8: g("H5T_STD_U8BE_g"),
    char: g("H5T_STD_U8BE_g"),
    int16: g("H5T_STD_I16BE_g"),
    uint16: g("H5T_STD_U16BE_g"),
    int32: g("H5T_STD_I32BE_g"),
    uint32: g("H5T_STD_U32BE_g"),
    int64: g("H5T_STD_I64BE_g"),
    uint64: g("H5T_STD_U64BE_g"),
    float32: g("H5T_IEEE_F32BE_g"),
    float64: g("H5T_IEEE_F64BE_g"),
  };
  const little: Record<DType, bigint> = {
    int8: g("H5T_STD_I8LE_g"),
    uint8: g("H5T_STD_U8LE_g"),
    char: g("H5T_STD_U8LE_g"),
    int16: g("H5T_STD_I16LE_g"),
    uint16: g("H5T_STD_U16LE_g"),
    int32: g("H5T_STD_I32LE_g"),
    uint32: g("H5T_STD_U32LE_g"),
    int64: g("H5T_STD_I64LE_g"),
    uint64: g("H5T_STD_U64LE_g"),
    float32: g("H5T_IEEE_F32LE_g"),
    float64: g("H5T_IEEE_F64LE_g"),
  };
  const lib: Hdf5 = {
    fn,
    path: loaded.path,
    version: `${v[0]}.${v[1]}.${v[2]}`,
    native,
    fileType: { big, little },
    fileCreate: g("H5P_CLS_FILE_CREATE_ID_g"),
    groupCreate: g("H5P_CLS_GROUP_CREATE_ID_g"),
    datasetCreate: g("H5P_CLS_DATASET_CREATE_ID_g"),
    datasetAccess: g("H5P_CLS_DATASET_ACCESS_ID_g"),
    fileAccess: g("H5P_CLS_FILE_ACCESS_ID_g"),
    datasetXfer: g("H5P_CLS_DATASET_XFER_ID_g"),
  };
  if ([...Object.values(native), lib.datasetCreate].some((id) => id < 0n)) {
    return `${label} library ${loaded.path}: predefined ids still invalid after H5open`;
  }
  recordLoaded(label, lib.path, lib.version);
  return lib;
}

/** The loaded library; PeerUnavailableError when it cannot be loaded. */
export function h5(): Hdf5 {
  const s = load();
  if (typeof s === "string") throw new PeerUnavailableError(`${NAME}: ${s}`);
  return s;
}

// ---- error stack ---------------------------------------------------------------------------

interface StackEntry {
  readonly func: string;
  readonly desc: string;
  readonly minor: string;
}

let walked: StackEntry[] = [];
/** One error-stack walker per loaded build (each asks its own library for message texts). */
const WALK = { parameters: ["u32", "pointer", "pointer"], result: "i32" } as const;
const walkers = new Map<Hdf5, Deno.UnsafeCallback<typeof WALK>>();
const msgBuf = new Uint8Array(256);

function errorWalker(lib: Hdf5) {
  const have = walkers.get(lib);
  if (have) return have;
  const walker = new Deno.UnsafeCallback(
    WALK,
    (_n, desc) => {
      if (desc === null) return 0;
      const v = new Deno.UnsafePointerView(desc);
      const minorId = v.getBigInt64(16);
      const func = cStringAt(v.getPointer(32));
      const text = cStringAt(v.getPointer(48));
      let minor = "";
      if (Number(lib.fn.H5Eget_msg(minorId, null, msgBuf, BigInt(msgBuf.length))) > 0) {
        minor = decodeCBuffer(msgBuf);
      }
      walked.push({ func, desc: text, minor });
      return 0;
    },
  );
  walkers.set(lib, walker);
  return walker;
}

/** A one-line summary of the current HDF5 error stack (outermost call, innermost cause); clears it. */
export function errorSummary(lib: Hdf5): string {
  walked = [];
  try {
    lib.fn.H5Ewalk2(H5E_DEFAULT, H5E_WALK_UPWARD, errorWalker(lib).pointer, null);
  } finally {
    lib.fn.H5Eclear2(H5E_DEFAULT);
  }
  const entries = walked;
  walked = [];
  if (entries.length === 0) return "no HDF5 error detail";
  const inner = entries[0]!;
  const outer = entries[entries.length - 1]!;
  const innerText = [inner.desc, inner.minor].filter((s) => s !== "").join(": ");
  if (entries.length === 1) return oneLineText(`${outer.func}: ${innerText}`);
  return oneLineText(`${outer.func}: ${outer.desc} (${inner.func}: ${innerText})`);
}

/**
 * Throws FormatError (exit 2) naming the file, the call and the HDF5 error summary when `id` is
 * negative: a library call that fails on a file being read means the file is damaged.
 */
export function checkFile(lib: Hdf5, id: bigint | number, call: string, path: string): bigint {
  const v = BigInt(id);
  if (v < 0n) {
    throw new FormatError(
      NAME,
      path,
      -1,
      `the file is damaged: ${call} failed: ${errorSummary(lib)}`,
    );
  }
  return v;
}

/** Throws IoError naming the call and the HDF5 error summary when `id` is negative. */
export function check(lib: Hdf5, id: bigint | number, call: string, path: string): bigint {
  const v = BigInt(id);
  if (v < 0n) throw libraryFailure(NAME, path, call, errorSummary(lib));
  return v;
}

/** Number of HDF5 objects (files, datasets, groups, types, attributes) open in this process. */
export function hdf5OpenObjects(): number {
  const lib = h5();
  return Number(lib.fn.H5Fget_obj_count(BigInt(H5F_OBJ_ALL), H5F_OBJ_ALL));
}

/** HDF5 library version such as `1.10.8`, or null when the library is not available. */
export function hdf5Version(): string | null {
  const s = load();
  return typeof s === "string" ? null : s.version;
}

/**
 * Closes every id of `ids` with its close function, ignoring failures (used on error paths,
 * where the first error is the one to report).
 */
export function closeAll(closers: readonly (() => unknown)[]): void {
  for (const c of closers) {
    try {
      c();
    } catch {
      // keep closing the rest
    }
  }
}

// ---- paths ---------------------------------------------------------------------------------

/** Splits a chunk name into HDF5 path components; throws IoError for empty components. */
export function components(name: string, path: string): string[] {
  const parts = name.split("/").filter((p) => p !== "");
  if (parts.length === 0 || parts.some((p) => p === "." || p === "..")) {
    throw new IoError(`${NAME}: ${path}: chunk name '${name}' is not a usable HDF5 dataset path`);
  }
  return parts;
}

const versionParts = new Uint32Array(3);

/**
 * Calls `H5get_libversion` once (three out-parameters, i32 result): a trivial library call for
 * measuring FFI overhead in bench/ffi_bench.ts. Returns the major version.
 */
export function hdf5LibversionCall(): number {
  const fn = h5().fn;
  fn.H5get_libversion(
    versionParts.subarray(0, 1),
    versionParts.subarray(1, 2),
    versionParts.subarray(2, 3),
  );
  return versionParts[0]!;
}

/**
 * Loads the HDF5 library (when present) so its exit handler is never installed; the netCDF peer
 * calls this before libnetcdf's first call, as libnetcdf runs on the same libhdf5.
 */
export function prepareHdf5(): void {
  load();
}
