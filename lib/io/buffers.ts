/**
 * Large buffers of one process: aligned allocation (in transparent huge pages from 1 MiB), and
 * the spares, buffers that a closed source, a finished writer or a write batcher gave back, for
 * the next one. The first touch of a new page is a page fault (dear on a shadow-paged VM), and
 * on a VM that reports free memory to its host (virtio-balloon free page reporting) a new
 * allocation takes memory the host must fault in again: a buffer made inside a timed phase costs
 * that phase, and takes memory the phase's page cache then lacks. Reusing the spares keeps both
 * out of every cell after a process's first.
 * @module
 */
import { HUGE_PAGE, hugePageBytes } from "../sys/libc.ts";

/** Smallest buffer {@link alignedBytes} puts in huge pages, bytes. */
export const HUGE_PAGES_MIN = 1 << 20;

/** Page size the spares are aligned to, bytes. */
const PAGE = 4096;

/** Bytes of spare buffers kept, at most. */
const SPARE_BYTES = 96 << 20;

/**
 * A Uint8Array of `bytes` bytes whose address is a multiple of `align` (a power of two): a
 * larger ArrayBuffer and the subarray that starts on the boundary (addresses from FFI). With
 * `hugePages` and at least {@link HUGE_PAGES_MIN} bytes, it starts on a 2 MiB boundary and its
 * pages are asked to be transparent huge pages (MADV_HUGEPAGE; a hint the kernel may not take).
 */
export function alignedBytes(bytes: number, align: number, hugePages = false): Uint8Array {
  if (hugePages && bytes >= HUGE_PAGES_MIN && align <= HUGE_PAGE) return hugePageBytes(bytes);
  const raw = new Uint8Array(bytes + align);
  const address = Number(Deno.UnsafePointer.value(Deno.UnsafePointer.of(raw)));
  const skip = (align - (address % align)) % align;
  return raw.subarray(skip, skip + bytes);
}

/** The spares, oldest first (page-aligned; huge pages from HUGE_PAGES_MIN bytes). */
const spares: Uint8Array[] = [];

/**
 * The smallest spare buffer of at least `bytes` (of equal ones, the last given back: a file
 * closed and opened again reads into the same memory), taken from the spares, or a new
 * page-aligned one (huge pages from HUGE_PAGES_MIN bytes). Its bytes are whatever its last user
 * left.
 */
export function takeSpareBuffer(bytes: number): Uint8Array {
  let best = -1;
  for (let k = spares.length - 1; k >= 0; k--) {
    const length = spares[k]!.length;
    if (length >= bytes && (best < 0 || length < spares[best]!.length)) best = k;
  }
  // mutant: spare-read-buffer
  return best >= 0 ? spares.splice(best, 1)[0]! : alignedBytes(bytes, PAGE, true);
}

/** Keeps `buf` (its user is done with it) for the next taker, dropping the oldest beyond 96 MiB. */
export function giveBackSpareBuffer(buf: Uint8Array): void {
  if (buf.length > SPARE_BYTES) return;
  spares.push(buf);
  let total = spareBufferBytes();
  while (total > SPARE_BYTES) total -= spares.shift()!.length;
}

/** Bytes of the spare buffers held now. */
export function spareBufferBytes(): number {
  return spares.reduce((sum, b) => sum + b.length, 0);
}
