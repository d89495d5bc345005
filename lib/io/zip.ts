/**
 * A store in one zip file (zarr-python's `ZipStore`): the members of a directory store as the
 * entries of a zip archive, found through its central directory (read once, ZIP64 included),
 * each entry's data found through its local header. Entries stored uncompressed (ZipStore's
 * default) are read in place, by offset; deflated ones are inflated whole (node:zlib), bounded by
 * their declared size and checked against their CRC-32. Every size and offset is checked against
 * the file before anything is read or allocated for it: a damaged archive is one FormatError line.
 * @module
 */
import { crc32, inflateRawSync } from "node:zlib";
import { FormatError } from "../core/errors.ts";
import { FileHandle } from "./file.ts";
import type { StoreMembers } from "./types.ts";

/** End of central directory record: signature, and bytes without the comment. */
const EOCD = { sig: 0x06054b50, bytes: 22 } as const;
/** ZIP64 end of central directory locator: signature, bytes. */
const LOCATOR = { sig: 0x07064b50, bytes: 20 } as const;
/** ZIP64 end of central directory record: signature, bytes without its extensible data. */
const EOCD64 = { sig: 0x06064b50, bytes: 56 } as const;
/** Central directory file header: signature, bytes without name, extra and comment. */
const CENTRAL = { sig: 0x02014b50, bytes: 46 } as const;
/** Local file header: signature, bytes without name and extra. */
const LOCAL = { sig: 0x04034b50, bytes: 30 } as const;

/** Largest comment of an end of central directory record, bytes. */
const MAX_COMMENT = 0xffff;

/** Most bytes a deflated entry may inflate to (a member is read whole when deflated). */
const MAX_INFLATED = 2 ** 31 - 1;

/** One entry of the archive. */
interface Entry {
  /** 0 stored, 8 deflated. */
  readonly method: number;
  /** CRC-32 of the uncompressed bytes. */
  readonly crc: number;
  /** Bytes stored. */
  readonly stored: number;
  /** Bytes once uncompressed. */
  readonly size: number;
  /** Offset of its local header. */
  readonly local: number;
  /** Offset of its data, once its local header was read. */
  data?: number;
}

/**
 * Reads the members of the zip store at `path` ({@link StoreMembers}), counting the bytes it
 * reads into {@link bytesRead}; the archive stays open until {@link close}.
 */
export class ZipStoreReader implements StoreMembers {
  /** Path of the zip file. */
  readonly path: string;
  /** Bytes read from the archive so far (its directory, metadata and chunks). */
  bytesRead = 0;
  readonly #file: FileHandle;
  readonly #entries = new Map<string, Entry>();
  /** Directory paths ("" the root) and the sorted names of their entries. */
  readonly #dirs = new Map<string, string[]>();
  /** The last deflated member inflated: its name and bytes (shards are read in pieces). */
  #inflated: { name: string; bytes: Uint8Array } | undefined;

  /** Opens the zip file `path` and reads its central directory: FormatError when damaged. */
  constructor(path: string) {
    this.path = path;
    this.#file = FileHandle.open(path, "read");
    try {
      this.#readDirectory();
    } catch (e) {
      this.#file.close();
      throw e;
    }
  }

  /** Fails with one line naming the archive and the byte offset. */
  #fail(offset: number, problem: string): never {
    throw new FormatError("zip", this.path, offset, problem);
  }

  /** Exactly `length` bytes from `offset`, or a failure naming `what`. */
  #bytes(offset: number, length: number, what: string): DataView {
    if (offset < 0 || offset + length > this.#file.size) {
      this.#fail(offset, `${what} (${length} bytes) runs past the end of the file`);
    }
    const out = new Uint8Array(length);
    const n = this.#file.readInto(out, offset);
    this.bytesRead += n;
    if (n < length) this.#fail(offset + n, `file ends inside ${what}`);
    return new DataView(out.buffer);
  }

  #readDirectory(): void {
    const size = this.#file.size;
    const tailLength = Math.min(size, EOCD.bytes + MAX_COMMENT);
    const tail = this.#bytes(size - tailLength, tailLength, "the end of the archive");
    let at = -1;
    for (let k = tailLength - EOCD.bytes; k >= 0; k--) {
      if (tail.getUint32(k, true) === EOCD.sig) {
        at = k;
        break;
      }
    }
    if (at < 0) this.#fail(-1, "no end of central directory record: not a zip file, or cut short");
    const eocdAt = size - tailLength + at;
    let count = tail.getUint16(at + 10, true);
    let dirBytes = tail.getUint32(at + 12, true);
    let dirAt = tail.getUint32(at + 16, true);
    let end = eocdAt;
    if (count === 0xffff || dirBytes === 0xffffffff || dirAt === 0xffffffff) {
      const loc = this.#bytes(eocdAt - LOCATOR.bytes, LOCATOR.bytes, "the ZIP64 locator");
      if (loc.getUint32(0, true) !== LOCATOR.sig) {
        this.#fail(eocdAt - LOCATOR.bytes, "no ZIP64 locator");
      }
      const at64 = u64(loc, 8);
      if (at64 + EOCD64.bytes > eocdAt - LOCATOR.bytes) {
        this.#fail(eocdAt - LOCATOR.bytes, `ZIP64 record offset ${at64} is past the locator`);
      }
      const r = this.#bytes(at64, EOCD64.bytes, "the ZIP64 end of central directory");
      if (r.getUint32(0, true) !== EOCD64.sig) {
        this.#fail(at64, "no ZIP64 end of central directory");
      }
      count = u64(r, 32);
      dirBytes = u64(r, 40);
      dirAt = u64(r, 48);
      end = at64;
    }
    if (dirAt + dirBytes > end) {
      this.#fail(dirAt, `central directory of ${dirBytes} bytes runs past its end, byte ${end}`);
    }
    if (count * CENTRAL.bytes > dirBytes) {
      this.#fail(dirAt, `${count} entries cannot fit a central directory of ${dirBytes} bytes`);
    }
    const dir = this.#bytes(dirAt, dirBytes, "the central directory");
    const names = new TextDecoder("utf-8", { fatal: false });
    const dirs = new Map<string, Set<string>>();
    let p = 0;
    for (let k = 0; k < count; k++) {
      const where = dirAt + p;
      if (p + CENTRAL.bytes > dirBytes || dir.getUint32(p, true) !== CENTRAL.sig) {
        this.#fail(where, `central directory entry ${k} of ${count} is not one`);
      }
      const flags = dir.getUint16(p + 8, true);
      const method = dir.getUint16(p + 10, true);
      const crc = dir.getUint32(p + 16, true);
      const nameLength = dir.getUint16(p + 28, true);
      const extraLength = dir.getUint16(p + 30, true);
      const next = p + CENTRAL.bytes + nameLength + extraLength + dir.getUint16(p + 32, true);
      if (next > dirBytes) {
        this.#fail(where, `central directory entry ${k} runs past the directory`);
      }
      const name = names.decode(
        new Uint8Array(dir.buffer, p + CENTRAL.bytes, nameLength),
      );
      let size = dir.getUint32(p + 24, true);
      let stored = dir.getUint32(p + 20, true);
      let local = dir.getUint32(p + 42, true);
      // ZIP64 extra field: the 64-bit values of the fields that hold 0xffffffff, in this order
      let x = p + CENTRAL.bytes + nameLength;
      const xEnd = x + extraLength;
      while (x + 4 <= xEnd) {
        const id = dir.getUint16(x, true);
        const length = dir.getUint16(x + 2, true);
        if (x + 4 + length > xEnd) {
          this.#fail(where, `entry '${name}': extra field runs past its end`);
        }
        if (id === 0x0001) {
          let f = x + 4;
          const take = (): number => {
            if (f + 8 > x + 4 + length) this.#fail(where, `entry '${name}': ZIP64 field too short`);
            const v = u64(dir, f);
            f += 8;
            return v;
          };
          if (size === 0xffffffff) size = take();
          if (stored === 0xffffffff) stored = take();
          if (local === 0xffffffff) local = take();
        }
        x += 4 + length;
      }
      p = next;
      if ((flags & 1) !== 0) this.#fail(where, `entry '${name}' is encrypted`);
      if (name.endsWith("/")) continue; // a directory entry
      if (method !== 0 && method !== 8) {
        this.#fail(
          where,
          `entry '${name}' is compressed with method ${method}; stored (0) or deflated (8) are read`,
        );
      }
      if (method === 0 && stored !== size) {
        this.#fail(where, `entry '${name}' is stored with ${stored} bytes but declares ${size}`);
      }
      if (local + LOCAL.bytes + stored > dirAt) {
        this.#fail(
          where,
          `entry '${name}' at byte ${local} (${stored} bytes) runs into the central directory`,
        );
      }
      if (method === 8 && size > MAX_INFLATED) {
        this.#fail(
          where,
          `entry '${name}' inflates to ${size} bytes, more than the ${MAX_INFLATED} read`,
        );
      }
      this.#entries.set(name, { method, crc, stored, size, local });
      const parts = name.split("/");
      for (let d = 0; d < parts.length; d++) {
        const parent = parts.slice(0, d).join("/");
        let names = dirs.get(parent);
        if (names === undefined) dirs.set(parent, names = new Set());
        names.add(parts[d]!);
      }
    }
    for (const [dir, names] of dirs) this.#dirs.set(dir, [...names].sort());
  }

  /** The entry `name`, its data offset found through its local header. */
  #entry(name: string): Entry | undefined {
    const e = this.#entries.get(name);
    if (e === undefined || e.data !== undefined) return e;
    const h = this.#bytes(e.local, LOCAL.bytes, `the local header of '${name}'`);
    if (h.getUint32(0, true) !== LOCAL.sig) this.#fail(e.local, `no local header of '${name}'`);
    const data = e.local + LOCAL.bytes + h.getUint16(26, true) + h.getUint16(28, true);
    if (data + e.stored > this.#file.size) {
      this.#fail(
        e.local,
        `entry '${name}' (${e.stored} bytes from byte ${data}) runs past the file`,
      );
    }
    e.data = data;
    return e;
  }

  /** The uncompressed bytes of deflated entry `e` (`name`), inflated once and kept. */
  #inflate(name: string, e: Entry): Uint8Array {
    if (this.#inflated?.name === name) return this.#inflated.bytes;
    const raw = new Uint8Array(e.stored);
    const n = this.#file.readInto(raw, e.data!);
    this.bytesRead += n;
    let bytes: Uint8Array;
    try {
      bytes = inflateRawSync(raw.subarray(0, n), { maxOutputLength: Math.max(e.size, 1) });
    } catch (err) {
      const why = err instanceof Error ? err.message : String(err);
      return this.#fail(e.data!, `entry '${name}' does not inflate to ${e.size} bytes (${why})`);
    }
    if (bytes.length !== e.size) {
      this.#fail(e.data!, `entry '${name}' inflates to ${bytes.length} bytes, not ${e.size}`);
    }
    // mutant: zip-deflated-crc
    if ((crc32(bytes) >>> 0) !== e.crc) this.#fail(e.data!, `entry '${name}' fails its CRC-32`);
    this.#inflated = { name, bytes };
    return bytes;
  }

  /** Bytes of member `name`, or undefined when there is no such entry. */
  sizeOf(name: string): number | undefined {
    return this.#entries.get(name)?.size;
  }

  read(name: string, limit: number): Uint8Array | undefined {
    const e = this.#entries.get(name);
    if (e === undefined) return undefined;
    if (e.size > limit) {
      this.#fail(
        -1,
        `entry '${name}' holds ${e.size} bytes, more than the ${limit} a metadata file may hold here`,
      );
    }
    const out = new Uint8Array(e.size);
    const n = this.readMemberInto(name, out, 0)!;
    return out.subarray(0, n);
  }

  /** The whole member `name` in `scratch` when it fits (else a new array), or undefined. */
  readMember(name: string, scratch: Uint8Array): Uint8Array | undefined {
    const e = this.#entries.get(name);
    if (e === undefined) return undefined;
    const into = e.size <= scratch.length ? scratch : new Uint8Array(e.size);
    const n = this.readMemberInto(name, into.subarray(0, e.size), 0)!;
    return into.subarray(0, n);
  }

  /** Reads `into` from byte `offset` of member `name`: the count read, or undefined. */
  readMemberInto(name: string, into: Uint8Array, offset: number): number | undefined {
    const e = this.#entry(name);
    if (e === undefined) return undefined;
    const length = Math.max(0, Math.min(into.length, e.size - offset));
    if (length === 0) return 0;
    if (e.method === 8) {
      into.set(this.#inflate(name, e).subarray(offset, offset + length));
      return length;
    }
    const n = this.#file.readInto(into.subarray(0, length), e.data! + offset);
    this.bytesRead += n;
    return n;
  }

  readAt(name: string, offset: number, length: number): Uint8Array | undefined {
    const out = new Uint8Array(length);
    const n = this.readMemberInto(name, out, offset);
    return n === undefined ? undefined : out.subarray(0, n);
  }

  list(dir: string, limit: number): readonly string[] | undefined {
    const names = this.#dirs.get(dir);
    if (names !== undefined && names.length > limit) {
      this.#fail(-1, `directory '${dir}' holds ${names.length} entries, more than ${limit}`);
    }
    return names;
  }

  /** Closes the archive. */
  close(): void {
    this.#file.close();
  }
}

/** The uint64 little-endian at `at` of `view`; Infinity past 2^53 (no size of a real file). */
function u64(view: DataView, at: number): number {
  const v = view.getBigUint64(at, true);
  return v > BigInt(Number.MAX_SAFE_INTEGER) ? Infinity : Number(v);
}
