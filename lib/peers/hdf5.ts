/**
 * The `hdf5` peer: frames stored through the HDF5 C library (libhdf5, 1.10 on Debian 12) via
 * Deno FFI.
 *
 * Layout (what HDF5 users do for trajectories, as H5MD and h5py-based MD tools do): one dataset
 * per chunk name, at that name's path (`particles/position` is dataset `position` in group
 * `particles`), with the frame as the slowest dimension: shape (frames, ...chunk shape),
 * maximum shape (unlimited, ...chunk shape), chunked one frame per HDF5 chunk, grown by one
 * frame (`H5Dset_extent`) and written as one hyperslab per frame. Groups track link creation
 * order (as netCDF-4 does), so a reader lists chunks in write order. The file type is the
 * native type (little-endian here) or, with `endian: "big"`, the big-endian IEEE/STD type
 * (H5T_IEEE_F64BE ...), as in the 2003 netCDF-4 timing test; the library converts on write.
 * Steps are not stored.
 *
 * Library handles (`hid_t`) are 64-bit and kept as bigint. The predefined type ids are read
 * after `H5open` through their addresses (ffi.md §6.3). The automatic error printing is
 * silenced; failures become typed errors carrying a summary of the HDF5 error stack, and every
 * handle opened is closed, also on error.
 * @module
 */
import { FormatError, IoError, PeerUnavailableError } from "../errors.ts";
import type { ByteOrder, DType, Frame } from "../framings/types.ts";
import { DTYPE_SIZE } from "../framings/types.ts";
import type {
  Backend,
  FrameSink,
  FrameSource,
  ReadChunk,
  SinkOptions,
  SourceOptions,
} from "../backends/backend.ts";
import { cString } from "../sys/libc.ts";
import {
  allocChunk,
  checkChunkBytes,
  checkSameLayout,
  cStringAt,
  decodeCBuffer,
  fsyncPath,
  loadLibrary,
  refuseExisting,
  removeQuietly,
  requireFile,
} from "./common.ts";

const NAME = "hdf5";

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
} as const;

type H5Lib = Deno.DynamicLibrary<typeof SYMBOLS>["symbols"];

// Constants (HDF5 1.10 headers; checked with a C program against libhdf5_serial 1.10.8).
const H5P_DEFAULT = 0n;
const H5E_DEFAULT = 0n;
const H5S_SELECT_SET = 0;
const H5S_UNLIMITED = 0xffffffffffffffffn;
const H5F_ACC_RDONLY = 0;
const H5F_ACC_TRUNC = 2;
const H5F_ACC_EXCL = 4;
const H5F_SCOPE_LOCAL = 0;
const H5F_OBJ_ALL = 0x1f;
const H5P_CRT_ORDER_TRACKED = 1;
const H5P_CRT_ORDER_INDEXED = 2;
const H5_INDEX_NAME = 0;
const H5_INDEX_CRT_ORDER = 1;
const H5_ITER_INC = 0;
const H5E_WALK_UPWARD = 0;
const H5I_GROUP = 2;
const H5I_DATASET = 5;
const H5T_INTEGER = 0;
const H5T_FLOAT = 1;
const H5T_SGN_NONE = 0;
const H5T_ORDER_BE = 1;

/** The loaded library and the predefined ids read after H5open. */
interface Hdf5 {
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
}

let state: Hdf5 | string | undefined;

function readId(p: Deno.PointerValue): bigint {
  if (p === null) return -1n;
  return new Deno.UnsafePointerView(p).getBigInt64();
}

function load(): Hdf5 | string {
  if (state !== undefined) return state;
  const loaded = loadLibrary("HDF5", HDF5_SONAMES, HDF5_ENV, SYMBOLS);
  if (!loaded.ok) return (state = loaded.reason);
  const fn = loaded.symbols;
  if (fn.H5open() < 0) return (state = `HDF5 library ${loaded.path}: H5open failed`);
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
  };
  if ([...Object.values(native), lib.datasetCreate].some((id) => id < 0n)) {
    return (state = `HDF5 library ${loaded.path}: predefined ids still invalid after H5open`);
  }
  return (state = lib);
}

function h5(): Hdf5 {
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
let walker:
  | Deno.UnsafeCallback<{ parameters: ["u32", "pointer", "pointer"]; result: "i32" }>
  | undefined;
const msgBuf = new Uint8Array(256);

function errorWalker(lib: Hdf5) {
  if (walker) return walker;
  walker = new Deno.UnsafeCallback(
    { parameters: ["u32", "pointer", "pointer"], result: "i32" } as const,
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
  return walker;
}

/** A one-line summary of the current HDF5 error stack (outermost call, innermost cause); clears it. */
function errorSummary(lib: Hdf5): string {
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
  if (entries.length === 1) return `${outer.func}: ${innerText}`;
  return `${outer.func}: ${outer.desc} (${inner.func}: ${innerText})`;
}

/** Throws IoError naming the call and the HDF5 error summary when `id` is negative. */
function check(lib: Hdf5, id: bigint | number, call: string, path: string): bigint {
  const v = BigInt(id);
  if (v < 0n) throw new IoError(`${NAME}: ${path}: ${call} failed: ${errorSummary(lib)}`);
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
function closeAll(closers: readonly (() => unknown)[]): void {
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
function components(name: string, path: string): string[] {
  const parts = name.split("/").filter((p) => p !== "");
  if (parts.length === 0 || parts.some((p) => p === "." || p === "..")) {
    throw new IoError(`${NAME}: ${path}: chunk name '${name}' is not a usable HDF5 dataset path`);
  }
  return parts;
}

// ---- writer --------------------------------------------------------------------------------

interface WriteSet {
  readonly name: string;
  readonly dtype: DType;
  readonly shape: readonly number[];
  readonly id: bigint;
  readonly memspace: bigint;
  /** Current extent (frames, ...shape). */
  readonly extent: BigUint64Array;
  readonly start: BigUint64Array;
  readonly count: BigUint64Array;
}

class Hdf5Sink implements FrameSink {
  readonly path: string;
  #lib: Hdf5;
  #file: bigint;
  #order: ByteOrder;
  #fsync: boolean;
  #sets: WriteSet[] = [];
  #groups: bigint[] = [];
  #frames = 0;
  #done = false;

  constructor(lib: Hdf5, path: string, options: SinkOptions) {
    this.#lib = lib;
    this.path = path;
    this.#order = options.endian === "big" ? "big" : "little";
    this.#fsync = options.fsync ?? true;
    refuseExisting(NAME, path, options.create);
    const fn = lib.fn;
    const fcpl = check(lib, fn.H5Pcreate(lib.fileCreate), "H5Pcreate", path);
    try {
      check(
        lib,
        fn.H5Pset_link_creation_order(fcpl, H5P_CRT_ORDER_TRACKED | H5P_CRT_ORDER_INDEXED),
        "H5Pset_link_creation_order",
        path,
      );
      const flags = options.create === "new" ? H5F_ACC_EXCL : H5F_ACC_TRUNC;
      this.#file = check(
        lib,
        fn.H5Fcreate(cString(path), flags, fcpl, H5P_DEFAULT),
        "H5Fcreate",
        path,
      );
    } finally {
      fn.H5Pclose(fcpl);
    }
  }

  #group(parent: bigint, name: string, created: Map<string, bigint>, key: string): bigint {
    const have = created.get(key);
    if (have !== undefined) return have;
    const lib = this.#lib;
    const gcpl = check(lib, lib.fn.H5Pcreate(lib.groupCreate), "H5Pcreate", this.path);
    try {
      check(
        lib,
        lib.fn.H5Pset_link_creation_order(gcpl, H5P_CRT_ORDER_TRACKED | H5P_CRT_ORDER_INDEXED),
        "H5Pset_link_creation_order",
        this.path,
      );
      const g = check(
        lib,
        lib.fn.H5Gcreate2(parent, cString(name), H5P_DEFAULT, gcpl, H5P_DEFAULT),
        `H5Gcreate2 '${key}'`,
        this.path,
      );
      this.#groups.push(g);
      created.set(key, g);
      return g;
    } finally {
      lib.fn.H5Pclose(gcpl);
    }
  }

  #createLayout(frame: Frame): void {
    const lib = this.#lib;
    const fn = lib.fn;
    const groups = new Map<string, bigint>();
    for (const chunk of frame.chunks) {
      const parts = components(chunk.name, this.path);
      let loc = this.#file;
      for (let i = 0; i < parts.length - 1; i++) {
        loc = this.#group(loc, parts[i]!, groups, parts.slice(0, i + 1).join("/"));
      }
      const rank = chunk.shape.length + 1;
      const extent = new BigUint64Array(rank);
      const maxdims = new BigUint64Array(rank);
      const chunkDims = new BigUint64Array(rank);
      maxdims[0] = H5S_UNLIMITED;
      chunkDims[0] = 1n;
      chunk.shape.forEach((d, k) => {
        extent[k + 1] = BigInt(d);
        maxdims[k + 1] = BigInt(d);
        chunkDims[k + 1] = BigInt(Math.max(1, d));
      });
      const closers: (() => unknown)[] = [];
      try {
        const space = check(
          lib,
          fn.H5Screate_simple(rank, extent, maxdims),
          "H5Screate_simple",
          this.path,
        );
        closers.push(() => fn.H5Sclose(space));
        const dcpl = check(lib, fn.H5Pcreate(lib.datasetCreate), "H5Pcreate", this.path);
        closers.push(() => fn.H5Pclose(dcpl));
        check(lib, fn.H5Pset_chunk(dcpl, rank, chunkDims), "H5Pset_chunk", this.path);
        const id = check(
          lib,
          fn.H5Dcreate2(
            loc,
            cString(parts[parts.length - 1]!),
            lib.fileType[this.#order][chunk.dtype],
            space,
            H5P_DEFAULT,
            dcpl,
            H5P_DEFAULT,
          ),
          `H5Dcreate2 '${chunk.name}'`,
          this.path,
        );
        const memDims = new BigUint64Array(rank);
        memDims.set(extent);
        memDims[0] = 1n;
        let memspace: bigint;
        try {
          memspace = check(
            lib,
            fn.H5Screate_simple(rank, memDims, null),
            "H5Screate_simple",
            this.path,
          );
        } catch (e) {
          fn.H5Dclose(id);
          throw e;
        }
        this.#sets.push({
          name: chunk.name,
          dtype: chunk.dtype,
          shape: [...chunk.shape],
          id,
          memspace,
          extent,
          start: new BigUint64Array(rank),
          count: memDims,
        });
      } finally {
        closeAll(closers);
      }
    }
  }

  writeFrame(frame: Frame): void {
    if (this.#done) throw new IoError(`${NAME}: ${this.path}: write after close`);
    checkChunkBytes(NAME, this.path, this.#frames, frame.chunks);
    if (this.#frames === 0) this.#createLayout(frame);
    else checkSameLayout(NAME, this.path, this.#frames, this.#sets, frame.chunks);
    const lib = this.#lib;
    const fn = lib.fn;
    const f = BigInt(this.#frames);
    for (let i = 0; i < this.#sets.length; i++) {
      const set = this.#sets[i]!;
      const chunk = frame.chunks[i]!;
      set.extent[0] = f + 1n;
      check(lib, fn.H5Dset_extent(set.id, set.extent), "H5Dset_extent", this.path);
      const fspace = check(lib, fn.H5Dget_space(set.id), "H5Dget_space", this.path);
      try {
        set.start[0] = f;
        check(
          lib,
          fn.H5Sselect_hyperslab(fspace, H5S_SELECT_SET, set.start, null, set.count, null),
          "H5Sselect_hyperslab",
          this.path,
        );
        check(
          lib,
          fn.H5Dwrite(set.id, lib.native[set.dtype], set.memspace, fspace, H5P_DEFAULT, chunk.data),
          `H5Dwrite '${set.name}' frame ${this.#frames}`,
          this.path,
        );
      } finally {
        fn.H5Sclose(fspace);
      }
    }
    this.#frames++;
  }

  #release(): number {
    const fn = this.#lib.fn;
    let failures = 0;
    for (const s of this.#sets) {
      if (fn.H5Sclose(s.memspace) < 0) failures++;
      if (fn.H5Dclose(s.id) < 0) failures++;
    }
    for (const g of this.#groups) if (fn.H5Gclose(g) < 0) failures++;
    this.#sets = [];
    this.#groups = [];
    return failures;
  }

  close(): void {
    if (this.#done) return;
    this.#done = true;
    const lib = this.#lib;
    let closed = false;
    try {
      if (this.#release() > 0) {
        throw new IoError(`${NAME}: ${this.path}: closing datasets failed: ${errorSummary(lib)}`);
      }
      if (this.#fsync) {
        check(lib, lib.fn.H5Fflush(this.#file, H5F_SCOPE_LOCAL), "H5Fflush", this.path);
      }
      closed = true;
      check(lib, lib.fn.H5Fclose(this.#file), "H5Fclose", this.path);
    } finally {
      if (!closed) lib.fn.H5Fclose(this.#file);
    }
    if (this.#fsync) fsyncPath(this.path);
  }

  abort(): void {
    if (!this.#done) {
      this.#done = true;
      this.#release();
      this.#lib.fn.H5Fclose(this.#file);
      this.#lib.fn.H5Eclear2(H5E_DEFAULT);
    }
    removeQuietly(this.path);
  }
}

// ---- reader --------------------------------------------------------------------------------

interface ReadSet {
  readonly name: string;
  readonly dtype: DType;
  readonly shape: readonly number[];
  readonly fileType: string;
  readonly id: bigint;
  readonly fspace: bigint;
  readonly memspace: bigint;
  readonly start: BigUint64Array;
  readonly count: BigUint64Array;
  readonly buf: Uint8Array<ArrayBuffer>;
  readonly frames: number;
}

function dtypeOf(lib: Hdf5, type: bigint): { dtype: DType; order: string } | string {
  const fn = lib.fn;
  const cls = fn.H5Tget_class(type);
  const size = Number(fn.H5Tget_size(type));
  const order = fn.H5Tget_order(type) === H5T_ORDER_BE ? "BE" : "LE";
  if (cls === H5T_FLOAT) {
    if (size === 4) return { dtype: "float32", order: `IEEE_F32${order}` };
    if (size === 8) return { dtype: "float64", order: `IEEE_F64${order}` };
    return `a ${size}-byte float`;
  }
  if (cls === H5T_INTEGER) {
    const unsigned = fn.H5Tget_sign(type) === H5T_SGN_NONE;
    const bits = size * 8;
    const name = `${unsigned ? "uint" : "int"}${bits}`;
    if ([8, 16, 32, 64].includes(bits)) {
      return { dtype: name as DType, order: `STD_${unsigned ? "U" : "I"}${bits}${order}` };
    }
    return `a ${size}-byte integer`;
  }
  return `type class ${cls}`;
}

class Hdf5Source implements FrameSource {
  readonly path: string;
  readonly framing = NAME;
  readonly frameCount: number;
  readonly warnings: string[] = [];
  #lib: Hdf5;
  #file: bigint;
  #sets: ReadSet[] = [];
  #skipped: string[] = [];
  #closed = false;

  constructor(lib: Hdf5, path: string) {
    this.#lib = lib;
    this.path = path;
    requireFile(NAME, path);
    const id = lib.fn.H5Fopen(cString(path), H5F_ACC_RDONLY, H5P_DEFAULT);
    if (id < 0n) {
      throw new FormatError(
        NAME,
        path,
        -1,
        `the HDF5 library cannot open it: ${errorSummary(lib)}`,
      );
    }
    this.#file = id;
    try {
      const root = check(
        lib,
        lib.fn.H5Gopen2(this.#file, cString("/"), H5P_DEFAULT),
        "H5Gopen2 /",
        path,
      );
      try {
        this.#scan(root, "");
      } finally {
        lib.fn.H5Gclose(root);
      }
      if (this.#sets.length === 0) {
        throw new FormatError(NAME, path, -1, "no numeric dataset with a frame dimension found");
      }
      const counts = this.#sets.map((s) => s.frames);
      this.frameCount = Math.min(...counts);
      if (counts.some((c) => c !== this.frameCount)) {
        this.warnings.push(
          `${path}: datasets have different lengths along dimension 0 ` +
            `(${this.#sets.map((s) => `${s.name}: ${s.frames}`).join(", ")}); reading ` +
            `${this.frameCount} frames`,
        );
      }
    } catch (e) {
      this.close();
      throw e;
    }
  }

  /** Lists a group's links in creation order when tracked (as we write), else by name. */
  #scan(group: bigint, prefix: string): void {
    const lib = this.#lib;
    const fn = lib.fn;
    const info = new BigUint64Array(4);
    check(lib, fn.H5Gget_info(group, info), "H5Gget_info", this.path);
    const n = info[1]!;
    let index = H5_INDEX_NAME;
    const gcpl = fn.H5Gget_create_plist(group);
    if (gcpl >= 0n) {
      const flags = new Uint32Array(1);
      if (fn.H5Pget_link_creation_order(gcpl, flags) >= 0 && (flags[0]! & H5P_CRT_ORDER_TRACKED)) {
        index = H5_INDEX_CRT_ORDER;
      }
      fn.H5Pclose(gcpl);
    }
    const dot = cString(".");
    const nameBuf = new Uint8Array(256);
    for (let i = 0n; i < n; i++) {
      const get = (buf: Uint8Array) =>
        Number(
          fn.H5Lget_name_by_idx(
            group,
            dot,
            index,
            H5_ITER_INC,
            i,
            buf,
            BigInt(buf.length),
            H5P_DEFAULT,
          ),
        );
      let len = get(nameBuf);
      if (len < 0) check(lib, -1, "H5Lget_name_by_idx", this.path);
      let name = decodeCBuffer(nameBuf);
      if (len >= nameBuf.length) {
        const big = new Uint8Array(len + 1);
        len = get(big);
        name = decodeCBuffer(big);
      }
      const full = prefix ? `${prefix}/${name}` : name;
      const obj = fn.H5Oopen(group, cString(name), H5P_DEFAULT);
      if (obj < 0n) {
        this.warnings.push(`${this.path}: cannot open '${full}': ${errorSummary(lib)}`);
        continue;
      }
      let keep = false;
      try {
        const kind = fn.H5Iget_type(obj);
        if (kind === H5I_GROUP) this.#scan(obj, full);
        else if (kind === H5I_DATASET) keep = this.#addDataset(obj, full);
      } finally {
        if (!keep) fn.H5Oclose(obj);
      }
    }
  }

  /** Registers a dataset that has a frame dimension; returns true when it keeps the id. */
  #addDataset(id: bigint, name: string): boolean {
    const lib = this.#lib;
    const fn = lib.fn;
    // Dimension scales (netCDF-4 dimensions, coordinate arrays) are not frame data.
    if (fn.H5Aexists(id, cString("CLASS")) > 0) {
      this.#skipped.push(`${name} (dimension scale)`);
      return false;
    }
    const type = check(lib, fn.H5Dget_type(id), "H5Dget_type", this.path);
    let kind: ReturnType<typeof dtypeOf>;
    try {
      kind = dtypeOf(lib, type);
    } finally {
      fn.H5Tclose(type);
    }
    if (typeof kind === "string") {
      this.#skipped.push(`${name} (${kind})`);
      this.warnings.push(`${this.path}: skipping dataset '${name}': ${kind} is not supported`);
      return false;
    }
    const fspace = check(lib, fn.H5Dget_space(id), "H5Dget_space", this.path);
    const rank = fn.H5Sget_simple_extent_ndims(fspace);
    if (rank < 1) {
      fn.H5Sclose(fspace);
      this.#skipped.push(`${name} (scalar)`);
      return false;
    }
    const dims = new BigUint64Array(rank);
    fn.H5Sget_simple_extent_dims(fspace, dims, null);
    const count = new BigUint64Array(dims);
    count[0] = 1n;
    const memspace = fn.H5Screate_simple(rank, count, null);
    if (memspace < 0n) {
      fn.H5Sclose(fspace);
      check(lib, memspace, "H5Screate_simple", this.path);
    }
    const shape = [...dims.subarray(1)].map(Number);
    let bytes = DTYPE_SIZE[kind.dtype];
    for (const d of shape) bytes *= d;
    this.#sets.push({
      name,
      dtype: kind.dtype,
      shape,
      fileType: kind.order,
      id,
      fspace,
      memspace,
      start: new BigUint64Array(rank),
      count,
      buf: allocChunk(bytes),
      frames: Number(dims[0]),
    });
    return true;
  }

  readFrame(frame: number): readonly ReadChunk[] {
    if (this.#closed) throw new IoError(`${NAME}: ${this.path}: read after close`);
    if (!Number.isInteger(frame) || frame < 0 || frame >= this.frameCount) {
      throw new RangeError(`frame ${frame} outside [0, ${this.frameCount})`);
    }
    const lib = this.#lib;
    const fn = lib.fn;
    const out: ReadChunk[] = [];
    for (const s of this.#sets) {
      s.start[0] = BigInt(frame);
      check(
        lib,
        fn.H5Sselect_hyperslab(s.fspace, H5S_SELECT_SET, s.start, null, s.count, null),
        "H5Sselect_hyperslab",
        this.path,
      );
      check(
        lib,
        fn.H5Dread(s.id, lib.native[s.dtype], s.memspace, s.fspace, H5P_DEFAULT, s.buf),
        `H5Dread '${s.name}' frame ${frame}`,
        this.path,
      );
      out.push({ name: s.name, dtype: s.dtype, shape: s.shape, data: s.buf });
    }
    return out;
  }

  describe(): Record<string, unknown> {
    return {
      library: `HDF5 ${this.#lib.version}`,
      layout: "one dataset per chunk, frames along dimension 0",
      datasets: this.#sets.map((s) => ({
        name: s.name,
        dtype: s.dtype,
        fileType: `H5T_${s.fileType}`,
        shape: [s.frames, ...s.shape],
      })),
      ...(this.#skipped.length > 0 ? { skipped: this.#skipped } : {}),
    };
  }

  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    const fn = this.#lib.fn;
    for (const s of this.#sets) {
      fn.H5Sclose(s.memspace);
      fn.H5Sclose(s.fspace);
      fn.H5Oclose(s.id);
    }
    this.#sets = [];
    fn.H5Fclose(this.#file);
  }
}

// ---- detection -----------------------------------------------------------------------------

const HDF5_SIGNATURE = [0x89, 0x48, 0x44, 0x46, 0x0d, 0x0a, 0x1a, 0x0a];

/**
 * Byte offset of the HDF5 signature in `head` (0, 512, 1024, 2048 ...), or -1 when absent.
 */
export function hdf5SignatureOffset(head: Uint8Array): number {
  for (let off = 0; off + 8 <= head.length; off = off === 0 ? 512 : off * 2) {
    if (HDF5_SIGNATURE.every((b, i) => head[off + i] === b)) return off;
  }
  return -1;
}

/** HDF5 superblock version of a file's head (byte 8 after the signature), or -1 without one. */
export function hdf5SuperblockVersion(head: Uint8Array): number {
  const off = hdf5SignatureOffset(head);
  if (off < 0 || off + 9 > head.length) return -1;
  return head[off + 8]!;
}

/** The HDF5 peer backend (see the module documentation for the layout). */
export const hdf5: Backend = {
  name: NAME,
  description: "HDF5 C library (FFI): one extendible dataset per chunk, one frame per HDF5 chunk",
  kind: "peer",
  orders: ["little", "big"],
  unavailable(): string | null {
    const s = load();
    return typeof s === "string" ? s : null;
  },
  /** HDF5 files whose superblock is version 0 or 1; version 2+ (netCDF-4's) goes to `netcdf4`. */
  detect(head: Uint8Array): boolean {
    const v = hdf5SuperblockVersion(head);
    return v >= 0 && v < 2;
  },
  openWriter(path: string, options: SinkOptions): FrameSink {
    return new Hdf5Sink(h5(), path, options);
  },
  openReader(path: string, _options?: SourceOptions): FrameSource {
    return new Hdf5Source(h5(), path);
  },
};

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
