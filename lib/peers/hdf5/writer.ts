/**
 * The HDF5 peer's writer: one extendible dataset per chunk name, grown by one frame per frame
 * and written as one hyperslab.
 * @module
 */
import type { SinkOptions } from "../../backends/backend.ts";
import type { ByteOrder, Frame } from "../../framings/types.ts";
import { cString } from "../../sys/libc.ts";
import { checkChunkBytes, checkSameLayout, libraryFailure, refuseExisting } from "../common.ts";
import type { Hdf5 } from "./bindings.ts";
import {
  check,
  errorSummary,
  H5E_DEFAULT,
  H5F_ACC_EXCL,
  H5F_ACC_TRUNC,
  H5F_SCOPE_LOCAL,
  H5P_CRT_ORDER_INDEXED,
  H5P_CRT_ORDER_TRACKED,
  H5P_DEFAULT,
  H5S_UNLIMITED,
  NAME,
} from "./bindings.ts";
import { PeerSink } from "../common.ts";
import {
  createFrameDataset,
  type FrameDataset,
  type FrameExtent,
  frameSpace,
  type Groups,
} from "./datasets.ts";

// ---- writer --------------------------------------------------------------------------------

/** An HDF5 file open for writing frames (see the hdf5 peer module documentation). */
export class Hdf5Sink extends PeerSink {
  #lib: Hdf5;
  #file: bigint;
  #order: ByteOrder;
  #sets: FrameDataset[] = [];
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

  #createLayout(frame: Frame): void {
    const groups: Groups = { made: new Map(), open: this.#groups };
    const frames: FrameExtent = { frames: 0n, maxFrames: H5S_UNLIMITED, chunked: true };
    for (const chunk of frame.chunks) {
      const type = this.#lib.fileType[this.#order][chunk.dtype];
      this.#sets.push(
        createFrameDataset(this.#lib, this.#file, chunk, type, frames, groups, this.path),
      );
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
      const fspace = frameSpace(lib, set, f, this.path);
      try {
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
