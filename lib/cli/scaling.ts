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

/** The `scaling` command: its workload, after a bare `--fsync` became `--fsync end`. */
export const scalingCommand: WorkloadCommand = {
  ...workloadCommand(scalingWorkload),
  run: (args) => workloadCommand(scalingWorkload).run(bareFsyncIsEnd(args)),
};
