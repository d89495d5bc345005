/**
 * The datasets the HDF5 writers (the serial `hdf5` peer, `hdf5-mpio`) create for a frame's
 * chunks: one dataset a chunk name, below groups made once each with their links in creation
 * order, frames along the first dimension.
 * @module
 */
import type { Chunk, DType } from "../../framings/types.ts";
import { cString } from "../../sys/libc.ts";
import {
  check,
  closeAll,
  components,
  H5P_CRT_ORDER_INDEXED,
  H5P_CRT_ORDER_TRACKED,
  H5P_DEFAULT,
  H5S_SELECT_SET,
  type Hdf5,
} from "./bindings.ts";

/** The groups one file's datasets are made below: each made once, kept open until the close. */
export interface Groups {
  /** Every group made, by its path (`a/b`). */
  readonly made: Map<string, bigint>;
  /** Every group made, in order, for the close. */
  readonly open: bigint[];
}

/** How a frame dataset extends along its first (frame) dimension. */
export interface FrameExtent {
  /** Frames the dataset holds when created. */
  readonly frames: bigint;
  /** Frames it may grow to (H5S_UNLIMITED for no limit). */
  readonly maxFrames: bigint;
  /** True for chunked storage (a frame a chunk), false for contiguous. */
  readonly chunked: boolean;
}

/** A frame dataset: its id and what a write of one frame selects. */
export interface FrameDataset {
  readonly name: string;
  readonly dtype: DType;
  readonly shape: readonly number[];
  readonly id: bigint;
  /** The memory space of one frame. */
  readonly memspace: bigint;
  /** The dataset's extent when created (frames, ...shape). */
  readonly extent: BigUint64Array;
  /** Where a frame's hyperslab starts (its first element set per frame). */
  readonly start: BigUint64Array;
  /** One frame's hyperslab count (1, ...shape). */
  readonly count: BigUint64Array;
}

/** The group `key` (made once, every rank in the same order), below `parent`. */
function group(
  lib: Hdf5,
  parent: bigint,
  name: string,
  groups: Groups,
  key: string,
  path: string,
): bigint {
  const have = groups.made.get(key);
  if (have !== undefined) return have;
  const gcpl = check(lib, lib.fn.H5Pcreate(lib.groupCreate), "H5Pcreate", path);
  try {
    check(
      lib,
      lib.fn.H5Pset_link_creation_order(gcpl, H5P_CRT_ORDER_TRACKED | H5P_CRT_ORDER_INDEXED),
      "H5Pset_link_creation_order",
      path,
    );
    const g = check(
      lib,
      lib.fn.H5Gcreate2(parent, cString(name), H5P_DEFAULT, gcpl, H5P_DEFAULT),
      `H5Gcreate2 '${key}'`,
      path,
    );
    groups.open.push(g);
    groups.made.set(key, g);
    return g;
  } finally {
    lib.fn.H5Pclose(gcpl);
  }
}

/**
 * Creates `chunk`'s dataset in `file` (of file type `type`, the groups of its name made first)
 * with `frames` frames of its shape, and the memory space of one frame.
 */
export function createFrameDataset(
  lib: Hdf5,
  file: bigint,
  chunk: Chunk,
  type: bigint,
  frames: FrameExtent,
  groups: Groups,
  path: string,
): FrameDataset {
  const fn = lib.fn;
  const parts = components(chunk.name, path);
  let loc = file;
  for (let i = 0; i < parts.length - 1; i++) {
    loc = group(lib, loc, parts[i]!, groups, parts.slice(0, i + 1).join("/"), path);
  }
  const rank = chunk.shape.length + 1;
  const extent = new BigUint64Array(rank);
  const maxdims = new BigUint64Array(rank);
  const chunkDims = new BigUint64Array(rank);
  extent[0] = frames.frames;
  maxdims[0] = frames.maxFrames;
  chunkDims[0] = 1n;
  chunk.shape.forEach((d, k) => {
    extent[k + 1] = BigInt(d);
    maxdims[k + 1] = BigInt(d);
    chunkDims[k + 1] = BigInt(Math.max(1, d));
  });
  const closers: (() => unknown)[] = [];
  try {
    const space = check(lib, fn.H5Screate_simple(rank, extent, maxdims), "H5Screate_simple", path);
    closers.push(() => fn.H5Sclose(space));
    const dcpl = check(lib, fn.H5Pcreate(lib.datasetCreate), "H5Pcreate", path);
    closers.push(() => fn.H5Pclose(dcpl));
    if (frames.chunked) {
      check(lib, fn.H5Pset_chunk(dcpl, rank, chunkDims), "H5Pset_chunk", path);
    }
    const id = check(
      lib,
      fn.H5Dcreate2(
        loc,
        cString(parts[parts.length - 1]!),
        type,
        space,
        H5P_DEFAULT,
        dcpl,
        H5P_DEFAULT,
      ),
      `H5Dcreate2 '${chunk.name}'`,
      path,
    );
    const count = new BigUint64Array(rank);
    count.set(extent);
    count[0] = 1n;
    let memspace: bigint;
    try {
      memspace = check(lib, fn.H5Screate_simple(rank, count, null), "H5Screate_simple", path);
    } catch (e) {
      fn.H5Dclose(id);
      throw e;
    }
    return {
      name: chunk.name,
      dtype: chunk.dtype,
      shape: [...chunk.shape],
      id,
      memspace,
      extent,
      start: new BigUint64Array(rank),
      count,
    };
  } finally {
    closeAll(closers);
  }
}

/**
 * The file space of `set` with frame `row` selected (`set.start` moved to it); the caller closes
 * it (H5Sclose) after its write.
 */
export function frameSpace(
  lib: Hdf5,
  set: { readonly id: bigint; readonly start: BigUint64Array; readonly count: BigUint64Array },
  row: bigint,
  path: string,
): bigint {
  const fn = lib.fn;
  const fspace = check(lib, fn.H5Dget_space(set.id), "H5Dget_space", path);
  try {
    set.start[0] = row;
    check(
      lib,
      fn.H5Sselect_hyperslab(fspace, H5S_SELECT_SET, set.start, null, set.count, null),
      "H5Sselect_hyperslab",
      path,
    );
    return fspace;
  } catch (e) {
    fn.H5Sclose(fspace);
    throw e;
  }
}
