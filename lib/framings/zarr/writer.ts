/**
 * The Zarr writer (v2, and v3 with `version` 3): each chunk name of the frames (`particles/position`) is an array of the
 * store whose first dimension is the frame, chunked one frame per chunk (shape (frames, ...),
 * chunks (1, ...)); its groups (`particles`, the root) get a `.zgroup`. Each frame's chunks are
 * member files of their own (`particles/position/7.0.0`, or `7/0/0` with separator `/`), byte
 * swapped and compressed as asked. At the end a sync op, then the metadata that makes the chunks
 * visible: each array's `.zarray` and `.zattrs`, the groups' `.zgroup` (deepest first, the root's
 * last) and with `consolidated` the `.zmetadata` holding them all: byte for byte what zarr-python
 * 2.13 writes for the same arrays. In v3 each array and group has a `zarr.json` instead (the
 * root's last), chunk keys are `c/7/0/0`, and with `shard` K each chunk file is a shard of K
 * frames (kept in memory until the shard is full, or the store is finished), one inner chunk per
 * frame, its index at the end.
 * @module
 */
import { deflateSync, gzipSync } from "node:zlib";
import { UsageError } from "../../core/errors.ts";
import { copySwapped, NATIVE_ORDER } from "../../bytes/byteswap.ts";
import type { ByteOrder, DType, Frame, FrameWriter, WriteOp } from "../types.ts";
import { DTYPE_SIZE } from "../types.ts";
import { checkChunkSize, chunkBytes } from "../kit.ts";
import { type PyJson, pythonJsonBytes } from "./json.ts";
import { arrayJson, groupJson, shardBytes, withCrc } from "./v3.ts";
import {
  defaultFill,
  type DimensionSeparator,
  MAX_CHUNK_BYTES,
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
  /** Write `.zmetadata` (consolidated metadata) last (v2). */
  readonly consolidated: boolean;
  /** Zarr version of the store. */
  readonly version: 2 | 3;
  /** v3: frames per shard (one inner chunk each), or 0 for one chunk file per frame. */
  readonly shard: number;
  /** v3: each chunk (inner chunk) ends with its CRC-32C (the `crc32c` codec). */
  readonly crc32c: boolean;
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
  /** v3 with shards: per array, the encoded inner chunks of the shard being filled. */
  #pending: Uint8Array[][] = [];

  /**
   * A writer of a new store; with `from`, of the frames after the `from.frames` frames of `from.arrays`
   * an existing store holds (an append).
   */
  constructor(
    settings: ZarrWriteSettings,
    from?: { readonly arrays: readonly StoredArray[]; readonly frames: number },
  ) {
    const { version, compressor, shard, crc32c, consolidated } = settings;
    if (version === 2 && (shard > 0 || crc32c)) {
      throw new UsageError("zarr: shard and crc32c are Zarr v3 codecs; give version=3 with them");
    }
    if (version === 3 && compressor === "zlib") {
      throw new UsageError("zarr: Zarr v3 has no zlib codec; give compressor=gzip or none");
    }
    if (version === 3 && consolidated) {
      throw new UsageError("zarr: consolidated metadata (.zmetadata) is Zarr v2's; leave it out");
    }
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

  /** `arrays`, once checked that a shard of each (held in memory until written) fits. */
  #shardsFit(arrays: readonly StoredArray[]): readonly StoredArray[] {
    const { version, shard } = this.#settings;
    for (const a of arrays) {
      if (version === 3 && shard * a.bytes > MAX_CHUNK_BYTES) {
        throw new UsageError(
          `zarr: a shard of ${shard} frames of '${a.path}' (${a.bytes} bytes each) is more than ` +
            `the ${MAX_CHUNK_BYTES} bytes a shard may hold in memory; give a smaller shard=`,
        );
      }
    }
    return arrays;
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
    const arrays = this.#arrays ??= this.#shardsFit(this.#arraysOf(frame));
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
      if (this.#settings.crc32c) data = withCrc(data);
      const rest = a.shape.map(() => 0);
      const { version, shard } = this.#settings;
      if (version === 2) {
        const key = [index, ...rest].join(separator);
        ops.push({ kind: "write", offset: 0, member: `${a.path}/${key}`, data });
      } else if (shard === 0) {
        const key = ["c", index, ...rest].join(separator);
        ops.push({ kind: "write", offset: 0, member: `${a.path}/${key}`, data });
      } else {
        // kept until its shard is written: a copy when it is the caller's or the scratch's
        const own = compressor !== null || this.#settings.crc32c;
        (this.#pending[k] ??= []).push(own ? data : data.slice());
      }
    });
    if (this.#settings.version === 3 && this.#settings.shard > 0) {
      if (this.#frames % this.#settings.shard === 0) ops.push(...this.#shards());
    }
    return ops;
  }

  /** The write ops of the shards being filled (inner chunks not written yet: not stored). */
  #shards(): WriteOp[] {
    const { shard, separator } = this.#settings;
    const arrays = this.#arrays ?? [];
    const first = Math.floor((this.#frames - 1) / shard) * shard;
    const ops: WriteOp[] = [];
    arrays.forEach((a, k) => {
      const inner = this.#pending[k] ?? [];
      if (inner.length === 0) return;
      const slots = Array.from({ length: shard }, (_, j) => inner[j]);
      const key = ["c", first / shard, ...a.shape.map(() => 0)].join(separator);
      ops.push({ kind: "write", offset: 0, member: `${a.path}/${key}`, data: shardBytes(slots) });
      this.#pending[k] = [];
    });
    return ops;
  }

  /** The metadata members (name and JSON) of the store, in the order they are written. */
  metadata(): [string, PyJson][] {
    return this.#settings.version === 3 ? this.#metadataV3() : this.#metadataV2();
  }

  /** The group paths holding `arrays` (not the root), deepest first. */
  #groups(arrays: readonly StoredArray[]): string[] {
    const groups = new Set<string>();
    for (const a of arrays) {
      const parts = a.path.split("/");
      for (let i = 1; i < parts.length; i++) groups.add(parts.slice(0, i).join("/"));
    }
    return [...groups].sort((a, b) =>
      b.split("/").length - a.split("/").length || (a < b ? -1 : 1)
    );
  }

  /** v3: each array's `zarr.json`, then each group's, deepest first, the root's last. */
  #metadataV3(): [string, PyJson][] {
    const { order, separator, compressor, level, shard, crc32c } = this.#settings;
    const arrays = [...(this.#arrays ?? [])].sort((a, b) => a.path < b.path ? -1 : 1);
    const codecs = { order, gzip: compressor === null ? null : level, crc32c };
    const out: [string, PyJson][] = arrays.map((a) => [
      `${a.path}/zarr.json`,
      arrayJson(
        a.dtype,
        [this.#frames, ...a.shape],
        [shard > 0 ? shard : 1, ...a.shape],
        shard > 0 ? [1, ...a.shape] : null,
        codecs,
        separator,
        dimensionNames(a),
      ),
    ]);
    for (const g of this.#groups(arrays)) out.push([`${g}/zarr.json`, groupJson()]);
    out.push(["zarr.json", groupJson()]);
    return out;
  }

  /** v2: each array's `.zarray` and `.zattrs`, then each group's `.zgroup`, the root's last. */
  #metadataV2(): [string, PyJson][] {
    const { order, separator, compressor, level } = this.#settings;
    const out: [string, PyJson][] = [];
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
    }
    for (const g of this.#groups(arrays)) out.push([`${g}/.zgroup`, { zarr_format: 2 }]);
    out.push([".zgroup", { zarr_format: 2 }]);
    return out;
  }

  finish(): WriteOp[] {
    const metadata = this.metadata();
    const shards = this.#settings.version === 3 && this.#settings.shard > 0 ? this.#shards() : [];
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
    return [...shards, ...ops];
  }
}
