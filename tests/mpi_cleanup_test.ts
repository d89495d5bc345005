/**
 * Under MPI, a rank killed with SIGKILL ends the job (the launcher stops the others: Open MPI with
 * SIGTERM then SIGKILL, MPICH's Hydra with SIGKILL) and the scratch directory with every rank's
 * files goes with it: the reaper beside the first rank of the host removes it, in one line.
 * @module
 */
import assert from "node:assert/strict";
import { PERMISSIONS, tempDir } from "./_helpers.ts";
import { type Launcher, leftovers, mpiTest } from "./_mpi.ts";

const MAIN = new URL("../main.ts", import.meta.url).pathname;

/**
 * Pids of the processes whose command line holds `marker`, by MPI rank (from their environment).
 * Read by a `deno eval` (all permissions): the test's own would refuse to list /proc.
 */
async function ranksHolding(marker: string): Promise<Map<number, number>> {
  const code = `
    const out = [];
    for (const e of Deno.readDirSync("/proc")) {
      if (!/^\\d+$/.test(e.name) || Number(e.name) === Deno.pid) continue;
      try {
        const cmd = Deno.readTextFileSync("/proc/" + e.name + "/cmdline");
        if (!cmd.includes(Deno.args[0]) || !cmd.includes("main.ts")) continue;
        const env = Deno.readTextFileSync("/proc/" + e.name + "/environ").split("\\0");
        const rank = env.find((v) => /^(PMI_RANK|OMPI_COMM_WORLD_RANK)=/.test(v));
        if (rank) out.push([Number(rank.split("=")[1]), Number(e.name)]);
      } catch { /* gone */ }
    }
    console.log(JSON.stringify(out));`;
  const r = await new Deno.Command(Deno.execPath(), {
    args: ["eval", code, marker],
    stderr: "inherit",
  }).output();
  return new Map(JSON.parse(new TextDecoder().decode(r.stdout)) as [number, number][]);
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

mpiTest(
  "mpi: a rank killed with SIGKILL ends the job and leaves no scratch directory, said in one line",
  async (launcher) => {
    for (const victim of [1, 0]) {
      // The kill races the launcher's teardown (which rank is mid-phase, when Hydra stops
      // forwarding stderr): up to three tries of each victim, every failure reported if all fail.
      const failures: string[] = [];
      for (let attempt = 0; attempt < 3; attempt++) {
        try {
          await killOneRank(launcher, victim);
          break;
        } catch (e) {
          failures.push(e instanceof Error ? e.message : String(e));
        }
      }
      assert.ok(failures.length < 3, failures.join("\n---\n"));
    }
  },
);

/**
 * Runs a two-rank table, SIGKILLs rank `victim` once both ranks hold their files, and checks that
 * the job ends, no scratch directory is left, and (MPICH) the reaper's line is on stderr.
 */
async function killOneRank(launcher: Launcher, victim: number): Promise<void> {
  using tmp = tempDir("sciobench-mpi-kill-");
  const job = new Deno.Command(launcher.program, {
    args: [
      ...launcher.args(2),
      ...[Deno.execPath(), "run", "--quiet", ...PERMISSIONS, MAIN, "table"],
      ...["--framing", "raw", "--size", "4MiB", "--n", "32^2", "--repeat", "1000"],
      ...["--no-warmup", "--format", "csv", "--dir", tmp.path],
    ],
    stdout: "null",
    stderr: "piped",
    env: { NO_COLOR: "1" },
  }).spawn();
  try {
    // Both ranks' files are in the scratch directory: kill one rank.
    const end = Date.now() + 60_000;
    let pids = new Map<number, number>();
    while (Date.now() < end) {
      const scratch = leftovers(tmp.path).find((n) => n.startsWith(".sciobench-"));
      const files = scratch ? leftovers(`${tmp.path}/${scratch}`) : [];
      if (files.includes("table.raw.r0") && files.includes("table.raw.r1")) {
        pids = await ranksHolding(tmp.path);
        if (pids.size === 2) break;
      }
      await sleep(20);
    }
    assert.equal(pids.size, 2, "both ranks found running");
    Deno.kill(pids.get(victim)!, "SIGKILL");
    const killed = Date.now();
    const status = await job.status;
    const stderr = new TextDecoder().decode(await new Response(job.stderr).arrayBuffer());
    assert.notEqual(status.code, 0, stderr);
    assert.ok(Date.now() - killed < 20_000, "the job ended");
    // The reaper acts as the first rank's process ends; give it a moment.
    for (let i = 0; i < 100 && leftovers(tmp.path).length > 0; i++) await sleep(50);
    assert.deepEqual(leftovers(tmp.path), [], `no scratch left (rank ${victim} killed)`);
    if (launcher.name === "mpich" && victim === 0) {
      // Hydra forwards what the reaper of a killed rank 0 says before it exits. With rank 1
      // killed, rank 0 may remove the directory itself before Hydra kills it, and its reaper then
      // has nothing to say.
      assert.match(
        stderr,
        /^sciobench: removing scratch directory \S+: its run ended/m,
        `rank ${victim} killed`,
      );
    }
  } finally {
    try {
      job.kill("SIGKILL");
    } catch {
      // ended
    }
    await job.status;
  }
}
