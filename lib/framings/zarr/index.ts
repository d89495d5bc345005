/**
 * The Zarr reader (v2 and v3): finds the arrays of a store, from its consolidated `.zmetadata` when it
 * has one (zarr-python's `open_consolidated`), else by walking its groups (`.zgroup`) from the
 * root, and makes frames of them: when every array has the same first dimension and is chunked
 * one index of it per chunk, whole in the others (as sciobench and the table's zarr-python peer
 * write them), frame i is chunk i of every array, in path order. A store of other arrays is
 * described (`info`) with no frames. A v3 store (`zarr.json` at its root) is walked the same way;
 * when its arrays are sharded, frame i is inner chunk i of each shard's K, found through the
 * shard's index (read once, every entry checked against the shard file's size). Chunks are
 * decoded here (zlib, gzip through node:zlib,
 * bounded by the chunk's size); a chunk file that does not exist holds the fill value.
 * @module
 */
import { gunzipSync, inflateSync } from "node:zlib";
import { FormatError } from "../../core/errors.ts";
import type { ByteOrder, ChunkRef, FrameIndex, StoreMembers } from "../types.ts";
import { DTYPE_SIZE } from "../types.ts";
import { MAX_INDEXED_OBJECTS } from "../kit.ts";
import { crc32c } from "./crc32c.ts";
import { arrayV3, indexBytesOf, nodeType, readShardIndex } from "./v3.ts";
import {
  chunkKey,
  MAX_METADATA_BYTES,
  MetadataReader,
  pathParts,
  type ZarrArray,
} from "./metadata.ts";

/** Most entries of one group's directory the walk lists (its arrays, groups and files). */
const MAX_GROUP_ENTRIES = 1 << 16;

/** Deepest nesting of groups the walk follows. */
const MAX_DEPTH = 64;

/** What the store's metadata holds: its groups and arrays, and where they were read from. */
interface StoreLayout {
  /** Group paths ("" is the root). */
  readonly groups: string[];
  /** The arrays, in path order. */
  readonly arrays: ZarrArray[];
  /** Attributes (`.zattrs`) by group or array path, where there are any. */
  readonly attributes: Map<string, unknown>;
  /** True when read from `.zmetadata`. */
  readonly consolidated: boolean;
  /** True for a Zarr v3 store (`zarr.json`). */
  readonly v3?: boolean;
  /** Notes for stderr. */
  readonly warnings: string[];
}

/** The parsed `.zattrs` at `key`, or undefined (a warning when it cannot be parsed). */
function attributesOf(
  bytes: Uint8Array | undefined,
  where: string,
  warnings: string[],
): unknown {
  if (bytes === undefined) return undefined;
  try {
    return new MetadataReader(where).object(bytes);
  } catch (e) {
    warnings.push(`${where}: attributes not read (${e instanceof Error ? e.message : e})`);
    return undefined;
  }
}

/** The layout from the consolidated metadata object of `.zmetadata`. */
function consolidatedLayout(store: StoreMembers, bytes: Uint8Array): StoreLayout {
  const reader = new MetadataReader(`${store.path}/.zmetadata`);
  const doc = reader.object(bytes);
  if (doc.zarr_consolidated_format !== 1) {
    reader.fail(
      `zarr_consolidated_format ${JSON.stringify(doc.zarr_consolidated_format)}, expected 1`,
    );
  }
  const metadata = doc.metadata;
  if (metadata === null || typeof metadata !== "object" || Array.isArray(metadata)) {
    reader.fail("its 'metadata' is not an object");
  }
  const entries = Object.entries(metadata as Record<string, unknown>);
  if (entries.length > MAX_INDEXED_OBJECTS) {
    reader.fail(`holds ${entries.length} keys, more than ${MAX_INDEXED_OBJECTS}`);
  }
  const layout = emptyLayout(true);
  for (const [key, value] of entries) {
    const m = /^(?:(.*)\/)?(\.zarray|\.zgroup|\.zattrs)$/.exec(key);
    const path = m?.[1] ?? "";
    if (m === null || pathParts(path) === undefined) {
      return reader.fail(`key '${key}' is not a metadata key of a group or array`);
    }
    const where = `${store.path}/.zmetadata '${key}'`;
    const entry = new MetadataReader(where);
    if (value === null || typeof value !== "object" || Array.isArray(value)) {
      entry.fail("not a JSON object");
    }
    const meta = value as Record<string, unknown>;
    if (m[2] === ".zarray") layout.arrays.push(entry.array(path, meta));
    else if (m[2] === ".zgroup") {
      entry.format(meta);
      layout.groups.push(path);
    } else layout.attributes.set(path, meta);
  }
  if (!layout.groups.includes("") && !layout.arrays.some((a) => a.path === "")) {
    reader.fail("holds no '.zgroup' nor '.zarray' of the root");
  }
  layout.arrays.sort((a, b) => a.path < b.path ? -1 : 1);
  return layout;
}

/** A layout of nothing found yet; `consolidated` when read from consolidated metadata. */
function emptyLayout(consolidated: boolean): StoreLayout {
  return { groups: [], arrays: [], attributes: new Map(), consolidated, warnings: [] };
}

/** The store key of member `name` of the group or array at `path` (`` for the root). */
function memberKey(path: string, name: string): string {
  return path === "" ? name : `${path}/${name}`;
}

/** The layout found by walking the groups from the root (`.zgroup`, `.zarray` of each entry). */
function walkedLayout(store: StoreMembers): StoreLayout {
  const layout = emptyLayout(false);
  const read = (name: string) => store.read(name, MAX_METADATA_BYTES);
  const node = (path: string, depth: number): boolean => {
    const zarray = read(memberKey(path, ".zarray"));
    const attrs = () => {
      const where = `${store.path}/${memberKey(path, ".zattrs")}`;
      const a = attributesOf(read(memberKey(path, ".zattrs")), where, layout.warnings);
      if (a !== undefined) layout.attributes.set(path, a);
    };
    if (zarray !== undefined) {
      const r = new MetadataReader(`${store.path}/${memberKey(path, ".zarray")}`);
      layout.arrays.push(r.array(path, r.object(zarray)));
      attrs();
      return true;
    }
    const zgroup = read(memberKey(path, ".zgroup"));
    if (zgroup === undefined) return false;
    const r = new MetadataReader(`${store.path}/${memberKey(path, ".zgroup")}`);
    r.format(r.object(zgroup));
    layout.groups.push(path);
    attrs();
    if (layout.groups.length + layout.arrays.length > MAX_INDEXED_OBJECTS) {
      r.fail(`the store holds more than ${MAX_INDEXED_OBJECTS} groups and arrays`);
    }
    if (depth >= MAX_DEPTH) r.fail(`groups nested more than ${MAX_DEPTH} deep`);
    for (const name of store.list(path, MAX_GROUP_ENTRIES) ?? []) {
      if (pathParts(name) === undefined) continue; // metadata files, hidden names
      node(memberKey(path, name), depth + 1);
    }
    return true;
  };
  if (!node("", 0)) {
    throw new FormatError(
      "zarr",
      store.path,
      -1,
      "no .zgroup, .zarray, .zmetadata or zarr.json at its root: not a Zarr store",
    );
  }
  layout.arrays.sort((a, b) => a.path < b.path ? -1 : 1);
  return layout;
}

/** The layout of a v3 store found by walking its groups from the root's `zarr.json`. */
function walkedLayoutV3(store: StoreMembers, root: Uint8Array): StoreLayout {
  const layout = emptyLayout(false);
  const node = (path: string, bytes: Uint8Array, depth: number): void => {
    const r = new MetadataReader(`${store.path}/${memberKey(path, "zarr.json")}`);
    const meta = r.object(bytes);
    const kind = nodeType(r, meta);
    const attributes = meta.attributes ?? {};
    if (typeof attributes !== "object" || attributes === null || Array.isArray(attributes)) {
      r.fail(`attributes ${JSON.stringify(attributes)} are not an object`);
    }
    if (Object.keys(attributes).length > 0) {
      layout.attributes.set(path, attributes);
    }
    if (kind === "array") {
      layout.arrays.push(arrayV3(r, path, meta));
      return;
    }
    layout.groups.push(path);
    if (layout.groups.length + layout.arrays.length > MAX_INDEXED_OBJECTS) {
      r.fail(`the store holds more than ${MAX_INDEXED_OBJECTS} groups and arrays`);
    }
    if (depth >= MAX_DEPTH) r.fail(`groups nested more than ${MAX_DEPTH} deep`);
    for (const name of store.list(path, MAX_GROUP_ENTRIES) ?? []) {
      if (pathParts(name) === undefined) continue; // hidden names
      const child = store.read(memberKey(memberKey(path, name), "zarr.json"), MAX_METADATA_BYTES);
      if (child !== undefined) node(memberKey(path, name), child, depth + 1);
    }
  };
  node("", root, 0);
  layout.arrays.sort((a, b) => a.path < b.path ? -1 : 1);
  return layout;
}

/** Shape of the chunk that holds one frame's part of `a`: its inner chunk when sharded. */
function frameChunk(a: ZarrArray): readonly number[] {
  return a.shard?.chunks ?? a.chunks;
}

/**
 * Why the arrays do not make frames (undefined when they do): every one has the first
 * dimension of the others, a chunk of 1 along it, and whole chunks along the rest.
 */
function notFrames(arrays: readonly ZarrArray[]): string | undefined {
  if (arrays.length === 0) return "the store holds no arrays";
  const frames = arrays[0]!.shape[0];
  for (const a of arrays) {
    const name = a.path === "" ? "the root array" : `array '${a.path}'`;
    if (a.shape[0] !== frames) {
      return `${name} has ${a.shape[0]} along its first dimension, '${arrays[0]!.path}' ${frames}`;
    }
    const chunk = frameChunk(a);
    if (chunk[0] !== 1 || a.chunks.some((c, k) => k > 0 && c !== a.shape[k])) {
      return `${name} (shape ${a.shape.join("x")}) is chunked ${chunk.join("x")}, not one ` +
        `frame per chunk (1x${a.shape.slice(1).join("x")})`;
    }
  }
  return undefined;
}

/** Where each inner chunk of a shard is ([offset, nbytes], undefined: not stored). */
type ShardIndex = readonly (readonly [number, number] | undefined)[];

/** The decoded layout of a Zarr store (v2 or v3). */
class ZarrIndex implements FrameIndex {
  readonly framing = "zarr";
  readonly frameCount: number;
  readonly warnings: readonly string[];
  readonly order: ByteOrder | undefined;
  readonly #store: StoreMembers;
  readonly #layout: StoreLayout;
  /** The arrays whose chunks make frames (none when they do not make frames). */
  readonly #frameArrays: readonly ZarrArray[];
  readonly #byPath: Map<string, ZarrArray>;
  /** The indexes of the shards read so far, by shard member. */
  readonly #shards = new Map<string, ShardIndex>();

  constructor(store: StoreMembers, layout: StoreLayout) {
    this.#store = store;
    this.#layout = layout;
    this.#byPath = new Map(layout.arrays.map((a) => [a.path, a]));
    const warnings = [...layout.warnings];
    const why = notFrames(layout.arrays);
    if (why !== undefined && layout.arrays.length > 0) {
      warnings.push(`no frames: ${why}`);
    }
    this.#frameArrays = why === undefined ? layout.arrays : [];
    this.frameCount = this.#frameArrays[0]?.shape[0] ?? 0;
    this.warnings = warnings;
    const orders = new Set(
      this.#frameArrays.filter((a) => DTYPE_SIZE[a.dtype] > 1).map((a) => a.order),
    );
    this.order = orders.size === 1 ? [...orders][0] : undefined;
  }

  chunks(frame: number): readonly ChunkRef[] {
    return this.#frameArrays.map((a) => {
      const shape = a.shape.slice(1);
      let bytes = DTYPE_SIZE[a.dtype];
      for (const d of shape) bytes *= d;
      const encoded = a.compressor !== null || a.crc32c;
      const ref = {
        name: a.path,
        dtype: a.dtype,
        shape,
        offset: 0,
        bytes,
        order: a.order,
        member: chunkKey(a, [frame, ...shape.map(() => 0)]),
        ...(encoded ? { codec: a.compressor?.id ?? "crc32c" } : {}),
      };
      if (a.shard === null) return ref;
      const per = a.chunks[0]!;
      const member = chunkKey(a, [Math.floor(frame / per), ...shape.map(() => 0)]);
      const entry = this.#shardIndex(a, member, bytes)[frame % per];
      // an inner chunk not stored is the fill value: nothing read, decoded as a missing chunk
      if (entry === undefined) return { ...ref, member, codec: "fill", storedBytes: 0 };
      return { ...ref, member, offset: entry[0], ...(encoded ? { storedBytes: entry[1] } : {}) };
    });
  }

  /** The index of shard `member` of `a` (inner chunks of `bytes` decoded), read once. */
  #shardIndex(a: ZarrArray, member: string, bytes: number): ShardIndex {
    const known = this.#shards.get(member);
    if (known !== undefined) return known;
    const shard = a.shard!;
    const where = new MetadataReader(`${this.#store.path}/${member}`);
    const size = this.#store.sizeOf(member);
    let index: ShardIndex;
    if (size === undefined) index = Array.from({ length: shard.count }, () => undefined);
    else {
      const length = indexBytesOf(shard);
      if (size < length) {
        where.fail(`shard file of ${size} bytes is shorter than its index (${length} bytes)`);
      }
      const at = shard.indexAtEnd ? size - length : 0;
      const raw = this.#store.readAt(member, at, length);
      if (raw === undefined || raw.length < length) return where.fail("shard file ended early");
      // stored bytes of an inner chunk: exact when not compressed, else bounded by gzip's worst
      const plain = a.compressor === null;
      const most = (plain ? bytes : bytes + (bytes >> 8) + 1024) + (a.crc32c ? 4 : 0);
      index = readShardIndex(where, shard, raw, size, most, plain);
    }
    this.#shards.set(member, index);
    return index;
  }

  decodeChunk(ref: ChunkRef, stored: Uint8Array | undefined, into: Uint8Array): void {
    const a = this.#byPath.get(ref.name)!;
    const where = `${this.#store.path}/${ref.member}`;
    if (stored === undefined) {
      fillWith(into, a.fill);
      return;
    }
    if (a.crc32c) {
      const body = stored.length - 4;
      const want = body < 0 ? -1 : new DataView(stored.buffer, stored.byteOffset + body).getUint32(
        0,
        true,
      );
      // mutant: zarr-chunk-crc
      if (body < 0 || crc32c(stored.subarray(0, body)) !== want) {
        throw new FormatError(
          "zarr",
          where,
          ref.offset,
          `chunk of ${stored.length} bytes fails its CRC-32C: damaged`,
        );
      }
      stored = stored.subarray(0, body);
    }
    if (a.compressor === null) {
      if (stored.length < into.length) {
        throw new FormatError(
          "zarr",
          where,
          stored.length,
          `chunk file ends at byte ${stored.length}, inside a chunk of ${into.length} bytes`,
        );
      }
      into.set(stored.subarray(0, into.length));
      return;
    }
    let out: Uint8Array;
    try {
      // at most one byte more than the chunk: a larger stream is refused, not inflated whole
      const bounds = { maxOutputLength: into.length + 1 };
      out = a.compressor.id === "zlib" ? inflateSync(stored, bounds) : gunzipSync(stored, bounds);
    } catch (e) {
      const why = e instanceof RangeError
        ? `decompresses to more than the chunk's ${into.length} bytes`
        : `${a.compressor.id} stream does not decompress (${e instanceof Error ? e.message : e})`;
      throw new FormatError("zarr", where, -1, why);
    }
    if (out.length !== into.length) {
      throw new FormatError(
        "zarr",
        where,
        -1,
        `decompresses to ${out.length} bytes, the chunk holds ${into.length}`,
      );
    }
    into.set(out);
  }

  describe(): Record<string, unknown> {
    const l = this.#layout;
    const attrs = (path: string) => l.attributes.get(path);
    const withAttributes = (path: string) => ({
      path: path === "" ? "/" : path,
      ...(attrs(path) !== undefined ? { attributes: attrs(path) } : {}),
    });
    const groups = l.groups.map(withAttributes);
    if (l.arrays.some((a) => a.format === 3) || l.v3) {
      return {
        zarr_format: 3,
        groups,
        arrays: l.arrays.map((a) => ({
          path: a.path === "" ? "/" : a.path,
          shape: a.shape,
          data_type: a.typestr,
          chunk_shape: a.chunks,
          ...(a.shard !== null ? { inner_chunk_shape: a.shard.chunks } : {}),
          fill_value: a.fillValue ?? null,
          codecs: a.v3?.codecs,
          ...(a.v3?.dimensionNames !== undefined ? { dimension_names: a.v3.dimensionNames } : {}),
          ...(attrs(a.path) !== undefined ? { attributes: attrs(a.path) } : {}),
        })),
      };
    }
    return {
      zarr_format: 2,
      consolidated: l.consolidated,
      groups,
      arrays: l.arrays.map((a) => ({
        path: a.path === "" ? "/" : a.path,
        shape: a.shape,
        chunks: a.chunks,
        dtype: a.typestr,
        fill_value: a.fillValue ?? null,
        compressor: a.compressor,
        dimension_separator: a.separator,
        ...(attrs(a.path) !== undefined ? { attributes: attrs(a.path) } : {}),
      })),
    };
  }
}

/** Fills `into` with copies of `element` (zeros when null), doubling the filled part each step. */
function fillWith(into: Uint8Array, element: Uint8Array | null): void {
  if (element === null || element.every((b) => b === 0)) {
    into.fill(0);
    return;
  }
  into.set(element.subarray(0, Math.min(element.length, into.length)));
  for (let done = element.length; done < into.length; done *= 2) {
    into.copyWithin(done, 0, Math.min(done, into.length - done));
  }
}

/**
 * The layout of the store `store` reads: consolidated metadata first, else a walk of its groups
 * from the v3 root's `zarr.json`, else from the v2 root's `.zgroup`.
 */
function layoutOf(store: StoreMembers): StoreLayout {
  const consolidated = store.read(".zmetadata", MAX_METADATA_BYTES);
  if (consolidated !== undefined) return consolidatedLayout(store, consolidated);
  const v3 = store.read("zarr.json", MAX_METADATA_BYTES);
  return v3 !== undefined ? { ...walkedLayoutV3(store, v3), v3: true } : walkedLayout(store);
}

/** Decodes the store `store` reads: consolidated metadata first, else a walk of its groups. */
export function openZarrStore(store: StoreMembers): FrameIndex {
  return new ZarrIndex(store, layoutOf(store));
}

/**
 * The arrays whose chunks make the frames of the store `store` reads (path order; empty when
 * they make none, or the store is one sciobench does not append to, with the reason) and whether
 * its metadata is consolidated: what an append continues.
 */
export function zarrFrameArrays(
  store: StoreMembers,
): { arrays: readonly ZarrArray[]; consolidated: boolean; why: string | undefined } {
  const layout = layoutOf(store);
  const why = layout.v3
    ? "a Zarr v3 store (appending writes Zarr v2 stores only)"
    : notFrames(layout.arrays);
  return { arrays: why === undefined ? layout.arrays : [], consolidated: layout.consolidated, why };
}
