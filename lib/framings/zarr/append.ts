/**
 * Appending to a Zarr v2 store sciobench wrote: the frames after its last become chunk files of
 * their own (new names, which no reader of the old metadata reaches), and the writer's finish
 * gives the metadata with the longer first dimension, which the store sink puts in place of the
 * old, each member replaced atomically under the sink's journal. Only a store whose metadata is
 * byte for byte what sciobench writes for its arrays is continued (nothing of the user's is
 * rewritten). After an interrupted append, {@link zarrStrays} names the chunk files beyond the
 * frames its metadata holds, which the rollback removes.
 * @module
 */
import { UsageError } from "../../core/errors.ts";
import { NATIVE_ORDER } from "../../bytes/byteswap.ts";
import type { ByteOrder, FrameWriter, StoreMembers, WriterOptions } from "../types.ts";
import { DTYPE_SIZE } from "../types.ts";
import { checkAppendOrder } from "../raw.ts";
import { pythonJsonBytes } from "./json.ts";
import { MAX_METADATA_BYTES, type ZarrArray } from "./metadata.ts";
import { zarrFrameArrays } from "./index.ts";
import { type StoredArray, ZarrWriter } from "./writer.ts";

/** Most entries of one array's directory {@link zarrStrays} lists. */
const MAX_ARRAY_ENTRIES = 1 << 24;

function equalBytes(a: Uint8Array | undefined, b: Uint8Array): boolean {
  if (a === undefined || a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/** The part of a stored array the writer keeps: its frame's shape and bytes. */
function storedOf(a: ZarrArray): StoredArray {
  const shape = a.shape.slice(1);
  return {
    path: a.path,
    dtype: a.dtype,
    shape,
    bytes: shape.reduce((n, d) => n * d, DTYPE_SIZE[a.dtype]),
  };
}

/**
 * A writer continuing the store `store` reads: UsageError when its arrays make no frames, when
 * `options.endian` contradicts its byte order, or when its metadata is not what sciobench writes
 * for those arrays (zarr-python's attributes, filters or fill values of its own would be lost).
 */
export function zarrAppendWriter(store: StoreMembers, options: WriterOptions = {}): FrameWriter {
  const { arrays, consolidated, why } = zarrFrameArrays(store);
  const first = arrays[0];
  if (first === undefined) {
    throw new UsageError(`zarr cannot append to ${store.path}: ${why ?? "it holds no frames"}`);
  }
  const orders = new Set(arrays.filter((a) => DTYPE_SIZE[a.dtype] > 1).map((a) => a.order));
  const order: ByteOrder = [...orders][0] ?? NATIVE_ORDER;
  checkAppendOrder("zarr", store.path, order, options.endian);
  const writer = new ZarrWriter(
    {
      order,
      separator: first.separator,
      compressor: first.compressor?.id ?? null,
      level: first.compressor?.level ?? 1,
      consolidated,
      version: 2,
      shard: 0,
      crc32c: false,
    },
    { arrays: arrays.map(storedOf), frames: first.shape[0]! },
  );
  const expected: [string, Uint8Array][] = writer.metadata().map((
    [name, value],
  ) => [name, pythonJsonBytes(value)]);
  if (consolidated) {
    const all = Object.fromEntries(writer.metadata());
    expected.push([
      ".zmetadata",
      pythonJsonBytes({ metadata: all, zarr_consolidated_format: 1 }),
    ]);
  }
  for (const [name, bytes] of expected) {
    if (!equalBytes(store.read(name, MAX_METADATA_BYTES), bytes)) {
      throw new UsageError(
        `zarr cannot append to ${store.path}: its ${name} is not as sciobench writes it for ` +
          "these arrays (appending would rewrite it); write a new store",
      );
    }
  }
  return writer;
}

/**
 * The entries of the frame arrays' directories of the store `store` reads that hold chunks of
 * frames at or beyond the count its metadata gives (`7.0.0`, or the directory `7` of `7/0/0`),
 * as member names.
 */
export function zarrStrays(store: StoreMembers): string[] {
  const { arrays } = zarrFrameArrays(store);
  const out: string[] = [];
  for (const a of arrays) {
    const frames = a.shape[0]!;
    for (const name of store.list(a.path, MAX_ARRAY_ENTRIES) ?? []) {
      const lead = /^(\d+)(?:$|\.)/.exec(name);
      if (lead === null || Number(lead[1]) < frames) continue;
      if (a.separator === "/" ? !/^\d+$/.test(name) : name.split(".").length !== a.shape.length) {
        continue;
      }
      out.push(a.path === "" ? name : `${a.path}/${name}`);
    }
  }
  return out;
}
