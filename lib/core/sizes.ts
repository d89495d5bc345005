/**
 * Byte sizes as fio, IOR and dd write them: the one parser behind every size option and
 * variable (`--size`, `--sample`, `--bs`, SCIOBENCH_LIBRARY_MEMORY).
 * @module
 */
import { UsageError } from "./errors.ts";

/**
 * Bytes per unit, by the unit's upper-cased spelling: a bare letter (`4k`, `128M`, `1G`) and the
 * IEC names (`KiB`, `MiB`) are binary as in fio and dd; `kB`, `MB`, `GB`, `TB` are decimal.
 */
const SIZE_UNITS: Readonly<Record<string, number>> = {
  "": 1,
  B: 1,
  K: 2 ** 10,
  M: 2 ** 20,
  G: 2 ** 30,
  T: 2 ** 40,
  KIB: 2 ** 10,
  MIB: 2 ** 20,
  GIB: 2 ** 30,
  TIB: 2 ** 40,
  KB: 1e3,
  MB: 1e6,
  GB: 1e9,
  TB: 1e12,
};

/** The accepted forms, for help texts and error messages. */
export const SIZE_FORMS =
  "bytes (4096), or a number with a unit: k, M, G, T or KiB, MiB, GiB, TiB (binary: 2^10, " +
  "2^20, 2^30, 2^40, as fio and dd read them) or kB, MB, GB, TB (decimal: 10^3 .. 10^12)";

/**
 * Parses a byte size such as `128MiB`, `128M`, `4k`, `1G`, `1.5GiB`, `100MB` or `4096`; returns
 * bytes (a positive integer). Units are case-insensitive; UsageError naming `what` and the
 * accepted forms otherwise.
 */
export function parseSize(text: string, what = "size"): number {
  const m = /^\s*(\d+(?:\.\d+)?)\s*([a-zA-Z]*)\s*$/.exec(text);
  const unit = m ? SIZE_UNITS[m[2]!.toUpperCase()] : undefined;
  if (!m || unit === undefined) {
    throw new UsageError(`bad ${what} '${text}': expected ${SIZE_FORMS}`);
  }
  const bytes = Number(m[1]) * unit;
  if (!Number.isSafeInteger(bytes) || bytes <= 0) {
    throw new UsageError(
      `bad ${what} '${text}': must be a positive whole number of bytes below 2^53 (such as 4096, ` +
        `4k or 1.5GiB)`,
    );
  }
  return bytes;
}
