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

/** Names in the directory `dir`; none once it is gone (renamed or removed by the run). */
function listing(dir: string): string[] {
  try {
    return leftovers(dir);
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) return [];
    throw e;
  }
}

mpiTest(
  "mpi: a rank killed with SIGKILL ends the job and leaves no scratch directory, said in one line",
  async (launcher) => {
    for (const victim of [1, 0]) {
      // Three kills of each victim at different moments of a cell: every one must end the job
      // and leave nothing behind.
      const stderrs: string[] = [];
      for (const moment of ["made", "written", "later"] as const) {
        stderrs.push(await killOneRank(launcher, victim, moment));
      }
      if (launcher.name === "mpich" && victim === 0) {
        // Hydra forwards what the reaper of a killed rank 0 says before it exits, but the line
        // races Hydra's teardown: one of the three kills must show it. With rank 1 killed,
        // rank 0 may remove the directory itself before Hydra kills it, and its reaper then has
        // nothing to say.
        assert.ok(
          stderrs.some((e) => /^sciobench: removing scratch directory \S+: its run ended/m.test(e)),
          `no reaper line in three kills of rank 0:\n${stderrs.join("\n---\n")}`,
        );
      }
    }
  },
);

/**
 * When a kill lands in a cell of the table: `made` as soon as a later cell's scratch directory
 * appears holding only its owner record (under its temporary name or its own, rank 0 then
 * waiting in the collectives that hand its path to the other rank), `written` once both ranks
 * hold their files, `later` a moment after that.
 */
type Moment = "made" | "written" | "later";

/**
 * Runs a two-rank table, SIGKILLs rank `victim` at `moment` of a cell, and checks that the job
 * ends and no scratch directory is left; returns the job's stderr.
 */
async function killOneRank(launcher: Launcher, victim: number, moment: Moment): Promise<string> {
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
    // Both ranks' files are in the scratch directory: the ranks are found.
    const end = Date.now() + 60_000;
    let pids = new Map<number, number>();
    let scratch: string | undefined;
    while (Date.now() < end) {
      scratch = leftovers(tmp.path).find((n) => n.startsWith(".sciobench-"));
      const files = scratch ? listing(`${tmp.path}/${scratch}`) : [];
      if (files.includes("table.raw.r0") && files.includes("table.raw.r1")) {
        pids = await ranksHolding(tmp.path);
        if (pids.size === 2) break;
      }
      await sleep(20);
    }
    assert.equal(pids.size, 2, "both ranks found running");
    if (moment === "later") await sleep(60);
    while (moment === "made" && Date.now() < end) {
      // a later cell's directory, made by rank 0 and not yet written by any rank
      const next = leftovers(tmp.path).find((n) => n.startsWith(".sciobench-") && n !== scratch);
      if (next !== undefined && listing(`${tmp.path}/${next}`).join() === "owner") break;
      await sleep(1);
    }
    Deno.kill(pids.get(victim)!, "SIGKILL");
    const killed = Date.now();
    const status = await job.status;
    const stderr = new TextDecoder().decode(await new Response(job.stderr).arrayBuffer());
    assert.notEqual(status.code, 0, stderr);
    assert.ok(Date.now() - killed < 20_000, "the job ended");
    // The reaper acts as the first rank's process ends; give it a moment.
    for (let i = 0; i < 100 && leftovers(tmp.path).length > 0; i++) await sleep(50);
    const left = [...Deno.readDirSync(tmp.path)].map((e) =>
      e.isDirectory ? `${e.name} [${leftovers(`${tmp.path}/${e.name}`)}]` : e.name
    );
    assert.deepEqual(left, [], `no scratch left (rank ${victim} killed):\n${stderr}`);
    return stderr;
  } finally {
    try {
      job.kill("SIGKILL");
    } catch {
      // ended
    }
    await job.status;
  }
}
