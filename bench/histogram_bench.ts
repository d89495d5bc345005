/**
 * What recording one read's latency costs: the histogram's record (an index and an increment),
 * the two clock readings around the read (CLOCK_MONOTONIC through FFI, which the read phases use,
 * and performance.now()), a record with its readings, and a warm 4 KiB pread of a cached file for
 * scale (the cheapest read a phase times).
 *
 *     deno bench -A bench/histogram_bench.ts
 * @module
 */
import { LatencyHistogram } from "../lib/report/histogram.ts";
import * as libc from "../lib/sys/libc.ts";

const h = new LatencyHistogram();
let value = 1;

Deno.bench("histogram record (ns per value)", { group: "latency", baseline: true }, () => {
  // latencies from 1 ns to about 4 s, spread over the buckets
  value = (value * 1103515245 + 12345) & 0x7fffffff;
  h.record(value >>> (value & 15));
});

Deno.bench("clock reading, twice (performance.now)", { group: "latency" }, () => {
  const t0 = performance.now();
  value += performance.now() - t0 > 1e9 ? 1 : 0;
});

Deno.bench("clock twice and record (what a read phase adds per read)", { group: "latency" }, () => {
  const t0 = libc.clockGettime();
  h.record(libc.clockGettime() - t0);
});

const path = Deno.makeTempFileSync({ suffix: ".histogram_bench" });
Deno.writeFileSync(path, new Uint8Array(1 << 20));
const fd = libc.open(path, libc.O.RDONLY);
const buffer = new Uint8Array(4096);
let at = 0;

Deno.bench("warm 4 KiB pread (for scale)", { group: "latency" }, () => {
  at = (at + 4096 * 37) & ((1 << 20) - 1);
  libc.pread(fd, buffer, at);
});

addEventListener("unload", () => {
  libc.close(fd);
  Deno.removeSync(path);
});

Deno.bench("clock twice (clock_gettime)", { group: "latency" }, () => {
  const t0 = libc.clockGettime();
  value += libc.clockGettime() - t0 > 1e18 ? 1 : 0;
});
