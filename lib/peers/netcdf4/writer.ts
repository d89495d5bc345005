/**
 * The netCDF peers' writer: a netCDF-4 or classic file created through libnetcdf, one record
 * variable per chunk along the unlimited record dimension (the native netcdf framing's schema).
 * @module
 */
import { UsageError } from "../../core/errors.ts";
import type { DType, Frame, OptionSpec } from "../../framings/types.ts";
import type { SinkOptions } from "../../backends/backend.ts";
import { cString } from "../../sys/libc.ts";
import { optionOrDefault } from "../../framings/options.ts";
import { checkChunkBytes, checkSameLayout, refuseExisting } from "../common.ts";
import { CHUNK_NAME_ATTR, NETCDF_OPTIONS, schemaForChunks } from "../../framings/netcdf/mod.ts";
import { PeerSink } from "../common.ts";

import {
  check,
  NC_64BIT_DATA,
  NC_64BIT_OFFSET,
  NC_CHUNKED,
  NC_CLOBBER,
  NC_ENDIAN_BIG,
  NC_ENDIAN_LITTLE,
  NC_FILL,
  NC_NETCDF4,
  NC_NOCLOBBER,
  NC_NOFILL,
  NC_TYPE,
  type NetCdf,
} from "./bindings.ts";

/** Which file the writer creates. */
export type Variant = "netcdf4" | "cdf1" | "cdf2" | "cdf5";

/** The classic variant option (1, 2, 5; checked against its declaration) as the file to create. */
export function classicVariant(options: Readonly<Record<string, unknown>> | undefined): Variant {
  const v = options?.variant;
  return v === 2 ? "cdf2" : v === 5 ? "cdf5" : "cdf1";
}

/** Options both libnetcdf peers take: the native netcdf framing's `fill` and `recordDim`. */
export const NC_PEER_OPTIONS: readonly OptionSpec[] = NETCDF_OPTIONS.filter((o) =>
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

/** A file written through libnetcdf: netCDF-4 or a classic variant. */
export class NcSink extends PeerSink {
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
    // (a name the framing's option rule allows: checked before the writer is opened)
    this.#recordDim = String(
      optionOrDefault(
        { name: backend, options: NC_PEER_OPTIONS },
        options.backendOptions,
        "recordDim",
      ),
    );
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
