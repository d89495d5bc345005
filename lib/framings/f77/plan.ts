/**
 * How an f77 file's records map to the chunks of its frames: the caller's layout, the reader's
 * options (`dtype`, `names`, `recordsPerFrame`), or sciobench's own table frames recognised.
 * @module
 */
import { UsageError } from "../../core/errors.ts";
import { type ChunkLayout, type DType, DTYPE_SIZE, type ReaderOptions } from "../types.ts";
import { F77_OPTION_OWNER, listOption, positiveInt } from "./format.ts";
import { optionOrDefault } from "../options.ts";
import type { RecordTable } from "./scan.ts";

/** A parsed entry of the `dtype` option: type and trailing dimensions. */
export interface TypeSpec {
  readonly dtype: DType;
  readonly inner: readonly number[];
}

/** An entry of the `dtype` option (`float32`, `float32:3`, `uint8:2x4`) parsed. */
function parseTypeSpec(text: string): TypeSpec {
  const m = /^([a-z0-9]+)(?::(\d+(?:x\d+)*))?$/.exec(text.trim());
  const dtype = m?.[1];
  if (!m || dtype === undefined || !(dtype in DTYPE_SIZE)) {
    throw new UsageError(
      `f77: bad dtype '${text}': expected one of ${
        Object.keys(DTYPE_SIZE).join(", ")
      }, optionally with trailing dimensions such as float32:3`,
    );
  }
  const inner = m[2] === undefined ? [] : m[2].split("x").map(Number);
  if (inner.some((d) => d < 1)) {
    throw new UsageError(`f77: bad dtype '${text}': dimensions must be positive`);
  }
  return { dtype: dtype as DType, inner };
}

/** How records map to the chunks of a frame. */
export interface FramePlan {
  readonly perFrame: number;
  /**
   * How the layout was chosen: `given` (options or a layout), `table` (sciobench's own table
   * frames recognised), `assumed` (nothing given: one float64 record per frame, said so).
   */
  readonly source?: "given" | "table";
  /** True when neither a layout nor dtype, names or recordsPerFrame was given. */
  readonly assumed?: boolean;
  /** Layout per record position when the caller gave one (then every record must match). */
  readonly layout?: readonly ChunkLayout[];
  readonly types: readonly TypeSpec[];
  readonly names?: readonly string[];
}

/** The frame plan the reader options give (no layout: `assumed` when they give nothing). */
export function framePlan(options: ReaderOptions): FramePlan {
  const layout = options.layout;
  if (layout !== undefined && layout.length > 0) {
    return { perFrame: layout.length, layout, types: [] };
  }
  const assumed = options.dtype === undefined && options.names === undefined &&
    options.recordsPerFrame === undefined;
  // the declared default when not given: one float64 record per frame
  const types = (listOption(optionOrDefault(F77_OPTION_OWNER, options, "dtype"), "dtype") ?? [])
    .map(parseTypeSpec);
  const names = listOption(options.names, "names");
  const listed = Math.max(types.length, names?.length ?? 1);
  const perFrame = options.recordsPerFrame === undefined
    ? listed
    : positiveInt(options.recordsPerFrame, "recordsPerFrame");
  if (types.length !== 1 && types.length !== perFrame) {
    throw new UsageError(`f77: ${types.length} dtypes given for ${perFrame} records per frame`);
  }
  if (names !== undefined && names.length !== perFrame) {
    throw new UsageError(`f77: ${names.length} names given for ${perFrame} records per frame`);
  }
  return { perFrame, types, names, assumed };
}

/**
 * The layout of sciobench's own table frames when `t` holds them (an even number of records,
 * alternately 12 N and 16 N bytes for one N: position N x 3 and orientation N x 4 float32, as
 * `sciobench write` stores them), else undefined.
 */
export function tablePlan(t: RecordTable): FramePlan | undefined {
  const sizes = t.sizes;
  const n = sizes.length > 0 ? sizes.at(0) / 12 : 0;
  if (sizes.length === 0 || sizes.length % 2 !== 0 || !Number.isInteger(n) || n < 1) {
    return undefined;
  }
  for (let r = 0; r < sizes.length; r += 2) {
    if (sizes.at(r) !== 12 * n || sizes.at(r + 1) !== 16 * n) return undefined;
  }
  return {
    perFrame: 2,
    source: "table",
    types: [],
    layout: [
      { name: "particles/position", dtype: "float32", shape: [n, 3] },
      { name: "particles/orientation", dtype: "float32", shape: [n, 4] },
    ],
  };
}
