/**
 * One shared file written by every rank (`--layout shared`): each rank writes its own frames at
 * offsets known in advance, rank 0 the header, name lists and index. It works for the native
 * framings whose layout follows from the frame sizes alone (raw, f77, netcdf, gsd): every rank
 * runs the framing's pure writer (lib/framings) over every frame in order, so all ranks compute
 * the same positioned writes, and applies through the native sink (lib/backends/native_sink.ts,
 * with its batching, `--bs` block writer, `--direct`, fsync and audit trail, as a per-rank file)
 * only the bytes of its share. The file is then byte for byte what one process writing all the
 * frames in that order would have written.
 *
 * The shares are planned before the write, outside any timing ({@link planSharedFile}): each byte
 * (each block under O_DIRECT) goes to the rank of the last write that touches it, and that rank
 * applies, of every write in stream order, the bytes inside its share. So each rank writes its
 * own frames (rank 0 the header and index), every byte is written by one rank only, later writes
 * win over earlier ones within that rank (GSD zero-fills a relocated index block whose slots
 * later frames fill), and the file ends up as the serial writer's whatever order the ranks run in.
 *
 * O_DIRECT writes whole aligned blocks: a block holding the end of one rank's frames and the
 * start of the next rank's would be read back, patched and rewritten by both at once, the later
 * rewrite losing the other's bytes, and a rank's padded tail would overwrite its neighbour's head.
 * Frame boundaries cannot be moved onto blocks without changing the file, so under `--direct` the
 * shares are whole blocks ({@link shareBlock}: a page): the rank that owns a block writes all its
 * bytes, a few of them from a neighbouring rank's frame (every rank encodes every frame), and a
 * block's read-back and padding only ever meet its own writes. Only the rank that writes the
 * file's last block cuts the padded tail to the file's length; the others never change it. A
 * file system whose O_DIRECT alignment is larger than a page is refused in one line (use
 * `--layout per-rank`). Without O_DIRECT (`--bs` alone) the shares are exact bytes: the block
 * writer pads nothing, and each rank's calls are bs bytes of its own share.
 * @module
 */
import { clockGettime } from "../sys/libc.ts";
import type { EndianOption, Frame, FrameWriter, Framing, WriteOp } from "../framings/types.ts";
import type { Transfer } from "../io/transfer.ts";
import { signalPoint } from "../io/scratch.ts";
import { pageSize } from "../sys/libc.ts";
import { NativeSink, type NativeSinkOptions, type SinkShare } from "../backends/native_sink.ts";
import { checkSharedLayout } from "../backends/capabilities.ts";
import type { FramePart } from "../backends/backend.ts";
import { UsageError } from "../core/errors.ts";
import { injectedFailure, PeerRankFailed } from "./phase.ts";
import { type World, world } from "./world.ts";

/** How the shared file is written: the framing's options, byte order, fsync and transfers. */
export interface SharedWriteOptions {
  /** Byte order of the data (default native). */
  readonly endian?: EndianOption;
  /** fsync before close (default true). */
  readonly fsync?: boolean;
  /** The framing's own options (marker width, netCDF variant ...). */
  readonly backendOptions?: Readonly<Record<string, unknown>>;
  /** `--bs` / `--direct`: the size of each write system call and O_DIRECT. */
  readonly transfer?: Transfer;
}

/**
 * The frames of one rank in a shared file: `count` of them, local frame i at global index
 * `frameOf(i)`, of `total` in the file. With `segments` S the rank's frames are S blocks of
 * count / S frames, block s of rank r at global frame (s x ranks + r) x count / S, as IOR's `-s`
 * places segment s of rank r at offset (s x ranks + r) x block; S = 1 is one block from `first`.
 */
export interface SharedPart extends FramePart {
  /** The rank global frame `g` belongs to. */
  ownerOf(g: number): number;
}

/**
 * UsageError (one line) unless `segments` is an integer >= 1 that divides `perRank`, the frames
 * (or records) each rank writes.
 */
export function checkSegments(perRank: number, segments: number): void {
  if (Number.isSafeInteger(segments) && segments >= 1 && perRank % segments === 0) return;
  throw new UsageError(
    `--segments ${segments}: each rank writes ${perRank} frames, not a multiple of ${segments}; ` +
      "give a --segments that divides the frames per rank",
  );
}

/**
 * Rank r's frames when every rank writes `perRank` frames in `segments` blocks (default 1: frames
 * r x perRank .. (r + 1) x perRank - 1); UsageError when `segments` does not divide `perRank`.
 */
export function sharedPart(perRank: number, segments = 1, w: World = world()): SharedPart {
  checkSegments(perRank, segments);
  const block = perRank / segments;
  const ranks = w.size;
  return {
    first: w.rank * block,
    count: perRank,
    total: perRank * ranks,
    segments,
    // mutant: shared-segment-order
    frameOf: (i, rank = w.rank) => (Math.floor(i / block) * ranks + rank) * block + (i % block),
    ownerOf: (g) => Math.floor(g / block) % ranks,
  };
}

/** This rank's part of the frames and its share of the file's bytes. */
export interface SharedPlan {
  /** This rank's part. */
  readonly part: SharedPart;
  /** The bytes this rank writes, of every write of the stream (the native sink's filter). */
  readonly share: SinkShare;
}

/**
 * Bytes of the blocks the ranks share a file out in: 1 without O_DIRECT; with it a page, or the
 * largest power of two dividing `bs` when that is smaller (bs is a multiple of the file system's
 * O_DIRECT alignment). Every transfer alignment the native sink uses then divides it, unless the
 * file system's alignment is larger than a page (refused at open).
 */
export function shareBlock(transfer: Transfer | undefined): number {
  if (!transfer?.direct) return 1;
  const page = pageSize();
  let block = 1;
  while (block < page && transfer.bs % (block * 2) === 0) block *= 2;
  return block;
}

/** Sorted, disjoint, merged ranges; `subtract` and `add` walk it with a binary search. */
class Ranges {
  readonly #starts: number[] = [];
  readonly #ends: number[] = [];

  /** Index of the first range whose end is after `at`. */
  #first(at: number): number {
    let lo = 0, hi = this.#ends.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (this.#ends[mid]! <= at) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  /** The parts of [start, end) not in the set. */
  subtract(start: number, end: number): [number, number][] {
    const out: [number, number][] = [];
    let at = start;
    for (let i = this.#first(start); i < this.#starts.length && this.#starts[i]! < end; i++) {
      if (this.#starts[i]! > at) out.push([at, this.#starts[i]!]);
      at = Math.max(at, this.#ends[i]!);
    }
    if (at < end) out.push([at, end]);
    return out;
  }

  /** Adds [start, end), merging with touching ranges. */
  add(start: number, end: number): void {
    const i = this.#first(start - 1);
    let s = start, e = end, n = 0;
    while (i + n < this.#starts.length && this.#starts[i + n]! <= end) {
      s = Math.min(s, this.#starts[i + n]!);
      e = Math.max(e, this.#ends[i + n]!);
      n++;
    }
    this.#starts.splice(i, n, s);
    this.#ends.splice(i, n, e);
  }

  /** The ranges as [start, end) pairs, in order. */
  list(): [number, number][] {
    return this.#starts.map((s, i) => [s, this.#ends[i]!]);
  }
}

/**
 * Plans this rank's share (outside any timing): runs the writer over every frame once, recording
 * each write's byte range and rank (rank 0 for `begin` and `finish`), then, from the last write
 * back, gives each write's rank the blocks ({@link shareBlock}) no later write touches.
 */
export function planSharedFile(
  framing: Framing,
  options: SharedWriteOptions,
  part: SharedPart,
  frameAt: (g: number) => Frame,
  w: World = world(),
): SharedPlan {
  const writer = newWriter(framing, options);
  const starts: number[] = [];
  const ends: number[] = [];
  const owners: number[] = [];
  const record = (ops: readonly WriteOp[], owner: number) => {
    for (const op of ops) {
      if (op.kind !== "write" || op.data.length === 0) continue;
      starts.push(op.offset);
      ends.push(op.offset + op.data.length);
      owners.push(owner);
    }
  };
  record(writer.begin(), 0);
  for (let g = 0; g < part.total; g++) record(writer.writeFrame(frameAt(g)), part.ownerOf(g));
  record(writer.finish(), 0);
  const block = shareBlock(options.transfer);
  const touched = new Ranges();
  const mine = new Ranges();
  let fileEnd = 0;
  for (let k = starts.length - 1; k >= 0; k--) {
    const lo = Math.floor(starts[k]! / block), hi = Math.ceil(ends[k]! / block);
    if (owners[k] === w.rank) { for (const [s, e] of touched.subtract(lo, hi)) mine.add(s, e); }
    touched.add(lo, hi);
    if (ends[k]! > fileEnd) fileEnd = ends[k]!;
  }
  const ranges = mine.list().map(([s, e]) => [s * block, e * block] as const);
  const last = fileEnd === 0 ? w.rank === 0 : ranges.some(([s, e]) => s < fileEnd && fileEnd <= e);
  return {
    part,
    share: { ranges, block, creates: w.rank === 0, last, writes: starts.length },
  };
}

function newWriter(framing: Framing, options: SharedWriteOptions): FrameWriter {
  checkSharedLayout(framing);
  return framing.createWriter({ ...options.backendOptions, endian: options.endian ?? "native" });
}

/**
 * Writes this rank's share of the shared file `path` (a collective: every rank calls it with the
 * same arguments but its own plan) through the native sink. `frameAt(g)` gives global frame g,
 * of the same layout on every rank (every rank encodes every frame); its data reaches the file
 * from the rank whose share holds its bytes: without O_DIRECT only this rank's own frames' data
 * does, under O_DIRECT also the bytes of its neighbours' frames in the pages it owns, so
 * `frameAt` then gives every frame its owner's data. `beforeFrame(i)` is called before each of
 * this rank's frames; `latency` gets the time of each of this rank's frame writes, ns. Returns the seconds spent completing the file (the index and header, the
 * fsync, the close). A rank that fails stops the others here with {@link PeerRankFailed}, never a
 * hang.
 */
export async function writeSharedFrames(
  framing: Framing,
  path: string,
  options: SharedWriteOptions,
  plan: SharedPlan,
  frameAt: (g: number) => Frame,
  beforeFrame?: (i: number) => void,
  latency?: { record(ns: number): void },
): Promise<number> {
  checkSharedLayout(framing);
  const w = world();
  const part = plan.part;
  const sinkOptions: NativeSinkOptions = {
    create: "truncate",
    endian: options.endian,
    fsync: (options.fsync ?? true) ? "end" : "none",
    backendOptions: options.backendOptions,
    transfer: options.transfer,
    share: plan.share,
  };
  let sink: NativeSink | undefined;
  let failure: unknown;
  if (plan.share.creates) {
    try {
      sink = new NativeSink(framing, path, sinkOptions);
    } catch (e) {
      failure = e;
    }
  }
  w.barrier(); // the file is created
  try {
    if (failure === undefined) {
      sink ??= new NativeSink(framing, path, sinkOptions);
      let own = 0;
      for (let g = 0; g < part.total; g++) {
        const mine = part.ownerOf(g) === w.rank;
        if (mine) beforeFrame?.(own);
        const frame = frameAt(g);
        const t0 = mine && latency ? clockGettime() : 0;
        sink.writeFrame(frame);
        if (mine && latency) latency.record(clockGettime() - t0);
        if (mine && own++ === 0) injectedFailure("shared-write", w.rank);
        const y = signalPoint();
        if (y) await y;
      }
      sink.flush();
    }
  } catch (e) {
    failure ??= e;
  }
  // Every rank's frames are in the file (or some rank failed) before it is completed.
  const [ok] = w.allreduce([failure === undefined ? 1 : 0], "min");
  if (failure !== undefined || ok !== 1) {
    try {
      sink?.abort();
    } catch {
      // the first failure is the one to report
    }
    if (failure !== undefined) throw failure;
    throw new PeerRankFailed(`${path}: another rank failed while writing the shared file`);
  }
  const t0 = performance.now();
  try {
    sink!.close();
  } catch (e) {
    sink!.abort();
    throw e;
  }
  return (performance.now() - t0) / 1000;
}
