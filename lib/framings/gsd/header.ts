/**
 * The head of a GSD file: its 256-byte header (magic, file layer 0.3, 1.x, 2.0 or 2.1, the index
 * and name list blocks) and its name list (chunk names by id), checked as gsd 2.7's `gsd_open`
 * checks them.
 * @module
 */
import { FormatError } from "../../core/errors.ts";
import type { ByteSource } from "../types.ts";
import {
  FORMAT,
  GSD_MAGIC,
  HEAD_BYTES,
  HEADER_BYTES,
  NAME_SEGMENT,
  packVersion,
  TWO32,
  versionString,
} from "./format.ts";
import { cStringOf, hexBytes, utf8Of } from "../kit.ts";

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
 * The buffer an open reads the file's head into (made at the first open and kept for the
 * process, so an open allocates no buffer where its source reads into one): nothing of it
 * outlives the open (names and header fields are decoded into strings and numbers).
 */
const scratch: { head?: Uint8Array } = {};

/**
 * `length` bytes at `offset` into the start of `buf` where `source` reads into a buffer (a short
 * read, a file cut since, reads again for the ShortReadError); else a new array from `read`.
 */
export function readReusing(
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

/** A thrower of FormatErrors about the GSD file at `path`: (byte offset, problem). */
export function failAt(path: string): (offset: number, problem: string) => never {
  return (offset, problem) => {
    throw new FormatError(FORMAT, path, offset, problem);
  };
}

/** 2.x files sort their index by (frame, id) and keep names NUL-separated. */
export function sortedById(header: GsdHeader): boolean {
  return header.gsdVersion >= packVersion(2, 0);
}

function cStringAt(b: Uint8Array, at: number, width: number): string {
  return cStringOf(b.subarray(at, at + width));
}

/** The header (the first 256 bytes): magic, version, block locations; also the file's head. */
export function readHeader(source: ByteSource): { header: GsdHeader; head: Uint8Array } {
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

/**
 * The name list block: chunk names by id (NUL-separated in 2.x, 64-byte segments before), from
 * `head` (the file's first bytes) when the block lies in it, else read.
 */
export function readNames(source: ByteSource, header: GsdHeader, head: Uint8Array): string[] {
  const { namelistLocation: at, namelistBytes: bytes } = header;
  const size = source.size;
  const bad = failAt(source.path);
  if (bytes === 0) bad(32, "the name list block has size 0");
  if (at + bytes > size) {
    bad(
      24,
      `the name list block [${at}, ${at + bytes}) ends past the end of the file (${size} bytes)`,
    );
  }
  const nl = at + bytes <= head.length ? head.subarray(at, at + bytes) : source.read(at, bytes);
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
