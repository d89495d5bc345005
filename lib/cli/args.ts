/**
 * `node:util` parseArgs with one-line usage errors, and repeated list flags merged.
 * @module
 */
import { parseArgs as nodeParseArgs, type ParseArgsConfig } from "node:util";
import { UsageError } from "../core/errors.ts";
import { didYouMean } from "../core/suggest.ts";

/**
 * Merges repeated list options into one comma-separated value (`--framing gsd --framing raw`
 * becomes `--framing=gsd,raw`); other arguments keep their order.
 */
function mergeRepeated(
  args: readonly string[],
  config: ParseArgsConfig,
  listNames: readonly string[],
): string[] {
  const lists = new Set(
    Object.entries(config.options ?? {}).filter(([name, o]) =>
      o.type === "string" && !o.multiple && listNames.includes(name)
    ).map(([name]) => name),
  );
  const merged = new Map<string, string[]>();
  const out: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    if (a === "--") {
      out.push(...args.slice(i));
      break;
    }
    const m = /^--([^=]+)(?:=(.*))?$/s.exec(a);
    const name = m?.[1];
    if (name === undefined || !lists.has(name)) {
      out.push(a);
      continue;
    }
    const value = m![2] ?? args[++i];
    if (value === undefined) {
      out.push(a); // missing value: parseArgs reports it
      continue;
    }
    const seen = merged.get(name);
    if (seen) seen.push(value);
    else {
      merged.set(name, [value]);
      out.push(`--${name}`); // placeholder, filled below
    }
  }
  return out.map((a) => {
    const name = a.startsWith("--") ? a.slice(2) : "";
    const values = merged.get(name);
    return values && a === `--${name}` ? `--${name}=${values.join(",")}` : a;
  });
}

/**
 * `node:util` parseArgs (strict) whose errors become one-line usage errors naming the command,
 * with the nearest known option for a mistyped one; the string options named in `lists` take
 * comma-separated lists, and accumulate when repeated.
 */
export function parseArgs<T extends ParseArgsConfig>(
  command: string,
  args: string[],
  config: T,
  lists: readonly string[] = [],
) {
  const parsed = parseStrict(command, args, config, lists);
  // An empty word (`--out ""`, `info ""`) names no file and no value: one usage line, not a
  // failed system call.
  for (const [name, value] of Object.entries(parsed.values)) {
    if (value === "" || (Array.isArray(value) && value.includes(""))) {
      throw new UsageError(`${command}: --${name} is empty (see 'sciobench ${command} --help')`);
    }
  }
  if ((parsed.positionals as string[] | undefined)?.includes("")) {
    throw new UsageError(`${command}: an empty argument ('') names no file`);
  }
  return parsed;
}

function parseStrict<T extends ParseArgsConfig>(
  command: string,
  args: string[],
  config: T,
  lists: readonly string[],
) {
  try {
    return nodeParseArgs({ ...config, args: mergeRepeated(args, config, lists), strict: true });
  } catch (e) {
    const msg = e instanceof Error ? e.message.split("\n")[0]! : String(e);
    const unknown = /Unknown option '(-{1,2}[^']+)'/.exec(msg)?.[1];
    const known = Object.keys(config.options ?? {}).map((o) => `--${o}`);
    const hint = unknown ? didYouMean(unknown.replace(/=.*$/, ""), known) : "";
    throw new UsageError(
      `${command}: ${
        msg.replace(/\. To specify a positional.*$/, "")
      }${hint} (see 'sciobench ${command} --help')`,
    );
  }
}
