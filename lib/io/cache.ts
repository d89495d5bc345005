/**
 * Page-cache control without root: flush a file's dirty pages, ask the kernel to drop its
 * cached pages, and measure how much stayed resident.
 * @module
 */
import * as libc from "../sys/libc.ts";

/** Result of a cache drop. */
export interface CacheDrop {
  /** Time the drop took (fdatasync + fadvise + residency check), seconds. */
  readonly seconds: number;
  /** Fraction of the file's pages still in the page cache afterwards (0..1). */
  readonly residentAfter: number;
}

/**
 * Drops `path` from the page cache: fdatasync (dirty pages cannot be dropped), then
 * posix_fadvise(DONTNEED) over the whole file, then a mincore check of what stayed resident.
 */
export function dropCache(path: string): CacheDrop {
  const t0 = libc.clockGettime();
  const fd = libc.open(path, libc.O.RDONLY);
  try {
    libc.fdatasync(fd, path);
    libc.posixFadvise(fd, 0, 0, libc.FADV.DONTNEED, path);
    const size = libc.fileSize(fd, path);
    const residentAfter = libc.residentFraction(fd, size, path);
    return { seconds: (libc.clockGettime() - t0) / 1e9, residentAfter };
  } finally {
    libc.close(fd, path);
  }
}

/** Fraction (0..1) of `path`'s pages that are in the page cache now. */
export function residency(path: string): number {
  const fd = libc.open(path, libc.O.RDONLY);
  try {
    return libc.residentFraction(fd, libc.fileSize(fd, path), path);
  } finally {
    libc.close(fd, path);
  }
}
