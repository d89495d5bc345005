/**
 * The reaper of an MPI rank's scratch directory (lib/io/reaper.ts): a rank SIGKILLed at any
 * moment of its scratch directory's life leaves no directory behind, a rank that never makes the
 * directory never makes it after a reaper removed it, and a reaper never removes a directory
 * that is not its rank's.
 * @module
 */
import assert from "node:assert/strict";
import { PERMISSIONS, tempDir } from "./_helpers.ts";
import { leftovers } from "./_mpi.ts";

const DRIVER = new URL("./_scratch_kill_driver.ts", import.meta.url).pathname;

/**
 * Runs the driver in `parent` as `rank` dying at `at`; returns its exit signal and its stderr,
 * read to its end (the reaper shares the stream, so its end means the reaper is done too).
 */
async function killedRank(
  parent: string,
  o: {
    rank: number;
    firstOnHost: boolean;
    path?: string;
    at: string;
    reaper?: { dir: string; temp: string; owner: string };
    claim?: boolean;
  },
): Promise<{ signal: string | null; stderr: string }> {
  const r = await new Deno.Command(Deno.execPath(), {
    args: ["run", "--quiet", ...PERMISSIONS, DRIVER, parent, JSON.stringify({ path: "", ...o })],
    stdout: "null",
    stderr: "piped",
  }).output();
  return { signal: r.signal, stderr: new TextDecoder().decode(r.stderr) };
}

const REAPER_LINE = /^sciobench: removing scratch directory \S+: its run ended/m;

/** Waits up to five seconds for `dir` to be empty; returns what is left. */
async function settled(dir: string): Promise<string[]> {
  for (let i = 0; i < 100 && leftovers(dir).length > 0; i++) {
    await new Promise((r) => setTimeout(r, 50));
  }
  return leftovers(dir);
}

for (const at of ["agree", "check", "work"]) {
  Deno.test(`scratch: rank 0 SIGKILLed in ${at} leaves no directory; its reaper says so`, async () => {
    using tmp = tempDir();
    const r = await killedRank(tmp.path, { rank: 0, firstOnHost: true, at });
    assert.equal(r.signal, "SIGKILL", r.stderr);
    assert.deepEqual(leftovers(tmp.path), []);
    assert.match(r.stderr, REAPER_LINE);
  });
}

Deno.test("scratch: the first rank of another host SIGKILLed after making the directory leaves none", async () => {
  using tmp = tempDir();
  const path = `${tmp.path}/.sciobench-0123456789ab`;
  for (const at of ["check", "work"]) {
    const r = await killedRank(tmp.path, { rank: 1, firstOnHost: true, path, at });
    assert.equal(r.signal, "SIGKILL", r.stderr);
    assert.deepEqual(leftovers(tmp.path), [], `killed in ${at}`);
  }
});

Deno.test("scratch: a rank that is not first on its host never makes the directory", async () => {
  using tmp = tempDir();
  const path = `${tmp.path}/.sciobench-0123456789ab`;
  // the first rank of the host was killed and its reaper removed the directory: a late rank must
  // not make it again, where nothing would remove it
  const r = await killedRank(tmp.path, { rank: 1, firstOnHost: false, path, at: "check" });
  assert.equal(r.signal, "SIGKILL", r.stderr);
  assert.deepEqual(leftovers(tmp.path), []);
});

Deno.test("scratch: a reaper removes its rank's directories and never another's", async () => {
  using tmp = tempDir();
  const ours = JSON.stringify({ pid: 1, host: "h", start: 2 });
  const theirs = JSON.stringify({ pid: 3, host: "h", start: 4 });
  const make = (name: string, files: Record<string, string>) => {
    Deno.mkdirSync(`${tmp.path}/${name}`);
    for (const [f, text] of Object.entries(files)) {
      Deno.writeTextFileSync(`${tmp.path}/${name}/${f}`, text);
    }
    return `${tmp.path}/${name}`;
  };
  const reap = (dir: string, temp: string, owner: string, claim = false) =>
    killedRank(tmp.path, {
      rank: 0,
      firstOnHost: true,
      at: "",
      reaper: { dir, temp, owner },
      claim,
    });

  // names taken by another run: its directory and its temporary ones stay
  const taken = make(".sciobench-taken", { owner: theirs, data: "x" });
  const busy = make(".sciobench-new-1-busy", { data: "x" });
  let r = await reap(taken, busy, ours);
  assert.equal(r.signal, "SIGKILL", r.stderr);
  assert.doesNotMatch(r.stderr, REAPER_LINE);
  assert.deepEqual(leftovers(taken).sort(), ["data", "owner"]);
  assert.deepEqual(leftovers(busy), ["data"]);
  const owned = make(".sciobench-new-1-owned", { owner: theirs });
  await reap(`${tmp.path}/.sciobench-none`, owned, ours);
  assert.deepEqual(leftovers(owned), ["owner"]);

  // the rank's own: its temporary name (empty, or holding only its owner record, whole or torn
  // by a kill while it was written) and its directory, by the owner record or claimed without
  // one (partly removed by the rank)
  const mine = make(".sciobench-mine", { owner: ours, data: "x" });
  r = await reap(mine, make(".sciobench-new-1-a", { owner: ours }), ours);
  assert.match(r.stderr, REAPER_LINE);
  const claimed = make(".sciobench-claimed", { data: "x" });
  r = await reap(claimed, make(".sciobench-new-1-b", {}), ours, true);
  assert.match(r.stderr, REAPER_LINE);
  await reap(`${tmp.path}/.sciobench-none`, make(".sciobench-new-1-c", { owner: "" }), ours);
  const torn = ours.slice(0, 10);
  await reap(`${tmp.path}/.sciobench-none`, make(".sciobench-new-1-d", { owner: torn }), ours);
  assert.deepEqual(leftovers(tmp.path).sort(), [
    ".sciobench-new-1-busy",
    ".sciobench-new-1-owned",
    ".sciobench-taken",
  ]);
});

Deno.test("scratch: a reaper whose stderr has no reader left still removes the directory", async () => {
  // a launcher that is gone (Open MPI's mpirun) leaves the rank's stderr without a reader: the
  // reaper's line meets a broken pipe, and the removal must still follow
  using tmp = tempDir();
  const child = new Deno.Command(Deno.execPath(), {
    args: [
      ...["run", "--quiet", ...PERMISSIONS, DRIVER, tmp.path],
      JSON.stringify({ rank: 0, firstOnHost: true, path: "", at: "work" }),
    ],
    stdout: "null",
    stderr: "piped",
  }).spawn();
  await child.stderr.cancel();
  assert.equal((await child.status).signal, "SIGKILL");
  assert.deepEqual(await settled(tmp.path), []);
});
