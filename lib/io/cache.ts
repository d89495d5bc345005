/**
 * Page-cache control without root: flush a file's dirty pages, ask the kernel to drop its
 * cached pages, and measure how much stayed resident.
 * @module
 */
import * as libc from "../sys/libc.ts";
import { isDirectory, storeFiles } from "./store.ts";
import { FileHandle } from "./file.ts";

/** Result of a cache drop. */
export interface CacheDrop {
  /** Time the drop took (fdatasync + fadvise + residency check), seconds. */
  readonly seconds: number;
  /**
   * Fraction of the file's pages still in the page cache afterwards (0..1); of a store (a
   * directory), of the pages of all its files together.
   */
  readonly residentAfter: number;
}

/** The files whose pages make up `path`: itself, or every file of a store (a directory). */
function filesOf(path: string): string[] {
  // mutant: store-every-file
  return isDirectory(path) ? storeFiles(path) : [path];
}

/**
 * Pages of `path` and the fraction of them cached, after `prepare(fd, path)` ran on its open
 * descriptor.
 */
function residentPages(path: string, prepare: (fd: number) => void): [number, number] {
  const fd = libc.open(path, libc.O.RDONLY);
  try {
    prepare(fd);
    const size = libc.fileSize(fd, path);
    const pages = Math.ceil(size / PAGE_BYTES);
    return [pages, libc.residentFraction(fd, size, path) * pages];
  } finally {
    libc.close(fd, path);
  }
}

/** Bytes of a page, for weighing each file of a store by its pages. */
const PAGE_BYTES = 4096;

/** The fraction of all the pages of `files` that are cached after `prepare` ran on each. */
function residentOf(files: readonly string[], prepare: (fd: number, path: string) => void): number {
  let pages = 0, cached = 0;
  for (const file of files) {
    const [p, c] = residentPages(file, (fd) => prepare(fd, file));
    pages += p;
    cached += c;
  }
  return pages === 0 ? 0 : cached / pages;
}

/**
 * Drops `path` from the page cache: fdatasync (dirty pages cannot be dropped), then
 * posix_fadvise(DONTNEED) over the whole file, then a mincore check of what stayed resident. A
 * store (a directory) is dropped file by file, every file of it; its directories' entries and
 * inodes stay cached (only root can drop those, through /proc/sys/vm/drop_caches).
 */
export function dropCache(path: string): CacheDrop {
  const t0 = libc.clockGettime();
  const residentAfter = residentOf(filesOf(path), (fd, file) => {
    libc.fdatasync(fd, file);
    libc.posixFadvise(fd, 0, 0, libc.FADV.DONTNEED, file);
  });
  return { seconds: (libc.clockGettime() - t0) / 1e9, residentAfter };
}

/**
 * Reads `path` through once (of a store, every file of it) in reads of `blockBytes` bytes
 * (default 4 MiB), so its pages are in the page cache: a warm read's first step.
 */
export function readThrough(path: string, blockBytes = 4 << 20): void {
  const buf = new Uint8Array(blockBytes);
  for (const file of filesOf(path)) {
    const f = FileHandle.open(file, "read");
    try {
      for (let at = 0; at < f.size; at += buf.length) f.readInto(buf, at);
    } finally {
      f.close();
    }
  }
}

/** Fraction (0..1) of `path`'s pages that are in the page cache now (of a store: all its files'). */
export function residency(path: string): number {
  return residentOf(filesOf(path), () => {});
}

/**
 * File systems where posix_fadvise(DONTNEED) on this client cannot make a read cold, by statfs
 * `f_type`, with the reason in a few words.
 */
export const DROP_DOES_NOT_WORK: Readonly<Record<number, string>> = {
  0x6969: "NFS: the server's cache (and the client's attribute and data caches) outlive the drop",
  0x0bd00bd0: "Lustre: the servers' caches and other clients' locks outlive the drop",
  0x47504653: "GPFS: its page pool is not the page cache the drop empties",
  0x19830326: "BeeGFS: its servers' and client's own caches outlive the drop",
  0x00c36400: "CephFS: the OSDs' caches and the client's capabilities outlive the drop",
  0x65735546: "FUSE: the daemon behind it keeps its own cache",
  0x01021994: "tmpfs: the file lives in memory; there is nothing colder to read from",
  0x858458f6: "ramfs: the file lives in memory; there is nothing colder to read from",
};

/** Fraction of a file still cached after a drop above which the drop did not work. */
export const RESIDENT_LIMIT = 0.05;

/** What one cold read phase showed, for {@link coldVerdict}. */
export interface ColdEvidence {
  /** statfs `f_type` of the file's file system. */
  readonly fsType: number;
  /** Fraction of the file cached after the drop (the largest over the drops), 0..1. */
  readonly residentAfterDrop: number;
  /**
   * Bytes the phase read (0: not judged by its device bytes, as an open whose reads are not
   * counted), and the bytes it fetched from the device (getrusage).
   */
  readonly readBytes: number;
  readonly deviceReadBytes: number;
}

/**
 * Why a cold read phase's numbers are not the device's, in a word (`cold_why`): `fs type` (a file
 * system where the drop does not work, such as tmpfs), `resident` (the drop left pages cached),
 * `device bytes` (the phase fetched under half its bytes from the device: a cache served them).
 */
export type ColdReason = "fs type" | "resident" | "device bytes";

/**
 * Whether one cold read phase can be trusted (`cold_ok`): not on a file system where the drop
 * does not work, nothing (more than 5%) left resident by the drop, and at least half the bytes
 * read came from the device. Returns null when it can, else the reason as a word and in one
 * line. Pure.
 */
export function coldVerdict(e: ColdEvidence): { reason: ColdReason; text: string } | null {
  const fs = DROP_DOES_NOT_WORK[e.fsType];
  if (fs !== undefined) return { reason: "fs type", text: `on ${fs}` };
  if (e.residentAfterDrop > RESIDENT_LIMIT) {
    const pct = (e.residentAfterDrop * 100).toFixed(0);
    return { reason: "resident", text: `the drop left ${pct}% of the file in the page cache` };
  }
  if (e.readBytes > 0 && e.deviceReadBytes < e.readBytes / 2) {
    return {
      reason: "device bytes",
      text: `reading ${e.readBytes} bytes fetched only ${e.deviceReadBytes} from the device`,
    };
  }
  return null;
}

/** Why cold reads cannot be trusted in one line ({@link coldVerdict}), or null when they can. */
export function coldReadsDistrusted(e: ColdEvidence): string | null {
  return coldVerdict(e)?.text ?? null;
}
