/**
 * Deterministic, seeded data for benchmark frames, and the check that data read back is what
 * was written. The per-frame stamp makes every frame differ, as gsd's benchmark does.
 * @module
 */
import { VerifyError } from "../core/errors.ts";
import type { ByteOrder, Chunk, Frame } from "../framings/types.ts";
import type { FrameSource, QueueSpec, ReadChunk, StoredChunk } from "../backends/backend.ts";
import { NATIVE_ORDER } from "../bytes/byteswap.ts";
import { bytesEqual, clockGettime } from "../sys/libc.ts";
import { chunkBytes } from "../framings/kit.ts";
import {
  type LatencyRecorder,
  nativeReads,
  readFramesOverlapped,
  storedReads,
} from "../backends/overlap.ts";

/** A seeded pseudo-random generator (SplitMix32-style); `next()` gives floats in [0, 1). */
export class Rng {
  #s: number;

  constructor(seed: number) {
    this.#s = (seed >>> 0) ^ 0x9e3779b9;
  }

  /** Next unsigned 32-bit integer. */
  nextU32(): number {
    let z = (this.#s = (this.#s + 0x9e3779b9) | 0);
    z = Math.imul(z ^ (z >>> 16), 0x85ebca6b);
    z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35);
    return (z ^ (z >>> 16)) >>> 0;
  }

  /** Next float in [0, 1). */
  next(): number {
    return this.nextU32() / 4294967296;
  }

  /** Integer in [0, n). */
  below(n: number): number {
    return Math.floor(this.next() * n);
  }
}

/** Fills `out` with seeded floats in [0, 1); returns it. */
export function fillRandom<T extends Float32Array | Float64Array>(out: T, rng: Rng): T {
  for (let i = 0; i < out.length; i++) out[i] = rng.next();
  return out;
}

/** The first `take` entries of a seeded random permutation of 0..n-1. */
export function shuffledOrder(n: number, take: number, rng: Rng): Uint32Array {
  const order = new Uint32Array(n);
  for (let i = 0; i < n; i++) order[i] = i;
  for (let i = n - 1; i > 0; i--) {
    const j = rng.below(i + 1);
    const t = order[i]!;
    order[i] = order[j]!;
    order[j] = t;
  }
  return order.subarray(0, take);
}

/**
 * Frames a verified read expects: frame `i` as written (native order), and the bytes of its chunks
 * with the elements in a stored byte order, so that data read as stored (big-endian netCDF) is
 * compared with what was written without a byte swap.
 */
export interface ExpectedFrames {
  /** Frame `i` as written. */
  frame(i: number): Frame;
  /**
   * The bytes of frame `i`'s chunks, in `frame(i).chunks` order, with every element in `order`;
   * views valid until the next call.
   */
  bytesIn(i: number, order: ByteOrder): readonly Uint8Array[];
}

/**
 * Makes the bytes a verified read of `source` compares its frames with, before the reads are
 * timed: where the source reads frames as stored in the other byte order than this machine's
 * (big-endian netCDF classic, raw written big-endian), `expected`'s bytes in that order (the
 * table's frames build them at the first request: a swapped copy of a frame, 28 N bytes, which
 * at N = 1024^2 costs as much as a 64 MiB cell's whole read phase). A native-order read compares
 * with the written arrays, which exist before its read phase; so do these. No file
 * I/O and no frame lookup (a gsd index is loaded at the first lookup, inside the timed phase):
 * only the order the source knows from its open (`storedOrder`).
 */
export function prepareVerified(source: FrameSource, expected: ExpectedFrames): void {
  const order = source.storedOrder;
  if (source.readFrameStored && order !== undefined && order !== NATIVE_ORDER) {
    expected.bytesIn(0, order);
  }
}

/**
 * Reads frame `i` of `source` and checks it against `expected` (VerifyError naming the file,
 * frame, chunk and byte). Sources that read frames as stored are compared in the file's byte order
 * (one memcmp a chunk, no swap); others through `readFrame` and {@link verifyFrame}. Returns the
 * chunks read (bytes as stored, or native). With `latency`, the read's own time is recorded, ns.
 */
export function readVerified(
  source: FrameSource,
  i: number,
  expected: ExpectedFrames,
  latency?: LatencyRecorder,
): readonly { readonly data: Uint8Array }[] {
  const t0 = latency && clockGettime();
  if (source.readFrameStored) {
    const got = source.readFrameStored(i);
    if (latency) latency.record(clockGettime() - t0!);
    verifyStoredFrame(source.path, i, expected, got);
    return got;
  }
  const got = source.readFrame(i);
  if (latency) latency.record(clockGettime() - t0!);
  verifyFrame(source.path, i, expected.frame(i).chunks, got);
  return got;
}

/**
 * {@link readVerified} for every frame `order` lists, in order, with the read of frame k + 1 in
 * flight while frame k is verified where the source reads asynchronously (lib/backends/overlap.ts;
 * `overlap` false: one after the other). `after(k, chunks)` runs once frame k is verified, with
 * its chunks (valid during the call; progress, byte counts) and may return a promise, which is
 * awaited. With `spent`, the time each verification took is added to `spent.seconds`; with
 * `latency`, each frame read's latency is recorded (lib/backends/overlap.ts says from when to when).
 * With `queue` (--iodepth, --engine) and a native source, up to the depth's requests are in
 * flight, each frame verified as it completes (in completion order; `after`'s promises awaited
 * once every frame is read) and each request's latency recorded.
 */
export async function readVerifiedFrames(
  source: FrameSource,
  order: ArrayLike<number>,
  expected: ExpectedFrames,
  after: (
    k: number,
    chunks: readonly { readonly data: Uint8Array }[],
  ) => Promise<void> | undefined = () => undefined,
  overlap = true,
  spent?: VerifyTime,
  latency?: LatencyRecorder,
  queue?: QueueSpec,
): Promise<void> {
  if (queue !== undefined && source.readFramesStoredQueued) {
    // --iodepth / --engine: up to the depth's requests in flight, each frame verified as it
    // completes while the next requests are in flight
    let failure: unknown;
    const pending: Promise<void>[] = [];
    source.readFramesStoredQueued(order, queue, (i, got, k) => {
      if (failure !== undefined) return;
      const t0 = spent && performance.now();
      verifyStoredFrame(source.path, i, expected, got);
      if (spent) spent.seconds += (performance.now() - t0!) / 1000;
      const seen = after(k, got);
      if (seen) pending.push(seen.catch((e) => void (failure ??= e)));
    }, latency);
    await Promise.all(pending);
    if (failure !== undefined) throw failure;
    return;
  }
  const stored = storedReads(source);
  if (stored) {
    await readFramesOverlapped(
      order,
      stored,
      (i, got, k) => {
        const t0 = spent && performance.now();
        verifyStoredFrame(source.path, i, expected, got);
        if (spent) spent.seconds += (performance.now() - t0!) / 1000;
        return after(k, got);
      },
      overlap,
      latency,
    );
    return;
  }
  await readFramesOverlapped(order, nativeReads(source), (i, got, k) => {
    const t0 = spent && performance.now();
    verifyFrame(source.path, i, expected.frame(i).chunks, got);
    if (spent) spent.seconds += (performance.now() - t0!) / 1000;
    return after(k, got);
  }, overlap);
}

/** Wall time the reading thread spent verifying frames (comparing their bytes), seconds. */
export interface VerifyTime {
  /** Accumulated over every frame verified, seconds. */
  seconds: number;
}

/**
 * Checks that the chunks read for `frame` hold exactly the expected chunks' bytes. A read chunk
 * is matched by name, or else by order among chunks of the same byte length (formats without
 * names). Throws VerifyError naming the file, frame, chunk and first differing byte.
 */
export function verifyFrame(
  path: string,
  frame: number,
  expected: readonly Chunk[],
  got: readonly ReadChunk[],
): void {
  verifyChunks(path, frame, expected, got, (k) => chunkBytes(expected[k]!), () => "");
}

/**
 * {@link verifyFrame} for chunks read as stored: each is compared with the expected bytes in its
 * own byte order; the VerifyError also names the file offset of the first differing byte.
 */
export function verifyStoredFrame(
  path: string,
  frame: number,
  expected: ExpectedFrames,
  got: readonly StoredChunk[],
): void {
  const chunks = expected.frame(frame).chunks;
  let swapped: readonly Uint8Array[] | undefined;
  let swappedOrder: ByteOrder | undefined;
  const wantOf = (k: number, g: StoredChunk): Uint8Array => {
    // mutant: verify-stored-big-endian
    if (g.order === NATIVE_ORDER) return chunkBytes(chunks[k]!);
    if (swappedOrder !== g.order) {
      swapped = expected.bytesIn(frame, g.order);
      swappedOrder = g.order;
    }
    return swapped![k]!;
  };
  const where = (g: StoredChunk, at: number) =>
    `file byte ${fileByte(g, at)}${g.order === NATIVE_ORDER ? "" : `, stored ${g.order}-endian`}: `;
  verifyChunks(path, frame, chunks, got, wantOf, where);
}

/** The file offset of byte `at` of a stored chunk (through its pieces when it has them). */
function fileByte(g: StoredChunk, at: number): number {
  if (!g.pieces) return g.offset + at;
  let left = at;
  for (const [offset, length] of g.pieces) {
    if (left < length) return offset + left;
    left -= length;
  }
  return g.offset + at;
}

/**
 * The matching and comparison of {@link verifyFrame}: `wantOf(k, g)` gives the bytes read chunk
 * `g` must hold for expected chunk `k`, and `where(g, at)` what the message says before the bytes.
 */
function verifyChunks<G extends { readonly name: string; readonly data: Uint8Array }>(
  path: string,
  frame: number,
  expected: readonly Chunk[],
  got: readonly G[],
  wantOf: (k: number, g: G) => Uint8Array,
  where: (g: G, at: number) => string,
): void {
  const used = new Set<number>();
  for (let k = 0; k < expected.length; k++) {
    const e = expected[k]!;
    const wantLength = e.data.byteLength;
    let j = got.findIndex((g) => g.name === e.name);
    if (j < 0) {
      j = got.findIndex((g, i) =>
        !used.has(i) && g.data.length === wantLength && g.name !== e.name
      );
    }
    if (j < 0) {
      throw new VerifyError(
        `${path}: frame ${frame}: no chunk '${e.name}' of ${wantLength} bytes was read (got ${
          got.map((g) => `${g.name}:${g.data.length}`).join(", ") || "nothing"
        })`,
      );
    }
    used.add(j);
    const g = got[j]!;
    if (g.data.length !== wantLength) {
      throw new VerifyError(
        `${path}: frame ${frame}: chunk '${g.name}' has ${g.data.length} bytes, expected ${wantLength}`,
      );
    }
    const want = wantOf(k, g);
    if (!bytesEqual(g.data, want)) {
      let at = 0;
      while (at < want.length && g.data[at] === want[at]) at++;
      throw new VerifyError(
        `${path}: frame ${frame}: chunk '${g.name}' differs from what was written at byte ${at} of the chunk ` +
          `(${where(g, at)}read 0x${g.data[at]!.toString(16).padStart(2, "0")}, wrote 0x${
            want[at]!.toString(16).padStart(2, "0")
          })`,
      );
    }
  }
}
