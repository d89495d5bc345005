/**
 * Parsers for command-line values: sizes (`128MiB`), particle counts (`32^2`), lists, integer
 * ranges (`1..7`, `5..40:5`), shapes (`64x64x64`), and `node:util` parseArgs with usage errors.
 * @module
 */
import { parseArgs as nodeParseArgs, type ParseArgsConfig } from "node:util";
import { UsageError } from "../core/errors.ts";
import { didYouMean } from "../core/suggest.ts";
export { formatCount, formatSize } from "../report/units.ts";
export { parseSize, SIZE_FORMS } from "../core/sizes.ts";

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
    throw new UsageError(`bad ${what} '${text}': must be a positive integer below 2^53`);
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

/**
 * Merges repeated list options into one comma-separated value (`--framing gsd --framing raw`
 * becomes `--framing=gsd,raw`); other arguments keep their order.
 */
function mergeRepeated(
  args: readonly string[],
  config: ParseArgsConfig,
  listNames: readonly string[],
): string[] {
  const lists = new Set(
    Object.entries(config.options ?? {}).filter(([name, o]) =>
      o.type === "string" && !o.multiple && listNames.includes(name)
    ).map(([name]) => name),
  );
  const merged = new Map<string, string[]>();
  const out: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    if (a === "--") {
      out.push(...args.slice(i));
      break;
    }
    const m = /^--([^=]+)(?:=(.*))?$/s.exec(a);
    const name = m?.[1];
    if (name === undefined || !lists.has(name)) {
      out.push(a);
      continue;
    }
    const value = m![2] ?? args[++i];
    if (value === undefined) {
      out.push(a); // missing value: parseArgs reports it
      continue;
    }
    const seen = merged.get(name);
    if (seen) seen.push(value);
    else {
      merged.set(name, [value]);
      out.push(`--${name}`); // placeholder, filled below
    }
  }
  return out.map((a) => {
    const name = a.startsWith("--") ? a.slice(2) : "";
    const values = merged.get(name);
    return values && a === `--${name}` ? `--${name}=${values.join(",")}` : a;
  });
}

/**
 * `node:util` parseArgs (strict) whose errors become one-line usage errors naming the command,
 * with the nearest known option for a mistyped one; the string options named in `lists` take
 * comma-separated lists, and accumulate when repeated.
 */
export function parseArgs<T extends ParseArgsConfig>(
  command: string,
  args: string[],
  config: T,
  lists: readonly string[] = [],
) {
  const parsed = parseStrict(command, args, config, lists);
  // An empty word (`--out ""`, `info ""`) names no file and no value: one usage line, not a
  // failed system call.
  for (const [name, value] of Object.entries(parsed.values)) {
    if (value === "" || (Array.isArray(value) && value.includes(""))) {
      throw new UsageError(`${command}: --${name} is empty (see 'sciobench ${command} --help')`);
    }
  }
  if ((parsed.positionals as string[] | undefined)?.includes("")) {
    throw new UsageError(`${command}: an empty argument ('') names no file`);
  }
  return parsed;
}

function parseStrict<T extends ParseArgsConfig>(
  command: string,
  args: string[],
  config: T,
  lists: readonly string[],
) {
  try {
    return nodeParseArgs({ ...config, args: mergeRepeated(args, config, lists), strict: true });
  } catch (e) {
    const msg = e instanceof Error ? e.message.split("\n")[0]! : String(e);
    const unknown = /Unknown option '(-{1,2}[^']+)'/.exec(msg)?.[1];
    const known = Object.keys(config.options ?? {}).map((o) => `--${o}`);
    const hint = unknown ? didYouMean(unknown.replace(/=.*$/, ""), known) : "";
    throw new UsageError(
      `${command}: ${
        msg.replace(/\. To specify a positional.*$/, "")
      }${hint} (see 'sciobench ${command} --help')`,
    );
  }
}
