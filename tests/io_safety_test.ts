/**
 * Data safety of lib/io and of --out: locks, journals and temporary files of the resolved file,
 * outputs that are inputs, scratch directories never without an owner, node-local tmpfs.
 * @module
 */
import assert from "node:assert/strict";
import * as libc from "../lib/sys/libc.ts";
import { AppendJournal, generationOf, journalPath, rollBack } from "../lib/io/journal.ts";
import { FileHandle } from "../lib/io/file.ts";
import { crashTrials, outTrials, signalWriteTrials } from "../tools/crash_appends.ts";
import { runCli, spawnCli, tempDir } from "./_helpers.ts";

const LIB = new URL("../lib/", import.meta.url).href;

/** True when /dev/shm exists (node-local tmpfs); tests under it are ignored elsewhere. */
const SHM = (() => {
  try {
    return (libc.fileStat("/dev/shm").mode & 0o170000) === 0o040000;
  } catch {
    return false;
  }
})();

/** A new file under /dev/shm, made through libc (Deno refuses /dev without --allow-all). */
function shmFile(name: string): { path: string } & Disposable {
  const path = `/dev/shm/sciobench-test-${Deno.pid}-${name}`;
  libc.close(libc.open(path, libc.O.WRONLY | libc.O.CREAT | libc.O.EXCL, 0o644));
  return {
    path,
    [Symbol.dispose]() {
      Deno.removeSync(path);
    },
  };
}

Deno.test({
  name: "tryLockFile locks a file under /dev/shm without --allow-all, through a link, and returns",
  ignore: !SHM,
  fn: async () => {
    using d = tempDir();
    using f = shmFile("lock");
    Deno.symlinkSync(f.path, `${d.path}/link`);
    const probe = `${d.path}/probe.ts`;
    Deno.writeTextFileSync(
      probe,
      `import { tryLockFile } from "${LIB}io/lock.ts";\n` +
        `for (const p of Deno.args) { const l = tryLockFile(p); console.log(l ? "locked" : "busy"); l?.release(); }\n`,
    );
    // Deno's own checks refuse /dev without --allow-all: the lock must not depend on them.
    const child = new Deno.Command(Deno.execPath(), {
      args: [
        "run",
        "--quiet",
        "--allow-ffi",
        "--allow-read",
        "--allow-write",
        probe,
        f.path,
        `${d.path}/link`,
      ],
      stdout: "piped",
      stderr: "piped",
    }).spawn();
    const timer = setTimeout(() => child.kill("SIGKILL"), 30_000);
    const out = await child.output();
    clearTimeout(timer);
    const dec = new TextDecoder();
    assert.equal(out.signal, null, "tryLockFile did not return within 30 s (killed)");
    assert.equal(out.code, 0, dec.decode(out.stderr));
    assert.deepEqual(dec.decode(out.stdout).trim().split("\n"), ["locked", "locked"]);
  },
});

Deno.test("an --out, --plot or -o that is the command's input file is refused, however spelled", async () => {
  using d = tempDir();
  const f = `${d.path}/data.raw`;
  const w = await runCli(["write", "--framing", "raw", "--n", "4", "--frames", "3", f]);
  assert.equal(w.code, 0, w.stderr);
  const before = Deno.readFileSync(f);
  Deno.symlinkSync(f, `${d.path}/link.raw`);
  Deno.linkSync(f, `${d.path}/hard.raw`);
  const spellings = [
    "data.raw",
    "./data.raw",
    `${d.path}/link.raw`,
    `${d.path}/hard.raw`,
    `${d.path}/../${d.path.split("/").pop()}/data.raw`,
  ];
  const runs: string[][] = [];
  for (const out of spellings) {
    runs.push(["read", "--out", out, f]);
    {
      const force = ["--force"];
      runs.push(["read", ...force, "--out", out, f]);
      if (!out.includes("link")) {
        runs.push(["read", ...force, "--plot", out.replace(/\.raw$/, ".svg"), f]);
      }
      runs.push(["readers", ...force, "--file", f, "--out", out]);
      runs.push(["plot", ...force, "-o", out, f]);
      runs.push([
        "write",
        ...force,
        "--framing",
        "raw",
        "--n",
        "4",
        "--frames",
        "1",
        "--out",
        out,
        f,
      ]);
    }
  }
  // --plot names an .svg: links of such names to the data file
  Deno.symlinkSync(f, `${d.path}/data.svg`);
  Deno.linkSync(f, `${d.path}/hard.svg`);
  for (const args of runs) {
    const r = await runCli(args, { cwd: d.path });
    assert.equal(r.code, 2, `${args.join(" ")}: ${r.stderr}`);
    assert.match(r.stderr, /is (FILE|--file|RESULTS) itself/, args.join(" "));
    assert.equal(r.stderr.trimEnd().split("\n").length, 1, r.stderr);
    assert.deepEqual(Deno.readFileSync(f), before, args.join(" "));
  }
  // --plot the same file as --out
  const r = await runCli(["read", "--out", "x.svg", "--plot", "./x.svg", f], { cwd: d.path });
  assert.equal(r.code, 2, r.stderr);
  assert.match(r.stderr, /--plot \.\/x\.svg is --out itself/);
});

/** Waits (polling every 2 ms, up to 60 s) until `done()` holds. */
async function until(done: () => boolean): Promise<boolean> {
  const end = Date.now() + 60_000;
  while (!done() && Date.now() < end) await new Promise((r) => setTimeout(r, 2));
  return done();
}

function exists(path: string): boolean {
  try {
    Deno.lstatSync(path);
    return true;
  } catch {
    return false;
  }
}

Deno.test("a SIGKILLed append through a symbolic link leaves its journal beside the file, found by its real path", async () => {
  using d = tempDir();
  Deno.mkdirSync(`${d.path}/real`);
  Deno.mkdirSync(`${d.path}/links`);
  const f = `${d.path}/real/k.raw`;
  const link = `${d.path}/links/l.raw`;
  const w = await runCli(["write", "--framing", "raw", "--n", "256", "--frames", "3", f]);
  assert.equal(w.code, 0, w.stderr);
  const before = Deno.readFileSync(f);
  Deno.symlinkSync(f, link);
  assert.equal(journalPath(link), journalPath(f), "one journal for every spelling");
  const a = spawnCli(["write", "--append", "--n", "256", "--frames", "20000", link]);
  assert.ok(await until(() => Deno.statSync(f).size > before.length), "the append began");
  a.kill("SIGKILL");
  await a.output();
  assert.ok(exists(`${d.path}/real/.k.raw.sciobench-journal`), "the journal is beside the file");
  assert.deepEqual([...Deno.readDirSync(`${d.path}/links`)].map((e) => e.name), ["l.raw"]);
  const info = await runCli(["info", f]);
  assert.equal(info.code, 0, info.stderr);
  assert.match(info.stderr, /an interrupted append was rolled back/);
  assert.deepEqual(Deno.readFileSync(f), before);
  // and a committed append through the real path is kept when the link is opened again
  const more = await runCli(["write", "--append", "--n", "256", "--frames", "2", f]);
  assert.equal(more.code, 0, more.stderr);
  const after = Deno.readFileSync(f);
  const again = await runCli(["info", link]);
  assert.equal(again.code, 0, again.stderr);
  assert.equal(again.stderr, "");
  assert.deepEqual(Deno.readFileSync(f), after);
});

Deno.test("a journal is never applied to a file smaller or older than when it began: removed, one line", () => {
  using d = tempDir();
  const f = `${d.path}/j.raw`;
  for (const change of ["smaller", "older"]) {
    Deno.writeFileSync(f, new Uint8Array(8192).fill(7));
    const file = FileHandle.open(f, "update");
    const journal = AppendJournal.begin(f, file.size);
    journal.save(file, 0, 4096); // the append's first page saved, as before an overwrite
    file.close();
    // what another program did afterwards, which the journal knows nothing of
    if (change === "smaller") {
      Deno.truncateSync(f, 100);
    } else {
      Deno.writeFileSync(f, new Uint8Array(8192).fill(9));
      Deno.utimeSync(f, new Date(2001, 0, 1), new Date(2001, 0, 1));
    }
    const kept = Deno.readFileSync(f);
    assert.equal(rollBack(f), "changed", change);
    assert.deepEqual(Deno.readFileSync(f), kept, `${change}: the file is left as it is`);
    assert.equal(exists(journalPath(f)), false, `${change}: the journal is removed`);
  }
});

Deno.test("owner-less empty scratch directories over a minute old are removed; young or full ones kept", async () => {
  using d = tempDir();
  const old = new Date(Date.now() - 120_000);
  const dead = new Deno.Command("true").spawn();
  await dead.status;
  const named = `.sciobench-new-${dead.pid}-abc`; // killed before its owner record was written
  for (
    const name of [
      ".sciobench-old",
      ".sciobench-torn",
      ".sciobench-young",
      ".sciobench-full",
      named,
    ]
  ) {
    Deno.mkdirSync(`${d.path}/${name}`);
  }
  Deno.writeTextFileSync(`${d.path}/.sciobench-torn/owner`, '{"pid": 12'); // killed mid-write
  Deno.writeTextFileSync(`${d.path}/.sciobench-full/data.raw`, "x");
  for (const name of [".sciobench-old", ".sciobench-torn", ".sciobench-full"]) {
    Deno.utimeSync(`${d.path}/${name}`, old, old);
  }
  const r = await runCli(
    ["table", "--framing", "raw", "--size", "1MiB", "--n", "1024", "--dir", d.path],
  );
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stderr, /removed empty scratch directory .*\.sciobench-old without an owner/);
  assert.match(r.stderr, /removed empty scratch directory .*\.sciobench-torn without an owner/);
  assert.match(r.stderr, /removed empty scratch directory .*\.sciobench-new-\d+-abc without/);
  assert.deepEqual([...Deno.readDirSync(d.path)].map((e) => e.name).sort(), [
    ".sciobench-full",
    ".sciobench-young",
  ]);
});

Deno.test({
  name: "write, read, append, info and table work under /dev/shm with the task's permissions",
  ignore: !SHM,
  fn: async () => {
    const f = `/dev/shm/sciobench-test-${Deno.pid}.gsd`;
    try {
      const w = await runCli(["write", "--framing", "gsd", "--n", "16", "--frames", "3", f]);
      assert.equal(w.code, 0, w.stderr);
      const a = await runCli(["write", "--append", "--n", "16", "--frames", "2", f]);
      assert.equal(a.code, 0, a.stderr);
      const r = await runCli(["read", "--verify", "--format", "json", f]);
      assert.equal(r.code, 0, r.stderr);
      assert.equal(JSON.parse(r.stdout).rows[0].frames, 5);
      const i = await runCli(["info", f]);
      assert.equal(i.code, 0, i.stderr);
      const t = await runCli(
        ["table", "--framing", "raw", "--size", "1MiB", "--n", "1024", "--dir", "/dev/shm"],
      );
      assert.equal(t.code, 0, t.stderr);
    } finally {
      try {
        Deno.removeSync(f);
      } catch {
        // not written
      }
    }
    const left = [...Deno.readDirSync("/dev/shm")].map((e) => e.name)
      .filter((n) => n.includes(`sciobench-test-${Deno.pid}`) || n.startsWith(".sciobench-"));
    assert.deepEqual(left, []);
  },
});

Deno.test("killed appends and --force writes through a symbolic link, and read --out at the data file (deno task crash)", async () => {
  // A small sample; `deno task crash` runs many more trials.
  using d = tempDir();
  for (const framing of ["gsd"]) {
    for (const signals of [["SIGKILL"], ["SIGINT", "SIGTERM"]] as Deno.Signal[][]) {
      const c = await crashTrials(framing, {
        dir: `${d.path}`,
        trials: 3,
        seed: 5,
        signals,
        frames: 100,
        link: true,
      });
      assert.equal(c.neither + c.unverified + c.badExits, 0, `${framing}: ${c.notes.join("; ")}`);
      assert.equal(c.original + c.complete, 3);
    }
  }
  const w = await signalWriteTrials("raw", 2, 5, true);
  assert.equal(w.neither + w.unverified + w.badExits, 0, w.notes.join("; "));
  const o = await outTrials("raw", 4, 5);
  assert.equal(o.neither + o.badExits, 0, o.notes.join("; "));
  assert.equal(o.original, 4);
});

Deno.test("a journal left through one hard link is not applied over an append committed through another", () => {
  using d = tempDir();
  const f = `${d.path}/f.raw`;
  const h = `${d.path}/h.raw`;
  Deno.writeFileSync(f, new Uint8Array(8192).fill(1));
  Deno.linkSync(f, h);
  // An append through h killed after saving a page: its journal, kept as the kill left it.
  const a = FileHandle.open(h, "update");
  const killed = AppendJournal.begin(h, a.size);
  killed.save(a, 0, 4096);
  a.close();
  const left = Deno.readFileSync(journalPath(h));
  killed.commit();
  Deno.writeFileSync(journalPath(h), left);
  // A later append through f, which cannot see h's journal, is committed.
  const b = FileHandle.open(f, "update");
  const later = AppendJournal.begin(f, b.size);
  b.writeAt(new Uint8Array(100).fill(2), b.size);
  b.close();
  later.commit();
  const committed = Deno.readFileSync(f);
  if (generationOf(f) === 0n) {
    console.error("skipped: this file system keeps no extended attributes");
    Deno.removeSync(journalPath(h));
    return;
  }
  assert.equal(rollBack(h), "changed");
  assert.deepEqual(Deno.readFileSync(f), committed, "the committed append is kept");
  assert.equal(exists(journalPath(h)), false);
});

Deno.test("table --plot that is its --out file (another spelling) is refused before the run", async () => {
  using d = tempDir();
  Deno.symlinkSync(`${d.path}/t.svg`, `${d.path}/l.svg`);
  Deno.writeTextFileSync(`${d.path}/t.svg`, "mine");
  const r = await runCli(
    [
      "table",
      "--force",
      "--out",
      "t.svg",
      "--plot",
      "l.svg",
      "--framing",
      "raw",
      "--size",
      "1MiB",
      "--n",
      "1024",
      "--dir",
      ".",
    ],
    { cwd: d.path },
  );
  assert.equal(r.code, 2, r.stderr);
  assert.match(r.stderr, /--plot l\.svg is --out itself/);
  assert.equal(r.stderr.trimEnd().split("\n").length, 1, r.stderr);
  assert.equal(Deno.readTextFileSync(`${d.path}/t.svg`), "mine");
  assert.deepEqual([...Deno.readDirSync(d.path)].map((e) => e.name).sort(), ["l.svg", "t.svg"]);
});
