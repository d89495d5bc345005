/**
 * Reading GSD files: the header and index of file layers 0.3, 1.x, 2.0 and 2.1, checked as
 * gsd 2.7's `gsd_open` does, as a frame index: the header and name list (header.ts), the used
 * entries counted at open and read whole at the first lookup (scan.ts, each entry checked as in
 * entry_check.ts), and here the lookups of chunks by frame and name.
 * @module
 */
import type { ByteSource, ChunkRef, FrameIndex } from "../types.ts";
import { EntryColumns } from "./entries.ts";
import { DTYPE_SIZE } from "../types.ts";
import { CODE_DTYPE, ENTRY_BYTES, FORMAT, GSD_WHOLE_INDEX_BYTES, versionString } from "./format.ts";
import { type GsdHeader, readHeader, readNames } from "./header.ts";
import { countEntries, type IndexFile, scanEntries } from "./scan.ts";

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
  /** The index as counting and reading its entries sees it. */
  readonly #file: IndexFile;
  /** Chunk ids by name, from the first `find` on. */
  #ids: Map<string, number> | null = null;
  /** The used entries as columns, from the first lookup on. */
  #columns: EntryColumns | null = null;
  readonly #shapes = new Map<number, readonly number[]>();

  /**
   * Decodes `source`; `wholeIndexBytes` (default 1 MiB) is the most index bytes read at once when
   * the entries are loaded.
   */
  constructor(source: ByteSource, wholeIndexBytes = GSD_WHOLE_INDEX_BYTES) {
    const blockBytes = Math.max(ENTRY_BYTES, wholeIndexBytes - (wholeIndexBytes % ENTRY_BYTES));
    this.#source = source;
    const { header, head } = readHeader(source);
    this.header = header;
    this.names = readNames(source, header, head);
    this.#file = { source, header, nameCount: this.names.length, blockBytes };
    const { used, lastFrame } = countEntries(this.#file, head);
    this.entryCount = used;
    this.frameCount = used === 0 ? 0 : lastFrame + 1;
  }

  /** The entry columns, read and checked at the first call (a bad entry throws its FormatError). */
  #load(): EntryColumns {
    const columns = new EntryColumns(this.entryCount, this.frameCount, this.names.length);
    scanEntries(this.#file, this.entryCount, columns);
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
