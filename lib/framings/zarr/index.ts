/**
 * The Zarr v2 reader: finds the arrays of a store, from its consolidated `.zmetadata` when it
 * has one (zarr-python's `open_consolidated`), else by walking its groups (`.zgroup`) from the
 * root, and makes frames of them: when every array has the same first dimension and is chunked
 * one index of it per chunk, whole in the others (as sciobench and the table's zarr-python peer
 * write them), frame i is chunk i of every array, in path order. A store of other arrays is
 * described (`info`) with no frames. Chunks are decoded here (zlib, gzip through node:zlib,
 * bounded by the chunk's size); a chunk file that does not exist holds the fill value.
 * @module
 */
import { gunzipSync, inflateSync } from "node:zlib";
import { FormatError } from "../../core/errors.ts";
import type { ByteOrder, ChunkRef, FrameIndex, StoreMembers } from "../types.ts";
import { DTYPE_SIZE } from "../types.ts";
import { MAX_INDEXED_OBJECTS } from "../kit.ts";
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
  const layout: StoreLayout = {
    groups: [],
    arrays: [],
    attributes: new Map(),
    consolidated: true,
    warnings: [],
  };
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

/** The layout found by walking the groups from the root (`.zgroup`, `.zarray` of each entry). */
function walkedLayout(store: StoreMembers): StoreLayout {
  const layout: StoreLayout = {
    groups: [],
    arrays: [],
    attributes: new Map(),
    consolidated: false,
    warnings: [],
  };
  const read = (name: string) => store.read(name, MAX_METADATA_BYTES);
  const key = (path: string, name: string) => path === "" ? name : `${path}/${name}`;
  const node = (path: string, depth: number): boolean => {
    const zarray = read(key(path, ".zarray"));
    const attrs = () => {
      const where = `${store.path}/${key(path, ".zattrs")}`;
      const a = attributesOf(read(key(path, ".zattrs")), where, layout.warnings);
      if (a !== undefined) layout.attributes.set(path, a);
    };
    if (zarray !== undefined) {
      const r = new MetadataReader(`${store.path}/${key(path, ".zarray")}`);
      layout.arrays.push(r.array(path, r.object(zarray)));
      attrs();
      return true;
    }
    const zgroup = read(key(path, ".zgroup"));
    if (zgroup === undefined) return false;
    const r = new MetadataReader(`${store.path}/${key(path, ".zgroup")}`);
    r.format(r.object(zgroup));
    layout.groups.push(path);
    attrs();
    if (layout.groups.length + layout.arrays.length > MAX_INDEXED_OBJECTS) {
      r.fail(`the store holds more than ${MAX_INDEXED_OBJECTS} groups and arrays`);
    }
    if (depth >= MAX_DEPTH) r.fail(`groups nested more than ${MAX_DEPTH} deep`);
    for (const name of store.list(path, MAX_GROUP_ENTRIES) ?? []) {
      if (pathParts(name) === undefined) continue; // metadata files, hidden names
      node(key(path, name), depth + 1);
    }
    return true;
  };
  if (!node("", 0)) {
    if (store.read("zarr.json", MAX_METADATA_BYTES) !== undefined) {
      throw new FormatError(
        "zarr",
        store.path,
        -1,
        "a Zarr v3 store (zarr.json): this version of sciobench reads Zarr v2 stores only",
      );
    }
    throw new FormatError(
      "zarr",
      store.path,
      -1,
      "no .zgroup, .zarray or .zmetadata at its root: not a Zarr v2 store",
    );
  }
  layout.arrays.sort((a, b) => a.path < b.path ? -1 : 1);
  return layout;
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
    if (a.chunks[0] !== 1 || a.chunks.some((c, k) => k > 0 && c !== a.shape[k])) {
      return `${name} (shape ${a.shape.join("x")}) is chunked ${a.chunks.join("x")}, not one ` +
        `frame per chunk (1x${a.shape.slice(1).join("x")})`;
    }
  }
  return undefined;
}

/** The decoded layout of a Zarr v2 store. */
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
      return {
        name: a.path,
        dtype: a.dtype,
        shape,
        offset: 0,
        bytes,
        order: a.order,
        member: chunkKey(a, [frame, ...shape.map(() => 0)]),
        ...(a.compressor ? { codec: a.compressor.id } : {}),
      };
    });
  }

  decodeChunk(ref: ChunkRef, stored: Uint8Array | undefined, into: Uint8Array): void {
    const a = this.#byPath.get(ref.name)!;
    const where = `${this.#store.path}/${ref.member}`;
    if (stored === undefined) {
      fillWith(into, a.fill);
      return;
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
    return {
      zarr_format: 2,
      consolidated: l.consolidated,
      groups: l.groups.map((g) => ({
        path: g === "" ? "/" : g,
        ...(attrs(g) !== undefined ? { attributes: attrs(g) } : {}),
      })),
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

/** The layout of the store `store` reads: consolidated metadata first, else a walk of its groups. */
function layoutOf(store: StoreMembers): StoreLayout {
  const consolidated = store.read(".zmetadata", MAX_METADATA_BYTES);
  return consolidated !== undefined ? consolidatedLayout(store, consolidated) : walkedLayout(store);
}

/** Decodes the store `store` reads: consolidated metadata first, else a walk of its groups. */
export function openZarrStore(store: StoreMembers): FrameIndex {
  return new ZarrIndex(store, layoutOf(store));
}

/**
 * The arrays whose chunks make the frames of the store `store` reads (path order; empty when
 * they make none, with the reason) and whether its metadata is consolidated: what an append
 * continues.
 */
export function zarrFrameArrays(
  store: StoreMembers,
): { arrays: readonly ZarrArray[]; consolidated: boolean; why: string | undefined } {
  const layout = layoutOf(store);
  const why = notFrames(layout.arrays);
  return { arrays: why === undefined ? layout.arrays : [], consolidated: layout.consolidated, why };
}
