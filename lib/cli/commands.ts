/**
 * The list of subcommands. A built-in command is one file in lib/cli plus one line here; a
 * workload registered with lib/workloads/registry.ts is a command with no line here.
 * @module
 */
import type { Command } from "./command.ts";
import { framingsCommand } from "./framings.ts";
import { infoCommand } from "./info.ts";
import { plotCommand } from "./plot.ts";
import { readCommand } from "./read.ts";
import { recordsWorkload } from "../workloads/records/workload.ts";
import { readersCommand } from "./readers.ts";
import { scalingCommand } from "./scaling.ts";
import { tableWorkload } from "../workloads/table/workload.ts";
import { versionCommand } from "./version.ts";
import { writeCommand } from "./write.ts";
import { registeredCommands, workloadCommand } from "./workload_command.ts";

/** The built-in subcommands, in the order `sciobench --help` lists them. */
export const COMMANDS: readonly Command[] = [
  workloadCommand(tableWorkload),
  scalingCommand,
  workloadCommand(recordsWorkload),
  readersCommand,
  writeCommand,
  readCommand,
  infoCommand,
  framingsCommand,
  plotCommand,
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
