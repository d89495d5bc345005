/**
 * The netCDF classic frame writer: a new file (one record per frame) or an append along the
 * record dimension, byte for byte as netCDF-C writes it.
 * @module
 */
import { copySwapped } from "../../bytes/byteswap.ts";
import { FormatError, UsageError } from "../../core/errors.ts";
import { checkAppendOrder } from "../raw.ts";
import type {
  ByteSource,
  Chunk,
  DType,
  Frame,
  FrameWriter,
  WriteOp,
  WriterOptions,
} from "../types.ts";
import { encodeHeader, layoutSchema, numrecsBytes } from "./header_encode.ts";

import type { NcAttribute, NcLayout, NcSchema, NcVariant, NcVarLayout } from "./model.ts";
import {
  fillPattern,
  FORMAT,
  KIND_NAMES,
  NC_TYPE_DTYPE,
  ncTypeSize,
  recordDimId,
  STREAMING_NUMRECS,
} from "./model.ts";
import type { NcFile } from "./reader.ts";
import { openNetcdf } from "./reader.ts";
import type { NcChunkSpec, NetcdfWriterOptions } from "./schema.ts";
import { chunkNameOf, schemaForChunks } from "./schema.ts";
import { chunkBytes } from "../kit.ts";

/** Where one chunk of every frame goes inside a record. */
interface RecordSlot {
  /** Chunk name frames carry (the `chunk_name` attribute, else the variable name). */
  readonly chunk: string;
  /** netCDF variable name. */
  readonly variable: string;
  /** Element type. */
  readonly dtype: DType;
  /** Shape of one record's slab. */
  readonly shape: readonly number[];
  /** Offset of the slab inside the record, bytes. */
  readonly rel: number;
  /** Slab size, bytes, unpadded. */
  readonly bytes: number;
  /** Element size, bytes. */
  readonly size: number;
}

/** What a writer needs to lay down records: variant, where records go, slots, record templates. */
interface RecordPlan {
  /** Version byte of the file (decides the numrecs width and the record limit). */
  readonly variant: NcVariant;
  /** Offset of record 0, bytes. */
  readonly recordBegin: number;
  /** Bytes from one record to the next. */
  readonly recsize: number;
  /** Slots in the order frames give their chunks. */
  readonly slots: readonly RecordSlot[];
  /** One record whose padding holds fill values; each frame copies its slabs in. */
  readonly record: Uint8Array;
  /** One record of fill values, written first with the `fill` option (else empty). */
  readonly fillRecord: Uint8Array;
}

/**
 * The record plan of `vars` (record variables with their chunk names, in frame order). Padding
 * after a slab, up to its padded size (or the next slab, or the record's end: none with a single
 * record variable), holds the variable's fill value, as netCDF-C's record fill leaves it.
 */
function recordPlan(
  variant: NcVariant,
  layout: NcLayout,
  vars: readonly { readonly v: NcVarLayout; readonly chunk: string }[],
  fill: boolean,
): RecordPlan {
  const { recordBegin, recsize } = layout;
  const record = new Uint8Array(recsize);
  const fillRecord = new Uint8Array(fill ? recsize : 0);
  const byRel = [...vars].sort((a, b) => a.v.begin - b.v.begin);
  byRel.forEach(({ v }, k) => {
    const rel = v.begin - recordBegin;
    const next = byRel[k + 1];
    const end = Math.min(
      rel + v.paddedBytes,
      next === undefined ? recsize : next.v.begin - recordBegin,
    );
    fillPattern(record.subarray(rel + v.slabBytes, end), v.fill);
    if (fill) fillPattern(fillRecord.subarray(rel, end), v.fill);
  });
  const slots = vars.map(({ v, chunk }) => ({
    chunk,
    variable: v.name,
    dtype: NC_TYPE_DTYPE[v.type],
    shape: v.shape,
    rel: v.begin - recordBegin,
    bytes: v.slabBytes,
    size: ncTypeSize(v.type),
  }));
  return { variant, recordBegin, recsize, slots, record, fillRecord };
}

function describeSlot(s: RecordSlot): string {
  const variable = s.variable === s.chunk ? "" : ` (variable '${s.variable}')`;
  return `'${s.chunk}'${variable} ${s.dtype} [${s.shape.join("x")}]`;
}

function describeChunk(c: Chunk): string {
  return `'${c.name}' ${c.dtype} [${c.shape.join("x")}]`;
}

function sameShape(a: readonly number[], b: readonly number[]): boolean {
  return a.length === b.length && a.every((x, j) => x === b[j]);
}

/** What a writer continuing an existing file knows about it. */
interface AppendState {
  /** Path for messages. */
  readonly path: string;
  /** numrecs is all ones (streaming): it is left so, the count stays derived from the length. */
  readonly streaming: boolean;
  /** Slot index of each chunk name (the first slot when names repeat). */
  readonly byName: ReadonlyMap<string, number>;
  /** Per-frame marks of the slots already filled (names matched, not positions). */
  readonly used: Uint8Array;
  /** numrecs as it now stands in the file. */
  written: number;
}

class NetcdfWriter implements FrameWriter {
  readonly #options: NetcdfWriterOptions;
  #plan: RecordPlan | null = null;
  #numrecs = 0;
  #started = false;
  #append: AppendState | undefined;

  constructor(options: NetcdfWriterOptions) {
    this.#options = options;
  }

  /**
   * A writer that continues `file` at record `numrecs`, with the same record variables: frames
   * give one chunk per record variable, matched by chunk name. Nothing is written until a frame.
   */
  static continuing(file: NcFile, path: string, options: NetcdfWriterOptions): NetcdfWriter {
    const h = file.header;
    const recs = file.layout.vars
      .map((v, i) => ({ v, chunk: chunkNameOf(h.variables[i]!) }))
      .filter((x) => x.v.record)
      .sort((a, b) => a.v.begin - b.v.begin);
    if (recs.length === 0) {
      const what = h.variables.length === 0
        ? "it has no variables"
        : `it has only fixed-size variables (${h.variables.map((v) => `'${v.name}'`).join(", ")})`;
      throw new UsageError(
        `netcdf: cannot append records to ${path}: ${what}, so no record dimension to grow; write a new file instead`,
      );
    }
    const w = new NetcdfWriter(options);
    w.#plan = recordPlan(h.variant, file.layout, recs, options.fill === true);
    const byName = new Map<string, number>();
    w.#plan.slots.forEach((s, i) => {
      if (!byName.has(s.chunk)) byName.set(s.chunk, i);
    });
    w.#numrecs = file.numrecs;
    w.#started = true;
    w.#append = {
      path,
      streaming: h.storedNumrecs === STREAMING_NUMRECS,
      byName,
      used: new Uint8Array(recs.length),
      written: file.numrecs,
    };
    return w;
  }

  #define(specs: readonly NcChunkSpec[]): WriteOp[] {
    const schema = schemaForChunks(specs, this.#options);
    const layout = layoutSchema(schema);
    this.#plan = recordPlan(
      schema.variant,
      layout,
      layout.vars.map((v, k) => ({ v, chunk: specs[k]!.name })),
      this.#options.fill === true,
    );
    return [{ kind: "write", offset: 0, data: encodeHeader(schema, layout, 0) }];
  }

  begin(): WriteOp[] {
    if (this.#append) return [];
    if (this.#started) throw new Error("netcdf writer: begin() called twice");
    this.#started = true;
    const specs = this.#options.chunks;
    return specs === undefined ? [] : this.#define(specs);
  }

  /** The slot chunk `k` of a frame goes to; throws UsageError when the frame does not fit. */
  #slot(c: Chunk, k: number): RecordSlot {
    const slots = this.#plan!.slots;
    const append = this.#append;
    if (append === undefined) {
      const s = slots[k]!;
      if (c.name !== s.chunk || c.dtype !== s.dtype || !sameShape(c.shape, s.shape)) {
        throw new UsageError(
          `netcdf: frame ${this.#numrecs} chunk ${k} is '${c.name}' ${c.dtype} [${
            c.shape.join("x")
          }], the file's variable is '${s.chunk}' ${s.dtype} [${s.shape.join("x")}]`,
        );
      }
      return s;
    }
    let i = k;
    if (slots[k]!.chunk !== c.name || append.used[k] !== 0) {
      const j = append.byName.get(c.name);
      if (j === undefined) {
        throw new UsageError(
          `netcdf: cannot append chunk '${c.name}' to ${append.path}: the file has no record variable for it (its record variables: ${
            slots.map(describeSlot).join(", ")
          })`,
        );
      }
      i = j;
      // Repeated chunk names (possible in files from other writers): the next unused one.
      while (i < slots.length && (append.used[i] !== 0 || slots[i]!.chunk !== c.name)) i++;
      if (i === slots.length) {
        throw new UsageError(
          `netcdf: cannot append to ${append.path}: frame ${this.#numrecs} gives chunk '${c.name}' twice`,
        );
      }
    }
    append.used[i] = 1;
    const s = slots[i]!;
    if (c.dtype !== s.dtype || !sameShape(c.shape, s.shape)) {
      throw new UsageError(
        `netcdf: cannot append chunk ${describeChunk(c)} to ${append.path}: its record variable ${
          describeSlot(s)
        } holds another type or shape`,
      );
    }
    return s;
  }

  writeFrame(frame: Frame): WriteOp[] {
    const ops: WriteOp[] = this.#plan === null ? this.#define(frame.chunks) : [];
    const plan = this.#plan!;
    const append = this.#append;
    if (frame.chunks.length !== plan.slots.length) {
      throw new UsageError(
        append === undefined
          ? `netcdf: frame ${this.#numrecs} has ${frame.chunks.length} chunks, the file's records have ${plan.slots.length} variables`
          : `netcdf: cannot append a frame of ${frame.chunks.length} chunks (${
            frame.chunks.map(describeChunk).join(", ")
          }) to ${append.path}: its records hold ${plan.slots.length} variables (${
            plan.slots.map(describeSlot).join(", ")
          })`,
      );
    }
    append?.used.fill(0);
    const rec = plan.record;
    frame.chunks.forEach((c, k) => {
      const s = this.#slot(c, k);
      if (c.data.byteLength !== s.bytes) {
        throw new RangeError(
          `chunk '${c.name}': shape needs ${s.bytes} bytes, data has ${c.data.byteLength}`,
        );
      }
      copySwapped(chunkBytes(c), rec.subarray(s.rel, s.rel + s.bytes), s.size);
    });
    if (plan.variant !== 5 && this.#numrecs >= 0xfffffffe) {
      throw new UsageError(
        `netcdf: CDF-${plan.variant} holds at most 4294967294 records; use variant 5`,
      );
    }
    const at = plan.recordBegin + this.#numrecs * plan.recsize;
    if (this.#options.fill) ops.push({ kind: "write", offset: at, data: plan.fillRecord });
    ops.push({ kind: "write", offset: at, data: rec });
    this.#numrecs++;
    if (this.#options.numrecs === "frame" && !append?.streaming) {
      ops.push({ kind: "write", offset: 4, data: numrecsBytes(plan.variant, this.#numrecs) });
      if (append) append.written = this.#numrecs;
    }
    return ops;
  }

  finish(): WriteOp[] {
    const plan = this.#plan;
    if (plan === null) {
      // No frame and no declared chunks: an empty dataset (header only).
      const schema: NcSchema = {
        variant: this.#options.variant ?? 1,
        dimensions: [],
        attributes: this.#options.attributes ?? [],
        variables: [],
      };
      return [{ kind: "write", offset: 0, data: encodeHeader(schema, layoutSchema(schema), 0) }];
    }
    const append = this.#append;
    if (append !== undefined) {
      // Appending: rewrite numrecs only when it changed (a streaming file keeps its all ones).
      if (append.streaming || append.written === this.#numrecs) return [];
      append.written = this.#numrecs;
    }
    return [{ kind: "write", offset: 4, data: numrecsBytes(plan.variant, this.#numrecs) }];
  }
}

/** A writer of a new netCDF classic file, one record per frame; UsageError on bad options. */
export function createNetcdfWriter(options: WriterOptions = {}): FrameWriter {
  return new NetcdfWriter(writerOptions(options));
}

function writerOptions(options: WriterOptions): NetcdfWriterOptions {
  if (options.endian === "little") {
    throw new UsageError("netcdf: classic netCDF stores data big-endian only; use --endian big");
  }
  const variant = options.variant;
  if (variant !== undefined && variant !== 1 && variant !== 2 && variant !== 5) {
    throw new UsageError(`netcdf: variant must be 1, 2 or 5, got ${String(variant)}`);
  }
  const numrecs = options.numrecs;
  if (numrecs !== undefined && numrecs !== "close" && numrecs !== "frame") {
    throw new UsageError(`netcdf: numrecs must be 'close' or 'frame', got ${String(numrecs)}`);
  }
  return {
    variant: variant as NcVariant | undefined,
    numrecs: numrecs as "close" | "frame" | undefined,
    recordDim: typeof options.recordDim === "string" ? options.recordDim : undefined,
    fill: options.fill === true,
    chunks: Array.isArray(options.chunks) ? (options.chunks as NcChunkSpec[]) : undefined,
    attributes: Array.isArray(options.attributes)
      ? (options.attributes as NcAttribute[])
      : undefined,
  };
}

/**
 * A writer continuing the netCDF classic file read through `source` along its record dimension,
 * as `nc_open(NC_WRITE)` + `nc_put_vara` at records numrecs.. do: records go on at
 * recordBegin + numrecs x recsize with the file's record variables (each frame gives one chunk
 * per record variable, matched by chunk name, same type and shape), padding holds fill values,
 * numrecs is rewritten at finish (or per frame with `numrecs=frame`). A streaming numrecs (all
 * ones) is counted from the file size and left as it is. Options `numrecs` and `fill` as for a
 * new file; `variant` and `recordDim`, when given, must be the file's. Throws FormatError on a
 * malformed file, UsageError when it has no record variables or the options contradict it.
 */
export function netcdfAppendWriter(source: ByteSource, options: WriterOptions = {}): FrameWriter {
  checkAppendOrder(FORMAT, source.path, "big", options.endian);
  const opts = writerOptions(options);
  const file = openNetcdf(source);
  if (file.missingData) {
    // Readable (as zeros), but appending after data that was never written would bury the hole.
    throw new FormatError(
      FORMAT,
      source.path,
      file.missingData.offset,
      `cannot append: ${file.missingData.problem}`,
    );
  }
  const h = file.header;
  if (opts.variant !== undefined && opts.variant !== h.variant) {
    throw new UsageError(
      `netcdf: cannot append to ${source.path} as CDF-${opts.variant}: it is a CDF-${h.variant} (${
        KIND_NAMES[h.variant]
      }) file`,
    );
  }
  const rec = recordDimId(h.dimensions);
  if (opts.recordDim !== undefined && rec >= 0 && opts.recordDim !== h.dimensions[rec]!.name) {
    throw new UsageError(
      `netcdf: cannot append along '${opts.recordDim}' to ${source.path}: its record dimension is '${
        h.dimensions[rec]!.name
      }'`,
    );
  }
  if (opts.chunks !== undefined || opts.attributes !== undefined) {
    throw new UsageError(
      "netcdf: options chunks and attributes define a new file; an append keeps the file's",
    );
  }
  return NetcdfWriter.continuing(file, source.path, opts);
}
