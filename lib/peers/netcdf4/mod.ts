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
 * @module
 */
import { FormatError, IoError, PeerUnavailableError, UsageError } from "../../core/errors.ts";
import type { DType, Frame, OptionSpec } from "../../framings/types.ts";
import { WRITING_WORKLOADS } from "../../framings/types.ts";
import { DTYPE_SIZE } from "../../framings/types.ts";
import type {
  Backend,
  DatasetInfo,
  FrameSink,
  FrameSource,
  ReadChunk,
  SinkOptions,
} from "../../backends/backend.ts";
import { cString } from "../../sys/libc.ts";
import {
  allocFrameBuffer,
  checkChunkBytes,
  checkFrameCount,
  checkSameLayout,
  cStringAt,
  decodeCBuffer,
  libraryFailure,
  loadLibrary,
  oneLineText,
  recordLoaded,
  refuseExisting,
} from "../common.ts";
import {
  HDF5_SIGNATURE,
  hdf5SuperblockVersion,
  netcdf4Datasets,
  type NetcdfDatasets,
  type ReadRegion,
} from "../hdf5/mod.ts";
import { prepareHdf5 } from "../hdf5/bindings.ts";
import { CHUNK_NAME_ATTR, NETCDF_OPTIONS, schemaForChunks } from "../../framings/netcdf/mod.ts";
import { requireFile } from "../../io/file.ts";
import { PeerSink } from "../common.ts";

/** Sonames tried in order when `SCIOBENCH_NETCDF_LIB` is not set. */
export const NETCDF_SONAMES: readonly string[] = ["libnetcdf.so.19", "libnetcdf.so"];

/** Environment variable naming the netCDF-C shared library; tried before the sonames when set. */
export const NETCDF_ENV = "SCIOBENCH_NETCDF_LIB";

const SYMBOLS = {
  nc_inq_libvers: { parameters: [], result: "pointer" },
  nc_strerror: { parameters: ["i32"], result: "pointer" },
  nc_create: { parameters: ["buffer", "i32", "buffer"], result: "i32" },
  nc_open: { parameters: ["buffer", "i32", "buffer"], result: "i32" },
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
  nc_inq_format: { parameters: ["i32", "buffer"], result: "i32" },
  nc_inq_dim: { parameters: ["i32", "i32", "buffer", "buffer"], result: "i32" },
  nc_inq_var: {
    parameters: ["i32", "i32", "buffer", "buffer", "buffer", "buffer", "buffer"],
    result: "i32",
  },
  nc_inq_var_endian: { parameters: ["i32", "i32", "buffer"], result: "i32" },
  nc_inq_grp_full_ncid: { parameters: ["i32", "buffer", "buffer"], result: "i32" },
  nc_inq_varid: { parameters: ["i32", "buffer", "buffer"], result: "i32" },
  nc_inq_att: { parameters: ["i32", "i32", "buffer", "buffer", "buffer"], result: "i32" },
  nc_get_att_text: { parameters: ["i32", "i32", "buffer", "buffer"], result: "i32" },
  nc_put_att_text: { parameters: ["i32", "i32", "buffer", "usize", "buffer"], result: "i32" },
} as const;

type NcLib = Deno.DynamicLibrary<typeof SYMBOLS>["symbols"];

// Constants from netcdf.h 4.9.0 (ffi.md §5.2).
const NC_NOWRITE = 0;
const NC_CLOBBER = 0;
const NC_NOCLOBBER = 0x4;
const NC_64BIT_DATA = 0x20;
const NC_64BIT_OFFSET = 0x200;
const NC_NETCDF4 = 0x1000;
const NC_NOFILL = 0x100;
const NC_FILL = 0;
const NC_GLOBAL = -1;
const NC_CHUNKED = 0;
const NC_ENDIAN_LITTLE = 1;
const NC_ENDIAN_BIG = 2;
const NC_MAX_NAME = 256;
const NC_MAX_VAR_DIMS = 1024;

const NC_TYPE: Readonly<Record<DType, number>> = {
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

const DTYPE_OF_NC: Readonly<Record<number, DType>> = Object.fromEntries(
  Object.entries(NC_TYPE).map(([k, v]) => [v, k as DType]),
);

const FORMAT_NAMES: Readonly<Record<number, string>> = {
  1: "classic (CDF-1)",
  2: "64-bit offset (CDF-2)",
  3: "netCDF-4",
  4: "netCDF-4 classic model",
  5: "64-bit data (CDF-5)",
};

interface NetCdf {
  readonly fn: NcLib;
  readonly path: string;
  readonly version: string;
}

let state: NetCdf | string | undefined;

function load(): NetCdf | string {
  if (state !== undefined) return state;
  prepareHdf5(); // before libnetcdf initialises HDF5: no HDF5 exit handler (see hdf5/bindings.ts)
  const loaded = loadLibrary("netCDF-C", NETCDF_SONAMES, NETCDF_ENV, SYMBOLS);
  if (!loaded.ok) return (state = loaded.reason);
  const fn = loaded.symbols;
  const version = cStringAt(fn.nc_inq_libvers()).split(" ")[0] ?? "unknown";
  recordLoaded("netCDF-C", loaded.path, version);
  return (state = { fn, path: loaded.path, version });
}

function nc(backend: string): NetCdf {
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
function strerror(lib: NetCdf, status: number): string {
  return oneLineText(cStringAt(lib.fn.nc_strerror(status)));
}

/** Throws IoError with the library's message when `status` is not NC_NOERR. */
function check(lib: NetCdf, backend: string, status: number, call: string, path: string): void {
  if (status !== 0) {
    throw libraryFailure(backend, path, call, `${strerror(lib, status)} (status ${status})`);
  }
}

// ---- writer --------------------------------------------------------------------------------

/** Which file the writer creates. */
type Variant = "netcdf4" | "cdf1" | "cdf2" | "cdf5";

/** The classic variant option (1, 2, 5; checked against its declaration) as the file to create. */
function classicVariant(options: Readonly<Record<string, unknown>> | undefined): Variant {
  const v = options?.variant;
  return v === 2 ? "cdf2" : v === 5 ? "cdf5" : "cdf1";
}

/** Options both libnetcdf peers take: the native netcdf framing's `fill` and `recordDim`. */
const NC_PEER_OPTIONS: readonly OptionSpec[] = NETCDF_OPTIONS.filter((o) =>
  o.name === "fill" || o.name === "recordDim"
);

interface WriteVar {
  readonly name: string;
  readonly dtype: DType;
  readonly shape: readonly number[];
  readonly varid: number;
  readonly start: BigUint64Array;
  readonly count: BigUint64Array;
}

class NcSink extends PeerSink {
  #lib: NetCdf;
  #ncid: number;
  #variant: Variant;
  #endian: "big" | "little" | "native";
  #recordDim: string;
  #vars: WriteVar[] = [];
  #frames = 0;

  constructor(backend: string, lib: NetCdf, variant: Variant, path: string, options: SinkOptions) {
    super(backend, path, options.fsync);
    this.#lib = lib;
    this.#variant = variant;
    const endian = options.endian ?? "native";
    if (variant !== "netcdf4" && endian === "little") {
      throw new UsageError(`${backend}: netCDF classic files are always big-endian`);
    }
    this.#endian = endian;
    const fill = options.backendOptions?.fill === true;
    const rd = options.backendOptions?.recordDim;
    // (a name the framing's option rule allows: checked before the writer is opened)
    this.#recordDim = typeof rd === "string" ? rd : "record";
    refuseExisting(backend, path, options.create);
    const mode = (options.create === "new" ? NC_NOCLOBBER : NC_CLOBBER) |
      { netcdf4: NC_NETCDF4, cdf1: 0, cdf2: NC_64BIT_OFFSET, cdf5: NC_64BIT_DATA }[variant];
    const id = new Int32Array(1);
    check(lib, backend, lib.fn.nc_create(cString(path), mode, id), "nc_create", path);
    this.#ncid = id[0]!;
    try {
      check(
        lib,
        backend,
        lib.fn.nc_set_fill(this.#ncid, fill ? NC_FILL : NC_NOFILL, id),
        "nc_set_fill",
        path,
      );
    } catch (e) {
      this.abort();
      throw e;
    }
  }

  #define(frame: Frame): void {
    const lib = this.#lib;
    const fn = lib.fn;
    const ncid = this.#ncid;
    const id = new Int32Array(1);
    const at = (call: string, status: number) => check(lib, this.backend, status, call, this.path);
    // The native writer's mapping (the contract that keeps netcdf and netcdf-lib byte-identical).
    const schema = schemaForChunks(frame.chunks, { recordDim: this.#recordDim, variant: 1 });
    const dimIds = new Int32Array(schema.dimensions.length);
    schema.dimensions.forEach((d, k) => {
      at(`nc_def_dim '${d.name}'`, fn.nc_def_dim(ncid, cString(d.name), BigInt(d.length), id));
      dimIds[k] = id[0]!;
    });
    frame.chunks.forEach((chunk, i) => {
      const v = schema.variables[i]!;
      const ids = Int32Array.from(v.dims, (k) => dimIds[k]!);
      at(
        `nc_def_var '${v.name}'`,
        fn.nc_def_var(ncid, cString(v.name), NC_TYPE[chunk.dtype], ids.length, ids, id),
      );
      const varid = id[0]!;
      const original = v.attributes.find((a) => a.name === CHUNK_NAME_ATTR)?.values;
      if (typeof original === "string") {
        const text = new TextEncoder().encode(original);
        at(
          `nc_put_att_text '${CHUNK_NAME_ATTR}'`,
          fn.nc_put_att_text(ncid, varid, cString(CHUNK_NAME_ATTR), BigInt(text.length), text),
        );
      }
      const count = new BigUint64Array(ids.length);
      count[0] = 1n;
      chunk.shape.forEach((d, k) => (count[k + 1] = BigInt(d)));
      if (this.#variant === "netcdf4") {
        at("nc_def_var_chunking", fn.nc_def_var_chunking(ncid, varid, NC_CHUNKED, count));
        if (this.#endian !== "native") {
          const e = this.#endian === "big" ? NC_ENDIAN_BIG : NC_ENDIAN_LITTLE;
          at("nc_def_var_endian", fn.nc_def_var_endian(ncid, varid, e));
        }
      }
      this.#vars.push({
        name: chunk.name,
        dtype: chunk.dtype,
        shape: [...chunk.shape],
        varid,
        start: new BigUint64Array(ids.length),
        count,
      });
    });
    at("nc_enddef", fn.nc_enddef(ncid));
  }

  writeFrame(frame: Frame): void {
    this.checkOpen();
    checkChunkBytes(this.backend, this.path, this.#frames, frame.chunks);
    if (this.#frames === 0) this.#define(frame);
    else checkSameLayout(this.backend, this.path, this.#frames, this.#vars, frame.chunks);
    const lib = this.#lib;
    const f = BigInt(this.#frames);
    for (let i = 0; i < this.#vars.length; i++) {
      const v = this.#vars[i]!;
      v.start[0] = f;
      const status = lib.fn.nc_put_vara(
        this.#ncid,
        v.varid,
        v.start,
        v.count,
        frame.chunks[i]!.data,
      );
      if (status !== 0) {
        check(
          lib,
          this.backend,
          status,
          `nc_put_vara '${v.name}' frame ${this.#frames}`,
          this.path,
        );
      }
    }
    this.#frames++;
  }

  protected closeFile(): void {
    const lib = this.#lib;
    let closed = false;
    try {
      if (this.fsync) check(lib, this.backend, lib.fn.nc_sync(this.#ncid), "nc_sync", this.path);
      closed = true;
      check(lib, this.backend, lib.fn.nc_close(this.#ncid), "nc_close", this.path);
    } finally {
      if (!closed) closeAfterError(lib, this.#ncid);
    }
  }

  protected releaseFile(): void {
    closeAfterError(this.#lib, this.#ncid);
  }
}

/**
 * Closes a file after a failed write: `nc_close` first; when that fails too (a full disk), the
 * library still holds the file, so `nc_abort` releases it.
 */
function closeAfterError(lib: NetCdf, ncid: number): void {
  if (lib.fn.nc_close(ncid) !== 0) lib.fn.nc_abort(ncid);
}

// ---- reader --------------------------------------------------------------------------------

interface ReadVar {
  readonly name: string;
  readonly variable: string;
  readonly dtype: DType;
  readonly shape: readonly number[];
  readonly dims: readonly string[];
  readonly varid: number;
  readonly endian: string;
  readonly start: BigUint64Array;
  readonly count: BigUint64Array;
  readonly buf: Uint8Array<ArrayBuffer>;
}

/** A netCDF-4 variable read through libnetcdf: its group's id, its id, and its shape there. */
interface LibraryVar {
  readonly name: string;
  readonly ncid: number;
  readonly varid: number;
  readonly shape: readonly number[];
}

class NcSource implements FrameSource {
  readonly path: string;
  readonly framing: string;
  readonly frameCount: number;
  readonly warnings: string[] = [];
  #lib: NetCdf;
  #ncid: number;
  #format = 0;
  #recordDim = "";
  #vars: ReadVar[] = [];
  #skipped: string[] = [];
  #h5: NetcdfDatasets | undefined;
  #closed = false;

  constructor(backend: string, lib: NetCdf, path: string) {
    this.framing = backend;
    this.#lib = lib;
    this.path = path;
    requireFile(path, backend);
    const id = new Int32Array(1);
    const status = lib.fn.nc_open(cString(path), NC_NOWRITE, id);
    if (status !== 0) {
      const text = `${strerror(lib, status)} (status ${status})`;
      if (status > 0) throw new IoError(`${backend}: ${path}: nc_open failed: ${text}`);
      throw new FormatError(backend, path, -1, `the netCDF library cannot open it: ${text}`);
    }
    this.#ncid = id[0]!;
    try {
      this.frameCount = this.#scan();
    } catch (e) {
      this.close();
      throw e;
    }
  }

  #scan(): number {
    const lib = this.#lib;
    const fn = lib.fn;
    const ncid = this.#ncid;
    const at = (call: string, status: number) => check(lib, this.framing, status, call, this.path);
    const fmt = new Int32Array(1);
    at("nc_inq_format", fn.nc_inq_format(ncid, fmt));
    this.#format = fmt[0]!;
    const ndims = new Int32Array(1);
    const nvars = new Int32Array(1);
    const natts = new Int32Array(1);
    const unlim = new Int32Array(1);
    at("nc_inq", fn.nc_inq(ncid, ndims, nvars, natts, unlim));
    const netcdf4 = this.#format === 3 || this.#format === 4;
    if (unlim[0]! < 0) {
      // No frames: info lists the variables and read reads them by block (through HDF5).
      if (netcdf4) return 0;
      throw new FormatError(
        this.framing,
        this.path,
        -1,
        "no unlimited (record) dimension: no frames",
      );
    }
    const nameBuf = new Uint8Array(NC_MAX_NAME + 1);
    const len = new BigUint64Array(1);
    at("nc_inq_dim", fn.nc_inq_dim(ncid, unlim[0]!, nameBuf, len));
    this.#recordDim = decodeCBuffer(nameBuf);
    const records = Number(len[0]);
    checkFrameCount(this.framing, this.path, records);
    if (this.#format === 3 || this.#format === 4) {
      const t = new Int32Array(1);
      const n = new BigUint64Array(1);
      if (fn.nc_inq_att(ncid, NC_GLOBAL, cString("_NCProperties"), t, n) !== 0) {
        this.warnings.push(
          `${this.path}: no _NCProperties attribute: not written by netCDF-C 4.4.1 or later ` +
            `(read through libnetcdf anyway; --framing hdf5 reads it with HDF5 directly)`,
        );
      }
    }
    const xtype = new Int32Array(1);
    const rank = new Int32Array(1);
    const dimids = new Int32Array(NC_MAX_VAR_DIMS);
    const vatts = new Int32Array(1);
    const endian = new Int32Array(1);
    for (let varid = 0; varid < nvars[0]!; varid++) {
      at("nc_inq_var", fn.nc_inq_var(ncid, varid, nameBuf, xtype, rank, dimids, vatts));
      const variable = decodeCBuffer(nameBuf);
      const name = this.#chunkName(varid) ?? variable;
      if (rank[0]! < 1 || dimids[0] !== unlim[0]) {
        this.#skipped.push(`${variable} (not a record variable)`);
        continue;
      }
      const dtype = DTYPE_OF_NC[xtype[0]!];
      if (dtype === undefined) {
        this.#skipped.push(`${variable} (type ${xtype[0]})`);
        this.warnings.push(
          `${this.path}: skipping variable '${variable}' of netCDF type ${xtype[0]}`,
        );
        continue;
      }
      const shape: number[] = [];
      const dims: string[] = [];
      for (let k = 1; k < rank[0]!; k++) {
        at("nc_inq_dim", fn.nc_inq_dim(ncid, dimids[k]!, nameBuf, len));
        shape.push(Number(len[0]));
        dims.push(decodeCBuffer(nameBuf));
      }
      let order = "big";
      if (this.#format === 3 || this.#format === 4) {
        order = fn.nc_inq_var_endian(ncid, varid, endian) === 0 && endian[0] === NC_ENDIAN_BIG
          ? "big"
          : "little";
      }
      const count = new BigUint64Array(rank[0]!);
      count[0] = 1n;
      shape.forEach((d, k) => (count[k + 1] = BigInt(d)));
      let bytes = DTYPE_SIZE[dtype];
      for (const d of shape) bytes *= d;
      const buf = allocFrameBuffer(this.framing, this.path, name, bytes);
      this.#vars.push({
        name,
        variable,
        dtype,
        shape,
        dims,
        varid,
        endian: order,
        start: new BigUint64Array(rank[0]!),
        count,
        buf,
      });
    }
    if (this.#vars.length === 0) {
      if (netcdf4) return 0;
      throw new FormatError(this.framing, this.path, -1, "no record variable of a supported type");
    }
    return records;
  }

  /** The `chunk_name` text attribute of a variable, when present. */
  #chunkName(varid: number): string | undefined {
    const fn = this.#lib.fn;
    const type = new Int32Array(1);
    const len = new BigUint64Array(1);
    const attr = cString(CHUNK_NAME_ATTR);
    if (fn.nc_inq_att(this.#ncid, varid, attr, type, len) !== 0 || type[0] !== NC_TYPE.char) {
      return undefined;
    }
    if (Number(len[0]) > 65536) return undefined; // a forged length: not a chunk name
    const text = new Uint8Array(Number(len[0]) + 1);
    if (fn.nc_get_att_text(this.#ncid, varid, attr, text) !== 0) return undefined;
    return decodeCBuffer(text.subarray(0, Number(len[0])));
  }

  readFrame(frame: number): readonly ReadChunk[] {
    if (this.#closed) throw new IoError(`${this.framing}: ${this.path}: read after close`);
    const lib = this.#lib;
    const out: ReadChunk[] = [];
    for (const v of this.#vars) {
      v.start[0] = BigInt(frame);
      const status = lib.fn.nc_get_vara(this.#ncid, v.varid, v.start, v.count, v.buf);
      if (status !== 0) {
        check(lib, this.framing, status, `nc_get_vara '${v.variable}' frame ${frame}`, this.path);
      }
      out.push({ name: v.name, dtype: v.dtype, shape: v.shape, data: v.buf });
    }
    return out;
  }

  /**
   * The HDF5 view of a netCDF-4 file (variables as datasets; dimension-only datasets left out),
   * opened on first use; undefined for classic files.
   */
  #hdf5(): NetcdfDatasets | undefined {
    if (this.#format !== 3 && this.#format !== 4) return undefined;
    if (this.#closed) throw new IoError(`${this.framing}: ${this.path}: read after close`);
    return this.#h5 ??= netcdf4Datasets(this.path);
  }

  /**
   * Every variable of a netCDF-4 file in every group, with HDF5's storage facts and the shape
   * libnetcdf gives it: along an unlimited dimension that is the dimension's length, which is
   * more than HDF5's extent for a record variable written for fewer records, or never.
   */
  datasets(): readonly DatasetInfo[] {
    return this.#netcdfView().datasets;
  }

  readonly readRegion: ReadRegion = (index, start, count, into) => {
    const h = this.#hdf5();
    if (!h) throw new RangeError(`${this.path}: no datasets`);
    const v = this.#netcdfView().throughLibrary[index];
    if (v === undefined) {
      h.readRegion(index, start, count, into);
      return;
    }
    // records past HDF5's extent read as libnetcdf reads them: the variable's fill value
    const lib = this.#lib;
    const status = lib.fn.nc_get_vara(
      v.ncid,
      v.varid,
      BigUint64Array.from(start, BigInt),
      BigUint64Array.from(count, BigInt),
      into,
    );
    if (status !== 0) check(lib, this.framing, status, `nc_get_vara '${v.name}'`, this.path);
  };

  #view:
    | { datasets: readonly DatasetInfo[]; throughLibrary: (LibraryVar | undefined)[] }
    | undefined;

  /**
   * The HDF5 datasets with libnetcdf's shapes, and for each one whose shape differs (a record
   * variable shorter than its unlimited dimension) the variable that reads it through libnetcdf.
   */
  #netcdfView(): { datasets: readonly DatasetInfo[]; throughLibrary: (LibraryVar | undefined)[] } {
    if (this.#view) return this.#view;
    const h = this.#hdf5();
    const throughLibrary: (LibraryVar | undefined)[] = [];
    const datasets = (h?.datasets ?? []).map((d, i) => {
      const v = d.dtype ? this.#libraryVar(d.name) : undefined;
      if (
        v === undefined || v.shape.length !== d.shape.length ||
        v.shape.every((n, k) => n === d.shape[k])
      ) return d;
      throughLibrary[i] = v;
      return { ...d, shape: v.shape };
    });
    return (this.#view = { datasets, throughLibrary });
  }

  /** The variable at HDF5 path `name` (`grp/x`, no leading `/`) as libnetcdf sees it. */
  #libraryVar(name: string): LibraryVar | undefined {
    const fn = this.#lib.fn;
    const cut = name.lastIndexOf("/");
    const id = new Int32Array(1);
    let ncid = this.#ncid;
    if (cut >= 0) {
      if (fn.nc_inq_grp_full_ncid(this.#ncid, cString(`/${name.slice(0, cut)}`), id) !== 0) {
        return undefined;
      }
      ncid = id[0]!;
    }
    if (fn.nc_inq_varid(ncid, cString(name.slice(cut + 1)), id) !== 0) return undefined;
    const varid = id[0]!;
    const nameBuf = new Uint8Array(NC_MAX_NAME + 1);
    const xtype = new Int32Array(1);
    const rank = new Int32Array(1);
    const dimids = new Int32Array(NC_MAX_VAR_DIMS);
    const natts = new Int32Array(1);
    if (fn.nc_inq_var(ncid, varid, nameBuf, xtype, rank, dimids, natts) !== 0) return undefined;
    const len = new BigUint64Array(1);
    const shape: number[] = [];
    for (let k = 0; k < rank[0]!; k++) {
      if (fn.nc_inq_dim(ncid, dimids[k]!, nameBuf, len) !== 0) return undefined;
      shape.push(Number(len[0]));
    }
    return { name, ncid, varid, shape };
  }

  describe(): Record<string, unknown> {
    return {
      library: `netCDF-C ${this.#lib.version}`,
      format: FORMAT_NAMES[this.#format] ?? `format ${this.#format}`,
      record_dimension: this.#recordDim,
      variables: this.#vars.map((v) => ({
        name: v.variable,
        dtype: v.dtype,
        dims: [this.#recordDim, ...v.dims],
        shape: [this.frameCount, ...v.shape],
        endian: v.endian,
      })),
      ...(this.#skipped.length > 0 ? { skipped: this.#skipped } : {}),
    };
  }

  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#h5?.close();
    this.#lib.fn.nc_close(this.#ncid);
  }
}

// ---- backends ------------------------------------------------------------------------------

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
