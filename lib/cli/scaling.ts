/**
 * `sciobench scaling`: the scaling workload (lib/workloads/scaling/), with scaling's bare
 * `--fsync` read as `--fsync end`.
 * @module
 */
import { scalingWorkload } from "../workloads/scaling/workload.ts";
import { type WorkloadCommand, workloadCommand } from "./workload_command.ts";

/**
 * `--fsync` without a value (scaling's old flag, followed by another option or nothing) is
 * `--fsync end`.
 */
function bareFsyncIsEnd(args: readonly string[]): string[] {
  return args.map((a, i) =>
    a === "--fsync" && (i + 1 === args.length || args[i + 1]!.startsWith("-")) ? "--fsync=end" : a
  );
}

const scaling = workloadCommand(scalingWorkload);

/** The `scaling` command: its workload, after a bare `--fsync` became `--fsync end`. */
export const scalingCommand: WorkloadCommand = {
  name: scaling.name,
  summary: scaling.summary,
  rankAware: scaling.rankAware,
  // made when asked (not copied now): it lists the output formats registered by then
  get help(): string {
    return scaling.help;
  },
  run: (args) => scaling.run(bareFsyncIsEnd(args)),
};
