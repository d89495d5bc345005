/**
 * Appending to a Zarr v2 store (`write --append`): the store ends byte for byte as a new write of
 * all its frames makes it (every separator, compressor and consolidated variant); the order that
 * makes it crash safe (journal first, chunks fsynced before any metadata changes, each metadata
 * file replaced by a rename, the journal removed last); an append killed before or amid its
 * metadata, or aborted, leaves the store as it was once the next command opened it; a store
 * whose metadata sciobench did not write is refused (exit 2, one line, unchanged).
 * @module
 */
import assert from "node:assert/strict";
import { backendByName } from "../lib/backends/registry.ts";
import { storeFiles } from "../lib/io/store.ts";
import { TableFrames } from "../lib/workloads/table/frames.ts";
import { observeDuring, runCli, tempDir } from "./_helpers.ts";

const DRIVER = new URL("./_store_kill_driver.ts", import.meta.url).pathname;

/** Every file of the store at `root` (relative name → bytes). */
function filesOf(root: string): Map<string, Uint8Array> {
  return new Map(storeFiles(root).map((f) => [f.slice(root.length + 1), Deno.readFileSync(f)]));
}

/** Writes frames [from, to) of the table's frames (N = 8, seed 7) to `path`. */
function write(
  path: string,
  from: number,
  to: number,
  options: Record<string, unknown>,
  create: "new" | "append",
): void {
  const frames = new TableFrames(8, 7);
  const sink = backendByName("zarr").openWriter(path, {
    create,
    fsync: "end",
    backendOptions: options,
  });
  for (let i = from; i < to; i++) sink.writeFrame(frames.frame(i));
  sink.close();
}

Deno.test("zarr append: the store ends as a new write of all its frames makes it", () => {
  using tmp = tempDir();
  const variants = [
    {},
    { separator: "/" },
    { compressor: "zlib", consolidated: true },
    { separator: "/", compressor: "gzip", consolidated: true },
  ];
  for (const [k, options] of variants.entries()) {
    const whole = `${tmp.path}/whole${k}.zarr`;
    const grown = `${tmp.path}/grown${k}.zarr`;
    write(whole, 0, 5, options, "new");
    write(grown, 0, 3, options, "new");
    write(grown, 3, 4, {}, "append");
    write(grown, 4, 5, {}, "append");
    assert.deepEqual(filesOf(grown), filesOf(whole), JSON.stringify(options));
    assert.deepEqual([...Deno.readDirSync(tmp.path)].filter((e) => e.name.startsWith(".")), []);
  }
});

Deno.test("zarr append: journal first, chunks fsynced before the metadata, each replaced by a rename", async () => {
  using tmp = tempDir();
  const path = `${tmp.path}/s.zarr`;
  write(path, 0, 2, { separator: "/" }, "new");
  const inodes = new Map(
    storeFiles(path).filter((f) => f.includes("/.z")).map((f) => [f, Deno.statSync(f).ino]),
  );
  const calls: string[] = [];
  const paths = new Map<number, string>();
  await observeDuring({
    open(fd, p) {
      paths.set(fd, p);
      calls.push(`open ${p}`);
    },
    sync(fd, call) {
      if (call === "fsync") calls.push(`fsync ${paths.get(fd)}`);
    },
  }, () => write(path, 2, 4, {}, "append"));
  const journal = `${tmp.path}/.s.zarr.sciobench-journal`;
  // the journal exists before the first file of the store is written
  const firstChunk = calls.findIndex((c) => c.endsWith("/2/0/0"));
  assert.ok(calls.indexOf(`open ${journal}-tmp`) >= 0, calls.join("\n"));
  assert.ok(calls.indexOf(`fsync ${journal}-tmp`) < firstChunk, calls.join("\n"));
  assert.ok(calls.indexOf(`fsync ${tmp.path}`) < firstChunk, "the journal's directory synced");
  const firstMeta = calls.findIndex((c) => c.endsWith(".sciobench-tmp"));
  assert.ok(firstMeta > 0, calls.join("\n"));
  const before = calls.slice(0, firstMeta);
  // the journal holding the old metadata is saved (a second atomic write) before it changes
  assert.equal(before.filter((c) => c === `open ${journal}-tmp`).length, 2, before.join("\n"));
  for (const array of ["particles/position", "particles/orientation"]) {
    for (const frame of [2, 3]) {
      const chunk = `${path}/${array}/${frame}/0/0`;
      assert.ok(before.includes(`fsync ${chunk}`), `${chunk} synced before the metadata`);
      assert.ok(before.includes(`fsync ${path}/${array}/${frame}`), `${frame}/ synced first`);
    }
    assert.ok(before.includes(`fsync ${path}/${array}`), `${array} synced first`);
  }
  // every metadata file is a new inode (renamed over the old), its directory synced after
  for (const [file, ino] of inodes) {
    assert.notEqual(Deno.statSync(file).ino, ino, `${file} replaced by a rename`);
    const dir = file.slice(0, file.lastIndexOf("/"));
    assert.ok(calls.lastIndexOf(`fsync ${dir}`) > firstMeta, `${dir} synced after the renames`);
  }
  assert.throws(() => Deno.statSync(journal), Deno.errors.NotFound);
  assert.deepEqual(storeFiles(path).filter((f) => f.slice(path.length).includes("sciobench")), []);
});

Deno.test("zarr append: killed before or amid its metadata, the next command puts the store back", async () => {
  using tmp = tempDir();
  for (
    const [options, at] of [
      [{}, "-"],
      [{}, "orientation/..zattrs.sciobench-tmp"],
      [{ separator: "/", consolidated: true }, "/..zmetadata.sciobench-tmp"],
      [{ consolidated: true }, "position/..zarray.sciobench-tmp"],
      // killed while its journal was being made: nothing changed, the temporary journal goes
      [{}, ".k.zarr.sciobench-journal-tmp"],
    ] as const
  ) {
    const path = `${tmp.path}/k.zarr`;
    try {
      Deno.removeSync(path, { recursive: true });
    } catch {
      // first round
    }
    write(path, 0, 3, options, "new");
    const original = filesOf(path);
    const killed = await new Deno.Command(Deno.execPath(), {
      args: ["run", "--allow-all", DRIVER, path, "4", at],
      stderr: "piped",
    }).output();
    assert.equal(killed.code, 9, new TextDecoder().decode(killed.stderr));
    const early = at.endsWith("journal-tmp");
    assert.equal(
      early,
      filesOf(path).size === original.size,
      `${at}: the append changed the store`,
    );
    const info = await runCli(["info", path]);
    assert.equal(info.code, 0, info.stderr);
    assert.match(
      info.stderr,
      early
        ? /^$/
        : /^sciobench: .*k\.zarr: an interrupted append was rolled back; the store is as it was before it\n$/,
    );
    assert.match(info.stdout, /^frames: 3$/m);
    assert.deepEqual(filesOf(path), original, `${at}: as it was`);
    assert.deepEqual([...Deno.readDirSync(tmp.path)].map((e) => e.name), ["k.zarr"]);
  }
});

Deno.test("zarr append: a failed append is undone; a store sciobench did not write is refused", async () => {
  using tmp = tempDir();
  const path = `${tmp.path}/a.zarr`;
  write(path, 0, 2, {}, "new");
  const original = filesOf(path);
  const frames = new TableFrames(8, 7);
  const sink = backendByName("zarr").openWriter(path, { create: "append", fsync: "end" });
  sink.writeFrame(frames.frame(2));
  sink.abort();
  assert.deepEqual(filesOf(path), original);
  Deno.writeFileSync(`${path}/particles/position/.zattrs`, new TextEncoder().encode('{"a": 1}'));
  const changed = filesOf(path);
  const r = await runCli(["write", "--append", "--n", "8", "--frames", "1", path]);
  assert.equal(r.code, 2);
  assert.match(
    r.stderr,
    /^sciobench: error: zarr cannot append to .*a\.zarr: its particles\/position\/\.zattrs is not as sciobench writes it for these arrays \(appending would rewrite it\); write a new store\n$/,
  );
  assert.deepEqual(filesOf(path), changed);
  assert.deepEqual([...Deno.readDirSync(tmp.path)].map((e) => e.name), ["a.zarr"]);
});

Deno.test("zarr append: the journal of a store since replaced is never applied to the new one", async () => {
  using tmp = tempDir();
  const path = `${tmp.path}/r.zarr`;
  write(path, 0, 3, {}, "new");
  const killed = await new Deno.Command(Deno.execPath(), {
    args: ["run", "--allow-all", DRIVER, path, "2", "/..zgroup.sciobench-tmp"],
    stderr: "null",
  }).output();
  assert.equal(killed.code, 9);
  const w = await runCli([
    "write",
    "--force",
    "--framing",
    "zarr",
    "--n",
    "8",
    "--frames",
    "5",
    path,
  ]);
  assert.equal(w.code, 0, w.stderr);
  const fresh = filesOf(path);
  const info = await runCli(["info", path]);
  assert.equal(info.code, 0, info.stderr);
  assert.match(info.stdout, /^frames: 5$/m);
  assert.deepEqual(filesOf(path), fresh);
  assert.deepEqual([...Deno.readDirSync(tmp.path)].map((e) => e.name), ["r.zarr"]);
});
