/**
 * The help of every command, made from the flag table (lib/cli/flags.ts): the command's own
 * prose, its Options, and the backend options (`--option KEY=VALUE`) it honours.
 * @module
 */
import { BACKENDS } from "../backends/registry.ts";
import type { Workload as OptionScope } from "../framings/types.ts";
import { optionDefaultText, optionValueText } from "../workloads/settings.ts";
import { type CommandName, defaultOf, flagsOf, type FlagSpec } from "./flags.ts";

/** The help's section listing every backend's options that `workload` honours. */
export function backendOptionsHelp(workload: OptionScope): string {
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
  const backends = takesOption ? backendOptionsHelp(command as OptionScope) : "";
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

/** Width of the flag column of the help (`  --bs SIZE` padded), and of a help line. */
const FLAG_COLUMN = 22;
const LINE_WIDTH = 100;

/** `text` wrapped to {@link LINE_WIDTH} columns, every line after the first indented `indent`. */
export function wrap(first: string, text: string, indent = FLAG_COLUMN): string {
  const lines: string[] = [];
  let line = first.length >= indent ? first : first.padEnd(indent);
  if (first.length >= indent) {
    lines.push(first);
    line = " ".repeat(indent);
  }
  let empty = true;
  for (const word of text.split(/\s+/).filter((w) => w !== "")) {
    if (!empty && line.length + 1 + word.length > LINE_WIDTH) {
      lines.push(line);
      line = " ".repeat(indent);
      empty = true;
    }
    line += (empty ? "" : " ") + word;
    empty = false;
  }
  lines.push(line);
  return lines.join("\n");
}

/** `help` followed by `about`: a fragment continues the sentence, a sentence follows it. */
export function withAbout(help: string, about: string | undefined): string {
  if (about === undefined) return help;
  return help +
    (/^[:;,.]/.test(about) ? about : /^[A-Z-]/.test(about) ? `. ${about}` : ` ${about}`);
}

/** The full help sentence of `flag` in `command`: its help, what it adds there, its default. */
export function flagText(flag: FlagSpec, command: string): string {
  const text = withAbout(
    flag.help,
    flag.about?.[command as CommandName] ?? flag.aboutOf?.(command),
  );
  const d = defaultOf(flag, command);
  return d !== undefined && !/\(default/.test(text) ? `${text} (default ${d})` : text;
}

/** The flag as the help's left column shows it: `-o, --out FILE`, `--direct`. */
export function flagLabel(name: string, flag: FlagSpec): string {
  const short = flag.short ? `-${flag.short}, ` : "";
  return `${short}--${name}${flag.value ? ` ${flag.value}` : ""}`;
}

/** The Options section of `command`'s help, made from the table, every line within 100 columns. */
export function optionsHelp(command: CommandName): string {
  return optionsText(command, flagsOf(command));
}

/** The Options section of a help listing `flags` (of `command`), every line within 100 columns. */
export function optionsText(command: string, flags: readonly [string, FlagSpec][]): string {
  return flags.filter(([, f]) => !f.hidden).map(([name, f]) =>
    wrap(`  ${flagLabel(name, f)}`, flagText(f, command))
  ).join("\n");
}
