/**
 * The parser of every command, made from the flag table (lib/cli/flags.ts): `node:util`
 * parseArgs with the command's flags, their defaults, and list flags that accumulate.
 * @module
 */
import type { FlagRecord } from "../workloads/workload.ts";
import { parseArgs } from "./args.ts";
import { type CommandName, defaultOf, flagsOf, type FlagSpec, type FlagValues } from "./flags.ts";

/**
 * Parses `args` for `command` against the table: unknown flags, missing values and empty values
 * are one-line usage errors naming the command (with the nearest known flag); list flags
 * accumulate when repeated; defaults are filled in. `positionals` are the other arguments.
 */
export function parseFlags<C extends CommandName>(
  command: C,
  args: readonly string[],
  allowPositionals = false,
): { values: FlagValues<C>; positionals: string[] } {
  const parsed = parseFlagList(command, flagsOf(command), args, allowPositionals);
  return { values: parsed.values as unknown as FlagValues<C>, positionals: parsed.positionals };
}

/** {@link parseFlags} for any command, against the flags given. */
export function parseFlagList(
  command: string,
  flags: readonly [string, FlagSpec][],
  args: readonly string[],
  allowPositionals = false,
): { values: FlagRecord; positionals: string[] } {
  const options: Record<
    string,
    { type: "string" | "boolean"; short?: string; multiple?: boolean; default?: string | boolean }
  > = {};
  const lists: string[] = [];
  for (const [name, f] of flags) {
    const d = defaultOf(f, command);
    options[name] = {
      type: f.type,
      ...(f.short ? { short: f.short } : {}),
      ...(f.multiple ? { multiple: true } : {}),
      ...(d !== undefined
        ? { default: d }
        : f.type === "boolean" && !f.optional
        ? { default: false }
        : {}),
    };
    if (f.list) lists.push(name);
  }
  const what = command === "_reader" ? "readers _reader" : command;
  const parsed = parseArgs(what, [...args], { options, allowPositionals }, lists);
  return { values: parsed.values as FlagRecord, positionals: parsed.positionals as string[] };
}
