/**
 * `read` says what is there: a file without frames is one line and exit 2 (no row of zeros), and
 * `--verify` of data sciobench did not write (hoomd files of python3-gsd) is refused in one line,
 * never reported as corruption.
 */
import assert from "node:assert/strict";
import { pythonGsdUnavailable } from "../lib/peers/python_gsd/mod.ts";
import { flipByte, peerTest, runCli, tempDir } from "./_helpers.ts";

/** Writes hoomd files with python3-gsd: `frames` frames of N = 16 random particles each. */
function hoomdFile(path: string, frames: number): void {
  const script = `
import sys, numpy, gsd.hoomd
Frame = getattr(gsd.hoomd, "Frame", None) or gsd.hoomd.Snapshot
rng = numpy.random.default_rng(7)
with gsd.hoomd.open(sys.argv[1], "wb") as f:
    for i in range(int(sys.argv[2])):
        s = Frame()
        s.configuration.step = i
        s.particles.N = 16
        s.particles.position = rng.random((16, 3), dtype=numpy.float32)
        s.particles.orientation = rng.random((16, 4), dtype=numpy.float32)
        f.append(s)
`;
  const out = new Deno.Command("/usr/bin/python3", {
    args: ["-c", script, path, String(frames)],
  }).outputSync();
  assert.equal(out.code, 0, new TextDecoder().decode(out.stderr));
}

peerTest(
  "read: a gsd file of 0 frames is one line and exit 2, not a row of zeros",
  () => pythonGsdUnavailable(),
  async () => {
    using dir = tempDir();
    const path = `${dir.path}/empty.gsd`;
    hoomdFile(path, 0);
    for (const extra of [[], ["--verify"]]) {
      const r = await runCli(["read", ...extra, "--format", "csv", path]);
      assert.equal(r.code, 2, r.stderr);
      assert.equal(r.stdout, "");
      assert.equal(
        r.stderr,
        `sciobench: error: gsd: ${path}: the file holds no frames (and no datasets): there is ` +
          "nothing to read or time\n",
      );
    }
  },
);

peerTest(
  "read --verify: hoomd frames sciobench never wrote are refused in one line (exit 2), its own still checked",
  () => pythonGsdUnavailable(),
  async () => {
    using dir = tempDir();
    const foreign = `${dir.path}/hoomd.gsd`;
    hoomdFile(foreign, 3);
    const r = await runCli(["read", "--verify", "--format", "csv", foreign]);
    assert.equal(r.code, 2, r.stderr);
    assert.equal(r.stdout, "");
    assert.doesNotMatch(r.stderr, /differs/);
    assert.match(
      r.stderr,
      /^sciobench: error: --verify: .*hoomd\.gsd was not written by sciobench with seed 1 \(frame 0 matches 0% of that data\); .*read it without --verify/,
    );
    assert.equal(r.stderr.split("\n").length, 2, r.stderr);
    // without --verify it is read (the format's checks run)
    assert.equal((await runCli(["read", "--format", "csv", foreign])).code, 0);
    // sciobench's own file: verified with its seed, refused with another, a flipped byte caught
    const own = `${dir.path}/own.gsd`;
    const w = await runCli(["write", "--framing", "gsd", "--n", "16", "--frames", "4", own]);
    assert.equal(w.code, 0, w.stderr);
    assert.equal((await runCli(["read", "--verify", "--format", "csv", own])).code, 0);
    const seed = await runCli(["read", "--verify", "--seed", "2", "--format", "csv", own]);
    assert.equal(seed.code, 2, seed.stderr);
    assert.match(seed.stderr, /give the --seed it was written with/);
    flipByte(own, Deno.statSync(own).size - 600);
    const flipped = await runCli(["read", "--verify", "--format", "csv", own]);
    assert.equal(flipped.code, 1, flipped.stderr);
    assert.match(flipped.stderr, /differs/);
  },
);
