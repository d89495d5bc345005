/**
 * The latency histogram (lib/report/histogram.ts): percentiles against the exact order statistics
 * of known values, merging against recording everything in one, and its JSON form.
 */
import assert from "node:assert/strict";
import { LATENCY_PERCENTILES, LatencyHistogram } from "../lib/report/histogram.ts";
import { Rng } from "../lib/workloads/pattern.ts";

/** Log-normal-ish latencies, ns: 1 us to about a second, seeded. */
function latencies(count: number, seed: number): number[] {
  const rng = new Rng(seed);
  return Array.from({ length: count }, () => Math.floor(1000 * Math.exp(rng.next() * 14)));
}

/** The exact value of rank ceil(q n) of `sorted` (the definition the histogram follows). */
function exact(sorted: readonly number[], q: number): number {
  return sorted[Math.max(1, Math.ceil(q * sorted.length)) - 1]!;
}

Deno.test("histogram: percentiles are within 0.4% of the sorted values' order statistics", () => {
  const values = latencies(20001, 7);
  const h = new LatencyHistogram();
  for (const v of values) h.record(v);
  const sorted = [...values].sort((a, b) => a - b);
  for (const q of [0.01, 0.25, ...LATENCY_PERCENTILES.map((p) => p.fraction), 0.9999]) {
    const want = exact(sorted, q);
    const got = h.percentile(q);
    assert.ok(Math.abs(got - want) <= want / 256 + 0.5, `p${q * 100}: ${got} against ${want}`);
  }
  assert.equal(h.count, values.length);
  assert.equal(h.max, sorted.at(-1));
  assert.equal(h.min, sorted[0]);
  assert.equal(h.percentile(1), sorted.at(-1));
  assert.ok(Math.abs(h.mean - values.reduce((a, b) => a + b, 0) / values.length) < 1e-6 * h.mean);
});

Deno.test("histogram: values below 128 ns are exact; hours and more share the top bucket", () => {
  const h = new LatencyHistogram();
  for (const v of [3, 3, 7, 100, 127]) h.record(v);
  assert.equal(h.percentile(0.4), 3);
  assert.equal(h.percentile(0.6), 7);
  assert.equal(h.percentile(0.8), 100);
  const big = new LatencyHistogram();
  big.record(5e9); // above 2^32 ns
  big.record(60e9); // a minute
  assert.ok(Math.abs(big.percentile(0.5) - 5e9) <= 5e9 / 256);
  assert.equal(big.percentile(1), 60e9);
  big.record(1e20);
  assert.ok(big.max < 1e20 && big.max > 1e13);
  const empty = new LatencyHistogram();
  assert.ok(Number.isNaN(empty.percentile(0.5)));
  assert.equal(empty.max, 0);
});

Deno.test("histogram: merging equals recording every value in one histogram", () => {
  const a = latencies(5000, 1), b = latencies(3000, 2), c = latencies(1, 3);
  const all = new LatencyHistogram();
  const parts = [a, b, c].map((values) => {
    const h = new LatencyHistogram();
    for (const v of values) {
      h.record(v);
      all.record(v);
    }
    return h;
  });
  const merged = new LatencyHistogram().merge(parts[0]!).merge(parts[1]!).merge(parts[2]!);
  assert.deepEqual(merged.toJSON(), all.toJSON());
  for (const p of LATENCY_PERCENTILES) {
    assert.equal(merged.percentile(p.fraction), all.percentile(p.fraction));
  }
  // merging an empty histogram changes nothing, its minimum included
  assert.deepEqual(
    new LatencyHistogram().merge(all).merge(new LatencyHistogram()).toJSON(),
    all.toJSON(),
  );
});

Deno.test("histogram: the JSON form is the non-empty buckets and reads back the same", () => {
  const h = new LatencyHistogram();
  for (const v of latencies(1000, 9)) h.record(v);
  const json = JSON.parse(JSON.stringify(h));
  assert.equal(json.unit, "ns");
  assert.ok(json.buckets.length <= 2000 && json.buckets.length % 2 === 0);
  assert.equal(
    json.buckets.filter((_: number, i: number) => i % 2 === 1).reduce(
      (s: number, c: number) => s + c,
      0,
    ),
    1000,
  );
  const back = LatencyHistogram.fromJSON(json)!;
  assert.deepEqual(back.toJSON(), h.toJSON());
  assert.equal(LatencyHistogram.fromJSON({ unit: "ns", sub_bits: 5, buckets: [] }), undefined);
  assert.equal(LatencyHistogram.fromJSON("p50"), undefined);
  assert.equal(
    LatencyHistogram.fromJSON({ unit: "ns", sub_bits: 7, buckets: [1e9, 1] }),
    undefined,
  );
});
