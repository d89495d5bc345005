/**
 * Files without frames (an HDF5 file of unrelated datasets, netCDF-4 without an unlimited
 * dimension): every stored array with the CRC-32 of its data for `info`, and `read`'s block
 * workload: each numeric dataset read whole in file order, then seeded random blocks (one HDF5
 * chunk for chunked datasets, else about {@link BLOCK_BYTES} along the slowest dimension), both
 * verified against CRC-32s taken in a first read.
 * @module
 */
import { crc32 } from "node:zlib";
import type { DatasetInfo, FrameSource } from "../backends/backend.ts";
import type { LatencyRecorder } from "../backends/overlap.ts";
import { clockGettime } from "../sys/libc.ts";
import { FormatError, VerifyError } from "../core/errors.ts";
import type { DType } from "../framings/types.ts";
import { DTYPE_SIZE } from "../framings/types.ts";
import { Rng, shuffledOrder } from "./pattern.ts";

/** Size of a random block of a dataset that is not chunked, bytes (about). */
export const BLOCK_BYTES = 1 << 20;

/** Largest piece a whole dataset is read in, bytes (bigger datasets are read in slabs). */
export const SLAB_BYTES = 64 << 20;

/** A region of one dataset: elements [start, start + count). */
export interface Block {
  /** Index of the dataset in the source's `datasets()`. */
  readonly dataset: number;
  /** First element along each dimension. */
  readonly start: readonly number[];
  /** Elements along each dimension. */
  readonly count: readonly number[];
  /** Bytes of the region in memory. */
  readonly bytes: number;
  /** True when the region is one chunk of a chunked dataset. */
  readonly chunk: boolean;
}

/** A dataset as `info` lists it: the catalog entry plus its data size and CRC-32. */
export interface DatasetRow extends DatasetInfo {
  /** Bytes of the data in memory (elements x element size); -1 when not numeric. */
  readonly bytes: number;
  /** CRC-32 of the data in native byte order, row-major, 8 hex digits; null when not numeric. */
  readonly crc32: string | null;
}

function elementsOf(shape: readonly number[]): number {
  return shape.reduce((a, b) => a * b, 1);
}

function hex(n: number): string {
  return (n >>> 0).toString(16).padStart(8, "0");
}

/** Most regions one dataset may be read in. */
export const MAX_BLOCKS = 1 << 22;
/** Largest region read in one call (bytes). */
export const MAX_BLOCK_BYTES = 2 ** 32;

/**
 * Refuses, in O(1) and before any region is planned or allocated, a dataset whose shape asks for
 * more than {@link MAX_BLOCKS} regions or a region over {@link MAX_BLOCK_BYTES} (a damaged or
 * forged extent: sizes near 2^64 reported by a library).
 */
function checkPlan(d: DatasetInfo, path: string, regions: number, regionBytes: number): void {
  if (
    !Number.isSafeInteger(regions) || !Number.isSafeInteger(regionBytes) ||
    regions > MAX_BLOCKS || regionBytes > MAX_BLOCK_BYTES
  ) {
    throw new FormatError(
      "read",
      path,
      -1,
      `dataset '${d.name}' of shape [${d.shape.join(", ")}] needs ${regions} reads of ` +
        `${regionBytes} bytes (at most ${MAX_BLOCKS} of ${MAX_BLOCK_BYTES}): its extent is ` +
        `probably damaged`,
    );
  }
}

/** Regions of `rows` slowest-dimension rows each that cover a dataset in order. */
function slabsOf(
  d: DatasetInfo,
  index: number,
  dtype: DType,
  maxBytes: number,
  path: string,
): Block[] {
  const size = DTYPE_SIZE[dtype];
  if (d.shape.length === 0) {
    return [{ dataset: index, start: [], count: [], bytes: size, chunk: false }];
  }
  const rowBytes = elementsOf(d.shape.slice(1)) * size;
  const total = d.shape[0]!;
  if (total === 0 || rowBytes === 0) return [];
  const rows = Math.max(1, Math.floor(maxBytes / rowBytes));
  checkPlan(d, path, Math.ceil(total / rows), rows * rowBytes);
  const out: Block[] = [];
  for (let r = 0; r < total; r += rows) {
    const n = Math.min(rows, total - r);
    out.push({
      dataset: index,
      start: [r, ...d.shape.slice(1).map(() => 0)],
      count: [n, ...d.shape.slice(1)],
      bytes: n * rowBytes,
      chunk: false,
    });
  }
  return out;
}

/** The chunk grid of a chunked dataset, each cell clipped to the dataset's extent. */
function chunksOf(d: DatasetInfo, index: number, dtype: DType, path: string): Block[] {
  const chunk = d.chunk!;
  const grid = d.shape.map((n, k) => Math.ceil(n / chunk[k]!));
  const cells = elementsOf(grid);
  checkPlan(d, path, cells, elementsOf(chunk) * DTYPE_SIZE[dtype]);
  const out: Block[] = [];
  const at = new Array<number>(grid.length).fill(0);
  for (let c = 0; c < cells; c++) {
    const start = at.map((g, k) => g * chunk[k]!);
    const count = start.map((s, k) => Math.min(chunk[k]!, d.shape[k]! - s));
    out.push({
      dataset: index,
      start,
      count,
      bytes: elementsOf(count) * DTYPE_SIZE[dtype],
      chunk: true,
    });
    for (let k = grid.length - 1; k >= 0; k--) {
      if (++at[k]! < grid[k]!) break;
      at[k] = 0;
    }
  }
  return out;
}

/** The random-read units of a dataset: its chunks when chunked, else slabs of about `blockBytes`. */
export function blocksOf(
  d: DatasetInfo,
  index: number,
  blockBytes = BLOCK_BYTES,
  path = "",
): Block[] {
  if (!d.dtype || elementsOf(d.shape) === 0) return [];
  const chunked = d.storage === "chunked" && d.chunk !== undefined &&
    d.chunk.length === d.shape.length && d.chunk.every((c) => c > 0);
  return chunked ? chunksOf(d, index, d.dtype, path) : slabsOf(d, index, d.dtype, blockBytes, path);
}

/** The pieces a numeric dataset is read whole in (one, or slabs of at most {@link SLAB_BYTES}). */
export function wholeOf(d: DatasetInfo, index: number, path = ""): Block[] {
  if (!d.dtype || elementsOf(d.shape) === 0) return [];
  return slabsOf(d, index, d.dtype, SLAB_BYTES, path);
}

/** Numeric datasets in file order (by offset where known, else in the order listed). */
export function fileOrder(datasets: readonly DatasetInfo[]): number[] {
  const key = (i: number) => (datasets[i]!.offset >= 0 ? datasets[i]!.offset : Infinity);
  return datasets.map((_, i) => i).filter((i) => datasets[i]!.dtype !== undefined)
    .sort((a, b) => key(a) - key(b) || a - b);
}

/** Reads the given blocks of `source` through one growing buffer; calls `visit` on each one's bytes. */
export class BlockReader {
  #buf = new Uint8Array(1 << 16);
  constructor(private readonly source: FrameSource) {}

  /** Reads one block; the view is valid until the next call. */
  read(b: Block): Uint8Array {
    if (this.#buf.length < b.bytes) {
      let cap = this.#buf.length;
      while (cap < b.bytes) cap *= 2;
      this.#buf = new Uint8Array(cap);
    }
    const view = this.#buf.subarray(0, b.bytes);
    this.source.readRegion!(b.dataset, b.start, b.count, view);
    return view;
  }
}

/** Every dataset of a source with the CRC-32 of its data (numeric ones, native byte order). */
export function listDatasets(source: FrameSource): DatasetRow[] {
  const datasets = source.datasets?.() ?? [];
  const reader = new BlockReader(source);
  return datasets.map((d, i) => {
    if (!d.dtype || !source.readRegion) return { ...d, bytes: -1, crc32: null };
    let crc = 0;
    let bytes = 0;
    for (const b of wholeOf(d, i, source.path)) {
      crc = crc32(reader.read(b), crc);
      bytes += b.bytes;
    }
    return { ...d, bytes, crc32: hex(crc) };
  });
}

/** The plan of a block run: pieces for the sequential phase and units for the random one. */
export interface BlockPlan {
  /** Whole datasets in file order, in slabs. */
  readonly sequential: readonly Block[];
  /** Every random unit, in a seeded random order. */
  readonly random: readonly Block[];
  /** `chunk`, `block` or `chunk+block`. */
  readonly unit: string;
}

/** Plans the two phases over every numeric dataset of `source`, limited to about `sample` bytes each. */
export function planBlocks(source: FrameSource, seed: number, sample = Infinity): BlockPlan {
  const datasets = source.datasets?.() ?? [];
  const order = fileOrder(datasets);
  const sequential: Block[] = [];
  let bytes = 0;
  for (const i of order) {
    for (const b of wholeOf(datasets[i]!, i, source.path)) {
      if (bytes >= sample) break;
      sequential.push(b);
      bytes += b.bytes;
    }
  }
  const units = order.flatMap((i) => blocksOf(datasets[i]!, i, BLOCK_BYTES, source.path));
  const random: Block[] = [];
  let rbytes = 0;
  for (const k of shuffledOrder(units.length, units.length, new Rng(seed))) {
    const u = units[k]!;
    if (rbytes >= sample) break;
    random.push(u);
    rbytes += u.bytes;
  }
  const chunks = random.filter((b) => b.chunk).length;
  const unit = chunks === random.length ? "chunk" : chunks === 0 ? "block" : "chunk+block";
  return { sequential, random, unit };
}

/** CRC-32 of every block of a plan, from a first (untimed) read: the reference the timed reads must match. */
export function referenceCrcs(source: FrameSource, blocks: readonly Block[]): Map<Block, number> {
  const reader = new BlockReader(source);
  return new Map(blocks.map((b) => [b, crc32(reader.read(b))]));
}

/**
 * Reads `blocks` in order and checks each against `reference`; VerifyError naming the dataset and
 * region on a mismatch. Returns the bytes read. `tick` is called after each block; with `latency`
 * each block read's time is recorded, ns.
 */
export function readBlocks(
  source: FrameSource,
  blocks: readonly Block[],
  reference: ReadonlyMap<Block, number>,
  tick: (done: number) => void = () => {},
  latency?: LatencyRecorder,
): number {
  const reader = new BlockReader(source);
  const datasets = source.datasets?.() ?? [];
  let bytes = 0;
  for (let k = 0; k < blocks.length; k++) {
    const b = blocks[k]!;
    const t0 = latency && clockGettime();
    const data = reader.read(b);
    if (latency) latency.record(clockGettime() - t0!);
    if (crc32(data) !== reference.get(b)) {
      throw new VerifyError(
        `${source.path}: dataset '${datasets[b.dataset]?.name}' at [${b.start.join(",")}] ` +
          `(${b.count.join("x")}) reads differently from the first read`,
      );
    }
    bytes += b.bytes;
    tick(k);
  }
  return bytes;
}
