/**
 * The fuzz task's Zarr metadata targets (tools/fuzz.ts): a short run of each ends with every
 * mutant read cleanly or refused in one line, none internal, multi-line, over the child's limits
 * or hung; and hostile `.zarray` files (a chunk of more than the memory limit, a shape past
 * 2^53, a wrong type) through `info` and `read`: exit 2, one line.
 * @module
 */
import assert from "node:assert/strict";
import { fuzzTarget, TARGETS } from "../tools/fuzz.ts";
import { runCli, tempDir } from "./_helpers.ts";

Deno.test("fuzz: the zarr metadata targets refuse every hostile mutant in one line", async () => {
  using tmp = tempDir();
  const stores = TARGETS.filter((t) => t.member !== undefined);
  assert.deepEqual(stores.map((t) => t.label), ["zarray", "zgroup", "zattrs", "zmetadata"]);
  for (const target of stores) {
    const c = await fuzzTarget(target, {
      seconds: 20,
      maxMutants: 150,
      seed: 5,
      dir: tmp.path,
      savePerKind: 0,
    });
    assert.equal(c.mutants, 150, target.label);
    assert.deepEqual(
      [c.internal, c.multiline, c.crash, c.hang],
      [0, 0, 0, 0],
      `${target.label}: ${JSON.stringify(c)}`,
    );
    // the metadata that makes the store is checked (its attributes are only warned about)
    if (target.label !== "zattrs") assert.ok(c.error > 50, `${target.label}: ${c.error} refused`);
  }
});

Deno.test("hostile .zarray: info and read exit 2 with one line", async () => {
  using tmp = tempDir();
  const path = `${tmp.path}/h.zarr`;
  const w = await runCli(["write", "--framing", "zarr", "--n", "4", "--frames", "2", path]);
  assert.equal(w.code, 0, w.stderr);
  const zarray = `${path}/particles/position/.zarray`;
  const text = Deno.readTextFileSync(zarray);
  for (
    const [from, to] of [
      ['"chunks": [\n        1,\n        4,', '"chunks": [\n        1,\n        400000000,'],
      ['"shape": [\n        2,', '"shape": [\n        9007199254740993,'],
      ['"shape": [\n        2,', '"shape": [\n        1e999,'],
      ['"dtype": "<f4"', '"dtype": ["<f4"]'],
      ['"zarr_format": 2', '"zarr_format": "2"'],
    ] as const
  ) {
    assert.ok(text.includes(from), from);
    Deno.writeTextFileSync(zarray, text.replace(from, to));
    for (const command of ["info", "read"]) {
      const r = await runCli([command, path]);
      assert.equal(r.code, 2, `${to}: ${command}: ${r.stderr}`);
      assert.match(r.stderr, /^sciobench: error: zarr: [^\n]*\.zarray[^\n]*\n$/, to);
    }
  }
});
