#!/usr/bin/env -S deno run --allow-all
/**
 * sciobench: the command-line entry point. All logic lives in lib/cli/main.ts.
 * @module
 */
import { runCli } from "./lib/cli/main.ts";

if (import.meta.main) {
  Deno.exit(await runCli(Deno.args));
}
