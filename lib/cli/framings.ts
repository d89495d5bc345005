/**
 * `sciobench framings`: every framing and peer, whether it can run here, and why not.
 * @module
 */
import { BACKENDS } from "../backends/registry.ts";
import { parseArgs } from "./args.ts";
import type { Command } from "./command.ts";

/** The `framings` subcommand. */
export const framingsCommand: Command = {
  name: "framings",
  summary: "list the framings and peer libraries, and which are available here",
  help: `sciobench framings: list framings

Usage: sciobench framings

One line per framing: name, kind (native or peer), byte orders, and availability (with the
reason when a peer library is missing).`,
  run(args: string[]): Promise<void> {
    parseArgs("framings", args, {
      options: { help: { type: "boolean", short: "h", default: false } },
    });
    const lines = BACKENDS.map((b) => {
      const why = b.unavailable();
      return `${b.name.padEnd(11)} ${b.kind.padEnd(6)} ${b.orders.join("/").padEnd(10)} ${
        why === null ? "available" : `unavailable: ${why}`
      }  ${b.description}`;
    });
    console.log(lines.join("\n"));
    return Promise.resolve();
  },
};
