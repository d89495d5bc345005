/**
 * The HDF5 peer's reader: every dataset of a file (in creation order) as the chunks of frames
 * along its slowest dimension.
 * @module
 */
import type { DatasetInfo, FrameSource, ReadChunk } from "../../backends/backend.ts";
import { FormatError, IoError } from "../../errors.ts";
import type { DType } from "../../framings/types.ts";
import { DTYPE_SIZE } from "../../framings/types.ts";
import { cString } from "../../sys/libc.ts";
import { allocFrameBuffer, checkFrameCount, decodeCBuffer } from "../common.ts";
import type { Hdf5 } from "./bindings.ts";
import { Hdf5Catalog, openReadOnly, type ReadRegion } from "./catalog.ts";
import {
  check,
  errorSummary,
  H5_INDEX_CRT_ORDER,
  H5_INDEX_NAME,
  H5_ITER_INC,
  H5E_DEFAULT,
  H5I_DATASET,
  H5I_GROUP,
  H5O_INFO_BASIC,
  H5P_CRT_ORDER_TRACKED,
  H5P_DEFAULT,
  H5S_SELECT_SET,
  H5S_UNLIMITED,
  H5T_FLOAT,
  H5T_INTEGER,
  H5T_ORDER_BE,
  H5T_SGN_NONE,
  NAME,
} from "./bindings.ts";
import { requireFile } from "../../io/file.ts";

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
  #cat: Hdf5Catalog | undefined;
  #closed = false;

  constructor(lib: Hdf5, path: string) {
    this.#lib = lib;
    this.path = path;
    requireFile(path, NAME);
    this.#file = openReadOnly(lib, path);
    try {
      const root = check(
        lib,
        lib.fn.H5Gopen2(this.#file, cString("/"), H5P_DEFAULT),
        "H5Gopen2 /",
        path,
      );
      this.#scan(root);
      // No frames: `info` still lists every dataset and `read` reads them by block.
      const counts = this.#sets.map((s) => s.frames);
      this.frameCount = counts.length === 0 ? 0 : Math.min(...counts);
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

  /** The file address of an object (H5Oget_info2, basic fields), or -1 when unknown. */
  #address(obj: bigint): bigint {
    const info = new BigUint64Array(32); // H5O_info_t of 1.10 (fileno, addr, type, rc, ...)
    if (this.#lib.fn.H5Oget_info2(obj, info, H5O_INFO_BASIC) < 0) {
      this.#lib.fn.H5Eclear2(H5E_DEFAULT);
      return -1n;
    }
    return BigInt.asIntN(64, info[1]!);
  }

  /** How a group lists its links: creation order when tracked (as we write), else by name. */
  #linkIndex(group: bigint): number {
    const fn = this.#lib.fn;
    let index = H5_INDEX_NAME;
    const gcpl = fn.H5Gget_create_plist(group);
    if (gcpl >= 0n) {
      const flags = new Uint32Array(1);
      if (fn.H5Pget_link_creation_order(gcpl, flags) >= 0 && (flags[0]! & H5P_CRT_ORDER_TRACKED)) {
        index = H5_INDEX_CRT_ORDER;
      }
      fn.H5Pclose(gcpl);
    } else fn.H5Eclear2(H5E_DEFAULT);
    return index;
  }

  /**
   * Walks the groups below `root` depth first, links in order, as h5ls does: with an explicit
   * stack (no recursion) and a set of visited object addresses, so a group that links to itself
   * or an ancestor is listed once. Takes ownership of `root`.
   */
  #scan(root: bigint): void {
    const lib = this.#lib;
    const fn = lib.fn;
    interface Level {
      readonly id: bigint;
      readonly prefix: string;
      readonly links: bigint;
      readonly index: number;
      next: bigint;
    }
    const visited = new Set<bigint>([this.#address(root)]);
    const stack: Level[] = [];
    const enter = (id: bigint, prefix: string) => {
      const info = new BigUint64Array(4);
      if (fn.H5Gget_info(id, info) < 0) {
        fn.H5Gclose(id);
        check(lib, -1, "H5Gget_info", this.path);
      }
      stack.push({ id, prefix, links: info[1]!, index: this.#linkIndex(id), next: 0n });
    };
    const dot = cString(".");
    const nameBuf = new Uint8Array(256);
    try {
      enter(root, "");
      while (stack.length > 0) {
        const level = stack[stack.length - 1]!;
        if (level.next >= level.links) {
          fn.H5Gclose(level.id);
          stack.pop();
          continue;
        }
        const i = level.next++;
        const get = (buf: Uint8Array) =>
          Number(
            fn.H5Lget_name_by_idx(
              level.id,
              dot,
              level.index,
              H5_ITER_INC,
              i,
              buf,
              BigInt(buf.length),
              H5P_DEFAULT,
            ),
          );
        const len = get(nameBuf);
        if (len < 0) check(lib, -1, "H5Lget_name_by_idx", this.path);
        let name = decodeCBuffer(nameBuf);
        if (len >= nameBuf.length) {
          if (len > 65536) {
            throw new FormatError(NAME, this.path, -1, `a link name of ${len} bytes`);
          }
          const big = new Uint8Array(len + 1);
          get(big);
          name = decodeCBuffer(big);
        }
        const full = level.prefix ? `${level.prefix}/${name}` : name;
        const obj = fn.H5Oopen(level.id, cString(name), H5P_DEFAULT);
        if (obj < 0n) {
          this.warnings.push(`${this.path}: cannot open '${full}': ${errorSummary(lib)}`);
          continue;
        }
        const kind = fn.H5Iget_type(obj);
        if (kind === H5I_GROUP) {
          const address = this.#address(obj);
          if (address >= 0n && visited.has(address)) {
            fn.H5Oclose(obj);
            this.#skipped.push(`${full} (a link to a group already listed)`);
            continue;
          }
          visited.add(address);
          if (stack.length >= 64) {
            fn.H5Oclose(obj);
            throw new FormatError(NAME, this.path, -1, `groups nested deeper than 64 at '${full}'`);
          }
          enter(obj, full);
          continue;
        }
        let keep = false;
        try {
          if (kind === H5I_DATASET) keep = this.#addDataset(obj, full);
        } finally {
          if (!keep) fn.H5Oclose(obj);
        }
      }
    } finally {
      for (const level of stack) fn.H5Gclose(level.id);
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
      // Listed by info (datasets()), not a frame chunk.
      this.#skipped.push(`${name} (${kind})`);
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
    const maxdims = new BigUint64Array(rank);
    fn.H5Sget_simple_extent_dims(fspace, dims, maxdims);
    if (maxdims[0] !== H5S_UNLIMITED) {
      // Frames grow along an unlimited dimension 0; other datasets are read by block.
      fn.H5Sclose(fspace);
      this.#skipped.push(`${name} (not extendible along dimension 0)`);
      return false;
    }
    const shape = [...dims.subarray(1)].map(Number);
    let bytes = DTYPE_SIZE[kind.dtype];
    for (const d of shape) bytes *= d;
    let buf: Uint8Array<ArrayBuffer>;
    try {
      // Sizes come from the file: checked before anything is allocated or read.
      checkFrameCount(NAME, this.path, Number(dims[0]));
      buf = allocFrameBuffer(NAME, this.path, name, bytes);
    } catch (e) {
      fn.H5Sclose(fspace);
      throw e;
    }
    const count = new BigUint64Array(dims);
    count[0] = 1n;
    const memspace = fn.H5Screate_simple(rank, count, null);
    if (memspace < 0n) {
      fn.H5Sclose(fspace);
      check(lib, memspace, "H5Screate_simple", this.path);
    }
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
      buf,
      frames: Number(dims[0]),
    });
    return true;
  }

  readFrame(frame: number): readonly ReadChunk[] {
    if (this.#closed) throw new IoError(`${NAME}: ${this.path}: read after close`);
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

  #catalog(): Hdf5Catalog {
    if (this.#closed) throw new IoError(`${NAME}: ${this.path}: read after close`);
    return this.#cat ??= new Hdf5Catalog(this.#lib, this.path);
  }

  /** Every dataset of the file, frames or not (see {@link Hdf5Catalog}). */
  datasets(): readonly DatasetInfo[] {
    return this.#catalog().datasets;
  }

  readonly readRegion: ReadRegion = (index, start, count, into) =>
    this.#catalog().readRegion(index, start, count, into);

  describe(): Record<string, unknown> {
    const cat = this.#catalog();
    return {
      library: `HDF5 ${this.#lib.version}`,
      ...(cat.links.length > 0 ? { links: cat.links } : {}),
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
    this.#cat?.close();
    fn.H5Fclose(this.#file);
  }
}
