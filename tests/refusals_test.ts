/**
 * Malformed invocations are refused before anything runs: exit 2, nothing on stdout, one line on
 * stderr saying what was given and what is accepted; `--dry-run` applies the run's own checks.
 */
import assert from "node:assert/strict";
import { MAX_REPEAT, repeatOption } from "../lib/workloads/settings.ts";
import { parseCount } from "../lib/core/values.ts";
import { UsageError } from "../lib/core/errors.ts";
import { runCli, tempDir } from "./_helpers.ts";

Deno.test("refusals: nonsense invocations exit 2 with one line, the dry-run as the run", async () => {
  using dir = tempDir();
  const file = `${dir.path}/plain`;
  Deno.writeFileSync(file, new Uint8Array(8));
  const cases: [string[], RegExp][] = [
    [["table", "--repeat", "1000000000000"], /bad --repeat '1000000000000': at most 1000$/],
    [["records", "--trials", "5000"], /bad --trials '5000': at most 1000$/],
    [["readers", "--repeat", "1001"], /bad --repeat '1001': at most 1000$/],
    [["table", "--n", "0^0"], /bad --n '0\^0': in B\^E both B and E must be positive integers$/],
    [["table", "--n", "0^3"], /bad --n '0\^3'/],
    [["table", "--layout", "shared"], /--layout shared: one file shared by MPI ranks, but this/],
    [["records", "--layout", "shared"], /--layout shared: one file shared by MPI ranks, but this/],
    [["help", "bogus"], /^sciobench: error: help: no command 'bogus'; commands: table, /],
    [["info", "--json", "--format", "table", file], /--json and --format table disagree/],
  ];
  // the dry-run refuses what the run refuses: a missing or non-directory --dir, a --bs that
  // O_DIRECT cannot use, reader files that cannot fit on the disk
  const planned: [string[], RegExp][] = [
    [["table", "--quick", "--dir", `${dir.path}/missing`], /--dir .*missing does not exist$/],
    [["table", "--quick", "--dir", file], /--dir .*plain is not a directory$/],
    [["records", "--quick", "--dir", file], /--dir .*plain is not a directory$/],
    [["scaling", "--quick", "--dir", file], /--dir .*plain is not a directory$/],
    [
      ["table", "--quick", "--framing", "raw", "--direct", "--bs", "1000", "--dir", dir.path],
      /--bs 1000 is not a multiple of the \d+-byte alignment/,
    ],
    [
      ["readers", "--records", "100000", "--length", "100000000", "--dir", dir.path],
      /7 files of 100000 records of 100000000 doubles needs about .* TiB but .* free/,
    ],
  ];
  for (
    const [args, why] of [
      ...cases,
      ...planned.flatMap(([a, w]) => [[a, w], [[...a, "--dry-run"], w]] as [string[], RegExp][]),
    ]
  ) {
    const r = await runCli(args);
    const what = args.join(" ");
    assert.equal(r.code, 2, `${what}: ${r.stderr}`);
    assert.equal(r.stdout, "", what);
    const lines = r.stderr.split("\n").filter((l) => l !== "");
    assert.equal(lines.length, 1, `${what}: ${r.stderr}`);
    assert.match(lines[0]!, /^sciobench: error: /, what);
    assert.match(lines[0]!, why, what);
  }
  assert.deepEqual([...Deno.readDirSync(dir.path)].map((e) => e.name), ["plain"], "nothing left");
  // help of a real command still prints
  const help = await runCli(["help", "table"]);
  assert.equal(help.code, 0);
  assert.match(help.stdout, /^sciobench table:/);
});

Deno.test("refusals: the repeat limit is declared once; counts are positive", () => {
  assert.equal(repeatOption(String(MAX_REPEAT), undefined), MAX_REPEAT);
  assert.throws(() => repeatOption(String(MAX_REPEAT + 1), undefined), UsageError);
  assert.equal(parseCount("32^2"), 1024);
  assert.equal(parseCount("1^5"), 1);
  assert.throws(() => parseCount("0^0"), UsageError);
  assert.throws(() => parseCount("7^0"), UsageError);
  assert.throws(() => parseCount("0"), UsageError);
});

Deno.test("plan: no duration guessed from assumed rates, in the text, the JSON or a run's first line", async () => {
  using dir = tempDir();
  const text = await runCli(["table", "--quick", "--dry-run", "--dir", dir.path]);
  assert.equal(text.code, 0, text.stderr);
  assert.doesNotMatch(text.stdout, /estimate|roughly|min\b/);
  assert.match(text.stdout, /^write: .* bytes\)$/m);
  const json = await runCli([
    "table",
    "--quick",
    "--dry-run",
    "--format",
    "json",
    "--dir",
    dir.path,
  ]);
  assert.equal(json.code, 0, json.stderr);
  const plan = JSON.parse(json.stdout) as Record<string, unknown>;
  assert.equal(plan.estimate_s, undefined);
  assert.equal(typeof plan.write_bytes, "number");
  const run = await runCli([
    ...["table", "--framing", "raw", "--size", "1MiB", "--n", "64", "--sample", "64k"],
    ...["--format", "csv", "--dir", dir.path],
  ]);
  assert.equal(run.code, 0, run.stderr);
  assert.match(run.stderr.split("\n")[0]!, /^sciobench: plan: table will write .* and read [^;]*$/);
});
