/**
 * The public API: mod.ts's module-doc examples run from outside the repository (a temporary
 * directory with no deno.json, importing mod.ts by its absolute file URL), type-checked; and
 * mod.ts exports the framings, peers, registry and workloads but not the internals.
 */
import assert from "node:assert/strict";
import * as api from "../mod.ts";
import { runScript } from "./_helpers.ts";

const MOD = new URL("../mod.ts", import.meta.url);

/** The ```ts blocks of mod.ts's module documentation, with `./mod.ts` made absolute. */
function docExamples(): string[] {
  const text = Deno.readTextFileSync(MOD);
  const doc = text.slice(0, text.indexOf("*/"));
  return [...doc.matchAll(/```ts\n([\s\S]*?)```/g)].map((m) =>
    m[1]!.split("\n").map((l) => l.replace(/^ \* ?/, "")).join("\n")
      .replaceAll('"./mod.ts"', JSON.stringify(MOD.href))
  );
}

Deno.test("mod.ts: the module-doc examples run from outside the repository", async () => {
  const examples = docExamples();
  assert.equal(examples.length, 2);
  const dir = Deno.makeTempDirSync({ prefix: "sciobench-api-" });
  try {
    const outputs: string[] = [];
    for (const [i, code] of examples.entries()) {
      const script = `${dir}/example${i}.ts`;
      Deno.writeTextFileSync(script, code);
      const out = await runScript(script, [], { cwd: dir, check: true });
      assert.equal(out.code, 0, out.stderr);
      outputs.push(out.stdout);
    }
    const table = outputs[0]!.trim().split("\n").map((l) => l.split(" "));
    assert.deepEqual(table.map((r) => r[0]), ["raw", "gsd"]);
    for (const r of table) assert.ok(Number(r[1]) > 0 && Number(r[2]) > 0, r.join(" "));
    assert.equal(outputs[1]!.trim(), "1 12");
    // The table's scratch directory is gone; only the example scripts are left.
    assert.deepEqual([...Deno.readDirSync(dir)].map((e) => e.name).sort(), [
      "example0.ts",
      "example1.ts",
    ]);
  } finally {
    Deno.removeSync(dir, { recursive: true });
  }
});

Deno.test("mod.ts: named exports of framings, peers, registry and workloads; no internals", () => {
  const names = Object.keys(api);
  for (
    const n of [
      "raw",
      "gsd",
      "f77",
      "ieeeio",
      "netcdf",
      "zarr",
      "zarrV3",
      "MemoryStore",
      "hdf5",
      "netcdf4",
      "netcdfLib",
      "hdf4",
      "pythonGsd",
      "BACKENDS",
      "backendByName",
      "registerBackend",
      "detectFormat",
      "runTable",
      "runScaling",
      "runRecords",
      "runReaders",
      "writeFrames",
      "VERSION",
    ]
  ) assert.ok(names.includes(n), n);
  for (const n of ["FileHandle", "WriteBatcher", "dropCache", "withScratchDir", "startMeter"]) {
    assert.ok(!names.includes(n), `${n} is internal`);
  }
  assert.deepEqual(api.FRAMINGS.map((f) => f.name).sort(), [
    "f77",
    "gsd",
    "ieeeio",
    "netcdf",
    "raw",
    "zarr",
    "zarr-v3",
  ]);
});

Deno.test("mod.ts: every import under lib/ (dynamic ones too) is relative, node: or a pinned npm:", () => {
  // A bare specifier would need the repository's import map, which a user of the package does
  // not have; the example test above only reaches the static graph.
  const root = new URL("../lib", import.meta.url).pathname;
  const bad: string[] = [];
  const seen = new Set<string>();
  const visit = (dir: string) => {
    for (const e of Deno.readDirSync(dir)) {
      const path = `${dir}/${e.name}`;
      if (e.isDirectory) visit(path);
      else if (e.name.endsWith(".ts")) {
        const text = Deno.readTextFileSync(path);
        const specs = [
          ...text.matchAll(/^\s*(?:import|export)\b[^"';]*?\bfrom\s+"([^"]+)"/gm),
          ...text.matchAll(/^\s*import\s+"([^"]+)"/gm),
          ...text.matchAll(/\bimport\(\s*"([^"]+)"\s*\)/g),
        ].map((m) => m[1]!);
        for (const s of specs) {
          seen.add(s);
          if (!/^(\.{1,2}\/|node:|npm:(@[^/@]+\/)?[^/@]+@\d[^/]*(\/.*)?$)/.test(s)) {
            bad.push(`${path.slice(root.length + 1)}: ${s}`);
          }
        }
      }
    }
  };
  visit(root);
  assert.ok(
    seen.has("npm:vega@6.4.0") && seen.has("../core/errors.ts"),
    "dynamic and static imports read",
  );
  assert.deepEqual(bad, []);
});
