/**
 * Opening a netCDF classic file for reading: the decoded header checked against the file
 * (offsets, overlaps, the size the records need) and the resolved record count.
 * @module
 */
import { FormatError } from "../../core/errors.ts";
import type { ByteSource } from "../types.ts";
import type { NcHeader } from "./header_decode.ts";
import { decodeHeader } from "./header_decode.ts";
import type { NcLayout, NcVarLayout } from "./model.ts";
import {
  DEFAULT_FILL,
  fillBytes,
  FORMAT,
  recordDimId,
  slabOf,
  STREAMING_NUMRECS,
} from "./model.ts";

/** Most bytes of data a readable file may place past its end (never written; read as zeros). */
export const MAX_NEVER_WRITTEN_BYTES = 1 << 30;
/** Most records a readable file may place past its end, or hold when its records are empty. */
export const MAX_RECORDS_PAST_END = 1 << 16;

/** The shape of every scalar variable (one array, not one a variable). */
const NO_SHAPE: readonly number[] = Object.freeze([]);

/** True when the variables' begins never decrease. */
function inOrder(vars: readonly NcVarLayout[]): boolean {
  for (let i = 1; i < vars.length; i++) if (vars[i]!.begin < vars[i - 1]!.begin) return false;
  return true;
}

/** A checked file: header, data layout from the stored begins, and the resolved record count. */
export interface NcFile {
  /** The decoded header. */
  readonly header: NcHeader;
  /** Per-variable layout with the stored begins. */
  readonly layout: NcLayout;
  /** Number of records (derived from the file length when numrecs is streaming). */
  readonly numrecs: number;
  /** Notes such as a recomputed vsize or a partial last record. */
  readonly warnings: readonly string[];
  /** Departures from the specification libnetcdf reads anyway (header quirks, data never written). */
  readonly departures: readonly string[];
  /** The first data the header places past the end of the file, when some was never written. */
  readonly missingData?: { readonly offset: number; readonly problem: string };
}

/** A failure at a byte offset of the file being opened: throws its FormatError. */
type Fail = (offset: number, problem: string) => never;

/**
 * The data layout of every variable of `h` from its stored begin: record or fixed, shape, slab
 * and padded bytes, fill. A stored vsize that disagrees with the computed one, and a _FillValue
 * of another type than its variable's, are warnings (the computed size and the default fill are
 * used, as libnetcdf does).
 */
function variableLayouts(h: NcHeader, fail: Fail, warnings: string[]): NcVarLayout[] {
  const rec = recordDimId(h.dimensions);
  return h.variables.map((v) => {
    const isRec = v.dims.length > 0 && v.dims[0] === rec;
    const shape = v.dims.length <= (isRec ? 1 : 0)
      ? NO_SHAPE
      : (isRec ? v.dims.slice(1) : v.dims).map((id) => h.dimensions[id]!.length);
    const { slabBytes, paddedBytes } = slabOf(v.type, shape);
    if (!Number.isSafeInteger(slabBytes)) fail(-1, `variable '${v.name}' is too large`);
    const clamp = h.variant !== 5 && paddedBytes > 0xfffffffc && v.storedVsize === 0xffffffff;
    if (v.storedVsize !== paddedBytes && !clamp) {
      warnings.push(
        `variable '${v.name}': stored vsize ${v.storedVsize}, computed ${paddedBytes} (using the computed size)`,
      );
    }
    let fill: Uint8Array;
    try {
      fill = fillBytes(v);
    } catch {
      fill = new Uint8Array(DEFAULT_FILL[v.type]);
      warnings.push(
        `variable '${v.name}': _FillValue type differs from the variable's; using the default fill`,
      );
    }
    return {
      name: v.name,
      type: v.type,
      record: isRec,
      shape,
      slabBytes,
      paddedBytes,
      begin: v.begin,
      fill,
    };
  });
}

/** Where the record data lies: the records' first byte and the bytes of one record. */
interface RecordSpan {
  readonly recordBegin: number;
  readonly recsize: number;
}

/**
 * Checks where the variables lie, as `nc_open` does: no begin inside the header, no fixed
 * variable overlapping another or the record data, every record variable inside its record.
 * `fixed` and `recs`: the fixed and record variables of `vars`, in header order.
 */
function checkPlacement(
  h: NcHeader,
  vars: readonly NcVarLayout[],
  fixed: readonly NcVarLayout[],
  recs: readonly NcVarLayout[],
  span: RecordSpan,
  fail: Fail,
): void {
  const { recordBegin, recsize } = span;
  for (const [i, v] of vars.entries()) {
    if (v.begin < h.headerBytes) {
      fail(
        h.variables[i]!.beginFieldOffset,
        `begin ${v.begin} of variable '${v.name}' lies inside the header (${h.headerBytes} bytes)`,
      );
    }
  }
  // Fixed variables must not overlap each other (in header order, as written, no sort needed).
  const sorted = inOrder(fixed) ? fixed : [...fixed].sort((a, b) => a.begin - b.begin);
  for (let i = 1; i < sorted.length; i++) {
    const p = sorted[i - 1]!, q = sorted[i]!;
    if (p.begin + p.slabBytes > q.begin) {
      fail(
        q.begin,
        `variable '${q.name}' at byte ${q.begin} overlaps '${p.name}' [${p.begin}, ${
          p.begin + p.slabBytes
        })`,
      );
    }
  }
  if (recs.length === 0) return;
  const lastFixed = sorted[sorted.length - 1];
  if (lastFixed !== undefined && lastFixed.begin + lastFixed.slabBytes > recordBegin) {
    fail(
      recordBegin,
      `record data at byte ${recordBegin} overlaps fixed variable '${lastFixed.name}'`,
    );
  }
  const inRecord = [...recs].sort((a, b) => a.begin - b.begin);
  for (const [k, v] of inRecord.entries()) {
    const rel = v.begin - recordBegin;
    const next = inRecord[k + 1];
    const limit = next === undefined ? recsize : next.begin - recordBegin;
    if (rel + v.slabBytes > limit) {
      fail(
        v.begin,
        `record variable '${v.name}' (${v.slabBytes} bytes at byte ${v.begin}) does not fit its record of ${recsize} bytes`,
      );
    }
  }
}

/** The record count of a file, and the data its header places past the file's end. */
interface ResolvedRecords {
  readonly numrecs: number;
  /** Bytes of data past the end of the file (never written). */
  readonly neverWritten: number;
  readonly missingData?: NcFile["missingData"];
}

/**
 * The number of records (the stored count, or for a streaming count the whole records the file
 * holds), and the data past the end of the file, which was never written: libnetcdf reads it as
 * zeros, and each stretch of it is a departure and a warning (pushed to both lists).
 */
function resolveRecords(
  src: ByteSource,
  h: NcHeader,
  fixed: readonly NcVarLayout[],
  recs: readonly NcVarLayout[],
  span: RecordSpan,
  warnings: string[],
  departures: string[],
): ResolvedRecords {
  const { recordBegin, recsize } = span;
  let missingData: NcFile["missingData"];
  let neverWritten = 0;
  const missing = (what: string, from: number, to: number) => {
    neverWritten += to - from;
    const text = `${what} [${from}, ${to}) lies past the end of the file (${src.size} bytes): ` +
      `never written, read as zeros as libnetcdf does`;
    departures.push(text);
    warnings.push(text);
    missingData ??= { offset: src.size, problem: text };
  };
  for (const v of fixed) {
    if (v.begin + v.slabBytes > src.size) {
      missing(`data of variable '${v.name}'`, Math.max(v.begin, src.size), v.begin + v.slabBytes);
    }
  }
  let numrecs = h.storedNumrecs;
  if (numrecs === STREAMING_NUMRECS) {
    numrecs = recs.length === 0 || recsize === 0
      ? 0
      : Math.floor(Math.max(0, src.size - recordBegin) / recsize);
    const extra = recs.length === 0 || recsize === 0
      ? 0
      : (src.size - recordBegin) - numrecs * recsize;
    if (extra > 0) {
      warnings.push(`streaming numrecs: ${numrecs} whole records, ${extra} trailing bytes ignored`);
    }
  } else if (recs.length > 0 && numrecs > 0) {
    const need = recordBegin + numrecs * recsize;
    if (need > src.size) {
      missing(
        `data of ${numrecs} records of ${recsize} bytes`,
        Math.max(recordBegin, src.size),
        need,
      );
    }
  }
  return { numrecs, neverWritten, ...(missingData ? { missingData } : {}) };
}

/**
 * Refuses a header that places more than a gibibyte of data, or more than a million records,
 * past the end of its file: such a file was not merely synced before its data (O(1), before any
 * index of those records is built, rather than read gigabytes of zeros).
 */
function refuseDamaged(
  src: ByteSource,
  recs: readonly NcVarLayout[],
  span: RecordSpan,
  resolved: ResolvedRecords,
  fail: Fail,
): void {
  const { recordBegin, recsize } = span;
  const { numrecs, neverWritten } = resolved;
  const recordsPastEnd = recs.length === 0 ? 0 : Math.max(
    0,
    numrecs - (recsize === 0 ? numrecs : Math.floor(Math.max(0, src.size - recordBegin) / recsize)),
  );
  if (neverWritten > MAX_NEVER_WRITTEN_BYTES || recordsPastEnd > MAX_RECORDS_PAST_END) {
    fail(
      src.size,
      `the header places ${neverWritten} bytes (${recordsPastEnd} records) of data past the end ` +
        `of the file (${src.size} bytes); more than ${MAX_NEVER_WRITTEN_BYTES} bytes or ` +
        `${MAX_RECORDS_PAST_END} records never written: the file is probably damaged`,
    );
  }
  if (recsize === 0 && recs.length > 0 && numrecs > MAX_RECORDS_PAST_END) {
    fail(
      4,
      `numrecs ${numrecs} with records of 0 bytes: more than ${MAX_RECORDS_PAST_END} empty ` +
        `records; the file is probably damaged`,
    );
  }
}

/**
 * Decodes a header and checks it against the file as libnetcdf's `nc_open` does: offsets inside
 * the header and overlaps are errors. Data that lies (wholly or partly) past the end of the file
 * was never written (fill off, a file synced before its data): libnetcdf opens such a file and
 * reads the missing bytes as zeros, and so does this reader (a warning and a departure).
 */
export function openNetcdf(src: ByteSource): NcFile {
  const h = decodeHeader(src);
  const fail: Fail = (offset, problem) => {
    throw new FormatError(FORMAT, src.path, offset, problem);
  };
  const warnings: string[] = [];
  const vars = variableLayouts(h, fail, warnings);
  const fixed = vars.filter((v) => !v.record);
  const recs = vars.filter((v) => v.record);
  let recsize = recs.reduce((a, v) => a + v.paddedBytes, 0);
  if (recs.length === 1) recsize = recs[0]!.slabBytes;
  const recordBegin = recs.length > 0
    ? recs.reduce((a, v) => Math.min(a, v.begin), Infinity)
    : h.headerBytes;
  const fixedEnd = fixed.reduce((a, v) => Math.max(a, v.begin + v.paddedBytes), h.headerBytes);
  const span: RecordSpan = { recordBegin, recsize };
  checkPlacement(h, vars, fixed, recs, span, fail);
  const departures = [...h.departures];
  const resolved = resolveRecords(src, h, fixed, recs, span, warnings, departures);
  refuseDamaged(src, recs, span, resolved, fail);
  return {
    header: h,
    layout: { headerBytes: h.headerBytes, vars, recordBegin, recsize, fixedEnd },
    numrecs: resolved.numrecs,
    warnings,
    departures,
    ...(resolved.missingData ? { missingData: resolved.missingData } : {}),
  };
}
