/**
 * Tests of lib/mpi: the bindings over both ABIs (Open MPI, MPICH) under a real launcher with 4
 * ranks, and the serial world without a launcher.
 * @module
 */
import assert from "node:assert/strict";
import { detectLaunch } from "../lib/mpi/library.ts";
import { commandMissing, peerTest, PERMISSIONS } from "./_helpers.ts";
import { crossNodeShift, serialWorld } from "../lib/mpi/world.ts";
import { LAUNCHERS, mpiTest, runMpi } from "./_mpi.ts";

const PROBE = new URL("./_mpi_probe.ts", import.meta.url).pathname;

interface Probe {
  size: number;
  sum: number[];
  max: number[];
  min: number[];
  plan: string;
  gathered: string[];
  wtime: number;
  facts: {
    ranks: number;
    nodes: number;
    "ranks_per_node": number;
    "mpi_library": string;
    "mpi_version": string;
    "mpi_wait": string;
  };
}

mpiTest(
  "mpi: 4 ranks init, reduce, broadcast and gather through the library, polled or blocking",
  async (launcher) => {
    for (const wait of ["poll", "block"]) {
      const r = await runMpi(launcher, [], {
        script: PROBE,
        env: wait === "poll" ? {} : { SCIOBENCH_MPI_WAIT: wait },
      });
      assert.equal(r.code, 0, r.stderr);
      const lines = r.stdout.trim().split("\n");
      assert.equal(lines.length, 1, `only rank 0 prints: ${r.stdout}`);
      const p = JSON.parse(lines[0]!) as Probe;
      assert.equal(p.size, 4);
      assert.deepEqual(p.sum, [0 + 1 + 2 + 3, 4]);
      assert.deepEqual(p.max, [3]);
      assert.deepEqual(p.min, [10]);
      assert.equal(p.plan, "plan-from-rank-0 é");
      assert.deepEqual(p.gathered, ["", "r1", "r2r2", "r3r3r3"]);
      assert.ok(p.wtime > 0 && p.wtime < 60, `MPI_Wtime difference ${p.wtime}`);
      assert.equal(p.facts.ranks, 4);
      assert.equal(p.facts.nodes, 1);
      assert.equal(p.facts.ranks_per_node, 4);
      assert.equal(p.facts.mpi_wait, wait);
      const abi = launcher.name === "openmpi" ? /openmpi/ : /mpich/;
      assert.match(p.facts.mpi_library, abi);
      assert.match(p.facts.mpi_version, launcher.name === "openmpi" ? /Open MPI/ : /MPICH/);
    }
  },
);

Deno.test("mpi: without a launcher the world is one process and collectives return their input", () => {
  const w = serialWorld();
  assert.equal(w.size, 1);
  assert.equal(w.rank, 0);
  assert.deepEqual(w.allreduce([1.5, 2], "max"), [1.5, 2]);
  assert.equal(w.bcastString("x"), "x");
  assert.deepEqual(w.gatherStrings("y"), ["y"]);
  assert.equal(w.facts().mpi_library, null);
  if (
    Deno.env.get("OMPI_COMM_WORLD_SIZE") === undefined && Deno.env.get("PMI_RANK") === undefined
  ) {
    assert.equal(detectLaunch().launcher, null);
  }
});

Deno.test("mpi: the default --reorder shift puts every rank's file on another node", () => {
  assert.equal(crossNodeShift(["a", "a", "a", "a"]), 0, "one node: each rank reads its own");
  assert.equal(crossNodeShift(["a", "a", "b", "b"]), 2, "filled in order: the ranks per node");
  assert.equal(crossNodeShift(["a", "a", "a", "b", "b", "b"]), 3);
  assert.equal(crossNodeShift(["a", "b", "a", "b"]), 1, "round robin: the next rank");
  assert.equal(crossNodeShift(["a", "a", "b", "c"]), 2);
  // no shift separates every pair: the busiest node's rank count, as IOR's -C uses
  assert.equal(crossNodeShift(["a", "a", "a", "b"]), 3);
});

const MPICH = LAUNCHERS.find((l) => l.name === "mpich")!;

peerTest(
  "mpi: MPICH through a wrapper that drops its PMI descriptor (as npx does) is one line, exit 2",
  () => commandMissing(MPICH.program),
  async () => {
    // The wrapper closes PMI_FD and runs deno, as npx's node does (it passes on stdio only).
    const main = new URL("../main.ts", import.meta.url).pathname;
    const out = await new Deno.Command(MPICH.program, {
      args: [
        ...MPICH.args(2),
        ...["/bin/sh", "-c", 'eval "exec $PMI_FD<&-"; exec "$@"', "sh"],
        ...[
          Deno.execPath(),
          "run",
          "--quiet",
          ...PERMISSIONS,
          main,
          "table",
          "--quick",
          "--dry-run",
        ],
      ],
      stdout: "piped",
      stderr: "piped",
      env: { NO_COLOR: "1" },
      signal: AbortSignal.timeout(60_000),
    }).output();
    const stderr = new TextDecoder().decode(out.stderr);
    assert.equal(out.code, 2, stderr);
    assert.equal(new TextDecoder().decode(out.stdout), "");
    const lines = stderr.trim().split("\n");
    assert.equal(lines.length, 1, `one line: ${stderr}`);
    assert.match(
      lines[0]!,
      /^sciobench: error: started by MPICH's mpiexec \(PMI_FD=\d+\) .*launch the deno binary/,
    );
  },
);
