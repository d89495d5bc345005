/**
 * The shape of one `sciobench` subcommand. Each lives in its own file in lib/cli and is listed
 * once in lib/cli/commands.ts.
 * @module
 */

/** One subcommand of the CLI. */
export interface Command {
  /** Name typed after `sciobench`. */
  readonly name: string;
  /** One line for the command list. */
  readonly summary: string;
  /** Full help text printed by `sciobench NAME --help` (usage line, options, defaults). */
  readonly help: string;
  /**
   * Runs the command with the arguments after its name. Data goes to stdout (or --out), every
   * diagnostic to stderr; throw a SciobenchError subclass to fail with its exit code.
   */
  run(args: string[]): Promise<void>;
}
