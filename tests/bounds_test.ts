/**
 * Counts, ranges and sizes are bounded in O(1) before any work, with one line naming the limit;
 * malformed numbers are refused; long paths, newlines and progress lines never break an error
 * line; free-space and memory preflights refuse a run before it writes.
 */
import assert from "node:assert/strict";
import { UsageError } from "../lib/core/errors.ts";
import { parseIntegers, parseSeed } from "../lib/core/values.ts";
import { parseSize } from "../lib/core/sizes.ts";
import { checkFreeSpace, checkMemory } from "../lib/workloads/checks.ts";
import type { StatFs } from "../lib/sys/libc.ts";
import { runCli, runCliLimited, tempDir } from "./_helpers.ts";

function oneErrorLine(stderr: string): string {
  const lines = stderr.trimEnd().split("\n").filter((l) => !l.startsWith("sciobench: plan:"));
  assert.equal(lines.length, 1, `expected one error line, got:\n${stderr}`);
  assert.match(lines[0]!, /^sciobench: error: /);
  return lines[0]!;
}

Deno.test("integer ranges are bounded before they are expanded", () => {
  const t0 = performance.now();
  assert.throws(
    () => parseIntegers("1..9007199254740993", "--datasets", 1, 100_000),
    /values must be at most 100000/,
  );
  assert.throws(() => parseIntegers("1..9007199254740993", "--datasets", 1), /at most/);
  assert.throws(() => parseIntegers("1..200000", "--datasets", 1), /more than 1000 values/);
  assert.throws(() => parseIntegers("1..500,2000..2600", "--x", 1), /more than 1000 values/);
  assert.ok(performance.now() - t0 < 1000, "refused at once");
  assert.deepEqual(parseIntegers("1..1000:250,1"), [1, 251, 501, 751]);
});

Deno.test("sizes and seeds: fractions of a byte and empty seeds are refused", () => {
  assert.throws(() => parseSize("0.5", "--size"), UsageError);
  assert.throws(() => parseSize("1.0000001KiB", "--size"), /whole number of bytes/);
  assert.equal(parseSize("1.5KiB"), 1536);
  for (const bad of ["", " ", "1.5", "x", "99999999999999999999"]) {
    assert.throws(() => parseSeed(bad), UsageError, `'${bad}'`);
  }
  assert.equal(parseSeed("-3"), -3);
});

Deno.test("free-space and memory preflights refuse in one line", () => {
  const fs = { availableBytes: 100 << 20 } as StatFs;
  checkFreeSpace(fs, "/d", 10 << 20, "the file", "use less");
  assert.throws(
    () => checkFreeSpace(fs, "/d", 200 << 20, "the file", "use less"),
    /the file needs about .* but \/d has 100 MiB free; use less/,
  );
  assert.throws(() => checkMemory(2 ** 52, "a frame", "use a smaller --n"), /use a smaller --n/);
});

Deno.test("CLI: oversized counts are one line, exit 2, and nothing is written", async () => {
  using d = tempDir();
  const cases: [string[], RegExp][] = [
    [
      ["readers", "--procs", "100000", "--dir", d.path],
      /--procs '100000': values must be at most 256/,
    ],
    [["scaling", "--datasets", "1..9007199254740993", "--dir", d.path], /values must be at most/],
    [["scaling", "--datasets", "1..20000", "--dir", d.path], /more than 1000 values/],
    [
      ["write", "--framing", "raw", "--n", "2^40", "--frames", "1", `${d.path}/big.raw`],
      /a frame of N = 1099511627776 particles needs .* of memory/,
    ],
    [
      ["write", "--framing", "raw", "--seed=", "--n", "4", "--frames", "1", `${d.path}/s.raw`],
      /--seed is empty/,
    ],
    [["table", "--size", "0.5", "--dir", d.path], /bad --size '0.5'/],
    [
      ["table", "--dir", "/proc", "--size", "1MiB"],
      /--dir \/proc is on proc, a kernel file system/,
    ],
  ];
  for (const [args, want] of cases) {
    const r = await runCli(args);
    assert.equal(r.code, 2, `${args.join(" ")}: ${r.stderr}`);
    assert.match(oneErrorLine(r.stderr), want);
  }
  assert.deepEqual([...Deno.readDirSync(d.path)], []);
});

Deno.test("CLI: a 300-character name and a 5000-character path are one short line", async () => {
  for (const path of [`/tmp/${"a".repeat(300)}`, `/tmp/${"abcdefghi/".repeat(500)}x`]) {
    const r = await runCli(["info", path]);
    assert.equal(r.code, 1, r.stderr);
    const line = oneErrorLine(r.stderr);
    assert.doesNotMatch(line, /internal error/);
    assert.ok(line.length < 400, line);
  }
});

Deno.test("CLI: an error during scaling starts its own line after the progress stars", async () => {
  using d = tempDir();
  // RLIMIT_FSIZE at 4000 KiB lets the warm-up through and fails the run.
  const out = await runCliLimited([
    "scaling",
    "--framing",
    "raw",
    "--datasets",
    "5",
    "--dir",
    d.path,
    "--format",
    "seed",
  ], 4000);
  const stderr = out.stderr;
  assert.equal(out.code, 1, stderr);
  // IOspeed's stars (--format seed) end their line; the run's row says why it failed
  assert.match(stderr, /Write +5 datasets:\*+\nsciobench: error: 1 of 1 cells failed/);
  assert.match(out.stdout, /Write {2}5: failed: .*File too large/);
});
