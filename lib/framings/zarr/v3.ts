/**
 * Zarr v3 metadata and shards: the `zarr.json` of a group or an array (zarr_format 3, node_type,
 * shape, data_type, the regular chunk grid, the chunk key encoding, fill_value, codecs,
 * attributes, dimension_names) made for the writer and checked as it is read, and the index of a
 * `sharding_indexed` shard: per inner chunk its (offset, nbytes) as little-endian uint64, both
 * 2^64-1 for an inner chunk not stored, then the index's CRC-32C. The codecs sciobench writes and
 * reads are `bytes` (endian), `gzip`, `crc32c` and `sharding_indexed` (whose inner chunks take
 * the same); anything else is a FormatError in one line naming the file.
 * @module
 */
import { NATIVE_ORDER } from "../../bytes/byteswap.ts";
import type { ByteOrder, DType } from "../types.ts";
import { DTYPE_SIZE } from "../types.ts";
import { MAX_INDEXED_OBJECTS } from "../kit.ts";
import { crc32c } from "./crc32c.ts";
import type { PyJson } from "./json.ts";
import {
  defaultFill,
  type DimensionSeparator,
  MetadataReader,
  short,
  type ZarrArray,
  type ZarrShard,
} from "./metadata.ts";

/** The v3 `data_type` of each dtype sciobench stores (char as uint8). */
const DATA_TYPE: Readonly<Record<DType, string>> = {
  uint8: "uint8",
  uint16: "uint16",
  uint32: "uint32",
  uint64: "uint64",
  int8: "int8",
  int16: "int16",
  int32: "int32",
  int64: "int64",
  float32: "float32",
  float64: "float64",
  char: "uint8",
};

/** The dtype of each v3 `data_type` sciobench reads ({@link DATA_TYPE} inverted, `bool` as uint8). */
const DTYPE_OF: Readonly<Record<string, DType>> = {
  bool: "uint8",
  ...Object.fromEntries(
    Object.entries(DATA_TYPE).filter(([d]) => d !== "char").map(([d, t]) => [t, d as DType]),
  ),
};

/** Bytes of one index entry of a shard: offset and nbytes, uint64 each. */
const ENTRY = 16;

/** The two uint32 halves of an empty index entry (2^64-1). */
const EMPTY = 0xffffffff;

/** How a v3 array's chunks are encoded, as the writer makes them. */
export interface V3Codecs {
  /** Byte order of the elements (the `bytes` codec's endian). */
  readonly order: ByteOrder;
  /** gzip level of each chunk, or null for no gzip. */
  readonly gzip: number | null;
  /** Each chunk ends with its CRC-32C. */
  readonly crc32c: boolean;
}

/** The codec chain of `codecs` for one chunk: bytes, then gzip and crc32c as asked. */
function chunkCodecs(dtype: DType, c: V3Codecs): PyJson[] {
  const out: PyJson[] = [
    DTYPE_SIZE[dtype] === 1
      ? { name: "bytes" }
      : { name: "bytes", configuration: { endian: c.order } },
  ];
  if (c.gzip !== null) out.push({ name: "gzip", configuration: { level: c.gzip } });
  if (c.crc32c) out.push({ name: "crc32c" });
  return out;
}

/**
 * The `zarr.json` of an array of `dtype` and `shape` chunked `chunks` along each dimension; with
 * `inner`, each chunk is a shard of inner chunks of that shape (index at the end, with its
 * CRC-32C).
 */
export function arrayJson(
  dtype: DType,
  shape: readonly number[],
  chunks: readonly number[],
  inner: readonly number[] | null,
  codecs: V3Codecs,
  separator: DimensionSeparator,
  dimensionNames: readonly string[],
): PyJson {
  const own = chunkCodecs(dtype, codecs);
  return {
    zarr_format: 3,
    node_type: "array",
    shape: [...shape],
    data_type: DATA_TYPE[dtype],
    chunk_grid: { name: "regular", configuration: { chunk_shape: [...chunks] } },
    chunk_key_encoding: { name: "default", configuration: { separator } },
    fill_value: defaultFill(dtype),
    codecs: inner === null ? own : [{
      name: "sharding_indexed",
      configuration: {
        chunk_shape: [...inner],
        codecs: own,
        index_codecs: [
          { name: "bytes", configuration: { endian: "little" } },
          { name: "crc32c" },
        ],
        index_location: "end",
      },
    }],
    attributes: {},
    dimension_names: [...dimensionNames],
  };
}

/** The `zarr.json` of a group. */
export function groupJson(): PyJson {
  return { zarr_format: 3, node_type: "group", attributes: {} };
}

/** Bytes of the index of a shard of `count` inner chunks (with its CRC-32C). */
export function indexBytes(count: number): number {
  return count * ENTRY + 4;
}

/**
 * A shard file: the encoded inner chunks `chunks` (undefined: not stored) one after another,
 * then the index (offsets and lengths, uint64 little-endian) and its CRC-32C.
 */
export function shardBytes(chunks: readonly (Uint8Array | undefined)[]): Uint8Array {
  let data = 0;
  for (const c of chunks) data += c?.length ?? 0;
  const out = new Uint8Array(data + indexBytes(chunks.length));
  const index = new DataView(out.buffer, data, chunks.length * ENTRY);
  let at = 0;
  chunks.forEach((c, k) => {
    if (c === undefined) {
      for (let w = 0; w < 4; w++) index.setUint32(k * ENTRY + 4 * w, EMPTY, true);
      return;
    }
    out.set(c, at);
    index.setUint32(k * ENTRY, at % 2 ** 32, true);
    index.setUint32(k * ENTRY + 4, Math.floor(at / 2 ** 32), true);
    index.setUint32(k * ENTRY + 8, c.length % 2 ** 32, true);
    index.setUint32(k * ENTRY + 12, Math.floor(c.length / 2 ** 32), true);
    at += c.length;
  });
  const end = data + chunks.length * ENTRY;
  new DataView(out.buffer).setUint32(end, crc32c(out.subarray(data, end)), true);
  return out;
}

/** Appends the CRC-32C of `data` (little-endian) to a copy of it. */
export function withCrc(data: Uint8Array): Uint8Array {
  const out = new Uint8Array(data.length + 4);
  out.set(data);
  new DataView(out.buffer).setUint32(data.length, crc32c(data), true);
  return out;
}

/**
 * The inner chunks of a shard file of `size` bytes from its `index` bytes (the index at the
 * shard's end or start, as `shard` says): [offset, nbytes] each, or undefined for one not stored.
 * Every entry is checked against the file: inside its data part, no longer than `most` bytes
 * (`exact`: exactly that many), so a hostile index is refused before anything is read for it.
 */
export function readShardIndex(
  where: MetadataReader,
  shard: ZarrShard,
  index: Uint8Array,
  size: number,
  most: number,
  exact: boolean,
): (readonly [number, number] | undefined)[] {
  const n = shard.count * ENTRY;
  const view = new DataView(index.buffer, index.byteOffset, index.length);
  if (shard.indexCrc) {
    const want = view.getUint32(n, true);
    const got = crc32c(index.subarray(0, n));
    // mutant: zarr-shard-index-crc
    if (want !== got) {
      where.fail(
        `shard index CRC-32C is ${hex(want)}, its bytes' is ${hex(got)}: the index is damaged`,
      );
    }
  }
  const lo = shard.indexAtEnd ? 0 : indexBytesOf(shard);
  const hi = shard.indexAtEnd ? size - indexBytesOf(shard) : size;
  const out: (readonly [number, number] | undefined)[] = [];
  for (let k = 0; k < shard.count; k++) {
    const w = [0, 4, 8, 12].map((b) => view.getUint32(k * ENTRY + b, true));
    if (w.every((x) => x === EMPTY)) {
      out.push(undefined);
      continue;
    }
    // a value of 2^53 and more is no offset of a file this size
    const offset = w[1]! < 2 ** 21 ? w[1]! * 2 ** 32 + w[0]! : Infinity;
    const bytes = w[3]! < 2 ** 21 ? w[3]! * 2 ** 32 + w[2]! : Infinity;
    // mutant: zarr-shard-index-bounds
    if (offset < lo || offset + bytes > hi) {
      where.fail(
        `shard index entry ${k} (offset ${u64(w[0]!, w[1]!)}, nbytes ${u64(w[2]!, w[3]!)}) ` +
          `is outside the shard's data, bytes ${lo} to ${hi} of ${size}`,
      );
    }
    if (exact ? bytes !== most : bytes > most) {
      where.fail(
        `shard index entry ${k} holds ${bytes} bytes, an inner chunk ${
          exact ? "is" : "is at most"
        } ${most}`,
      );
    }
    out.push([offset, bytes]);
  }
  return out;
}

/** Bytes of the index of `shard` (with its CRC-32C when it has one). */
export function indexBytesOf(shard: ZarrShard): number {
  return shard.count * ENTRY + (shard.indexCrc ? 4 : 0);
}

/** `x` as 8 hex digits. */
function hex(x: number): string {
  return `0x${x.toString(16).padStart(8, "0")}`;
}

/** The uint64 of halves `lo`, `hi` in decimal. */
function u64(lo: number, hi: number): string {
  return ((BigInt(hi) << 32n) | BigInt(lo)).toString();
}

/** The codec chain of a chunk (or inner chunk) as read: order, gzip, crc32c, or a shard. */
interface Chain {
  readonly order: ByteOrder;
  readonly gzip: number | null;
  readonly crc32c: boolean;
  readonly shard: { readonly config: Record<string, unknown> } | null;
}

/** The object `value` is, or a failure naming `what`. */
function objectOf(r: MetadataReader, value: unknown, what: string): Record<string, unknown> {
  if (value === null || typeof value !== "object" || Array.isArray(value)) {
    r.fail(`${what} ${short(value)} is not an object`);
  }
  return value as Record<string, unknown>;
}

/** The codec chain `codecs` of elements of `dtype`: bytes or a shard, then gzip and crc32c. */
function chainOf(r: MetadataReader, codecs: unknown, dtype: DType, where: string): Chain {
  if (!Array.isArray(codecs) || codecs.length === 0) {
    r.fail(`${where} ${short(codecs)} is not a list of codecs`);
  }
  let order: ByteOrder | undefined;
  let shard: Chain["shard"] = null;
  let gzip: number | null = null;
  let crc = false;
  codecs.forEach((value, k) => {
    const c = objectOf(r, value, `codec ${k} of ${where}`);
    const config = c.configuration === undefined
      ? {}
      : objectOf(r, c.configuration, `configuration of codec ${short(c.name)}`);
    const first = k === 0;
    if (c.name === "bytes" && first) {
      const endian = config.endian;
      if (endian === undefined && DTYPE_SIZE[dtype] === 1) order = NATIVE_ORDER;
      else if (endian === "little" || endian === "big") order = endian;
      else r.fail(`bytes codec endian ${short(endian)}, expected "little" or "big"`);
    } else if (c.name === "sharding_indexed" && first) {
      order = NATIVE_ORDER;
      shard = { config };
    } else if (c.name === "gzip" && !first && gzip === null && !crc) {
      const level = config.level;
      if (!Number.isInteger(level) || (level as number) < 0 || (level as number) > 9) {
        r.fail(`gzip level ${short(level)}, expected 0 to 9`);
      }
      gzip = level as number;
    } else if (c.name === "crc32c" && !first && !crc) crc = true;
    else {
      r.fail(
        `${where}: codec ${short(c.name)} at place ${k} is not one sciobench reads there (bytes ` +
          `or sharding_indexed first, then gzip, crc32c)`,
      );
    }
  });
  return { order: order!, gzip, crc32c: crc, shard };
}

/** The v3 array at `path` its `zarr.json` object `meta` describes, checked. */
export function arrayV3(r: MetadataReader, path: string, meta: Record<string, unknown>): ZarrArray {
  const shape = r.dims(meta.shape, "shape", 0);
  const dtype = typeof meta.data_type === "string" ? DTYPE_OF[meta.data_type] : undefined;
  if (dtype === undefined) {
    r.fail(
      `data_type ${short(meta.data_type)} is not one sciobench reads (bool, int8-int64, ` +
        `uint8-uint64, float32, float64)`,
    );
  }
  const grid = objectOf(r, meta.chunk_grid, "chunk_grid");
  if (grid.name !== "regular") {
    r.fail(`chunk_grid ${short(grid.name)}: sciobench reads the regular grid only`);
  }
  const gridConfig = objectOf(r, grid.configuration, "chunk_grid configuration");
  const chunks = r.dims(gridConfig.chunk_shape, "chunk_shape", 1);
  if (chunks.length !== shape.length) {
    r.fail(`chunk_shape ${short(chunks)} and shape ${short(shape)} differ in rank`);
  }
  const keys = objectOf(r, meta.chunk_key_encoding, "chunk_key_encoding");
  if (keys.name !== "default" && keys.name !== "v2") {
    r.fail(`chunk_key_encoding ${short(keys.name)}, expected "default" or "v2"`);
  }
  const keyConfig = keys.configuration === undefined
    ? {}
    : objectOf(r, keys.configuration, "chunk_key_encoding configuration");
  const separator = keyConfig.separator ?? (keys.name === "default" ? "/" : ".");
  if (separator !== "." && separator !== "/") {
    r.fail(`chunk key separator ${short(separator)}, expected "." or "/"`);
  }
  const transformers = meta.storage_transformers;
  if (transformers !== undefined && (!Array.isArray(transformers) || transformers.length > 0)) {
    r.fail(`storage_transformers ${short(transformers)}: sciobench reads arrays without them`);
  }
  const outer = chainOf(r, meta.codecs, dtype, "codecs");
  let chain = outer;
  let shard: ZarrShard | null = null;
  let readChunks = chunks;
  if (outer.shard !== null) {
    if (outer.gzip !== null || outer.crc32c) {
      r.fail("codecs after sharding_indexed: sciobench reads shards that are not encoded again");
    }
    const config = outer.shard.config;
    const inner = r.dims(config.chunk_shape, "sharding chunk_shape", 1);
    if (inner.length !== shape.length || inner.some((d, k) => chunks[k]! % d !== 0)) {
      r.fail(`sharding chunk_shape ${short(inner)} does not divide chunk_shape ${short(chunks)}`);
    }
    chain = chainOf(r, config.codecs, dtype, "sharding codecs");
    if (chain.shard !== null) r.fail("a shard inside a shard: sciobench reads one level");
    const index = config.index_codecs;
    const indexChain = Array.isArray(index) && index.length > 0
      ? chainOf(r, index, "uint64", "sharding index_codecs")
      : undefined;
    if (
      indexChain === undefined || indexChain.order !== "little" || indexChain.gzip !== null ||
      indexChain.shard !== null
    ) {
      r.fail(
        `sharding index_codecs ${short(index)}: sciobench reads bytes (little), then crc32c or ` +
          `nothing`,
      );
    }
    const location = config.index_location ?? "end";
    if (location !== "end" && location !== "start") {
      r.fail(`sharding index_location ${short(location)}, expected "end" or "start"`);
    }
    let count = 1;
    chunks.forEach((d, k) => count *= d / inner[k]!);
    if (count > MAX_INDEXED_OBJECTS) {
      r.fail(
        `a shard of ${count} inner chunks: more than the ${MAX_INDEXED_OBJECTS} sciobench reads`,
      );
    }
    shard = { chunks: inner, count, indexAtEnd: location === "end", indexCrc: indexChain.crc32c };
    readChunks = inner;
  }
  const typestr = meta.data_type as string;
  r.sizes(shape, readChunks, dtype, typestr);
  return {
    path,
    shape,
    chunks,
    dtype,
    typestr,
    order: chain.order,
    fill: r.fill(meta.fill_value, dtype, typestr, chain.order),
    fillValue: meta.fill_value,
    compressor: chain.gzip === null ? null : { id: "gzip", level: chain.gzip },
    separator,
    format: 3,
    encoding: keys.name === "v2" ? "v2" : "default",
    crc32c: chain.crc32c,
    shard,
    v3: { codecs: meta.codecs, dimensionNames: meta.dimension_names },
  };
}

/** Checks a v3 `zarr.json` object is of zarr_format 3; its node_type. */
export function nodeType(r: MetadataReader, meta: Record<string, unknown>): "array" | "group" {
  if (meta.zarr_format !== 3) r.fail(`zarr_format ${short(meta.zarr_format)}, expected 3`);
  if (meta.node_type !== "array" && meta.node_type !== "group") {
    r.fail(`node_type ${short(meta.node_type)}, expected "array" or "group"`);
  }
  return meta.node_type;
}
