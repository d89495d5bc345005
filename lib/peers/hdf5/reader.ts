/**
 * The HDF5 peer's reader: every dataset of a file (in creation order) as the chunks of frames
 * along its slowest dimension.
 * @module
 */
import type { DatasetInfo, FrameSource, ReadChunk } from "../../backends/backend.ts";
import { FormatError, IoError } from "../../core/errors.ts";
import type { DType, FrameIndex } from "../../framings/types.ts";
import { DTYPE_SIZE } from "../../framings/types.ts";
import { cString } from "../../sys/libc.ts";
import { allocFrameBuffer, checkFrameCount } from "../common.ts";
import type { Hdf5 } from "./bindings.ts";
import { Hdf5Catalog, openReadOnly, type ReadRegion } from "./catalog.ts";
import { frameChunkIndex } from "./chunks.ts";
import {
  accessList,
  checkExternal,
  groupLinks,
  H5O_TYPE_DATASET,
  H5O_TYPE_GROUP,
  objectInfo,
  unwritten,
} from "./walk.ts";
import {
  checkFile as check,
  H5_INDEX_CRT_ORDER,
  H5_INDEX_NAME,
  H5E_DEFAULT,
  H5L_TYPE_HARD,
  H5L_TYPE_SOFT,
  H5O_INFO_BASIC,
  H5P_CRT_ORDER_TRACKED,
  H5P_DEFAULT,
  H5S_NULL,
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
  readonly #allowExternal: boolean;
  #dapl: bigint | undefined;

  /** Opens `path`; `allowExternal` reads external raw-data files outside its directory. */
  constructor(lib: Hdf5, path: string, allowExternal = false) {
    this.#lib = lib;
    this.path = path;
    this.#allowExternal = allowExternal;
    requireFile(path, NAME);
    this.#file = openReadOnly(lib, path);
    try {
      this.#dapl = accessList(lib, path);
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
      readonly links: readonly { readonly name: string; readonly type: number }[];
      next: number;
    }
    const visited = new Set<bigint>([this.#address(root)]);
    const stack: Level[] = [];
    const enter = (id: bigint, prefix: string) => {
      let links;
      try {
        links = groupLinks(lib, id, this.#linkIndex(id), this.path);
      } catch (e) {
        fn.H5Gclose(id);
        throw e;
      }
      stack.push({ id, prefix, links, next: 0 });
    };
    const dapl = this.#dapl!;
    try {
      enter(root, "");
      while (stack.length > 0) {
        const level = stack[stack.length - 1]!;
        if (level.next >= level.links.length) {
          fn.H5Gclose(level.id);
          stack.pop();
          continue;
        }
        const link = level.links[level.next++]!;
        const name = link.name;
        const full = level.prefix ? `${level.prefix}/${name}` : name;
        if (link.type !== H5L_TYPE_HARD && link.type !== H5L_TYPE_SOFT) {
          this.#skipped.push(`${full} (an external link: not followed)`);
          continue;
        }
        const cname = cString(name);
        const found = objectInfo(lib, level.id, cname, dapl);
        if (found === undefined) {
          this.warnings.push(`${this.path}: cannot open '${full}' (a dangling link)`);
          continue;
        }
        if (found.type === H5O_TYPE_GROUP) {
          if (visited.has(found.address)) {
            this.#skipped.push(`${full} (a link to a group already listed)`);
            continue;
          }
          visited.add(found.address);
          if (stack.length >= 64) {
            throw new FormatError(NAME, this.path, -1, `groups nested deeper than 64 at '${full}'`);
          }
          const sub = check(
            lib,
            fn.H5Gopen2(level.id, cname, H5P_DEFAULT),
            `H5Gopen2 '${full}'`,
            this.path,
          );
          enter(sub, full);
          continue;
        }
        if (found.type !== H5O_TYPE_DATASET) continue;
        // Opened with the access list that decides where external raw data is looked for.
        const dset = check(
          lib,
          fn.H5Dopen2(level.id, cname, dapl),
          `H5Dopen2 '${full}'`,
          this.path,
        );
        let keep = false;
        try {
          keep = this.#addDataset(dset, full);
        } finally {
          if (!keep) fn.H5Dclose(dset);
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
      const nullSpace = fn.H5Sget_simple_extent_type(fspace) === H5S_NULL;
      fn.H5Sclose(fspace);
      this.#skipped.push(`${name} (${nullSpace ? "null dataspace" : "scalar"})`);
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
    try {
      // A frame count the file cannot hold: forged, or never written (one line, before more).
      checkFrameCount(NAME, this.path, Number(dims[0]));
    } catch (e) {
      fn.H5Sclose(fspace);
      throw e;
    }
    const empty = this.#unwritten(id, name, [...dims].map(Number));
    if (empty) {
      fn.H5Sclose(fspace);
      this.#skipped.push(`${name} (${empty}: not read)`);
      this.warnings.push(
        `dataset '${name}' is not read: ${empty} (its data would be the fill value, not bytes ` +
          `of the file)`,
      );
      return false;
    }
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

  /** Why dataset `id` holds no data of its own (see {@link unwritten}); checks external files. */
  #unwritten(id: bigint, name: string, dims: readonly number[]): string | undefined {
    const fn = this.#lib.fn;
    const dcpl = check(this.#lib, fn.H5Dget_create_plist(id), "H5Dget_create_plist", this.path);
    try {
      const external = checkExternal(this.#lib, dcpl, this.path, name, this.#allowExternal);
      const layout = fn.H5Pget_layout(dcpl);
      const c = new BigUint64Array(32);
      const n = layout === 2 ? fn.H5Pget_chunk(dcpl, 32, c) : 0;
      const chunk = n > 0 ? [...c.subarray(0, n)].map(Number) : undefined;
      const stored = Number(fn.H5Dget_storage_size(id));
      return unwritten(this.#lib, id, layout, dims, chunk, stored, external);
    } finally {
      fn.H5Pclose(dcpl);
    }
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

  /**
   * Where every frame's chunks lie in the file, from the library's chunk index (see
   * lib/peers/hdf5/chunks.ts): an index that reads them without the library. UsageError when a
   * frame dataset is filtered or not chunked by whole frames.
   */
  frameChunkIndex(): FrameIndex {
    if (this.#closed) throw new IoError(`${NAME}: ${this.path}: read after close`);
    const datasets = this.#sets.map((s) => ({
      name: s.name,
      dtype: s.dtype,
      shape: s.shape,
      order: s.fileType.endsWith("BE") ? "big" as const : "little" as const,
      id: s.id,
    }));
    return frameChunkIndex(this.#lib, this.path, datasets, this.frameCount);
  }

  #catalog(): Hdf5Catalog {
    if (this.#closed) throw new IoError(`${NAME}: ${this.path}: read after close`);
    return this.#cat ??= new Hdf5Catalog(this.#lib, this.path, {
      allowExternal: this.#allowExternal,
      skipUnwritten: true,
    });
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
      fn.H5Dclose(s.id);
    }
    this.#sets = [];
    this.#cat?.close();
    if (this.#dapl !== undefined) fn.H5Pclose(this.#dapl);
    fn.H5Fclose(this.#file);
  }
}
