import assert from "node:assert/strict";
import { formatCount, formatSize } from "../lib/report/units.ts";
import { parseCount, parseIntegers, parseShape } from "../lib/core/values.ts";
import { parseSize } from "../lib/core/sizes.ts";
import { UsageError } from "../lib/core/errors.ts";
import { formatG } from "../lib/report/units.ts";
import { tableSizing } from "../lib/workloads/table/mod.ts";
import { runCli } from "./_helpers.ts";

Deno.test("parseSize accepts B, KiB, MiB, GiB and plain bytes", () => {
  assert.equal(parseSize("128MiB"), 128 * 2 ** 20);
  assert.equal(parseSize("1GiB"), 2 ** 30);
  assert.equal(parseSize("1.5 KiB"), 1536);
  assert.equal(parseSize("4096"), 4096);
  assert.equal(parseSize("10B"), 10);
  assert.equal(parseSize("2gib"), 2 * 2 ** 30);
  // fio, IOR and dd: a bare letter is binary, in either case; MB and kB are decimal
  for (const [text, bytes] of [["128M", 128 * 2 ** 20], ["128m", 128 * 2 ** 20]] as const) {
    assert.equal(parseSize(text), bytes, text);
  }
  assert.equal(parseSize("1G"), 2 ** 30);
  assert.equal(parseSize("1g"), 2 ** 30);
  assert.equal(parseSize("4k"), 4096);
  assert.equal(parseSize("4K"), 4096);
  assert.equal(parseSize("2T"), 2 * 2 ** 40);
  assert.equal(parseSize("4KiB"), 4096);
  assert.equal(parseSize("100MB"), 100e6);
  assert.equal(parseSize("1GB"), 1e9);
  assert.equal(parseSize("4kB"), 4000);
  assert.equal(parseSize("1.5M"), 1.5 * 2 ** 20);
  assert.throws(
    () => parseSize("12 parsecs", "--size"),
    /bad --size '12 parsecs': expected bytes \(4096\), or a number with a unit: k, M, G, T or KiB, MiB, GiB, TiB \(binary.*kB, MB, GB, TB \(decimal/,
  );
  for (const bad of ["", "MiB", "12 parsecs", "-1MiB", "0", "1e3"]) {
    assert.throws(() => parseSize(bad), UsageError, bad);
  }
  assert.equal(formatSize(128 * 2 ** 20), "128 MiB");
  assert.equal(formatSize(2 ** 30), "1 GiB");
  assert.equal(formatSize(100), "100 B");
});

Deno.test("parseCount accepts 1024 and 32^2", () => {
  assert.equal(parseCount("1024"), 1024);
  assert.equal(parseCount("32^2"), 1024);
  assert.equal(parseCount("1024^2"), 1048576);
  for (const bad of ["0", "x", "32^", "-4", "2.5"]) {
    assert.throws(() => parseCount(bad), UsageError, bad);
  }
  // a bounded count names its range, not 2^53
  assert.throws(() => parseCount("0", "--iodepth", 1024), /from 1 to 1024/);
  assert.throws(() => parseCount("0"), /below 2\^53/);
  assert.equal(formatCount(1024), "32^2");
  assert.equal(formatCount(16384), "128^2");
  assert.equal(formatCount(1000), "1000");
});

Deno.test("parseIntegers reads lists and ranges", () => {
  assert.deepEqual(parseIntegers("1..7"), [1, 2, 3, 4, 5, 6, 7]);
  assert.deepEqual(parseIntegers("5..40:5"), [5, 10, 15, 20, 25, 30, 35, 40]);
  assert.deepEqual(parseIntegers("1,2,8..16:8,2"), [1, 2, 8, 16]);
  for (const bad of ["7..1", "1..x", "", "1..4:0"]) {
    assert.throws(() => parseIntegers(bad), UsageError, bad);
  }
});

Deno.test("parseShape reads 64x64x64", () => {
  assert.deepEqual(parseShape("64x64x64"), [64, 64, 64]);
  assert.deepEqual(parseShape("2000x300x500"), [2000, 300, 500]);
  for (const bad of ["64x", "0x3", "a"]) assert.throws(() => parseShape(bad), UsageError, bad);
});

Deno.test("tableSizing matches benchmark-hoomd.py's table", () => {
  const MiB = 2 ** 20, GiB = 2 ** 30;
  assert.deepEqual(tableSizing(128 * MiB, 1024), {
    frames: 4682,
    dataBytes: 134242304,
    readFrames: 4682,
    readBytes: 134242304,
  });
  assert.deepEqual(tableSizing(128 * MiB, 1048576), {
    frames: 5,
    dataBytes: 146800640,
    readFrames: 5,
    readBytes: 146800640,
  });
  assert.deepEqual(tableSizing(GiB, 1024), {
    frames: 37450,
    dataBytes: 1073766400,
    readFrames: 9362,
    readBytes: 268427264,
  });
  assert.deepEqual(tableSizing(GiB, 16384), {
    frames: 2341,
    dataBytes: 1073938432,
    readFrames: 585,
    readBytes: 268369920,
  });
  assert.deepEqual(tableSizing(GiB, 1048576), {
    frames: 37,
    dataBytes: 1086324736,
    readFrames: 9,
    readBytes: 264241152,
  });
});

Deno.test("formatG matches Python's '.4g' and '.3g'", () => {
  assert.equal(formatG(2.063, 4), "2.063");
  assert.equal(formatG(175, 4), "175");
  assert.equal(formatG(304.1, 4), "304.1");
  assert.equal(formatG(0.545, 3), "0.545");
  assert.equal(formatG(60.4, 3), "60.4");
  assert.equal(formatG(12345.6, 4), "1.235e+04");
  assert.equal(formatG(0.00001234, 3), "1.23e-05");
  assert.equal(formatG(15.56, 4), "15.56");
});

Deno.test("every size option reads fio's units: table --size 1M --sample 64k, as bytes in the plan", async () => {
  const r = await runCli([
    "table",
    "--framing",
    "raw",
    "--size",
    "1M,2MB",
    "--sample",
    "64k",
    "--n",
    "64",
    "--dry-run",
    "--format",
    "json",
  ]);
  assert.equal(r.code, 0, r.stderr);
  const plan = JSON.parse(r.stdout);
  assert.deepEqual(plan.parameters.size_bytes, [2 ** 20, 2e6]);
  assert.equal(plan.parameters.sample_bytes, 65536);
});

Deno.test("an empty argument or option value is one usage line, exit 2", async () => {
  for (
    const [args, re] of [
      [["info", ""], /^sciobench: error: info: an empty argument \(''\) names no file\n$/],
      [["read", ""], /^sciobench: error: read: an empty argument/],
      [["table", "--quick", "--out", ""], /^sciobench: error: table: --out is empty/],
      [["table", "--quick", "--dir="], /^sciobench: error: table: --dir is empty/],
      [["plot", "", "-o", "x.svg"], /^sciobench: error: plot: an empty argument/],
    ] as const
  ) {
    const r = await runCli([...args]);
    assert.equal(r.code, 2, `${args.join(" ")}: ${r.stderr}`);
    assert.match(r.stderr, re, args.join(" "));
  }
});
