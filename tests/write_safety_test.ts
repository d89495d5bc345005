import assert from "node:assert/strict";
import { crashTrials, NATIVE_FRAMINGS } from "../tools/crash_appends.ts";
import { hdf4 } from "../lib/peers/hdf4/mod.ts";
import { journalPath } from "../lib/io/journal.ts";
import * as libc from "../lib/sys/libc.ts";
import { peerTest, runCli, runCliLimited, spawnCli, tempDir } from "./_helpers.ts";

/** Names in `dir`, sorted. */
function names(dir: string): string[] {
  return [...Deno.readDirSync(dir)].map((e) => e.name).sort();
}

async function writeFile(path: string, framing: string, frames = 3, n = 4): Promise<Uint8Array> {
  const r = await runCli([
    "write",
    "--framing",
    framing,
    "--n",
    String(n),
    "--frames",
    String(frames),
    path,
  ]);
  assert.equal(r.code, 0, r.stderr);
  return Deno.readFileSync(path);
}

async function collect(child: Deno.ChildProcess): Promise<{ code: number; stderr: string }> {
  const out = await child.output();
  return { code: out.code, stderr: new TextDecoder().decode(out.stderr) };
}

/** Waits (polling every 2 ms, up to 60 s) until `path` exists. */
async function appears(path: string): Promise<boolean> {
  const end = Date.now() + 60_000;
  while (Date.now() < end) {
    try {
      Deno.lstatSync(path);
      return true;
    } catch {
      await new Promise((r) => setTimeout(r, 2));
    }
  }
  return false;
}

function oneLine(stderr: string): void {
  assert.equal(
    stderr.trimEnd().split("\n").length,
    1,
    `expected one line on stderr, got: ${stderr}`,
  );
}

Deno.test("write checks every option before it touches FILE: the existing file is kept", async () => {
  using d = tempDir();
  const f = `${d.path}/keep.raw`;
  const before = await writeFile(f, "raw");
  const bad: string[][] = [
    ["--framing", "f77", "--option", "marker=3"],
    ["--framing", "netcdf", "--option", "variant=7"],
    ["--framing", "netcdf", "--endian", "little"],
    ["--framing", "raw", "--format", "bogus"],
    ["--framing", "bogus"],
  ];
  for (const extra of bad) {
    const r = await runCli(["write", "--force", ...extra, "--n", "4", "--frames", "2", f]);
    assert.equal(r.code, 2, `${extra.join(" ")}: ${r.stderr}`);
    oneLine(r.stderr);
    assert.deepEqual(Deno.readFileSync(f), before, extra.join(" "));
    assert.deepEqual(names(d.path), ["keep.raw"], extra.join(" "));
  }
  const fresh = await runCli([
    "write",
    "--format",
    "bogus",
    "--framing",
    "raw",
    "--n",
    "4",
    "--frames",
    "2",
    `${d.path}/new.raw`,
  ]);
  assert.equal(fresh.code, 2);
  assert.deepEqual(names(d.path), ["keep.raw"]);
});

Deno.test("write --force --out FILE FILE is refused, also through another path to FILE", async () => {
  using d = tempDir();
  const f = `${d.path}/x.raw`;
  const before = await writeFile(f, "raw");
  Deno.symlinkSync(f, `${d.path}/link.raw`);
  for (const out of [f, `${d.path}/link.raw`, `${d.path}/../${d.path.split("/").pop()}/x.raw`]) {
    const r = await runCli([
      "write",
      "--force",
      "--out",
      out,
      "--framing",
      "raw",
      "--n",
      "4",
      "--frames",
      "5",
      f,
    ]);
    assert.equal(r.code, 2, r.stderr);
    assert.match(r.stderr, /is FILE itself/);
    assert.deepEqual(Deno.readFileSync(f), before);
  }
});

Deno.test("write --force refuses a FIFO, a directory and a device node, and leaves them", async () => {
  using d = tempDir();
  const fifo = `${d.path}/fifo`;
  const made = await new Deno.Command("mkfifo", { args: [fifo] }).output();
  assert.equal(made.code, 0);
  Deno.mkdirSync(`${d.path}/dir`);
  const targets = [fifo, `${d.path}/dir`];
  const dev = `${d.path}/null`;
  // A character device (as /dev/null), where mknod is permitted (root); never /dev/null itself.
  if (
    (await new Deno.Command("mknod", { args: [dev, "c", "1", "3"], stderr: "null" }).output())
      .code === 0
  ) {
    targets.push(dev);
  }
  for (const t of targets) {
    const kind = Deno.lstatSync(t);
    const r = await runCli([
      "write",
      "--force",
      "--framing",
      "raw",
      "--n",
      "4",
      "--frames",
      "2",
      t,
    ]);
    assert.equal(r.code, 2, r.stderr);
    oneLine(r.stderr);
    assert.match(r.stderr, /is a (FIFO|directory|device); sciobench writes only regular files/);
    const after = Deno.lstatSync(t);
    assert.equal(after.ino, kind.ino, `${t} was replaced`);
    assert.equal(after.isFile, false);
  }
  assert.deepEqual(names(d.path).filter((n) => n.includes("sciobench")), []);
});

Deno.test("a --force write or an append that runs out of space leaves the old file intact", async () => {
  using d = tempDir();
  for (const framing of ["raw", "gsd", "f77", "ieeeio", "netcdf"]) {
    const f = `${d.path}/old.${framing}`;
    const before = await writeFile(f, framing, 3, 64);
    const big = ["--n", "4096", "--frames", "40", f];
    const replace = await runCliLimited(["write", "--force", "--framing", framing, ...big], 512);
    assert.equal(replace.code, 1, replace.stderr);
    oneLine(replace.stderr);
    assert.deepEqual(Deno.readFileSync(f), before, `${framing}: --force`);
    const append = await runCliLimited(
      ["write", "--append", "--n", "64", "--frames", "4000", f],
      512,
    );
    assert.equal(append.code, 1, append.stderr);
    oneLine(append.stderr);
    assert.deepEqual(Deno.readFileSync(f), before, `${framing}: --append`);
    const fresh = await runCliLimited(
      ["write", "--framing", framing, ...big.slice(0, 4), `${f}.new`],
      512,
    );
    assert.equal(fresh.code, 1, fresh.stderr);
  }
  assert.deepEqual(names(d.path), ["old.f77", "old.gsd", "old.ieeeio", "old.netcdf", "old.raw"]);
});

for (const [signal, code] of [["SIGINT", 130], ["SIGTERM", 143]] as const) {
  Deno.test(`${signal} during write --force or --append leaves FILE as it was, exit ${code}`, async () => {
    using d = tempDir();
    const f = `${d.path}/t.raw`;
    const before = await writeFile(f, "raw", 1, 1024);
    const long = ["--n", "1024", "--frames", "3000"];
    /**
     * The run was interrupted (exit `code`, one line, FILE as before), or the signal came after
     * the file was complete (it is handled between frames): exit 0, or exit `code` with one line
     * saying FILE is complete; FILE then verifies.
     */
    const asBeforeOrComplete = async (child: Deno.ChildProcess, path: string, old?: Uint8Array) => {
      const r = await collect(child);
      if (
        r.code === 0 ||
        new RegExp(`^sciobench: interrupted by ${signal}; .*is complete`).test(r.stderr)
      ) {
        if (r.code !== 0) oneLine(r.stderr);
        const v = await runCli(["read", "--verify", path]);
        assert.equal(v.code, 0, v.stderr);
        return;
      }
      assert.equal(r.code, code, r.stderr);
      oneLine(r.stderr);
      assert.match(r.stderr, new RegExp(`interrupted by ${signal}; `));
      if (old) {
        const now = Deno.readFileSync(path);
        // compared without a diff: a diff of two large files would take minutes to print
        const same = now.length === old.length && now.every((b, i) => b === old[i]);
        assert.ok(same, `${path} changed (${old.length} -> ${now.length} bytes): ${r.stderr}`);
      } else assert.throws(() => Deno.statSync(path), Deno.errors.NotFound);
    };
    // --force: interrupted while it writes the temporary file.
    const w = spawnCli(["write", "--force", "--framing", "raw", ...long, f]);
    assert.ok(await appears(`${d.path}/.t.raw.sciobench-tmp-${w.pid}`));
    w.kill(signal);
    await asBeforeOrComplete(w, f, before);
    // --append: interrupted once its journal exists.
    Deno.writeFileSync(f, before);
    const a = spawnCli(["write", "--append", ...long, f]);
    assert.ok(await appears(journalPath(f)));
    a.kill(signal);
    await asBeforeOrComplete(a, f, before);
    // A new file: nothing is left unless it was complete.
    const n = spawnCli(["write", "--framing", "raw", ...long, `${d.path}/new.raw`]);
    assert.ok(await appears(`${d.path}/.new.raw.sciobench-tmp-${n.pid}`));
    n.kill(signal);
    await asBeforeOrComplete(n, `${d.path}/new.raw`);
    assert.deepEqual(names(d.path).filter((x) => x.includes("sciobench")), []);
  });
}

Deno.test("after SIGKILL during an append, the next command rolls the file back and says so", async () => {
  using d = tempDir();
  for (const framing of ["raw", "gsd", "f77", "ieeeio", "netcdf"]) {
    const f = `${d.path}/k.${framing}`;
    const before = await writeFile(f, framing, 3, 256);
    const a = spawnCli(["write", "--append", "--n", "256", "--frames", "20000", f]);
    assert.ok(await appears(journalPath(f)));
    // Killed once the append has changed the file (it grew), however loaded the machine is: a
    // kill before that is the other case ("interrupted before it changed the file").
    const end = Date.now() + 60_000;
    while (Deno.statSync(f).size === before.length && Date.now() < end) {
      await new Promise((r) => setTimeout(r, 2));
    }
    a.kill("SIGKILL");
    await collect(a);
    assert.ok(Deno.statSync(journalPath(f)).isFile, `${framing}: the kill left no journal`);
    const info = await runCli(["info", f]);
    assert.equal(info.code, 0, info.stderr);
    assert.match(info.stderr, /an interrupted append was rolled back/);
    assert.equal(info.stderr.trimEnd().split("\n").length, 1, info.stderr);
    assert.deepEqual(Deno.readFileSync(f), before, framing);
    assert.throws(() => Deno.statSync(journalPath(f)), Deno.errors.NotFound);
    const v = await runCli(["read", "--verify", f]);
    assert.equal(v.code, 0, v.stderr);
  }
});

Deno.test("a second writer of a locked file gets one line and exit 1; --wait waits", async () => {
  using d = tempDir();
  const f = `${d.path}/l.raw`;
  await writeFile(f, "raw");
  const fd = libc.open(f, libc.O.RDONLY);
  try {
    assert.ok(libc.flock(fd, libc.LOCK.EX | libc.LOCK.NB));
    for (const mode of [["--append"], ["--force", "--framing", "raw"]]) {
      const r = await runCli(["write", ...mode, "--n", "4", "--frames", "2", f]);
      assert.equal(r.code, 1, r.stderr);
      oneLine(r.stderr);
      assert.match(r.stderr, /is being written by another process .*pass --wait/);
    }
    const waiting = spawnCli(["write", "--append", "--wait", "--n", "4", "--frames", "2", f]);
    await new Promise((r) => setTimeout(r, 1500));
    libc.flock(fd, libc.LOCK.UN);
    const w = await collect(waiting);
    assert.equal(w.code, 0, w.stderr);
  } finally {
    libc.close(fd);
  }
  const v = await runCli(["read", "--verify", "--format", "json", f]);
  assert.equal(JSON.parse(v.stdout).rows[0].frames, 5);
});

Deno.test("two concurrent appends to one file never both succeed with one append lost", async () => {
  using d = tempDir();
  for (const wait of [false, true]) {
    const f = `${d.path}/c${wait}.gsd`;
    await writeFile(f, "gsd", 3, 64);
    const args = [
      "write",
      "--append",
      ...(wait ? ["--wait"] : []),
      "--n",
      "64",
      "--frames",
      "300",
      f,
    ];
    const results = await Promise.all([collect(spawnCli(args)), collect(spawnCli(args))]);
    const ok = results.filter((r) => r.code === 0).length;
    if (wait) assert.equal(ok, 2, results.map((r) => r.stderr).join(""));
    for (const r of results) if (r.code !== 0) assert.match(r.stderr, /being written by another/);
    const v = await runCli(["read", "--verify", "--format", "json", f]);
    assert.equal(v.code, 0, v.stderr);
    assert.equal(JSON.parse(v.stdout).rows[0].frames, 3 + 300 * ok);
  }
});

peerTest(
  "two write --framing hdf4 to one new path do not both succeed",
  () => hdf4.unavailable(),
  async () => {
    using d = tempDir();
    const f = `${d.path}/one.hdf`;
    const args = ["write", "--framing", "hdf4", "--n", "1024", "--frames", "50", f];
    const results = await Promise.all([collect(spawnCli(args)), collect(spawnCli(args))]);
    const ok = results.filter((r) => r.code === 0).length;
    assert.equal(ok, 1, results.map((r) => r.stderr).join(""));
    const refused = results.find((r) => r.code !== 0)!;
    assert.equal(refused.code, 1);
    assert.match(refused.stderr, /refusing to overwrite/);
    assert.deepEqual(names(d.path), ["one.hdf"]);
  },
);

Deno.test("stale scratch directories and temporary files of dead runs are removed, live ones kept", async () => {
  using d = tempDir();
  const dead = await new Deno.Command("true").spawn();
  await dead.status;
  const owner = (pid: number, start: number) =>
    JSON.stringify({ pid, host: Deno.hostname(), start });
  Deno.mkdirSync(`${d.path}/.sciobench-dead`);
  Deno.writeTextFileSync(`${d.path}/.sciobench-dead/owner`, owner(dead.pid, 1));
  Deno.writeTextFileSync(`${d.path}/.sciobench-dead/data.raw`, "x");
  Deno.mkdirSync(`${d.path}/.sciobench-live`);
  Deno.writeTextFileSync(`${d.path}/.sciobench-live/owner`, owner(Deno.pid, -1));
  Deno.mkdirSync(`${d.path}/.sciobench-other`);
  Deno.writeTextFileSync(
    `${d.path}/.sciobench-other/owner`,
    JSON.stringify({ pid: dead.pid, host: "another-host", start: 1 }),
  );
  const r = await runCli([
    "table",
    "--framing",
    "raw",
    "--size",
    "1MiB",
    "--n",
    "1024",
    "--dir",
    d.path,
  ]);
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stderr, /removed stale scratch directory .*\.sciobench-dead left by process \d+/);
  assert.deepEqual(names(d.path), [".sciobench-live", ".sciobench-other"]);
  // A temporary file of a killed write is removed by the next write to the same FILE.
  Deno.writeTextFileSync(`${d.path}/.t.raw.sciobench-tmp-${dead.pid}`, "partial");
  const w = await runCli([
    "write",
    "--framing",
    "raw",
    "--n",
    "4",
    "--frames",
    "1",
    `${d.path}/t.raw`,
  ]);
  assert.equal(w.code, 0, w.stderr);
  assert.match(w.stderr, /removed .*\.t\.raw\.sciobench-tmp-\d+, left by an interrupted write/);
  assert.deepEqual(names(d.path), [".sciobench-live", ".sciobench-other", "t.raw"]);
});

Deno.test("SIGKILL and SIGINT/SIGTERM at random moments of appends: every file as it was or complete", async () => {
  // A small sample per framing; `deno task crash` runs hundreds of trials.
  using d = tempDir();
  for (const framing of NATIVE_FRAMINGS) {
    for (const signals of [["SIGKILL"], ["SIGINT", "SIGTERM"]] as Deno.Signal[][]) {
      const c = await crashTrials(framing, {
        dir: d.path,
        trials: 2,
        seed: 3,
        signals,
        frames: 100,
      });
      assert.equal(c.neither + c.unverified + c.badExits, 0, `${framing}: ${c.notes.join("; ")}`);
      assert.equal(c.original + c.complete, 2);
    }
  }
});
