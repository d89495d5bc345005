/**
 * Parsers of values given on the command line: particle counts (`32^2`), seeds, lists, integer
 * ranges (`1..7`, `5..40:5`), shapes (`64x64x64`) and choices, each refusing bad text with a
 * usage error that names the flag. Sizes (`128MiB`) are in sizes.ts.
 * @module
 */
import { UsageError } from "./errors.ts";
import { didYouMean } from "./suggest.ts";

/**
 * Parses a positive integer count such as `1024`, `32^2` or `1024^2` (base and exponent positive:
 * `0^0` is refused, not 1), at most `max`.
 */
export function parseCount(text: string, what = "N", max = Number.MAX_SAFE_INTEGER): number {
  const m = /^\s*(\d+)\s*(?:\^\s*(\d+))?\s*$/.exec(text);
  if (!m) throw new UsageError(`bad ${what} '${text}': expected an integer such as 1024 or 32^2`);
  if (m[2] !== undefined && (Number(m[1]) === 0 || Number(m[2]) === 0)) {
    throw new UsageError(`bad ${what} '${text}': in B^E both B and E must be positive integers`);
  }
  const n = Number(m[1]) ** (m[2] === undefined ? 1 : Number(m[2]));
  if (!Number.isSafeInteger(n) || n <= 0) {
    const range = max < Number.MAX_SAFE_INTEGER ? `from 1 to ${max}` : "below 2^53";
    throw new UsageError(`bad ${what} '${text}': must be a positive integer ${range}`);
  }
  if (n > max) throw new UsageError(`bad ${what} '${text}': at most ${max}`);
  return n;
}

/** Parses a `--seed`: an integer (optionally negative) within ±2^53; an empty text is refused. */
export function parseSeed(text: string, what = "--seed"): number {
  const n = /^\s*-?\d+\s*$/.test(text) ? Number(text) : NaN;
  if (!Number.isSafeInteger(n)) {
    throw new UsageError(`bad ${what} '${text}': expected an integer such as 1 (at most 2^53 - 1)`);
  }
  return n;
}

/** Splits a comma-separated option into trimmed, non-empty items. */
export function parseList(text: string, what = "list"): string[] {
  const items = text.split(",").map((s) => s.trim()).filter((s) => s !== "");
  if (items.length === 0) throw new UsageError(`bad ${what} '${text}': empty list`);
  return items;
}

/** Most values one integer list option may expand to (`--procs`, `--datasets`). */
export const MAX_LIST_VALUES = 1000;

/**
 * Parses integers: a list `1,2,4`, a range `1..7`, a stepped range `5..40:5`, or a mix
 * `1,2,8..32:8`; returns them in order, duplicates removed. Every value must lie in
 * [`min`, `max`] and the whole list expand to at most `maxValues` values: both checked from the
 * range ends before anything is expanded (one line naming the limit).
 */
export function parseIntegers(
  text: string,
  what = "value",
  min = 0,
  max = Number.MAX_SAFE_INTEGER,
  maxValues = MAX_LIST_VALUES,
): number[] {
  const items: [number, number, number, string][] = [];
  let total = 0;
  for (const item of parseList(text, what)) {
    const m = /^(\d+)(?:\.\.(\d+)(?::(\d+))?)?$/.exec(item);
    if (!m) {
      throw new UsageError(`bad ${what} '${item}': expected an integer, a range A..B or A..B:STEP`);
    }
    const a = Number(m[1]);
    const b = m[2] === undefined ? a : Number(m[2]);
    const step = m[3] === undefined ? 1 : Number(m[3]);
    if (step <= 0 || b < a) throw new UsageError(`bad ${what} '${item}': empty range`);
    if (a < min) throw new UsageError(`bad ${what} '${item}': values must be at least ${min}`);
    if (!Number.isSafeInteger(b) || !Number.isSafeInteger(step) || b > max) {
      throw new UsageError(`bad ${what} '${item}': values must be at most ${max}`);
    }
    total += Math.floor((b - a) / step) + 1;
    if (total > maxValues) {
      throw new UsageError(
        `bad ${what} '${text}': more than ${maxValues} values; give at most ${maxValues} ` +
          `(a step such as A..B:STEP thins a range), or split the run into several`,
      );
    }
    items.push([a, b, step, item]);
  }
  const seen = new Set<number>();
  const out: number[] = [];
  for (const [a, b, step] of items) {
    for (let v = a; v <= b; v += step) {
      if (!seen.has(v)) {
        seen.add(v);
        out.push(v);
      }
    }
  }
  return out;
}

/** Parses a shape such as `64x64x64` or `2000x300x500` into positive dimensions, slowest first. */
export function parseShape(text: string, what = "shape"): number[] {
  const dims = text.split(/[x×,]/i).map((s) => s.trim());
  if (dims.length === 0 || dims.some((d) => !/^\d+$/.test(d) || Number(d) <= 0)) {
    throw new UsageError(
      `bad ${what} '${text}': expected positive integers joined by x, such as 64x64x64`,
    );
  }
  return dims.map(Number);
}

/** Checks that `value` is one of `choices`; returns it typed. */
export function parseChoice<T extends string>(
  value: string,
  choices: readonly T[],
  what: string,
): T {
  if (!(choices as readonly string[]).includes(value)) {
    throw new UsageError(
      `bad ${what} '${value}': expected one of ${choices.join(", ")}${didYouMean(value, choices)}`,
    );
  }
  return value as T;
}
