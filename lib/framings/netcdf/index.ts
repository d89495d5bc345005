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
import type { NcDecodedAttribute } from "./header.ts";
import { FORMAT, KIND_NAMES, NC_TYPE_DTYPE, STREAMING_NUMRECS } from "./model.ts";
import type { NcFile } from "./reader.ts";
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
  readonly order: ByteOrder = "big";
  readonly #file: NcFile;
  /** The variables a frame holds (record 0's, or the fixed ones), by index in storage order. */
  readonly #chosen: Uint32Array;
  readonly #stride: number;

  constructor(src: ByteSource) {
    const f = openNetcdf(src);
    this.#file = f;
    this.warnings = f.warnings;
    this.departures = f.departures;
    const { vars, recsize } = f.layout;
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
    const { header: h, layout } = this.#file;
    const out = new Array<ChunkRef>(this.#chosen.length);
    for (let k = 0; k < out.length; k++) {
      const i = this.#chosen[k]!;
      const v = layout.vars[i]!;
      out[k] = {
        name: chunkNameOf(h.variables[i]!),
        dtype: NC_TYPE_DTYPE[v.type],
        shape: v.shape,
        offset: v.begin + shift,
        bytes: v.slabBytes,
        order: this.order,
      };
    }
    return out;
  }

  /** Every variable with the pieces of its data, one at a time (none made in advance). */
  *variables(): Generator<StoredVariable> {
    const { header: h, layout, numrecs } = this.#file;
    for (let i = 0; i < h.variables.length; i++) {
      const l = layout.vars[i]!;
      const pieces: [number, number][] = [];
      if (!l.record) pieces.push([l.begin, l.slabBytes]);
      else {for (let r = 0; r < numrecs; r++) {
          pieces.push([l.begin + r * layout.recsize, l.slabBytes]);
        }}
      yield { name: h.variables[i]!.name, dtype: NC_TYPE_DTYPE[l.type], pieces };
    }
  }

  describe(): Record<string, unknown> {
    const { header: h, layout, numrecs } = this.#file;
    const attrs = (list: readonly NcDecodedAttribute[]) =>
      Object.fromEntries(list.map((a) => [a.name, { type: a.type, values: jsonValues(a.values) }]));
    return {
      kind: KIND_NAMES[h.variant],
      version: h.variant,
      numrecs,
      numrecs_streaming: h.storedNumrecs === STREAMING_NUMRECS,
      header_bytes: h.headerBytes,
      record_begin: layout.recordBegin,
      recsize: layout.recsize,
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
        record: layout.vars[i]!.record,
        shape: layout.vars[i]!.shape,
        begin: v.begin,
        vsize: layout.vars[i]!.paddedBytes,
        attributes: attrs(v.attributes),
      })),
    };
  }
}
