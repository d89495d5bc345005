/**
 * Run by tests/mpi_shared_test.ts under a launcher: every rank writes its frames of the table
 * data into one shared file per framing (lib/mpi/shared.ts), and rank 0 then writes the same
 * frames alone into a second file with the ordinary writer, for comparison. With MODES, the
 * shared files are written once per mode (`plain`, `bs64k`: --bs 64k, `direct`: --direct,
 * `direct64k`: --direct --bs 64k) as `shared.MODE.NAME`, and each rank records the open flags and
 * writes it made on each (`calls.MODE.NAME.rRANK.json`); without, once as `shared.NAME`.
 * Usage: _mpi_shared_probe.ts DIR FRAMINGS N FRAMES_PER_RANK [MODES]
 * @module
 */
import { backendByName, FRAMINGS } from "../lib/backends/registry.ts";
import { writeFrames } from "../lib/backends/write.ts";
import { DEFAULT_DIRECT_BS, type Transfer } from "../lib/io/transfer.ts";
import { planSharedFile, sharedPart, writeSharedFrames } from "../lib/mpi/shared.ts";
import { initWorld } from "../lib/mpi/world.ts";
import { TableFrames } from "../lib/workloads/table/mod.ts";
import { observeDuring } from "./_helpers.ts";

/** The transfers of each mode the probe knows. */
export const PROBE_MODES: Readonly<Record<string, Transfer | undefined>> = {
  plain: undefined,
  bs64k: { bs: 64 << 10, direct: false },
  direct: { bs: DEFAULT_DIRECT_BS, direct: true },
  direct64k: { bs: 64 << 10, direct: true },
};

/** What one rank did to one shared file: its open flags and its writes as [offset, bytes]. */
export interface ProbeCalls {
  readonly flags: number[];
  readonly writes: [number, number][];
}

if (import.meta.main) {
  const [dir, framings, nText, perRankText, modesText] = Deno.args;
  const w = initWorld();
  const n = Number(nText);
  const perRank = Number(perRankText);
  const owners = new Map<number, TableFrames>();
  const frameAt = (g: number) => {
    const owner = Math.floor(g / perRank);
    if (!owners.has(owner)) owners.set(owner, new TableFrames(n, 1, owner));
    return owners.get(owner)!.frame(g);
  };
  const modes = modesText === undefined ? undefined : modesText.split(",");
  for (const name of framings!.split(",")) {
    const backend = backendByName(name);
    const framing = FRAMINGS.find((f) => f.name === name)!;
    for (const mode of modes ?? ["plain"]) {
      const options = { transfer: PROBE_MODES[mode] };
      const path = modes ? `${dir}/shared.${mode}.${name}` : `${dir}/shared.${name}`;
      const plan = planSharedFile(framing, options, sharedPart(perRank), frameAt);
      const calls: ProbeCalls = { flags: [], writes: [] };
      const fds = new Set<number>();
      await observeDuring({
        open(fd, opened, flags) {
          if (opened !== path) return;
          fds.add(fd);
          calls.flags.push(flags);
        },
        write(fd, offset, bytes) {
          if (fds.has(fd)) calls.writes.push([offset, bytes]);
        },
      }, () => writeSharedFrames(framing, path, options, plan, frameAt).then(() => {}));
      if (modes) {
        Deno.writeTextFileSync(
          `${dir}/calls.${mode}.${name}.r${w.rank}.json`,
          JSON.stringify(calls),
        );
      }
    }
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
}
