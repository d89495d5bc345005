/**
 * The native sink: applies a pure framing's write ops through a batched FFI file handle (or, with
 * `--bs` / `--direct`, a block writer of exactly bs-byte transfers), fsyncs before a write is
 * called done, and journals appends so a failed one leaves the file as it was.
 *
 * A file that several processes write at once (the shared-file layout, lib/mpi/shared.ts) goes
 * through the same engine: each process's sink runs the framing's pure writer over every frame,
 * so all compute the same positioned writes, and applies of each write only the bytes inside its
 * {@link SinkShare}'s ranges, with the batching, `--bs`, `--direct` and fsync of any other file.
 * @module
 */
import type { Frame, FrameWriter, Framing, TypedArray, WriteOp } from "../framings/types.ts";
import { IoError, UsageError } from "../core/errors.ts";
import { FileHandle, WriteBatcher } from "../io/file.ts";
import {
  BlockWriter,
  DEFAULT_DIRECT_BS,
  openForTransfer,
  transferAlignment,
} from "../io/transfer.ts";
import { openReadQueue, type ReadQueue } from "../sys/queue.ts";
import {
  alignedBytes,
  giveBackSpareBuffer,
  HUGE_PAGES_MIN,
  takeSpareBuffer,
} from "../io/buffers.ts";
import { AppendJournal } from "../io/journal.ts";
import type { FrameSink, FsyncPolicy, SinkOptions } from "./backend.ts";

/** Bytes a `copy` op reads back and writes at a time. */
const COPY_BLOCK = 1 << 22;

/**
 * One process's share of a file that several processes write at once. Every process's writer
 * makes the same stream of positioned writes; each process applies, of every write in stream
 * order, the bytes inside its `ranges`. The processes' ranges are disjoint, so every byte of the
 * file is written by one process, in stream order, and the file is the one process's file
 * whatever order the processes run in. Under O_DIRECT each range is whole blocks of `block`
 * bytes, so a block's read-back, padding and rewrite never meet another process's bytes.
 */
export interface SinkShare {
  /** File byte ranges [start, end) this process writes: sorted, disjoint. */
  readonly ranges: readonly (readonly [number, number])[];
  /**
   * Bytes every range starts and ends on a multiple of (1 without O_DIRECT): an O_DIRECT open
   * whose transfers need a larger alignment is refused.
   */
  readonly block: number;
  /**
   * True for the one process that creates (truncates) the file and makes the framing's own
   * syncs; the others open the file it created to update it.
   */
  readonly creates: boolean;
  /**
   * True for the one process whose ranges hold the file's last byte: it cuts its padded O_DIRECT
   * tail to the file's length at close; the others never change the length.
   */
  readonly last: boolean;
  /** Positioned writes of data in the whole stream: the writer must make exactly these. */
  readonly writes: number;
}

/** {@link SinkOptions}, and for a file several processes write at once, this one's share. */
export interface NativeSinkOptions extends SinkOptions {
  /** This process's share of the file's writes (its create mode then follows `creates`). */
  readonly share?: SinkShare;
}

/** A {@link FrameSink} that stores frames with a native framing, through the FFI file layer. */
export class NativeSink implements FrameSink {
  readonly path: string;
  readonly #file: FileHandle;
  /** Today's 4 MiB write batcher, or with --bs / --direct transfers of exactly bs bytes. */
  readonly #batch: WriteBatcher | BlockWriter;
  readonly #writer: FrameWriter;
  /** Spare buffers the writer's kept copies took (keepCopy), given back at close. */
  readonly #kept: Uint8Array[] = [];
  readonly #fsync: FsyncPolicy;
  /** Appending: the undo journal on disk beside the file (lib/io/journal.ts). */
  readonly #journal: AppendJournal | undefined;
  /** File offset and memory alignment reads need (O_DIRECT), for `copy` ops; 1 otherwise. */
  readonly #align: {
    readonly align: number;
    readonly memoryAlign: number;
    readonly hugePages: boolean;
  };
  /** This process's share of a file several write at once, or undefined: all of it. */
  readonly #share: SinkShare | undefined;
  /** With a share: positioned writes of data the writer made so far. */
  #writes = 0;
  /** The write requests' queue (`SinkOptions.queue`), or undefined. */
  #queue: ReadQueue | undefined;
  #open = true;
  /** Bytes were written since the last fsync. */
  #unsynced = false;

  constructor(framing: Framing, path: string, options: NativeSinkOptions) {
    this.path = path;
    this.#fsync = options.fsync ?? "end";
    const share = options.share;
    this.#share = share;
    const transfer = options.transfer;
    let align = { align: 1, memoryAlign: 1, hugePages: false };
    if (share && options.create === "append") {
      throw new UsageError(`${path}: a file shared by several processes cannot be appended to`);
    }
    if (options.create === "append") {
      if (transfer?.direct) {
        throw new UsageError(
          `--direct cannot append to ${path} (its undo journal reads through the page cache); ` +
            "write a new file, or append without --direct",
        );
      }
      if (!framing.appendWriter) {
        throw new UsageError(`framing '${framing.name}' cannot append to an existing file`);
      }
      this.#file = FileHandle.open(path, "update");
      try {
        // Options are checked against the file before anything changes.
        this.#writer = framing.appendWriter(this.#file, {
          ...options.backendOptions,
          endian: options.endian,
          fileCopies: true,
          keepCopy: (data) => keepCopy(data, this.#kept),
        });
        this.#journal = AppendJournal.begin(path, this.#file.size);
      } catch (e) {
        this.#open = false;
        this.#file.close();
        throw e;
      }
    } else {
      // Options are checked (the encoder is built) before the file is created.
      this.#writer = framing.createWriter({
        ...options.backendOptions,
        endian: options.endian ?? "native",
        // a copy would read back bytes another process of a shared file may not have written yet
        fileCopies: share === undefined,
        keepCopy: (data) => keepCopy(data, this.#kept),
      });
      const mode = share && !share.creates
        ? "update"
        : options.create === "new"
        ? "new"
        : "truncate";
      if (transfer) {
        const t = openForTransfer(path, mode, transfer);
        this.#file = t.file;
        // mutant: direct-writer-page-align
        align = { ...transferAlignment(t, transfer.bs), hugePages: t.hugePages };
        if (share && share.block % align.align !== 0) {
          this.#file.close();
          throw new UsageError(
            `--layout shared --direct: ${path} needs transfers aligned to ${align.align} bytes, ` +
              `more than the ${share.block}-byte blocks the ranks share out; use --layout per-rank`,
          );
        }
      } else {
        this.#file = FileHandle.open(path, mode);
      }
    }
    this.#align = align;
    // writes at depth: a new file of this process alone (an append journals each write first)
    const queue = options.queue && !share && options.create !== "append"
      ? openReadQueue(options.queue.engine, options.queue.depth, path)
      : undefined;
    if (typeof queue === "string") {
      this.abort();
      throw new IoError(`--engine ${options.queue!.engine}: ${queue}`);
    }
    this.#queue = queue;
    // mutant: bs-write-batcher
    this.#batch = transfer
      ? new BlockWriter({ file: this.#file, ...align }, transfer.bs, 2, queue)
      : queue
      ? new BlockWriter({ file: this.#file, ...align }, DEFAULT_DIRECT_BS, 2, queue)
      : new WriteBatcher(this.#file);
    try {
      this.#apply(this.#writer.begin());
    } catch (e) {
      this.abort();
      throw e;
    }
  }

  #apply(ops: readonly WriteOp[]): void {
    const journal = this.#journal;
    for (const op of ops) {
      if (op.kind === "write") {
        if (journal && op.offset < journal.size) {
          journal.save(this.#file, op.offset, op.data.length);
        }
        if (this.#share) this.#writeShare(op.data, op.offset, this.#share.ranges);
        else this.#batch.write(op.data, op.offset);
        this.#unsynced = true;
      } else if (op.kind === "copy") {
        if (this.#share) throw new Error(`${this.path}: a shared file cannot apply copy ops`);
        if (journal && op.offset < journal.size) journal.save(this.#file, op.offset, op.length);
        this.#copy(op.from, op.offset, op.length);
        this.#unsynced = true;
      } else if ((this.#fsync !== "none" || journal) && (this.#share?.creates ?? true)) {
        // the framing's own syncs (gsd's at creation); --fsync none means none at all
        this.#sync();
      }
    }
  }

  /**
   * Of a positioned write of `data` at `offset`, the bytes inside `ranges` (this process's share
   * of a shared file), queued as any other write; counted for the check at close.
   */
  #writeShare(data: Uint8Array, offset: number, ranges: SinkShare["ranges"]): void {
    if (data.length === 0) return;
    this.#writes++;
    const end = offset + data.length;
    // the first range ending after `offset` (binary search), then each range the write meets
    let lo = 0, hi = ranges.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (ranges[mid]![1] <= offset) lo = mid + 1;
      else hi = mid;
    }
    for (let k = lo; k < ranges.length && ranges[k]![0] < end; k++) {
      const [s, e] = ranges[k]!;
      if (s <= offset && e >= end) return this.#batch.write(data, offset);
      const from = Math.max(s, offset), to = Math.min(e, end);
      this.#batch.write(data.subarray(from - offset, to - offset), from);
    }
  }

  /**
   * A `copy` op: what is queued is written out, then the bytes are read back (in aligned pieces
   * under O_DIRECT) and queued again at `to`, COPY_BLOCK bytes at a time.
   */
  #copy(from: number, to: number, length: number): void {
    this.#batch.flush();
    const { align, memoryAlign } = this.#align;
    for (let done = 0; done < length;) {
      const n = Math.min(COPY_BLOCK, length - done);
      const lo = from + done - ((from + done) % align);
      const hi = Math.ceil((from + done + n) / align) * align;
      const buf = alignedBytes(hi - lo, memoryAlign);
      const got = this.#file.readInto(buf, lo);
      if (got < from + done + n - lo) {
        throw new IoError(
          `${this.path}: reading back bytes [${from + done}, ${from + done + n}) to copy, ` +
            `the file ended at byte ${lo + got}`,
        );
      }
      this.#batch.write(buf.subarray(from + done - lo, from + done - lo + n), to + done);
      done += n;
    }
  }

  #sync(): void {
    this.#batch.flush();
    this.#file.sync();
    this.#unsynced = false;
  }

  /**
   * Writes out what is queued: the file then holds every write applied so far (a shared file's
   * processes do so before one of them completes it).
   */
  flush(): void {
    this.#batch.flush();
  }

  writeFrame(frame: Frame): void {
    this.#apply(this.#writer.writeFrame(frame));
    // mutant: engine-fsync-each
    if (this.#fsync === "each" && this.#unsynced) this.#sync();
  }

  close(): void {
    if (!this.#open) return;
    if (this.#journal) {
      // The appended data is durable before the trailer, index or header that makes it visible.
      this.#batch.flush();
      this.#file.sync();
    }
    this.#apply(this.#writer.finish());
    const share = this.#share;
    if (share && this.#writes !== share.writes) {
      throw new IoError(
        `${this.path}: the writer made ${this.#writes} writes, the shared file's plan ${share.writes}`,
      );
    }
    // cut the padded tail (of a shared file, only the process that writes its last block does)
    if (this.#batch instanceof BlockWriter && (share?.last ?? true)) this.#batch.finish();
    else this.#batch.flush();
    // with `each` the frames are synced already: once more only when a trailer or header followed
    // mutant: engine-close-fsync
    if (this.#fsync === "end" || (this.#fsync === "each" && this.#unsynced)) this.#file.sync();
    else if (this.#journal) this.#file.sync(); // an append is always made durable
    this.#open = false;
    this.#closeQueue();
    this.#file.close();
    this.#journal?.commit();
    this.#giveBackKept();
  }

  /** Gives the kept copies' buffers back to the spares (the writer is done with them). */
  #giveBackKept(): void {
    // mutant: gsd-kept-give-back
    for (const buf of this.#kept.splice(0)) giveBackSpareBuffer(buf);
  }

  /** Gives the queue's kernel resources back (its requests are all in at a flush). */
  #closeQueue(): void {
    const q = this.#queue;
    this.#queue = undefined;
    q?.close();
  }

  abort(): void {
    if (!this.#open) return;
    this.#open = false;
    this.#giveBackKept();
    try {
      // a request still in flight is reaped before its buffer and descriptor go
      this.#closeQueue();
    } catch {
      // the write failed: the file goes anyway
    }
    try {
      this.#file.close();
    } finally {
      if (this.#share) {
        // the file is every process's: whoever runs them removes it
      } else if (this.#journal) {
        // Put the user's file back as it was: cut what was appended, restore replaced bytes.
        this.#journal.rollBack();
      } else {
        try {
          Deno.removeSync(this.path);
        } catch {
          // already gone
        }
      }
    }
  }
}

/**
 * A copy of `data` that a framing's writer keeps across frames (WriterOptions.keepCopy: gsd's
 * HOOMD reference, frame 0's chunks). From HUGE_PAGES_MIN bytes it goes into a spare buffer,
 * or a new one in huge pages ({@link takeSpareBuffer}), and `taken` collects it: the sink gives it
 * back at close, for the next writer's copy or the next source's reads. Made inside the timed
 * write of frame 0, a new 28 MiB copy at N = 1024^2 would first touch 7,168 4 KiB pages (each a
 * dear page fault on a shadow-paged VM), and a new allocation of that size takes memory the
 * write's page cache then lacks.
 */
export function keepCopy<T extends TypedArray>(data: T, taken?: Uint8Array[]): T {
  // mutant: gsd-reference-copy
  if (data.byteLength < HUGE_PAGES_MIN) return data.slice() as T;
  // mutant: gsd-reference-huge-pages
  const bytes = takeSpareBuffer(data.byteLength);
  taken?.push(bytes);
  const Kind = data.constructor as new (buffer: ArrayBuffer, offset: number, length: number) => T;
  const copy = new Kind(bytes.buffer as ArrayBuffer, bytes.byteOffset, data.length);
  (copy as Uint8Array).set(data as Uint8Array);
  return copy;
}
