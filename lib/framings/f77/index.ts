/**
 * The f77 index: the record table and the frame plan, every record checked against its position
 * once at the open, chunk refs made when a frame is asked for.
 * @module
 */
import { FormatError } from "../../core/errors.ts";
import {
  type ByteSource,
  type ChunkLayout,
  type ChunkRef,
  type DType,
  DTYPE_SIZE,
  type FrameIndex,
} from "../types.ts";
import { FORMAT } from "./format.ts";
import type { FramePlan, TypeSpec } from "./plan.ts";
import type { RecordTable } from "./scan.ts";

/** How every record of a frame position reads: a layout's chunk, or a type spec and name. */
interface PositionType {
  /** The caller's layout at this position (every record must match it). */
  readonly layout?: ChunkLayout;
  /** Otherwise the requested type and trailing dimensions. */
  readonly spec: TypeSpec;
  /** Bytes of one element with its trailing dimensions (the spec's unit). */
  readonly unit: number;
  /** The chunk name given for the position (else `record/<r>`). */
  readonly name?: string;
}

/** The index of an f77 file: frames of `plan.perFrame` records each. */
export class F77Index implements FrameIndex {
  readonly framing = FORMAT;
  readonly frameCount: number;
  readonly warnings: string[];
  readonly #t: RecordTable;
  readonly #plan: FramePlan;
  readonly #detected: boolean;
  /** How the records at each position of a frame read (one entry a position, not a record). */
  readonly #positions: readonly PositionType[];

  constructor(
    src: ByteSource,
    t: RecordTable,
    plan: FramePlan,
    detected: boolean,
    warnings: string[],
  ) {
    this.#t = t;
    this.#plan = plan;
    this.#detected = detected;
    this.warnings = warnings;
    const records = t.starts.length;
    this.frameCount = Math.floor(records / plan.perFrame);
    this.#positions = Array.from({ length: plan.perFrame }, (_, pos) => {
      const layout = plan.layout?.[pos];
      const spec = plan.types[plan.types.length === 1 ? 0 : pos] ?? { dtype: "uint8", inner: [] };
      const unit = layout !== undefined
        ? layout.shape.reduce((a, b) => a * b, 1) * DTYPE_SIZE[layout.dtype]
        : DTYPE_SIZE[spec.dtype] * spec.inner.reduce((a, b) => a * b, 1);
      return { layout, spec, unit, name: plan.names?.[pos] };
    });
    // the records that do not read as asked: refused (a layout), or counted for one warning
    let fallback = 0;
    const shown: number[] = [];
    for (let r = 0; r < this.frameCount * plan.perFrame; r++) {
      const p = this.#positions[r % plan.perFrame]!;
      const bytes = t.sizes.at(r);
      if (p.layout !== undefined) {
        if (bytes !== p.unit) {
          const lay = p.layout;
          throw new FormatError(
            FORMAT,
            src.path,
            t.starts.at(r) - t.w,
            `record ${r + 1} holds ${bytes} bytes, but chunk '${lay.name}' (${lay.dtype} ${
              lay.shape.join("x")
            }) needs ${p.unit}`,
          );
        }
      } else if (bytes % p.unit !== 0) {
        if (fallback++ < 5) shown.push(r + 1);
      }
    }
    if (fallback > 0) {
      warnings.push(
        `f77: ${src.path}: ${fallback} record(s) (${shown.join(", ")}${
          fallback > 5 ? ", ..." : ""
        }) are not a whole number of the requested elements; read as uint8`,
      );
    }
    const left = records - this.frameCount * plan.perFrame;
    if (left > 0) {
      warnings.push(
        `f77: ${src.path}: the last ${left} record(s) do not fill a frame of ${plan.perFrame} records and are ignored`,
      );
    }
  }

  /** The chunks of `frame`, made when asked from the record table (no object kept a record). */
  chunks(frame: number): readonly ChunkRef[] {
    const t = this.#t;
    const per = this.#plan.perFrame;
    const out = new Array<ChunkRef>(per);
    for (let k = 0, r = frame * per; k < per; k++, r++) {
      const p = this.#positions[k]!;
      const bytes = t.sizes.at(r);
      let dtype: DType, shape: readonly number[], name: string;
      if (p.layout !== undefined) {
        ({ dtype, shape, name } = p.layout);
      } else {
        name = p.name ?? `record/${r + 1}`;
        if (bytes % p.unit === 0) {
          dtype = p.spec.dtype;
          shape = [bytes / p.unit, ...p.spec.inner];
        } else {
          dtype = "uint8";
          shape = [bytes];
        }
      }
      const pieces = t.pieces.get(r);
      out[k] = {
        name,
        dtype,
        shape,
        offset: t.starts.at(r),
        bytes,
        order: t.order,
        ...(pieces ? { pieces } : {}),
      };
    }
    return out;
  }

  describe(): Record<string, unknown> {
    const t = this.#t;
    let largest = 0;
    for (let r = 0; r < t.sizes.length; r++) largest = Math.max(largest, t.sizes.at(r));
    return {
      marker_bytes: t.w,
      byte_order: t.order,
      markers: this.#detected ? "detected" : "given",
      records: t.starts.length,
      records_per_frame: this.#plan.perFrame,
      // f77 stores no types: say where the frames' layout came from
      layout: this.#plan.source === "table"
        ? "sciobench table frames (position N x 3, orientation N x 4 float32; detected)"
        : this.#plan.assumed
        ? "assumed: one float64 record per frame (--option dtype=, names=, recordsPerFrame= set it)"
        : "given",
      split_records: t.pieces.size,
      subrecords: t.subrecords,
      largest_record_bytes: largest,
    };
  }
}
