/**
 * The GSD file-layer writer, as gsd 2.7.0 writes files: chunks gathered in a 16 MiB buffer,
 * names, buffer and index entries written at the end of a frame, index and name list grown by
 * doubling and relocation.
 * @module
 */
import { copySwapped, NATIVE_ORDER } from "../../bytes/byteswap.ts";
import { UsageError } from "../../core/errors.ts";
import type { ByteSource, DType, TypedArray, WriteOp } from "../types.ts";
import { DTYPE_SIZE } from "../types.ts";
import {
  DIRECT_BYTES,
  enc,
  ENTRY_BYTES,
  FRESH_INDEX_SLOTS,
  FRESH_NAMELIST_BYTES,
  GSD_MAGIC,
  GSD_TYPE_CODE,
  GSD_WRITE_BUFFER_BYTES,
  HEADER_BYTES,
  MAX_NAMES,
  NAME_SEGMENT,
  packVersion,
  TWO32,
} from "./format.ts";
import { GsdIndex } from "./index.ts";

/** One index entry waiting to be written: location relative to the buffer until flushed. */
interface PendingEntry {
  readonly frame: number;
  readonly n: number;
  readonly m: number;
  readonly id: number;
  readonly type: number;
  location: number;
  /** Bytes of a buffered chunk (referenced, not copied), until the buffer is flushed. */
  data: Uint8Array | null;
}

/** A chunk about to be written: name, type, N x M and its little-endian bytes. */
export interface OutChunk {
  readonly name: string;
  readonly dtype: DType;
  readonly n: number;
  readonly m: number;
  readonly bytes: Uint8Array;
}

/** Little-endian bytes of a typed array: a view on little-endian machines, else a swapped copy. */
export function leBytes(data: TypedArray): Uint8Array {
  const view = new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
  if (NATIVE_ORDER === "little" || data.BYTES_PER_ELEMENT === 1) return view;
  const out = new Uint8Array(view.length);
  copySwapped(view, out, data.BYTES_PER_ELEMENT);
  return out;
}

/** Rows and columns GSD stores a shape as: [] is 1 x 1, [n] is n x 1, [n, a, b...] is n x (a b ...). */
export function rowsCols(shape: readonly number[]): [number, number] {
  if (shape.length === 0) return [1, 1];
  let m = 1;
  for (let k = 1; k < shape.length; k++) m *= shape[k]!;
  return [shape[0]!, m];
}

/** The file-layer writer of gsd 2.7 (`gsd_write_chunk` / `gsd_end_frame`), as write ops. */
export class GsdFileWriter {
  readonly #application: string;
  readonly #schema: string;
  readonly #schemaVersion: number;
  #fileSize = 0;
  #frame = 0;
  #indexLocation = HEADER_BYTES;
  #indexSlots = FRESH_INDEX_SLOTS;
  /**
   * The index block as in the file, kept in memory as gsd 2.7 keeps it; null when the consumer
   * applies `copy` ops, and the block is copied in the file when it moves (no per-frame memory).
   */
  #index: Uint8Array | null;
  /** The entries of the frame being ended when the index is not in memory (reused). */
  #entryBytes = new Uint8Array(16 * ENTRY_BYTES);
  #used = 0;
  #namelistLocation = HEADER_BYTES + FRESH_INDEX_SLOTS * ENTRY_BYTES;
  #names = new Uint8Array(FRESH_NAMELIST_BYTES);
  #namesUsed = 0;
  readonly #ids = new Map<string, number>();
  /** Id the next new name gets: the count of names in the list (file and pending). */
  #nextId = 0;
  /** Appending: the header as read from the file; rewrites change only its block fields. */
  #base: Uint8Array | null = null;
  #pending: Uint8Array[] = [];
  #pendingBytes = 0;
  /** Bytes in the (modelled) 16 MiB write buffer. */
  #fill = 0;
  #buffered: PendingEntry[] = [];
  #frameEntries: PendingEntry[] = [];

  /** `fileCopies`: the consumer applies `copy` ops, so the index block stays in the file only. */
  constructor(application: string, schema: string, schemaVersion: number, fileCopies = false) {
    this.#application = application;
    this.#schema = schema;
    this.#schemaVersion = schemaVersion;
    this.#index = fileCopies ? null : new Uint8Array(FRESH_INDEX_SLOTS * ENTRY_BYTES);
  }

  /**
   * A writer that continues the file `index` describes, in the state gsd 2.7 has after opening
   * it for appending (`GSD_OPEN_APPEND`, which writes nothing): end of file, next frame =
   * nframes, the name list block in memory as read, the names' ids, and the whole index block
   * in memory as read unless `fileCopies` (the consumer applies `copy` ops).
   */
  static continuing(index: GsdIndex, source: ByteSource, fileCopies = false): GsdFileWriter {
    const h = index.header;
    const w = new GsdFileWriter("", "", 0, fileCopies);
    w.#base = source.read(0, HEADER_BYTES).slice();
    w.#fileSize = source.size;
    w.#frame = index.frameCount;
    w.#indexLocation = h.indexLocation;
    w.#indexSlots = h.indexSlots;
    if (!fileCopies) w.#index = source.read(h.indexLocation, h.indexSlots * ENTRY_BYTES).slice();
    w.#used = index.entryCount;
    w.#namelistLocation = h.namelistLocation;
    const nl = source.read(h.namelistLocation, h.namelistBytes).slice();
    w.#names = nl;
    // Used bytes: up to the NUL of the last name (the block's last byte is 0, checked on open).
    let p = 0;
    while (p < nl.length && nl[p] !== 0) p = nl.indexOf(0, p) + 1;
    w.#namesUsed = p;
    index.names.forEach((name, id) => {
      if (!w.#ids.has(name)) w.#ids.set(name, id);
    });
    w.#nextId = index.names.length;
    return w;
  }

  #header(): Uint8Array {
    if (this.#base !== null) {
      // gsd 2.7 rewrites the header it read, with the moved block's location and size.
      const h = this.#base.slice();
      const v = new DataView(h.buffer);
      setU64(v, 8, this.#indexLocation);
      setU64(v, 16, this.#indexSlots);
      setU64(v, 24, this.#namelistLocation);
      setU64(v, 32, this.#names.length / NAME_SEGMENT);
      return h;
    }
    const h = new Uint8Array(HEADER_BYTES);
    const v = new DataView(h.buffer);
    h.set(GSD_MAGIC, 0);
    setU64(v, 8, this.#indexLocation);
    setU64(v, 16, this.#indexSlots);
    setU64(v, 24, this.#namelistLocation);
    setU64(v, 32, this.#names.length / NAME_SEGMENT);
    v.setUint32(40, this.#schemaVersion, true);
    v.setUint32(44, packVersion(2, 0), true);
    h.set(cString(this.#application, 64), 48);
    h.set(cString(this.#schema, 64), 112);
    return h;
  }

  /** Ops that create the file: header, 128 empty index slots, a 1024-byte empty name list, fsync. */
  create(): WriteOp[] {
    const size = HEADER_BYTES + FRESH_INDEX_SLOTS * ENTRY_BYTES + FRESH_NAMELIST_BYTES;
    const file = new Uint8Array(size);
    file.set(this.#header(), 0);
    this.#fileSize = size;
    return [{ kind: "write", offset: 0, data: file }, { kind: "sync" }];
  }

  /** `gsd_write_chunk`: buffers a chunk under 8 MiB, writes a larger one at the end of the file. */
  writeChunk(c: OutChunk, ops: WriteOp[]): void {
    const type = GSD_TYPE_CODE[c.dtype];
    if (c.dtype === "char") {
      throw new UsageError(
        `gsd: chunk '${c.name}': type char needs GSD file layer 2.1; this writer makes 2.0 files`,
      );
    }
    if (c.m === 0) throw new UsageError(`gsd: chunk '${c.name}' has 0 columns; GSD needs M >= 1`);
    if (c.name.length === 0 || c.name.includes("\0")) {
      throw new UsageError(`gsd: chunk name '${c.name}' must be non-empty and contain no NUL`);
    }
    const size = c.n * c.m * DTYPE_SIZE[c.dtype];
    if (c.bytes.length !== size) {
      throw new RangeError(
        `gsd: chunk '${c.name}': ${c.n} x ${c.m} ${c.dtype} needs ${size} bytes, data has ${c.bytes.length}`,
      );
    }
    let id = this.#ids.get(c.name);
    if (id === undefined) {
      id = this.#nextId;
      if (id >= MAX_NAMES) throw new UsageError(`gsd: more than ${MAX_NAMES} chunk names`);
      this.#nextId++;
      this.#ids.set(c.name, id);
      const b = enc.encode(c.name + "\0");
      this.#pending.push(b);
      this.#pendingBytes += b.length;
    }
    const entry: PendingEntry = {
      frame: this.#frame,
      n: c.n,
      m: c.m,
      id,
      type,
      location: 0,
      data: null,
    };
    if (size < DIRECT_BYTES) {
      // gsd 2.7 copies the chunk into its buffer; we keep a reference and emit it at the flush,
      // at the offset the buffer copy would have put it (the I/O layer coalesces the writes).
      if (GSD_WRITE_BUFFER_BYTES - this.#fill < size) this.#flushBuffer(ops);
      entry.location = this.#fill;
      entry.data = c.bytes;
      this.#fill += size;
      this.#buffered.push(entry);
    } else {
      entry.location = this.#fileSize;
      ops.push({ kind: "write", offset: this.#fileSize, data: c.bytes });
      this.#fileSize += size;
      this.#frameEntries.push(entry);
    }
  }

  /** Writes the buffer's chunks at the end of the file, one op per chunk, back to back. */
  #flushBuffer(ops: WriteOp[]): void {
    if (this.#buffered.length === 0) return;
    const at = this.#fileSize;
    for (const e of this.#buffered) {
      if (e.data!.length > 0) ops.push({ kind: "write", offset: at + e.location, data: e.data! });
      e.data = null;
      e.location += at;
      this.#frameEntries.push(e);
    }
    this.#fileSize += this.#fill;
    this.#fill = 0;
    this.#buffered = [];
  }

  /** `gsd_end_frame`: new names, then the buffered data, then the frame's index entries. */
  endFrame(ops: WriteOp[]): void {
    this.#frame++;
    // E1: names.
    if (this.#pending.length > 0) {
      const total = this.#namesUsed + this.#pendingBytes;
      const grow = total > this.#names.length;
      if (grow) {
        let cap = this.#names.length * 2;
        while (total >= cap) cap *= 2;
        const next = new Uint8Array(cap);
        next.set(this.#names.subarray(0, this.#namesUsed));
        this.#names = next;
      }
      let p = this.#namesUsed;
      for (const b of this.#pending) {
        this.#names.set(b, p);
        p += b.length;
      }
      if (grow) {
        ops.push({ kind: "write", offset: this.#fileSize, data: this.#names.subarray(0) });
        ops.push({ kind: "sync" });
        this.#namelistLocation = this.#fileSize;
        this.#fileSize += this.#names.length;
        ops.push({ kind: "write", offset: 0, data: this.#header() });
      } else {
        // In place: gsd 2.7 rewrites the block from the first new name to its end.
        ops.push({
          kind: "write",
          offset: this.#namelistLocation + this.#namesUsed,
          data: this.#names.subarray(this.#namesUsed),
        });
      }
      ops.push({ kind: "sync" });
      this.#namesUsed = total;
      this.#pending = [];
      this.#pendingBytes = 0;
    }
    // E2: the data buffer.
    this.#flushBuffer(ops);
    // E3: the index entries of this frame.
    const count = this.#frameEntries.length;
    if (count === 0) return;
    const need = this.#used + count;
    if (need > this.#indexSlots) {
      let slots = this.#indexSlots * 2;
      while (slots <= need) slots *= 2;
      // gsd 2.7 copies the whole old block to the end of the file, then zero slots up to the
      // new size. The old in-memory block is not changed again, so it is written as it is;
      // without one, the block is copied in the file.
      const oldBytes = this.#indexSlots * ENTRY_BYTES;
      const old = this.#index;
      if (old !== null) {
        const next = new Uint8Array(slots * ENTRY_BYTES);
        next.set(old);
        ops.push({ kind: "write", offset: this.#fileSize, data: old });
        this.#index = next;
      } else {
        ops.push({
          kind: "copy",
          from: this.#indexLocation,
          offset: this.#fileSize,
          length: oldBytes,
        });
      }
      pushZeros(ops, this.#fileSize + oldBytes, (slots * ENTRY_BYTES) - oldBytes);
      ops.push({ kind: "sync" });
      this.#indexLocation = this.#fileSize;
      this.#indexSlots = slots;
      this.#fileSize += slots * ENTRY_BYTES;
      ops.push({ kind: "write", offset: 0, data: this.#header() });
      ops.push({ kind: "sync" });
    }
    const entries = this.#frameEntries;
    if (count > 1) entries.sort((a, b) => a.frame - b.frame || a.id - b.id);
    let out: Uint8Array;
    if (this.#index !== null) {
      out = this.#index.subarray(this.#used * ENTRY_BYTES, need * ENTRY_BYTES);
    } else {
      if (this.#entryBytes.length < count * ENTRY_BYTES) {
        this.#entryBytes = new Uint8Array(count * 2 * ENTRY_BYTES);
      }
      out = this.#entryBytes.subarray(0, count * ENTRY_BYTES);
    }
    const v = new DataView(out.buffer, out.byteOffset, out.length);
    let at = 0;
    for (const e of entries) {
      setU64(v, at, e.frame);
      setU64(v, at + 8, e.n);
      setU64(v, at + 16, e.location);
      v.setUint32(at + 24, e.m, true);
      v.setUint16(at + 28, e.id, true);
      v.setUint8(at + 30, e.type);
      v.setUint8(at + 31, 0);
      at += ENTRY_BYTES;
    }
    ops.push({ kind: "write", offset: this.#indexLocation + this.#used * ENTRY_BYTES, data: out });
    this.#used = need;
    this.#frameEntries = [];
  }
}

/** Zero bytes the zero-fill ops share (never written to). */
const ZEROS = new Uint8Array(1 << 20);

/** Ops writing `length` zero bytes at `offset`, a shared zero block at a time (no allocation). */
function pushZeros(ops: WriteOp[], offset: number, length: number): void {
  for (let done = 0; done < length; done += ZEROS.length) {
    const n = Math.min(ZEROS.length, length - done);
    ops.push({ kind: "write", offset: offset + done, data: ZEROS.subarray(0, n) });
  }
}

function setU64(v: DataView, at: number, x: number): void {
  v.setUint32(at, x % TWO32, true);
  v.setUint32(at + 4, Math.floor(x / TWO32), true);
}

/** A NUL-terminated string cut to width - 1 bytes and zero-padded to `width`. */
function cString(s: string, width: number): Uint8Array {
  const out = new Uint8Array(width);
  out.set(enc.encode(s).subarray(0, width - 1));
  return out;
}
