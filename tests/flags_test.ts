/**
 * One flag table: the same flag means the same thing in every command that takes it. `-o` is
 * `--out` everywhere, `write --size` sizes the file as `table --size` does, `--format seed` is
 * refused in one line where a command has no seed layout, list flags accumulate, and JSON rows
 * carry `direct` and `huge_pages` as booleans.
 */
import assert from "node:assert/strict";
import { FLAGS, flagsOf, type FlagSpec } from "../lib/cli/flags.ts";
import { parseFlags } from "../lib/cli/parse_flags.ts";
import { runCli, tempDir } from "./_helpers.ts";

Deno.test("flags: -o is --out in every command that writes output", () => {
  for (const command of FLAGS.out.commands) {
    assert.ok(flagsOf(command).some(([name, f]) => name === "out" && f.short === "o"), command);
  }
  assert.equal(parseFlags("table", ["-o", "x.csv"]).values.out, "x.csv");
  assert.equal(parseFlags("read", ["-o", "x.csv", "F"], true).values.out, "x.csv");
});

Deno.test("flags: list flags accumulate when repeated; defaults come from the table", () => {
  const { values } = parseFlags("table", ["--framing", "gsd", "--framing=raw", "--size", "1M"]);
  assert.equal(values.framing, "gsd,raw");
  assert.equal(values.seed, "1");
  assert.equal(values.sample, "256MiB");
  assert.equal(parseFlags("scaling", []).values.fsync, "none");
  assert.equal(parseFlags("records", []).values.fsync, "end");
  for (const [name, f] of Object.entries(FLAGS) as [string, FlagSpec][]) {
    assert.ok(f.help.length > 0 && f.commands.length > 0, name);
  }
});

Deno.test("flags: write --size gives ceil(size / 28 N) frames; --frames with it is refused", async () => {
  using d = tempDir();
  const r = await runCli([
    ...["write", "--framing", "raw", "--n", "32", "--size", "10k", "--format", "json"],
    `${d.path}/a.raw`,
  ]);
  assert.equal(r.code, 0, r.stderr);
  const [row] = JSON.parse(r.stdout).rows as Record<string, unknown>[];
  assert.equal(row!.frames, Math.ceil(10240 / (28 * 32)));
  assert.equal(row!.direct, false, "JSON booleans");
  assert.equal(row!.huge_pages, false, "JSON booleans");
  assert.equal(typeof row!.write_user_s, "number", "write's CPU columns carry the phase's name");
  const both = await runCli([
    ...["write", "--framing", "raw", "--n", "32", "--size", "10k", "--frames", "2"],
    `${d.path}/b.raw`,
  ]);
  assert.equal(both.code, 2);
  assert.match(
    both.stderr,
    /^sciobench: error: write: give --frames K or --size SIZE, not both\n$/,
  );
  const seed = await runCli(["read", "--format", "seed", `${d.path}/a.raw`]);
  assert.equal(seed.code, 2);
  assert.match(
    seed.stderr,
    /^sciobench: error: bad --format 'seed': expected one of table, csv, json, jsonl\n$/,
  );
});
