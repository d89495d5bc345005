/**
 * The HDF5 peer's reader: every dataset of a file (in creation order) as the chunks of frames
 * along its slowest dimension.
 * @module
 */
import type { FrameSource, ReadChunk } from "../../backends/backend.ts";
import { FormatError, IoError } from "../../errors.ts";
import type { DType } from "../../framings/types.ts";
import { DTYPE_SIZE } from "../../framings/types.ts";
import { cString } from "../../sys/libc.ts";
import { allocChunk, decodeCBuffer, requireFile } from "../common.ts";
import type { Hdf5 } from "./bindings.ts";
import {
  check,
  errorSummary,
  H5_INDEX_CRT_ORDER,
  H5_INDEX_NAME,
  H5_ITER_INC,
  H5F_ACC_RDONLY,
  H5I_DATASET,
  H5I_GROUP,
  H5P_CRT_ORDER_TRACKED,
  H5P_DEFAULT,
  H5S_SELECT_SET,
  H5T_FLOAT,
  H5T_INTEGER,
  H5T_ORDER_BE,
  H5T_SGN_NONE,
  NAME,
} from "./bindings.ts";

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

/** An HDF5 file open for reading frames (see the hdf5 peer module documentation). */
export class Hdf5Source implements FrameSource {
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
