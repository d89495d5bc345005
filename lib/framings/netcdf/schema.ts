/**
 * The chunk-to-netCDF mapping: the schema (dimensions shared by length, record dimension,
 * valid names with the original kept in `chunk_name`) that a frame's chunks get in a netCDF
 * classic file. The native writer uses it; it is what keeps `netcdf` and `netcdf-lib`
 * byte-identical.
 * @module
 */
import { UsageError } from "../../core/errors.ts";
import type { NcDecodedVariable } from "./header_decode.ts";
import type { ChunkLayout, OptionSpec } from "../types.ts";
import { DTYPE_SIZE, WRITING_WORKLOADS } from "../types.ts";
import { optionOrDefault } from "../options.ts";
import type { NcAttribute, NcDimension, NcSchema, NcVariable, NcVariant } from "./model.ts";
import { DTYPE_NC_TYPE, FORMAT, isCdf5Type, NC_MAX_NAME, product } from "./model.ts";

/** Variable attribute holding the original chunk name when it is not a valid netCDF name. */
export const CHUNK_NAME_ATTR = "chunk_name";

/** A valid netCDF classic name for a chunk name: `/` and control characters become `_`. */
export function netcdfName(name: string): string {
  // deno-lint-ignore no-control-regex
  let s = name.normalize("NFC").replace(/[\u0000-\u001f\u007f/]/g, "_").replace(/\s+$/, "");
  if (s === "" || !/^[\p{L}\p{N}_]/u.test(s)) s = `_${s}`;
  return s;
}

/**
 * What keeps `name` from being a netCDF name as netCDF-C's NC_check_name has it (UTF-8 in NFC, a
 * letter, digit or `_` first, no `/` or control character, no trailing space, at most
 * {@link NC_MAX_NAME} bytes), in a few words; undefined when it is one.
 */
export function netcdfNameProblem(name: string): string | undefined {
  const bytes = new TextEncoder().encode(name).length;
  if (name === "") return "a netCDF name cannot be empty";
  if (bytes > NC_MAX_NAME) {
    return `a netCDF name has at most ${NC_MAX_NAME} bytes (NC_MAX_NAME), this one ${bytes}`;
  }
  if (name.normalize("NFC") !== name) return "a netCDF name must be in Unicode NFC";
  if (!/^[\p{L}\p{N}_]/u.test(name)) {
    return "a netCDF name starts with a letter, a digit or '_'";
  }
  // deno-lint-ignore no-control-regex
  if (/[\u0000-\u001f\u007f/]/.test(name)) {
    return "a netCDF name holds no '/' and no control character";
  }
  if (/\s$/u.test(name)) return "a netCDF name does not end in white space";
  return undefined;
}

/** One chunk declared to the writer: name, element type, per-record shape. */
export type NcChunkSpec = ChunkLayout;

/** The options the netcdf writer honours (all optional). */
export interface NetcdfWriterOptions {
  /** 1 classic, 2 64-bit offset, 5 CDF-5; default 1, or 5 when a type or size needs it. */
  readonly variant?: NcVariant;
  /** Name of the record dimension; default `record`. */
  readonly recordDim?: string;
  /**
   * When numrecs is written: `close` (default; netCDF-C without NC_SHARE) or `frame` (after every
   * record, as with NC_SHARE).
   */
  readonly numrecs?: "close" | "frame";
  /** Prefill each new record with fill values before writing it, as netCDF-C with fill on; default false. */
  readonly fill?: boolean;
  /** Declare the variables up front so `begin()` writes the header; else the first frame defines them. */
  readonly chunks?: readonly NcChunkSpec[];
  /** Global attributes. */
  readonly attributes?: readonly NcAttribute[];
}

/** Builds the schema the frame writer uses for a list of chunks (one record variable each). */
export function schemaForChunks(
  chunks: readonly NcChunkSpec[],
  options: NetcdfWriterOptions = {},
): NcSchema {
  const recordDim = options.recordDim ??
    String(optionOrDefault({ name: FORMAT, options: NETCDF_OPTIONS }, {}, "recordDim"));
  const dims: NcDimension[] = [{ name: recordDim, length: 0 }];
  const byLength = new Map<number, number>();
  const names = new Set<string>();
  const variables: NcVariable[] = chunks.map((c) => {
    const type = DTYPE_NC_TYPE[c.dtype];
    const ids = [0];
    for (const len of c.shape) {
      if (!Number.isSafeInteger(len) || len <= 0) {
        throw new UsageError(
          `netcdf: chunk '${c.name}' has dimension ${len}; netCDF needs positive lengths`,
        );
      }
      let id = byLength.get(len);
      if (id === undefined) {
        id = dims.length;
        dims.push({ name: `n${len}`, length: len });
        byLength.set(len, id);
      }
      ids.push(id);
    }
    let name = netcdfName(c.name);
    while (names.has(name)) name += "_";
    names.add(name);
    const attributes: NcAttribute[] = name === c.name
      ? []
      : [{ name: CHUNK_NAME_ATTR, type: "char", values: c.name }];
    return { name, type, dims: ids, attributes };
  });
  const needs5 = variables.some((v) => isCdf5Type(v.type));
  let variant = options.variant;
  if (variant === undefined) {
    const big = chunks.some((c) => product(c.shape) * DTYPE_SIZE[c.dtype] > 0xfffffffc);
    variant = needs5 || big ? 5 : 1;
  }
  return { variant, dimensions: dims, attributes: options.attributes ?? [], variables };
}

/** The chunk name a variable stands for: its `chunk_name` attribute, else its own name. */
export function chunkNameOf(v: NcDecodedVariable): string {
  const a = v.attributes.find((x) => x.name === CHUNK_NAME_ATTR && x.type === "char");
  return a !== undefined && typeof a.values === "string" && a.values !== "" ? a.values : v.name;
}

/** The options of the `netcdf` framing. */
export const NETCDF_OPTIONS: readonly OptionSpec[] = [
  {
    name: "variant",
    type: "integer",
    choices: [1, 2, 5],
    help: "1 classic, 2 64-bit offset, 5 CDF-5 (default 1, or 5 when a type or size needs it)",
    workloads: WRITING_WORKLOADS,
  },
  {
    name: "numrecs",
    type: "string",
    choices: ["close", "frame"],
    default: "close",
    help: "when numrecs is written: at close, or after every record (as with NC_SHARE)",
    workloads: WRITING_WORKLOADS,
  },
  {
    name: "fill",
    type: "boolean",
    default: false,
    help: "prefill each record with fill values before writing it (netCDF-C with fill on)",
    workloads: WRITING_WORKLOADS,
  },
  {
    name: "recordDim",
    type: "string",
    default: "record",
    rule: (value) => netcdfNameProblem(String(value)),
    help: `name of the record dimension (a netCDF name: at most ${NC_MAX_NAME} bytes, no '/')`,
    workloads: WRITING_WORKLOADS,
  },
  {
    name: "chunks",
    type: "value",
    help: "chunk layouts declared up front, so begin() writes the header (library API)",
    workloads: WRITING_WORKLOADS,
  },
  {
    name: "attributes",
    type: "value",
    help: "global attributes (library API)",
    workloads: WRITING_WORKLOADS,
  },
];
