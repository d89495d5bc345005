/**
 * Where the HDF5 library keeps each frame's bytes: the file address of every frame of the frame
 * datasets the hdf5 reader found (lib/peers/hdf5/reader.ts), from the chunk index
 * (`H5Dget_chunk_info_by_coord`), so that sciobench can read the chunks' bytes itself with plain
 * preads, without the library (the loader's `--access direct`). Only a dataset whose chunks
 * hold its elements as they are (no filter: no compression, shuffle or checksum) and whose
 * chunks hold whole frames can be read so; any other is refused in one line.
 * @module
 */
import { FormatError, UsageError } from "../../core/errors.ts";
import type { ByteOrder, ChunkRef, DType, FrameIndex } from "../../framings/types.ts";
import { DTYPE_SIZE } from "../../framings/types.ts";
import { decodeCBuffer } from "../common.ts";
import { check, H5D_LAYOUT_NAMES, HADDR_UNDEF, type Hdf5, NAME } from "./bindings.ts";
import { FILTER_NAMES } from "./catalog.ts";

/** HDF5 1.10 `H5D_CHUNKED`: the layout of a chunked dataset (H5Pget_layout). */
const H5D_CHUNKED = 2;

/** A frame dataset as the hdf5 reader opened it: frames along dimension 0. */
export interface FrameDataset {
  /** Its HDF5 path (the chunk name). */
  readonly name: string;
  /** Element type. */
  readonly dtype: DType;
  /** Shape of one frame (the dataset's dimensions after the first). */
  readonly shape: readonly number[];
  /** Byte order of the stored elements. */
  readonly order: ByteOrder;
  /** The open dataset (hid_t). */
  readonly id: bigint;
}

/** One frame dataset's frames in the file: each frame's first byte, and the frame's bytes. */
interface Placed {
  readonly name: string;
  readonly dtype: DType;
  readonly shape: readonly number[];
  readonly order: ByteOrder;
  /** File offset of frame i's first byte, bytes. */
  readonly offsets: Float64Array;
  /** Bytes of one frame. */
  readonly bytes: number;
}

/** The names of the filters of a dataset creation property list, in pipeline order. */
function filterNames(lib: Hdf5, dcpl: bigint): string[] {
  const fn = lib.fn;
  const names: string[] = [];
  const flags = new Uint32Array(1);
  const nelmts = new BigUint64Array(1);
  const values = new Uint32Array(8);
  const fname = new Uint8Array(64);
  const config = new Uint32Array(1);
  const count = fn.H5Pget_nfilters(dcpl);
  for (let k = 0; k < count; k++) {
    nelmts[0] = 8n;
    const f = fn.H5Pget_filter2(dcpl, k, flags, nelmts, values, 64n, fname, config);
    names.push(FILTER_NAMES[f] ?? (decodeCBuffer(fname) || `filter ${f}`));
  }
  return names;
}

/**
 * The file offset of each of the first `frames` frames of `d`, asked of the chunk index once per
 * chunk (a chunk may hold several whole frames). UsageError (one line) when the dataset is
 * filtered, not chunked, or chunked across frames; FormatError when a chunk was never written or
 * is not the size its elements take.
 */
function place(lib: Hdf5, path: string, d: FrameDataset, frames: number): Placed {
  const fn = lib.fn;
  const refuse = (why: string) =>
    new UsageError(
      `--access direct: ${path}: dataset '${d.name}' ${why}, so its bytes are not the ` +
        "samples'; read it through the library (--access library)",
    );
  const dcpl = check(lib, fn.H5Dget_create_plist(d.id), "H5Dget_create_plist", path);
  let chunk: number[];
  try {
    const filters = filterNames(lib, dcpl);
    // mutant: chunks-filtered-refused
    if (filters.length > 0) throw refuse(`is filtered (${filters.join(", ")})`);
    const layout = fn.H5Pget_layout(dcpl);
    if (layout !== H5D_CHUNKED) {
      // a frame dataset grows along an unlimited dimension, which HDF5 stores chunked only
      throw refuse(`is stored ${H5D_LAYOUT_NAMES[layout] ?? `in layout ${layout}`}, not chunked`);
    }
    const dims = new BigUint64Array(32);
    const rank = fn.H5Pget_chunk(dcpl, 32, dims);
    chunk = [...dims.subarray(0, Math.max(0, rank))].map(Number);
  } finally {
    fn.H5Pclose(dcpl);
  }
  if (chunk.length !== d.shape.length + 1 || d.shape.some((n, k) => chunk[k + 1] !== n)) {
    throw refuse(
      `is chunked [${chunk.join(", ")}] across its frames of shape [${d.shape.join(", ")}]`,
    );
  }
  const bytes = d.shape.reduce((a, n) => a * n, DTYPE_SIZE[d.dtype]);
  const perChunk = chunk[0]!;
  const offsets = new Float64Array(frames);
  const coord = new BigUint64Array(chunk.length);
  const mask = new Uint32Array(1);
  const addr = new BigUint64Array(1);
  const size = new BigUint64Array(1);
  for (let first = 0; first < frames; first += perChunk) {
    coord[0] = BigInt(first);
    check(
      lib,
      fn.H5Dget_chunk_info_by_coord(d.id, coord, mask, addr, size),
      `H5Dget_chunk_info_by_coord '${d.name}' frame ${first}`,
      path,
    );
    if (addr[0] === HADDR_UNDEF) {
      throw new FormatError(NAME, path, -1, `dataset '${d.name}': frame ${first} never written`);
    }
    if (Number(size[0]) !== perChunk * bytes) {
      throw new FormatError(
        NAME,
        path,
        Number(addr[0]),
        `dataset '${d.name}': the chunk of frame ${first} holds ${size[0]} bytes, not the ` +
          `${perChunk * bytes} of its elements`,
      );
    }
    const at = Number(addr[0]);
    const last = Math.min(frames, first + perChunk);
    for (let i = first; i < last; i++) offsets[i] = at + (i - first) * bytes;
  }
  const { name, dtype, shape, order } = d;
  return { name, dtype, shape, order, offsets, bytes };
}

/**
 * The frame index of the first `frames` frames of `datasets` (open in the file at `path`): each
 * frame's chunks, one per dataset in the datasets' order, at the file offsets the library's
 * chunk index gives. Asks the library only here; the index it returns makes no library call.
 */
export function frameChunkIndex(
  lib: Hdf5,
  path: string,
  datasets: readonly FrameDataset[],
  frames: number,
): FrameIndex {
  const placed = datasets.map((d) => place(lib, path, d, frames));
  const orders = new Set(placed.map((p) => p.order));
  return {
    framing: NAME,
    frameCount: frames,
    chunks(frame: number): readonly ChunkRef[] {
      return placed.map((p) => ({
        name: p.name,
        dtype: p.dtype,
        shape: p.shape,
        offset: p.offsets[frame]!,
        bytes: p.bytes,
        order: p.order,
      }));
    },
    // a frame's chunks of different datasets lie among other frames' chunks: each is read alone
    // (a read through the gap would read other frames' bytes), those that touch together
    readGap: 0,
    ...(orders.size === 1 ? { order: [...orders][0]! } : {}),
  };
}
