/**
 * The frame index of a netCDF classic file: frame r is record r (every record variable's
 * slab), or one frame of the fixed variables when there are no records (no record variables,
 * or zero records).
 * @module
 */
import type {
  ByteOrder,
  ByteSource,
  ChunkRef,
  FrameIndex,
  StoredVariable,
  TypedArray,
} from "../types.ts";
import type { NcDecodedAttribute, NcHeader } from "./header_decode.ts";
import { FORMAT, KIND_NAMES, NC_TYPE_DTYPE, STREAMING_NUMRECS } from "./model.ts";
import { openNetcdf } from "./reader.ts";
import { chunkNameOf } from "./schema.ts";

// ---------------------------------------------------------------------------------------------
// Frame index
// ---------------------------------------------------------------------------------------------

function jsonValues(values: string | TypedArray): unknown {
  if (typeof values === "string") return values;
  if (values instanceof BigInt64Array || values instanceof BigUint64Array) {
    return Array.from(
      values,
      (b) => (b >= -(2n ** 53n) && b <= 2n ** 53n ? Number(b) : b.toString()),
    );
  }
  return Array.from(values);
}

/** The frame index of a netCDF classic file read through a byte source (FormatError when malformed). */
export class NetcdfIndex implements FrameIndex {
  readonly framing = FORMAT;
  readonly frameCount: number;
  readonly warnings: readonly string[];
  readonly departures: readonly string[];
  /** Data never written (past the end of the file) reads as zeros, as in libnetcdf. */
  readonly pastEndReadsZero = true;
  /** Every netCDF classic element is stored big-endian. */
  // mutant: netcdf-order
  readonly order: ByteOrder = "big";
  readonly #header: NcHeader;
  readonly #numrecs: number;
  readonly #recordBegin: number;
  /** Bytes from one record to the next (0 without record variables). */
  readonly #recsize: number;
  /** Per variable, in header order: data bytes of the variable or of one record's slab. */
  readonly #slab: Float64Array;
  /** Per variable: the slab padded to 4 bytes (its vsize). */
  readonly #padded: Float64Array;
  /** Per variable: 1 for a record variable. */
  readonly #record: Uint8Array;
  /** Per variable: the shape without the record dimension (scalars share one array). */
  readonly #shapes: readonly (readonly number[])[];
  /** The variables a frame holds (record 0's, or the fixed ones), by index in storage order. */
  readonly #chosen: Uint32Array;
  readonly #stride: number;

  constructor(src: ByteSource) {
    const f = openNetcdf(src);
    // the per-variable layout kept in typed arrays (the layout's objects are not kept)
    this.#header = f.header;
    this.#numrecs = f.numrecs;
    this.#recordBegin = f.layout.recordBegin;
    this.#recsize = f.layout.recsize;
    this.warnings = f.warnings;
    this.departures = f.departures;
    const { vars, recsize } = f.layout;
    this.#slab = Float64Array.from(vars, (v) => v.slabBytes);
    this.#padded = Float64Array.from(vars, (v) => v.paddedBytes);
    this.#record = Uint8Array.from(vars, (v) => (v.record ? 1 : 0));
    this.#shapes = vars.map((v) => v.shape);
    // Frames are records; a file without records (no record variables, or none written yet)
    // reads as one frame of its fixed variables, so its data is still read.
    const hasRecords = vars.some((v) => v.record) &&
      (f.numrecs > 0 || vars.every((v) => v.record));
    let count = 0;
    for (const v of vars) if (v.record === hasRecords) count++;
    const chosen = new Uint32Array(count);
    let k = 0, sorted = true;
    for (let i = 0; i < vars.length; i++) {
      if (vars[i]!.record !== hasRecords) continue;
      if (k > 0 && vars[i]!.begin < vars[chosen[k - 1]!]!.begin) sorted = false;
      chosen[k++] = i;
    }
    if (!sorted) chosen.sort((a, b) => vars[a]!.begin - vars[b]!.begin);
    this.#chosen = chosen;
    this.#stride = hasRecords ? recsize : 0;
    this.frameCount = hasRecords ? f.numrecs : chosen.length > 0 ? 1 : 0;
  }

  /** The chunks of `frame`, made when asked (the index keeps only the variables' numbers). */
  chunks(frame: number): readonly ChunkRef[] {
    const shift = frame * this.#stride;
    const vars = this.#header.variables;
    const out = new Array<ChunkRef>(this.#chosen.length);
    for (let k = 0; k < out.length; k++) {
      const i = this.#chosen[k]!;
      const v = vars[i]!;
      out[k] = {
        name: chunkNameOf(v),
        dtype: NC_TYPE_DTYPE[v.type],
        shape: this.#shapes[i]!,
        offset: v.begin + shift,
        bytes: this.#slab[i]!,
        // mutant: netcdf-frame-order
        order: this.order,
      };
    }
    return out;
  }

  /** Every variable with the pieces of its data, one at a time (none made in advance). */
  *variables(): Generator<StoredVariable> {
    const vars = this.#header.variables;
    for (let i = 0; i < vars.length; i++) {
      const v = vars[i]!;
      const slab = this.#slab[i]!;
      const pieces: [number, number][] = [];
      if (this.#record[i] === 0) pieces.push([v.begin, slab]);
      else {for (let r = 0; r < this.#numrecs; r++) {
          pieces.push([v.begin + r * this.#recsize, slab]);
        }}
      yield { name: v.name, dtype: NC_TYPE_DTYPE[v.type], pieces };
    }
  }

  describe(): Record<string, unknown> {
    const h = this.#header;
    const numrecs = this.#numrecs;
    const attrs = (list: readonly NcDecodedAttribute[]) =>
      Object.fromEntries(list.map((a) => [a.name, { type: a.type, values: jsonValues(a.values) }]));
    return {
      kind: KIND_NAMES[h.variant],
      version: h.variant,
      numrecs,
      numrecs_streaming: h.storedNumrecs === STREAMING_NUMRECS,
      header_bytes: h.headerBytes,
      record_begin: this.#recordBegin,
      recsize: this.#recsize,
      ...(this.departures.length > 0 ? { departures: this.departures } : {}),
      dimensions: h.dimensions.map((d) => ({
        name: d.name,
        length: d.length === 0 ? numrecs : d.length,
        unlimited: d.length === 0,
      })),
      attributes: attrs(h.attributes),
      variables: h.variables.map((v, i) => ({
        name: v.name,
        type: v.type,
        dimensions: v.dims.map((id) => h.dimensions[id]!.name),
        record: this.#record[i] === 1,
        shape: this.#shapes[i],
        begin: v.begin,
        vsize: this.#padded[i],
        attributes: attrs(v.attributes),
      })),
    };
  }
}
