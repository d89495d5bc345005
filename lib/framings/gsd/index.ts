/**
 * Reading GSD files: the header and index of file layers 0.3, 1.x, 2.0 and 2.1, checked as
 * gsd 2.7's `gsd_open` does, as a frame index.
 * @module
 */
import { copySwapped, NATIVE_ORDER } from "../../bytes/byteswap.ts";
import { FormatError } from "../../core/errors.ts";
import type { ByteSource, ChunkRef, FrameIndex } from "../types.ts";
import { Added, EntryColumns, type EntryLimits, scannedLast, startScan } from "./entries.ts";
import { type EntryScanner, entryScanner, SCAN } from "./entries_wasm.ts";
import { DTYPE_SIZE } from "../types.ts";
import {
  CODE_DTYPE,
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
import { cStringOf, hexBytes, utf8Of } from "../kit.ts";

/**
 * Slots read in one pread to count the entries (64 KiB): a whole index block up to this size; in a
 * larger one, the search's range once it is this narrow (its last levels, in memory).
 */
const LAST_SLOTS = 2048;
/** Slots read around each probe before the range is that narrow (4 KiB). */
const PROBE_SLOTS = 128;

/**
 * The buffers an open reads the head and the index slots into (made at the first open and kept
 * for the process, so an open allocates no buffer where its source reads into one): nothing of
 * them outlives the open (names and header fields are decoded into strings and numbers).
 */
const scratch: { head?: Uint8Array; slots?: Uint8Array } = {};

/**
 * `length` bytes at `offset` into the start of `buf` where `source` reads into a buffer (a short
 * read, a file cut since, reads again for the ShortReadError); else a new array from `read`.
 */
function readReusing(
  source: ByteSource,
  offset: number,
  length: number,
  buf: Uint8Array,
): Uint8Array {
  if (source.readInto === undefined) return source.read(offset, length);
  const into = buf.subarray(0, length);
  if (source.readInto(into, offset) < length) return source.read(offset, length);
  return into;
}

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

/**
 * The decoded layout of a GSD file: chunk lookup by frame, or by (frame, name). Opening does what
 * gsd 2.7's `gsd_open` does and no more: it reads the header and the name list and counts the
 * used entries by a binary search for the first empty slot that checks the entries it probes
 * (about log2(slots) 32-byte reads); it keeps nothing per frame. The first lookup reads the used
 * entries once, `wholeIndexBytes` at a time into one buffer, checks every one of them (type,
 * data inside the file, frame, id, flags, order; in WebAssembly where it can, entries_wasm.ts) and
 * keeps them as columns ({@link EntryColumns}: about 10 bytes an entry and 4 a frame). So a bad
 * entry that gsd's search does not probe, which gsd 2.7 never reports, is reported at the first
 * lookup, not at open. The lookup is where this work belongs: python3-gsd's open reads no more of
 * the index than its search probes, and gsd.hoomd's open reads no frame.
 */
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
  /** Chunk ids by name, from the first `find` on. */
  #ids: Map<string, number> | null = null;
  /** The used entries as columns, from the first lookup on. */
  #columns: EntryColumns | null = null;
  readonly #shapes = new Map<number, readonly number[]>();
  readonly #blockBytes: number;

  /**
   * Decodes `source`; `wholeIndexBytes` (default 1 MiB) is the most index bytes read at once when
   * the entries are loaded.
   */
  constructor(source: ByteSource, wholeIndexBytes = GSD_WHOLE_INDEX_BYTES) {
    this.#blockBytes = Math.max(ENTRY_BYTES, wholeIndexBytes - (wholeIndexBytes % ENTRY_BYTES));
    this.#source = source;
    const { header, head } = readHeader(source);
    this.header = header;
    this.names = this.#readNames(header, head);
    const { used, lastFrame } = this.#countEntries(header, head);
    this.entryCount = used;
    this.frameCount = used === 0 ? 0 : lastFrame + 1;
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
        names.push(utf8Of(nl.subarray(p, end)));
        p = end + 1;
      }
    } else {
      for (let p = 0; p < bytes && nl[p] !== 0; p += NAME_SEGMENT) {
        names.push(cStringAt(nl, p, NAME_SEGMENT));
      }
    }
    return names;
  }

  /**
   * gsd 2.7's count of the used entries: none when slot 0 is empty, else a binary search for the
   * first slot with location 0 that checks each used slot it probes (and slot 0): valid, and a
   * frame not below the frame of the search's left bound. The slots come from the file's head
   * when the block lies in it (a fresh file's), else from one read of a block up to 64 KiB, else
   * from reads of 128 slots (4 KiB) around the probes until the search's range is 2048 slots
   * (64 KiB) or narrower, then one read of that range: log2(slots) - 9 reads (3 for the table's
   * 8192 slots at N = 32^2, whose first probes each cost a pread from JavaScript that is not yet
   * optimised, more than the bytes). Returns the count and the last used entry's frame.
   * A bad probe throws the FormatError of the first bad entry.
   */
  #countEntries(header: GsdHeader, head: Uint8Array): { used: number; lastFrame: number } {
    const { indexLocation: at, indexSlots: slots } = header;
    const source = this.#source;
    const size = source.size;
    const bad = failAt(source.path);
    if (slots === 0) bad(16, "the index block has 0 slots");
    const bytes = slots * ENTRY_BYTES;
    if (at + bytes > size) {
      bad(
        8,
        `the index block [${at}, ${at + bytes}) ends past the end of the file (${size} bytes)`,
      );
    }
    // Slots are read a window at a time (the search's last levels in one window), or the
    // whole block in one read when it is small; a fresh file's block is in the head already.
    let window: Uint32Array | null = at + bytes <= head.length
      ? nativeWords(head.subarray(at, at + bytes))
      : null;
    let from = 0, span = window === null ? 0 : slots;
    /** Reads slots [first, first + count) as the window. */
    const load = (first: number, count: number): void => {
      from = first;
      span = count;
      scratch.slots ??= new Uint8Array(LAST_SLOTS * ENTRY_BYTES);
      window = nativeWords(
        readReusing(source, at + first * ENTRY_BYTES, count * ENTRY_BYTES, scratch.slots),
      );
    };
    const slot = (i: number): Uint32Array => {
      if (window === null || i < from || i >= from + span) {
        const per = slots <= LAST_SLOTS ? slots : PROBE_SLOTS;
        load(i - (i % per), Math.min(per, slots - i + (i % per)));
      }
      return window!.subarray((i - from) * 8, (i - from) * 8 + 8);
    };
    const check = limitsOf({ header, nameCount: this.names.length, size });
    const first = slot(0);
    if (entryLocation(first, 0) === 0) return { used: 0, lastFrame: 0 };
    let fault = !validEntry(first, 0, check);
    let lo = 0, hi = slots;
    let loFrame = entryFrame(first, 0);
    while (hi - lo > 1) {
      // the last levels: the range in one read, unless the window holds it already
      if (hi - lo <= LAST_SLOTS && !(lo + 1 >= from && hi <= from + span)) {
        load(lo + 1, hi - lo - 1);
      }
      const mid = Math.floor((lo + hi) / 2);
      const e = slot(mid);
      if (entryLocation(e, 0) === 0) {
        hi = mid;
        continue;
      }
      const frame = entryFrame(e, 0);
      if (!validEntry(e, 0, check) || frame < loFrame) fault = true;
      lo = mid;
      loFrame = frame;
    }
    if (fault) {
      // A probed entry is bad: the first bad entry of all, named as the full check names it.
      this.#scan(hi, null);
      bad(at, "a used index entry is not valid (gsd_open's search finds a bad entry)");
    }
    return { used: hi, lastFrame: loFrame };
  }

  /**
   * Reads the first `used` entries in order, `#blockBytes` at a time (into one reused buffer
   * where the source reads into one), checks every one ({@link checkEntryRun}: the first bad
   * one throws) and adds them to `columns`; when their kinds stop repeating, keeps them whole.
   */
  #scan(used: number, columns: EntryColumns | null): void {
    const source = this.#source;
    const at = this.header.indexLocation;
    const per = this.#blockBytes / ENTRY_BYTES;
    const run: RunCheck = {
      header: this.header,
      nameCount: this.names.length,
      source,
      prevFrame: 0,
      prevId: 0,
    };
    const sc = columns === null ? null : entryScanner();
    if (sc !== null) return this.#scanWasm(used, columns!, run, sc);
    const reuse = source.readInto !== undefined && NATIVE_ORDER === "little";
    const buf = reuse ? new Uint32Array(Math.min(per, used) * 8) : null;
    let whole = columns === null;
    for (let base = 0; base < used; base += per) {
      const n = Math.min(per, used - base);
      const offset = at + base * ENTRY_BYTES;
      let words: Uint32Array;
      if (buf !== null) {
        const bytes = new Uint8Array(buf.buffer, 0, n * ENTRY_BYTES);
        // short only if the file was cut since the open: read again for the ShortReadError
        if (source.readInto!(bytes, offset) < bytes.length) source.read(offset, bytes.length);
        words = buf.subarray(0, n * 8);
      } else {
        words = nativeWords(source.read(offset, n * ENTRY_BYTES));
      }
      checkEntryRun(words, base, run);
      if (!whole && !columns!.add(words)) whole = true;
    }
    if (columns !== null) {
      if (whole) columns.keepWhole(nativeWords(source.read(at, used * ENTRY_BYTES)).slice());
      columns.finish();
    }
  }

  /**
   * {@link #scan} through the WebAssembly check (entries_wasm.ts): the entries read
   * `#blockBytes` at a time, straight into the module's memory where the source reads into a
   * buffer (at most its block of 2048 entries, 64 KiB, a read), else in one read copied in; each
   * block of the module's checked and added in one call ({@link EntryColumns.addScanned}). A bad
   * entry is named by {@link checkEntryRun}, and entries whose kinds stop repeating are kept
   * whole, as there.
   */
  #scanWasm(used: number, columns: EntryColumns, run: RunCheck, sc: EntryScanner): void {
    const source = this.#source;
    const at = this.header.indexLocation;
    const per = this.#blockBytes / ENTRY_BYTES;
    const limits = limitsOf({
      header: this.header,
      nameCount: this.names.length,
      size: source.size,
    });
    startScan(sc, limits);
    let whole = false;
    for (let base = 0; base < used; base += per) {
      const n = Math.min(per, used - base);
      const read = source.readInto === undefined
        ? source.read(at + base * ENTRY_BYTES, n * ENTRY_BYTES)
        : null;
      for (let first = base; first < base + n; first += SCAN.BLOCK_ENTRIES) {
        const count = Math.min(SCAN.BLOCK_ENTRIES, base + n - first);
        const offset = at + first * ENTRY_BYTES;
        const bytes = sc.u8.subarray(SCAN.BLOCK, SCAN.BLOCK + count * ENTRY_BYTES);
        if (read !== null) {
          bytes.set(
            read.subarray((first - base) * ENTRY_BYTES, (first - base + count) * ENTRY_BYTES),
          );
        } else if (source.readInto!(bytes, offset) < bytes.length) {
          // short only if the file was cut since the open: read again for the ShortReadError
          source.read(offset, bytes.length);
        }
        const words = sc.u32.subarray(SCAN.BLOCK / 4, SCAN.BLOCK / 4 + count * 8);
        if (whole) {
          checkEntryRun(words, first, run);
          continue;
        }
        const added = columns.addScanned(sc, count, limits);
        if (added === Added.All) {
          const last = scannedLast(sc);
          run.prevFrame = last.frame;
          run.prevId = last.id;
          continue;
        }
        // a bad entry (named here), or kinds that stopped repeating: this block all checked here
        checkEntryRun(words, first, run);
        if (added === Added.Bad) {
          throw new Error(`${source.path}: gsd index entries ${first}.. failed one check only`);
        }
        whole = true;
      }
    }
    if (whole) columns.keepWhole(nativeWords(source.read(at, used * ENTRY_BYTES)).slice());
    columns.finish();
  }

  /** `length` bytes at `offset`: from `head` (the file's first bytes) when inside it, else read. */
  #block(offset: number, length: number, head: Uint8Array): Uint8Array {
    if (offset + length <= head.length) return head.subarray(offset, offset + length);
    return this.#source.read(offset, length);
  }

  /** The entry columns, read and checked at the first call (a bad entry throws its FormatError). */
  #load(): EntryColumns {
    const columns = new EntryColumns(this.entryCount, this.frameCount, this.names.length);
    this.#scan(this.entryCount, columns);
    this.#columns = columns;
    return columns;
  }

  /** Loads and checks every used entry now (the first lookup does it); FormatError if one is bad. */
  verify(): void {
    if (this.#columns === null) this.#load();
  }

  #ref(c: EntryColumns, e: number): ChunkRef {
    const n = c.n(e);
    const m = c.m(e);
    const tail = c.tail(e);
    const dtype = CODE_DTYPE[(tail >>> 16) & 0xff]!;
    return {
      name: this.names[tail & 0xffff]!,
      dtype,
      shape: this.#shape(n, m),
      offset: c.location[e]!,
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

  /** The chunks of `frame` in storage order (ascending file offset); none outside [0, frames). */
  chunks(frame: number): readonly ChunkRef[] {
    const c = this.#columns ?? this.#load();
    const out: ChunkRef[] = [];
    if (!(frame >= 0 && frame < this.frameCount)) return out;
    const end = c.frameStart[frame + 1]!;
    for (let e = c.frameStart[frame]!; e < end; e++) {
      const r = this.#ref(c, e);
      let k = out.length;
      while (k > 0 && out[k - 1]!.offset > r.offset) k--;
      if (k === out.length) out.push(r);
      else out.splice(k, 0, r);
    }
    return out;
  }

  /** The chunk `name` of `frame` (among that frame's entries); undefined when absent. */
  find(frame: number, name: string): ChunkRef | undefined {
    const c = this.#columns ?? this.#load();
    this.#ids ??= new Map(this.names.map((n, i) => [n, i]));
    const id = this.#ids.get(name);
    if (id === undefined || !(frame >= 0 && frame < this.frameCount)) return undefined;
    const end = c.frameStart[frame + 1]!;
    for (let e = c.frameStart[frame]!; e < end; e++) {
      if ((c.tail(e) & 0xffff) === id) return this.#ref(c, e);
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
  scratch.head ??= new Uint8Array(HEAD_BYTES);
  const head = readReusing(source, 0, Math.min(size, HEAD_BYTES), scratch.head);
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
 * The entries of `bytes` (32 each) as native u32 words: a view when the bytes are 4-byte aligned
 * on a little-endian machine, else a copy (swapped to native words on a big-endian one).
 */
function nativeWords(bytes: Uint8Array): Uint32Array {
  if (NATIVE_ORDER === "little" && bytes.byteOffset % 4 === 0) {
    return new Uint32Array(bytes.buffer, bytes.byteOffset, bytes.length / 4);
  }
  const w = new Uint32Array(bytes.length / 4);
  const b = new Uint8Array(w.buffer);
  b.set(bytes);
  if (NATIVE_ORDER === "big") copySwapped(b, b, 4);
  return w;
}

/** What an index entry is checked against: the header, the name count, the file size. */
interface EntryCheck {
  readonly header: GsdHeader;
  readonly nameCount: number;
  readonly size: number;
}

/**
 * gsd 2.7's check of one index entry (at word q of `w`): a known type, data inside the file, a
 * frame below the index size, an id in the name list, no flags.
 */
function validEntry(w: Uint32Array, q: number, c: EntryLimits): boolean {
  const tail = w[q + 7]!;
  const type = (tail >>> 16) & 0xff;
  const location = entryLocation(w, q);
  return type >= 1 && type <= c.maxType && location >= 0 &&
    location + entryN(w, q) * w[q + 6]! * TYPE_BYTES[type]! <= c.size &&
    entryFrame(w, q) < c.slots && (tail & 0xffff) < c.nameCount && tail >>> 24 === 0;
}

function limitsOf(c: EntryCheck): EntryLimits {
  return {
    maxType: maxTypeCode(c.header),
    size: c.size,
    slots: c.header.indexSlots,
    nameCount: c.nameCount,
    byId: sortedById(c.header),
  };
}

/** What {@link checkEntryRun} checks against, and the entry before its run. */
interface RunCheck {
  readonly header: GsdHeader;
  readonly nameCount: number;
  readonly source: ByteSource;
  prevFrame: number;
  prevId: number;
}

/**
 * Checks the run of used index entries `w` that starts at entry `base` (after the entry in `at`,
 * when base > 0) as gsd 2.7 checks the ones its binary search probes ({@link validEntry}), and
 * that they are sorted (by (frame, id) in 2.x, by frame before); leaves the run's last entry in
 * `at`. The fast test runs per entry, the message is built only for a bad one ({@link badEntry}).
 */
function checkEntryRun(w: Uint32Array, base: number, at: RunCheck): void {
  const check = limitsOf({ header: at.header, nameCount: at.nameCount, size: at.source.size });
  const v2 = sortedById(at.header);
  const used = w.length / 8;
  let prevFrame = at.prevFrame, prevId = at.prevId;
  for (let i = 0, q = 0; i < used; i++, q += 8) {
    const frame = entryFrame(w, q);
    const id = w[q + 7]! & 0xffff;
    if (
      !validEntry(w, q, check) ||
      (base + i > 0 && (frame < prevFrame || (v2 && frame === prevFrame && id < prevId)))
    ) {
      badEntry(w, i, { ...at, base, prevFrame, prevId });
    }
    prevFrame = frame;
    prevId = id;
  }
  at.prevFrame = prevFrame;
  at.prevId = prevId;
}

/** Throws the FormatError that says what is wrong with index entry `i` (see {@link checkEntryRun}). */
function badEntry(
  w: Uint32Array,
  i: number,
  at: {
    header: GsdHeader;
    nameCount: number;
    source: ByteSource;
    prevFrame: number;
    prevId: number;
    /** Entry number of w's first entry (default 0). */
    base?: number;
  },
): never {
  const { header, nameCount, source, prevFrame, prevId } = at;
  const bad = failAt(source.path);
  const size = source.size;
  const q = i * 8;
  i += at.base ?? 0;
  const offset = header.indexLocation + i * ENTRY_BYTES;
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
