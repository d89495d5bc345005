/**
 * The mutation check (`deno task mutants`, tools/mutants.ts) stays wired to the code: every marker
 * a mutant names (`// mutant: NAME`) is in lib/ exactly once, every marker in lib/ belongs to a
 * mutant, and every mutant names test files and import sources that exist. The exact code below a
 * marker is not checked here: `deno task mutants` applies the edits and says which no longer do.
 * @module
 */
import assert from "node:assert/strict";
import { findMarkers, MUTANTS, searchPattern } from "../tools/mutants.ts";

const ROOT = new URL("..", import.meta.url).pathname.replace(/\/$/, "");

Deno.test("mutants: every marker a mutant names is in lib/ exactly once", () => {
  assert.ok(MUTANTS.length >= 19, "the mutant set is there");
  const markers = findMarkers(ROOT);
  for (const m of MUTANTS) {
    for (const e of m.edits) {
      const places = markers.get(e.marker) ?? [];
      assert.equal(
        places.length,
        1,
        `mutant '${m.name}': '// mutant: ${e.marker}' is in lib/ ${places.length} times ` +
          `(${places.map((p) => `${p.file}:${p.line + 1}`).join(", ")}); put it once, on the ` +
          "line above the code the mutant changes",
      );
    }
  }
});

Deno.test("mutants: every marker in lib/ belongs to a mutant", () => {
  const named = new Set(MUTANTS.flatMap((m) => m.edits.map((e) => e.marker)));
  for (const [marker, places] of findMarkers(ROOT)) {
    assert.ok(
      named.has(marker),
      `'// mutant: ${marker}' (${places[0]!.file}:${places[0]!.line + 1}) belongs to no ` +
        "mutant in tools/mutant_list.ts: remove it or add the mutant",
    );
  }
});

Deno.test("mutants: names are unique kebab-case ids; tests and imports exist", () => {
  const names = new Set<string>();
  for (const m of MUTANTS) {
    assert.match(m.name, /^[a-z0-9]+(-[a-z0-9]+)*$/, `mutant name '${m.name}'`);
    assert.ok(!names.has(m.name), `mutant name '${m.name}' twice`);
    names.add(m.name);
    assert.ok(m.edits.length > 0, `${m.name}: no edit`);
    for (const t of m.tests) assert.ok(Deno.statSync(`${ROOT}/${t}`).isFile, `${m.name}: ${t}`);
    for (const i of m.imports ?? []) {
      const text = Deno.readTextFileSync(`${ROOT}/${i.from}`);
      for (const name of i.names) {
        assert.match(text, new RegExp(`export (async )?(function|const|class) ${name}\\b`));
      }
    }
  }
});

Deno.test("mutants: a search text matches across any whitespace, as code is reformatted", () => {
  const p = searchPattern("f(a, b);\n  g();");
  assert.ok(p.test("f(a,\n      b); g();"));
  assert.ok(!searchPattern("f(a, b);").test("f(a, c);"));
  assert.ok(searchPattern("x[0]! * 2").test("x[0]!*2"));
});
