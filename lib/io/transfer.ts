/**
 * System calls of a chosen size (`--bs`) and direct I/O (`--direct`, O_DIRECT): a block writer
 * that turns positioned writes into transfers of `bs` bytes through one reused staging buffer, and
 * a block reader that serves byte ranges from whole `bs`-byte preads. Under O_DIRECT every offset,
 * length and buffer address is a multiple of the file system's alignment: partial blocks are
 * read back before they are rewritten, the tail of the file is written padded and cut to its true
 * length with ftruncate at the end (as fio and IOR do).
 * @module
 */
import { ShortReadError, SysError, UsageError } from "../core/errors.ts";
import { directAlignment, pageSize, type SubmittedRead, systemError } from "../sys/libc.ts";
import type { ReadQueue } from "../sys/queue.ts";
import { FileHandle, type OpenMode } from "./file.ts";
import { alignedBytes, giveBackSpareBuffer, takeSpareBuffer } from "./buffers.ts";
export { alignedBytes, HUGE_PAGES_MIN } from "./buffers.ts";

/** How the native framings make their system calls. */
export interface Transfer {
  /** Bytes of each read and write system call (the last one of a file may be shorter). */
  readonly bs: number;
  /** Open with O_DIRECT: aligned offsets, lengths and buffers, no page cache. */
  readonly direct: boolean;
  /**
   * Reads are whole `bs` transfers, past the range asked (small frames several per call); the
   * default. false (--direct without --bs): reads cover each range's aligned blocks only.
   */
  readonly readAhead?: boolean;
  /**
   * With `direct`: the staging and read buffers are 2 MiB transparent huge pages (the default);
   * false: 4 KiB pages, as fio's malloc'd buffers (`--no-huge-pages`). O_DIRECT pins each page of
   * the buffer and hands the device one segment per page, so huge pages make far fewer segments
   * (docs/measurement.md, "Transfer size and direct I/O", gives the rates; fio's own buffers take them with mem=shmhuge).
   */
  readonly hugePages?: boolean;
}

/** Transfer size with `--direct` and no `--bs`, bytes (the write batcher's buffer size). */
export const DEFAULT_DIRECT_BS = 4 << 20;

/** A file opened for a {@link Transfer}, with the alignment its offsets and buffers need, bytes. */
export interface TransferFile {
  /** The open file. */
  readonly file: FileHandle;
  /** Alignment of offsets and lengths (1 without O_DIRECT). */
  readonly align: number;
  /** Alignment of buffer addresses (1 without O_DIRECT). */
  readonly memoryAlign: number;
  /** The buffers are huge pages (O_DIRECT with {@link Transfer.hugePages}). */
  readonly hugePages: boolean;
}

/**
 * Opens `path` for `transfer`: with O_DIRECT when it asks, querying the alignment of the file
 * (statx STATX_DIOALIGN, else the block size). UsageError (one line) when the file system refuses
 * O_DIRECT or `bs` is not a multiple of the alignment.
 */
export function openForTransfer(path: string, mode: OpenMode, transfer: Transfer): TransferFile {
  let file: FileHandle;
  try {
    file = FileHandle.open(path, mode, { direct: transfer.direct });
  } catch (e) {
    if (transfer.direct && e instanceof SysError && e.code === "EINVAL") {
      throw new UsageError(directRefused(path));
    }
    throw e;
  }
  if (!transfer.direct) return { file, align: 1, memoryAlign: 1, hugePages: false };
  const { align, memoryAlign } = fileSystemAlignment(path);
  if (transfer.bs % align !== 0) {
    file.close();
    throw new UsageError(
      `--bs ${transfer.bs} is not a multiple of the ${align}-byte alignment direct I/O needs on ` +
        `${path}; give a multiple such as ${Math.max(align, 4096)}`,
    );
  }
  return { file, align, memoryAlign, hugePages: transfer.hugePages ?? true };
}

/**
 * What the file system asks of O_DIRECT transfers of `path` (statx STATX_DIOALIGN, else its block
 * size): file offsets and lengths at multiples of `align`, buffers at multiples of `memoryAlign`
 * (never less than `align`), bytes. {@link transferAlignment} gives what our calls use.
 */
export function fileSystemAlignment(path: string): { align: number; memoryAlign: number } {
  const a = directAlignment(path);
  const align = Math.max(a.offset, 1);
  return { align, memoryAlign: Math.max(a.memory, align) };
}

/** The one line that says a file system refused O_DIRECT on `path`. */
export function directRefused(path: string): string {
  const slash = path.lastIndexOf("/");
  const dir = slash > 0 ? path.slice(0, slash) : ".";
  return `--direct: the file system of ${dir} refuses O_DIRECT (EINVAL); give --dir on a disk ` +
    `file system such as ext4 or xfs, or run without --direct`;
}

function alignDown(n: number, align: number): number {
  return n - (n % align);
}

function alignUp(n: number, align: number): number {
  const r = n % align;
  return r === 0 ? n : n + align - r;
}

/** One run of the file being written through a staging buffer. */
interface Window {
  /** The staging buffer (a full one written through a queue is swapped for a spare). */
  buf: Uint8Array;
  /** File offset of buf[0] (a multiple of the alignment). */
  start: number;
  /** Bytes of the buffer that hold the file's current bytes from `start`. */
  fill: number;
  /** Bytes of the buffer from 0 known to match the file past `fill` (a block read back). */
  valid: number;
  /** True when the buffer holds bytes not yet written. */
  dirty: boolean;
}

/**
 * Applies positioned writes as transfers of exactly `bs` bytes through reused staging buffers
 * (the last transfer before a jump or the end may be shorter; under O_DIRECT it is padded to the
 * alignment). Up to `streams` runs are kept at once (default 2: a format's data and its index, as
 * GSD writes them); a write that continues a run fills its buffer, any other starts a new run at
 * the aligned offset below it, reading back the partial block it would rewrite. Runs never share
 * a block: a write into another run's blocks writes that run out first. Offsets, lengths and
 * buffers follow `t`'s alignment as given: the engine gives {@link transferAlignment}'s (pages).
 *
 * With a `queue` (`--iodepth`, `--engine`), each full `bs`-byte transfer is a write request
 * submitted as its buffer fills, up to the queue's depth in flight (its buffer handed to the
 * request and the run given a spare one; when the depth is reached, at least one is reaped
 * first); every request completes before any other write, read-back or cut of the file, and
 * before `flush` and `finish` return, so a sync after them covers every byte.
 */
export class BlockWriter {
  readonly #file: FileHandle;
  readonly #bs: number;
  readonly #align: number;
  readonly #memoryAlign: number;
  readonly #hugePages: boolean;
  readonly #streams: number;
  /** Open runs, least recently written first. */
  readonly #windows: Window[] = [];
  readonly #spare: Uint8Array[] = [];
  /** One block, for reading back the rest of a partial last block. */
  readonly #block: Uint8Array;
  /** True length of the file: its size at open or the end of the furthest write, bytes. */
  #end: number;
  /** Bytes the file holds on disk (padded to the alignment under O_DIRECT). */
  #onDisk: number;
  /** The write requests' queue, or undefined: every transfer one pwrite. */
  readonly #queue: ReadQueue | undefined;
  /** Per request tag: its buffer while in flight, and the file bytes [start, end) it writes. */
  readonly #flight: (Uint8Array | undefined)[];
  readonly #flightStart: Float64Array;
  readonly #flightEnd: Float64Array;
  /** Tags free for a request. */
  readonly #freeTags: number[];
  /** The buffers the requests took from the process's spares, given back at `finish`. */
  readonly #taken = new Set<Uint8Array>();

  constructor(t: TransferFile, bs: number, streams = 2, queue?: ReadQueue) {
    this.#file = t.file;
    this.#queue = queue;
    const depth = queue?.depth ?? 0;
    this.#flight = new Array(depth);
    this.#flightStart = new Float64Array(depth);
    this.#flightEnd = new Float64Array(depth);
    this.#freeTags = Array.from({ length: depth }, (_, k) => depth - 1 - k);
    this.#bs = bs;
    this.#align = t.align;
    this.#memoryAlign = t.memoryAlign;
    this.#hugePages = t.hugePages;
    this.#streams = Math.max(1, streams);
    this.#block = alignedBytes(t.align, t.memoryAlign);
    this.#end = t.file.size;
    this.#onDisk = t.file.size;
  }

  /** Queues `data` for byte `offset`; `data` may be reused by the caller after this returns. */
  write(data: Uint8Array, offset: number): void {
    let at = 0;
    while (at < data.length) {
      const pos = offset + at;
      const n0 = data.length - at;
      let w = this.#windows.find((v) => pos === v.start + v.fill && v.fill < this.#bs);
      // another run holding a block this write touches is written out and closed first
      const lo = alignDown(pos, this.#align);
      const hi = alignUp(pos + Math.min(n0, this.#bs), this.#align);
      for (let k = this.#windows.length - 1; k >= 0; k--) {
        const v = this.#windows[k]!;
        if (v !== w && v.start < hi && alignUp(v.start + v.fill, this.#align) > lo) this.#close(v);
      }
      if (w === undefined) {
        if (this.#windows.length >= this.#streams) this.#close(this.#windows[0]!);
        w = this.#openWindow(pos);
      } else if (w !== this.#windows.at(-1)) {
        this.#windows.splice(this.#windows.indexOf(w), 1);
        this.#windows.push(w);
      }
      const n = Math.min(n0, this.#bs - w.fill);
      w.buf.set(at === 0 && n === data.length ? data : data.subarray(at, at + n), w.fill);
      w.fill += n;
      w.dirty = true;
      at += n;
      if (w.start + w.fill > this.#end) this.#end = w.start + w.fill;
      if (w.fill === this.#bs) {
        if (this.#queue) this.#putQueued(w, this.#queue);
        else this.#put(w, this.#bs);
        w.dirty = false;
        w.start += this.#bs;
        w.fill = 0;
        w.valid = 0;
      }
    }
  }

  /** A run starting at the aligned offset at or below `pos`, its head read back if needed. */
  #openWindow(pos: number): Window {
    const start = alignDown(pos, this.#align);
    const head = pos - start;
    // a read-back sees the file only once every write in flight is in
    if (head > 0) this.#drain();
    const buf = this.#spare.pop() ?? alignedBytes(this.#bs, this.#memoryAlign, this.#hugePages);
    const w: Window = { buf, start, fill: head, valid: 0, dirty: false };
    if (head > 0) {
      const block = buf.subarray(0, this.#align);
      const got = start < this.#onDisk ? this.#file.preadOnce(block, start) : 0;
      if (got < block.length) block.fill(0, got);
      w.valid = this.#align;
    }
    this.#windows.push(w);
    return w;
  }

  /** Writes the first `bytes` of a run's buffer at its start (every request in flight first). */
  #put(w: Window, bytes: number): void {
    this.#drain();
    this.#file.writeAt(w.buf.subarray(0, bytes), w.start);
    if (w.start + bytes > this.#onDisk) this.#onDisk = w.start + bytes;
  }

  /**
   * Submits a run's full buffer as one write request at its start and gives the run a spare
   * buffer; a request in flight over the same bytes completes first (the kernel may reorder
   * requests), and at the queue's depth at least one is reaped first.
   */
  #putQueued(w: Window, q: ReadQueue): void {
    const start = w.start, end = start + this.#bs;
    for (let t = 0; t < this.#flight.length; t++) {
      if (this.#flight[t] && this.#flightStart[t]! < end && this.#flightEnd[t]! > start) {
        this.#drain();
        break;
      }
    }
    // mutant: write-queue-depth
    if (q.inFlight >= q.depth) this.#reap(q, 1);
    const tag = this.#freeTags.pop()!;
    this.#flight[tag] = w.buf;
    this.#flightStart[tag] = start;
    this.#flightEnd[tag] = end;
    q.prepareWrite(tag, this.#file.fd, w.buf, start);
    q.submit();
    if (end > this.#onDisk) this.#onDisk = end;
    w.buf = this.#spare.pop() ?? this.#requestBuffer();
  }

  /**
   * A new staging buffer for a run whose buffer a request holds: one of the process's spares
   * (pages already touched by an earlier cell, so no page faults inside the timed phase; huge
   * pages), unless O_DIRECT asks for 4 KiB pages or a larger alignment than a page.
   */
  #requestBuffer(): Uint8Array {
    const spare = this.#memoryAlign <= 4096 && (this.#hugePages || this.#align === 1);
    if (!spare) return alignedBytes(this.#bs, this.#memoryAlign, this.#hugePages);
    const buf = takeSpareBuffer(this.#bs).subarray(0, this.#bs);
    this.#taken.add(buf);
    return buf;
  }

  /**
   * Reaps at least `min` write requests: each buffer back to the spares; a failed one is a
   * SysError, a short one's rest written with pwrite.
   */
  #reap(q: ReadQueue, min: number): void {
    const n = q.reap(min);
    for (let e = 0; e < n; e++) {
      const tag = q.doneTags[e]!, count = q.doneCounts[e]!;
      const buf = this.#flight[tag]!;
      const start = this.#flightStart[tag]!;
      this.#flight[tag] = undefined;
      this.#freeTags.push(tag);
      if (count < 0) throw systemError("pwrite", this.#file.path, -count);
      if (count < buf.length) this.#file.writeAt(buf.subarray(count), start + count);
      this.#spare.push(buf);
    }
  }

  /** Waits until every write request in flight has completed. */
  #drain(): void {
    const q = this.#queue;
    while (q !== undefined && q.inFlight > 0) this.#reap(q, q.inFlight);
  }

  /** Writes out a run (its last block padded under O_DIRECT); it stays open for what follows. */
  #flushWindow(w: Window): void {
    if (!w.dirty) return;
    this.#drain();
    w.dirty = false;
    const fill = w.fill;
    // mutant: direct-write-pad
    const bytes = alignUp(fill, this.#align);
    const last = alignDown(fill, this.#align);
    if (bytes > fill && bytes > w.valid) {
      // the rest of the last block: the file's bytes when it has some there, else zeros
      const at = w.start + last;
      const got = w.start + fill < this.#end && at < this.#onDisk
        ? this.#file.preadOnce(this.#block, at)
        : 0;
      if (got > fill - last) w.buf.set(this.#block.subarray(fill - last, got), fill);
      w.buf.fill(0, Math.max(fill, last + got), bytes);
    }
    this.#put(w, bytes);
    // keep the partial last block at the front so a write that continues it needs no read
    if (last > 0) w.buf.copyWithin(0, last, bytes);
    w.start += last;
    w.fill = fill - last;
    w.valid = w.fill > 0 ? this.#align : 0;
  }

  /** Writes a run out and forgets it. */
  #close(w: Window): void {
    this.#flushWindow(w);
    this.#windows.splice(this.#windows.indexOf(w), 1);
    this.#spare.push(w.buf);
  }

  /** Writes out whatever is queued, oldest run first; every write request in flight completes. */
  flush(): void {
    for (const w of this.#windows) this.#flushWindow(w);
    this.#drain();
  }

  /** Flushes and cuts the file to its true length (under O_DIRECT the tail was padded). */
  finish(): void {
    while (this.#windows.length > 0) this.#close(this.#windows[0]!);
    this.#drain();
    // the requests' buffers back to the process's spares, for the next cell's writer or reader
    for (let k = this.#spare.length - 1; k >= 0; k--) {
      const buf = this.#spare[k]!;
      if (!this.#taken.delete(buf)) continue;
      this.#spare.splice(k, 1);
      giveBackSpareBuffer(buf);
    }
    if (this.#onDisk > this.#end) {
      this.#file.truncate(this.#end);
      this.#onDisk = this.#end;
    }
  }
}

/**
 * The alignment of O_DIRECT transfers of `t` in `bs`-byte calls, for reads ({@link BlockReader})
 * and writes ({@link BlockWriter}, and the engine's read-backs for `copy` ops), bytes: file offsets
 * at multiples of a page (4096) or of the file system's alignment when it is larger, and buffers
 * at page boundaries, as fio's (its buffers are page-aligned and its calls of a `bs` that is a
 * multiple of 4096 start at multiples of it). When `bs` is no multiple of a page, the offsets keep
 * the file system's alignment (`bs` is one of it). Without O_DIRECT (alignment 1) nothing changes.
 * ext4 on a virtio disk can report 512 bytes (statx STATX_DIOALIGN) over physical blocks of 4096:
 * frames read at 512-byte offsets into buffers 512 bytes past a page, and a 4 MiB staging buffer
 * 512 bytes past a page, give the device requests off its 4 KiB blocks and scatter lists of
 * partial pages, which cut a --direct write to a fraction of fio's (docs/measurement.md, "Transfer size and direct I/O").
 */
export function transferAlignment(
  t: { readonly align: number; readonly memoryAlign: number },
  bs: number,
): { readonly align: number; readonly memoryAlign: number } {
  if (t.align <= 1) return { align: t.align, memoryAlign: t.memoryAlign };
  const page = pageSize();
  // mutant: direct-read-page-offsets
  const align = t.align < page && bs % page === 0 ? page : t.align;
  return { align, memoryAlign: Math.max(t.memoryAlign, align, page) };
}

/**
 * Serves byte ranges of a file from preads of `bs` bytes at aligned offsets into one reused,
 * aligned buffer: a range larger than `bs` is read in `bs`-sized calls, and a range that ends
 * inside what the last calls read costs none (several small frames in one call). A range that
 * continues the buffered bytes keeps them and reads on, so sequential reads are `bs` each.
 * Without `readAhead` a read stops at the aligned end of the range asked.
 */
export class BlockReader {
  readonly #file: FileHandle;
  readonly #bs: number;
  readonly #align: number;
  readonly #memoryAlign: number;
  readonly #hugePages: boolean;
  readonly #size: number;
  readonly #readAhead: boolean;
  /** The buffer the held range is in: one of `#bufs`. */
  #buf: Uint8Array;
  /** The two buffers {@link viewAsync} alternates between (the second made at its first use). */
  readonly #bufs: (Uint8Array | undefined)[];
  #cur = 0;
  /** A viewAsync is in flight. */
  #busy = false;
  /** Bytes of the other buffer still to be copied to the front of this one (submitView). */
  #carried: Uint8Array | undefined;
  /** File range [#lo, #hi) held at buf[0 .. #hi - #lo). */
  #lo = 0;
  #hi = 0;

  constructor(t: TransferFile, bs: number, readAhead = true) {
    this.#file = t.file;
    this.#bs = bs;
    const a = transferAlignment(t, bs);
    this.#align = a.align;
    this.#memoryAlign = a.memoryAlign;
    // mutant: direct-reader-huge-pages
    this.#hugePages = t.hugePages;
    this.#size = t.file.size;
    this.#readAhead = readAhead;
    // mutant: direct-read-page-buffer
    this.#buf = alignedBytes(bs, this.#memoryAlign, this.#hugePages);
    this.#bufs = [this.#buf, undefined];
  }

  /** Bytes in the file, as at open. */
  get size(): number {
    return this.#size;
  }

  /**
   * The bytes [offset, offset + length) as a view valid until the next call; shorter when the
   * file ends first. With `alternate` the reads go into the other of two buffers, as
   * {@link viewAsync}'s: the view is then valid until the second call after it.
   */
  view(offset: number, length: number, alternate = false): Uint8Array {
    this.#idle();
    const want = offset + length;
    this.#readOn(want, this.#begin(offset, want, alternate));
    return this.#held(offset, want);
  }

  /**
   * {@link view} with the same preads (offsets, lengths, order) into the other of two buffers, so
   * the view the last call returned stays intact while this one reads: a view is valid until the
   * second call after it. The first pread is in flight when this returns
   * (FileHandle.preadOnceAsync: native AIO under O_DIRECT, else another thread), so the caller
   * works meanwhile; the range's other preads, which nothing could overlap, are made at once once
   * it is in (a pread of a few blocks costs less than a round trip through a promise). One call at
   * a time (a call made before the last one settled throws).
   */
  async viewAsync(offset: number, length: number): Promise<Uint8Array> {
    this.#idle();
    this.#busy = true;
    try {
      const want = offset + length;
      const limit = this.#begin(offset, want, true);
      const first = this.#next(want, limit);
      if (first) {
        const got = await this.#file.preadOnceAsync(first, this.#hi);
        this.#hi += got;
        if (got === first.length) this.#readOn(want, limit);
      }
      return this.#held(offset, want);
    } finally {
      this.#busy = false;
    }
  }

  /**
   * {@link viewAsync}'s preads with the first submitted now through Linux native AIO
   * (FileHandle.preadSubmit; O_DIRECT files, else made at once) and the rest made on this thread
   * by `wait()`, which reaps the first (blocking until it is in) and returns the view. No other
   * call may be made before `wait()` (one throws, as a call during viewAsync does).
   */
  submitView(offset: number, length: number): { wait(): Uint8Array } {
    this.#idle();
    const want = offset + length;
    // the block the last read ends in is copied over once this read is submitted: the device
    // waits for nothing but the submission
    const limit = this.#begin(offset, want, true, true);
    const first = this.#next(want, limit);
    let read: SubmittedRead | undefined;
    try {
      // mutant: transfer-submit-first
      read = first && this.#file.preadSubmit(first, this.#hi);
    } finally {
      this.#carry();
    }
    let view: Uint8Array | undefined;
    if (!first) view = this.#held(offset, want);
    this.#busy = read !== undefined;
    return {
      wait: (): Uint8Array => {
        if (view !== undefined) return view;
        try {
          const got = read!.wait();
          this.#hi += got;
          if (got === first!.length) this.#readOn(want, limit);
        } finally {
          this.#busy = false;
        }
        view = this.#held(offset, want);
        return view;
      },
    };
  }

  /** Makes the preads that fill the held range up to `want` (or to the end of the file). */
  #readOn(want: number, limit: number): void {
    for (let into = this.#next(want, limit); into; into = this.#next(want, limit)) {
      const got = this.#file.preadOnce(into, this.#hi);
      this.#hi += got;
      if (got < into.length) break;
    }
  }

  #idle(): void {
    if (this.#busy) throw new Error(`${this.#file.path}: a block read is still in flight`);
  }

  /**
   * Places the held range for a read of [offset, want): the bytes held from the block holding
   * `offset` on are kept (moved to the front of the buffer, or with `alternate` copied to the
   * front of the other buffer, which then takes the reads), else the range starts afresh at the
   * aligned offset below `offset`. Returns the offset the reads may go up to (0: none needed).
   */
  #begin(offset: number, want: number, alternate: boolean, carry = false): number {
    if (offset < this.#lo || offset > this.#hi) {
      if (alternate && want > offset) this.#switch(0, 0);
      // mutant: direct-read-align-down
      this.#lo = this.#hi = alignDown(offset, this.#align);
    } else if (want > this.#hi) {
      // keep the buffered bytes from the block holding `offset` on, and read on after them
      const from = alignDown(offset, this.#align) - this.#lo;
      if (alternate) this.#switch(from, this.#hi - this.#lo, carry);
      else if (from > 0) this.#buf.copyWithin(0, from, this.#hi - this.#lo);
      this.#lo += from;
    }
    if (want <= this.#hi) return 0;
    const limit = this.#readAhead
      ? alignUp(this.#size, this.#align)
      : Math.min(alignUp(want, this.#align), alignUp(this.#size, this.#align));
    const end = this.#readAhead
      ? this.#hi + Math.ceil((want - this.#hi) / this.#bs) * this.#bs
      : limit;
    this.#reserve(end - this.#lo);
    return limit;
  }

  /** The buffer slice the next pread of a read up to `want` fills, or undefined when done. */
  #next(want: number, limit: number): Uint8Array | undefined {
    if (!(this.#hi < want && this.#hi < this.#size)) return undefined;
    const n = Math.min(this.#bs, limit - this.#hi);
    return this.#buf.subarray(this.#hi - this.#lo, this.#hi - this.#lo + n);
  }

  /** The held bytes of [offset, want). */
  #held(offset: number, want: number): Uint8Array {
    return this.#buf.subarray(offset - this.#lo, Math.min(want, this.#hi) - this.#lo);
  }

  /**
   * Makes the other buffer current, with bytes [from, to) of this one copied to its front, or
   * with `carry` left in {@link #carried} for the caller to copy (after it submits its read).
   */
  #switch(from: number, to: number, carry = false): void {
    const old = this.#buf;
    this.#cur ^= 1;
    let next = this.#bufs[this.#cur];
    if (next === undefined || next.length < old.length) {
      next = alignedBytes(old.length, this.#memoryAlign, this.#hugePages);
      this.#bufs[this.#cur] = next;
    }
    if (to > from) {
      if (carry) this.#carried = old.subarray(from, to);
      else next.set(old.subarray(from, to));
    }
    this.#buf = next;
  }

  /** Copies the bytes {@link #switch} left to carry to the front of the current buffer. */
  #carry(): void {
    const carried = this.#carried;
    if (carried === undefined) return;
    this.#carried = undefined;
    this.#buf.set(carried);
  }

  /** Grows the buffer to hold `bytes`, keeping what it holds. */
  #reserve(bytes: number): void {
    if (this.#buf.length >= bytes) return;
    let cap = this.#buf.length;
    while (cap < bytes) cap *= 2;
    const next = alignedBytes(cap, this.#memoryAlign, this.#hugePages);
    next.set(this.#buf.subarray(0, this.#hi - this.#lo));
    this.#buf = next;
    this.#bufs[this.#cur] = next;
  }

  /** Exactly `length` bytes at `offset` in a new array; ShortReadError when the file is shorter. */
  read(offset: number, length: number): Uint8Array {
    const v = this.view(offset, length);
    if (v.length < length) {
      throw new ShortReadError(
        "file",
        this.#file.path,
        offset + v.length,
        `need ${length} bytes at byte ${offset} but the file ends at byte ${offset + v.length}`,
      );
    }
    return v.slice();
  }
}

/**
 * Checks before a run that `dir` takes O_DIRECT files and `bs` suits its alignment: creates,
 * opens and removes a probe file there. Returns the offset alignment in bytes; UsageError (one
 * line naming the directory) when the file system refuses O_DIRECT or `bs` is not a multiple.
 */
export function probeDirect(dir: string, bs: number): number {
  const path = `${dir}/.sciobench-direct-probe-${Deno.pid}`;
  let t: TransferFile | undefined;
  try {
    t = openForTransfer(path, "truncate", { bs, direct: true });
    return t.align;
  } finally {
    t?.file.close();
    try {
      Deno.removeSync(path);
    } catch {
      // never created
    }
  }
}

/**
 * Checks before a read that the existing file `path` opens with O_DIRECT and that `bs` suits its
 * alignment, without creating anything (its directory may be read-only). Returns the offset
 * alignment in bytes; UsageError (one line) as {@link openForTransfer}.
 */
export function probeDirectFile(path: string, bs: number): number {
  let t: TransferFile;
  try {
    t = openForTransfer(path, "read", { bs, direct: true });
  } catch (e) {
    if (e instanceof UsageError && e.message === directRefused(path)) {
      // (the workloads' advice, another --dir, means nothing for a file that is where it is)
      throw new UsageError(
        `--direct: the file system of ${path} refuses O_DIRECT (EINVAL); read it without --direct`,
      );
    }
    throw e;
  }
  t.file.close();
  return t.align;
}
