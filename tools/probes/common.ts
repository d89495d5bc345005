/**
 * What the one-off measurement probes in tools/probes/ (and the `deno bench` suites that print a
 * summary) share: the median and spread of a sample, interleaved rounds of two or more ways
 * (ABBA: the order reversed every other round, so a machine whose speed drifts favours none), and
 * command-line parsing through the product's own parser (its size and count forms, one-line usage
 * errors).
 * @module
 */
import { parseArgs } from "../../lib/cli/args.ts";
import { parseCount } from "../../lib/core/values.ts";
import { parseSize } from "../../lib/core/sizes.ts";
import { UsageError } from "../../lib/core/errors.ts";

/** The median of a sample (the mean of the middle two for an even count); NaN when empty. */
export function median(xs: readonly number[]): number {
  if (xs.length === 0) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

/** A sample's median, minimum and maximum, in its own unit. */
export interface Spread {
  readonly median: number;
  readonly min: number;
  readonly max: number;
}

/** The median, minimum and maximum of a sample (NaN each when empty). */
export function spread(xs: readonly number[]): Spread {
  return {
    median: median(xs),
    min: xs.length ? Math.min(...xs) : NaN,
    max: xs.length ? Math.max(...xs) : NaN,
  };
}

/** "median M (min A, max B)" with `digits` decimals. */
export function formatSpread(xs: readonly number[], digits = 2): string {
  const s = spread(xs);
  return `median ${s.median.toFixed(digits)} (min ${s.min.toFixed(digits)}, max ${
    s.max.toFixed(digits)
  })`;
}

/** The ways in the order they run in round `round` (0-based): as given in even rounds, reversed
 * in odd ones (ABBA). */
export function roundOrder<T>(ways: readonly T[], round: number): T[] {
  return round % 2 === 0 ? [...ways] : [...ways].reverse();
}

/**
 * Runs `rounds` rounds of every way in `ways` (in {@link roundOrder}); returns each way's results
 * by name, one a round, in the unit its function returns.
 */
export async function interleaved(
  rounds: number,
  ways: Readonly<Record<string, (round: number) => number | Promise<number>>>,
): Promise<Record<string, number[]>> {
  const names = Object.keys(ways);
  const out: Record<string, number[]> = Object.fromEntries(names.map((n) => [n, []]));
  for (let r = 0; r < rounds; r++) {
    for (const name of roundOrder(names, r)) out[name]!.push(await ways[name]!(r));
  }
  return out;
}

/** The option types a probe takes: strings (sizes, counts, names) and flags. */
export type ProbeOptions = Record<
  string,
  { type: "string"; default?: string } | { type: "boolean"; default?: boolean }
>;

/**
 * A probe's options (and positional arguments) parsed through the product's parser (strict; a
 * mistyped option names the nearest known one). A bad argument prints one line and exits 2.
 */
export function probeArgs<T extends ProbeOptions>(probe: string, options: T, args = Deno.args) {
  try {
    return parseArgs(probe, args, { options, allowPositionals: true });
  } catch (e) {
    if (!(e instanceof UsageError)) throw e;
    // the message names the probe already; a probe has no --help page
    console.error(e.message.replace(/ \(see 'sciobench [^']*'\)$/, ""));
    Deno.exit(2);
  }
}

/** A size option ("64MiB", "1GiB", bytes): bytes; a bad one exits 2 with one line. */
export function sizeOption(probe: string, text: string, what: string): number {
  return orExit(probe, () => parseSize(text, what));
}

/** A count option ("16384", "128^2"); a bad one exits 2 with one line. */
export function countOption(probe: string, text: string, what: string): number {
  return orExit(probe, () => parseCount(text, what));
}

function orExit(probe: string, parse: () => number): number {
  try {
    return parse();
  } catch (e) {
    if (!(e instanceof UsageError)) throw e;
    console.error(`${probe}: ${e.message}`);
    Deno.exit(2);
  }
}
