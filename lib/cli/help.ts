/**
 * The help of every command, made from the flag table (lib/cli/flags.ts): the command's own
 * prose, its Options, and the backend options (`--option KEY=VALUE`) it honours.
 * @module
 */
import { BACKENDS } from "../backends/registry.ts";
import type { Workload } from "../framings/types.ts";
import { optionDefaultText, optionValueText } from "./settings.ts";
import { type CommandName, optionsHelp, wrap } from "./flags.ts";

/** The help's section listing every backend's options that `workload` honours. */
export function backendOptionsHelp(workload: Workload): string {
  const lines: string[] = [];
  for (const b of BACKENDS) {
    const specs = b.options.filter((s) => s.workloads.includes(workload) && s.type !== "value");
    if (specs.length === 0) continue;
    lines.push(`  ${b.name}:`);
    for (const s of specs) {
      lines.push(
        wrap(`    ${s.name}=${optionValueText(s)}`, `${s.help}${optionDefaultText(s)}`, 33),
      );
    }
  }
  return lines.length === 0 ? "" : `Backend options (--option KEY=VALUE):\n${lines.join("\n")}`;
}

/** The parts of a command's help that are its own prose. */
export interface HelpText {
  /** What the command is, after `sciobench NAME: `. */
  readonly title: string;
  /** The arguments after the command's name in the usage line (`[options] FILE`). */
  readonly usage: string;
  /** What the command does, before the options. */
  readonly intro: string;
  /** What follows the options (columns, notes). */
  readonly after?: string;
}

/**
 * The whole help of `command`: title, usage, its prose, the Options section made from the flag
 * table, the backend options it honours (where it takes `--option`), and what follows.
 */
export function commandHelp(
  command: string,
  text: HelpText,
  options: string = optionsHelp(command as CommandName),
): string {
  const takesOption = /^ {2}--option /m.test(options);
  const backends = takesOption ? backendOptionsHelp(command as Workload) : "";
  return [
    `sciobench ${command}: ${text.title}`,
    "",
    `Usage: sciobench ${command} ${text.usage}`,
    ...(text.intro === "" ? [] : ["", text.intro]),
    "",
    "Options:",
    options,
    ...(backends === "" ? [] : ["", backends]),
    ...(text.after === undefined ? [] : ["", text.after]),
  ].join("\n");
}
