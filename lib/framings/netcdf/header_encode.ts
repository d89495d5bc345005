/**
 * netCDF classic headers written: a schema checked and laid out (every variable's begin), and its
 * header encoded, with the numrecs field alone for a writer's later updates.
 * @module
 */
import { UsageError } from "../../core/errors.ts";
import {
  enc,
  encodeValues,
  fillBytes,
  fillPattern,
  isCdf5Type,
  NC_TYPE_CODE,
  type NcAttribute,
  type NcLayout,
  type NcSchema,
  type NcValues,
  type NcVariant,
  type NcVarLayout,
  pad4,
  recordDimId,
  slabOf,
  STREAMING_NUMRECS,
  TAG_ATTRIBUTE,
  TAG_DIMENSION,
  TAG_VARIABLE,
  valueCount,
} from "./model.ts";

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
