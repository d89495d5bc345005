/**
 * A {@link ByteSource} for a decoder's scan of a file (its open: record markers, headers, an
 * index). A scanning decoder (f77, IEEEIO) asks for `window`s at its records:
 * - a record near the last one (within 64 KiB) is read in place through a memory mapping (4 MiB
 *   windows, advised MADV_SEQUENTIAL, in one 2 MiB-aligned region reused by every scan): no
 *   system call and no copy per record; a page fault maps 64 KiB (or a large folio) of cached
 *   pages at once;
 * - but in a cached file such a record is read from a copy instead: one pread of the 4 MiB from
 *   the record on into one buffer the process reuses (the copy window), for it and the records
 *   after it. Faulting in the pages of a new mapping costs more than copying them where page
 *   faults are dear (a shadow-paged VM; bench/open_bench.ts measures both), and a record's share
 *   of the copy is small anywhere (a few KiB of a cached pread's copy);
 * - a record far from the last is one small pread when its window is cached (a page fault per
 *   record costs more than a pread there; cachestat of the page read tells, once a window, or,
 *   on kernels before 6.5, mincore of the mapping), else the mapping too; the pread goes into
 *   one buffer the source reuses (a new array a record cost more than the pread: 128^2 table
 *   files, bench/open_bench.ts); once such reads repeat a pattern (the same distances and
 *   lengths every 1 to 4 reads, as a table file's record boundaries do), the next ones it
 *   predicts, up to 64, are read in one io_submit (two system calls for 64 reads instead of one
 *   a record, which is most of a warm open's cost a record: bench/open_bench.ts); a read asked
 *   for that was not predicted ends the prediction;
 * - so are the first 4 records in a row near one another in a cached file not mapped yet: the
 *   mapping's setup (lease, mmap, a page fault, munmap) pays for a run of near records, not for
 *   the two or three reads of a marker detection or a header;
 * - a record over 1 MiB past the end of the last (a Fortran file of large records) is one small
 *   pread, cold or not: a page fault there would read a whole window ahead (readahead), so the
 *   open would fetch the file that the reads after it fetch again (bench/open_bench.ts; readers);
 *   the pread leaves no page it brought in cached (RWF_DONTCACHE, Linux 6.14): such a page amid
 *   a cold file would split the sequential readahead of the record reads after the open;
 * - the scan's first read is a pread that reads only cached pages (RWF_NOWAIT), a plain pread
 *   when they are not: so it tells whether its window is cached, with no cachestat for it;
 * - the buffer of the far and sparse reads goes from a released source to the next: its address
 *   (which an uncached read needs, and whose lookup costs more than a few cached reads after a
 *   read through a large file: bench/open_large_bench.ts) is looked up once in a process;
 * so a cold file is fetched by the kernel in large sequential reads (readahead of the mapping),
 * one pass that never reads a byte twice, instead of one small synchronous read per record.
 * `read` serves the first 64 reads with pread (a header and an index need no more) and a longer
 * scan as windows do, as a copy.
 *
 * Truncation: a page of a mapping that the file no longer has raises SIGBUS, which would end
 * the process. So the file is mapped only under a read lease (lib/sys/libc.ts takeReadLease):
 * while it is held no other process can open the file for writing or truncate it. The lease is
 * checked at every new window; once another process asks to break it, the rest of the scan uses
 * pread, and the kernel makes that process wait until release (at most lease-break-time, 45 s,
 * far more than a 4 MiB window takes). When the lease is refused (the file is open for writing,
 * is another user's, or its file system has no leases) every read is a pread: slower, and safe.
 * After `release()` (the open is done) the mapping and the lease are gone and reads use pread,
 * so an index that reads lazily keeps working.
 * @module
 */
import {
  addressOfBuffer,
  cachedPages,
  leaseIntact,
  type MapRegion,
  mapRegion,
  noteMappedRead,
  pageSize,
  PREAD_MANY_MAX,
  preadIfCached,
  preadMany,
  preadUncached,
  releaseLease,
  takeReadLease,
} from "../sys/libc.ts";
import type { FileHandle } from "./file.ts";
import type { ByteSource } from "./types.ts";

/**
 * Bytes mapped at once, a multiple of 2 MiB: 4 MiB, whatever the file's size (the pages a scan
 * touches count in the process's RSS until the window moves on).
 */
const WINDOW = 1 << 22;
/** Reads made with pread before `read` considers the mapping: a header and an index need no more. */
const SCAN_READS = 64;
/** Bytes the window maps beyond its end, so a small read across its end needs no second map. */
const OVERLAP = 1 << 16;

/** Resident fraction from which a window's far reads are preads (the file is cached). */
const WARM = 0.5;
/** Reads at most this long far from the last are preads when the window is cached (bytes). */
const FAR_READ = 4096;
/** A window this close after the last (bytes) is read in place: a page fault maps 64 KiB around. */
const NEAR = 1 << 16;
/** A window this far after the end of the last (bytes) is sparse: a pread, never the mapping. */
const SPARSE = 1 << 20;
/**
 * Near windows of a cached file read by pread before the file is mapped: the mapping's setup
 * (lease, mmap, first page fault, and at release munmap) pays for a run of near
 * records, not for the two or three a marker detection or a header reads (bench/open_bench.ts).
 */
// mutant: open-scan-near-preads
const NEAR_PREADS = 4;

/** The region a source maps its windows into, kept for the next source when released (see {@link MapRegion}). */
let spareRegion: MapRegion | undefined;

/** A far reads' buffer (FAR_READ bytes) and its address, which an uncached read is given. */
interface FarBuffer {
  readonly bytes: Uint8Array;
  readonly address: bigint;
}
/**
 * The far reads' buffer of the last source released, kept for the next source: its address is
 * looked up once in the process, not once an open (the lookup costs more than the reads of a file
 * of a few large records: lib/sys/libc.ts addressOfBuffer).
 */
let spareFar: FarBuffer | undefined;
/** Far reads of a cached file remembered to find their pattern (the last this many). */
const HISTORY = 9;
/** Longest period (reads) of a pattern of far reads that is read ahead. */
const MAX_PERIOD = 4;

/**
 * Far reads of a cached file read ahead: when the last far reads repeat a pattern (the same
 * distances and lengths every 1 to 4 reads: a record boundary's markers, a dataset's peek), the
 * next ones it predicts (up to 64, inside the file) are read in one io_submit (libc.preadMany)
 * and given out as they are asked for; the first one asked for that was not predicted ends them.
 */
class FarAhead {
  readonly offsets = new Float64Array(PREAD_MANY_MAX);
  readonly lengths = new Int32Array(PREAD_MANY_MAX);
  readonly counts = new Int32Array(PREAD_MANY_MAX);
  /** Read k's bytes at k * FAR_READ. */
  readonly data = new Uint8Array(PREAD_MANY_MAX * FAR_READ);
  /** Reads held, and the next one to give. */
  count = 0;
  next = 0;
  /** The last far reads (offset, length), oldest first, HISTORY at most. */
  readonly seenOffsets = new Float64Array(HISTORY);
  readonly seenLengths = new Int32Array(HISTORY);
  seen = 0;

  /** Forgets what was read ahead and the reads seen (a new scan). */
  reset(): void {
    this.count = this.next = this.seen = 0;
  }

  /** Copies the read held for (offset, length) into `into` and true; false when it is not next. */
  take(offset: number, length: number, into: Uint8Array): boolean {
    const k = this.next;
    if (k >= this.count || this.offsets[k] !== offset || this.lengths[k] !== length) {
      this.count = this.next = 0;
      return false;
    }
    if (this.counts[k] !== length) return false; // short: the file's end moved (read it again)
    this.next = k + 1;
    into.set(this.data.subarray(k * FAR_READ, k * FAR_READ + length));
    return true;
  }

  /** Remembers a far read made. */
  saw(offset: number, length: number): void {
    if (this.seen === HISTORY) {
      this.seenOffsets.copyWithin(0, 1);
      this.seenLengths.copyWithin(0, 1);
      this.seen--;
    }
    this.seenOffsets[this.seen] = offset;
    this.seenLengths[this.seen] = length;
    this.seen++;
  }

  /**
   * The shortest period p (1-4) whose last two rounds of reads moved by the same distances with
   * the same lengths, or 0 when the reads seen have none.
   */
  period(): number {
    const n = this.seen, o = this.seenOffsets, l = this.seenLengths;
    for (let p = 1; p <= MAX_PERIOD && 2 * p + 1 <= n; p++) {
      let same = true;
      for (let j = n - p; j < n && same; j++) {
        same = o[j]! - o[j - 1]! === o[j - p]! - o[j - p - 1]! && l[j] === l[j - p] &&
          o[j]! > o[j - 1]!;
      }
      if (same) return p;
    }
    return 0;
  }

  /** Reads ahead the pattern of period `p` of the reads seen, inside `size` bytes of `fd`. */
  readAhead(p: number, fd: number, size: number, path: string): void {
    const n = this.seen, o = this.seenOffsets, l = this.seenLengths;
    let at = o[n - 1]!;
    let k = 0;
    for (; k < PREAD_MANY_MAX; k++) {
      const j = n - p + (k % p);
      at += o[j]! - o[j - 1]!;
      const length = l[j]!;
      if (at + length > size) break;
      this.offsets[k] = at;
      this.lengths[k] = length;
    }
    this.count = k;
    this.next = 0;
    if (k > 0) preadMany(fd, this.offsets, this.lengths, k, this.data, FAR_READ, this.counts, path);
  }
}

/** The far reads' read-ahead of the last source released, kept for the next. */
let spareAhead: FarAhead | undefined;

/** The copy window of the last source released (WINDOW + OVERLAP bytes), kept for the next. */
let spareCopy: Uint8Array | undefined;

/** The file's bytes through a mapping (4 MiB windows) under a read lease, until `release()`; else pread. */
export class MappedSource implements ByteSource {
  readonly path: string;
  readonly size: number;
  readonly #file: FileHandle;
  /** The region holding the current window, while one is mapped. */
  #map: MapRegion | undefined;
  #start = 0;
  /** Bytes of the current window. */
  #mapped = 0;
  #reads = 0;
  /** Offset of the last `window` asked for, and the end of the bytes it gave. */
  #lastStart = Infinity;
  #lastEnd = -Infinity;
  /** True when the page first read in the current window was in the page cache. */
  #warm = false;
  /** Index (offset / WINDOW) of the window #warm was measured for by cachestat; -1: none. */
  #warmWindow = -1;
  /** False once the kernel or the file system refused a read that leaves no pages cached. */
  #uncached = true;
  /** Near windows in a row (reset by a far one). */
  #nearRun = 0;
  /** The far reads' buffer, reused by every far read (a window is valid until the next call). */
  #far: FarBuffer | undefined;
  /** The last far read's bytes (the start of #far), given again to a read of the same length. */
  #farView: Uint8Array | undefined;
  /** The read-ahead of far reads of a cached file, while this source has it. */
  #ahead: FarAhead | undefined;
  /** The copy window (dense records of a cached file), while this source has it. */
  #copy: Uint8Array | undefined;
  /** File offset and length of the bytes in #copy (0 bytes: none). */
  #copyStart = 0;
  #copyLength = 0;
  /** True after `release()`: no mapping and no copy window, every read a pread. */
  #released = false;
  /** untried: no lease asked for yet; held: mapping allowed; off: pread only (refused, broken or released). */
  #lease: "untried" | "held" | "off" = "untried";

  /** A source over `file`, which stays open (and owned by the caller) while this is used. */
  constructor(file: FileHandle) {
    this.path = file.path;
    this.size = file.size;
    this.#file = file;
  }

  /** True when the mapping may be used: the lease is held (taken now if it was not asked for). */
  #leased(): boolean {
    if (this.#lease === "untried") {
      this.#lease = takeReadLease(this.#file.fd) ? "held" : "off";
    }
    return this.#lease === "held";
  }

  /**
   * The region after mapping a window that covers [offset, offset + length) (length at most
   * WINDOW, inside the file), or undefined when the lease is off or another process now waits to
   * break it (then the mapping and the lease are given up and every later read is a pread).
   */
  #cover(offset: number, length: number): MapRegion | undefined {
    const map = this.#map;
    if (map && offset >= this.#start && offset + length <= this.#start + this.#mapped) return map;
    if (!this.#leased()) return undefined;
    if (!leaseIntact(this.#file.fd)) {
      this.release();
      return undefined;
    }
    this.#start = offset - (offset % WINDOW);
    if (offset + length > this.#start + WINDOW + OVERLAP) {
      // a read across the window's end: the window starts at the read's page instead
      this.#start = offset - (offset % pageSize());
    }
    this.#mapped = Math.min(WINDOW + OVERLAP, this.size - this.#start);
    const region = map ?? spareRegion ?? mapRegion(WINDOW + OVERLAP);
    if (region === spareRegion) spareRegion = undefined;
    this.#map = undefined; // no window while the region is remapped (a failed mmap leaves none)
    region.map(this.#file.fd, this.#start, this.#mapped, this.path);
    this.#map = region;
    // the page read now tells whether the window is cached (a page-cache lookup per page of a
    // whole window would cost as much as the scan)
    this.#warm = region.resident(offset - this.#start, 1) >= WARM;
    return region;
  }

  /** Reads exactly `length` bytes at `offset` into a new array; ShortReadError past the end. */
  read(offset: number, length: number): Uint8Array {
    if (length === 0 && offset <= this.size) return new Uint8Array(0);
    const scan = ++this.#reads > SCAN_READS && this.#lease !== "off" &&
      offset + length <= this.size && length <= WINDOW;
    // a scan of a cold file reads the mapping (readahead); of a cached one, preads
    const map = scan ? this.#cover(offset, length) : undefined;
    if (map === undefined || this.#warm) return this.#file.read(offset, length);
    noteMappedRead(this.#file.fd, offset, length);
    const at = offset - this.#start;
    return map.bytes.slice(at, at + length);
  }

  /**
   * The file's bytes from `offset`, at least `length` of them (up to 64 KiB more from a mapping);
   * undefined when this cannot give them (no lease, after `release()`, a range past the end of
   * the file or longer than a window): then use `read`. A read far (over 64 KiB) past the end of
   * the last, in a cached window, or over 1 MiB past it, cached or not, is a pread of `length`
   * bytes (a page fault costs more, or reads a window ahead), and so is a near read of a cached
   * file not mapped yet, up to NEAR_PREADS in a row; a pread's bytes are in one buffer that the
   * next call reuses; else
   * the bytes are read in place from the mapping (no system call: the caller counts them, see
   * ByteSource.readInPlace); with `ahead`, a near window gives the mapped bytes up to the end of
   * the mapping's window (up to 4 MiB: one call for a run of small records, not one per 64 KiB).
   * Valid until the next `read`, `window` or `release` call: read it at once and keep nothing of it.
   */
  window(offset: number, length: number, ahead = false): Uint8Array | undefined {
    if (offset < 0 || offset + length > this.size || length > WINDOW) return undefined;
    const near = offset >= this.#lastStart && offset <= this.#lastEnd + NEAR;
    const sparse = Number.isFinite(this.#lastEnd) && offset > this.#lastEnd + SPARSE;
    this.#lastStart = offset;
    this.#nearRun = near ? this.#nearRun + 1 : 0;
    const far = !near && length <= FAR_READ;
    // mutant: cold-scan-sparse-read
    if (far && sparse) return this.#sparseRead(offset, length);
    // the scan's first read is a pread too: a page fault there would start the file's readahead
    // with one large synchronous read, which the kernel sends to the device in smaller requests
    // than the window it ramps up from a small read (RAMP_BYTES in lib/io/file.ts); it tells
    // whether its window is cached too (no cachestat for it)
    const first = !Number.isFinite(this.#lastEnd);
    // mutant: cold-scan-first-read
    if (far && first) return this.#firstRead(offset, length);
    // near, before a run of near records makes a mapping of a cached file worth its setup
    const early = near && length <= FAR_READ && this.#map === undefined &&
      this.#nearRun <= NEAR_PREADS && this.#lease !== "off";
    if (
      (far && (this.#lease === "off" || this.#cached(offset))) ||
      (early && this.#cached(offset))
    ) {
      return this.#farRead(offset, length, far);
    }
    // mutant: open-scan-dense-copy
    if (near && !this.#released && this.#cached(offset)) return this.#copied(offset, length, ahead);
    const map = this.#lease === "off" ? undefined : this.#cover(offset, length);
    if ((far && (map === undefined || this.#warm)) || (early && map !== undefined && this.#warm)) {
      return this.#farRead(offset, length, far);
    }
    if (map === undefined) return undefined;
    const at = offset - this.#start;
    const end = ahead && near ? this.#mapped : Math.min(this.#mapped, at + Math.max(length, NEAR));
    this.#lastEnd = this.#start + end;
    return map.bytes.subarray(at, end);
  }

  /**
   * Bytes from `offset` (at least `length`, up to the end of the copy window with `ahead`, else
   * at least 64 KiB when the file has them) from the copy window: when it does not hold them, one
   * pread of the file's next WINDOW + OVERLAP bytes from `offset`'s page into it (the same
   * buffer every time: no array made, no page faulted in).
   */
  #copied(offset: number, length: number, ahead: boolean): Uint8Array {
    const copy = this.#copy ??= takeCopy();
    if (offset < this.#copyStart || offset + length > this.#copyStart + this.#copyLength) {
      this.#copyLength = 0; // nothing held while it is read (a failed read leaves none)
      const start = offset - (offset % pageSize());
      const n = Math.min(copy.length, this.size - start);
      this.#file.readExactly(copy.subarray(0, n), start);
      this.#copyStart = start;
      this.#copyLength = n;
    }
    const at = offset - this.#copyStart;
    const end = ahead ? this.#copyLength : Math.min(this.#copyLength, at + Math.max(length, NEAR));
    this.#lastEnd = this.#copyStart + end;
    return copy.subarray(at, end);
  }

  /**
   * A small read far past the last (a marker of a large record): a pread whose pages, when it
   * brings them into the page cache, are dropped again (lib/sys/libc.ts preadUncached). A page
   * left cached in the middle of a cold file splits the readahead of the sequential read that
   * comes later into many smaller device reads (Packman's 10 MB records, cold: 84 device reads
   * of 1.2 MiB instead of 35 of 2.9 MiB, and 1.25x the time); where the kernel cannot read so
   * (before Linux 6.14), a plain pread. Into the far reads' buffer, as the plain far reads.
   */
  #sparseRead(offset: number, length: number): Uint8Array {
    if (this.#uncached) {
      const buf = this.#farBuffer(length);
      const n = preadUncached(this.#file.fd, buf, offset, this.path, this.#far!.address);
      if (n === length) {
        this.#lastEnd = offset + length;
        return buf;
      }
      if (n === undefined) this.#uncached = false;
    }
    // (a short read, the file cut meanwhile, fails there with the file handle's error)
    return this.#farRead(offset, length);
  }

  /**
   * The scan's first read (a far one): a pread that is a page-cache probe of its window too, read
   * only if cached (lib/sys/libc.ts preadIfCached), else read by a plain pread (whose readahead
   * the failed probe started); either way the window's warmth is known without a cachestat.
   */
  #firstRead(offset: number, length: number): Uint8Array {
    const buf = this.#farBuffer(length);
    const n = preadIfCached(this.#file.fd, buf, offset, this.path, this.#far!.address);
    // mutant: open-scan-cachestat
    this.#warmWindow = Math.floor(offset / WINDOW);
    this.#warm = n === length;
    if (n !== length) return this.#farRead(offset, length);
    this.#lastEnd = offset + length;
    return buf;
  }

  /** The first `length` bytes (at most FAR_READ) of the far reads' buffer, one array reused. */
  #farBuffer(length: number): Uint8Array {
    let buf = this.#farView;
    // mutant: open-scan-far-array
    if (buf === undefined || buf.length !== length) {
      buf = this.#farView = (this.#far ??= takeFar()).bytes.subarray(0, length);
    }
    return buf;
  }

  /**
   * One pread of `length` bytes (at most FAR_READ) at `offset` into the far reads' buffer, which
   * the next call reuses: no allocation per record (a new array a read cost more than the pread).
   */
  #farRead(offset: number, length: number, far = false): Uint8Array {
    this.#lastEnd = offset + length;
    const buf = this.#farBuffer(length);
    if (!far || this.#released) return this.#file.readExactly(buf, offset);
    const ahead = this.#ahead ??= takeAhead();
    const held = ahead.take(offset, length, buf);
    ahead.saw(offset, length);
    if (held) return buf;
    this.#file.readExactly(buf, offset);
    // the reads after this one, when the last ones repeat a pattern (after it: the trail's order)
    const p = ahead.period();
    // mutant: open-scan-read-ahead
    if (p > 0) ahead.readAhead(p, this.#file.fd, this.size, this.path);
    return buf;
  }

  /**
   * True when the page at `offset` is cached, asked once a window of cachestat (no mapping is
   * made for far reads of a cached file); false when it is not or the kernel cannot tell (then
   * the mapping's mincore decides).
   */
  #cached(offset: number): boolean {
    const index = Math.floor(offset / WINDOW);
    if (index !== this.#warmWindow) {
      this.#warmWindow = index;
      this.#warm = (cachedPages(this.#file.fd, offset, 1) ?? 0) > 0;
    }
    return this.#warm;
  }

  /** Ends the mapping and the lease; later reads use pread. Safe to call twice. */
  release(): void {
    const region = this.#map;
    this.#map = undefined;
    if (region !== undefined) {
      region.clear();
      if (spareRegion === undefined) spareRegion = region;
      else region.free();
    }
    if (this.#lease === "held") releaseLease(this.#file.fd);
    this.#lease = "off";
    // the far reads' buffer and the copy window go to the next source (a read after this makes
    // another far buffer; the copy window is not used after release)
    if (this.#far !== undefined && spareFar === undefined) spareFar = this.#far;
    this.#far = this.#farView = undefined;
    if (this.#copy !== undefined && spareCopy === undefined) spareCopy = this.#copy;
    if (this.#ahead !== undefined && spareAhead === undefined) spareAhead = this.#ahead;
    this.#ahead = undefined;
    this.#copy = undefined;
    this.#copyLength = 0;
    this.#released = true;
  }
}

/** The spare far reads' read-ahead (emptied), or a new one. */
function takeAhead(): FarAhead {
  const ahead = spareAhead ?? new FarAhead();
  spareAhead = undefined;
  ahead.reset();
  return ahead;
}

/** The spare copy window, or a new one. */
function takeCopy(): Uint8Array {
  // mutant: open-scan-copy-window
  const copy = spareCopy ?? new Uint8Array(WINDOW + OVERLAP);
  spareCopy = undefined;
  return copy;
}

/** The spare far reads' buffer, or a new one (its address looked up once). */
function takeFar(): FarBuffer {
  const far = spareFar;
  // mutant: open-scan-far-buffer
  if (far !== undefined) {
    spareFar = undefined;
    return far;
  }
  const bytes = new Uint8Array(FAR_READ);
  return { bytes, address: addressOfBuffer(bytes) };
}
