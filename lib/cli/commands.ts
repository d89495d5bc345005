/**
 * The list of subcommands. A built-in workload (lib/workloads/NAME/workload.ts) is one line here
 * (its flags in lib/cli/flags.ts); another built-in command is one file in lib/cli plus one line
 * here; a workload registered with lib/workloads/registry.ts is a command with no line here.
 * @module
 */
import type { Command } from "./command.ts";
import { framingsCommand } from "./framings.ts";
import { infoWorkload } from "../workloads/info/workload.ts";
import { plotCommand } from "./plot.ts";
import { compareCommand } from "./compare.ts";
import { runsCommand } from "./runs.ts";
import { reportCommand } from "./report.ts";
import { readWorkload } from "../workloads/read/workload.ts";
import { loaderCommand } from "./loader.ts";
import { recordsWorkload } from "../workloads/records/workload.ts";
import { readersCommand } from "./readers.ts";
import { scalingCommand } from "./scaling.ts";
import { tableWorkload } from "../workloads/table/workload.ts";
import { versionCommand } from "./version.ts";
import { writeWorkload } from "../workloads/write/workload.ts";
import { registeredCommands, workloadCommand } from "./workload_command.ts";

/** The built-in subcommands, in the order `sciobench --help` lists them. */
export const COMMANDS: readonly Command[] = [
  workloadCommand(tableWorkload),
  scalingCommand,
  workloadCommand(recordsWorkload),
  readersCommand,
  workloadCommand(writeWorkload),
  workloadCommand(readWorkload),
  loaderCommand,
  workloadCommand(infoWorkload),
  framingsCommand,
  plotCommand,
  compareCommand,
  runsCommand,
  reportCommand,
  versionCommand,
];

/** Every command: the built-in ones, then those of the registered workloads. */
export function allCommands(): Command[] {
  return [...COMMANDS, ...registeredCommands()];
}

/** True when `command` runs as one rank of many under MPI (a workload whose rows aggregate). */
export function rankAware(command: Command): boolean {
  return "rankAware" in command && command.rankAware === true;
}
