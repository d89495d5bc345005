/**
 * A latency histogram with log-linear buckets, as HdrHistogram's and fio's: values below 128 ns
 * have a bucket each, and every power of two above is split into 128 equal buckets, so a bucket
 * is at most 1/128 (0.8%) of its values wide, from nanoseconds to hours. Recording is an index
 * computation and an increment in a typed array (no allocation); percentiles, merging and a
 * compact JSON form (the non-empty buckets only) go with it. Values are nanoseconds.
 * @module
 */
import type { Row } from "./row.ts";

/** Bits of linear resolution inside each power of two: 2^7 = 128 buckets per octave. */
export const SUB_BITS = 7;
const SUB = 1 << SUB_BITS;
/**
 * Exponent of the highest octave the buckets cover: up to 2^44 ns, about 4.9 hours; larger values
 * share the top bucket.
 */
export const TOP_EXPONENT = 43;
/** Buckets in all: the linear ones below 128 ns, then 128 per octave from 2^7 to 2^43. */
const BUCKETS = SUB + (TOP_EXPONENT - SUB_BITS + 1) * SUB;
const TWO_32 = 2 ** 32;
/** The largest value the buckets resolve, ns; larger values land in the last bucket. */
const LIMIT_NS = 2 ** (TOP_EXPONENT + 1) - 1;

/** The percentiles rows carry, as fractions, with the suffix of their columns. */
export const LATENCY_PERCENTILES = [
  { fraction: 0.5, suffix: "p50" },
  { fraction: 0.9, suffix: "p90" },
  { fraction: 0.99, suffix: "p99" },
  { fraction: 0.999, suffix: "p999" },
] as const;

/** The bucket of `ns` (an integer, 0 <= ns <= LIMIT_NS). */
function bucketOf(ns: number): number {
  if (ns < SUB) return ns;
  // the exponent of the highest set bit, over 32 bits for values above 4.3 s
  const exponent = ns < TWO_32 ? 31 - Math.clz32(ns) : 63 - Math.clz32(Math.floor(ns / TWO_32));
  const shift = exponent - SUB_BITS;
  const mantissa = ns < TWO_32 ? ns >>> shift : Math.floor(ns / 2 ** shift);
  return SUB + shift * SUB + (mantissa - SUB);
}

/** The lowest value of bucket `index`, ns. */
function bucketLow(index: number): number {
  if (index < SUB) return index;
  const shift = Math.floor((index - SUB) / SUB);
  return (SUB + ((index - SUB) % SUB)) * 2 ** shift;
}

/** The width of bucket `index`, ns (1 below 128 ns). */
function bucketWidth(index: number): number {
  return index < SUB ? 1 : 2 ** Math.floor((index - SUB) / SUB);
}

/**
 * The JSON form of a histogram: counts of the non-empty buckets as `[index, count]` pairs
 * flattened into `buckets`, with the exact count, sum, minimum and maximum; `unit` is `ns` and
 * `sub_bits` the buckets' resolution (128 a power of two: 7).
 */
export interface HistogramJson {
  /** Always `ns`. */
  readonly unit: "ns";
  /** log2 of the buckets per power of two. */
  readonly "sub_bits": number;
  /** Values recorded. */
  readonly count: number;
  /** Their sum, ns. */
  readonly sum: number;
  /** The smallest, ns (0 when empty). */
  readonly min: number;
  /** The largest, ns (0 when empty). */
  readonly max: number;
  /** Non-empty buckets: index, count, index, count, ... */
  readonly buckets: readonly number[];
}

/** A latency histogram of nanosecond values (see the module's description). */
export class LatencyHistogram {
  readonly #counts = new Float64Array(BUCKETS);
  #count = 0;
  #sum = 0;
  #min = Infinity;
  #max = 0;

  /** Adds one value, ns (negative values count as 0; fractions are dropped). */
  record(ns: number): void {
    const v = ns > 0 ? (ns < LIMIT_NS ? Math.floor(ns) : LIMIT_NS) : 0;
    this.#counts[bucketOf(v)]!++;
    this.#count++;
    this.#sum += v;
    if (v < this.#min) this.#min = v;
    if (v > this.#max) this.#max = v;
  }

  /** Values recorded. */
  get count(): number {
    return this.#count;
  }

  /** The largest value recorded, ns (0 when empty). */
  get max(): number {
    return this.#count ? this.#max : 0;
  }

  /** The smallest value recorded, ns (0 when empty). */
  get min(): number {
    return this.#count ? this.#min : 0;
  }

  /** The mean of the values, ns (NaN when empty). */
  get mean(): number {
    return this.#sum / this.#count;
  }

  /**
   * The value below which `fraction` (0..1) of the values lie, ns: the middle of the bucket that
   * holds the value of rank ceil(fraction x count), kept within the smallest and largest values
   * recorded (so within half a bucket, 0.4%, of the exact order statistic); the largest value
   * itself for the last rank; NaN when empty.
   */
  percentile(fraction: number): number {
    if (this.#count === 0) return NaN;
    const rank = Math.max(1, Math.ceil(fraction * this.#count));
    if (rank >= this.#count) return this.#max;
    let seen = 0;
    for (let i = 0; i < BUCKETS; i++) {
      seen += this.#counts[i]!;
      if (seen >= rank) {
        const mid = i < SUB ? i : bucketLow(i) + (bucketWidth(i) - 1) / 2;
        return Math.min(this.#max, Math.max(this.#min, mid));
      }
    }
    return this.#max;
  }

  /** Adds every value of `other` to this histogram (as if each had been recorded here). */
  merge(other: LatencyHistogram): this {
    for (let i = 0; i < BUCKETS; i++) this.#counts[i]! += other.#counts[i]!;
    if (other.#count === 0) return this;
    this.#count += other.#count;
    this.#sum += other.#sum;
    this.#min = Math.min(this.#min, other.#min);
    this.#max = Math.max(this.#max, other.#max);
    return this;
  }

  /** The compact JSON form ({@link HistogramJson}). */
  toJSON(): HistogramJson {
    const buckets: number[] = [];
    for (let i = 0; i < BUCKETS; i++) {
      const c = this.#counts[i]!;
      if (c !== 0) buckets.push(i, c);
    }
    return {
      unit: "ns",
      sub_bits: SUB_BITS,
      count: this.#count,
      sum: this.#sum,
      min: this.min,
      max: this.max,
      buckets,
    };
  }

  /**
   * The histogram of a JSON form ({@link toJSON}); undefined when `value` is not one (another
   * resolution, or not a histogram at all: a row from an older release).
   */
  static fromJSON(value: unknown): LatencyHistogram | undefined {
    if (typeof value !== "object" || value === null) return undefined;
    const j = value as Partial<HistogramJson>;
    if (j.unit !== "ns" || j.sub_bits !== SUB_BITS || !Array.isArray(j.buckets)) return undefined;
    const h = new LatencyHistogram();
    for (let k = 0; k + 1 < j.buckets.length; k += 2) {
      const index = j.buckets[k]!, count = j.buckets[k + 1]!;
      if (!Number.isInteger(index) || index < 0 || index >= BUCKETS) return undefined;
      h.#counts[index]! += count;
      h.#count += count;
    }
    h.#sum = Number(j.sum ?? 0);
    h.#min = h.#count ? Number(j.min ?? 0) : Infinity;
    h.#max = Number(j.max ?? 0);
    return h;
  }
}

/**
 * The columns of read phase `phase`'s system-call latencies (each pread a native framing made,
 * the time fio's clat compares with): `<phase>_call_p50_us`, `<phase>_call_p99_us` (us), and the
 * histogram as `<phase>_call_latency`; empty (null) where no pread was made (a library's reads).
 */
export function callLatencyFields(phase: string, h: LatencyHistogram): Row {
  return {
    [`${phase}_call_p50_us`]: h.count ? h.percentile(0.5) / 1000 : null,
    [`${phase}_call_p99_us`]: h.count ? h.percentile(0.99) / 1000 : null,
    [latencyKey(`${phase}_call`)]: h.toJSON(),
  };
}

/** The row key of a phase's histogram (JSON rows only; CSV has its percentile columns). */
export function latencyKey(phase: string): string {
  return `${phase}_latency`;
}

/**
 * The latency columns of read phase `phase` from its histogram of operation latencies (ns) and
 * its wall time, seconds: `<phase>_p50_us`, `_p90_us`, `_p99_us`, `_p999_us`, `_max_us` (us),
 * `<phase>_iops` (operations recorded / seconds) and the histogram itself
 * ({@link latencyKey}, JSON form). Empty (null) columns when nothing was recorded.
 */
export function latencyFields(phase: string, h: LatencyHistogram, seconds: number): Row {
  const us = (ns: number) => h.count ? ns / 1000 : null;
  const out: Row = {};
  for (const p of LATENCY_PERCENTILES) {
    out[`${phase}_${p.suffix}_us`] = us(h.percentile(p.fraction));
  }
  out[`${phase}_max_us`] = us(h.max);
  out[`${phase}_iops`] = h.count && seconds > 0 ? h.count / seconds : null;
  out[latencyKey(phase)] = h.toJSON();
  return out;
}
