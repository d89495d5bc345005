/**
 * The HDF5 peer's writer: one extendible dataset per chunk name, grown by one frame per frame
 * and written as one hyperslab.
 * @module
 */
import type { SinkOptions } from "../../backends/backend.ts";
import type { ByteOrder, DType, Frame } from "../../framings/types.ts";
import { cString } from "../../sys/libc.ts";
import { checkChunkBytes, checkSameLayout, libraryFailure, refuseExisting } from "../common.ts";
import type { Hdf5 } from "./bindings.ts";
import {
  check,
  closeAll,
  components,
  errorSummary,
  H5E_DEFAULT,
  H5F_ACC_EXCL,
  H5F_ACC_TRUNC,
  H5F_SCOPE_LOCAL,
  H5P_CRT_ORDER_INDEXED,
  H5P_CRT_ORDER_TRACKED,
  H5P_DEFAULT,
  H5S_SELECT_SET,
  H5S_UNLIMITED,
  NAME,
} from "./bindings.ts";
import { PeerSink } from "../common.ts";

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

/** An HDF5 file open for writing frames (see the hdf5 peer module documentation). */
export class Hdf5Sink extends PeerSink {
  #lib: Hdf5;
  #file: bigint;
  #order: ByteOrder;
  #sets: WriteSet[] = [];
  #groups: bigint[] = [];
  #frames = 0;

  constructor(lib: Hdf5, path: string, options: SinkOptions) {
    super(NAME, path, options.fsync);
    this.#lib = lib;
    this.#order = options.endian === "big" ? "big" : "little";
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
    this.checkOpen();
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

  protected closeFile(): void {
    const lib = this.#lib;
    let closed = false;
    try {
      if (this.#release() > 0) {
        throw libraryFailure(NAME, this.path, "closing datasets", errorSummary(lib));
      }
      if (this.fsync) {
        check(lib, lib.fn.H5Fflush(this.#file, H5F_SCOPE_LOCAL), "H5Fflush", this.path);
      }
      closed = true;
      check(lib, lib.fn.H5Fclose(this.#file), "H5Fclose", this.path);
    } finally {
      if (!closed) lib.fn.H5Fclose(this.#file);
    }
  }

  protected releaseFile(): void {
    this.#release();
    this.#lib.fn.H5Fclose(this.#file);
    this.#lib.fn.H5Eclear2(H5E_DEFAULT);
  }
}
