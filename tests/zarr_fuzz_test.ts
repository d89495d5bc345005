/**
 * The fuzz task's Zarr targets (tools/fuzz.ts: v2 metadata, a v3 zarr.json, v3 shard indexes, a
 * zip store): a short run of each ends with every
 * mutant read cleanly or refused in one line, none internal, multi-line, over the child's limits
 * or hung; and hostile `.zarray` files (a chunk of more than the memory limit, a shape past
 * 2^53, a wrong type) and hostile shard indexes (an entry past the file, of 2^64-2 bytes,
 * overlapping another, with the index's CRC-32C made right) through `info` and `read`: exit 2,
 * one line.
 * @module
 */
import assert from "node:assert/strict";
import { fuzzTarget, TARGETS } from "../tools/fuzz.ts";
import { crc32c } from "../lib/framings/zarr/crc32c.ts";
import { runCli, tempDir } from "./_helpers.ts";

Deno.test("fuzz: the zarr metadata targets refuse every hostile mutant in one line", async () => {
  using tmp = tempDir();
  const stores = TARGETS.filter((t) => t.member !== undefined);
  assert.deepEqual(
    stores.map((t) => t.label),
    ["zarray", "zgroup", "zattrs", "zmetadata", "zarrjson", "zshard", "zshardgz"],
  );
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

Deno.test("fuzz: the zip store target refuses every hostile mutant in one line", async () => {
  using tmp = tempDir();
  const target = TARGETS.find((t) => t.label === "zzip")!;
  const c = await fuzzTarget(target, {
    seconds: 20,
    maxMutants: 500,
    seed: 5,
    dir: tmp.path,
    savePerKind: 0,
  });
  assert.equal(c.mutants, 500);
  assert.deepEqual([c.internal, c.multiline, c.crash, c.hang], [0, 0, 0, 0], JSON.stringify(c));
  assert.ok(c.error > 100 && c.ok > 10, JSON.stringify(c));
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

Deno.test("hostile v3 shard index: info and read exit 2 with one line", async () => {
  using tmp = tempDir();
  const path = `${tmp.path}/s.zarr`;
  const w = await runCli([
    ...["write", "--framing", "zarr", "--n", "4", "--frames", "3", "--option", "version=3"],
    ...["--option", "shard=4", path],
  ]);
  assert.equal(w.code, 0, w.stderr);
  const shard = `${path}/particles/position/c/0/0/0`;
  const seed = Deno.readFileSync(shard);
  // 3 inner chunks of 4 x 3 float32 stored, one empty, then 4 entries and the CRC-32C
  const data = seed.length - (4 * 16 + 4);
  assert.equal(data, 3 * 48);
  for (
    const [entry, offset, nbytes] of [
      [0, 2n ** 64n - 2n, 48n],
      [1, 0n, 2n ** 64n - 2n],
      [2, BigInt(data - 8), 48n],
      [3, 2n ** 53n, 48n],
      [1, 0n, 96n],
      [1, 0n, 48n], // overlapping inner chunk 0: read as it says, no error
    ] as const
  ) {
    const bytes = seed.slice();
    const view = new DataView(bytes.buffer, data);
    view.setBigUint64(entry * 16, offset, true);
    view.setBigUint64(entry * 16 + 8, nbytes, true);
    view.setUint32(64, crc32c(bytes.subarray(data, data + 64)), true);
    Deno.writeFileSync(shard, bytes);
    for (const command of ["info", "read"]) {
      const r = await runCli([command, path]);
      const what = `entry ${entry} (${offset}, ${nbytes}): ${command}`;
      if (offset === 0n && nbytes === 48n) {
        assert.equal(r.code, 0, `${what}: ${r.stderr}`);
        continue;
      }
      assert.equal(r.code, 2, `${what}: ${r.stderr}`);
      assert.match(r.stderr, /^sciobench: error: zarr: [^\n]*c\/0\/0\/0[^\n]*\n$/, what);
    }
  }
});
