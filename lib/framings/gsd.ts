/**
 * The GSD framing (General Simulation Data, glotzerlab/gsd, the HOOMD-blue trajectory format):
 * file layer 2.0 written exactly as gsd 2.7.0 writes it (byte-identical files), and file layers
 * 0.3, 1.x, 2.0 and 2.1 read with the validation of gsd 2.7's `gsd_open`.
 *
 * Layout (little-endian, see shared/specs/gsd.md): a 256-byte header; an index block of 32-byte
 * entries (frame, N, location, M, id, type, flags) sorted by (frame, id); a name list block of
 * NUL-terminated names (ids in order of first use); unaligned data chunks. The index and the name
 * list grow by doubling and relocating to the end of the file.
 *
 * The writer follows gsd 2.7: chunks under 8 MiB are gathered in a 16 MiB buffer that is written
 * at the end of the frame (or earlier when full), larger chunks are written at once; new names,
 * then the buffer, then the frame's index entries are written at `end_frame`; `sync` ops mark the
 * fsyncs of gsd 2.7 (file creation, new names, index relocation). The buffer is modelled by
 * offsets: its chunks are emitted as back-to-back write ops that reference the caller's arrays
 * (no copy; the I/O layer coalesces them into one write). On top of it the `hoomd` schema decides
 * which chunks a frame stores, as `gsd.hoomd` 2.7 `append` does (skipping data equal to frame 0's
 * or to the schema default); option `hoomd: false` writes every chunk as given. Appending
 * (`appendGsdWriter`) continues an existing 2.x file from the state gsd 2.7 has after opening it
 * for appending, with frame 0 read back as `append`'s reference.
 * @module
 */
import { FormatError, UsageError } from "../errors.ts";
import { copySwapped, NATIVE_ORDER } from "../bytes/byteswap.ts";
import { checkAppendOrder } from "./raw.ts";
import {
  type ByteSource,
  type Chunk,
  type ChunkRef,
  type DType,
  DTYPE_SIZE,
  DTYPES,
  type Frame,
  type FrameIndex,
  type FrameWriter,
  type Framing,
  type ReaderOptions,
  type TypedArray,
  typedArray,
  type WriteOp,
  type WriterOptions,
} from "./types.ts";
import denoJson from "../../deno.json" with { type: "json" };

/** The 8 bytes a GSD file starts with (u64 0x65DF65DF65DF65DF, little-endian). */
export const GSD_MAGIC: Uint8Array = new Uint8Array([
  0xdf,
  0x65,
  0xdf,
  0x65,
  0xdf,
  0x65,
  0xdf,
  0x65,
]);

/** Size of gsd 2.7's write buffer, bytes; chunks of half of it or more bypass it. */
export const GSD_WRITE_BUFFER_BYTES = 16 * 1024 * 1024;

/** Application string our writer stores unless told otherwise. */
export const GSD_DEFAULT_APPLICATION = `sciobench ${denoJson.version}`;

const FORMAT = "gsd";
const HEADER_BYTES = 256;
const ENTRY_BYTES = 32;
const NAME_SEGMENT = 64;
const FRESH_INDEX_SLOTS = 128;
const FRESH_NAMELIST_BYTES = 1024;
const DIRECT_BYTES = GSD_WRITE_BUFFER_BYTES / 2;
const MAX_NAMES = 65535;
const TWO32 = 4294967296;
/** Index blocks up to this size are read whole on open; larger ones are probed. */
export const GSD_WHOLE_INDEX_BYTES = 64 * 1024 * 1024;
/** Bytes read first on open: a fresh file's header, first index block and name list. */
const HEAD_BYTES = HEADER_BYTES + FRESH_INDEX_SLOTS * ENTRY_BYTES + FRESH_NAMELIST_BYTES;

/** Packs a version as GSD stores it: (major << 16) | minor. */
export function packVersion(major: number, minor: number): number {
  return ((major << 16) | minor) >>> 0;
}

function versionString(v: number): string {
  return `${v >>> 16}.${v & 0xffff}`;
}

/** GSD type code of each element type (char, 11, needs file layer 2.1). */
export const GSD_TYPE_CODE: Readonly<Record<DType, number>> = {
  uint8: 1,
  uint16: 2,
  uint32: 3,
  uint64: 4,
  int8: 5,
  int16: 6,
  int32: 7,
  int64: 8,
  float32: 9,
  float64: 10,
  char: 11,
};

/** Element size in bytes by GSD type code (0 for codes that are not types). */
const TYPE_BYTES = new Float64Array([0, 1, 2, 4, 8, 1, 2, 4, 8, 4, 8, 1]);

/** DType of each GSD type code; code 0 is not a type. */
const CODE_DTYPE: readonly (DType | undefined)[] = [undefined, ...DTYPES];

const enc = new TextEncoder();
const dec = new TextDecoder("utf-8");

// ---------------------------------------------------------------------------------------------
// Writer
// ---------------------------------------------------------------------------------------------

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
interface OutChunk {
  readonly name: string;
  readonly dtype: DType;
  readonly n: number;
  readonly m: number;
  readonly bytes: Uint8Array;
}

/** Little-endian bytes of a typed array: a view on little-endian machines, else a swapped copy. */
function leBytes(data: TypedArray): Uint8Array {
  const view = new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
  if (NATIVE_ORDER === "little" || data.BYTES_PER_ELEMENT === 1) return view;
  const out = new Uint8Array(view.length);
  copySwapped(view, out, data.BYTES_PER_ELEMENT);
  return out;
}

/** Rows and columns GSD stores a shape as: [] is 1 x 1, [n] is n x 1, [n, a, b...] is n x (a b ...). */
function rowsCols(shape: readonly number[]): [number, number] {
  if (shape.length === 0) return [1, 1];
  let m = 1;
  for (let k = 1; k < shape.length; k++) m *= shape[k]!;
  return [shape[0]!, m];
}

/** The file-layer writer of gsd 2.7 (`gsd_write_chunk` / `gsd_end_frame`), as write ops. */
class GsdFileWriter {
  readonly #application: string;
  readonly #schema: string;
  readonly #schemaVersion: number;
  #fileSize = 0;
  #frame = 0;
  #indexLocation = HEADER_BYTES;
  #indexSlots = FRESH_INDEX_SLOTS;
  #index = new Uint8Array(FRESH_INDEX_SLOTS * ENTRY_BYTES);
  #indexView = new DataView(this.#index.buffer);
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

  constructor(application: string, schema: string, schemaVersion: number) {
    this.#application = application;
    this.#schema = schema;
    this.#schemaVersion = schemaVersion;
  }

  /**
   * A writer that continues the file `index` describes, in the state gsd 2.7 has after opening
   * it for appending (`GSD_OPEN_APPEND`, which writes nothing): end of file, next frame =
   * nframes, the whole index block and name list block in memory as read, the names' ids.
   */
  static continuing(index: GsdIndex, source: ByteSource): GsdFileWriter {
    const h = index.header;
    const w = new GsdFileWriter("", "", 0);
    w.#base = source.read(0, HEADER_BYTES).slice();
    w.#fileSize = source.size;
    w.#frame = index.frameCount;
    w.#indexLocation = h.indexLocation;
    w.#indexSlots = h.indexSlots;
    w.#index = source.read(h.indexLocation, h.indexSlots * ENTRY_BYTES).slice();
    w.#indexView = new DataView(w.#index.buffer);
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
      // new size. The old in-memory block is not changed again, so it is written as it is.
      const old = this.#index;
      const next = new Uint8Array(slots * ENTRY_BYTES);
      next.set(old);
      ops.push({ kind: "write", offset: this.#fileSize, data: old });
      ops.push({
        kind: "write",
        offset: this.#fileSize + old.length,
        data: new Uint8Array(next.length - old.length),
      });
      ops.push({ kind: "sync" });
      this.#index = next;
      this.#indexView = new DataView(next.buffer);
      this.#indexLocation = this.#fileSize;
      this.#indexSlots = slots;
      this.#fileSize += slots * ENTRY_BYTES;
      ops.push({ kind: "write", offset: 0, data: this.#header() });
      ops.push({ kind: "sync" });
    }
    const entries = this.#frameEntries;
    if (count > 1) entries.sort((a, b) => a.frame - b.frame || a.id - b.id);
    const v = this.#indexView;
    let at = this.#used * ENTRY_BYTES;
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
    ops.push({
      kind: "write",
      offset: this.#indexLocation + this.#used * ENTRY_BYTES,
      data: this.#index.subarray(this.#used * ENTRY_BYTES, at),
    });
    this.#used = need;
    this.#frameEntries = [];
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

// ---------------------------------------------------------------------------------------------
// The hoomd schema (gsd.hoomd 2.7 HOOMDTrajectory.append)
// ---------------------------------------------------------------------------------------------

/** A field of the hoomd schema that `append` compares with frame 0 and with its default. */
interface HoomdField {
  /** Chunk name. */
  readonly name: string;
  /** Default value, broadcast over rows (one row); null for fields written as given. */
  readonly fallback: readonly number[] | null;
  /** True for per-particle fields (default repeated N times when read back). */
  readonly perParticle: boolean;
}

/** The configuration and particles fields in the order `append` writes them. */
const HOOMD_FIELDS: readonly HoomdField[] = [
  { name: "configuration/step", fallback: [0], perParticle: false },
  { name: "configuration/dimensions", fallback: [3], perParticle: false },
  { name: "configuration/box", fallback: [1, 1, 1, 0, 0, 0], perParticle: false },
  { name: "particles/N", fallback: [0], perParticle: false },
  // Default ['A']: one NUL-terminated name, stored as int8 [[65, 0]].
  { name: "particles/types", fallback: [65, 0], perParticle: false },
  { name: "particles/typeid", fallback: [0], perParticle: true },
  { name: "particles/mass", fallback: [1], perParticle: true },
  { name: "particles/charge", fallback: [0], perParticle: true },
  { name: "particles/diameter", fallback: [1], perParticle: true },
  { name: "particles/body", fallback: [-1], perParticle: true },
  { name: "particles/moment_inertia", fallback: [0, 0, 0], perParticle: true },
  { name: "particles/position", fallback: [0, 0, 0], perParticle: true },
  { name: "particles/orientation", fallback: [1, 0, 0, 0], perParticle: true },
  { name: "particles/velocity", fallback: [0, 0, 0], perParticle: true },
  { name: "particles/angmom", fallback: [0, 0, 0, 0], perParticle: true },
  { name: "particles/image", fallback: [0, 0, 0], perParticle: true },
  // Default []: an empty list, stored as no rows.
  { name: "particles/type_shapes", fallback: [], perParticle: false },
];
const HOOMD_BY_NAME = new Map(HOOMD_FIELDS.map((f, k) => [f.name, k]));

/**
 * numpy.array_equiv(data, fallback): every element equals the default, broadcast as numpy does
 * (a 1-value default against anything, a row against the rows of a per-particle N x M chunk,
 * else element by element); vacuously true for N = 0.
 */
function equivDefault(
  data: TypedArray,
  m: number,
  fallback: readonly number[],
  perParticle: boolean,
): boolean {
  const w = fallback.length;
  const n = data.length;
  if (w !== 1 && (perParticle ? m !== w : n !== w)) return false;
  if (data instanceof BigInt64Array || data instanceof BigUint64Array) {
    for (let i = 0; i < n; i++) if (Number(data[i]!) !== fallback[i % w]) return false;
    return true;
  }
  if (w === 1) {
    const x = fallback[0]!;
    for (let i = 0; i < n; i++) if (data[i] !== x) return false;
    return true;
  }
  for (let i = 0; i < n; i++) if (data[i] !== fallback[i % w]) return false;
  return true;
}

/** numpy.array_equal on same-shaped arrays: element values equal (NaN never equal, -0 == 0). */
function equalValues(a: TypedArray, b: TypedArray): boolean {
  const n = a.length;
  if (b.length !== n) return false;
  const aBig = a instanceof BigInt64Array || a instanceof BigUint64Array;
  const bBig = b instanceof BigInt64Array || b instanceof BigUint64Array;
  if (aBig !== bBig) {
    for (let i = 0; i < n; i++) if (Number(a[i]!) !== Number(b[i]!)) return false;
    return true;
  }
  for (let i = 0; i < n; i++) if (a[i] !== b[i]) return false;
  return true;
}

/** What `_read_frame(0)` gives for a field: the stored chunk, or its default. */
interface Reference {
  /** Data stored in frame 0, or null when frame 0 lacks the chunk (the default applies). */
  readonly data: TypedArray | null;
  readonly n: number;
  readonly m: number;
}

/** Where a continued file stands: frames it holds, and its frame 0 as `append` reads it back. */
interface HoomdResume {
  readonly frames: number;
  /** Frame 0's value of each field with a default (data null where frame 0 lacks it); null for 0 frames. */
  readonly reference: Map<string, Reference> | null;
  /** `particles/N` of frame 0 (0 when absent). */
  readonly n0: number;
}

/** A native-order typed array of `dtype` holding a copy of little-endian `bytes`. */
function fromLittleEndian(dtype: DType, bytes: Uint8Array): TypedArray {
  const width = DTYPE_SIZE[dtype];
  const copy = new Uint8Array(bytes.length);
  if (NATIVE_ORDER === "little" || width === 1) copy.set(bytes);
  else copySwapped(bytes, copy, width);
  return typedArray(dtype, copy.length / width, copy.buffer);
}

/**
 * What gsd.hoomd 2.7 `append` compares new frames with when the file has frames: frame 0 read
 * back (`_read_frame(0)`), here the stored chunks of the fields that have a default.
 */
function readResume(index: GsdIndex, source: ByteSource): HoomdResume {
  if (index.frameCount === 0) return { frames: 0, reference: null, n0: 0 };
  const reference = new Map<string, Reference>();
  for (const f of HOOMD_FIELDS) {
    if (f.fallback === null) continue;
    const r = index.find(0, f.name);
    if (r === undefined) {
      reference.set(f.name, { data: null, n: 0, m: 0 });
      continue;
    }
    const data = fromLittleEndian(
      r.dtype,
      r.bytes === 0 ? new Uint8Array(0) : source.read(r.offset, r.bytes),
    );
    reference.set(f.name, { data, n: r.shape[0]!, m: r.shape[1]! });
  }
  const n = reference.get("particles/N")?.data;
  return {
    frames: index.frameCount,
    reference,
    n0: n && n.length > 0 ? Number(n[0]!) : 0,
  };
}

/** Chooses the chunks of each frame as gsd.hoomd 2.7 `append` does, then writes them. */
class HoomdWriter implements FrameWriter {
  readonly #file: GsdFileWriter;
  readonly #hoomd: boolean;
  #frames = 0;
  #reference: Map<string, Reference> | null = null;
  #n0 = 0;
  readonly #appending: boolean;

  /** `resume` continues a file: its frame count and frame 0 as `append`'s reference. */
  constructor(file: GsdFileWriter, hoomd: boolean, resume?: HoomdResume) {
    this.#file = file;
    this.#hoomd = hoomd;
    this.#appending = resume !== undefined;
    if (resume) {
      this.#frames = resume.frames;
      this.#reference = resume.reference;
      this.#n0 = resume.n0;
    }
  }

  begin(): WriteOp[] {
    // Opening an existing file for appending writes nothing (strace of gsd 2.7).
    return this.#appending ? [] : this.#file.create();
  }

  writeFrame(frame: Frame): WriteOp[] {
    const ops: WriteOp[] = [];
    const out = this.#hoomd ? this.#select(frame) : frame.chunks.map(verbatim);
    for (const c of out) this.#file.writeChunk(c, ops);
    this.#file.endFrame(ops);
    this.#frames++;
    return ops;
  }

  finish(): WriteOp[] {
    return [];
  }

  /** The chunks `append` writes for this frame, in its order; other chunks follow as given. */
  #select(frame: Frame): OutChunk[] {
    const known: (Chunk | undefined)[] = new Array(HOOMD_FIELDS.length);
    const others: Chunk[] = [];
    let rows = -1;
    for (const c of frame.chunks) {
      const k = HOOMD_BY_NAME.get(c.name);
      if (k === undefined) {
        others.push(c);
        continue;
      }
      known[k] = c;
      if (HOOMD_FIELDS[k]!.perParticle && rows < 0) rows = rowsCols(c.shape)[0];
    }
    const stepIndex = 0, nIndex = 3;
    known[stepIndex] ??= {
      name: "configuration/step",
      dtype: "uint64",
      shape: [1],
      data: new BigUint64Array([BigInt(frame.step)]),
    };
    known[nIndex] ??= {
      name: "particles/N",
      dtype: "uint32",
      shape: [1],
      data: new Uint32Array([rows < 0 ? 0 : rows]),
    };
    const first = this.#frames === 0;
    const ref = this.#reference;
    const out: OutChunk[] = [];
    const kept = first ? new Map<string, Reference>() : null;
    for (let k = 0; k < HOOMD_FIELDS.length; k++) {
      const c = known[k];
      if (c === undefined) continue;
      const f = HOOMD_FIELDS[k]!;
      const [n, m] = rowsCols(c.shape);
      if (f.fallback !== null) {
        const r = ref?.get(f.name);
        if (r !== undefined) {
          if (r.data !== null) {
            if (r.n === n && r.m === m && equalValues(r.data, c.data)) continue;
          } else {
            // Frame 0 lacks the chunk: it reads back as the default, repeated N0 times.
            const refRows = f.perParticle
              ? this.#n0
              : (f.fallback.length === 1 ? 1 : f.fallback.length);
            const refCols = f.perParticle || f.fallback.length === 1 ? f.fallback.length : 1;
            if (
              n === refRows && m === refCols && equivDefault(c.data, m, f.fallback, f.perParticle)
            ) continue;
          }
        }
        const inFrame0 = r !== undefined && r.data !== null;
        if (!inFrame0 && equivDefault(c.data, m, f.fallback, f.perParticle)) continue;
      }
      out.push({ name: c.name, dtype: c.dtype, n, m, bytes: leBytes(c.data) });
      kept?.set(f.name, { data: c.data.slice(), n, m });
    }
    for (const c of others) out.push(verbatim(c));
    if (kept) {
      const refs = new Map<string, Reference>();
      for (const f of HOOMD_FIELDS) {
        if (f.fallback !== null) refs.set(f.name, kept.get(f.name) ?? { data: null, n: 0, m: 0 });
      }
      this.#reference = refs;
      const nChunk = kept.get("particles/N");
      this.#n0 = nChunk?.data ? Number(nChunk.data[0]!) : 0;
    }
    return out;
  }
}

function verbatim(c: Chunk): OutChunk {
  const [n, m] = rowsCols(c.shape);
  return { name: c.name, dtype: c.dtype, n, m, bytes: leBytes(c.data) };
}

function parseSchemaVersion(value: unknown): number {
  let v = value;
  if (v === undefined) return packVersion(1, 4);
  let parts: unknown[] | undefined;
  // `--option schemaVersion=1.4` arrives as the number 1.4 (so 1.10 reads as 1.1 from the CLI).
  if (typeof v === "number") v = String(v);
  if (typeof v === "string") parts = v.split(".").map(Number);
  else if (Array.isArray(v)) parts = v;
  const [a, b] = parts ?? [];
  if (
    parts?.length !== 2 || typeof a !== "number" || typeof b !== "number" || !Number.isInteger(a) ||
    !Number.isInteger(b) || a < 0 || a > 0xffff || b < 0 || b > 0xffff
  ) {
    throw new UsageError(
      `gsd: schemaVersion must be "major.minor" or [major, minor], got ${JSON.stringify(value)}`,
    );
  }
  return packVersion(a, b);
}

function stringOption(options: WriterOptions, key: string, fallback: string): string {
  const v = options[key];
  if (v === undefined) return fallback;
  if (typeof v !== "string") throw new UsageError(`gsd: option ${key} must be a string`);
  return v;
}

// ---------------------------------------------------------------------------------------------
// Reader
// ---------------------------------------------------------------------------------------------

/** Header facts of a GSD file. */
export interface GsdHeader {
  /** File layer version, packed (major << 16 | minor). */
  readonly gsdVersion: number;
  /** Schema version, packed. */
  readonly schemaVersion: number;
  /** Application that created the file. */
  readonly application: string;
  /** Schema name (`hoomd` for HOOMD trajectories). */
  readonly schema: string;
  /** Byte offset of the index block. */
  readonly indexLocation: number;
  /** Slots (32-byte entries) of the index block. */
  readonly indexSlots: number;
  /** Byte offset of the name list block. */
  readonly namelistLocation: number;
  /** Size of the name list block, bytes. */
  readonly namelistBytes: number;
}

/** The decoded layout of a GSD file: chunk lookup by frame, or by (frame, name). */
export class GsdIndex implements FrameIndex {
  /** Always `gsd`. */
  readonly framing = FORMAT;
  /** Frames: frame of the last index entry + 1. */
  readonly frameCount: number;
  /** Header facts. */
  readonly header: GsdHeader;
  /** Chunk names by id. */
  readonly names: readonly string[];
  /** Used index entries. */
  readonly entryCount: number;
  readonly #source: ByteSource;
  readonly #ids: Map<string, number>;
  /** The used entries, 8 little-endian u32 words each. */
  readonly #w: Uint32Array;
  readonly #sortedById: boolean;
  readonly #shapes = new Map<number, readonly number[]>();
  #wholeIndex: Uint8Array | null = null;
  readonly #wholeIndexBytes: number;

  /** Decodes `source`; `wholeIndexBytes` (default 64 MiB) limits the index read whole at once. */
  constructor(source: ByteSource, wholeIndexBytes = GSD_WHOLE_INDEX_BYTES) {
    this.#wholeIndexBytes = wholeIndexBytes;
    this.#source = source;
    const path = source.path;
    const bad = (offset: number, problem: string): never => {
      throw new FormatError(FORMAT, path, offset, problem);
    };
    const size = source.size;
    if (size < HEADER_BYTES) {
      bad(0, `not a GSD file: the header needs ${HEADER_BYTES} bytes, the file has ${size}`);
    }
    const head = source.read(0, Math.min(size, HEAD_BYTES));
    const h = head.subarray(0, HEADER_BYTES);
    for (let i = 0; i < 8; i++) {
      if (h[i] !== GSD_MAGIC[i]) {
        bad(0, `not a GSD file: magic ${hex(h.subarray(0, 8))}, expected ${hex(GSD_MAGIC)}`);
      }
    }
    const hv = new DataView(h.buffer, h.byteOffset, HEADER_BYTES);
    const u64 = (at: number, what: string): number => {
      const x = hv.getUint32(at, true) + hv.getUint32(at + 4, true) * TWO32;
      if (x > Number.MAX_SAFE_INTEGER) {
        bad(at, `${what} ${hv.getBigUint64(at, true)} is impossibly large`);
      }
      return x;
    };
    const gsdVersion = hv.getUint32(44, true);
    if (
      !((gsdVersion >= packVersion(1, 0) || gsdVersion === packVersion(0, 3)) &&
        gsdVersion < packVersion(3, 0))
    ) {
      bad(
        44,
        `unsupported GSD file version ${
          versionString(gsdVersion)
        }: this reader reads 0.3, 1.x and 2.x`,
      );
    }
    const v2 = gsdVersion >= packVersion(2, 0);
    const indexLocation = u64(8, "index location");
    const indexSlots = u64(16, "index size");
    const namelistLocation = u64(24, "name list location");
    const namelistSegments = u64(32, "name list size");
    const namelistBytes = namelistSegments * NAME_SEGMENT;
    const header: GsdHeader = {
      gsdVersion,
      schemaVersion: hv.getUint32(40, true),
      application: cStringAt(h, 48, 64),
      schema: cStringAt(h, 112, 64),
      indexLocation,
      indexSlots,
      namelistLocation,
      namelistBytes,
    };
    this.header = header;

    // Name list.
    if (namelistSegments === 0) bad(32, "the name list block has size 0");
    if (namelistLocation + namelistBytes > size) {
      bad(
        24,
        `the name list block [${namelistLocation}, ${
          namelistLocation + namelistBytes
        }) ends past the end of the file (${size} bytes)`,
      );
    }
    const nl = this.#block(namelistLocation, namelistBytes, head);
    if (nl[namelistBytes - 1] !== 0) {
      bad(
        namelistLocation + namelistBytes - 1,
        `the name list block must end with a 0 byte, found 0x${
          nl[namelistBytes - 1]!.toString(16).padStart(2, "0")
        }`,
      );
    }
    const names: string[] = [];
    if (v2) {
      let p = 0;
      while (p < namelistBytes && nl[p] !== 0) {
        const end = nl.indexOf(0, p);
        names.push(dec.decode(nl.subarray(p, end)));
        p = end + 1;
      }
    } else {
      for (let p = 0; p < namelistBytes && nl[p] !== 0; p += NAME_SEGMENT) {
        names.push(cStringAt(nl, p, NAME_SEGMENT));
      }
    }
    this.names = names;
    this.#ids = new Map(names.map((n, i) => [n, i]));

    // Index block.
    if (indexSlots === 0) bad(16, "the index block has 0 slots");
    if (indexLocation + indexSlots * ENTRY_BYTES > size) {
      bad(
        8,
        `the index block [${indexLocation}, ${
          indexLocation + indexSlots * ENTRY_BYTES
        }) ends past the end of the file (${size} bytes)`,
      );
    }
    const used = this.#countEntries(indexLocation, indexSlots, head);
    const w = new Uint32Array(used * 8);
    if (used > 0) {
      new Uint8Array(w.buffer).set(
        this.#wholeIndex?.subarray(0, used * ENTRY_BYTES) ??
          this.#block(indexLocation, used * ENTRY_BYTES, head),
      );
      this.#wholeIndex = null;
      if (NATIVE_ORDER === "big") {
        const b = new Uint8Array(w.buffer);
        copySwapped(b, b, 4);
      }
    }
    this.#w = w;
    this.entryCount = used;
    this.#sortedById = v2;

    const badEntry = (i: number, prevFrame: number, prevId: number): never => {
      const q = i * 8, at = indexLocation + i * ENTRY_BYTES;
      const frame = w[q]! + w[q + 1]! * TWO32;
      const n = w[q + 2]! + w[q + 3]! * TWO32;
      const location = w[q + 4]! + (w[q + 5]! | 0) * TWO32;
      const m = w[q + 6]!;
      const tail = w[q + 7]!;
      const id = tail & 0xffff;
      const type = (tail >>> 16) & 0xff;
      const flags = tail >>> 24;
      const maxType = gsdVersion >= packVersion(2, 1) ? 11 : 10;
      const what = `index entry ${i} (frame ${frame}, chunk id ${id})`;
      if (type < 1 || type > maxType) {
        bad(
          at + 30,
          `${what}: unknown type code ${type} (known: 1..${maxType}${
            maxType === 10 ? "; 11 needs file layer 2.1" : ""
          })`,
        );
      }
      const bytes = n * m * TYPE_BYTES[type]!;
      if (location < 0 || location + bytes > size) {
        bad(
          at + 16,
          `${what}: data [${location}, ${location + bytes}) of ${n} x ${m} ${
            CODE_DTYPE[type]
          } lies outside the file (${size} bytes)`,
        );
      }
      if (frame >= indexSlots) {
        bad(at, `${what}: frame ${frame} is not below the index size ${indexSlots}`);
      }
      if (id >= names.length) {
        bad(at + 28, `${what}: chunk id ${id} but the name list holds ${names.length} names`);
      }
      if (flags !== 0) bad(at + 31, `${what}: flags 0x${flags.toString(16)}, expected 0`);
      return bad(
        at,
        `${what}: index entries are not sorted by ${v2 ? "(frame, id)" : "frame"}; entry ${
          i - 1
        } has frame ${prevFrame}, id ${prevId}`,
      );
    };

    // Validate every used entry (gsd 2.7 checks the ones its binary search probes). The fast
    // test runs per entry; the messages are only built for a bad one.
    const maxType = gsdVersion >= packVersion(2, 1) ? 11 : 10;
    const nameCount = names.length;
    let prevFrame = 0, prevId = 0;
    for (let i = 0, q = 0; i < used; i++, q += 8) {
      const frame = w[q]! + w[q + 1]! * TWO32;
      const n = w[q + 2]! + w[q + 3]! * TWO32;
      const location = w[q + 4]! + (w[q + 5]! | 0) * TWO32;
      const m = w[q + 6]!;
      const tail = w[q + 7]!;
      const id = tail & 0xffff;
      const type = (tail >>> 16) & 0xff;
      if (
        type < 1 || type > maxType || location < 0 || location + n * m * TYPE_BYTES[type]! > size ||
        frame >= indexSlots || id >= nameCount || tail >>> 24 !== 0 ||
        (i > 0 && (frame < prevFrame || (v2 && frame === prevFrame && id < prevId)))
      ) {
        badEntry(i, prevFrame, prevId);
      }
      prevFrame = frame;
      prevId = id;
    }
    this.frameCount = used === 0 ? 0 : prevFrame + 1;
  }

  /** `length` bytes at `offset`: from `head` (the file's first bytes) when inside it, else read. */
  #block(offset: number, length: number, head: Uint8Array): Uint8Array {
    if (offset + length <= head.length) return head.subarray(offset, offset + length);
    return this.#source.read(offset, length);
  }

  /**
   * Used entries: the first slot with location 0, by gsd's binary search over the slots. Index
   * blocks up to 64 MiB are read whole in one read (cheaper cold than log2(slots) scattered
   * probes, and the used part is read next anyway); larger ones are probed 8 bytes at a time.
   */
  #countEntries(indexLocation: number, slots: number, head: Uint8Array): number {
    const src = this.#source;
    const whole = slots * ENTRY_BYTES <= this.#wholeIndexBytes
      ? this.#block(indexLocation, slots * ENTRY_BYTES, head)
      : null;
    const locationZero = (slot: number): boolean => {
      const b = whole
        ? whole.subarray(slot * ENTRY_BYTES + 16, slot * ENTRY_BYTES + 24)
        : src.read(indexLocation + slot * ENTRY_BYTES + 16, 8);
      for (let k = 0; k < 8; k++) if (b[k] !== 0) return false;
      return true;
    };
    if (locationZero(0)) return 0;
    let lo = 0, hi = slots;
    while (hi - lo > 1) {
      const mid = Math.floor((lo + hi) / 2);
      if (locationZero(mid)) hi = mid;
      else lo = mid;
    }
    if (whole) this.#wholeIndex = whole;
    return hi;
  }

  #frameOf(i: number): number {
    return this.#w[i * 8]! + this.#w[i * 8 + 1]! * TWO32;
  }

  /** First entry of `frame` (or where it would be). */
  #lowerBound(frame: number): number {
    let lo = 0, hi = this.entryCount;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.#frameOf(mid) < frame) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  #ref(i: number): ChunkRef {
    const w = this.#w, q = i * 8;
    const n = w[q + 2]! + w[q + 3]! * TWO32;
    const m = w[q + 6]!;
    const tail = w[q + 7]!;
    const dtype = CODE_DTYPE[(tail >>> 16) & 0xff]!;
    return {
      name: this.names[tail & 0xffff]!,
      dtype,
      shape: this.#shape(n, m),
      offset: w[q + 4]! + (w[q + 5]! | 0) * TWO32,
      bytes: n * m * DTYPE_SIZE[dtype],
      order: "little",
    };
  }

  /** Shared, frozen [N, M] arrays (frames of a trajectory repeat the same few shapes). */
  #shape(n: number, m: number): readonly number[] {
    const key = n * 65536 + m;
    let s = this.#shapes.get(key);
    if (s === undefined || s[0] !== n || s[1] !== m) {
      s = Object.freeze([n, m]);
      if (this.#shapes.size < 4096) this.#shapes.set(key, s);
    }
    return s;
  }

  #check(frame: number): void {
    if (!(Number.isInteger(frame) && frame >= 0 && frame < this.frameCount)) {
      throw new RangeError(`frame ${frame} out of range [0, ${this.frameCount})`);
    }
  }

  /** The chunks of `frame` in storage order (ascending file offset). */
  chunks(frame: number): readonly ChunkRef[] {
    this.#check(frame);
    const out: ChunkRef[] = [];
    for (let i = this.#lowerBound(frame); i < this.entryCount && this.#frameOf(i) === frame; i++) {
      const r = this.#ref(i);
      let k = out.length;
      while (k > 0 && out[k - 1]!.offset > r.offset) k--;
      if (k === out.length) out.push(r);
      else out.splice(k, 0, r);
    }
    return out;
  }

  /** The chunk `name` of `frame`, by binary search on (frame, id); undefined when absent. */
  find(frame: number, name: string): ChunkRef | undefined {
    this.#check(frame);
    const id = this.#ids.get(name);
    if (id === undefined) return undefined;
    const w = this.#w;
    if (this.#sortedById) {
      let lo = 0, hi = this.entryCount;
      while (lo < hi) {
        const mid = (lo + hi) >>> 1;
        const f = this.#frameOf(mid);
        if (f < frame || (f === frame && (w[mid * 8 + 7]! & 0xffff) < id)) lo = mid + 1;
        else hi = mid;
      }
      if (lo < this.entryCount && this.#frameOf(lo) === frame && (w[lo * 8 + 7]! & 0xffff) === id) {
        return this.#ref(lo);
      }
      return undefined;
    }
    for (let i = this.#lowerBound(frame); i < this.entryCount && this.#frameOf(i) === frame; i++) {
      if ((w[i * 8 + 7]! & 0xffff) === id) return this.#ref(i);
    }
    return undefined;
  }

  /** Value of a 1-element chunk of a frame, or undefined when the frame lacks it. */
  scalar(frame: number, name: string): number | undefined {
    const r = this.find(frame, name);
    if (r === undefined || r.bytes === 0) return undefined;
    const width = DTYPE_SIZE[r.dtype];
    const b = this.#source.read(r.offset, width);
    const v = new DataView(b.buffer, b.byteOffset, width);
    switch (r.dtype) {
      case "uint8":
      case "char":
        return v.getUint8(0);
      case "int8":
        return v.getInt8(0);
      case "uint16":
        return v.getUint16(0, true);
      case "int16":
        return v.getInt16(0, true);
      case "uint32":
        return v.getUint32(0, true);
      case "int32":
        return v.getInt32(0, true);
      case "uint64":
        return Number(v.getBigUint64(0, true));
      case "int64":
        return Number(v.getBigInt64(0, true));
      case "float32":
        return v.getFloat32(0, true);
      case "float64":
        return v.getFloat64(0, true);
    }
  }

  /** Step of a frame: `configuration/step` of the frame, else of frame 0, else 0 (hoomd default). */
  step(frame: number): number | undefined {
    const s = this.scalar(frame, "configuration/step") ??
      (frame === 0 ? undefined : this.scalar(0, "configuration/step"));
    if (s !== undefined) return s;
    return this.header.schema === "hoomd" ? 0 : undefined;
  }

  /** Header facts, names and counts for `sciobench info`. */
  describe(): Record<string, unknown> {
    const h = this.header;
    return {
      gsd_version: versionString(h.gsdVersion),
      application: h.application,
      schema: h.schema,
      schema_version: versionString(h.schemaVersion),
      index_location: h.indexLocation,
      index_slots: h.indexSlots,
      index_entries: this.entryCount,
      namelist_location: h.namelistLocation,
      namelist_bytes: h.namelistBytes,
      names: [...this.names],
    };
  }
}

function hex(b: Uint8Array): string {
  return Array.from(b, (x) => x.toString(16).padStart(2, "0")).join(" ");
}

function cStringAt(b: Uint8Array, at: number, width: number): string {
  const s = b.subarray(at, at + width);
  const end = s.indexOf(0);
  return dec.decode(end < 0 ? s : s.subarray(0, end));
}

// ---------------------------------------------------------------------------------------------
// Framing
// ---------------------------------------------------------------------------------------------

/**
 * Creates a GSD writer. Options: `application` (default `sciobench <version>`), `schema`
 * (default `hoomd`), `schemaVersion` (`"1.4"` or `[1, 4]`, the default), `hoomd` (default true:
 * choose chunks as gsd.hoomd 2.7 does; false writes every chunk of every frame as given),
 * `endian` (`little` or `native`; GSD files are little-endian).
 */
export function createGsdWriter(options: WriterOptions = {}): FrameWriter {
  if (options.endian === "big") {
    throw new UsageError("gsd: GSD files are little-endian; --endian big is not possible");
  }
  const hoomd = options.hoomd ?? true;
  if (typeof hoomd !== "boolean") throw new UsageError("gsd: option hoomd must be true or false");
  const file = new GsdFileWriter(
    stringOption(options, "application", GSD_DEFAULT_APPLICATION),
    stringOption(options, "schema", "hoomd"),
    parseSchemaVersion(options.schemaVersion),
  );
  return new HoomdWriter(file, hoomd);
}

/**
 * Creates a writer that appends frames to the GSD file read through `source`, as gsd 2.7 does
 * after `gsd.fl.open(path, 'ab')` (or `gsd.hoomd.open(path, 'rb+')`, since gsd.hoomd 2.7 refuses
 * 'ab'): nothing is written on open; frames go after the last byte; the index and the name list
 * fill their blocks in place and move to the end of the file when full, the header rewritten
 * as read but for their locations and sizes. Option `hoomd` (default: true when the file's
 * schema is `hoomd`) chooses chunks as gsd.hoomd 2.7 `append` does against the file's frame 0.
 * The file keeps its application, schema and versions; options naming others are refused, as
 * is `endian` big, and file layers before 2.0 (64-byte name slots).
 */
export function appendGsdWriter(source: ByteSource, options: WriterOptions = {}): FrameWriter {
  const index = openGsdIndex(source, options);
  const h = index.header;
  checkAppendOrder(FORMAT, source.path, "little", options.endian);
  if (h.gsdVersion < packVersion(2, 0)) {
    throw new UsageError(
      `gsd: cannot append to ${source.path}: it is GSD file layer ${
        versionString(h.gsdVersion)
      } (64-byte name slots); this writer appends to file layer 2.x only`,
    );
  }
  const keep = (key: string, value: string, fileValue: string) => {
    if (value !== fileValue) {
      throw new UsageError(
        `gsd: cannot append with ${key} '${value}' to ${source.path}, whose ${key} is '${fileValue}'`,
      );
    }
  };
  if (options.application !== undefined) {
    keep("application", stringOption(options, "application", ""), h.application);
  }
  if (options.schema !== undefined) keep("schema", stringOption(options, "schema", ""), h.schema);
  if (options.schemaVersion !== undefined) {
    keep(
      "schemaVersion",
      versionString(parseSchemaVersion(options.schemaVersion)),
      versionString(h.schemaVersion),
    );
  }
  const isHoomd = h.schema === "hoomd" && h.schemaVersion >= packVersion(1, 0) &&
    h.schemaVersion < packVersion(2, 0);
  const hoomd = options.hoomd ?? isHoomd;
  if (typeof hoomd !== "boolean") throw new UsageError("gsd: option hoomd must be true or false");
  if (hoomd && !isHoomd) {
    throw new UsageError(
      `gsd: ${source.path} has schema '${h.schema}' ${
        versionString(h.schemaVersion)
      }, not hoomd 1.x, so gsd.hoomd would not append to it; use option hoomd=false`,
    );
  }
  const file = GsdFileWriter.continuing(index, source);
  return new HoomdWriter(
    file,
    hoomd,
    hoomd ? readResume(index, source) : { frames: index.frameCount, reference: null, n0: 0 },
  );
}

/**
 * Opens a GSD file's layout; throws FormatError (with the byte offset) on a malformed file.
 * Option `wholeIndexBytes`: largest index block read in one piece (default 64 MiB, bytes).
 */
export function openGsdIndex(source: ByteSource, options: ReaderOptions = {}): GsdIndex {
  const raw = options.wholeIndexBytes ?? GSD_WHOLE_INDEX_BYTES;
  const limit = typeof raw === "string" ? Number(raw) : raw;
  if (typeof limit !== "number" || !(limit >= 0)) {
    throw new UsageError("gsd: option wholeIndexBytes must be a number of bytes");
  }
  return new GsdIndex(source, limit);
}

/** The GSD framing (`gsd`): HOOMD-blue's trajectory format, byte-compatible with gsd 2.7. */
export const gsd: Framing = {
  name: FORMAT,
  description: "GSD (HOOMD-blue trajectories), file layer 2.0 as gsd 2.7 writes it",
  orders: ["little"],
  detect(head: Uint8Array): boolean {
    if (head.length < 8) return false;
    for (let i = 0; i < 8; i++) if (head[i] !== GSD_MAGIC[i]) return false;
    return true;
  },
  createWriter: createGsdWriter,
  appendWriter: appendGsdWriter,
  openIndex: openGsdIndex,
};
