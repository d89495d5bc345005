/**
 * The plan line's duration estimate comes from the results store only: the newest stored run of
 * the same command on this host and directory, scaled by the bytes; none without such a run.
 * @module
 */
import assert from "node:assert/strict";
import { runCli, tempDir } from "./_helpers.ts";

const TABLE = ["table", "--framing", "raw", "--n", "32^2", "--no-warmup", "--format", "csv"];

Deno.test("plan: the estimate scales the store's last run here by the bytes, and only that", async () => {
  using store = tempDir("sciobench-store-");
  using a = tempDir("sciobench-dir-");
  using b = tempDir("sciobench-dir-");
  const run = (size: string, dir: string) =>
    runCli([...TABLE, "--size", size, "--dir", dir, "--store", store.path]);
  const planLine = (stderr: string) => stderr.split("\n").find((l) => l.includes("plan: "))!;

  const first = await run("1M", a.path);
  assert.equal(first.code, 0, first.stderr);
  assert.doesNotMatch(planLine(first.stderr), /about/, "no stored run yet: no estimate");
  const metas = () =>
    [...Deno.readDirSync(store.path)].map((e) => e.name).filter((n) => n.endsWith(".jsonl"))
      .sort().map((n) =>
        JSON.parse(Deno.readTextFileSync(`${store.path}/${n}`).split("\n")[0]!).meta as {
          planned_bytes: number;
          duration_s: number;
        }
      );
  const stored = metas()[0]!;
  assert.ok(stored.planned_bytes > 2 * 1024 * 1024, "the meta records the planned bytes");

  // twice the bytes in the same directory: twice the stored run's duration
  const second = await run("2M", a.path);
  assert.equal(second.code, 0, second.stderr);
  const m = /; about (\d+(?:\.\d+)?) (s|ms) \(stored run (\S+) here, scaled by bytes\)$/.exec(
    planLine(second.stderr),
  );
  assert.ok(m, planLine(second.stderr));
  const now = metas()[1]!;
  assert.ok(now.planned_bytes > 1.9 * stored.planned_bytes);
  const expected = stored.duration_s * now.planned_bytes / stored.planned_bytes;
  assert.ok(Math.abs(Number(m[1]) - expected) / expected < 0.2, `${m[1]} s against ${expected}`);

  // another directory: no run of it stored, no estimate
  const other = await run("1M", b.path);
  assert.equal(other.code, 0, other.stderr);
  assert.doesNotMatch(planLine(other.stderr), /about/);
});
