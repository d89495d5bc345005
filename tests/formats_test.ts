/**
 * One declaration of the output formats of rows (lib/report/formats/mod.ts): `--format`'s choices
 * and did-you-mean, the writers, the help and docs/cli.md read it; a toy format
 * (tests/_toy_format.ts), added with registerRowFormat and no other edit, is taken by table, the
 * toy workload, write, plot and framings, listed in their `--help` and in the reference, and
 * keeps an interrupted run's rows.
 */
import assert from "node:assert/strict";
import { resolveFormat } from "../lib/cli/output.ts";
import { registerRowFormat, rowFormatNames, rowFormats } from "../lib/report/formats/mod.ts";
import { CSV_FORMAT } from "../lib/report/formats/csv.ts";
import { PERMISSIONS, runScript, tempDir } from "./_helpers.ts";

const TOY_FORMAT = new URL("./_toy_format.ts", import.meta.url).pathname;
const REFERENCE = new URL("../lib/cli/reference.ts", import.meta.url).href;
const DOCS = new URL("../docs/cli.md", import.meta.url);

/** Runs the sciobench CLI with the toy format registered (tests/_toy_format.ts as the program). */
function toyCli(args: string[]) {
  return runScript(TOY_FORMAT, args);
}

/** The lines of a TSV text, each split at its tabs. */
function tsv(text: string): string[][] {
  return text.replace(/\n$/, "").split("\n").map((line) => line.split("\t"));
}

/** The table cell the brief's quick run measures: one small raw cell, once, no peers. */
const SMALL_TABLE = [
  ...["table", "--quick", "--framing", "raw", "--size", "64k", "--n", "32^2"],
  ...["--no-peers", "--repeat", "1"],
];

Deno.test("formats: one declaration gives --format's choices, seed only with a seed layout", () => {
  assert.deepEqual(rowFormats().map((f) => f.name), ["table", "csv", "json", "jsonl", "seed"]);
  assert.deepEqual(rowFormatNames(false), ["table", "csv", "json", "jsonl"]);
  assert.equal(resolveFormat("seed", undefined, true), "seed");
  assert.throws(
    () => resolveFormat("seed", undefined, false),
    /^UsageError: bad --format 'seed': expected one of table, csv, json, jsonl$/,
  );
  assert.throws(() => resolveFormat("jsnl", undefined, false), /did you mean 'jsonl'\?/);
  assert.equal(resolveFormat(undefined, "out.csv", false), "csv", "--out: the data default");
  // a name is taken once, and is what a shell passes as one word
  assert.throws(() => registerRowFormat(CSV_FORMAT), /a row format named 'csv' is registered/);
  assert.throws(
    () => registerRowFormat({ ...CSV_FORMAT, name: "two words" }),
    /lower-case letters, digits and dashes: 'two words'/,
  );
  // every declared format is in the reference's list of formats
  const docs = Deno.readTextFileSync(DOCS);
  for (const f of rowFormats()) {
    assert.match(docs, new RegExp(`^${f.name} +${f.audience} +${f.description}`, "m"), f.name);
  }
});

Deno.test("formats: a toy format is --format toy for table, the toy workload, write, plot, framings", async () => {
  using d = tempDir();
  const csv = await toyCli([...SMALL_TABLE, "--dir", d.path, "--format", "csv"]);
  assert.equal(csv.code, 0, csv.stderr);
  const table = await toyCli([...SMALL_TABLE, "--dir", d.path, "--format", "toy"]);
  assert.equal(table.code, 0, table.stderr);
  const [head, ...rows] = tsv(table.stdout);
  assert.deepEqual(head, csv.stdout.split("\n")[0]!.split(","), "the columns, in CSV order");
  assert.equal(rows.length, 1, table.stdout);
  assert.equal(rows[0]!.length, head!.length);
  const row = Object.fromEntries(head!.map((c, i) => [c, rows[0]![i]]));
  assert.deepEqual([row.framing, row.size_bytes, row.N, row.stat], ["raw", "65536", "1024", "run"]);
  assert.ok(Number(row.write_MiBps) > 0, row.write_MiBps);

  const toy = await toyCli(["toy", "--steps", "2", "--seed", "5", "--format", "toy"]);
  assert.equal(toy.code, 0, toy.stderr);
  assert.equal(toy.stdout, "step\tvalue\tbytes\twall_s\n1\t5\t8\t0\n2\t10\t16\t0\n");
  const out = `${d.path}/toy.tsv`;
  const toyOut = await toyCli(["toy", "--steps", "2", "--seed", "5", "--format", "toy", "-o", out]);
  assert.equal(toyOut.code, 0, toyOut.stderr);
  assert.equal(toyOut.stdout, "");
  assert.equal(Deno.readTextFileSync(out), toy.stdout, "-o writes what stdout would carry");
  // a format without a plan of its own: --dry-run prints the plan as text
  const dry = await toyCli(["toy", "--dry-run", "--format", "toy"]);
  assert.equal(dry.code, 0, dry.stderr);
  assert.match(dry.stdout, /^sciobench toy: plan \(nothing written\)$/m);

  const file = `${d.path}/a.raw`;
  const write = await toyCli(
    ["write", "--framing", "raw", "--n", "32", "--frames", "2", "--format", "toy", file],
  );
  assert.equal(write.code, 0, write.stderr);
  assert.equal(tsv(write.stdout)[1]![tsv(write.stdout)[0]!.indexOf("framing")], "raw");

  const results = `${d.path}/results.csv`;
  Deno.writeTextFileSync(results, csv.stdout);
  const chart = `${d.path}/chart.svg`;
  const plot = await toyCli(["plot", results, "-o", chart, "--format", "toy"]);
  assert.equal(plot.code, 0, plot.stderr);
  assert.deepEqual(tsv(plot.stdout), [
    ["chart", "workload", "rows", "series"],
    [chart, "table", "1", "raw"],
  ]);

  const framings = await toyCli(["framings", "--format", "toy"]);
  assert.equal(framings.code, 0, framings.stderr);
  assert.deepEqual(tsv(framings.stdout)[0], ["name", "kind", "orders", "available", "description"]);
  assert.ok(tsv(framings.stdout).some((r) => r[0] === "raw" && r[1] === "native"));
});

Deno.test("formats: --help and the generated reference list the toy format; -o in every row command", async () => {
  const commands = ["table", "scaling", "records", "readers", "write", "read", "plot", "toy"];
  for (const command of commands) {
    const help = await toyCli([command, "--help"]);
    assert.equal(help.code, 0, help.stderr);
    const text = help.stdout.replace(/\s+/g, " ");
    assert.match(text, /, or toy \(tab-separated values of tests\/_toy_format\.ts\)/, command);
    assert.match(help.stdout, /^ {2}-o, --out FILE /m, `${command}: -o is --out`);
  }
  for (const command of ["table", "scaling", "records"]) {
    const help = (await toyCli([command, "--help"])).stdout.replace(/\s+/g, " ");
    assert.match(help, /or toy \([^)]*\); seed \(the seed's own layout\): /, command);
  }
  const framings = (await toyCli(["framings", "--help"])).stdout.replace(/\s+/g, " ");
  assert.match(framings, /or csv, jsonl, or toy \(one row per backend\)/);

  // the reference made with the toy registered lists it; the stored one (no plugins) does not
  const reference = await new Deno.Command(Deno.execPath(), {
    args: [
      "eval",
      `await import(${JSON.stringify(new URL("./_toy_format.ts", import.meta.url).href)});` +
      `const { cliReference } = await import(${JSON.stringify(REFERENCE)});` +
      "await Deno.stdout.write(new TextEncoder().encode(cliReference()));",
    ],
    env: { NO_COLOR: "1" },
  }).output();
  const text = new TextDecoder().decode(reference.stdout);
  assert.equal(reference.code, 0, new TextDecoder().decode(reference.stderr));
  assert.match(text, /^toy +data +tab-separated values of tests\/_toy_format\.ts; an interrupted/m);
  assert.match(text, /## sciobench toy\n/);
  assert.doesNotMatch(Deno.readTextFileSync(DOCS), /toy/);
});

Deno.test("formats: an interrupted run ends in the toy format's own way; a closed stdout is quiet", async () => {
  using d = tempDir();
  const out = `${d.path}/run.tsv`;
  // many small cells: the first few finish quickly, the run goes on far longer
  const child = new Deno.Command(Deno.execPath(), {
    args: [
      ...["run", "--quiet", ...PERMISSIONS, TOY_FORMAT, "table", "--framing", "raw"],
      ...["--size", "256KiB", "--n", "64", "--repeat", "1000", "--dir", d.path],
      ...["--format", "toy", "--out", out],
    ],
    stdout: "piped",
    stderr: "piped",
    env: { NO_COLOR: "1" },
  }).spawn();
  const stderr = child.stderr.getReader();
  let seen = "";
  const dec = new TextDecoder();
  while (!/cell 4\//.test(seen)) {
    const { value, done } = await stderr.read();
    if (done) break;
    seen += dec.decode(value);
  }
  child.kill("SIGTERM");
  stderr.releaseLock();
  const status = await child.output();
  assert.equal(status.code, 143, seen);
  const lines = tsv(Deno.readTextFileSync(out));
  assert.equal(lines[0]![0], "framing", "the header first");
  const rows = lines.slice(1, -1);
  assert.ok(rows.length >= 3, `finished rows kept: ${rows.length}`);
  assert.ok(rows.every((r) => r[0] === "raw" && r.length === lines[0]!.length));
  assert.deepEqual(lines.at(-1), ["# interrupted"]);
  assert.deepEqual([...Deno.readDirSync(d.path)].filter((e) => e.name.startsWith(".")), []);

  // the reader of stdout is gone before the first row: the end the format keeps (written when
  // the program ends) meets the closed pipe too, and the command ends quietly (exit 0)
  const gone = new Deno.Command(Deno.execPath(), {
    args: ["run", "--quiet", ...PERMISSIONS, TOY_FORMAT, "framings", "--format", "toy"],
    stdout: "piped",
    stderr: "piped",
    env: { NO_COLOR: "1" },
  }).spawn();
  await gone.stdout.cancel();
  const goneStatus = await gone.output();
  assert.equal(dec.decode(goneStatus.stderr), "");
  assert.equal(goneStatus.code, 0);
});

Deno.test("formats: unknown formats are refused with a did-you-mean; --audit needs nested rows", async () => {
  for (
    const [args, re] of [
      [
        ["toy", "--format", "tyo"],
        /^sciobench: error: bad --format 'tyo': expected one of table, csv, json, jsonl, toy; did you mean 'toy'\?$/,
      ],
      [
        ["table", "--format", "tsv", "--dry-run"],
        /^sciobench: error: bad --format 'tsv': expected one of table, csv, json, jsonl, seed, toy/,
      ],
      [["framings", "--format", "seed"], /expected one of table, text, json, csv, jsonl, toy$/],
      [["toy", "--format", "toy", "--audit"], /--audit .*use it with --format json or jsonl$/],
    ] as const
  ) {
    const r = await toyCli([...args]);
    assert.equal(r.code, 2, r.stderr);
    assert.equal(r.stderr.trim().split("\n").length, 1, r.stderr);
    assert.match(r.stderr.trim(), re);
  }
});
