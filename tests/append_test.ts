import assert from "node:assert/strict";
import { ieeeio } from "../lib/framings/ieeeio/mod.ts";
import { raw } from "../lib/framings/raw.ts";
import { nativeBackend } from "../lib/backends/engine.ts";
import { writeFrames } from "../lib/backends/write.ts";
import { TableFrames } from "../lib/workloads/table/mod.ts";
import { hdf5 } from "../lib/peers/hdf5/mod.ts";
import { AppendJournal, journalPath, undoInterruptedAppend } from "../lib/io/journal.ts";
import { FileHandle } from "../lib/io/file.ts";
import { peerTest, runCli, tempDir } from "./_helpers.ts";

const CASES: readonly (readonly [string, string])[] = [
  ["raw", "big"],
  ["f77", "big"],
  ["f77", "little"],
  ["ieeeio", "big"],
];
for (const [framing, endian] of CASES) {
  Deno.test(`write --append (${framing}, ${endian}-endian) gives the same bytes as one write`, async () => {
    using d = tempDir();
    const whole = `${d.path}/whole`;
    const parts = `${d.path}/parts`;
    const w = (path: string, frames: number, more: string[]) =>
      runCli(["write", "--n", "16", "--frames", String(frames), ...more, path]);
    assert.equal((await w(whole, 5, ["--framing", framing, "--endian", endian])).code, 0);
    assert.equal((await w(parts, 3, ["--framing", framing, "--endian", endian])).code, 0);
    const r = await w(parts, 2, ["--append", "--format", "json"]);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(JSON.parse(r.stdout).rows[0].first_frame, 3);
    assert.deepEqual(await Deno.readFile(parts), await Deno.readFile(whole));
    const v = await runCli(["read", "--verify", "--format", "json", parts]);
    assert.equal(v.code, 0, v.stderr);
    assert.equal(JSON.parse(v.stdout).rows[0].frames, 5);
  });
}

peerTest(
  "write --append refuses a framing that cannot append (hdf5), and leaves the file alone",
  () => hdf5.unavailable(),
  async () => {
    using d = tempDir();
    const h5 = `${d.path}/t.h5`;
    assert.equal(
      (await runCli(["write", "--framing", "hdf5", "--n", "4", "--frames", "2", h5])).code,
      0,
    );
    const before = await Deno.readFile(h5);
    const no = await runCli(["write", "--append", "--n", "4", "--frames", "2", h5]);
    assert.equal(no.code, 2);
    assert.match(
      no.stderr,
      /^sciobench: error: peer 'hdf5' cannot append to an existing file\n$/,
    );
    assert.deepEqual(await Deno.readFile(h5), before);
  },
);

Deno.test("write --append refuses what it cannot do, and leaves the file alone", async () => {
  using d = tempDir();
  const f = `${d.path}/t.f77`;
  assert.equal(
    (await runCli(["write", "--framing", "f77", "--n", "4", "--frames", "2", f])).code,
    0,
  );
  const order = await runCli([
    "write",
    "--append",
    "--endian",
    "big",
    "--n",
    "4",
    "--frames",
    "1",
    f,
  ]);
  assert.equal(order.code, 2);
  assert.match(order.stderr, /cannot append big-endian data to .*t\.f77, a little-endian file/);
  const both = await runCli(["write", "--append", "--force", "--n", "4", "--frames", "1", f]);
  assert.equal(both.code, 2);
  assert.match(both.stderr, /--append adds to FILE and --force replaces it/);
  const missing = await runCli([
    "write",
    "--append",
    "--n",
    "4",
    "--frames",
    "1",
    `${d.path}/none`,
  ]);
  assert.equal(missing.code, 1);
  assert.match(missing.stderr, /none: no such file or directory/);
});

Deno.test("a failed append puts the file back byte for byte (truncated, header restored)", async () => {
  using d = tempDir();
  for (const framing of [raw, ieeeio]) {
    const backend = nativeBackend(framing);
    const path = `${d.path}/t.${framing.name}`;
    const frames = new TableFrames(8, 1);
    await writeFrames(backend, path, { create: "new" }, 3, (i) => frames.frame(i));
    const before = await Deno.readFile(path);
    await assert.rejects(
      () =>
        writeFrames(backend, path, { create: "append" }, 4, (i) => {
          if (i < 2) return frames.frame(3 + i);
          // A chunk whose data does not match its shape: the encoder throws mid-append.
          return {
            step: 0,
            chunks: [{ name: "bad", dtype: "float32", shape: [4], data: new Float32Array(3) }],
          };
        }),
    );
    assert.deepEqual(await Deno.readFile(path), before, `${framing.name} restored`);
  }
});

Deno.test("a signal during an append: rolled back while the journal exists, complete once it is committed", async () => {
  using d = tempDir();
  const backend = nativeBackend(raw);
  const path = `${d.path}/t.raw`;
  const frames = new TableFrames(8, 1);
  await writeFrames(backend, path, { create: "new" }, 3, (i) => frames.frame(i));
  const before = await Deno.readFile(path);
  // before the append changed anything (no journal, the same size): as it was
  assert.equal(undoInterruptedAppend(path, before.length), "as-it-was");
  assert.deepEqual(await Deno.readFile(path), before);
  // while the journal exists (the file grown, a byte of its old part changed): rolled back
  const journal = AppendJournal.begin(path, before.length);
  const f = FileHandle.open(path, "update");
  journal.save(f, 0, 1);
  f.writeAt(new Uint8Array([0xff]), 0);
  f.writeAt(new Uint8Array(100), before.length);
  f.close();
  assert.equal(undoInterruptedAppend(path, before.length), "as-it-was");
  assert.deepEqual(await Deno.readFile(path), before);
  assert.throws(() => Deno.statSync(journalPath(path)), Deno.errors.NotFound);
  // after the append is committed (its journal removed), as a signal handled after the write's
  // last step finds it: complete, and left so (it was rolled back to the old size before)
  await writeFrames(backend, path, { create: "append" }, 2, (i) => frames.frame(3 + i));
  const after = await Deno.readFile(path);
  assert.ok(after.length > before.length);
  assert.equal(undoInterruptedAppend(path, before.length), "complete");
  assert.deepEqual(await Deno.readFile(path), after);
});
