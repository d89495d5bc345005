/**
 * The `hdf5` peer: frames stored through the HDF5 C library (libhdf5, 1.10 on Debian 12) via
 * Deno FFI.
 *
 * Layout (what HDF5 users do for trajectories, as H5MD and h5py-based MD tools do): one dataset
 * per chunk name, at that name's path (`particles/position` is dataset `position` in group
 * `particles`), with the frame as the slowest dimension: shape (frames, ...chunk shape),
 * maximum shape (unlimited, ...chunk shape), chunked one frame per HDF5 chunk, grown by one
 * frame (`H5Dset_extent`) and written as one hyperslab per frame. Groups track link creation
 * order (as netCDF-4 does), so a reader lists chunks in write order. The file type is the
 * native type (little-endian here) or, with `endian: "big"`, the big-endian IEEE/STD type
 * (H5T_IEEE_F64BE ...), as in the 2003 netCDF-4 timing test; the library converts on write.
 * Steps are not stored.
 *
 * Library handles (`hid_t`) are 64-bit and kept as bigint. The predefined type ids are read
 * after `H5open` through their addresses (ffi.md §6.3). The automatic error printing is
 * silenced; failures become typed errors carrying a summary of the HDF5 error stack, and every
 * handle opened is closed, also on error.
 * @module
 */
import type {
  Backend,
  FrameSink,
  FrameSource,
  SinkOptions,
  SourceOptions,
} from "../../backends/backend.ts";
import { type FrameIndex, type MagicNumber, matchesMagic } from "../../framings/types.ts";
import { h5, HDF5_SONAMES, load, NAME } from "./bindings.ts";
import { Hdf5Source } from "./reader.ts";
import { netcdf4Datasets as netcdf4DatasetsOf, type NetcdfDatasets } from "./catalog.ts";
import { Hdf5Sink } from "./writer.ts";

export type { NetcdfDatasets, ReadRegion } from "./catalog.ts";

/**
 * Where the frames of the HDF5 file at `path` (a netCDF-4 file too) lie: the library opens it,
 * reports each frame dataset's chunk addresses and closes it (lib/peers/hdf5/chunks.ts); the
 * index returned reads no more through the library. UsageError when a frame dataset is filtered
 * or not chunked by whole frames.
 */
export function hdf5FrameChunks(path: string): FrameIndex {
  const source = new Hdf5Source(h5(), path);
  try {
    return source.frameChunkIndex();
  } finally {
    source.close();
  }
}

/** The variables of a netCDF-4 file as HDF5 datasets (see {@link netcdf4DatasetsOf}). */
export function netcdf4Datasets(path: string): NetcdfDatasets {
  return netcdf4DatasetsOf(h5(), path);
}

export {
  HDF5_ENV,
  HDF5_SONAMES,
  hdf5LibversionCall,
  hdf5OpenObjects,
  hdf5Version,
} from "./bindings.ts";

// ---- detection -----------------------------------------------------------------------------

/** The HDF5 signature, at byte 0, 512, 1024 or 2048 of the first 4096 bytes (a user block may precede it). */
export const HDF5_SIGNATURE: MagicNumber = {
  bytes: [0x89, 0x48, 0x44, 0x46, 0x0d, 0x0a, 0x1a, 0x0a],
  offsets: [0, 512, 1024, 2048],
};

/**
 * Byte offset of the HDF5 signature in `head` (0, 512, 1024, 2048), or -1 when absent.
 */
export function hdf5SignatureOffset(head: Uint8Array): number {
  for (const off of HDF5_SIGNATURE.offsets!) {
    if (matchesMagic([{ bytes: HDF5_SIGNATURE.bytes, offsets: [off] }], head)) return off;
  }
  return -1;
}

/** HDF5 superblock version of a file's head (byte 8 after the signature), or -1 without one. */
export function hdf5SuperblockVersion(head: Uint8Array): number {
  const off = hdf5SignatureOffset(head);
  if (off < 0 || off + 9 > head.length) return -1;
  return head[off + 8]!;
}

/** The HDF5 peer backend (see the module documentation for the layout). */
export const hdf5: Backend = {
  name: NAME,
  description: "HDF5 C library (FFI): one extendible dataset per chunk, one frame per HDF5 chunk",
  kind: "peer",
  orders: ["little", "big"],
  options: [],
  magic: [HDF5_SIGNATURE],
  fsyncPolicies: ["end", "none"],
  transfer: false,
  sharedLayout: false,
  library: { displayName: "HDF5", files: HDF5_SONAMES },
  unavailable(): string | null {
    const s = load();
    return typeof s === "string" ? s : null;
  },
  /** HDF5 files whose superblock is version 0 or 1; version 2+ (netCDF-4's) goes to `netcdf4`. */
  detect(head: Uint8Array): boolean {
    const v = hdf5SuperblockVersion(head);
    return v >= 0 && v < 2;
  },
  openWriter(path: string, options: SinkOptions): FrameSink {
    return new Hdf5Sink(h5(), path, options);
  },
  openReader(path: string, options?: SourceOptions): FrameSource {
    return new Hdf5Source(h5(), path, options?.allowExternal === true);
  },
  frameChunks: hdf5FrameChunks,
};
