/**
 * The plan under MPI counts every rank's bytes and files: `--dry-run` and a run's first stderr
 * line under mpirun with 2 ranks, against the same plan on one process (each rank its own file,
 * or with --layout shared its part of one file); and planForRanks itself.
 * @module
 */
import assert from "node:assert/strict";
import { planForRanks, type RunPlan } from "../lib/workloads/workload.ts";
import { runCli, tempDir } from "./_helpers.ts";
import { mpiTest, runMpi } from "./_mpi.ts";

const PLAN: RunPlan = {
  command: "table",
  parameters: { repeat: 1 },
  backends: [{ name: "raw" }],
  skipped: [],
  files: [{ name: "table.raw", count: 3, bytes: 64 }],
  writeBytes: 192,
  readBytes: 100,
  warnings: [],
};

Deno.test("planForRanks: bytes times ranks; files per rank, or one shared file ranks times larger", () => {
  assert.equal(planForRanks(PLAN, 1), PLAN);
  const own = planForRanks(PLAN, 4);
  assert.deepEqual(own.files, [{ name: "table.raw per rank", count: 12, bytes: 64 }]);
  assert.deepEqual([own.writeBytes, own.readBytes, own.parameters.ranks], [768, 400, 4]);
  const shared = planForRanks(PLAN, 4, true);
  assert.deepEqual(shared.files, [{ name: "table.raw", count: 3, bytes: 256 }]);
  assert.deepEqual([shared.writeBytes, shared.readBytes], [768, 400]);
});

const TABLE = ["table", "--framing", "raw", "--size", "1M", "--n", "32^2", "--no-warmup"];

interface PlanJson {
  parameters: Record<string, unknown>;
  files: { name: string; count: number; bytes: number }[];
  "write_bytes": number;
  "read_bytes": number;
}

mpiTest(
  "mpi plan: 2 ranks write and read twice one rank's bytes, in 2 files or 1 shared",
  async (l) => {
    using d = tempDir("sciobench-plan-");
    const one = await runCli([...TABLE, "--dir", d.path, "--dry-run", "--format", "json"]);
    assert.equal(one.code, 0, one.stderr);
    const single = JSON.parse(one.stdout) as PlanJson;
    for (const layout of ["per-rank", "shared"]) {
      const args = [...TABLE, "--layout", layout, "--dir", d.path, "--dry-run", "--format", "json"];
      const r = await runMpi(l, args, { ranks: 2 });
      assert.equal(r.code, 0, r.stderr);
      // printed once, by rank 0
      const plan = JSON.parse(r.stdout) as PlanJson;
      assert.equal(plan.parameters.ranks, 2);
      assert.equal(plan.write_bytes, 2 * single.write_bytes, layout);
      assert.equal(plan.read_bytes, 2 * single.read_bytes, layout);
      const [file] = plan.files;
      const [base] = single.files;
      assert.deepEqual(
        [file!.count, file!.bytes],
        layout === "shared" ? [base!.count, 2 * base!.bytes] : [2 * base!.count, base!.bytes],
        layout,
      );
    }
    // a run's first line says the same: 2 files of 1 MiB's frames each
    const run = await runMpi(l, [...TABLE, "--dir", d.path, "--format", "csv"], { ranks: 2 });
    assert.equal(run.code, 0, run.stderr);
    const first = run.stderr.split("\n").find((line) => line.includes("plan:"));
    assert.match(
      first!,
      /plan: table will write 2\.023 MiB in 2 scratch files and read 4\.047 MiB$/,
    );
  },
);
