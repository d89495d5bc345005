/**
 * Reading frames with the read of the next frame in flight while the caller works on the one
 * before (verifies it): double buffering over a source's asynchronous frame reads
 * (`readFrameAsync`, `readFrameStoredAsync`), one frame read in flight at a time, so the system
 * calls and their order are those of a plain loop.
 * @module
 */
import type { FrameSource, ReadChunk, StoredChunk } from "./backend.ts";

/** How to read one frame's chunks of type `C`: at once, and (when the source can) overlapped. */
export interface FrameReads<C> {
  /** Reads frame `frame` now. */
  read(frame: number): readonly C[];
  /** Reads frame `frame` with its large reads on another thread, when the source can. */
  readonly readAsync?: (frame: number) => Promise<readonly C[]>;
}

/** A source's frames in native byte order (`readFrame`, `readFrameAsync`). */
export function nativeReads(source: FrameSource): FrameReads<ReadChunk> {
  return {
    read: (frame) => source.readFrame(frame),
    readAsync: source.readFrameAsync?.bind(source),
  };
}

/** A source's frames as stored (`readFrameStored`, `readFrameStoredAsync`); undefined without. */
export function storedReads(source: FrameSource): FrameReads<StoredChunk> | undefined {
  const read = source.readFrameStored?.bind(source);
  return read && { read, readAsync: source.readFrameStoredAsync?.bind(source) };
}

/**
 * Reads the frames `order` lists, in that order, and calls `visit` with each (its chunks valid
 * during the call). With `reads.readAsync` (native framings) the read of frame k + 1 is issued
 * before `visit` gets frame k, and is in flight on another thread while it runs; else (peers, or
 * `overlap` false) each frame is read and visited in turn. Returns when the last frame is read
 * and visited; when `visit` throws, the read in flight is awaited (its buffer and descriptor stay
 * in use until it ends) before the error goes on.
 */
export async function readFramesOverlapped<C>(
  order: ArrayLike<number>,
  reads: FrameReads<C>,
  visit: (frame: number, chunks: readonly C[], k: number) => void | Promise<void>,
  overlap = true,
): Promise<void> {
  const n = order.length;
  const readAsync = overlap ? reads.readAsync : undefined;
  if (readAsync === undefined) {
    for (let k = 0; k < n; k++) {
      const frame = order[k]!;
      const seen = visit(frame, reads.read(frame), k);
      if (seen) await seen;
    }
    return;
  }
  if (n === 0) return;
  let next: Promise<readonly C[]> | undefined = readAsync(order[0]!);
  try {
    for (let k = 0; k < n; k++) {
      const chunks: readonly C[] = await next!;
      next = k + 1 < n ? readAsync(order[k + 1]!) : undefined;
      const seen = visit(order[k]!, chunks, k);
      if (seen) await seen;
    }
  } finally {
    if (next) await next.catch(() => {});
  }
}
