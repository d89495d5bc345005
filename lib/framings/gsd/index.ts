/**
 * Reading GSD files: the header and index of file layers 0.3, 1.x, 2.0 and 2.1, checked as
 * gsd 2.7's `gsd_open` does, as a frame index.
 * @module
 */
import { copySwapped, NATIVE_ORDER } from "../../bytes/byteswap.ts";
import { FormatError } from "../../errors.ts";
import type { ByteSource, ChunkRef, FrameIndex } from "../types.ts";
import { DTYPE_SIZE } from "../types.ts";
import {
  CODE_DTYPE,
  dec,
  ENTRY_BYTES,
  FORMAT,
  GSD_MAGIC,
  GSD_WHOLE_INDEX_BYTES,
  HEAD_BYTES,
  HEADER_BYTES,
  NAME_SEGMENT,
  packVersion,
  TWO32,
  TYPE_BYTES,
  versionString,
} from "./format.ts";
import { cStringOf, hexBytes } from "../kit.ts";

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
    const { header, head } = readHeader(source);
    this.header = header;
    this.names = this.#readNames(header, head);
    this.#ids = new Map(this.names.map((n, i) => [n, i]));
    this.#w = this.#readIndex(header, head);
    this.entryCount = this.#w.length / 8;
    this.#sortedById = sortedById(header);
    this.frameCount = mapFrames(this.#w, header, this.names.length, source);
  }

  /** The name list block: chunk names by id (NUL-separated in 2.x, 64-byte segments before). */
  #readNames(header: GsdHeader, head: Uint8Array): string[] {
    const { namelistLocation: at, namelistBytes: bytes } = header;
    const size = this.#source.size;
    const bad = failAt(this.#source.path);
    if (bytes === 0) bad(32, "the name list block has size 0");
    if (at + bytes > size) {
      bad(
        24,
        `the name list block [${at}, ${at + bytes}) ends past the end of the file (${size} bytes)`,
      );
    }
    const nl = this.#block(at, bytes, head);
    if (nl[bytes - 1] !== 0) {
      bad(
        at + bytes - 1,
        `the name list block must end with a 0 byte, found 0x${
          nl[bytes - 1]!.toString(16).padStart(2, "0")
        }`,
      );
    }
    const names: string[] = [];
    if (sortedById(header)) {
      let p = 0;
      while (p < bytes && nl[p] !== 0) {
        const end = nl.indexOf(0, p);
        names.push(dec.decode(nl.subarray(p, end)));
        p = end + 1;
      }
    } else {
      for (let p = 0; p < bytes && nl[p] !== 0; p += NAME_SEGMENT) {
        names.push(cStringAt(nl, p, NAME_SEGMENT));
      }
    }
    return names;
  }

  /** The used entries of the index block, 8 little-endian u32 words each (native words). */
  #readIndex(header: GsdHeader, head: Uint8Array): Uint32Array {
    const { indexLocation: at, indexSlots: slots } = header;
    const size = this.#source.size;
    const bad = failAt(this.#source.path);
    if (slots === 0) bad(16, "the index block has 0 slots");
    if (at + slots * ENTRY_BYTES > size) {
      bad(
        8,
        `the index block [${at}, ${
          at + slots * ENTRY_BYTES
        }) ends past the end of the file (${size} bytes)`,
      );
    }
    const used = this.#countEntries(at, slots, head);
    const w = new Uint32Array(used * 8);
    if (used > 0) {
      new Uint8Array(w.buffer).set(
        this.#wholeIndex?.subarray(0, used * ENTRY_BYTES) ??
          this.#block(at, used * ENTRY_BYTES, head),
      );
      this.#wholeIndex = null;
      if (NATIVE_ORDER === "big") {
        const b = new Uint8Array(w.buffer);
        copySwapped(b, b, 4);
      }
    }
    return w;
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
    return entryFrame(this.#w, i * 8);
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
    const n = entryN(w, q);
    const m = w[q + 6]!;
    const tail = w[q + 7]!;
    const dtype = CODE_DTYPE[(tail >>> 16) & 0xff]!;
    return {
      name: this.names[tail & 0xffff]!,
      dtype,
      shape: this.#shape(n, m),
      offset: entryLocation(w, q),
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

  /** The chunks of `frame` in storage order (ascending file offset). */
  chunks(frame: number): readonly ChunkRef[] {
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

function cStringAt(b: Uint8Array, at: number, width: number): string {
  return cStringOf(b.subarray(at, at + width));
}

/** A thrower of FormatErrors about the GSD file at `path`: (byte offset, problem). */
function failAt(path: string): (offset: number, problem: string) => never {
  return (offset, problem) => {
    throw new FormatError(FORMAT, path, offset, problem);
  };
}

/** 2.x files sort their index by (frame, id) and keep names NUL-separated. */
function sortedById(header: GsdHeader): boolean {
  return header.gsdVersion >= packVersion(2, 0);
}

/** The header (the first 256 bytes): magic, version, block locations; also the file's head. */
function readHeader(source: ByteSource): { header: GsdHeader; head: Uint8Array } {
  const size = source.size;
  const bad = failAt(source.path);
  if (size < HEADER_BYTES) {
    bad(0, `not a GSD file: the header needs ${HEADER_BYTES} bytes, the file has ${size}`);
  }
  const head = source.read(0, Math.min(size, HEAD_BYTES));
  const h = head.subarray(0, HEADER_BYTES);
  for (let i = 0; i < 8; i++) {
    if (h[i] !== GSD_MAGIC[i]) {
      bad(
        0,
        `not a GSD file: magic ${hexBytes(h.subarray(0, 8))}, expected ${hexBytes(GSD_MAGIC)}`,
      );
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
  const header: GsdHeader = {
    gsdVersion,
    schemaVersion: hv.getUint32(40, true),
    application: cStringAt(h, 48, 64),
    schema: cStringAt(h, 112, 64),
    indexLocation: u64(8, "index location"),
    indexSlots: u64(16, "index size"),
    namelistLocation: u64(24, "name list location"),
    namelistBytes: u64(32, "name list size") * NAME_SEGMENT,
  };
  return { header, head };
}

// Fields of the index entry at word q of the entry words w (gsd_index_entry: frame u64, N u64,
// location i64, M u32, id u16, type u8, flags u8).
function entryFrame(w: Uint32Array, q: number): number {
  return w[q]! + w[q + 1]! * TWO32;
}
function entryN(w: Uint32Array, q: number): number {
  return w[q + 2]! + w[q + 3]! * TWO32;
}
function entryLocation(w: Uint32Array, q: number): number {
  return w[q + 4]! + (w[q + 5]! | 0) * TWO32;
}

/** Largest type code of a file layer: 11 (char) needs 2.1. */
function maxTypeCode(header: GsdHeader): number {
  return header.gsdVersion >= packVersion(2, 1) ? 11 : 10;
}

/**
 * Checks every used index entry `w` as gsd 2.7 checks the ones its binary search probes (type,
 * data inside the file, frame below the slots, id in the name list, no flags, sorted) and returns
 * the frame count (last entry's frame + 1). The fast test runs per entry; the message is built
 * only for a bad one ({@link badEntry}).
 */
function mapFrames(
  w: Uint32Array,
  header: GsdHeader,
  nameCount: number,
  source: ByteSource,
): number {
  const size = source.size;
  const slots = header.indexSlots;
  const v2 = sortedById(header);
  const maxType = maxTypeCode(header);
  const used = w.length / 8;
  let prevFrame = 0, prevId = 0;
  for (let i = 0, q = 0; i < used; i++, q += 8) {
    const frame = entryFrame(w, q);
    const tail = w[q + 7]!;
    const id = tail & 0xffff;
    const type = (tail >>> 16) & 0xff;
    if (
      type < 1 || type > maxType || entryLocation(w, q) < 0 ||
      entryLocation(w, q) + entryN(w, q) * w[q + 6]! * TYPE_BYTES[type]! > size ||
      frame >= slots || id >= nameCount || tail >>> 24 !== 0 ||
      (i > 0 && (frame < prevFrame || (v2 && frame === prevFrame && id < prevId)))
    ) {
      badEntry(w, i, { header, nameCount, source, prevFrame, prevId });
    }
    prevFrame = frame;
    prevId = id;
  }
  return used === 0 ? 0 : prevFrame + 1;
}

/** Throws the FormatError that says what is wrong with index entry `i` (see {@link mapFrames}). */
function badEntry(
  w: Uint32Array,
  i: number,
  at: {
    header: GsdHeader;
    nameCount: number;
    source: ByteSource;
    prevFrame: number;
    prevId: number;
  },
): never {
  const { header, nameCount, source, prevFrame, prevId } = at;
  const bad = failAt(source.path);
  const size = source.size;
  const q = i * 8, offset = header.indexLocation + i * ENTRY_BYTES;
  const frame = entryFrame(w, q);
  const n = entryN(w, q);
  const location = entryLocation(w, q);
  const m = w[q + 6]!;
  const id = w[q + 7]! & 0xffff;
  const type = (w[q + 7]! >>> 16) & 0xff;
  const flags = w[q + 7]! >>> 24;
  const maxType = maxTypeCode(header);
  const what = `index entry ${i} (frame ${frame}, chunk id ${id})`;
  if (type < 1 || type > maxType) {
    bad(
      offset + 30,
      `${what}: unknown type code ${type} (known: 1..${maxType}${
        maxType === 10 ? "; 11 needs file layer 2.1" : ""
      })`,
    );
  }
  const bytes = n * m * TYPE_BYTES[type]!;
  if (location < 0 || location + bytes > size) {
    bad(
      offset + 16,
      `${what}: data [${location}, ${location + bytes}) of ${n} x ${m} ${
        CODE_DTYPE[type]
      } lies outside the file (${size} bytes)`,
    );
  }
  if (frame >= header.indexSlots) {
    bad(offset, `${what}: frame ${frame} is not below the index size ${header.indexSlots}`);
  }
  if (id >= nameCount) {
    bad(offset + 28, `${what}: chunk id ${id} but the name list holds ${nameCount} names`);
  }
  if (flags !== 0) bad(offset + 31, `${what}: flags 0x${flags.toString(16)}, expected 0`);
  return bad(
    offset,
    `${what}: index entries are not sorted by ${
      sortedById(header) ? "(frame, id)" : "frame"
    }; entry ${i - 1} has frame ${prevFrame}, id ${prevId}`,
  );
}
