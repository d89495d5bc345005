/**
 * The f77 framing's sizes and markers, and the options its writer and reader both parse.
 * @module
 */
import { NATIVE_ORDER } from "../../bytes/byteswap.ts";
import { UsageError } from "../../core/errors.ts";
import { ALL_WORKLOADS, type ByteOrder, type OptionSpec, WRITING_WORKLOADS } from "../types.ts";
import type { OptionOwner } from "../options.ts";

/** The framing's name, as `--framing` and error messages say it. */
export const FORMAT = "f77";

/** gfortran's largest subrecord payload with 4-byte markers, in bytes: 2^31 - 9. */
export const F77_MAX_SUBRECORD = 2147483639;

/**
 * Smallest subrecord payload sciobench writes, in bytes: one value of the widest type (8). Below
 * it the markers outweigh the data many times over (subrecordLimit=1 writes 9 bytes a byte).
 */
export const F77_MIN_SUBRECORD = 8;

/** Largest value a 4-byte marker can hold, in bytes. */
export const INT32_MAX = 2147483647;

/**
 * The signed 8-byte integer at byte `at` of `view` (byte order `little`) as a number, or undefined
 * beyond +-(2^53 - 1), which no number holds exactly: read as two 4-byte halves, no BigInt made (an
 * open's first BigInt costs more than its reads when the CPU's caches hold none of its code).
 */
export function int64At(view: DataView, at: number, little: boolean): number | undefined {
  const hi = view.getInt32(little ? at + 4 : at, little);
  const lo = view.getUint32(little ? at : at + 4, little);
  // |hi 2^32 + lo| <= 2^53 - 1 exactly when -2^21 <= hi < 2^21, but for -2^53 itself
  if (hi >= 0x200000 || hi < -0x200000 || (hi === -0x200000 && lo === 0)) return undefined;
  return hi * 0x100000000 + lo;
}

/** Width of a record marker in bytes. */
export type MarkerWidth = 4 | 8;

export function markerOption(value: unknown, what: string): MarkerWidth | "auto" {
  if (value === undefined || value === "auto") return "auto";
  if (value === 4 || value === "4") return 4;
  if (value === 8 || value === "8") return 8;
  throw new UsageError(`f77: bad ${what} '${String(value)}': expected 4 or 8`);
}

export function endianOption(value: unknown): ByteOrder | "auto" {
  if (value === undefined || value === "auto") return "auto";
  if (value === "native") return NATIVE_ORDER;
  if (value === "little" || value === "big") return value;
  throw new UsageError(`f77: bad endian '${String(value)}': expected little, big, native or auto`);
}

export function positiveInt(
  value: unknown,
  what: string,
  max = Number.MAX_SAFE_INTEGER,
  min = 1,
): number {
  const n = typeof value === "string" && /^\s*\d+\s*$/.test(value) ? Number(value) : value;
  if (typeof n !== "number" || !Number.isSafeInteger(n) || n < min || n > max) {
    throw new UsageError(
      `f77: bad ${what} '${String(value)}': expected an integer from ${min} to ${max}`,
    );
  }
  return n;
}

export function listOption(value: unknown, what: string): string[] | undefined {
  if (value === undefined) return undefined;
  if (typeof value === "string") return value.split(",").map((s) => s.trim());
  if (Array.isArray(value) && value.every((s) => typeof s === "string")) return value as string[];
  throw new UsageError(`f77: bad ${what}: expected a comma-separated list`);
}

/** The options f77 declares: marker width, byte order, subrecord limit, and the reader's layout. */
export const F77_OPTIONS: readonly OptionSpec[] = [
  {
    name: "marker",
    type: "integer",
    choices: [4, 8],
    default: 4,
    help: "record marker bytes (written: default 4; read: detected when not given)",
    workloads: ALL_WORKLOADS,
  },
  {
    name: "subrecordLimit",
    type: "integer",
    min: F77_MIN_SUBRECORD,
    help: "largest subrecord payload, bytes (default 2^31-9 with 4-byte markers, none with 8)",
    workloads: WRITING_WORKLOADS,
  },
  {
    name: "dtype",
    type: "list",
    default: ["float64"],
    help: "type of each record of a frame, float32:3 adds trailing dimensions (reading)",
    workloads: ["read", "info"],
  },
  {
    name: "names",
    type: "list",
    help: "chunk name of each record of a frame (reading; default record/<r>)",
    workloads: ["read", "info"],
  },
  {
    name: "recordsPerFrame",
    type: "integer",
    min: 1,
    help: "records per frame (reading; default: the number of dtypes or names)",
    workloads: ["read", "info"],
  },
];

/** f77 as the owner of its options, for the declared defaults ({@link F77_OPTIONS}). */
export const F77_OPTION_OWNER: OptionOwner = { name: FORMAT, options: F77_OPTIONS };
