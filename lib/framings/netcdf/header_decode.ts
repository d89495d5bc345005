/**
 * netCDF classic headers read: a header decoded from a byte source with every field checked
 * (tags, counts, names, types, sizes), and the departures from the specification that libnetcdf
 * reads anyway.
 * @module
 */
import { copySwapped } from "../../bytes/byteswap.ts";
import { FormatError } from "../../core/errors.ts";
import type { ByteSource, TypedArray } from "../types.ts";
import { MAX_INDEXED_OBJECTS } from "../kit.ts";
import {
  FORMAT,
  isCdf5Type,
  type NcAttribute,
  type NcDimension,
  type NcSchema,
  type NcType,
  ncTypeSize,
  type NcVariable,
  type NcVariant,
  pad4,
  STREAMING_NUMRECS,
  TAG_ATTRIBUTE,
  TAG_DIMENSION,
  TAG_VARIABLE,
  typedFor,
  TYPES,
} from "./model.ts";

const dec = new TextDecoder("utf-8", { fatal: true });
const lenientDec = new TextDecoder("utf-8");

/** A decoded attribute: values as text (char) or a typed array in native order. */
export interface NcDecodedAttribute extends NcAttribute {
  /** Text for char, else a typed array of the attribute's type. */
  readonly values: string | TypedArray;
}

/** A decoded variable with its stored vsize and begin. */
export interface NcDecodedVariable extends NcVariable {
  /** Attributes with decoded values. */
  readonly attributes: readonly NcDecodedAttribute[];
  /** The vsize field as stored (readers recompute it). */
  readonly storedVsize: number;
  /** The begin field: absolute offset of the data. */
  readonly begin: number;
  /** Byte offset of the begin field itself in the header (for error messages). */
  readonly beginFieldOffset: number;
}

/** A decoded header. */
export interface NcHeader extends NcSchema {
  /** Variables with stored offsets. */
  readonly variables: readonly NcDecodedVariable[];
  /** Global attributes with decoded values. */
  readonly attributes: readonly NcDecodedAttribute[];
  /** numrecs as stored; {@link STREAMING_NUMRECS} for all ones. */
  readonly storedNumrecs: number;
  /** Header size in bytes. */
  readonly headerBytes: number;
  /**
   * Departures from the format specification that libnetcdf tolerates when it reads the header
   * (non-NUL padding, empty or non-UTF-8 names, a wrong tag on an empty list), each naming the
   * byte offset: `info --strict` reports them.
   */
  readonly departures: readonly string[];
}

/** The attribute list of every variable without attributes (one array, not one a variable). */
const NO_ATTRIBUTES: readonly NcDecodedAttribute[] = Object.freeze([]);
/** The dimension ids of every scalar variable (one array, not one a variable). */
const NO_DIMS: readonly number[] = Object.freeze([]);

class HeaderDecoder {
  pos = 0;
  #buf: Uint8Array = new Uint8Array(0);
  #view: DataView = new DataView(new ArrayBuffer(0));
  readonly #src: ByteSource;
  wide = false;
  beginWide = false;
  /** Departures from the specification that libnetcdf reads anyway (see {@link NcHeader}). */
  readonly departures: string[] = [];

  constructor(src: ByteSource) {
    this.#src = src;
  }

  fail(offset: number, problem: string): never {
    throw new FormatError(FORMAT, this.#src.path, offset, problem);
  }

  need(n: number, what: string): void {
    const end = this.pos + n;
    if (end <= this.#buf.length) return;
    if (end > this.#src.size) {
      this.fail(
        this.pos,
        `header ends inside ${what}: need ${n} bytes but the file ends at byte ${this.#src.size}`,
      );
    }
    const want = Math.min(this.#src.size, Math.max(end, this.#buf.length * 2, 4096));
    this.#buf = this.#src.read(0, want);
    this.#view = new DataView(this.#buf.buffer, this.#buf.byteOffset, this.#buf.byteLength);
  }

  u32(what: string): number {
    this.need(4, what);
    const v = this.#view.getUint32(this.pos, false);
    this.pos += 4;
    return v;
  }

  u64(what: string): number {
    this.need(8, what);
    const v = this.#view.getBigUint64(this.pos, false);
    if (v > BigInt(Number.MAX_SAFE_INTEGER)) this.fail(this.pos, `${what} ${v} is too large`);
    this.pos += 8;
    return Number(v);
  }

  count(what: string): number {
    return this.wide ? this.u64(what) : this.u32(what);
  }

  begin(what: string): number {
    if (!this.beginWide) {
      const at = this.pos;
      const v = this.u32(what);
      if (v > 0x7fffffff) this.fail(at, `${what} ${v} is negative as a CDF-1 offset`);
      return v;
    }
    return this.u64(what);
  }

  /**
   * `n` bytes followed by padding to 4 bytes. The specification says NUL; libnetcdf does not
   * check (old versions wrote other bytes), so other bytes are a departure, not an error.
   */
  bytes(n: number, what: string, copy = true): Uint8Array {
    const remaining = this.#src.size - this.pos;
    if (n > remaining) {
      this.fail(
        this.pos,
        `${what} of ${n} bytes runs past the end of the file (${this.#src.size} bytes)`,
      );
    }
    const padded = pad4(n);
    this.need(padded, what);
    const out = copy
      ? this.#buf.slice(this.pos, this.pos + n)
      : this.#buf.subarray(this.pos, this.pos + n);
    for (let i = this.pos + n; i < this.pos + padded; i++) {
      if (this.#buf[i] !== 0) {
        this.departures.push(
          `byte ${i}: padding after ${what} is 0x${this.#buf[i]!.toString(16)}, not NUL`,
        );
        break;
      }
    }
    this.pos += padded;
    return out;
  }

  name(what: string): string {
    const at = this.pos;
    const len = this.count(`${what} name length`);
    if (len === 0) this.departures.push(`byte ${at}: ${what} has an empty name`);
    const b = this.bytes(len, `${what} name`, false); // decoded at once: no copy
    try {
      return dec.decode(b);
    } catch {
      this.departures.push(`byte ${at + (this.wide ? 8 : 4)}: ${what} name is not UTF-8`);
      return lenientDec.decode(b);
    }
  }

  /** A list count checked against the bytes left (each element takes at least `minBytes`). */
  listCount(minBytes: number, what: string): number {
    const at = this.pos;
    const n = this.count(`${what} count`);
    if (n * minBytes > this.#src.size - this.pos) {
      this.fail(
        at,
        `${n} ${what}s cannot fit in the ${this.#src.size - this.pos} bytes left in the file`,
      );
    }
    if (n > MAX_INDEXED_OBJECTS) {
      this.fail(
        at,
        `${n} ${what}s: more than ${MAX_INDEXED_OBJECTS} (the most sciobench indexes in one file)`,
      );
    }
    return n;
  }

  type(variant: NcVariant, what: string): NcType {
    const at = this.pos;
    const code = this.u32(`${what} type`);
    const t = TYPES[code - 1];
    if (t === undefined || (variant !== 5 && isCdf5Type(t))) {
      this.fail(
        at,
        `${what} has unknown nc_type ${code}; expected 1..6${
          variant === 5 ? " or 7..11 (CDF-5)" : ""
        }`,
      );
    }
    return t;
  }

  /**
   * A list tag: returns the element count (0 for ABSENT). As in libnetcdf, an empty list's tag
   * is not checked (a tag other than 0 is a departure).
   */
  list(tag: number, what: string, minBytes: number): number {
    const at = this.pos;
    const t = this.u32(`${what} list tag`);
    if (t === 0) {
      const cAt = this.pos;
      const n = this.count(`${what} list count`);
      if (n !== 0) this.fail(cAt, `ABSENT ${what} list must have count 0, found ${n}`);
      return 0;
    }
    if (t !== tag) {
      const save = this.pos;
      if (this.count(`${what} list count`) === 0) {
        this.departures.push(
          `byte ${at}: empty ${what} list has tag 0x${t.toString(16)}, not ABSENT (0)`,
        );
        return 0;
      }
      this.pos = save;
      this.fail(
        at,
        `bad tag 0x${t.toString(16).padStart(8, "0")}: expected the ${what} list tag 0x${
          tag.toString(16).padStart(8, "0")
        } or ABSENT (0)`,
      );
    }
    return this.listCount(minBytes, what);
  }

  attributes(variant: NcVariant, owner: string): readonly NcDecodedAttribute[] {
    const n = this.list(TAG_ATTRIBUTE, "attribute", this.wide ? 24 : 12);
    if (n === 0) return NO_ATTRIBUTES;
    const out: NcDecodedAttribute[] = [];
    for (let i = 0; i < n; i++) {
      const name = this.name(`${owner} attribute ${i}`);
      const type = this.type(variant, `attribute '${name}'`);
      const count = this.count(`attribute '${name}' value count`);
      const size = ncTypeSize(type);
      const raw = this.bytes(count * size, `values of attribute '${name}'`);
      let values: string | TypedArray;
      if (type === "char") {
        values = new TextDecoder("utf-8").decode(raw);
      } else {
        copySwapped(raw, raw, size);
        values = viewAs(type, raw);
      }
      out.push({ name, type, values });
    }
    return out;
  }
}

function viewAs(type: NcType, b: Uint8Array): TypedArray {
  const n = b.length / ncTypeSize(type);
  const t = typedFor(type, n);
  new Uint8Array(t.buffer).set(b);
  return t;
}

/** Decodes and checks a header (magic, version, tags, types, names, padding, dimension ids). */
export function decodeHeader(src: ByteSource): NcHeader {
  const d = new HeaderDecoder(src);
  if (src.size < 4) d.fail(0, `file of ${src.size} bytes is too short for a netCDF header`);
  d.need(4, "magic");
  const magic = src.read(0, 4);
  if (magic[0] !== 0x43 || magic[1] !== 0x44 || magic[2] !== 0x46) {
    d.fail(0, "bad magic: expected 'CDF' followed by version byte 1, 2 or 5");
  }
  const version = magic[3]!;
  if (version !== 1 && version !== 2 && version !== 5) {
    d.fail(
      3,
      `unknown version byte ${version}: expected 1 (classic), 2 (64-bit offset) or 5 (CDF-5)`,
    );
  }
  const variant = version as NcVariant;
  d.pos = 4;
  d.wide = variant === 5;
  d.beginWide = variant !== 1;
  let storedNumrecs: number;
  if (variant === 5) {
    d.need(8, "numrecs");
    const hi = d.u32("numrecs");
    const lo = d.u32("numrecs");
    storedNumrecs = hi === 0xffffffff && lo === 0xffffffff ? STREAMING_NUMRECS : hi * 2 ** 32 + lo;
    if (storedNumrecs > Number.MAX_SAFE_INTEGER) d.fail(4, `numrecs ${storedNumrecs} is too large`);
  } else {
    const n = d.u32("numrecs");
    storedNumrecs = n === 0xffffffff ? STREAMING_NUMRECS : n;
  }

  const nd = d.list(TAG_DIMENSION, "dimension", d.wide ? 16 : 8);
  const dimensions: NcDimension[] = [];
  let recDim = -1;
  for (let i = 0; i < nd; i++) {
    const name = d.name(`dimension ${i}`);
    const at = d.pos;
    const length = d.count(`length of dimension '${name}'`);
    if (length === 0) {
      if (recDim >= 0) d.fail(at, `dimension '${name}' is a second unlimited dimension (length 0)`);
      recDim = i;
    }
    dimensions.push({ name, length });
  }
  const attributes = d.attributes(variant, "global");
  const nv = d.list(TAG_VARIABLE, "variable", d.wide ? 48 : 24);
  const variables: NcDecodedVariable[] = [];
  for (let i = 0; i < nv; i++) {
    const name = d.name(`variable ${i}`);
    const rank = d.listCount(d.wide ? 8 : 4, `dimension id of variable '${name}'`);
    const ids: number[] = [];
    for (let k = 0; k < rank; k++) {
      const at = d.pos;
      const id = d.count(`dimension id ${k} of '${name}'`);
      if (id >= dimensions.length) {
        d.fail(
          at,
          `variable '${name}' names dimension id ${id}, but there are ${dimensions.length}`,
        );
      }
      if (id === recDim && k > 0) {
        d.fail(
          at,
          `variable '${name}' uses the unlimited dimension at index ${k}; it must be the first`,
        );
      }
      ids.push(id);
    }
    const dims = rank === 0 ? NO_DIMS : ids;
    const vattrs = d.attributes(variant, `variable '${name}'`);
    const type = d.type(variant, `variable '${name}'`);
    const storedVsize = d.count(`vsize of '${name}'`);
    const beginFieldOffset = d.pos;
    const begin = d.begin(`begin of '${name}'`);
    variables.push({ name, type, dims, attributes: vattrs, storedVsize, begin, beginFieldOffset });
  }
  return {
    variant,
    dimensions,
    attributes,
    variables,
    storedNumrecs,
    headerBytes: d.pos,
    departures: d.departures,
  };
}
