/**
 * The batch-job behaviour the README (many nodes) and docs/measurement.md (results files)
 * describe: `--out` is atomic; on SIGTERM jsonl is completed and committed under the name while
 * csv keeps the old file; a SIGKILL leaves the target untouched and the finished rows (meta line
 * first) in `.NAME.sciobench-tmp-PID`.
 */
import assert from "node:assert/strict";
import { spawnCli, tempDir } from "./_helpers.ts";

/** Starts a long table run (many small cells) and resolves once `cells` cells have started. */
async function startLongRun(
  out: string,
  dir: string,
  format: string,
  extra: string[] = [],
): Promise<Deno.ChildProcess> {
  const child = spawnCli([
    ...["table", "--framing", "raw", "--size", "256KiB", "--n", "64", "--repeat", "1000"],
    ...["--dir", dir, "--format", format, "--out", out, ...extra],
  ]);
  const reader = child.stderr.getReader();
  let seen = "";
  const dec = new TextDecoder();
  while (!/cell 5\//.test(seen)) {
    const { value, done } = await reader.read();
    if (done) break;
    seen += dec.decode(value);
  }
  reader.releaseLock();
  return child;
}

Deno.test("batch recipe: SIGKILL leaves NAME untouched and the finished rows in .NAME.sciobench-tmp-PID", async () => {
  using d = tempDir();
  const out = `${d.path}/run.jsonl`;
  const child = await startLongRun(out, d.path, "jsonl");
  child.kill("SIGKILL");
  const status = await child.output();
  assert.equal(status.signal, "SIGKILL");
  assert.throws(() => Deno.statSync(out), Deno.errors.NotFound);
  const temp = `${d.path}/.run.jsonl.sciobench-tmp-${child.pid}`;
  const lines = Deno.readTextFileSync(temp).trim().split("\n").map((l) => JSON.parse(l));
  assert.equal(lines[0].meta.command, "table", "the meta line first");
  const rows = lines.slice(1);
  assert.ok(rows.length >= 4, `finished rows kept: ${rows.length}`);
  assert.deepEqual(rows.slice(0, 4).map((r) => r.repeat), [1, 2, 3, 4]);
  assert.ok(rows.every((r) => r.framing === "raw" && typeof r.read_MiBps === "number"));
  assert.equal(lines.some((l) => "interrupted" in l), false, "no closing line after SIGKILL");
});

Deno.test("batch recipe: SIGTERM commits jsonl under NAME; csv keeps the old NAME", async () => {
  using d = tempDir();
  const jsonl = `${d.path}/run.jsonl`;
  const a = await startLongRun(jsonl, d.path, "jsonl");
  a.kill("SIGTERM");
  assert.equal((await a.output()).code, 143);
  const lines = Deno.readTextFileSync(jsonl).trim().split("\n").map((l) => JSON.parse(l));
  assert.equal(lines[0].meta.command, "table");
  assert.ok(lines.length >= 6);
  assert.deepEqual(lines.at(-1), { interrupted: true });

  const csv = `${d.path}/old.csv`;
  Deno.writeTextFileSync(csv, "the old results\n");
  const b = await startLongRun(csv, d.path, "csv", ["--force"]);
  b.kill("SIGTERM");
  assert.equal((await b.output()).code, 143);
  assert.equal(Deno.readTextFileSync(csv), "the old results\n", "csv keeps the old file");
  const left = [...Deno.readDirSync(d.path)].map((e) => e.name).filter((n) => n.startsWith("."));
  assert.deepEqual(left, [], "no temporary file or scratch directory left");
});
