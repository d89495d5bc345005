/**
 * A file handle over the libc wrappers: positional reads and writes into caller buffers, with
 * loops for short transfers, and a write batcher that coalesces small sequential writes.
 * @module
 */
import { IoError, ShortReadError, SysError, UsageError } from "../core/errors.ts";
import * as libc from "../sys/libc.ts";
import type { ByteSource } from "./types.ts";
import { giveBackSpareBuffer, takeSpareBuffer } from "./buffers.ts";

/**
 * Reads smaller than this, bytes, are made on the caller's thread by the asynchronous reads too
 * ({@link FileHandle.readIntoAsync}): a hop to another thread and back (bench/overlap_bench.ts
 * measures it) costs more than such a read can hide.
 */
export const OVERLAP_MIN_BYTES = 256 << 10;

/**
 * The first read over {@link RAMP_MIN_BYTES} of a handle is made as a read of this many bytes,
 * then the rest: from a small first read the kernel's readahead ramps its window up ahead of the
 * reads, while one huge first read of a cold file goes to the device in smaller requests (Packman's
 * file of 10 records of 10.4 MB read cold one record a pread, on ext4 and Linux 6.18 with 8 MiB
 * readahead: 38 device requests of 2.6 MiB and 0.054 s with a whole first read, 27 of 3.7 MiB and
 * 0.045 s with 128 KiB first, medians of 20 interleaved runs; 16 KiB first did as well, 1 MiB
 * and 4 MiB less). An O_DIRECT handle never splits.
 */
export const RAMP_BYTES = 128 << 10;
/** Reads this long or longer, bytes, are split as {@link RAMP_BYTES} says, the first time. */
export const RAMP_MIN_BYTES = 1 << 20;

/** How to open a file: read only, create (fail if it exists), create or truncate, or update in place. */
export type OpenMode = "read" | "new" | "truncate" | "update";

const FLAGS: Record<OpenMode, number> = {
  read: libc.O.RDONLY,
  new: libc.O.RDWR | libc.O.CREAT | libc.O.EXCL,
  truncate: libc.O.RDWR | libc.O.CREAT | libc.O.TRUNC,
  update: libc.O.RDWR,
};

/** An open file; also a {@link ByteSource} for decoders. */
export class FileHandle implements ByteSource {
  /** Path the file was opened with. */
  readonly path: string;
  /** The file descriptor. */
  readonly fd: number;
  /** Opened with O_DIRECT: {@link preadOnceAsync} goes through Linux native AIO. */
  readonly direct: boolean;
  #size: number;
  #closed = false;
  /** True once a read of RAMP_MIN_BYTES or more was made (or the handle is O_DIRECT). */
  #ramped = false;

  private constructor(path: string, fd: number, size: number, direct: boolean) {
    this.path = path;
    this.fd = fd;
    this.#size = size;
    this.direct = direct;
  }

  /**
   * Opens `path`. Mode `new` refuses an existing file (IoError naming it, so nothing the user did
   * not ask to overwrite is lost); `direct` adds O_DIRECT (aligned buffers required).
   */
  static open(path: string, mode: OpenMode, options: { direct?: boolean } = {}): FileHandle {
    let fd: number;
    try {
      // mutant: direct-open-flag
      fd = libc.open(path, FLAGS[mode] | (options.direct ? libc.O.DIRECT : 0));
    } catch (e) {
      if (e instanceof SysError && e.code === "EEXIST") {
        throw new IoError(`${path} exists; refusing to overwrite it (pass --force to replace it)`);
      }
      if (e instanceof SysError && e.code === "ENOENT") {
        throw new IoError(`${path}: no such file or directory`);
      }
      throw e;
    }
    const size = mode === "new" || mode === "truncate" ? 0 : libc.fileSize(fd, path);
    const handle = new FileHandle(path, fd, size, options.direct ?? false);
    handle.#ramped = handle.direct; // aligned transfers as asked, never split
    return handle;
  }

  /** Size in bytes: the size at open plus what was written through this handle. */
  get size(): number {
    return this.#size;
  }

  /**
   * The first pread of a read of `buf`: all of it, except for the handle's first read of
   * RAMP_MIN_BYTES or more, whose first RAMP_BYTES are read alone (see {@link RAMP_BYTES}).
   */
  #firstPiece(buf: Uint8Array): Uint8Array {
    // mutant: file-read-ramp
    if (this.#ramped || buf.length < RAMP_MIN_BYTES) return buf;
    this.#ramped = true;
    return buf.subarray(0, RAMP_BYTES);
  }

  /**
   * The first piece's pread of a read of `buf` at `offset` when {@link #firstPiece} splits it: its
   * byte count (under RAMP_BYTES: the file ended there); 0 when the read is not split.
   */
  #readFirstPiece(buf: Uint8Array, offset: number): number {
    const first = this.#firstPiece(buf);
    return first === buf ? 0 : libc.pread(this.fd, first, offset, this.path);
  }

  /** Reads into `buf` from byte `offset` until it is full or the file ends; returns the byte count. */
  readInto(buf: Uint8Array, offset: number): number {
    let done = this.#readFirstPiece(buf, offset);
    if (done > 0 && done < RAMP_BYTES) return done;
    while (done < buf.length) {
      const n = libc.pread(
        this.fd,
        done === 0 ? buf : buf.subarray(done),
        offset + done,
        this.path,
      );
      if (n === 0) break;
      done += n;
    }
    return done;
  }

  /**
   * One pread of `buf.length` bytes at byte `offset` (no retry, so O_DIRECT offsets stay aligned);
   * returns the count, short only at the end of the file.
   */
  preadOnce(buf: Uint8Array, offset: number): number {
    return libc.pread(this.fd, buf, offset, this.path);
  }

  /**
   * {@link readInto} with each pread on another thread (libc.preadAsync), one at a time in order:
   * the reads are in flight while the caller's thread goes on (a read under OVERLAP_MIN_BYTES is
   * made at once, on this thread). `buf` must not be touched until the promise settles.
   */
  async readIntoAsync(buf: Uint8Array, offset: number): Promise<number> {
    if (buf.length < OVERLAP_MIN_BYTES) return this.readInto(buf, offset);
    let done = this.#readFirstPiece(buf, offset);
    if (done > 0 && done < RAMP_BYTES) return done;
    while (done < buf.length) {
      const into = done === 0 ? buf : buf.subarray(done);
      const n = await libc.preadAsync(this.fd, into, offset + done, this.path);
      if (n === 0) break;
      done += n;
    }
    return done;
  }

  /**
   * {@link preadOnce} made so that the caller's thread goes on while it is in flight: on a file
   * opened with O_DIRECT through Linux native AIO (libc.preadSubmit: submitted now, waited for
   * when the result is awaited; any size), else on another thread (libc.preadAsync) unless under
   * OVERLAP_MIN_BYTES. The same pread (offset, length) either way; where AIO is unavailable
   * (libc.aioUnavailable) an O_DIRECT read is made at once. `buf` must not be touched until the
   * result is in.
   */
  preadOnceAsync(buf: Uint8Array, offset: number): PromiseLike<number> {
    try {
      if (this.direct) return libc.preadSubmit(this.fd, buf, offset, this.path);
      if (buf.length < OVERLAP_MIN_BYTES) return Promise.resolve(this.preadOnce(buf, offset));
      return libc.preadAsync(this.fd, buf, offset, this.path);
    } catch (e) {
      return Promise.reject(e);
    }
  }

  /**
   * {@link preadOnce} submitted now and waited for by the result's `wait()` (or an await): on a
   * file opened with O_DIRECT through Linux native AIO (libc.preadSubmit), else made at once.
   * `buf` must not be touched until the result is in.
   */
  preadSubmit(buf: Uint8Array, offset: number): libc.SubmittedRead {
    if (this.direct) return libc.preadSubmit(this.fd, buf, offset, this.path);
    const n = this.preadOnce(buf, offset);
    return { wait: () => n, then: (done, failed) => Promise.resolve(n).then(done, failed) };
  }

  /** Reads exactly `length` bytes at `offset` into a new array (ByteSource); ShortReadError if the file is shorter. */
  read(offset: number, length: number): Uint8Array {
    return this.readExactly(new Uint8Array(length), offset);
  }

  /** Fills `buf` from byte `offset` and returns it; ShortReadError if the file ends first. */
  readExactly(buf: Uint8Array, offset: number): Uint8Array {
    const n = this.readInto(buf, offset);
    if (n < buf.length) {
      throw new ShortReadError(
        "file",
        this.path,
        offset + n,
        `need ${buf.length} bytes at byte ${offset} but the file ends at byte ${offset + n}`,
      );
    }
    return buf;
  }

  /** Writes all of `data` at byte `offset`. */
  writeAt(data: Uint8Array, offset: number): void {
    let done = 0;
    while (done < data.length) {
      const n = libc.pwrite(
        this.fd,
        done === 0 ? data : data.subarray(done),
        offset + done,
        this.path,
      );
      if (n === 0) {
        throw new IoError(
          `${this.path}: write of ${data.length} bytes at byte ${offset} made no progress`,
        );
      }
      done += n;
    }
    if (offset + data.length > this.#size) this.#size = offset + data.length;
  }

  /** fsync: data and metadata to stable storage. */
  sync(): void {
    libc.fsync(this.fd, this.path);
  }

  /** Sets the file length in bytes. */
  truncate(length: number): void {
    libc.ftruncate(this.fd, length, this.path);
    this.#size = length;
  }

  /** Closes the descriptor; safe to call twice. */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    libc.close(this.fd, this.path);
  }
}

/** One run of queued bytes that continue one another. */
interface Region {
  buf: Uint8Array;
  start: number;
  fill: number;
}

/**
 * Coalesces small writes (each under `direct` bytes, default 64 KiB) that continue one another
 * into buffers of `capacity` bytes (default 4 MiB), so many small records, markers and index
 * entries cost few system calls. Up to `streams` separate runs are kept at once (default 2: a
 * format's data and its index, as GSD writes them, each coalesce). Larger writes go straight
 * through without a copy (copying 2 MiB datasets into a buffer measured twice as slow). A write
 * that overlaps queued bytes flushes everything first, so the file ends up as if every write
 * had been made in order.
 */
export class WriteBatcher {
  readonly #file: FileHandle;
  readonly #capacity: number;
  readonly #direct: number;
  readonly #streams: number;
  readonly #regions: Region[] = [];

  constructor(file: FileHandle, capacity = 4 << 20, direct = 64 << 10, streams = 2) {
    this.#file = file;
    this.#capacity = capacity;
    this.#direct = Math.min(direct, capacity);
    this.#streams = Math.max(1, streams);
  }

  /** Queues `data` for byte `offset`; `data` may be reused by the caller after this returns. */
  write(data: Uint8Array, offset: number): void {
    const n = data.length;
    if (n === 0) return;
    const end = offset + n;
    let overlaps = false;
    for (const r of this.#regions) {
      if (n < this.#direct && offset === r.start + r.fill && r.fill + n <= r.buf.length) {
        r.buf.set(data, r.fill);
        r.fill += n;
        return;
      }
      if (offset < r.start + r.fill && end > r.start) overlaps = true;
    }
    if (overlaps) this.flush();
    if (n >= this.#direct) {
      this.#file.writeAt(data, offset);
      return;
    }
    if (this.#regions.length >= this.#streams) this.#flushRegion(this.#regions.shift()!);
    // a spare of the process (lib/io/buffers.ts), given back when the run is written, or new in
    // huge pages: a new buffer's first fill is inside the timed write (a first-touch fault a
    // page)
    // mutant: batcher-spare-buffer
    const buf = takeSpareBuffer(this.#capacity).subarray(0, this.#capacity);
    buf.set(data, 0);
    this.#regions.push({ buf, start: offset, fill: n });
  }

  #flushRegion(r: Region): void {
    this.#file.writeAt(r.buf.subarray(0, r.fill), r.start);
    // mutant: batcher-give-back
    giveBackSpareBuffer(r.buf);
  }

  /** Writes out whatever is queued, oldest run first. */
  flush(): void {
    while (this.#regions.length > 0) this.#flushRegion(this.#regions.shift()!);
  }
}

/**
 * Checks that `path` names an existing regular file before it is opened for reading: IoError
 * when it is missing (`LABEL: PATH: no such file or directory`), UsageError when it is a
 * directory or another kind of file. `label` (a backend name) prefixes the messages.
 */
export function requireFile(path: string, label?: string): void {
  const where = label === undefined ? path : `${label}: ${path}`;
  let info: Deno.FileInfo;
  try {
    info = Deno.statSync(path);
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) throw new IoError(`${where}: no such file or directory`);
    throw e; // the CLI's error line shortens the path the message repeats
  }
  if (!info.isFile) {
    throw new UsageError(
      `${where} is ${info.isDirectory ? "a directory" : "not a regular file"}; give a data file`,
    );
  }
}
