/**
 * The engine that turns a pure framing into a {@link Backend}: it applies the encoder's write
 * ops through a batched FFI file handle, fsyncs before a write is called done, and reads each
 * frame's chunks with as few preads as possible into a reused buffer, byte-swapped to native.
 * @module
 */
import { NATIVE_ORDER, swapInPlace } from "../bytes/byteswap.ts";
import type {
  ByteSource,
  ChunkRef,
  Frame,
  FrameIndex,
  FrameWriter,
  Framing,
  StoredVariable,
  WriteOp,
} from "../framings/types.ts";
import { DTYPE_SIZE } from "../framings/types.ts";
import { FormatError, ShortReadError, UsageError } from "../errors.ts";
import { checkOptions } from "../framings/options.ts";
import { FileHandle, WriteBatcher } from "../io/file.ts";
import type {
  Backend,
  FrameSink,
  FrameSource,
  ReadChunk,
  SinkOptions,
  SourceOptions,
} from "./backend.ts";

/** Granularity of the undo log kept while appending, bytes. */
const UNDO_PAGE = 4096;

/** Block size in which `readStored` hands stored bytes to its visitor, bytes. */
const STORED_BLOCK = 1 << 22;

/** Largest gap (bytes) between a frame's chunks that is still read in the same pread. */
const MAX_GAP = 1 << 20;

class NativeSink implements FrameSink {
  readonly path: string;
  readonly #file: FileHandle;
  readonly #batch: WriteBatcher;
  readonly #writer: FrameWriter;
  readonly #fsync: boolean;
  /**
   * Appending: the file's size before, and the original bytes of every 4 KiB page that an
   * in-place write touched, saved once per page (for abort).
   */
  readonly #append: { size: number; undo: [number, Uint8Array][]; saved: Set<number> } | undefined;
  #open = true;

  constructor(framing: Framing, path: string, options: SinkOptions) {
    this.path = path;
    this.#fsync = options.fsync ?? true;
    const appending = options.create === "append";
    this.#file = FileHandle.open(
      path,
      appending ? "update" : options.create === "new" ? "new" : "truncate",
    );
    try {
      if (appending) {
        if (!framing.appendWriter) {
          throw new UsageError(`framing '${framing.name}' cannot append to an existing file`);
        }
        this.#append = { size: this.#file.size, undo: [], saved: new Set() };
        this.#writer = framing.appendWriter(this.#file, {
          ...options.backendOptions,
          endian: options.endian,
        });
      } else {
        this.#writer = framing.createWriter({
          ...options.backendOptions,
          endian: options.endian ?? "native",
        });
      }
    } catch (e) {
      this.#open = false;
      this.#file.close();
      if (!appending) Deno.removeSync(path);
      throw e;
    }
    this.#batch = new WriteBatcher(this.#file);
    try {
      this.#apply(this.#writer.begin());
    } catch (e) {
      this.abort();
      throw e;
    }
  }

  #apply(ops: readonly WriteOp[]): void {
    const undo = this.#append;
    for (const op of ops) {
      if (op.kind === "write") {
        if (undo && op.offset < undo.size) this.#saveOriginal(undo, op.offset, op.data.length);
        this.#batch.write(op.data, op.offset);
      } else {
        this.#batch.flush();
        this.#file.sync();
      }
    }
  }

  /**
   * Saves the original bytes of the pages of [offset, offset+length) that lie in the existing
   * file and were not saved before. A page not yet saved was never written by this append, so
   * the file still holds its original bytes: no flush of queued writes is needed.
   */
  #saveOriginal(
    undo: { size: number; undo: [number, Uint8Array][]; saved: Set<number> },
    offset: number,
    length: number,
  ): void {
    const end = Math.min(offset + length, undo.size);
    for (let page = Math.floor(offset / UNDO_PAGE); page * UNDO_PAGE < end; page++) {
      if (undo.saved.has(page)) continue;
      undo.saved.add(page);
      const at = page * UNDO_PAGE;
      const old = new Uint8Array(Math.min(UNDO_PAGE, undo.size - at));
      this.#file.readInto(old, at);
      undo.undo.push([at, old]);
    }
  }

  writeFrame(frame: Frame): void {
    this.#apply(this.#writer.writeFrame(frame));
  }

  close(): void {
    if (!this.#open) return;
    this.#apply(this.#writer.finish());
    this.#batch.flush();
    if (this.#fsync) this.#file.sync();
    this.#open = false;
    this.#file.close();
  }

  abort(): void {
    if (!this.#open) return;
    this.#open = false;
    const undo = this.#append;
    if (undo) {
      // Put the user's file back as it was: cut what was appended, restore replaced bytes.
      try {
        this.#file.truncate(undo.size);
        for (let i = undo.undo.length - 1; i >= 0; i--) {
          const [offset, bytes] = undo.undo[i]!;
          this.#file.writeAt(bytes, offset);
        }
      } finally {
        this.#file.close();
      }
      return;
    }
    try {
      this.#file.close();
    } finally {
      try {
        Deno.removeSync(this.path);
      } catch {
        // already gone
      }
    }
  }
}

class NativeSource implements FrameSource {
  readonly path: string;
  readonly framing: string;
  readonly frameCount: number;
  readonly warnings: readonly string[];
  bytesRead = 0;
  readonly departures: readonly string[];
  /** Bytes past the end of the file read as zeros (netCDF data never written). */
  readonly #pastEndReadsZero: boolean;
  readonly #file: FileHandle;
  readonly #index: FrameIndex;
  #buf = new Uint8Array(1 << 16);

  constructor(framing: Framing, path: string, options: SourceOptions) {
    this.path = path;
    this.framing = framing.name;
    this.#file = FileHandle.open(path, "read");
    try {
      this.#index = framing.openIndex(this.#countingSource(), {
        ...options.backendOptions,
        endian: options.endian,
        layout: options.layout,
      });
    } catch (e) {
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
  }

  /** The file as a ByteSource for the decoder, counting what it reads into `bytesRead`. */
  #countingSource(): ByteSource {
    const file = this.#file;
    const count = (n: number) => this.bytesRead += n;
    return {
      path: file.path,
      size: file.size,
      read(offset: number, length: number): Uint8Array {
        count(length);
        return file.read(offset, length);
      },
    };
  }

  #buffer(bytes: number): Uint8Array {
    if (this.#buf.length < bytes) {
      let cap = this.#buf.length;
      while (cap < bytes) cap *= 2;
      this.#buf = new Uint8Array(cap);
    }
    return this.#buf;
  }

  #readExactly(into: Uint8Array, offset: number): void {
    const n = this.#file.readInto(into, offset);
    this.bytesRead += n;
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
    const refs = this.#index.chunks(frame);
    let lo = Infinity, hi = 0, total = 0, pieces = false;
    for (const r of refs) {
      if (r.pieces) pieces = true;
      if (r.offset < lo) lo = r.offset;
      if (r.offset + r.bytes > hi) hi = r.offset + r.bytes;
      total += r.bytes;
    }
    const out: ReadChunk[] = [];
    if (refs.length === 0) return out;
    if (!pieces && hi - lo <= total + MAX_GAP) {
      const buf = this.#buffer(hi - lo);
      this.#readExactly(buf.subarray(0, hi - lo), lo);
      for (const r of refs) {
        out.push(this.#chunk(r, buf.subarray(r.offset - lo, r.offset - lo + r.bytes)));
      }
      return out;
    }
    const buf = this.#buffer(total);
    let at = 0;
    for (const r of refs) {
      const view = buf.subarray(at, at + r.bytes);
      if (r.pieces) {
        let p = 0;
        for (const [off, len] of r.pieces) {
          this.#readExactly(view.subarray(p, p + len), off);
          p += len;
        }
      } else {
        this.#readExactly(view, r.offset);
      }
      out.push(this.#chunk(r, view));
      at += r.bytes;
    }
    return out;
  }

  #chunk(r: ChunkRef, data: Uint8Array): ReadChunk {
    const width = DTYPE_SIZE[r.dtype];
    if (r.order !== NATIVE_ORDER && width > 1) swapInPlace(data, width);
    return { name: r.name, dtype: r.dtype, shape: r.shape, data };
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

  variables(): readonly StoredVariable[] {
    return this.#index.variables?.() ?? [];
  }

  close(): void {
    this.#file.close();
  }
}

/** A {@link Backend} that stores frames with `framing`, through the FFI file layer. */
export function nativeBackend(framing: Framing): Backend {
  return {
    name: framing.name,
    description: framing.description,
    kind: "native",
    orders: framing.orders,
    options: framing.options,
    magic: framing.magic,
    unavailable: () => null,
    detect: framing.detect?.bind(framing),
    openWriter(path, options) {
      checkOptions(framing, options.backendOptions);
      return new NativeSink(framing, path, options);
    },
    openReader(path, options = {}) {
      checkOptions(framing, options.backendOptions);
      return new NativeSource(framing, path, options);
    },
  };
}
