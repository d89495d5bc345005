/**
 * A {@link ByteSource} for a decoder's scan of a file (its open: record markers, headers, an
 * index). The first 64 reads use pread (a header and an index need no more); a scan that goes on
 * (a record per read) is a scan of the whole file. When the file is not in the page cache, it reads through a memory mapping advised
 * MADV_SEQUENTIAL, so the kernel fetches the file in large sequential reads, one pass that never
 * reads a byte twice, instead of one small synchronous read per record. When the file is cached
 * (half of the window or more), a page fault costs more than a small pread, so it reads with
 * pread. After `release()` (the open is done) reads go through pread, so an index that reads
 * lazily keeps working.
 * @module
 */
import { type FileMapping, mapFile, noteMappedRead, pageSize } from "../sys/libc.ts";
import type { FileHandle } from "./file.ts";
import type { ByteSource } from "./types.ts";

/** Bytes mapped at once, a multiple of the page size: 16 MiB, whatever the file's size. */
const WINDOW = 1 << 24;
/** Reads made with pread before the mapping is considered: a header and an index need no more. */
const SCAN_READS = 64;
/** Resident fraction of a window above which the file is read with pread instead. */
const WARM = 0.5;
/** Bytes the window maps beyond its end, so a small read across its end needs no second map. */
const OVERLAP = 1 << 16;

/** The file's bytes through a mapping (16 MiB windows) while cold, until `release()`; else pread. */
export class MappedSource implements ByteSource {
  readonly path: string;
  readonly size: number;
  readonly #file: FileHandle;
  #map: FileMapping | undefined;
  #start = 0;
  #released = false;
  #reads = 0;
  /** Bytes of the current window. */
  #mapped = 0;

  /** A source over `file`, which stays open (and owned by the caller) while this is used. */
  constructor(file: FileHandle) {
    this.path = file.path;
    this.size = file.size;
    this.#file = file;
  }

  /** Reads exactly `length` bytes at `offset` into a new array; ShortReadError past the end. */
  read(offset: number, length: number): Uint8Array {
    if (length === 0 && offset <= this.size) return new Uint8Array(0);
    if (
      this.#released || offset + length > this.size || length > WINDOW ||
      ++this.#reads <= SCAN_READS
    ) {
      return this.#file.read(offset, length);
    }
    let map = this.#map;
    if (!map || offset < this.#start || offset + length > this.#start + this.#mapped) {
      map?.unmap();
      this.#start = offset - (offset % WINDOW);
      if (offset + length > this.#start + WINDOW + OVERLAP) {
        // a read across the window's end: the window starts at the read's page instead
        this.#start = offset - (offset % pageSize());
      }
      this.#mapped = Math.min(WINDOW + OVERLAP, this.size - this.#start);
      map = mapFile(this.#file.fd, this.#start, this.#mapped, this.path);
      this.#map = map;
      if (map.resident() >= WARM) {
        // Cached already: a page fault costs more than a small pread (measured, bench/open_bench.ts).
        this.release();
        return this.#file.read(offset, length);
      }
    }
    const at = offset - this.#start;
    noteMappedRead(this.#file.fd, offset, length);
    return map.bytes.slice(at, at + length);
  }

  /** Ends the mapping; later reads use pread. Safe to call twice. */
  release(): void {
    this.#released = true;
    this.#map?.unmap();
    this.#map = undefined;
  }
}
