/**
 * The subpath exports of deno.json (`sciobench/framings`, `/peers`, `/backends`, `/workloads`):
 * each names an entry file that exists, its module-doc example runs from outside the repository
 * (a temporary directory with no deno.json, importing the entry by its absolute file URL,
 * type-checked) and prints what its comment says, it exports what it is for, and mod.ts
 * re-exports every name of every subpath.
 */
import assert from "node:assert/strict";
import * as api from "../mod.ts";
import { runScript } from "./_helpers.ts";

const ROOT = new URL("../", import.meta.url);
const EXPORTS = (JSON.parse(Deno.readTextFileSync(new URL("deno.json", ROOT))) as {
  exports: Record<string, string>;
}).exports;

/** Names each subpath must export (what it is for). */
const EXPECTED: Readonly<Record<string, readonly string[]>> = {
  "./framings": ["raw", "gsd", "f77", "ieeeio", "netcdf", "DTYPES", "checkOptions", "MemoryFile"],
  "./peers": ["hdf5", "netcdf4", "netcdfLib", "hdf4", "pythonGsd", "PEERS"],
  "./backends": ["BACKENDS", "backendByName", "registerBackend", "detectFormat", "nativeBackend"],
  "./workloads": ["runTable", "runScaling", "runRecords", "runReaders", "Progress"],
};

/** The ```ts blocks of a module's doc, with `./mod.ts` made the entry's absolute URL. */
function docExamples(entry: URL): { code: string; expected: string }[] {
  const text = Deno.readTextFileSync(entry);
  const doc = text.slice(0, text.indexOf("*/"));
  return [...doc.matchAll(/```ts\n([\s\S]*?)```/g)].map((m) => {
    const code = m[1]!.split("\n").map((l) => l.replace(/^ \* ?/, "")).join("\n")
      .replaceAll('"./mod.ts"', JSON.stringify(entry.href));
    const expected = /\/\/ (.*)\n*$/.exec(code)?.[1] ?? "";
    return { code, expected };
  });
}

Deno.test("deno.json exports: '.' is mod.ts and every subpath names an entry file that exists", () => {
  assert.equal(EXPORTS["."], "./mod.ts");
  assert.deepEqual(Object.keys(EXPORTS).sort(), [".", ...Object.keys(EXPECTED)].sort());
  for (const target of Object.values(EXPORTS)) {
    assert.ok(Deno.statSync(new URL(target, ROOT)).isFile, target);
  }
});

for (const subpath of Object.keys(EXPECTED)) {
  Deno.test(`subpath ${subpath}: its example runs from outside the repository`, async () => {
    const entry = new URL(EXPORTS[subpath]!, ROOT);
    const examples = docExamples(entry);
    assert.ok(examples.length >= 1, `${subpath} documents an example`);
    const dir = Deno.makeTempDirSync({ prefix: "sciobench-subpath-" });
    try {
      for (const [i, { code, expected }] of examples.entries()) {
        const script = `${dir}/example${i}.ts`;
        Deno.writeTextFileSync(script, code);
        const out = await runScript(script, [], { cwd: dir, check: true });
        assert.equal(out.code, 0, out.stderr);
        assert.equal(out.stdout.trim(), expected, `${subpath} example`);
      }
    } finally {
      Deno.removeSync(dir, { recursive: true });
    }
  });

  Deno.test(`subpath ${subpath}: exports what it is for, and mod.ts re-exports all of it`, async () => {
    const mod = await import(new URL(EXPORTS[subpath]!, ROOT).href) as Record<string, unknown>;
    const names = Object.keys(mod);
    for (const n of EXPECTED[subpath]!) assert.ok(names.includes(n), `${subpath} exports ${n}`);
    const all = api as Record<string, unknown>;
    for (const n of names) assert.equal(all[n], mod[n], `mod.ts re-exports ${n} of ${subpath}`);
  });
}
