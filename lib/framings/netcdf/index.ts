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
  readonly #refs: readonly ChunkRef[]; // record 0 (or the fixed variables)
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
    const chosen = vars
      .map((v, i) => ({ v, d: f.header.variables[i]! }))
      .filter((x) => x.v.record === hasRecords)
      .sort((a, b) => a.v.begin - b.v.begin);
    this.#refs = chosen.map(({ v, d }) => ({
      name: chunkNameOf(d),
      dtype: NC_TYPE_DTYPE[v.type],
      shape: v.shape,
      offset: v.begin,
      bytes: v.slabBytes,
      order: this.order,
    }));
    this.#stride = hasRecords ? recsize : 0;
    this.frameCount = hasRecords ? f.numrecs : chosen.length > 0 ? 1 : 0;
  }

  chunks(frame: number): readonly ChunkRef[] {
    const shift = frame * this.#stride;
    if (shift === 0) return this.#refs;
    return this.#refs.map((r) => ({ ...r, offset: r.offset + shift }));
  }

  variables(): readonly StoredVariable[] {
    const { header: h, layout, numrecs } = this.#file;
    return h.variables.map((v, i) => {
      const l = layout.vars[i]!;
      const pieces: [number, number][] = [];
      if (!l.record) pieces.push([l.begin, l.slabBytes]);
      else {for (let r = 0; r < numrecs; r++) {
          pieces.push([l.begin + r * layout.recsize, l.slabBytes]);
        }}
      return { name: v.name, dtype: NC_TYPE_DTYPE[v.type], pieces };
    });
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
