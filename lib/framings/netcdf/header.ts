/**
 * netCDF classic headers: encoding a schema (with its data layout) and decoding a header
 * from a byte source with every field checked.
 * @module
 */
import { copySwapped } from "../../bytes/byteswap.ts";
import { FormatError, UsageError } from "../../core/errors.ts";
import type { ByteSource, TypedArray } from "../types.ts";
import { MAX_INDEXED_OBJECTS } from "../kit.ts";
import {
  enc,
  encodeValues,
  fillBytes,
  fillPattern,
  FORMAT,
  isCdf5Type,
  NC_TYPE_CODE,
  type NcAttribute,
  type NcDimension,
  type NcLayout,
  type NcSchema,
  type NcType,
  ncTypeSize,
  type NcValues,
  type NcVariable,
  type NcVariant,
  type NcVarLayout,
  pad4,
  recordDimId,
  slabOf,
  STREAMING_NUMRECS,
  typedFor,
  TYPES,
  valueCount,
} from "./model.ts";

const dec = new TextDecoder("utf-8", { fatal: true });
const lenientDec = new TextDecoder("utf-8");

const TAG_DIMENSION = 0x0a;
const TAG_VARIABLE = 0x0b;
const TAG_ATTRIBUTE = 0x0c;

// ---------------------------------------------------------------------------------------------
// Header encoding
// ---------------------------------------------------------------------------------------------

class HeaderEncoder {
  #buf = new Uint8Array(1024);
  #view = new DataView(this.#buf.buffer);
  pos = 0;
  readonly #wide: boolean;
  readonly #beginWide: boolean;

  constructor(variant: NcVariant) {
    this.#wide = variant === 5;
    this.#beginWide = variant !== 1;
  }

  #ensure(n: number): void {
    if (this.pos + n <= this.#buf.length) return;
    let cap = this.#buf.length * 2;
    while (cap < this.pos + n) cap *= 2;
    const next = new Uint8Array(cap);
    next.set(this.#buf.subarray(0, this.pos));
    this.#buf = next;
    this.#view = new DataView(next.buffer);
  }

  u32(v: number): void {
    this.#ensure(4);
    this.#view.setUint32(this.pos, v, false);
    this.pos += 4;
  }

  u64(v: number): void {
    this.#ensure(8);
    this.#view.setBigUint64(this.pos, BigInt(v), false);
    this.pos += 8;
  }

  /** A count, length, rank, dimid or vsize: 4 bytes, 8 in CDF-5. */
  count(v: number): void {
    if (this.#wide) this.u64(v);
    else this.u32(v);
  }

  begin(v: number): void {
    if (this.#beginWide) this.u64(v);
    else this.u32(v);
  }

  bytes(b: Uint8Array): void {
    this.#ensure(b.length + 3);
    this.#buf.set(b, this.pos);
    this.pos += b.length;
    const padded = pad4(this.pos);
    this.#buf.fill(0, this.pos, padded);
    this.pos = padded;
  }

  name(s: string): void {
    const b = enc.encode(s.normalize("NFC"));
    this.count(b.length);
    this.bytes(b);
  }

  absent(): void {
    this.u32(0);
    this.count(0);
  }

  attributes(list: readonly NcAttribute[]): void {
    if (list.length === 0) return this.absent();
    this.u32(TAG_ATTRIBUTE);
    this.count(list.length);
    for (const a of list) {
      this.name(a.name);
      this.u32(NC_TYPE_CODE[a.type]);
      this.count(valueCount(a.values));
      this.bytes(encodeValues(a.type, a.values));
    }
  }

  result(): Uint8Array {
    return this.#buf.slice(0, this.pos);
  }
}

function checkSchema(schema: NcSchema): void {
  const { variant } = schema;
  if (variant !== 1 && variant !== 2 && variant !== 5) {
    throw new UsageError(`netcdf: variant must be 1, 2 or 5, got ${String(variant)}`);
  }
  let unlimited = 0;
  for (const d of schema.dimensions) {
    if (!Number.isSafeInteger(d.length) || d.length < 0) {
      throw new UsageError(`netcdf: dimension '${d.name}' has bad length ${d.length}`);
    }
    if (d.length === 0) unlimited++;
    if (variant !== 5 && d.length > 0x7fffffff) {
      throw new UsageError(
        `netcdf: dimension '${d.name}' of ${d.length} is too long for CDF-${variant}; use variant 5`,
      );
    }
  }
  if (unlimited > 1) throw new UsageError("netcdf: at most one dimension may be unlimited");
  const rec = recordDimId(schema.dimensions);
  const all = [...schema.attributes, ...schema.variables.flatMap((v) => v.attributes)];
  for (const v of schema.variables) {
    if (variant !== 5 && isCdf5Type(v.type)) {
      throw new UsageError(
        `netcdf: variable '${v.name}' of type ${v.type} needs variant 5 (CDF-5)`,
      );
    }
    v.dims.forEach((id, k) => {
      if (!(id >= 0 && id < schema.dimensions.length)) {
        throw new UsageError(`netcdf: variable '${v.name}' names dimension id ${id}`);
      }
      if (id === rec && k > 0) {
        throw new UsageError(
          `netcdf: variable '${v.name}' uses the record dimension other than first`,
        );
      }
    });
  }
  for (const a of all) {
    if (variant !== 5 && isCdf5Type(a.type)) {
      throw new UsageError(
        `netcdf: attribute '${a.name}' of type ${a.type} needs variant 5 (CDF-5)`,
      );
    }
  }
}

/** Computes where every variable's data goes, exactly as netCDF-C 4.9's `nc_enddef` (no reserved space). */
export function layoutSchema(schema: NcSchema): NcLayout {
  checkSchema(schema);
  const headerBytes = encodeHeader(schema, null, 0).length;
  const rec = recordDimId(schema.dimensions);
  const shapes = schema.variables.map((v) => {
    const isRec = v.dims.length > 0 && v.dims[0] === rec;
    const dims = isRec ? v.dims.slice(1) : v.dims;
    return { isRec, shape: dims.map((id) => schema.dimensions[id]!.length) };
  });
  const out: NcVarLayout[] = [];
  let cursor = headerBytes;
  const begins = new Array<number>(schema.variables.length);
  // Fixed variables first, then record variables, each group in header order.
  for (const pass of [false, true]) {
    schema.variables.forEach((v, i) => {
      if (shapes[i]!.isRec !== pass) return;
      begins[i] = cursor;
      cursor += slabOf(v.type, shapes[i]!.shape).paddedBytes;
    });
  }
  let recvars = 0;
  let recsize = 0;
  let fixedEnd = headerBytes;
  let recordBegin = -1;
  schema.variables.forEach((v, i) => {
    const { isRec, shape } = shapes[i]!;
    const slab = slabOf(v.type, shape);
    const begin = begins[i]!;
    const limit = variantLimit(schema.variant, begin, slab.paddedBytes);
    if (limit !== null) throw new UsageError(`netcdf: ${limit} ('${v.name}')`);
    if (isRec) {
      recvars++;
      recsize += slab.paddedBytes;
      if (recordBegin < 0) recordBegin = begin;
    } else {
      fixedEnd = Math.max(fixedEnd, begin + slab.paddedBytes);
    }
    out.push({
      name: v.name,
      type: v.type,
      record: isRec,
      shape,
      ...slab,
      begin,
      fill: fillBytes(v),
    });
  });
  if (recvars === 1) recsize = out.find((v) => v.record)!.slabBytes; // single record variable: no padding
  return {
    headerBytes,
    vars: out,
    recordBegin: recordBegin < 0 ? fixedEnd : recordBegin,
    recsize,
    fixedEnd,
  };
}

function variantLimit(
  variant: NcVariant,
  begin: number,
  vsize: number,
): string | null {
  if (variant === 1 && begin > 0x7fffffff) {
    return `data offset ${begin} does not fit CDF-1; use variant 2 or 5`;
  }
  if (variant !== 5 && vsize > 0xfffffffc) {
    return `variable of ${vsize} bytes per record is too large for CDF-${variant}; use variant 5`;
  }
  return null;
}

/**
 * Encodes a header. `layout` gives the begins (null writes zeros, to measure the size);
 * `numrecs` is the record count, or {@link STREAMING_NUMRECS} for all ones.
 */
export function encodeHeader(
  schema: NcSchema,
  layout: NcLayout | null,
  numrecs: number,
): Uint8Array {
  const e = new HeaderEncoder(schema.variant);
  e.bytes(new Uint8Array([0x43, 0x44, 0x46, schema.variant]));
  writeNumrecs(e, schema.variant, numrecs);
  if (schema.dimensions.length === 0) {
    e.absent();
  } else {
    e.u32(TAG_DIMENSION);
    e.count(schema.dimensions.length);
    for (const d of schema.dimensions) {
      e.name(d.name);
      e.count(d.length);
    }
  }
  e.attributes(schema.attributes);
  if (schema.variables.length === 0) {
    e.absent();
  } else {
    e.u32(TAG_VARIABLE);
    e.count(schema.variables.length);
    schema.variables.forEach((v, i) => {
      e.name(v.name);
      e.count(v.dims.length);
      for (const id of v.dims) e.count(id);
      e.attributes(v.attributes);
      e.u32(NC_TYPE_CODE[v.type]);
      const l = layout?.vars[i];
      const vsize = l ? l.paddedBytes : 0;
      e.count(schema.variant !== 5 && vsize > 0xfffffffc ? 0xffffffff : vsize);
      e.begin(l ? l.begin : 0);
    });
  }
  return e.result();
}

function writeNumrecs(e: HeaderEncoder, variant: NcVariant, numrecs: number): void {
  if (variant === 5) {
    if (numrecs === STREAMING_NUMRECS) {
      e.u32(0xffffffff);
      e.u32(0xffffffff);
    } else e.u64(numrecs);
  } else e.u32(numrecs === STREAMING_NUMRECS ? 0xffffffff : numrecs);
}

/** The bytes of the numrecs field (4 bytes, 8 in CDF-5) for a rewrite at byte 4. */
export function numrecsBytes(variant: NcVariant, numrecs: number): Uint8Array {
  const e = new HeaderEncoder(variant);
  writeNumrecs(e, variant, numrecs);
  return e.result();
}

/**
 * Encodes a whole file as netCDF-C writes it: header, fixed data, `numrecs` records. `data` maps
 * variable names to all their values in row-major order (records included). With `fill` (the
 * default, as ncgen) missing values and padding are the fill value; without (NC_NOFILL, as
 * nccopy) they are zero bytes. Used to reproduce the golden files byte for byte.
 */
export function encodeFile(
  schema: NcSchema,
  data: Readonly<Record<string, NcValues>>,
  numrecs: number,
  options: { readonly fill?: boolean } = {},
): Uint8Array {
  const fill = options.fill ?? true;
  const layout = layoutSchema(schema);
  const header = encodeHeader(schema, layout, numrecs);
  const end = layout.vars.some((v) => v.record)
    ? layout.recordBegin + numrecs * layout.recsize
    : layout.fixedEnd;
  const file = new Uint8Array(schema.variables.length === 0 ? header.length : end);
  file.set(header);
  for (const v of layout.vars) {
    const values = data[v.name];
    const bytes = values === undefined ? new Uint8Array(0) : encodeValues(v.type, values);
    if (!v.record) {
      const slot = file.subarray(v.begin, v.begin + v.paddedBytes);
      if (fill) fillPattern(slot, v.fill);
      slot.set(bytes.subarray(0, v.slabBytes));
      continue;
    }
    const stride = layout.recsize;
    const slab = layout.vars.filter((x) => x.record).length === 1 ? v.slabBytes : v.paddedBytes;
    for (let r = 0; r < numrecs; r++) {
      const at = v.begin + r * stride;
      const slot = file.subarray(at, at + slab);
      if (fill) fillPattern(slot, v.fill);
      slot.set(bytes.subarray(r * v.slabBytes, Math.min(bytes.length, (r + 1) * v.slabBytes)));
    }
  }
  return file;
}

// ---------------------------------------------------------------------------------------------
// Header decoding
// ---------------------------------------------------------------------------------------------

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
