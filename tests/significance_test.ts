/**
 * The statistics behind `compare`: the exact Mann-Whitney test and the Hodges-Lehmann ratio with
 * its interval, against hand-counted cases and against SciPy (python3-scipy) on random samples.
 */
import assert from "node:assert/strict";
import {
  mannWhitney,
  midRanks,
  minimumP,
  ratioEstimate,
  uDistribution,
} from "../lib/report/compare/significance.ts";
import { peerTest } from "./_helpers.ts";

Deno.test("significance: U's null distribution counts every arrangement", () => {
  // 3 against 3: C(6, 3) = 20 arrangements, symmetric around 4.5
  const counts = uDistribution(3, 3);
  assert.deepEqual(counts, [1, 1, 2, 3, 3, 3, 3, 2, 1, 1]);
  const c54 = uDistribution(5, 4);
  assert.equal(c54.reduce((a, b) => a + b, 0), 126);
  assert.deepEqual(c54, [...c54].reverse());
});

Deno.test("significance: 3 repeats against 3 can never reach p < 0.05; 5 against 5 can", () => {
  assert.equal(minimumP(3, 3), 0.1);
  assert.equal(mannWhitney([1, 2, 3], [4, 5, 6]).p, 0.1);
  assert.ok(Math.abs(minimumP(5, 5) - 2 / 252) < 1e-12);
  const separated = mannWhitney([1, 2, 3, 4, 5], [6, 7, 8, 9, 10]);
  assert.equal(separated.method, "exact");
  assert.ok(Math.abs(separated.p - 2 / 252) < 1e-12);
  assert.equal(separated.u, 25);
  // identical samples: no evidence at all
  assert.equal(mannWhitney([5, 5, 5], [5, 5, 5]).p, 1);
});

Deno.test("significance: ties take mid-ranks and the exact test counts them", () => {
  assert.deepEqual(midRanks([3, 1, 3, 2]), [3.5, 1, 3.5, 2]);
  // 70 arrangements of the pooled mid-ranks; 14 are at least as far from the mean as observed
  const r = mannWhitney([1, 2, 2, 3], [2, 3, 4, 4]);
  assert.equal(r.u, 13.5);
  assert.ok(Math.abs(r.p - 0.2) < 1e-12);
});

Deno.test("significance: the ratio and its interval cover a known 10% change", () => {
  const a = [100, 102, 98, 101, 99];
  const b = a.map((x) => x * 1.1);
  const e = ratioEstimate(a, b);
  assert.ok(Math.abs(e.ratio - 1.1) < 1e-9);
  assert.ok(e.low < 1.1 && e.high > 1.1 && e.low > 1);
  // 5 x 5: the 95% level is not reachable exactly; the interval says the level it has
  assert.ok(e.confidence >= 0.95 && e.confidence < 0.98, String(e.confidence));
  // 3 x 3: no interval reaches 95%; the widest one has 90%
  const small = ratioEstimate([100, 102, 98], [110, 112, 108]);
  assert.ok(Math.abs(small.confidence - 0.9) < 1e-12);
  assert.ok(Math.abs(small.low - 108 / 102) < 1e-12);
  assert.ok(Math.abs(small.high - 112 / 98) < 1e-12);
});

/** A seeded generator of positive samples (xorshift), so the cases are the same every run. */
function samples(seed: number, count: number, scale: number): number[] {
  let x = seed >>> 0 || 1;
  const out: number[] = [];
  for (let i = 0; i < count; i++) {
    x ^= x << 13;
    x >>>= 0;
    x ^= x >>> 17;
    x ^= x << 5;
    x >>>= 0;
    out.push(Math.round(scale * (1 + (x % 1000) / 1000)));
  }
  return out;
}

function scipyMissing(): string | null {
  try {
    const r = new Deno.Command("/usr/bin/python3", {
      args: ["-c", "import scipy.stats"],
      stdout: "null",
      stderr: "null",
    }).outputSync();
    return r.success ? null : "python3-scipy is not installed (import scipy.stats failed)";
  } catch {
    return "/usr/bin/python3 is missing";
  }
}

peerTest("significance: p-values agree with SciPy's mannwhitneyu", scipyMissing, async () => {
  const cases: [number[], number[], string][] = [];
  for (let s = 1; s <= 12; s++) {
    const m = 3 + (s % 5), n = 3 + ((s * 3) % 5);
    // integer samples with ties, shifted apart in some cases
    cases.push([samples(s, m, 100), samples(s + 100, n, 100 + 8 * (s % 4)), "exact"]);
  }
  cases.push([samples(7, 30, 100), samples(8, 30, 110), "asymptotic"]);
  const script = `
import json, sys
from scipy.stats import mannwhitneyu
for a, b, method in json.load(sys.stdin):
    ties = len(set(a + b)) < len(a + b)
    if method == "exact" and ties:
        from scipy.stats import permutation_test
        import numpy as np
        def stat(x, y):
            return mannwhitneyu(x, y, method="asymptotic").statistic
        mean = len(a) * len(b) / 2
        r = permutation_test((b, a), lambda x, y: abs(stat(x, y) - mean),
                             permutation_type="independent", n_resamples=float("inf"),
                             alternative="greater")
        print(r.pvalue)
    else:
        print(mannwhitneyu(b, a, method=method, use_continuity=True).pvalue)
`;
  const child = new Deno.Command("/usr/bin/python3", {
    args: ["-c", script],
    stdin: "piped",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const writer = child.stdin.getWriter();
  writer.write(new TextEncoder().encode(JSON.stringify(cases)));
  await writer.close();
  const r = await child.output();
  assert.ok(r.success, new TextDecoder().decode(r.stderr));
  const theirs = new TextDecoder().decode(r.stdout).trim().split("\n").map(Number);
  assert.equal(theirs.length, cases.length);
  cases.forEach(([a, b], i) => {
    const ours = mannWhitney(a, b).p;
    assert.ok(
      Math.abs(ours - theirs[i]!) < 1e-6,
      `case ${i} (${a.length} x ${b.length}): ours ${ours}, SciPy ${theirs[i]}`,
    );
  });
});
