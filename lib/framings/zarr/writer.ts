/**
 * The Zarr v2 writer: each chunk name of the frames (`particles/position`) is an array of the
 * store whose first dimension is the frame, chunked one frame per chunk (shape (frames, ...),
 * chunks (1, ...)); its groups (`particles`, the root) get a `.zgroup`. Each frame's chunks are
 * member files of their own (`particles/position/7.0.0`, or `7/0/0` with separator `/`), byte
 * swapped and compressed as asked. At the end a sync op, then the metadata that makes the chunks
 * visible: each array's `.zarray` and `.zattrs`, the groups' `.zgroup` (deepest first, the root's
 * last) and with `consolidated` the `.zmetadata` holding them all: byte for byte what zarr-python
 * 2.13 writes for the same arrays.
 * @module
 */
import { deflateSync, gzipSync } from "node:zlib";
import { UsageError } from "../../core/errors.ts";
import { copySwapped, NATIVE_ORDER } from "../../bytes/byteswap.ts";
import type { ByteOrder, DType, Frame, FrameWriter, WriteOp } from "../types.ts";
import { DTYPE_SIZE } from "../types.ts";
import { checkChunkSize, chunkBytes } from "../kit.ts";
import { type PyJson, pythonJsonBytes } from "./json.ts";
import {
  defaultFill,
  type DimensionSeparator,
  pathParts,
  typestrOf,
  type ZarrCodec,
} from "./metadata.ts";

/** How a store is written: the settings `--option` gives, resolved. */
export interface ZarrWriteSettings {
  /** Byte order of the stored elements. */
  readonly order: ByteOrder;
  /** Separator of the parts of a chunk key. */
  readonly separator: DimensionSeparator;
  /** Compressor of the chunks, or null for none. */
  readonly compressor: ZarrCodec | null;
  /** zlib compression level (0-9) of `compressor`. */
  readonly level: number;
  /** Write `.zmetadata` (consolidated metadata) last. */
  readonly consolidated: boolean;
}

/** One array of the store: a chunk name of the frames and its type and shape. */
export interface StoredArray {
  readonly path: string;
  readonly dtype: DType;
  /** Shape of one frame's chunk (the array's shape after its first dimension). */
  readonly shape: readonly number[];
  readonly bytes: number;
}

/** Names of the dimensions of an array, for xarray (`_ARRAY_DIMENSIONS`): `frame`, then its own. */
function dimensionNames(a: StoredArray): string[] {
  const base = a.path.slice(a.path.lastIndexOf("/") + 1);
  return ["frame", ...a.shape.map((_, k) => `${base}_${k + 1}`)];
}

/** Encodes frames into the member writes of a Zarr v2 store. */
export class ZarrWriter implements FrameWriter {
  readonly #settings: ZarrWriteSettings;
  #arrays: readonly StoredArray[] | undefined;
  #frames = 0;
  /** Per array, the buffer its chunk is byte-swapped into (reused by every frame). */
  #scratch: Uint8Array[] = [];

  /**
   * A writer of a new store; with `from`, of the frames after the `from.frames` frames of `from.arrays`
   * an existing store holds (an append).
   */
  constructor(
    settings: ZarrWriteSettings,
    from?: { readonly arrays: readonly StoredArray[]; readonly frames: number },
  ) {
    this.#settings = settings;
    if (from !== undefined) {
      this.#arrays = from.arrays;
      this.#frames = from.frames;
      this.#continuing = true;
    }
  }

  /** Continuing a store: its arrays are put in the order of the first frame's chunks. */
  #continuing = false;

  begin(): WriteOp[] {
    return [];
  }

  /** The arrays of the first frame, checked: names that are array paths, none inside another. */
  #arraysOf(frame: Frame): readonly StoredArray[] {
    const arrays = frame.chunks.map((c) => {
      if (pathParts(c.name) === undefined || c.name === "") {
        throw new UsageError(
          `zarr: chunk name '${c.name}' is not an array path (parts separated by '/', none ` +
            `empty or starting with '.')`,
        );
      }
      return { path: c.name, dtype: c.dtype, shape: [...c.shape], bytes: checkChunkSize(c) };
    });
    const paths = new Set(arrays.map((a) => a.path));
    for (const a of arrays) {
      const inside = [...paths].find((p) => p !== a.path && p.startsWith(`${a.path}/`));
      if (inside !== undefined) {
        throw new UsageError(
          `zarr: chunk '${inside}' would be inside array '${a.path}'; an array holds no arrays`,
        );
      }
    }
    if (paths.size !== arrays.length) {
      throw new UsageError("zarr: a frame holds two chunks of the same name");
    }
    return arrays;
  }

  writeFrame(frame: Frame): WriteOp[] {
    if (this.#continuing) {
      this.#continuing = false;
      const byPath = new Map(this.#arrays!.map((a) => [a.path, a]));
      const ordered = frame.chunks.map((c) => byPath.get(c.name));
      if (ordered.length === byPath.size && ordered.every((a) => a !== undefined)) {
        this.#arrays = ordered as StoredArray[];
      }
    }
    const arrays = this.#arrays ??= this.#arraysOf(frame);
    if (
      frame.chunks.length !== arrays.length ||
      frame.chunks.some((c, k) =>
        c.name !== arrays[k]!.path || c.dtype !== arrays[k]!.dtype ||
        c.shape.join("x") !== arrays[k]!.shape.join("x")
      )
    ) {
      const text = (cs: readonly { name?: string; path?: string; shape: readonly number[] }[]) =>
        cs.map((c) => `${c.name ?? c.path} ${c.shape.join("x")}`).join(", ");
      throw new UsageError(
        `zarr: frame ${this.#frames} holds ${text(frame.chunks)}; every frame of a store holds ` +
          `the arrays of the first (${text(arrays)})`,
      );
    }
    const { order, separator, compressor, level } = this.#settings;
    const index = this.#frames++;
    const ops: WriteOp[] = [];
    frame.chunks.forEach((c, k) => {
      const a = arrays[k]!;
      if (c.data.byteLength !== a.bytes) checkChunkSize(c);
      let data = chunkBytes(c);
      const width = DTYPE_SIZE[c.dtype];
      if (order !== NATIVE_ORDER && width > 1) {
        if ((this.#scratch[k]?.length ?? -1) < a.bytes) this.#scratch[k] = new Uint8Array(a.bytes);
        const swapped = this.#scratch[k]!.subarray(0, a.bytes);
        copySwapped(data, swapped, width);
        data = swapped;
      }
      if (compressor === "zlib") data = deflateSync(data, { level });
      else if (compressor === "gzip") data = gzipSync(data, { level });
      const key = [index, ...a.shape.map(() => 0)].join(separator);
      ops.push({ kind: "write", offset: 0, member: `${a.path}/${key}`, data });
    });
    return ops;
  }

  /** The metadata members (name and JSON) of the store, in the order they are written. */
  metadata(): [string, PyJson][] {
    const { order, separator, compressor, level } = this.#settings;
    const out: [string, PyJson][] = [];
    const groups = new Set<string>();
    const arrays = [...(this.#arrays ?? [])].sort((a, b) => a.path < b.path ? -1 : 1);
    for (const a of arrays) {
      const zarray: Record<string, PyJson> = {
        chunks: [1, ...a.shape],
        compressor: compressor === null ? null : { id: compressor, level },
        dtype: typestrOf(a.dtype, order),
        "fill_value": defaultFill(a.dtype),
        filters: null,
        order: "C",
        shape: [this.#frames, ...a.shape],
        "zarr_format": 2,
      };
      // zarr-python writes the separator only when it is not the default '.'
      if (separator === "/") zarray.dimension_separator = "/";
      out.push([`${a.path}/.zarray`, zarray]);
      out.push([`${a.path}/.zattrs`, { _ARRAY_DIMENSIONS: dimensionNames(a) }]);
      const parts = a.path.split("/");
      for (let i = 1; i < parts.length; i++) groups.add(parts.slice(0, i).join("/"));
    }
    const deepestFirst = [...groups].sort((a, b) =>
      b.split("/").length - a.split("/").length || (a < b ? -1 : 1)
    );
    for (const g of deepestFirst) out.push([`${g}/.zgroup`, { zarr_format: 2 }]);
    out.push([".zgroup", { zarr_format: 2 }]);
    return out;
  }

  finish(): WriteOp[] {
    const metadata = this.metadata();
    // the chunks are durable before the metadata that makes them part of the store
    // mutant: store-chunks-before-metadata
    const ops: WriteOp[] = [{ kind: "sync" }];
    for (const [member, value] of metadata) {
      ops.push({ kind: "write", offset: 0, member, data: pythonJsonBytes(value) });
    }
    if (this.#settings.consolidated) {
      const all: Record<string, PyJson> = {};
      for (const [member, value] of metadata) all[member] = value;
      ops.push({
        kind: "write",
        offset: 0,
        member: ".zmetadata",
        data: pythonJsonBytes({ metadata: all, zarr_consolidated_format: 1 }),
      });
    }
    return ops;
  }
}
