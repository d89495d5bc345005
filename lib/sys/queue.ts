/**
 * Queues of read requests with many in flight (`--iodepth`, `--engine`), as fio's I/O engines:
 * `psync` (each request a pread, made when submitted: one in flight), `libaio` (Linux native AIO:
 * io_submit of every request prepared in one call, io_getevents of at least one) and `io_uring`
 * (a submission and a completion ring shared with the kernel: io_uring_enter submits what the
 * submission ring holds, and waits for completions when the completion ring holds too few). The
 * system calls go through lib/sys/libc.ts (`syscall`), the only FFI to libc; the rings' memory is
 * mapped with mmap through the same call. Every completed request is reported to the I/O observer
 * (its read or write, and its submission and completion times). A queue's requests are reads,
 * and writes where the caller prepares them with `prepareWrite`.
 * @module
 */
import {
  addressOfBytes,
  clockGettime,
  mapSharedRegion,
  noteQueuedRead,
  noteQueuedWrite,
  pread,
  pwrite,
  syscallInts,
  systemError,
  unmapRegion,
} from "./libc.ts";

/** The I/O engines a queue can use, as fio names them. */
export const ENGINES = ["psync", "libaio", "io_uring"] as const;

/** One of {@link ENGINES}. */
export type EngineName = typeof ENGINES[number];

/** Most requests a queue holds in flight (`--iodepth`'s upper bound). */
export const MAX_IODEPTH = 1024;

const X86 = Deno.build.arch !== "aarch64";
/** System call numbers: native AIO, io_uring (the same on every architecture), mmap. */
const SYS = {
  io_setup: X86 ? 206 : 0,
  io_destroy: X86 ? 207 : 1,
  io_submit: X86 ? 209 : 2,
  io_getevents: X86 ? 208 : 4,
  io_uring_setup: 425,
  io_uring_enter: 426,
  close: X86 ? 3 : 57,
} as const;
const TWO32 = 2 ** 32;
const EINTR = 4;
const EAGAIN = 11;

/**
 * A queue of read requests: `prepare` places a request (tagged by the caller), `submit` hands
 * every prepared one to the kernel in one call, `reap` waits for at least some and leaves their
 * tags and byte counts in {@link doneTags} and {@link doneCounts}.
 */
export interface ReadQueue {
  /** The engine that runs the requests. */
  readonly engine: EngineName;
  /** Most requests in flight at once. */
  readonly depth: number;
  /** Requests submitted and not yet reaped. */
  readonly inFlight: number;
  /**
   * Places a read of `buf.length` bytes of `fd` from byte `offset` into `buf` (which must stay
   * untouched until it is reaped), tagged `tag` (0 <= tag < 2^31); made at the next `submit`.
   */
  prepare(tag: number, fd: number, buf: Uint8Array, offset: number): void;
  /**
   * Places a write of `buf` (untouched until it is reaped) at byte `offset` of `fd`, tagged `tag`,
   * as {@link prepare} places a read; its count is the bytes written.
   */
  prepareWrite(tag: number, fd: number, buf: Uint8Array, offset: number): void;
  /** Submits every prepared request (one system call, psync: one pread each); their count. */
  submit(): number;
  /**
   * Waits until at least `min` requests (at most those in flight) have completed; the number
   * reaped, whose tags and counts (bytes read, or minus the errno) fill the first entries of
   * {@link doneTags} and {@link doneCounts}.
   */
  reap(min: number): number;
  /** Tags of the requests the last `reap` returned. */
  readonly doneTags: Int32Array;
  /** Their byte counts, or minus the errno of a failed read. */
  readonly doneCounts: Float64Array;
  /** Their latencies, from submission to reap (psync: the pread's own time), ns. */
  readonly doneLatency: Float64Array;
  /**
   * Ends this use of the queue once every request in flight is reaped: a kernel queue (the
   * context, the rings) is kept for the next opener of the same engine and depth in this process
   * (at most 4 kept; the kernel takes them back when the process ends), else given back.
   */
  close(): void;
}

/** What every engine keeps of each request until it is reaped: for the observer. */
class Requests {
  readonly fd: Int32Array;
  readonly offset: Float64Array;
  readonly bytes: Float64Array;
  readonly submitted: Float64Array;
  readonly inFlight: Int32Array;
  /** 1 for a write request, 0 for a read. */
  readonly write: Uint8Array;
  constructor(n: number) {
    this.fd = new Int32Array(n);
    this.offset = new Float64Array(n);
    this.bytes = new Float64Array(n);
    this.submitted = new Float64Array(n);
    this.inFlight = new Int32Array(n);
    this.write = new Uint8Array(n);
  }
  /** Reports request `slot` completed with `count` (a failure is neither a read nor a write). */
  report(slot: number, count: number, now: number): void {
    if (count < 0) return;
    (this.write[slot] ? noteQueuedWrite : noteQueuedRead)(
      this.fd[slot]!,
      this.offset[slot]!,
      count,
      this.bytes[slot]!,
      this.submitted[slot]!,
      now,
      this.inFlight[slot]!,
    );
  }
}

/**
 * The tags of a queue: a request's slot is its index among the prepared ones; the caller's tag
 * is kept per slot, and free slots in a stack.
 */
class Slots {
  readonly tag: Int32Array;
  readonly #free: Int32Array;
  #top: number;
  constructor(n: number) {
    this.tag = new Int32Array(n);
    this.#free = new Int32Array(n);
    for (let k = 0; k < n; k++) this.#free[k] = n - 1 - k;
    this.#top = n;
  }
  take(tag: number): number {
    if (this.#top === 0) throw new Error("read queue: more requests than its depth");
    const s = this.#free[--this.#top]!;
    this.tag[s] = tag;
    return s;
  }
  give(slot: number): void {
    this.#free[this.#top++] = slot;
  }
}

/** `psync`: each request a pread, made when it is submitted, in order. */
class PsyncQueue implements ReadQueue {
  readonly engine = "psync" as const;
  readonly depth: number;
  readonly doneTags: Int32Array;
  readonly doneCounts: Float64Array;
  readonly doneLatency: Float64Array;
  readonly #path: string;
  readonly #bufs: (Uint8Array | undefined)[];
  readonly #req: Requests;
  #prepared = 0;
  #done = 0;
  constructor(depth: number, path: string) {
    this.depth = depth;
    this.#path = path;
    this.doneTags = new Int32Array(depth);
    this.doneCounts = new Float64Array(depth);
    this.doneLatency = new Float64Array(depth);
    this.#bufs = new Array(depth);
    this.#req = new Requests(depth);
  }
  get inFlight(): number {
    return this.#done;
  }
  prepare(tag: number, fd: number, buf: Uint8Array, offset: number): void {
    const k = this.#prepared++;
    this.doneTags[this.#done + k] = tag;
    this.#bufs[k] = buf;
    this.#req.fd[k] = fd;
    this.#req.offset[k] = offset;
    this.#req.write[k] = 0;
  }
  prepareWrite(tag: number, fd: number, buf: Uint8Array, offset: number): void {
    this.prepare(tag, fd, buf, offset);
    this.#req.write[this.#prepared - 1] = 1;
  }
  submit(): number {
    const n = this.#prepared;
    for (let k = 0; k < n; k++) {
      const buf = this.#bufs[k]!;
      this.#bufs[k] = undefined;
      // (pread and pwrite tell the observer themselves)
      this.doneCounts[this.#done++] = (this.#req.write[k] ? pwrite : pread)(
        this.#req.fd[k]!,
        buf,
        this.#req.offset[k]!,
        this.#path,
      );
    }
    this.#prepared = 0;
    return n;
  }
  reap(_min: number): number {
    const n = this.#done;
    this.#done = 0;
    return n;
  }
  close(): void {}
}

/**
 * What the kernel engines (libaio, io_uring) share: the slots and what is kept of each request,
 * the submission loop (again after EINTR and EAGAIN, each request marked submitted with its place
 * in flight) and the bookkeeping of each completion. The engine supplies the system calls.
 */
abstract class KernelQueue {
  readonly depth: number;
  readonly doneTags: Int32Array;
  readonly doneCounts: Float64Array;
  readonly doneLatency: Float64Array;
  /** The file named in errors (the queue's current user's). */
  path: string;
  protected readonly slots: Slots;
  protected readonly req: Requests;
  /** The slots prepared and not yet submitted, in order. */
  protected readonly pending: Int32Array;
  protected prepared = 0;
  #inFlight = 0;

  constructor(depth: number, path: string) {
    this.depth = depth;
    this.path = path;
    this.slots = new Slots(depth);
    this.req = new Requests(depth);
    this.pending = new Int32Array(depth);
    this.doneTags = new Int32Array(depth);
    this.doneCounts = new Float64Array(depth);
    this.doneLatency = new Float64Array(depth);
  }

  get inFlight(): number {
    return this.#inFlight;
  }

  /** Requests prepared and not yet submitted. */
  get preparedCount(): number {
    return this.prepared;
  }

  /**
   * The system call that submits `count` prepared requests from the `done`-th on: how many it
   * took, or minus the errno.
   */
  protected abstract enter(count: number, done: number): number;

  /**
   * A slot for a read (or with `write` 1, a write) of `bytes` bytes of `fd` at `offset`, tagged
   * `tag`, now pending.
   */
  protected place(tag: number, fd: number, offset: number, bytes: number, write: 0 | 1): number {
    const s = this.slots.take(tag);
    this.pending[this.prepared++] = s;
    this.req.fd[s] = fd;
    this.req.offset[s] = offset;
    this.req.bytes[s] = bytes;
    this.req.write[s] = write;
    return s;
  }

  /** Submits every pending request through {@link enter} (`call` in errors); their count. */
  protected submitPending(call: string): number {
    const n = this.prepared;
    let done = 0;
    while (done < n) {
      const now = clockGettime();
      const rc = this.enter(n - done, done);
      if (rc === -EINTR || rc === -EAGAIN) continue;
      if (rc <= 0) throw systemError(call, this.path, rc === 0 ? EAGAIN : -rc);
      for (let k = done; k < done + rc; k++) {
        const s = this.pending[k]!;
        this.req.submitted[s] = now;
        this.req.inFlight[s] = this.#inFlight + (k - done) + 1;
      }
      this.#inFlight += rc;
      done += rc;
    }
    this.prepared = 0;
    return n;
  }

  /** Request `s` completed with `count` at `now`: reaped entry `e`, reported, its slot free. */
  protected complete(e: number, s: number, count: number, now: number): void {
    this.doneTags[e] = this.slots.tag[s]!;
    this.doneCounts[e] = count;
    this.doneLatency[e] = now - this.req.submitted[s]!;
    this.req.report(s, count, now);
    this.slots.give(s);
  }

  /** `n` requests were reaped. */
  protected reaped(n: number): void {
    this.#inFlight -= n;
  }
}

/** `libaio`: Linux native AIO (io_setup, io_submit, io_getevents, io_destroy). */
class AioQueue extends KernelQueue implements ReadQueue {
  readonly engine = "libaio" as const;
  /** Context id at 0, the iocbs (64 bytes each), their addresses, the io_events (32 bytes). */
  readonly #base: number;
  readonly #iocbs: Uint32Array;
  /** The iocb addresses io_submit takes, as 32-bit halves. */
  readonly #listWords: Uint32Array;
  readonly #listAt: number;
  readonly #events: Uint32Array;
  readonly #eventsSigned: Int32Array;
  readonly #eventsAt: number;
  readonly #ctx: number;

  constructor(depth: number, path: string, ctx: number, mem: Uint8Array) {
    super(depth, path);
    this.#ctx = ctx;
    this.#base = addressOfBytes(mem);
    this.#iocbs = new Uint32Array(mem.buffer, mem.byteOffset + 64, depth * 16);
    this.#listAt = 64 + depth * 64;
    this.#listWords = new Uint32Array(mem.buffer, mem.byteOffset + this.#listAt, 2 * depth);
    this.#eventsAt = this.#listAt + depth * 8;
    this.#events = new Uint32Array(mem.buffer, mem.byteOffset + this.#eventsAt, depth * 8);
    this.#eventsSigned = new Int32Array(mem.buffer, mem.byteOffset + this.#eventsAt, depth * 8);
  }

  /** Makes a context of `depth` events; the queue, or why the kernel refused it. */
  static open(depth: number, path: string): AioQueue | string {
    const mem = new Uint8Array(64 + depth * (64 + 8 + 32));
    const base = addressOfBytes(mem);
    const rc = syscallInts(SYS.io_setup, depth, base);
    if (rc < 0) return systemError("io_setup", "", -rc).message;
    const words = new Uint32Array(mem.buffer, mem.byteOffset, 2);
    return new AioQueue(depth, path, words[1]! * TWO32 + words[0]!, mem);
  }

  prepare(tag: number, fd: number, buf: Uint8Array, offset: number): void {
    this.#place(tag, fd, buf, offset, 0);
  }

  prepareWrite(tag: number, fd: number, buf: Uint8Array, offset: number): void {
    this.#place(tag, fd, buf, offset, 1);
  }

  /** An iocb of opcode `write` (IOCB_CMD_PREAD 0, IOCB_CMD_PWRITE 1) for `buf` at `offset`. */
  #place(tag: number, fd: number, buf: Uint8Array, offset: number, write: 0 | 1): void {
    const k = this.prepared;
    const s = this.place(tag, fd, offset, buf.length, write);
    const w = s * 16;
    const at = addressOfBytes(buf);
    const iocb = this.#iocbs;
    // aio_data (the slot), key and opcode, aio_fildes, aio_buf, aio_nbytes, aio_offset; the other
    // fields stay 0
    iocb[w] = s;
    iocb[w + 4] = write;
    iocb[w + 5] = fd;
    iocb[w + 6] = at % TWO32;
    iocb[w + 7] = Math.floor(at / TWO32);
    iocb[w + 8] = buf.length;
    iocb[w + 10] = offset % TWO32;
    iocb[w + 11] = Math.floor(offset / TWO32);
    const listWords = this.#listWords;
    const address = this.#base + 64 + s * 64;
    listWords[2 * k] = address % TWO32;
    listWords[2 * k + 1] = Math.floor(address / TWO32);
  }

  protected enter(count: number, done: number): number {
    return syscallInts(SYS.io_submit, this.#ctx, count, this.#base + this.#listAt + done * 8);
  }

  submit(): number {
    return this.submitPending("io_submit");
  }

  reap(min: number): number {
    const want = Math.min(min, this.inFlight);
    if (want <= 0) return 0;
    let n: number;
    for (;;) {
      n = syscallInts(
        SYS.io_getevents,
        this.#ctx,
        want,
        this.depth,
        this.#base + this.#eventsAt,
        0,
      );
      if (n >= want) break;
      if (n !== -EINTR && n < 0) throw systemError("io_getevents", this.path, -n);
    }
    const now = clockGettime();
    for (let e = 0; e < n; e++) {
      const s = this.#events[e * 8]!;
      this.complete(e, s, this.#eventsSigned[e * 8 + 5]! * TWO32 + this.#events[e * 8 + 4]!, now);
    }
    this.reaped(n);
    return n;
  }

  close(): void {
    if (this.inFlight > 0) this.reap(this.inFlight);
    if (!keepIdle(this)) this.destroy();
  }

  /** Gives the context back to the kernel (io_destroy). */
  destroy(): void {
    syscallInts(SYS.io_destroy, this.#ctx);
  }
}

/** The offsets io_uring_setup reports (struct io_uring_params), and the ring mappings. */
const IORING = {
  OFF_SQ_RING: 0,
  OFF_CQ_RING: 0x8000000,
  OFF_SQES: 0x10000000,
  FEAT_SINGLE_MMAP: 1,
  ENTER_GETEVENTS: 1,
  OP_READ: 22,
  OP_WRITE: 23,
} as const;

/** A region mapped with mmap, as a view. */
function mapRing(
  fd: number,
  bytes: number,
  offset: number,
): { at: number; mem: ArrayBuffer } | number {
  // PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE
  const at = mapSharedRegion(fd, bytes, offset);
  if (at < 0) return at;
  const p = Deno.UnsafePointer.create(BigInt(at));
  return { at, mem: Deno.UnsafePointerView.getArrayBuffer(p!, bytes) };
}

/** `io_uring`: the submission and completion rings, io_uring_enter. */
class UringQueue extends KernelQueue implements ReadQueue {
  readonly engine = "io_uring" as const;
  readonly #fd: number;
  readonly #maps: { at: number; bytes: number }[];
  readonly #sq: Uint32Array;
  readonly #sqHead: number;
  readonly #sqTail: number;
  readonly #sqMask: number;
  readonly #sqArray: number;
  readonly #sqes: Uint32Array;
  readonly #cq: Uint32Array;
  readonly #cqSigned: Int32Array;
  readonly #cqHead: number;
  readonly #cqTail: number;
  readonly #cqMask: number;
  readonly #cqes: number;
  /** Requests in the submission ring not yet taken by io_uring_enter. */
  #unsubmitted = 0;

  private constructor(depth: number, path: string, fd: number, params: Uint32Array) {
    super(depth, path);
    this.#fd = fd;
    this.#maps = [];
    const sqEntries = params[0]!, cqEntries = params[1]!, features = params[5]!;
    // sq_off at word 10: head, tail, ring_mask, ring_entries, flags, dropped, array
    const [sqHead, sqTail, sqMask, , , , sqArray] = params.subarray(10, 17);
    // cq_off at word 20: head, tail, ring_mask, ring_entries, overflow, cqes
    const [cqHead, cqTail, cqMask, , , cqes] = params.subarray(20, 26);
    const sqBytes = sqArray! + sqEntries * 4;
    const cqBytes = cqes! + cqEntries * 16;
    const single = (features & IORING.FEAT_SINGLE_MMAP) !== 0;
    const sqMap = this.#map(single ? Math.max(sqBytes, cqBytes) : sqBytes, IORING.OFF_SQ_RING);
    const cqMap = single ? sqMap : this.#map(cqBytes, IORING.OFF_CQ_RING);
    const sqeMap = this.#map(sqEntries * 64, IORING.OFF_SQES);
    this.#sq = new Uint32Array(sqMap);
    this.#sqHead = sqHead! / 4;
    this.#sqTail = sqTail! / 4;
    this.#sqMask = this.#sq[sqMask! / 4]!;
    this.#sqArray = sqArray! / 4;
    this.#sqes = new Uint32Array(sqeMap);
    this.#cq = new Uint32Array(cqMap);
    this.#cqSigned = new Int32Array(cqMap);
    this.#cqHead = cqHead! / 4;
    this.#cqTail = cqTail! / 4;
    this.#cqMask = this.#cq[cqMask! / 4]!;
    this.#cqes = cqes! / 4;
  }

  #map(bytes: number, offset: number): ArrayBuffer {
    const m = mapRing(this.#fd, bytes, offset);
    if (typeof m === "number") {
      this.close();
      throw systemError("mmap", "io_uring ring", -m);
    }
    this.#maps.push({ at: m.at, bytes });
    return m.mem;
  }

  /** Sets up rings of `depth` entries; the queue, or why the kernel refused them. */
  static open(depth: number, path: string): UringQueue | string {
    const params = new Uint32Array(30); // struct io_uring_params, 120 bytes
    const fd = syscallInts(
      SYS.io_uring_setup,
      depth,
      addressOfBytes(new Uint8Array(params.buffer)),
    );
    if (fd < 0) return systemError("io_uring_setup", "", -fd).message;
    return new UringQueue(depth, path, fd, params);
  }

  prepare(tag: number, fd: number, buf: Uint8Array, offset: number): void {
    this.#place(tag, fd, buf, offset, false);
  }

  prepareWrite(tag: number, fd: number, buf: Uint8Array, offset: number): void {
    this.#place(tag, fd, buf, offset, true);
  }

  /** A submission entry reading into `buf`, or with `write` writing it, at `offset`. */
  #place(tag: number, fd: number, buf: Uint8Array, offset: number, write: boolean): void {
    const s = this.place(tag, fd, offset, buf.length, write ? 1 : 0);
    const tail = this.#sq[this.#sqTail]! + this.#unsubmitted;
    const index = tail & this.#sqMask;
    const w = index * 16;
    const sqe = this.#sqes;
    const at = addressOfBytes(buf);
    sqe.fill(0, w, w + 16);
    sqe[w] = write ? IORING.OP_WRITE : IORING.OP_READ; // opcode, flags, ioprio
    sqe[w + 1] = fd;
    sqe[w + 2] = offset % TWO32;
    sqe[w + 3] = Math.floor(offset / TWO32);
    sqe[w + 4] = at % TWO32;
    sqe[w + 5] = Math.floor(at / TWO32);
    sqe[w + 6] = buf.length;
    sqe[w + 8] = s; // user_data
    this.#sq[this.#sqArray + index] = index;
    this.#unsubmitted++;
  }

  protected enter(count: number, _done: number): number {
    return syscallInts(SYS.io_uring_enter, this.#fd, count, 0, 0, 0);
  }

  submit(): number {
    const n = this.prepared;
    if (n === 0) return 0;
    // the new tail, then the call that takes the entries (the system call orders the stores)
    Atomics.store(this.#sq, this.#sqTail, (this.#sq[this.#sqTail]! + n) >>> 0);
    this.#unsubmitted = 0;
    return this.submitPending("io_uring_enter");
  }

  reap(min: number): number {
    const want = Math.min(min, this.inFlight);
    if (want <= 0) return 0;
    let head = this.#cq[this.#cqHead]!;
    let ready = (Atomics.load(this.#cq, this.#cqTail) - head) >>> 0;
    while (ready < want) {
      const rc = syscallInts(SYS.io_uring_enter, this.#fd, 0, want, IORING.ENTER_GETEVENTS, 0);
      if (rc < 0 && rc !== -EINTR) throw systemError("io_uring_enter", this.path, -rc);
      ready = (Atomics.load(this.#cq, this.#cqTail) - head) >>> 0;
    }
    const n = Math.min(ready, this.depth);
    const now = clockGettime();
    for (let e = 0; e < n; e++) {
      const w = this.#cqes + ((head & this.#cqMask) * 4);
      this.complete(e, this.#cq[w]!, this.#cqSigned[w + 2]!, now);
      head = (head + 1) >>> 0;
    }
    Atomics.store(this.#cq, this.#cqHead, head);
    this.reaped(n);
    return n;
  }

  close(): void {
    if (this.inFlight > 0) this.reap(this.inFlight);
    if (this.#unsubmitted > 0 || !keepIdle(this)) this.destroy();
  }

  /** Unmaps the rings and closes the ring's descriptor. */
  destroy(): void {
    for (const m of this.#maps) unmapRegion(m.at, m.bytes);
    this.#maps.length = 0;
    syscallInts(SYS.close, this.#fd);
  }
}

/** Kernel queues closed with nothing in flight or pending, for the next opener of the same kind. */
const idleQueues: (AioQueue | UringQueue)[] = [];

/** Idle queues kept at most. */
const IDLE_QUEUES = 4;

/**
 * Keeps `q` (nothing in flight) for the next {@link openReadQueue} of its engine and depth, as
 * fio keeps its context for the whole job: io_destroy waits for an RCU grace period (about 30 ms
 * measured here), which a phase that opens and closes its queue would otherwise time. False when
 * `q` still holds prepared requests or the pool is full: the caller destroys it.
 */
function keepIdle(q: AioQueue | UringQueue): boolean {
  // mutant: queue-keep-idle
  if (q.preparedCount > 0 || idleQueues.length >= IDLE_QUEUES) {
    return false;
  }
  idleQueues.push(q);
  return true;
}

/** An idle queue of `engine` and `depth` for reads of `path`, taken from the pool, if any. */
function takeIdle(engine: EngineName, depth: number, path: string): ReadQueue | undefined {
  const k = idleQueues.findIndex((q) => q.engine === engine && q.depth === depth);
  if (k < 0) return undefined;
  const q = idleQueues.splice(k, 1)[0]!;
  q.path = path;
  return q;
}

/**
 * A queue of `depth` requests through `engine` for reads of `path` (named in errors), or why the
 * kernel refused the engine (io_setup, io_uring_setup: ENOSYS, EPERM under seccomp or
 * io_uring_disabled, EAGAIN past aio-max-nr), one line. SCIOBENCH_IO_URING=off refuses io_uring
 * on purpose (the refusal's path, tested).
 */
export function openReadQueue(
  engine: EngineName,
  depth: number,
  path: string,
): ReadQueue | string {
  if (engine === "psync") return new PsyncQueue(depth, path);
  if (engine === "io_uring" && Deno.env.get("SCIOBENCH_IO_URING") === "off") {
    return "io_uring_setup: refused as SCIOBENCH_IO_URING=off asks";
  }
  const idle = takeIdle(engine, depth, path);
  if (idle !== undefined) return idle;
  if (engine === "libaio") return AioQueue.open(depth, path);
  return UringQueue.open(depth, path);
}

/** Why `engine` cannot run in this process (a probe queue of one request), or undefined. */
export function engineUnavailable(engine: EngineName): string | undefined {
  const q = openReadQueue(engine, 1, "");
  if (typeof q === "string") return q;
  q.close();
  return undefined;
}
