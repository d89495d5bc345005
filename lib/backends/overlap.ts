/**
 * Reading frames with the read of the next frame in flight while the caller works on the one
 * before (verifies it): double buffering over a source's asynchronous frame reads
 * (`readFrameAsync`, `readFrameStoredAsync`), one frame read in flight at a time, so the system
 * calls and their order are those of a plain loop.
 * @module
 */
import type { FrameSource, ReadChunk, StoredChunk } from "./backend.ts";
import { clockGettime } from "../sys/libc.ts";

/** Where each frame read's latency goes, nanoseconds (lib/report/histogram.ts records them). */
export interface LatencyRecorder {
  /** Adds one frame read's latency, ns. */
  record(ns: number): void;
}

/** How to read one frame's chunks of type `C`: at once, and (when the source can) overlapped. */
export interface FrameReads<C> {
  /** Reads frame `frame` now. */
  read(frame: number): readonly C[];
  /** Reads frame `frame` with its large reads on another thread, when the source can. */
  readonly readAsync?: (frame: number) => PromiseLike<readonly C[]>;
  /**
   * `readAsync` may be called while the frame before is in flight: it completes that one, then
   * submits its own read (FrameSource.pipelined).
   */
  readonly pipelined?: boolean;
  /**
   * Every read is a collective call (FrameSource.collective): after a failure the rest of the
   * frames are still read, unchecked, so every rank makes as many calls.
   */
  readonly collective?: boolean;
}

/** A source's frames in native byte order (`readFrame`, `readFrameAsync`). */
export function nativeReads(source: FrameSource): FrameReads<ReadChunk> {
  return {
    read: (frame) => source.readFrame(frame),
    readAsync: source.readFrameAsync?.bind(source),
    pipelined: source.pipelined === true,
    collective: source.collective === true,
  };
}

/** A source's frames as stored (`readFrameStored`, `readFrameStoredAsync`); undefined without. */
export function storedReads(source: FrameSource): FrameReads<StoredChunk> | undefined {
  const read = source.readFrameStored?.bind(source);
  return read && {
    read,
    readAsync: source.readFrameStoredAsync?.bind(source),
    pipelined: source.pipelined === true,
    collective: source.collective === true,
  };
}

/**
 * Reads the frames `order` lists, in that order, and calls `visit` with each (its chunks valid
 * during the call); on a collective source (`reads.collective`) a failure is thrown once every
 * frame is read. With `reads.readAsync` (native framings) the read of frame k + 1 is issued
 * before `visit` gets frame k, and is in flight on another thread while it runs; else (peers, or
 * `overlap` false) each frame is read and visited in turn. Returns when the last frame is read
 * and visited; when `visit` throws, the read in flight is awaited (its buffer and descriptor stay
 * in use until it ends) before the error goes on.
 *
 * With `latency`, each frame read's latency (CLOCK_MONOTONIC, ns) is recorded: read one after the
 * other, the read call's own time; overlapped, from the read's submission to the moment this
 * thread takes its frame, which includes the rest of the previous frame's visit when that lasts
 * longer than the read.
 */
export async function readFramesOverlapped<C>(
  order: ArrayLike<number>,
  reads: FrameReads<C>,
  visit: (frame: number, chunks: readonly C[], k: number) => void | Promise<void>,
  overlap = true,
  latency?: LatencyRecorder,
): Promise<void> {
  const n = order.length;
  const readAsync = overlap ? reads.readAsync : undefined;
  if (readAsync === undefined) {
    for (let k = 0; k < n; k++) {
      const frame = order[k]!;
      try {
        const t0 = latency && clockGettime();
        const chunks = reads.read(frame);
        if (latency) latency.record(clockGettime() - t0!);
        const seen = visit(frame, chunks, k);
        if (seen) await seen;
      } catch (e) {
        if (reads.collective) readTheRest(order, k + 1, reads);
        throw e;
      }
    }
    return;
  }
  if (n === 0) return;
  if (reads.pipelined) return await readPipelined(order, readAsync, visit, latency);
  let submitted = latency && clockGettime();
  let next: PromiseLike<readonly C[]> | undefined = readAsync(order[0]!);
  try {
    for (let k = 0; k < n; k++) {
      const chunks: readonly C[] = await next!;
      if (latency) latency.record(clockGettime() - submitted!);
      if (latency) submitted = clockGettime();
      // mutant: overlap-read-ahead
      next = k + 1 < n ? readAsync(order[k + 1]!) : undefined;
      const seen = visit(order[k]!, chunks, k);
      if (seen) await seen;
    }
  } finally {
    if (next) await Promise.resolve(next).catch(() => {});
  }
}

/**
 * The reads of `order` from `k` on, unchecked and their failures ignored: a rank that failed
 * still makes its share of a collective source's calls, so the others' reads complete.
 */
function readTheRest<C>(order: ArrayLike<number>, k: number, reads: FrameReads<C>): void {
  for (let i = k; i < order.length; i++) {
    try {
      reads.read(order[i]!);
    } catch {
      // the first failure is the one to report
    }
  }
}

/**
 * {@link readFramesOverlapped} over a pipelined source: frame k + 1's read is started before
 * frame k is awaited. The source plans it (its index entries and range) while frame k's read is in
 * flight, then completes frame k (the reap) and submits frame k + 1's read at once, so the device
 * waits between the two only for the reap and the submission, as between fio's preads; frame k is
 * then visited while frame k + 1's read is in flight. One read in flight at a time, the same
 * reads in the same order. On an error every frame read started is awaited before it goes on.
 */
async function readPipelined<C>(
  order: ArrayLike<number>,
  readAsync: (frame: number) => PromiseLike<readonly C[]>,
  visit: (frame: number, chunks: readonly C[], k: number) => void | Promise<void>,
  latency?: LatencyRecorder,
): Promise<void> {
  const n = order.length;
  let started = latency && clockGettime();
  let current: PromiseLike<readonly C[]> | undefined = readAsync(order[0]!);
  let upcoming: PromiseLike<readonly C[]> | undefined;
  try {
    for (let k = 0; k < n; k++) {
      // frame k + 1's read is submitted when frame k's completes (its reap, in the call below)
      const reaped = latency && clockGettime();
      // mutant: pipelined-read-ahead
      upcoming = k + 1 < n ? readAsync(order[k + 1]!) : undefined;
      const chunks: readonly C[] = await current!;
      if (latency) {
        latency.record(clockGettime() - started!);
        started = reaped;
      }
      current = upcoming;
      upcoming = undefined;
      const seen = visit(order[k]!, chunks, k);
      if (seen) await seen;
    }
  } finally {
    for (const read of [current, upcoming]) {
      if (read) await Promise.resolve(read).catch(() => {});
    }
  }
}
