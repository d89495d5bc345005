/**
 * The mutation check (`deno task mutants`, tools/mutants.ts) stays up to date: every edit of every
 * mutant still applies to the code as it is (its text occurs exactly once in its file), and every
 * mutant names test files that exist. Moving or rewriting product code that a mutant edits fails
 * here, in the ordinary suite, with the mutant's name: update its search text in tools/mutants.ts.
 * @module
 */
import assert from "node:assert/strict";
import { MUTANTS } from "../tools/mutants.ts";

const ROOT = new URL("..", import.meta.url).pathname;

Deno.test("mutants: every edit of every mutant applies to the code as it is", () => {
  assert.ok(MUTANTS.length >= 19, "the claims of issue 10 are all there");
  for (const m of MUTANTS) {
    for (const e of m.edits) {
      const text = Deno.readTextFileSync(`${ROOT}${e.file}`);
      const count = text.split(e.search).length - 1;
      assert.equal(
        count,
        1,
        `mutant '${m.name}': ${JSON.stringify(e.search)} occurs ${count} times in ${e.file}; ` +
          "update tools/mutants.ts to the code as it is now",
      );
    }
    for (const t of m.tests) assert.ok(Deno.statSync(`${ROOT}${t}`).isFile, `${m.name}: ${t}`);
  }
});
