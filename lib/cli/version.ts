/**
 * `sciobench version`: the version (deno.json's, the only copy), the git commit it was built from
 * (stamped into release binaries, read from .git in a checkout, else "unknown"), and the runtime
 * (Deno, V8, TypeScript, target triple). `--format json` gives the same as data. Never fails for
 * lack of git or of a checkout.
 * @module
 */
import { writeStdout } from "../report/output.ts";
import { VERSION } from "../core/version.ts";
import { parseChoice } from "../core/values.ts";
import { parseFlags } from "./parse_flags.ts";
import { commandHelp } from "./help.ts";
import type { Command } from "./command.ts";
import { gitCommit } from "./meta.ts";

/** What `sciobench version` reports, as `--format json` prints it. */
export interface VersionFacts {
  /** Always "sciobench". */
  tool: string;
  /** The sciobench version (deno.json's `version`). */
  version: string;
  /** The 40-hex git commit, or "unknown" when neither stamped nor readable from a checkout. */
  commit: string;
  /** Deno's version. */
  deno: string;
  /** V8's version. */
  v8: string;
  /** The TypeScript version Deno bundles. */
  typescript: string;
  /** The target triple sciobench runs as (e.g. x86_64-unknown-linux-gnu). */
  target: string;
}

/** The version, commit and runtime of this sciobench. */
export function versionFacts(): VersionFacts {
  let commit = "";
  try {
    commit = gitCommit();
  } catch {
    // no permission or no checkout: unknown
  }
  return {
    tool: "sciobench",
    version: VERSION,
    commit: commit === "" ? "unknown" : commit,
    deno: Deno.version.deno,
    v8: Deno.version.v8,
    typescript: Deno.version.typescript,
    target: Deno.build.target,
  };
}

/** The human text of `sciobench version` (also `sciobench --version`). */
export function versionText(): string {
  const f = versionFacts();
  return [
    `sciobench ${f.version}`,
    `commit     ${f.commit}`,
    `deno       ${f.deno}`,
    `v8         ${f.v8}`,
    `typescript ${f.typescript}`,
    `target     ${f.target}`,
  ].join("\n");
}

/** The `version` subcommand. */
export const versionCommand: Command = {
  name: "version",
  summary: "print the version, the git commit and the runtime (Deno, V8, target)",
  help: commandHelp("version", {
    title: "the version, commit and runtime",
    usage: "[--format table|text|json]",
    intro:
      `Prints the sciobench version, the git commit it was built from (stamped into release binaries,
read from .git when run from a checkout, else 'unknown'), and the runtime: the Deno, V8 and
TypeScript versions and the target triple (e.g. x86_64-unknown-linux-gnu). --format json prints
one object {tool, version, commit, deno, v8, typescript, target}. 'sciobench --version' is the
same as 'sciobench version'.`,
  }),
  run(args: string[]): Promise<void> {
    const { values } = parseFlags("version", args);
    const format = parseChoice(values.format, ["table", "text", "json"] as const, "--format");
    writeStdout(
      format === "json" ? JSON.stringify(versionFacts(), null, 2) + "\n" : versionText() + "\n",
    );
    return Promise.resolve();
  },
};
