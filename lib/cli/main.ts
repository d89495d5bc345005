/**
 * The CLI: dispatch to a subcommand, print help, and turn errors into one line on stderr and
 * an exit code (2 usage or malformed file, 1 I/O or verification failure). No stack traces
 * unless SCIOBENCH_DEBUG=1.
 * @module
 */
import { escapeControls, SciobenchError, UsageError } from "../core/errors.ts";
import { didYouMean } from "../core/suggest.ts";
import { onUnfencedFailure, RankFailure } from "../mpi/phase.ts";
import { initWorld, type World } from "../mpi/world.ts";
import { VERSION } from "../core/version.ts";
import { writeStdout } from "../report/output.ts";
import { clearProgressLine } from "../core/diagnostics.ts";
import { runLibraryChild } from "../workloads/child.ts";
import { allCommands, rankAware } from "./commands.ts";
import { LIBRARY_CHILD_COMMAND } from "../workloads/isolate.ts";
import { versionText } from "./version.ts";
import type { Command } from "./command.ts";

function globalHelp(): string {
  const commands = allCommands();
  const width = Math.max(...commands.map((c) => c.name.length));
  return `sciobench ${VERSION}: a benchmark for scientific file I/O

Usage: sciobench COMMAND [options]

Commands:
${commands.map((c) => `  ${c.name.padEnd(width)}  ${c.summary}`).join("\n")}

'sciobench COMMAND --help' describes each command. Data goes to stdout, progress and
diagnostics to stderr. Exit codes: 0 ok, 1 I/O or verification failure, 2 bad usage or
malformed file.`;
}

/** Words (paths) longer than 200 characters shortened in the middle, so a line stays readable. */
function shortenWords(text: string): string {
  return text.replace(/\S{201,}/g, (w) => `${w.slice(0, 100)}...${w.slice(-100)}`);
}

function errorLine(text: string): void {
  clearProgressLine(); // an error never continues a progress line
  console.error(`sciobench: error: ${shortenWords(escapeControls(text))}`);
}

/** Prints text (help, version) on stdout; a closed or full stdout is handled as for data. */
function printOut(text: string): number {
  try {
    writeStdout(`${text}\n`);
    return 0;
  } catch (e) {
    return reportError(e);
  }
}

function debug(): boolean {
  try {
    return Deno.env.get("SCIOBENCH_DEBUG") === "1";
  } catch {
    return false;
  }
}

/** Runs the CLI on `argv` (without the program name); returns the exit code. */
export async function runCli(argv: readonly string[]): Promise<number> {
  const [name, ...rest] = argv;
  const commands = allCommands();
  if (name === undefined) {
    console.error(globalHelp());
    return 2;
  }
  if (name === "--help" || name === "-h" || name === "help") {
    const topic = name === "help" ? rest[0] : undefined;
    const cmd = commands.find((c) => c.name === topic);
    if (topic !== undefined && !cmd) {
      const names = commands.map((c) => c.name);
      errorLine(
        `help: no command '${topic}'; commands: ${names.join(", ")}${didYouMean(topic, names)}`,
      );
      return 2;
    }
    return printOut(cmd ? cmd.help : globalHelp());
  }
  if (name === "--version" || name === "-V") return printOut(versionText());
  if (name === LIBRARY_CHILD_COMMAND) return await runLibraryChild();
  const cmd = commands.find((c) => c.name === name);
  if (!cmd) {
    const names = commands.map((c) => c.name);
    errorLine(`unknown command '${name}'; commands: ${names.join(", ")}${didYouMean(name, names)}`);
    return 2;
  }
  if (rest.includes("--help") || rest.includes("-h")) return printOut(cmd.help);
  // Hidden helper subcommands (readers' and loader's `_reader`) are children, never ranks.
  if (rest[0]?.startsWith("_")) return await runCommand(cmd, rest, null);
  let w: World;
  try {
    w = initWorld();
  } catch (e) {
    return reportError(e);
  }
  if (w.size === 1) {
    // one process (a launcher's single rank still ends MPI: Open MPI fails a rank that does not)
    const code = await runCommand(cmd, rest, null);
    w.finalize();
    return code;
  }
  onUnfencedFailure((e) => {
    if (typeof e === "object" && e !== null && !reported.has(e)) {
      reported.set(e, reportError(e, `rank ${w.rank} on ${w.host}: `));
    }
  });
  // Every rank runs rank 0's command line, so all ranks agree on the plan.
  const args = JSON.parse(w.bcastString(JSON.stringify(rest))) as string[];
  const code = await runCommand(cmd, args, w);
  w.finalize();
  return code;
}

/** Failures a rank reported before its scratch directory went, with their exit codes. */
const reported = new WeakMap<object, number>();

async function runCommand(
  cmd: Command,
  args: string[],
  w: World | null,
): Promise<number> {
  try {
    if (w && !rankAware(cmd)) {
      const aware = allCommands().filter(rankAware).map((c) => c.name);
      throw new UsageError(
        `'${cmd.name}' does not run under MPI (only ${aware.join(", ")} do); run ` +
          `it without mpirun or srun`,
      );
    }
    await cmd.run(args);
    return 0;
  } catch (e) {
    if (!w) return reportError(e);
    if (e instanceof RankFailure) {
      // every rank stopped at the same phase: rank 0 names the rank that failed
      if (e.report) errorLine(e.message);
      return e.exitCode;
    }
    if (e instanceof UsageError) {
      // the same command line on every rank fails the same way: rank 0 says it once
      if (w.rank === 0) errorLine(e.message);
      return e.exitCode;
    }
    // this rank cannot tell the others: say which rank failed (unless it said so before its
    // scratch directory went), then stop them all
    const code = (typeof e === "object" && e !== null ? reported.get(e) : undefined) ??
      reportError(e, `rank ${w.rank} on ${w.host}: `);
    return w.abort(code);
  }
}

/** Prints one error line (the stack with SCIOBENCH_DEBUG=1) and returns the exit code. */
function reportError(e: unknown, prefix = ""): number {
  if (debug()) console.error(e);
  // The reader of stdout went away (`sciobench info F | head -1`): nothing more to say.
  if (e instanceof Deno.errors.BrokenPipe) return 0;
  if (e instanceof SciobenchError) {
    errorLine(prefix + e.message);
    return e.exitCode;
  }
  if (e instanceof Deno.errors.NotFound || e instanceof Deno.errors.PermissionDenied) {
    errorLine(prefix + e.message);
    return 1;
  }
  // Any other failed system call Deno reports (ENAMETOOLONG, EAGAIN on spawn, ...): one line.
  if (e instanceof Error && /\(os error \d+\)/.test(e.message)) {
    errorLine(prefix + e.message);
    return 1;
  }
  if (e instanceof Deno.errors.NotCapable) {
    errorLine(`${prefix}${e.message} (run sciobench with the permissions of its 'sciobench' task)`);
    return 1;
  }
  errorLine(
    `${prefix}internal error: ${
      e instanceof Error ? e.message : String(e)
    } (this is a bug; rerun with SCIOBENCH_DEBUG=1 for details)`,
  );
  return 1;
}
