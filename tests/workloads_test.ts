/**
 * One registry of workloads: a toy workload (tests/_toy_workload.ts), added with registerWorkload
 * and no other edit, is a command with its help, `--dry-run`, every output format, its chart
 * (`--plot` at the end of a run, `sciobench plot` of its results) and MPI; another that takes a
 * FILE argument gets its usage line and FILE.
 */
import assert from "node:assert/strict";
import { PERMISSIONS, tempDir } from "./_helpers.ts";
import { BUILTIN_WORKLOADS } from "../lib/workloads/registry.ts";
import { COMMANDS, rankAware } from "../lib/cli/commands.ts";
import { type JsonDoc, mpiTest, runMpi } from "./_mpi.ts";

const TOY_CLI = new URL("./_toy_workload.ts", import.meta.url).pathname;

/** Runs the sciobench CLI with the toy registered (tests/_toy_workload.ts as the program). */
async function toyCli(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", "--quiet", ...PERMISSIONS, TOY_CLI, ...args],
    stdout: "piped",
    stderr: "piped",
    env: { NO_COLOR: "1" },
  }).output();
  const d = new TextDecoder();
  return { code: out.code, stdout: d.decode(out.stdout), stderr: d.decode(out.stderr) };
}

Deno.test("workloads: a toy workload is a command: list, --help, --dry-run, every format", async () => {
  const list = await toyCli(["--help"]);
  assert.match(list.stdout, /^ {2}toy +a toy workload of tests\/_toy_workload\.ts$/m);
  const help = await toyCli(["toy", "--help"]);
  assert.equal(help.code, 0, help.stderr);
  assert.match(help.stdout, /^Usage: sciobench toy \[options\]$/m);
  // its own flag, a shared flag it names, and the flags every workload takes
  for (const flag of ["--steps K", "--seed S", "--format F", "-o, --out FILE", "--dry-run"]) {
    assert.match(
      help.stdout,
      new RegExp(`^ {2}${flag.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}`, "m"),
    );
  }
  assert.match(help.stdout, /rows made \(default 3\)/);

  const dry = await toyCli(["toy", "--steps", "2", "--dry-run", "--format", "json"]);
  assert.equal(dry.code, 0, dry.stderr);
  assert.deepEqual(JSON.parse(dry.stdout).parameters, { steps: 2, seed: 1 });

  const csv = await toyCli(["toy", "--steps", "2", "--seed", "5", "--format", "csv"]);
  assert.equal(csv.code, 0, csv.stderr);
  assert.deepEqual(csv.stdout.trim().split("\n"), [
    "step,value,bytes,wall_s",
    "1,5,8,0",
    "2,10,16,0",
  ]);
  assert.match(
    csv.stderr,
    /^sciobench: plan: toy will write 0 B in 0 scratch files and read 0 B$/m,
  );
  const json = await toyCli(["toy", "--format", "json"]);
  const doc = JSON.parse(json.stdout) as { meta: { command: string }; rows: { value: number }[] };
  assert.equal(doc.meta.command, "toy");
  assert.deepEqual(doc.rows.map((r) => r.value), [1, 2, 3]);
  const jsonl = await toyCli(["toy", "--format", "jsonl", "--repeat", "1"]);
  const jsonlLines = jsonl.stdout.trim().split("\n");
  assert.equal(jsonlLines.length, 5, "the facts, one line per row, the end facts");
  assert.match(jsonlLines[4]!, /^{"end":{"load_average_end":/);
  const table = await toyCli(["toy", "--format", "table"]);
  assert.equal(table.code, 0, table.stderr);
  assert.match(table.stdout, /step/);

  // one line, exit 2: no seed layout, a bad value, an unknown flag
  for (
    const [args, re] of [
      [["--format", "seed"], /bad --format 'seed': expected one of table, csv, json, jsonl/],
      [["--steps", "0"], /bad --steps '0'/],
      [["--stesp", "2"], /toy: Unknown option '--stesp'.*did you mean '--steps'/],
    ] as const
  ) {
    const r = await toyCli(["toy", ...args]);
    assert.equal(r.code, 2, r.stderr);
    assert.equal(r.stderr.trim().split("\n").length, 1, r.stderr);
    assert.match(r.stderr, re);
  }
});

Deno.test("workloads: a toy workload's chart: --plot draws it, and 'plot' finds it from its JSON and CSV", async () => {
  using d = tempDir();
  const json = `${d.path}/toy.json`;
  const csv = `${d.path}/toy.csv`;
  const run = await toyCli([
    "toy",
    "--steps",
    "4",
    "--format",
    "json",
    "--out",
    json,
    "--plot",
    `${d.path}/run.svg`,
  ]);
  assert.equal(run.code, 0, run.stderr);
  const title = /<text[^>]*>sciobench toy: value per step<\/text>/;
  assert.match(Deno.readTextFileSync(`${d.path}/run.svg`), title);
  assert.equal((await toyCli(["toy", "--steps", "4", "--format", "csv", "--out", csv])).code, 0);
  // the meta's command names the workload in JSON, its declared columns in CSV
  for (const results of [json, csv]) {
    const out = `${results}.svg`;
    const plot = await toyCli(["plot", results, "-o", out, "--format", "json"]);
    assert.equal(plot.code, 0, plot.stderr);
    const row = (JSON.parse(plot.stdout) as { rows: { workload: string; rows: number }[] }).rows[0];
    assert.deepEqual([row?.workload, row?.rows], ["toy", 4], results);
    assert.match(Deno.readTextFileSync(out), title);
  }
});

Deno.test("workloads: a toy workload that takes FILE gets its usage line, its FILE and its refusals", async () => {
  using d = tempDir();
  const file = `${d.path}/in.bin`;
  Deno.writeFileSync(file, new Uint8Array(5));
  const help = await toyCli(["toyfile", "--help"]);
  assert.equal(help.code, 0, help.stderr);
  assert.match(help.stdout, /^Usage: sciobench toyfile \[options\] FILE$/m);
  const csv = await toyCli(["toyfile", "--format", "csv", file]);
  assert.equal(csv.code, 0, csv.stderr);
  assert.equal(csv.stdout, `path,bytes\n${file},5\n`);
  const dry = await toyCli(["toyfile", "--dry-run", "--format", "json", file]);
  assert.equal(dry.code, 0, dry.stderr);
  assert.deepEqual(JSON.parse(dry.stdout).parameters, { file });
  // one line, exit 2: no FILE, two of them, an --out that is FILE
  for (
    const [args, re] of [
      [[], /^sciobench: error: toyfile: give exactly one FILE \(see 'sciobench toyfile --help'\)$/],
      [[file, file], /toyfile: give exactly one FILE/],
      [["--out", file, file], /--out .*in\.bin is FILE itself; give another file for the output/],
    ] as const
  ) {
    const r = await toyCli(["toyfile", ...args]);
    assert.equal(r.code, 2, r.stderr);
    assert.equal(r.stderr.trim().split("\n").length, 1, r.stderr);
    assert.match(r.stderr.trim(), re);
  }
  assert.deepEqual([...Deno.readFileSync(file)], [0, 0, 0, 0, 0], "FILE left as it was");
});

Deno.test("workloads: every built-in workload is a command, and every command that runs ranks a workload", () => {
  const names = BUILTIN_WORKLOADS.map((w) => w.name);
  assert.deepEqual(COMMANDS.map((c) => c.name).filter((n) => names.includes(n)), names);
  const ranked = BUILTIN_WORKLOADS.filter((w) => w.aggregate !== undefined).map((w) => w.name);
  assert.deepEqual(COMMANDS.filter(rankAware).map((c) => c.name), ranked);
  assert.deepEqual(ranked, ["table", "scaling", "records", "readers"]);
});

mpiTest("workloads: a toy workload runs under MPI, its rows aggregated over ranks", async (l) => {
  const r = await runMpi(l, ["toy", "--steps", "2", "--format", "json"], {
    ranks: 2,
    script: TOY_CLI,
  });
  assert.equal(r.code, 0, r.stderr);
  const doc = JSON.parse(r.stdout) as JsonDoc;
  assert.deepEqual(doc.rows.map((r) => [r.step, r.bytes, r.ranks]), [[1, 16, 2], [2, 32, 2]]);
});
