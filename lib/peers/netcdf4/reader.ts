/**
 * The netCDF peers' reader: a file opened through libnetcdf, its record variables as the chunks
 * of its frames (netCDF-4 variables found through HDF5 where their layout allows direct reads).
 * @module
 */
import { FormatError, IoError } from "../../core/errors.ts";
import type { DType } from "../../framings/types.ts";
import { DTYPE_SIZE } from "../../framings/types.ts";
import type { DatasetInfo, FrameSource, ReadChunk } from "../../backends/backend.ts";
import { cString } from "../../sys/libc.ts";
import { allocFrameBuffer, checkFrameCount, decodeCBuffer } from "../common.ts";
import { netcdf4Datasets, type NetcdfDatasets, type ReadRegion } from "../hdf5/mod.ts";
import { CHUNK_NAME_ATTR } from "../../framings/netcdf/mod.ts";
import { requireFile } from "../../io/file.ts";

import {
  check,
  DTYPE_OF_NC,
  FORMAT_NAMES,
  NC_ENDIAN_BIG,
  NC_GLOBAL,
  NC_MAX_NAME,
  NC_MAX_VAR_DIMS,
  NC_NOWRITE,
  NC_TYPE,
  type NetCdf,
  strerror,
} from "./bindings.ts";

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

/** A file read through libnetcdf. */
export class NcSource implements FrameSource {
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
