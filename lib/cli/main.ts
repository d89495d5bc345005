/**
 * The CLI: dispatch to a subcommand, print help, and turn errors into one line on stderr and
 * an exit code (2 usage or malformed file, 1 I/O or verification failure). No stack traces
 * unless SCIOBENCH_DEBUG=1.
 * @module
 */
import { SciobenchError } from "../errors.ts";
import { VERSION } from "../version.ts";
import { COMMANDS } from "./commands.ts";

function globalHelp(): string {
  const width = Math.max(...COMMANDS.map((c) => c.name.length));
  return `sciobench ${VERSION}: a benchmark for scientific file I/O

Usage: sciobench COMMAND [options]

Commands:
${COMMANDS.map((c) => `  ${c.name.padEnd(width)}  ${c.summary}`).join("\n")}

'sciobench COMMAND --help' describes each command. Data goes to stdout, progress and
diagnostics to stderr. Exit codes: 0 ok, 1 I/O or verification failure, 2 bad usage or
malformed file.`;
}

function errorLine(text: string): void {
  console.error(`sciobench: error: ${text}`);
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
  if (name === undefined) {
    console.error(globalHelp());
    return 2;
  }
  if (name === "--help" || name === "-h" || name === "help") {
    const topic = name === "help" ? rest[0] : undefined;
    const cmd = COMMANDS.find((c) => c.name === topic);
    console.log(cmd ? cmd.help : globalHelp());
    return 0;
  }
  if (name === "--version" || name === "-V") {
    console.log(`sciobench ${VERSION}`);
    return 0;
  }
  const cmd = COMMANDS.find((c) => c.name === name);
  if (!cmd) {
    errorLine(`unknown command '${name}'; commands: ${COMMANDS.map((c) => c.name).join(", ")}`);
    return 2;
  }
  if (rest.includes("--help") || rest.includes("-h")) {
    console.log(cmd.help);
    return 0;
  }
  try {
    await cmd.run([...rest]);
    return 0;
  } catch (e) {
    if (debug()) console.error(e);
    if (e instanceof SciobenchError) {
      errorLine(e.message);
      return e.exitCode;
    }
    if (e instanceof Deno.errors.NotFound || e instanceof Deno.errors.PermissionDenied) {
      errorLine(e.message);
      return 1;
    }
    if (e instanceof Deno.errors.NotCapable) {
      errorLine(`${e.message} (run sciobench with the permissions of its 'sciobench' task)`);
      return 1;
    }
    errorLine(
      `internal error: ${
        e instanceof Error ? e.message : String(e)
      } (this is a bug; rerun with SCIOBENCH_DEBUG=1 for details)`,
    );
    return 1;
  }
}
