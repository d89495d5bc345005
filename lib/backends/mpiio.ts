/**
 * The `mpiio` backend: the raw framing's frames (lib/framings/raw.ts) written and read through
 * MPI-IO of the launcher's MPI library (lib/mpi/io.ts), as HPC codes write one file from many
 * ranks. Under `--layout shared` every rank opens one file (MPI_COMM_WORLD) and writes its own
 * frames at the offsets the raw layout gives them, rank 0 the header and the index; under
 * `per-rank` each rank writes a file of its own (MPI_COMM_SELF). Either way the file is byte for
 * byte the raw framing's: one process writing the same frames in order, or `raw --layout shared`,
 * writes the same bytes. Writes are MPI_File_write_at_all (`--collective on`) or
 * MPI_File_write_at, reads MPI_File_read_at_all or MPI_File_read_at; the durable point is
 * MPI_File_sync, then MPI_File_close.
 *
 * A shared file needs frames of one layout (every rank's frames the same size, as the table and
 * records workloads write them), so every rank knows every frame's offset without asking. Each
 * rank's writes are the frames' chunks in file order: a chunk of 64 KiB or more is one call, as
 * the native sink writes it, smaller ones are gathered into calls of up to 4 MiB; with `--bs`
 * (IOR's `-t`) every write and read call of frame data is bs bytes (a run's last may be
 * shorter). Every rank makes the same calls for the same frames, which collective calls need.
 * `--segments` places a rank's frames in interleaved blocks (FramePart.frameOf), as IOR's `-s`. A rank that fails (its MPI call
 * or its own check) still makes its remaining collective calls, empty, then every rank agrees on
 * the failure, closes the file and rank 0 removes it: no rank waits forever, and the others stop
 * with PeerRankFailed, so the phase names the rank that failed.
 * @module
 */
import { FormatError, UsageError } from "../core/errors.ts";
import { abandonSharedFile, removeQuietly } from "../peers/common.ts";
import { copySwapped, NATIVE_ORDER } from "../bytes/byteswap.ts";
import {
  type ByteOrder,
  type ByteSource,
  type ChunkLayout,
  DTYPE_SIZE,
  type Frame,
  type FrameIndex,
  type FrameWriter,
  type WriteOp,
} from "../framings/types.ts";
import { raw, RAW_HEADER_BYTES, rawTrailer } from "../framings/raw.ts";
import type {
  Backend,
  FrameSink,
  FrameSource,
  FsyncPolicy,
  MpiIoFile,
  MpiIoSettings,
  ReadChunk,
  SinkOptions,
  SourceOptions,
  StoredChunk,
} from "./backend.ts";

/** Writes of at least this many bytes go to the library in a call of their own (the native sink's). */
const OWN_CALL_BYTES = 64 << 10;
/** Bytes of the calls smaller writes are gathered into, at most. */
const GATHER_BYTES = 4 << 20;

/**
 * A rank's positioned writes as MPI-IO calls: one call for a write of {@link OWN_CALL_BYTES} or
 * more, smaller writes that follow each other in the file gathered into calls of up to
 * {@link GATHER_BYTES}. The calls follow from the writes' sizes and offsets alone, so ranks
 * writing frames of one layout make the same calls. A call that fails is remembered
 * (`failure`) and every later call is made empty: the rank keeps its place in the collective
 * calls of the others.
 */
class CallQueue {
  readonly #call: (data: Uint8Array, offset: number) => void;
  /** `--bs`: every call this many bytes (the last of a run of writes may be shorter). */
  readonly #bs: number | undefined;
  #buf = new Uint8Array(0);
  #start = 0;
  #fill = 0;
  /** The first call that failed, when one did. */
  failure: unknown;
  /** True once the rank gave up: its calls are made empty. */
  draining = false;

  constructor(call: (data: Uint8Array, offset: number) => void, bs?: number) {
    this.#call = call;
    this.#bs = bs;
  }

  /** Queues `data` for byte `offset` (`data` may be reused once this returns). */
  write(data: Uint8Array, offset: number): void {
    const n = data.length;
    if (n === 0) return;
    // mutant: mpiio-bs-calls
    if (this.#bs !== undefined) {
      this.#writeBs(data, offset, this.#bs);
      return;
    }
    if (this.#fill > 0 && (offset !== this.#start + this.#fill || this.#fill + n > GATHER_BYTES)) {
      this.flush();
    }
    if (n >= OWN_CALL_BYTES) {
      this.flush();
      this.#make(data, offset);
      return;
    }
    if (this.#buf.length === 0) this.#buf = new Uint8Array(GATHER_BYTES);
    if (this.#fill === 0) this.#start = offset;
    if (!this.draining) this.#buf.set(data, this.#fill);
    this.#fill += n;
  }

  /**
   * `--bs`: writes that follow each other in the file gathered and split into calls of `bs`
   * bytes; a whole `bs` of `data` goes out without a copy.
   */
  #writeBs(data: Uint8Array, offset: number, bs: number): void {
    if (this.#fill > 0 && offset !== this.#start + this.#fill) this.flush();
    let at = 0;
    while (at < data.length) {
      if (this.#fill === 0 && data.length - at >= bs) {
        this.#make(data.subarray(at, at + bs), offset + at);
        at += bs;
        continue;
      }
      if (this.#buf.length < bs) this.#buf = new Uint8Array(bs);
      if (this.#fill === 0) this.#start = offset + at;
      const take = Math.min(data.length - at, bs - this.#fill);
      if (!this.draining) this.#buf.set(data.subarray(at, at + take), this.#fill);
      this.#fill += take;
      at += take;
      if (this.#fill === bs) this.flush();
    }
  }

  /** Makes the call of the writes gathered so far. */
  flush(): void {
    if (this.#fill === 0) return;
    const fill = this.#fill;
    this.#fill = 0;
    this.#make(this.#buf.subarray(0, fill), this.#start);
  }

  #make(data: Uint8Array, offset: number): void {
    try {
      this.#call(this.draining ? data.subarray(0, 0) : data, offset);
    } catch (e) {
      this.failure ??= e;
      this.draining = true;
    }
  }
}

/** The raw framing's pure writer, as the framing hands it out. */
function rawWriter(endian: SinkOptions["endian"]): FrameWriter {
  return raw.createWriter({ endian: endian ?? "native" });
}

/** Bytes of a frame's writes. */
function opBytes(ops: readonly WriteOp[]): number {
  let n = 0;
  for (const op of ops) if (op.kind === "write") n += op.data.length;
  return n;
}

/** The settings an MPI-IO open needs, or UsageError when a caller gave none. */
function settingsOf(options: { readonly mpiIo?: MpiIoSettings } | undefined): MpiIoSettings {
  const s = options?.mpiIo;
  if (s === undefined) {
    throw new UsageError(
      "mpiio writes and reads through MPI-IO in the table and records workloads under an MPI " +
        "launcher (mpirun, mpiexec, srun); its files are raw files: read them with --framing raw",
    );
  }
  return s;
}

/** A file of raw frames written through MPI-IO by one rank, or by every rank of a shared file. */
class MpiioSink implements FrameSink {
  readonly path: string;
  readonly #file: MpiIoFile;
  readonly #writer: FrameWriter;
  readonly #queue: CallQueue;
  readonly #fsync: FsyncPolicy;
  readonly #collective: boolean;
  /** This rank's frames of a shared file; undefined for a file of its own. */
  readonly #part: MpiIoSettings["part"];
  /** The frames' layout and bytes (a shared file's frames are all of one layout). */
  #layout: readonly ChunkLayout[] | undefined;
  #frameOps: number[] = [];
  #frameBytes = -1;
  /** Frames whose writes were all handed to the queue. */
  #fed = 0;
  /** The steps of this rank's frames (a shared file's index is rank 0's to write). */
  #steps: number[] = [];
  /** A failure of this rank not made by a call (a frame of another layout). */
  #failure: unknown;
  #open = true;

  constructor(path: string, options: SinkOptions, settings: MpiIoSettings) {
    this.path = path;
    if (options.create === "append") {
      throw new UsageError(`mpiio cannot append to ${path}: it writes new files`);
    }
    if (settings.layout === "shared" && settings.part === undefined) {
      throw new UsageError(`mpiio: a shared file needs this rank's part of the frames (${path})`);
    }
    this.#fsync = options.fsync ?? "end";
    if (settings.layout === "shared" && this.#fsync === "each") {
      throw new UsageError(
        "--layout shared fsyncs at the end or not at all: use --fsync end or none",
      );
    }
    this.#collective = settings.collective;
    this.#part = settings.layout === "shared" ? settings.part : undefined;
    this.#writer = rawWriter(options.endian);
    const access = options.create === "new" ? "create-new" : "create";
    this.#file = settings.io.open(path, access, settings.layout, settings.hints);
    try {
      // an existing file is cut to 0 bytes before any rank writes: the ranks agree on its size
      // (a collective call, after which every rank has looked), cut it, and meet again
      if (access === "create" && this.#file.range(this.#file.size())[1] > 0) {
        this.#file.setSize(0);
        this.#file.range(0);
      }
    } catch (e) {
      this.#closeQuietly();
      throw e;
    }
    const file = this.#file;
    const collective = this.#collective;
    this.#queue = new CallQueue(
      (data, offset) => file.writeAt(data, offset, collective),
      options.transfer?.bs,
    );
    const header = this.#writer.begin();
    if (this.#part === undefined) this.#apply(header, 0);
    else if (file.rank === 0) this.#writeAlone(header);
  }

  /** Hands `ops` to the queue at `shift` bytes further on. */
  #apply(ops: readonly WriteOp[], shift: number): void {
    for (const op of ops) if (op.kind === "write") this.#queue.write(op.data, op.offset + shift);
  }

  /** Writes `ops` in independent calls (a shared file's header and index, rank 0's). */
  #writeAlone(ops: readonly WriteOp[]): void {
    for (const op of ops) if (op.kind === "write") this.#file.writeAt(op.data, op.offset, false);
  }

  /**
   * Bytes from local frame `k`'s place in this rank's own writer (frame k of k + 1) to its place
   * in the shared file (frame `frameOf(k)`, which `--segments` interleaves with the others').
   */
  #shift(k: number): number {
    return this.#part === undefined ? 0 : (this.#part.frameOf(k) - k) * this.#frameBytes;
  }

  writeFrame(frame: Frame): void {
    if (this.#layout === undefined) {
      this.#layout = frame.chunks.map(({ name, dtype, shape }) => ({ name, dtype, shape }));
    }
    const ops = this.#writer.writeFrame(frame);
    const bytes = opBytes(ops);
    if (this.#frameBytes < 0) {
      this.#frameBytes = bytes;
      this.#frameOps = ops.map((op) => (op.kind === "write" ? op.data.length : 0));
    } else if (this.#part !== undefined && bytes !== this.#frameBytes) {
      this.#failure = new UsageError(
        `${this.path}: mpiio writes a shared file of frames of one layout; frame ` +
          `${this.#part.frameOf(this.#fed)} has ${bytes} bytes, the first ${this.#frameBytes}`,
      );
      throw this.#failure;
    }
    this.#apply(ops, this.#shift(this.#fed));
    this.#fed++;
    this.#steps.push(frame.step);
    if (this.#queue.failure !== undefined) throw this.#queue.failure;
    if (this.#fsync === "each") {
      this.#queue.flush();
      if (this.#queue.failure !== undefined) throw this.#queue.failure;
      this.#file.sync();
    }
  }

  close(): void {
    this.#queue.flush();
    const part = this.#part;
    if (part === undefined) {
      if (this.#queue.failure !== undefined) throw this.#queue.failure;
      this.#apply(this.#writer.finish(), 0);
      this.#queue.flush();
      if (this.#queue.failure !== undefined) throw this.#queue.failure;
      if (this.#fsync !== "none") this.#file.sync();
      this.#closeFile();
      return;
    }
    // every rank wrote its frames, all of one size, before the index goes in
    const wrote = this.#queue.failure === undefined && part.count === this.#fed;
    this.#agree(wrote ? Math.max(0, this.#frameBytes) : -1);
    // rank 0's index and everyone's sync, then the ranks agree again before the close
    let failure: unknown;
    try {
      this.#writeIndex(part);
    } catch (e) {
      failure = e;
    }
    // mutant: mpiio-shared-sync
    if (this.#fsync !== "none") {
      try {
        this.#file.sync();
      } catch (e) {
        failure ??= e;
      }
    }
    this.#failure = failure;
    this.#agree(failure === undefined ? 0 : -1);
    this.#closeFile();
  }

  /** The last call: MPI_File_close; when it fails, the file is removed (rank 0's, when shared). */
  #closeFile(): void {
    this.#open = false;
    try {
      this.#file.close();
    } catch (e) {
      if (this.#file.rank === 0) removeQuietly(this.path);
      throw e;
    }
  }

  /**
   * Every rank of a shared file says how it did (a collective call): the bytes of each of its
   * frames (0 after the index), or -1 when it failed. Unless all say the same, every rank
   * closes the file, rank 0 removes it, and this rank throws: its own failure, or
   * PeerRankFailed when another rank's was the cause.
   */
  #agree(value: number): void {
    const [min, max] = this.#file.range(value);
    if (min >= 0 && min === max) return;
    throw abandonSharedFile({
      path: this.path,
      rank: this.#file.rank,
      value,
      min,
      failure: this.#failure ?? this.#queue.failure,
      fed: this.#fed,
      release: () => {
        this.#open = false;
        this.#closeQuietly();
      },
    }) ?? new UsageError(
      `${this.path}: mpiio writes a shared file of frames of one layout; the ranks' frames ` +
        `have ${min} to ${max} bytes`,
    );
  }

  /** Rank 0 writes the shared file's index from every rank's steps (MPI_Gather). */
  #writeIndex(part: NonNullable<MpiIoSettings["part"]>): void {
    const mine = Float64Array.from(this.#steps);
    const all = this.#file.gather(new Uint8Array(mine.buffer));
    if (this.#file.rank !== 0) return;
    const frames = new Float64Array(part.total * 3);
    for (const [r, bytes] of all.entries()) {
      const steps = new Float64Array(bytes.slice().buffer);
      for (let i = 0; i < steps.length; i++) {
        const g = part.frameOf(i, r);
        frames[g * 3] = RAW_HEADER_BYTES + g * this.#frameBytes;
        frames[g * 3 + 1] = steps[i]!;
        frames[g * 3 + 2] = 0;
      }
    }
    const end = RAW_HEADER_BYTES + part.total * this.#frameBytes;
    const trailer = rawTrailer([this.#layout ?? []], frames, part.total, end);
    this.#file.writeAt(trailer, end, false);
  }

  abort(): void {
    if (!this.#open) return;
    const part = this.#part;
    if (part !== undefined) {
      // the collective calls this rank still owes the others, empty, then the agreement
      this.#queue.draining = true;
      if (this.#collective && this.#frameBytes >= 0) {
        const zeros = new Uint8Array(Math.max(0, ...this.#frameOps));
        for (let k = this.#fed; k < part.count; k++) {
          let at = RAW_HEADER_BYTES + part.frameOf(k) * this.#frameBytes;
          for (const n of this.#frameOps) {
            this.#queue.write(zeros.subarray(0, n), at);
            at += n;
          }
        }
        this.#queue.flush();
      }
      try {
        this.#agree(-1);
      } catch {
        // the caller reports its own failure
      }
      return;
    }
    this.#open = false;
    this.#closeQuietly();
    removeQuietly(this.path);
  }

  #closeQuietly(): void {
    try {
      this.#file.close();
    } catch {
      // the first failure is the one to report
    }
  }
}

/** Reads `length` bytes at `offset` of an MPI-IO file as a decoder's byte source. */
function byteSource(file: MpiIoFile, size: number): ByteSource {
  return {
    path: file.path,
    size,
    read(offset: number, length: number): Uint8Array {
      if (offset + length > size) {
        throw new FormatError(
          "raw",
          file.path,
          offset,
          `${length} bytes asked at byte ${offset}, past the end of the file (${size} bytes)`,
        );
      }
      const out = new Uint8Array(length);
      file.readAt(out, offset, false);
      return out;
    },
  };
}

/** Raw frames read back through MPI-IO: each frame's bytes in one call (or its pieces). */
class MpiioSource implements FrameSource {
  readonly path: string;
  readonly framing = "mpiio";
  readonly frameCount: number;
  readonly storedOrder: ByteOrder | undefined;
  readonly collective: boolean;
  readonly warnings: readonly string[] = [];
  readonly #file: MpiIoFile;
  readonly #index: FrameIndex;
  /** Frame reads are collective calls (on a per-rank file: over this rank alone). */
  readonly #collectiveCalls: boolean;
  /** `--bs`: bytes of each read call of a frame's data (undefined: the frame's in one call). */
  readonly #bs: number | undefined;
  #stored = new Uint8Array(0);
  #native = new Uint8Array(0);
  #bytesRead = 0;

  constructor(path: string, settings: MpiIoSettings, bs?: number) {
    this.path = path;
    this.#bs = bs;
    this.#file = settings.io.open(path, "read", settings.layout, settings.hints);
    try {
      const size = this.#file.size();
      this.#index = raw.openIndex(byteSource(this.#file, size));
    } catch (e) {
      try {
        this.#file.close();
      } catch {
        // the first failure is the one to report
      }
      throw e;
    }
    this.frameCount = this.#index.frameCount;
    this.storedOrder = this.#index.order;
    this.collective = settings.collective && this.#file.ranks > 1;
    this.#collectiveCalls = settings.collective;
  }

  /** Bytes read from the file by frame reads so far. */
  get bytesRead(): number {
    return this.#bytesRead;
  }

  readFrameStored(frame: number): readonly StoredChunk[] {
    const refs = this.#index.chunks(frame);
    const start = refs.length === 0 ? 0 : refs[0]!.offset;
    let end = start;
    for (const r of refs) end = Math.max(end, r.offset + r.bytes);
    const span = end - start;
    if (this.#stored.length < span) this.#stored = new Uint8Array(span);
    if (this.#bs === undefined) {
      this.#file.readAt(this.#stored.subarray(0, span), start, this.#collectiveCalls);
    } else {
      // --bs: the frame's bytes in calls of bs (every rank's frames the same size, so every
      // rank makes as many)
      for (let at = 0; at < span; at += this.#bs) {
        const end = Math.min(span, at + this.#bs);
        this.#file.readAt(this.#stored.subarray(at, end), start + at, this.#collectiveCalls);
      }
    }
    this.#bytesRead += span;
    return refs.map((r) => ({
      name: r.name,
      dtype: r.dtype,
      shape: r.shape,
      order: r.order,
      offset: r.offset,
      data: this.#stored.subarray(r.offset - start, r.offset - start + r.bytes),
    }));
  }

  readFrame(frame: number): readonly ReadChunk[] {
    const stored = this.readFrameStored(frame);
    const swap = stored.some((c) => c.order !== NATIVE_ORDER && DTYPE_SIZE[c.dtype] > 1);
    if (!swap) return stored;
    let total = 0;
    for (const c of stored) total += c.data.length;
    if (this.#native.length < total) this.#native = new Uint8Array(total);
    let at = 0;
    return stored.map((c) => {
      const out = this.#native.subarray(at, at + c.data.length);
      at += c.data.length;
      if (c.order !== NATIVE_ORDER && DTYPE_SIZE[c.dtype] > 1) {
        copySwapped(c.data, out, DTYPE_SIZE[c.dtype]);
      } else out.set(c.data);
      return { name: c.name, dtype: c.dtype, shape: c.shape, data: out };
    });
  }

  describe(): Record<string, unknown> {
    return this.#index.describe?.() ?? {};
  }

  close(): void {
    this.#file.close();
  }
}

/** The `mpiio` backend (registered in lib/backends/registry.ts). */
export const mpiio: Backend = {
  name: "mpiio",
  description: "raw frames through MPI-IO of the launcher's MPI library " +
    "(MPI_File_write_at_all/read_at_all, or the independent calls with --collective off)",
  kind: "peer",
  options: [],
  magic: [],
  orders: ["little", "big"],
  fsyncPolicies: ["end", "each", "none"],
  transfer: false,
  sharedLayout: false,
  mpiIo: { layouts: ["shared", "per-rank"], collective: true, segments: true, bs: true },
  // the guard says why it cannot run without an MPI launcher (lib/backends/mpi_io.ts)
  unavailable: () => null,
  openWriter(path: string, options: SinkOptions): FrameSink {
    return new MpiioSink(path, options, settingsOf(options));
  },
  openReader(path: string, options?: SourceOptions): FrameSource {
    return new MpiioSource(path, settingsOf(options), options?.transfer?.bs);
  },
};
