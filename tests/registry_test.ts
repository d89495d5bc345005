/**
 * One registry: a toy native framing and a toy peer (tests/_toy_backends.ts), added with
 * registerBackend and no other edit, are found by name and by detection in `framings`, `table`,
 * `write`, `read`, `info` and `readers`.
 */
import assert from "node:assert/strict";
import { backendByName, BACKENDS, detectBackend } from "../lib/backends/registry.ts";
import { Progress } from "../lib/report/progress.ts";
import { runReaders } from "../lib/workloads/readers/mod.ts";
import "./_toy_backends.ts";
import { PERMISSIONS, tempDir } from "./_helpers.ts";

const TOY_CLI = new URL("./_toy_backends.ts", import.meta.url).pathname;

/** Runs the sciobench CLI with the toys registered (tests/_toy_backends.ts as the program). */
async function toyCli(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", "--quiet", ...PERMISSIONS, TOY_CLI, ...args],
    stdout: "piped",
    stderr: "piped",
    env: { NO_COLOR: "1" },
  }).output();
  const d = new TextDecoder();
  return { code: out.code, stdout: d.decode(out.stdout), stderr: d.decode(out.stderr) };
}

Deno.test("registry: the toys are registered beside the built-in backends", () => {
  const names = BACKENDS.map((b) => b.name);
  assert.ok(names.includes("toy") && names.includes("toy-peer"));
  assert.equal(backendByName("toy").kind, "native");
  assert.equal(backendByName("toy-peer").kind, "peer");
  assert.throws(() => backendByName("toyy"), /unknown backend 'toyy'; did you mean 'toy'\?/);
});

Deno.test("registry: a toy framing and a toy peer in framings, write, read, info, table", async () => {
  using tmp = tempDir();
  const list = await toyCli(["framings", "--format", "json"]);
  assert.equal(list.code, 0, list.stderr);
  const doc = JSON.parse(list.stdout) as {
    backends: { name: string; options: { name: string }[] }[];
  };
  assert.deepEqual(doc.backends.find((b) => b.name === "toy")?.options.map((o) => o.name), [
    "label",
  ]);
  assert.ok(doc.backends.some((b) => b.name === "toy-peer"));
  for (const name of ["toy", "toy-peer"]) {
    const path = `${tmp.path}/t.${name}`;
    const w = await toyCli(["write", "--framing", name, "--n", "16", "--frames", "5", path]);
    assert.equal(w.code, 0, w.stderr);
    assert.match(w.stdout.split("\n")[1]!, new RegExp(`^${name},`));
    assert.equal(detectBackend(path).name, name, "detected by its declared magic number");
    const r = await toyCli(["read", path, "--verify"]);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout.split("\n")[1]!, new RegExp(`^${name},`));
    const info = await toyCli(["info", path, "--json"]);
    assert.equal(info.code, 0, info.stderr);
    const facts = JSON.parse(info.stdout) as { framing: string; frames: number };
    assert.deepEqual([facts.framing, facts.frames], [name, 5]);
    const typo = await toyCli(["write", "--framing", name, "--option", "lable=x", path]);
    assert.equal(typo.code, 2);
  }
  const table = await toyCli([
    ...["table", "--framing", "toy,toy-peer", "--size", "64KiB", "--n", "16"],
    ...["--dir", tmp.path],
  ]);
  assert.equal(table.code, 0, table.stderr);
  const rows = table.stdout.trim().split("\n").slice(1).map((l) => l.split(",")[0]);
  assert.deepEqual(rows, ["toy", "toy-peer"]);
});

Deno.test("registry: the readers workload runs the toys (framing and peer) in reader processes", async () => {
  using tmp = tempDir();
  for (const name of ["toy", "toy-peer"]) {
    const rows = await runReaders({
      backend: backendByName(name),
      procs: [2],
      modes: ["shared", "separate"],
      caches: ["warm"],
      records: 3,
      length: 500,
      seed: 1,
      endian: "native",
      backendOptions: {},
      dir: tmp.path,
      progress: new Progress({ quiet: true }),
      launch: (path, fileIndex) =>
        new Deno.Command(Deno.execPath(), {
          args: [
            ...["run", "--quiet", ...PERMISSIONS, TOY_CLI, "readers", "_reader", path],
            ...["--framing", name, "--records", "3", "--length", "500"],
            ...["--file-index", String(fileIndex)],
          ],
          stdin: "piped",
          stdout: "piped",
          stderr: "piped",
        }).spawn(),
    });
    assert.deepEqual(rows.map((r) => [r.framing, r.mode, r.procs]), [
      [name, "shared", 2],
      [name, "separate", 2],
    ]);
    for (const r of rows) assert.ok(Number(r.reader_bytes) >= 2 * 3 * 500 * 8, name);
  }
});

Deno.test("engine: one frame-range check before every backend's readFrame and locate", () => {
  using tmp = tempDir();
  const layout = [{ name: "particles/position", dtype: "float32", shape: [4, 3] }] as const;
  const checked: string[] = [];
  for (const backend of BACKENDS) {
    // program peers read no files; a library missing here is covered where it is installed
    if (backend.kind === "program" || backend.unavailable() !== null) continue;
    const path = `${tmp.path}/range.${backend.name}`;
    const sink = backend.openWriter(path, { create: "new", endian: backend.orders[0] });
    for (let step = 0; step < 2; step++) {
      sink.writeFrame({ step, chunks: [{ ...layout[0], data: new Float32Array(12).fill(step) }] });
    }
    sink.close();
    const source = backend.openReader(path, { layout });
    try {
      assert.equal(source.frameCount, 2, backend.name);
      assert.ok(source.readFrame(1).length >= 1, backend.name);
      for (const bad of [2, -1, 0.5, NaN]) {
        assert.throws(
          () => source.readFrame(bad),
          (e: unknown) =>
            e instanceof RangeError && e.message === `frame ${bad} out of range [0, 2)`,
          `${backend.name} readFrame(${bad})`,
        );
        if (source.locate) {
          assert.throws(() => source.locate!(bad), RangeError, `${backend.name} locate(${bad})`);
        }
      }
    } finally {
      source.close();
    }
    checked.push(backend.name);
  }
  assert.ok(
    ["gsd", "raw", "ieeeio", "netcdf", "f77", "toy", "toy-peer"].every((n) => checked.includes(n)),
  );
});
