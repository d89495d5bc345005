/**
 * The CLI reference docs/cli.md is the one lib/cli/reference.ts makes from the flag table, and
 * every help line fits 100 columns.
 * @module
 */
import assert from "node:assert/strict";
import { cliReference, REFERENCE_PATH } from "../lib/cli/reference.ts";
import { COMMANDS } from "../lib/cli/commands.ts";
import { FLAGS, type FlagSpec } from "../lib/cli/flags.ts";

const ROOT = new URL("..", import.meta.url);

Deno.test("docs/cli.md is generated from the flag table (rewrite it with lib/cli/reference.ts)", () => {
  const stored = Deno.readTextFileSync(new URL(REFERENCE_PATH, ROOT));
  assert.ok(
    stored === cliReference(),
    "docs/cli.md differs from the flag table: run " +
      "'deno run --allow-all lib/cli/reference.ts' and commit docs/cli.md",
  );
});

Deno.test("every flag of the table is in docs/cli.md and in the help of each command taking it", () => {
  const stored = Deno.readTextFileSync(new URL(REFERENCE_PATH, ROOT));
  for (const [name, flag] of Object.entries(FLAGS) as [string, FlagSpec][]) {
    if (flag.hidden) continue;
    assert.ok(stored.includes(`--${name}`), `--${name} in docs/cli.md`);
    for (const command of flag.commands) {
      const c = COMMANDS.find((x) => x.name === command);
      if (c === undefined) continue;
      assert.match(c.help, new RegExp(`^  (-\\w, )?--${name}\\b`, "m"), `${command} --${name}`);
    }
  }
});

Deno.test("every line of every command's help fits 100 columns", () => {
  for (const c of COMMANDS) {
    for (const line of c.help.split("\n")) {
      assert.ok(line.length <= 100, `${c.name} --help: ${line.length} columns: ${line}`);
    }
  }
});
