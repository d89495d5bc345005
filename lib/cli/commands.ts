/**
 * The list of subcommands. Adding a command is one new file in lib/cli plus one line here.
 * @module
 */
import type { Command } from "./command.ts";
import { framingsCommand } from "./framings.ts";
import { infoCommand } from "./info.ts";
import { plotCommand } from "./plot.ts";
import { readCommand } from "./read.ts";
import { recordsCommand } from "./records.ts";
import { readersCommand } from "./readers.ts";
import { scalingCommand } from "./scaling.ts";
import { tableCommand } from "./table.ts";
import { versionCommand } from "./version.ts";
import { writeCommand } from "./write.ts";

/** Every subcommand, in the order `sciobench --help` lists them. */
export const COMMANDS: readonly Command[] = [
  tableCommand,
  scalingCommand,
  recordsCommand,
  readersCommand,
  writeCommand,
  readCommand,
  infoCommand,
  framingsCommand,
  plotCommand,
  versionCommand,
];
