/**
 * Run by tests/mpi_shared_test.ts under a launcher: every rank writes its frames of the table
 * data into one shared file per framing (lib/mpi/shared.ts), and rank 0 then writes the same
 * frames alone into a second file with the ordinary writer, for comparison.
 * Usage: _mpi_shared_probe.ts DIR FRAMINGS N FRAMES_PER_RANK
 * @module
 */
import { backendByName, FRAMINGS } from "../lib/backends/registry.ts";
import { writeFrames } from "../lib/backends/write.ts";
import { planSharedFile, sharedPart, writeSharedFrames } from "../lib/mpi/shared.ts";
import { initWorld } from "../lib/mpi/world.ts";
import { TableFrames } from "../lib/workloads/table/mod.ts";

const [dir, framings, nText, perRankText] = Deno.args;
const w = initWorld();
const n = Number(nText);
const perRank = Number(perRankText);
const owners = new Map<number, TableFrames>();
const frameAt = (g: number) => {
  const owner = Math.floor(g / perRank);
  if (!owners.has(owner)) owners.set(owner, new TableFrames(n, 1, owner));
  return owners.get(owner)!.frame(g);
};
for (const name of framings!.split(",")) {
  const backend = backendByName(name);
  const framing = FRAMINGS.find((f) => f.name === name)!;
  const plan = planSharedFile(framing, {}, sharedPart(perRank), frameAt);
  await writeSharedFrames(framing, `${dir}/shared.${name}`, {}, plan, frameAt);
  if (w.rank === 0) {
    await writeFrames(
      backend,
      `${dir}/serial.${name}`,
      { create: "new" },
      perRank * w.size,
      frameAt,
    );
  }
}
w.finalize();
