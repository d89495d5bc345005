/**
 * The native source: reads each frame's chunks of a pure framing's index with as few preads as
 * possible into a reused buffer, byte-swapped to native (or, with `--bs` / `--direct`, through a
 * block reader of whole bs-byte preads, pipelined through native AIO under O_DIRECT).
 * @module
 */
import { type ByteOrder, NATIVE_ORDER, SwapBuffer, swapInPlace } from "../bytes/byteswap.ts";
import type {
  ByteSource,
  ChunkRef,
  FrameIndex,
  Framing,
  StoredVariable,
} from "../framings/types.ts";
import { DTYPE_SIZE } from "../framings/types.ts";
import { FormatError, IoError, ShortReadError } from "../core/errors.ts";
import { FileHandle, OVERLAP_MIN_BYTES } from "../io/file.ts";
import { alignedBytes, BlockReader, openForTransfer, transferAlignment } from "../io/transfer.ts";
import { MappedSource } from "../io/mapped.ts";
import { giveBackSpareBuffer, takeSpareBuffer } from "../io/buffers.ts";
import type { FrameSource, QueueSpec, ReadChunk, SourceOptions, StoredChunk } from "./backend.ts";
import { openReadQueue } from "../sys/queue.ts";
import { clockGettime, systemError } from "../sys/libc.ts";
import { PendingFrame } from "./pending_frame.ts";

/** Block size in which `readStored` hands stored bytes to its visitor, bytes. */
const STORED_BLOCK = 1 << 22;

/**
 * Largest gap (bytes) between a frame's chunks that is still read in the same pread, unless the
 * index says otherwise (FrameIndex.readGap).
 */
const MAX_GAP = 1 << 20;

/**
 * Page size the read buffer is placed against, bytes. A pread's copy out of the page cache runs
 * at a fraction of its speed on some CPUs (AMD EPYC's `rep movsb`) when the destination sits 4 to
 * 32 bytes past the source's offset within a page, and at full
 * speed when it sits at the same offset or a few bytes before it. The engine reads file offset
 * `o` into the buffer address `o` mod 4096 rounded down to a multiple of 8 (so typed arrays of
 * 8-byte elements can still view the data), or 0-63 bytes before it so that a frame's largest
 * chunk starts on a cache line ({@link LINE}): bench/read_path_bench.ts.
 */
const PAGE = 4096;

/**
 * Cache line the largest chunk of a frame read through the page cache is placed on, bytes: the
 * verification's memcmp runs faster with both arrays on a line than with one 16 bytes off, and
 * the pread's copy costs the same wherever the destination sits within 64 bytes of the source's
 * place (bench/read_path_bench.ts).
 */
const LINE = 64;

/** Largest read (bytes) that goes into the source's SwapBuffer when its chunks are swapped. */
const SWAP_BUFFER_MAX = 1 << 30;

/** `n` rounded up to a multiple of `align`. */
function alignUp(n: number, align: number): number {
  const r = n % align;
  return r === 0 ? n : n + align - r;
}

/** True when a chunk's bytes are byte-swapped to native order as they are read. */
function swaps(r: ChunkRef): boolean {
  return r.order !== NATIVE_ORDER && DTYPE_SIZE[r.dtype] > 1;
}

/** The chunk `r` read as stored: `data` in the file's byte order. */
function storedChunk(r: ChunkRef, data: Uint8Array): StoredChunk {
  const { name, dtype, shape, order, offset, pieces } = r;
  return { name, dtype, shape, order, offset, pieces, data };
}

/**
 * One read a frame needs: bytes [offset, offset + length) into `into`, or without `into` a view
 * of the block reader's buffer (--bs / --direct).
 */
interface FrameStep {
  readonly offset: number;
  readonly length: number;
  readonly into?: Uint8Array;
  /** True when the frame makes no read after this one (its chunks are made from what it reads). */
  readonly last?: boolean;
}

/**
 * One range of a frame a queued read reads: chunks that lie together, from data byte `lo` to `hi`,
 * read from the aligned byte `start` (`span` bytes, to the aligned end or the file's) into its
 * slot's buffer at `bufAt`, in `reqs` requests, the first of them the frame's `firstReq`-th.
 */
interface Run {
  readonly lo: number;
  readonly hi: number;
  readonly start: number;
  readonly span: number;
  readonly reqs: number;
  readonly firstReq: number;
  bufAt: number;
}

/**
 * The ranges a queued read of a frame of chunks `refs` reads: one when the chunks lie within
 * `gap` bytes of gaps in all (as a pread of the frame reads them), else runs of chunks each
 * within `gap` of the one before in file order; requests of at most `bs` bytes aligned to
 * `align` in a file of `size` bytes. undefined when the frame cannot be queued: chunks in pieces,
 * or data past the end of the file.
 */
function frameRuns(
  refs: readonly ChunkRef[],
  gap: number,
  align: number,
  bs: number,
  size: number,
): Run[] | undefined {
  let flo = Infinity, fhi = 0, total = 0;
  for (const r of refs) {
    if (r.pieces) return undefined;
    if (r.offset < flo) flo = r.offset;
    if (r.offset + r.bytes > fhi) fhi = r.offset + r.bytes;
    total += r.bytes;
  }
  if (fhi > size) return undefined;
  const ranges: [number, number][] = [];
  if (fhi - flo <= total + gap) ranges.push([flo, fhi]);
  else {
    const sorted = [...refs].sort((a, b) => a.offset - b.offset);
    for (const r of sorted) {
      const last = ranges.at(-1);
      if (last !== undefined && r.offset <= last[1] + gap) {
        last[1] = Math.max(last[1], r.offset + r.bytes);
      } else ranges.push([r.offset, r.offset + r.bytes]);
    }
  }
  const runs: Run[] = [];
  let firstReq = 0;
  for (const [lo, hi] of ranges) {
    const start = lo - (lo % align);
    const span = Math.min(alignUp(hi, align), alignUp(size, align)) - start;
    const reqs = bs === Infinity ? 1 : Math.ceil(span / bs);
    runs.push({ lo, hi, start, span, reqs, firstReq, bufAt: 0 });
    firstReq += reqs;
  }
  return runs;
}

/** A {@link FrameSource} that reads frames of a native framing, through the FFI file layer. */
export class NativeSource implements FrameSource {
  readonly path: string;
  readonly framing: string;
  readonly frameCount: number;
  readonly warnings: readonly string[];
  bytesRead = 0;
  readonly departures: readonly string[];
  /** The index's byte order of every chunk, when its format fixes one (netCDF, raw). */
  readonly storedOrder: ByteOrder | undefined;
  /** Bytes past the end of the file read as zeros (netCDF data never written). */
  readonly #pastEndReadsZero: boolean;
  readonly #file: FileHandle;
  /** With --bs / --direct: every read is whole bs-sized preads through this. */
  readonly #blocks: BlockReader | undefined;
  readonly #index: FrameIndex;
  /**
   * The read buffers, one per slot: page-aligned, `PAGE` bytes longer than the longest read each
   * serves; made at the first read (an open makes none), or a closed source's (lib/io/buffers.ts), and
   * left to the next source at close. `readFrame` reads into the current slot;
   * `readFrameAsync` alternates the slots, so the frame before stays intact while it reads.
   */
  readonly #bufs: (Uint8Array | null)[] = [null, null];
  /**
   * The read buffers of frames with byte-swapped chunks, one per slot: WebAssembly memory, where
   * the swap runs in place in one pass (made on the first such frame; null without WebAssembly
   * SIMD).
   */
  readonly #swapBufs: (SwapBuffer | null | undefined)[] = [undefined, undefined];
  /** The slot (0 or 1) reads go into. */
  #slot = 0;
  /** A readFrameAsync is in flight (on another thread). */
  #busy = false;
  /** The last pipelined frame read (O_DIRECT), completed when asked or by the next frame read. */
  #pending: PendingFrame<unknown> | undefined;
  /**
   * What a queued read's requests keep to (readFramesQueued): bytes of each (Infinity: a frame's
   * range in one), the alignment of their offsets and lengths and of their buffers, and whether
   * large buffers are huge pages.
   */
  readonly #requests: {
    readonly bs: number;
    readonly align: number;
    readonly memoryAlign: number;
    readonly hugePages: boolean;
  };

  /** Opens `path` and decodes its layout with `framing.openIndex` (after the open's checks). */
  constructor(framing: Pick<Framing, "name" | "openIndex">, path: string, options: SourceOptions) {
    this.path = path;
    this.framing = framing.name;
    const transfer = options.transfer;
    if (transfer) {
      const t = openForTransfer(path, "read", transfer);
      this.#file = t.file;
      this.#blocks = new BlockReader(t, transfer.bs, transfer.readAhead ?? true);
      this.#requests = {
        bs: transfer.bs,
        ...transferAlignment(t, transfer.bs),
        hugePages: t.hugePages,
      };
    } else {
      this.#file = FileHandle.open(path, "read");
      this.#requests = { bs: Infinity, align: 1, memoryAlign: PAGE, hugePages: false };
    }
    // Without --bs / --direct the open's scan reads through lib/io/mapped.ts: a mapping while the
    // file is cold (large sequential reads, one pass), pread while it is cached; an index that
    // reads later does so through pread. With them, whole bs-sized transfers, as asked.
    const blocks = this.#blocks;
    const mapped = blocks ? undefined : new MappedSource(this.#file);
    const scan: ByteSource = mapped ?? {
      path,
      size: this.#file.size,
      read: (offset: number, length: number) => blocks!.read(offset, length),
    };
    try {
      this.#index = framing.openIndex(this.#countingSource(scan, mapped !== undefined), {
        ...options.backendOptions,
        endian: options.endian,
        layout: options.layout,
      });
      mapped?.release();
    } catch (e) {
      mapped?.release();
      this.#file.close();
      if (e instanceof ShortReadError) {
        throw new FormatError(framing.name, path, e.offset, e.problem);
      }
      throw e;
    }
    this.frameCount = this.#index.frameCount;
    this.warnings = this.#index.warnings ?? [];
    this.departures = this.#index.departures ?? [];
    this.#pastEndReadsZero = this.#index.pastEndReadsZero ?? false;
    this.storedOrder = this.#index.order;
  }

  /**
   * `source` (the file) as a ByteSource for the decoder, counting what it reads into `bytesRead`;
   * without --bs / --direct (`plain`) it can also read into the decoder's buffer (plain preads).
   */
  #countingSource(source: ByteSource, plain: boolean): ByteSource {
    const count = (n: number) => this.bytesRead += n;
    const window = source.window?.bind(source);
    const file = this.#file;
    return {
      path: source.path,
      size: source.size,
      read(offset: number, length: number): Uint8Array {
        count(length);
        return source.read(offset, length);
      },
      ...(window && {
        window,
        readInPlace(bytes: number): void {
          count(bytes);
        },
      }),
      readInto: plain
        ? (buf, offset) => {
          const n = file.readInto(buf, offset);
          count(n);
          return n;
        }
        : undefined,
    };
  }

  /**
   * `bytes` bytes of the reused read buffer, starting at the page offset of file offset
   * `fileOffset` rounded down to 8 (the kernel's copy from the page cache runs at full speed); of the
   * SwapBuffer when the chunks read into it are `swapping` to native order.
   */
  #buffer(
    bytes: number,
    fileOffset = 0,
    swapping = false,
    slot = this.#slot,
    anchor?: number,
  ): Uint8Array {
    // every byte 0-7 bytes before its file offset's place in a page (fileOffset's on a multiple
    // of 8), or with an anchor 0-63 bytes before, the anchor's byte on a cache line
    // mutant: read-place-cache-line
    const shift = anchor === undefined ? fileOffset % 8 : anchor % LINE;
    let at = fileOffset % PAGE - shift;
    if (at < 0) at += PAGE;
    if (swapping && bytes <= SWAP_BUFFER_MAX) {
      if (this.#swapBufs[slot] === undefined) this.#swapBufs[slot] = SwapBuffer.create();
      const swapBuf = this.#swapBufs[slot];
      if (swapBuf) return swapBuf.view(at, bytes);
    }
    let buf = this.#bufs[slot]!;
    if (buf === null || buf.length < bytes + PAGE) {
      let cap = buf === null ? 1 << 16 : buf.length - PAGE;
      while (cap < bytes) cap *= 2;
      if (buf !== null) giveBackSpareBuffer(buf);
      buf = takeSpareBuffer(cap + PAGE);
      this.#bufs[slot] = buf;
    }
    return buf.subarray(at, at + bytes);
  }

  /** Reads `into` from byte `offset` (through the block reader with --bs / --direct); the count. */
  #readInto(into: Uint8Array, offset: number): number {
    if (!this.#blocks) return this.#file.readInto(into, offset);
    const got = this.#blocks.view(offset, into.length);
    into.set(got);
    return got.length;
  }

  #readExactly(into: Uint8Array, offset: number): void {
    const n = this.#readInto(into, offset);
    this.bytesRead += n;
    this.#checkRead(into, offset, n);
  }

  /** Zeros past the end where the format says so, else FormatError when `n` < the bytes asked. */
  #checkRead(into: Uint8Array, offset: number, n: number): void {
    if (n < into.length && this.#pastEndReadsZero && offset + n >= this.#file.size) {
      into.fill(0, n);
      return;
    }
    if (n < into.length) {
      throw new FormatError(
        this.framing,
        this.path,
        offset + n,
        `file ends at byte ${offset + n}, inside data that should run to byte ${
          offset + into.length
        }`,
      );
    }
  }

  readFrame(frame: number): readonly ReadChunk[] {
    return this.#read(
      this.#frameSteps(
        frame,
        true,
        (r, data, slot, written) => this.#chunk(r, data, slot, written),
      ),
    );
  }

  readFrameStored(frame: number): readonly StoredChunk[] {
    return this.#read(this.#frameSteps(frame, false, storedChunk));
  }

  readFrameAsync(frame: number): PromiseLike<readonly ReadChunk[]> {
    return this.#readAsync(
      this.#frameSteps(
        frame,
        true,
        (r, data, slot, written) => this.#chunk(r, data, slot, written),
      ),
    );
  }

  readFrameStoredAsync(frame: number): PromiseLike<readonly StoredChunk[]> {
    return this.#readAsync(this.#frameSteps(frame, false, storedChunk));
  }

  /** Makes a frame's reads at once, on this thread, into the current slot. */
  #read<T>(steps: Generator<FrameStep, T[], Uint8Array>): T[] {
    if (this.#busy || this.#pending?.settled === false) {
      throw new Error(`${this.path}: a frame read is still in flight`);
    }
    let step = steps.next();
    while (!step.done) step = steps.next(this.#step(step.value));
    return step.value;
  }

  /**
   * Makes a frame's reads as {@link #read} does, the same preads in the same order, each of at
   * least OVERLAP_MIN_BYTES on another thread (lib/io/file.ts), so the caller's thread is free
   * (to verify the frame before) while they are in flight. They go into the other slot than the
   * last call's: a frame's chunks stay valid until the second call after it. One at a time. A
   * frame whose steps are all smaller is read at once, here, with no promise chain (a resolved
   * promise). {@link pipelined} (O_DIRECT): the first large read is submitted through native AIO
   * and the frame completed on this thread when asked (#readPipelined); a call made while the
   * frame before is in flight completes that one first.
   */
  #readAsync<T>(steps: Generator<FrameStep, T[], Uint8Array>): PromiseLike<T[]> {
    try {
      if (this.#busy) throw new Error(`${this.path}: a frame read is still in flight`);
      this.#slot ^= 1; // (the generator's body runs from the first next(): after this)
      // the frame's reads are planned (its index entries, its range) while the read before is in
      // flight; then that frame is completed, so only its reap lies between the two reads
      let step = steps.next();
      // (its chunks are made when they are asked, after this frame's read is submitted)
      this.#pending?.reapReads();
      this.#pending = undefined;
      while (!step.done && step.value.length < OVERLAP_MIN_BYTES) {
        step = steps.next(this.#step(step.value, true));
      }
      if (step.done) return Promise.resolve(step.value);
      if (this.pipelined) return this.#readPipelined(steps, step.value);
      return this.#finishAsync(steps, step.value);
    } catch (e) {
      return Promise.reject(e);
    }
  }

  /**
   * True when a frame read started while the one before is in flight completes that one first
   * (its read reaped, its other reads made) and then submits its own: O_DIRECT, through the
   * block reader and Linux native AIO. The overlap driver then starts frame k + 1's read before
   * it awaits frame k (lib/backends/overlap.ts), so frame k + 1's planning overlaps frame k's
   * read and only the reap lies between the two reads, as between fio's preads.
   */
  get pipelined(): boolean {
    // mutant: pipelined-direct
    return this.#blocks !== undefined && this.#file.direct;
  }

  /**
   * The rest of {@link #readAsync} from its first large step, `first`, with {@link pipelined}:
   * `first` submitted now (BlockReader.submitView), the rest of the frame (the reap, the frame's
   * other reads, made at once, and its chunks) made when the result is asked or the next frame
   * read starts (PendingFrame).
   */
  #readPipelined<T>(
    steps: Generator<FrameStep, T[], Uint8Array>,
    first: FrameStep,
  ): PromiseLike<T[]> {
    const read = this.#blocks!.submitView(first.offset, first.into?.length ?? first.length);
    const reap = first.last ? () => void read.wait() : undefined;
    const pending = new PendingFrame(() => {
      let got = read.wait();
      if (first.into !== undefined) {
        first.into.set(got);
        got = first.into.subarray(0, got.length);
      }
      let step = steps.next(got);
      while (!step.done) step = steps.next(this.#step(step.value, true));
      return step.value;
    }, reap);
    this.#pending = pending;
    return pending;
  }

  /** The rest of {@link #readAsync} from its first large step, `first`. */
  async #finishAsync<T>(
    steps: Generator<FrameStep, T[], Uint8Array>,
    first: FrameStep,
  ): Promise<T[]> {
    this.#busy = true;
    try {
      let step = steps.next(await this.#stepAsync(first));
      while (!step.done) step = steps.next(await this.#stepAsync(step.value));
      return step.value;
    } finally {
      this.#busy = false;
    }
  }

  /**
   * One read of a frame, on this thread: the bytes it asked for (short at the end of the file);
   * `alternate`: a view of the block reader from its other buffer (the frame before stays intact).
   */
  #step(s: FrameStep, alternate = false): Uint8Array {
    if (s.into === undefined) return this.#blocks!.view(s.offset, s.length, alternate);
    return s.into.subarray(0, this.#readInto(s.into, s.offset));
  }

  /** {@link #step} with its preads on another thread (block reader: into its other buffer). */
  async #stepAsync(s: FrameStep): Promise<Uint8Array> {
    const blocks = this.#blocks;
    if (s.into === undefined) return await blocks!.viewAsync(s.offset, s.length);
    if (!blocks) return s.into.subarray(0, await this.#file.readIntoAsync(s.into, s.offset));
    const got = await blocks.viewAsync(s.offset, s.into.length);
    s.into.set(got);
    return s.into.subarray(0, got.length);
  }

  /**
   * The reads of the chunks of `frame`, as few preads as the layout allows, as steps a driver
   * makes ({@link #read}, {@link #readAsync}) and gives back the bytes of; hands each chunk to
   * `make` with its bytes: placed for the swap to native when `native` (SwapBuffer memory, and
   * typed-array aligned), else as stored (with --bs / --direct a view of the block reader's
   * buffer, no copy).
   */
  *#frameSteps<T>(
    frame: number,
    native: boolean,
    make: (r: ChunkRef, data: Uint8Array, slot: number, written?: number) => T,
  ): Generator<FrameStep, T[], Uint8Array> {
    // the slot this frame's reads go into (a frame read started later may change #slot first)
    const slot = this.#slot;
    const refs = this.#index.chunks(frame);
    let lo = Infinity, hi = 0, total = 0, pieces = false;
    // the largest chunk, placed on a cache line in the read buffer (#buffer)
    let anchor = 0, most = -1;
    for (const r of refs) {
      if (r.pieces) pieces = true;
      if (r.offset < lo) lo = r.offset;
      if (r.offset + r.bytes > hi) hi = r.offset + r.bytes;
      if (r.bytes > most) [anchor, most] = [r.offset, r.bytes];
      total += r.bytes;
    }
    // (only where every chunk stays on a multiple of its element size: typed-array views)
    const line = refs.every((r) => (r.offset - anchor) % DTYPE_SIZE[r.dtype] === 0)
      ? anchor
      : undefined;
    const out: T[] = [];
    if (refs.length === 0) return out;
    const size = this.#file.size;
    if (!pieces && hi > size && this.#pastEndReadsZero) {
      // data past the end of the file (netCDF, never written) is zeros: each chunk gets a new
      // zeroed buffer whose pages past the end are never touched (no memory until written), and
      // only its bytes inside the file are read and swapped
      for (const r of refs) {
        const data = new Uint8Array(r.bytes);
        const inFile = Math.min(r.bytes, Math.max(0, size - r.offset));
        if (inFile > 0) yield* this.#exactly(data.subarray(0, inFile), r.offset);
        out.push(make(r, data, slot, inFile));
      }
      return out;
    }
    const swapping = native && refs.some(swaps);
    const gap = this.#index.readGap ?? MAX_GAP;
    if (!pieces && hi - lo <= total + gap && this.#blocks) {
      // --bs / --direct: a view of the block reader's aligned buffer, no copy
      let view = yield { offset: lo, length: hi - lo, last: true };
      this.bytesRead += view.length;
      // a copy of the frame when short (past the end) or swapped in place (the buffered bytes
      // stay the file's)
      if (view.length < hi - lo || swapping) {
        const whole = this.#buffer(hi - lo, lo, swapping, slot, line);
        whole.set(view);
        this.#checkRead(whole, lo, view.length);
        view = whole;
      }
      // a chunk that would not start on a multiple of its element size is copied alone (a
      // typed-array view needs it): gsd's 8-byte step, 4 bytes off, cost a copy of the whole
      // 448 KiB frame, and touching the bytes an O_DIRECT read just brought in slows the next
      // read on a virtual machine (bench/direct_touch_bench.ts)
      const at = view.byteOffset - lo;
      for (const r of refs) {
        const data = view.subarray(r.offset - lo, r.offset - lo + r.bytes);
        const aligned = !native || (at + r.offset) % DTYPE_SIZE[r.dtype] === 0;
        out.push(make(r, aligned ? data : data.slice(), slot));
      }
      return out;
    }
    if (!pieces && hi - lo <= total + gap) {
      const buf = this.#buffer(hi - lo, lo, swapping, slot, line);
      yield* this.#exactly(buf, lo);
      for (const r of refs) {
        out.push(make(r, buf.subarray(r.offset - lo, r.offset - lo + r.bytes), slot));
      }
      return out;
    }
    const buf = this.#buffer(total, 0, swapping, slot);
    let at = 0;
    for (const r of refs) {
      const view = buf.subarray(at, at + r.bytes);
      if (r.pieces) {
        let p = 0;
        for (const [off, len] of r.pieces) {
          yield* this.#exactly(view.subarray(p, p + len), off);
          p += len;
        }
      } else {
        yield* this.#exactly(view, r.offset);
      }
      out.push(make(r, view, slot));
      at += r.bytes;
    }
    return out;
  }

  /** The step that reads all of `into` from byte `offset` (zeros or FormatError when short). */
  *#exactly(into: Uint8Array, offset: number): Generator<FrameStep, void, Uint8Array> {
    const got = yield { into, offset, length: into.length };
    this.bytesRead += got.length;
    this.#checkRead(into, offset, got.length);
  }

  /**
   * Chunk `r` in native order from its stored bytes `data`, of which only the first `written`
   * may be other than zero (the rest lay past the end of the file): only those are swapped.
   */
  #chunk(r: ChunkRef, data: Uint8Array, slot: number, written = data.length): ReadChunk {
    if (swaps(r)) {
      const width = DTYPE_SIZE[r.dtype];
      const part = written < data.length
        ? data.subarray(0, Math.ceil(written / width) * width)
        : data;
      const swapBuf = this.#swapBufs[slot];
      if (swapBuf) swapBuf.swap(part, width);
      else swapInPlace(part, width);
    }
    return { name: r.name, dtype: r.dtype, shape: r.shape, data };
  }

  readFramesQueued(
    order: ArrayLike<number>,
    queue: QueueSpec,
    visit: (frame: number, chunks: readonly ReadChunk[], k: number) => void,
    latency?: { record(ns: number): void },
  ): void {
    this.#readQueued(
      order,
      queue,
      true,
      (r, data) => this.#chunk(r, data, -1),
      (frame) =>
        this.#read(
          this.#frameSteps(
            frame,
            true,
            (r, data, slot, written) => this.#chunk(r, data, slot, written),
          ),
        ),
      visit,
      latency,
    );
  }

  readFramesStoredQueued(
    order: ArrayLike<number>,
    queue: QueueSpec,
    visit: (frame: number, chunks: readonly StoredChunk[], k: number) => void,
    latency?: { record(ns: number): void },
  ): void {
    this.#readQueued(
      order,
      queue,
      false,
      storedChunk,
      (frame) => this.#read(this.#frameSteps(frame, false, storedChunk)),
      visit,
      latency,
    );
  }

  /**
   * {@link FrameSource.readFramesQueued}: each frame whose chunks lie together is one range (one
   * whose chunks lie apart, a range per run of chunks that lie together: {@link frameRuns}),
   * aligned (--direct) and cut into requests of at most `bs` bytes, read into a buffer of its own
   * (2 x depth buffers: those of frames completed and not yet visited stay intact while as many
   * requests as the depth allows are in flight); a frame stored in pieces, or past the end of
   * the file, is read by `alone` once every request is in. Each loop: prepare requests up to the
   * depth, submit them in one call, visit the frames completed, reap at least one.
   */
  #readQueued<T>(
    order: ArrayLike<number>,
    queue: QueueSpec,
    native: boolean,
    make: (r: ChunkRef, data: Uint8Array) => T,
    alone: (frame: number) => readonly T[],
    visit: (frame: number, chunks: readonly T[], k: number) => void,
    latency?: { record(ns: number): void },
  ): void {
    if (this.#busy || this.#pending?.settled === false) {
      throw new Error(`${this.path}: a frame read is still in flight`);
    }
    const depth = Math.max(1, queue.depth);
    const q = openReadQueue(queue.engine, depth, this.path);
    if (typeof q === "string") throw new IoError(`--engine ${queue.engine}: ${q}`);
    const { bs, align, memoryAlign } = this.#requests;
    const size = this.#file.size;
    const fd = this.#file.fd;
    const slots = 2 * depth;
    const spare = this.#spareSlots();
    /** Per frame slot: its buffer, frame, place in order, requests outstanding. */
    const bufs: (Uint8Array | undefined)[] = new Array(slots);
    const frameOf = new Int32Array(slots), kOf = new Int32Array(slots);
    const outstanding = new Int32Array(slots);
    const refsOf: (readonly ChunkRef[] | undefined)[] = new Array(slots);
    /**
     * Per slot, its frame's ranges (runs of chunks that lie together; one unless the chunks lie
     * apart): each run's first and end byte of data, its aligned first byte, where it starts in
     * the slot's buffer and its first request; and where each chunk of `refsOf` starts in the
     * buffer.
     */
    const runsOf: Run[][] = Array.from({ length: slots }, () => []);
    const refAt: number[][] = Array.from({ length: slots }, () => []);
    /** Requests of a slot are tagged slot * REQS + their index; REQS bounds a frame's requests. */
    const REQS = 1 << 16;
    const gap = this.#index.readGap ?? MAX_GAP;
    const free: number[] = [];
    for (let s = slots - 1; s >= 0; s--) free.push(s);
    const ready: number[] = [];
    const n = order.length;
    let k = 0;
    /** The slot whose requests are being prepared, its next request and their count. */
    let cur = -1, nextReq = 0, reqs = 0;
    let prepared = 0;
    /** The run of slot `s` request `i` belongs to. */
    const runOf = (s: number, i: number): Run => {
      const runs = runsOf[s]!;
      let j = runs.length - 1;
      while (runs[j]!.firstReq > i) j--;
      return runs[j]!;
    };
    /** Bytes of request `i` of run `r`: `bs`, the last one to the run's aligned end. */
    const requestBytes = (r: Run, i: number): number =>
      bs === Infinity ? r.hi - r.start : Math.min(bs, alignUp(r.hi, align) - r.start - i * bs);
    const visitSlot = (s: number): void => {
      const refs = refsOf[s]!;
      const buf = bufs[s]!;
      const at = refAt[s]!;
      const out: T[] = [];
      for (let j = 0; j < refs.length; j++) {
        const r = refs[j]!;
        const data = buf.subarray(at[j]!, at[j]! + r.bytes);
        // a chunk off a multiple of its element size is copied alone (typed-array views)
        const aligned = !native || (data.byteOffset % DTYPE_SIZE[r.dtype]) === 0;
        out.push(make(r, aligned ? data : data.slice()));
      }
      for (const r of runsOf[s]!) this.bytesRead += r.hi - r.lo;
      refsOf[s] = undefined;
      visit(frameOf[s]!, out, kOf[s]!);
    };
    try {
      for (;;) {
        // prepare requests up to the depth
        // mutant: queue-depth
        while (prepared + q.inFlight < depth) {
          if (cur < 0) {
            if (k >= n || free.length === 0) break;
            const frame = order[k]!;
            const refs = this.#index.chunks(frame);
            const runs = frameRuns(refs, gap, align, bs, size);
            const total = runs?.reduce((t, r) => t + r.reqs, 0) ?? 0;
            if (runs === undefined || runs.length === 0 || total >= REQS) {
              // read alone once every request in flight is in and every completed frame visited
              if (prepared + q.inFlight > 0 || ready.length > 0) break;
              const t0 = latency && clockGettime();
              const chunks = alone(frame);
              if (latency) latency.record(clockGettime() - t0!);
              visit(frame, chunks, k);
              k++;
              continue;
            }
            const s = free.pop()!;
            // each run's place in the buffer, aligned as the reads into it must be
            let bytes = 0;
            for (const r of runs) {
              r.bufAt = alignUp(bytes, memoryAlign);
              bytes = r.bufAt + r.span;
            }
            let buf = bufs[s];
            if (buf === undefined || buf.length < bytes) {
              if (buf !== undefined && spare) giveBackSpareBuffer(buf);
              buf = this.#slotBuffer(bytes);
              bufs[s] = buf;
            }
            const at = refAt[s]!;
            at.length = refs.length;
            for (let j = 0; j < refs.length; j++) {
              const o = refs[j]!.offset;
              const r = runs.find((r) => o >= r.lo && o < r.hi) ?? runs[0]!;
              at[j] = r.bufAt + o - r.start;
            }
            frameOf[s] = frame;
            kOf[s] = k;
            runsOf[s] = runs;
            refsOf[s] = refs;
            reqs = total;
            outstanding[s] = reqs;
            cur = s;
            nextReq = 0;
            k++;
          }
          const s = cur;
          const r = runOf(s, nextReq);
          const i = nextReq - r.firstReq;
          const off = i * (bs === Infinity ? 0 : bs);
          const len = requestBytes(r, i);
          const into = bufs[s]!.subarray(r.bufAt + off, r.bufAt + off + len);
          q.prepare(s * REQS + nextReq, fd, into, r.start + off);
          prepared++;
          if (++nextReq === reqs) cur = -1;
        }
        if (prepared > 0) {
          q.submit();
          prepared = 0;
        }
        // the frames completed are verified while the requests just submitted are in flight
        for (let j = 0; j < ready.length; j++) {
          visitSlot(ready[j]!);
          free.push(ready[j]!);
        }
        ready.length = 0;
        if (q.inFlight === 0) {
          if (k >= n && cur < 0) break;
          continue;
        }
        const got = q.reap(1);
        for (let e = 0; e < got; e++) {
          const tag = q.doneTags[e]!;
          const count = q.doneCounts[e]!;
          const s = Math.floor(tag / REQS);
          const r = runOf(s, tag % REQS);
          const i = tag % REQS - r.firstReq;
          if (latency) latency.record(q.doneLatency[e]!);
          if (count < 0) {
            throw systemError("pread", this.path, -count);
          }
          const off = r.start + i * (bs === Infinity ? 0 : bs);
          const asked = requestBytes(r, i);
          // a request ends short only at the end of the file, past the frame's bytes
          if (count < asked && off + count < Math.min(off + asked, r.hi)) {
            throw new FormatError(
              this.framing,
              this.path,
              off + count,
              `file ends at byte ${off + count}, inside data that should run to byte ${r.hi}`,
            );
          }
          outstanding[s] = outstanding[s]! - 1;
          if (outstanding[s] === 0) ready.push(s);
        }
      }
    } catch (e) {
      // the requests in flight are reaped (their buffers stay in use until then), then the error
      try {
        q.close();
      } catch {
        // the first error is the one to report
      }
      throw e;
    }
    q.close();
    // the slot buffers (pages touched) go to the next phase's or cell's requests
    if (spare) { for (const buf of bufs) if (buf !== undefined) giveBackSpareBuffer(buf); }
  }

  /**
   * Whether the queue's slot buffers come from the process's spares (page-aligned; huge pages
   * from 1 MiB): unless O_DIRECT asks for 4 KiB pages (`--no-huge-pages`) or a larger alignment.
   */
  #spareSlots(): boolean {
    const { align, memoryAlign, hugePages } = this.#requests;
    return memoryAlign <= 4096 && (hugePages || align === 1);
  }

  /** A slot buffer of at least `bytes` bytes, aligned as the requests into it must be. */
  #slotBuffer(bytes: number): Uint8Array {
    const { memoryAlign, hugePages } = this.#requests;
    if (this.#spareSlots()) return takeSpareBuffer(bytes);
    return alignedBytes(alignUp(bytes, memoryAlign), memoryAlign, hugePages);
  }

  reserveQueued(queue: QueueSpec): void {
    if (!this.#spareSlots() || this.#index.frameCount === 0) return;
    const { align, bs } = this.#requests;
    const runs = frameRuns(
      this.#index.chunks(0),
      this.#index.readGap ?? MAX_GAP,
      align,
      bs,
      this.#file.size,
    );
    if (runs === undefined || runs.length === 0) return;
    let bytes = 0;
    for (const r of runs) bytes = alignUp(bytes, this.#requests.memoryAlign) + r.span;
    const bufs = Array.from({ length: 2 * Math.max(1, queue.depth) }, () => {
      const buf = takeSpareBuffer(bytes);
      // every page faulted in now, not by the first request into it
      // mutant: queue-reserve-touch
      buf.fill(0);
      return buf;
    });
    for (const buf of bufs) giveBackSpareBuffer(buf);
  }

  locate(frame: number): readonly ChunkRef[] {
    return this.#index.chunks(frame);
  }

  readStored(
    pieces: readonly (readonly [number, number])[],
    visit: (bytes: Uint8Array) => void,
  ): void {
    const buf = this.#buffer(STORED_BLOCK);
    for (const [offset, length] of pieces) {
      for (let done = 0; done < length;) {
        const view = buf.subarray(0, Math.min(STORED_BLOCK, length - done));
        this.#readExactly(view, offset + done);
        visit(view);
        done += view.length;
      }
    }
  }

  describe(): Record<string, unknown> {
    return this.#index.describe?.() ?? {};
  }

  variables(): Iterable<StoredVariable> {
    return this.#index.variables?.() ?? [];
  }

  close(): void {
    this.#file.close();
    // the read buffers go to the next source, unless a read may still write into one
    if (!this.#busy && this.#pending?.settled !== false) {
      for (const buf of this.#bufs) if (buf !== null) giveBackSpareBuffer(buf);
      this.#bufs[0] = this.#bufs[1] = null;
    }
  }
}
