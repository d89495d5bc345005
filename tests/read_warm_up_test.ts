/**
 * `read` warms its read path before it opens the user's file: a tiny file of the same framing in
 * a scratch directory of TMPDIR, written and read back (the same transfer, engine and depth) for
 * WARM_UP_ROUNDS rounds, all before the user's file is dropped and opened, and nothing of it left
 * behind (strace).
 * @module
 */
import assert from "node:assert/strict";
import { WARM_UP_FRAMES, WARM_UP_ROUNDS } from "../lib/workloads/table/warm_up.ts";
import { runCli, tempDir } from "./_helpers.ts";
import { isRead, parseStrace, straceMissing, straceSciobench } from "./_syscalls.ts";

const NO_STRACE = straceMissing();

Deno.test({
  name: "read: its read path warmed on a scratch file of TMPDIR before the file is opened",
  ignore: NO_STRACE !== null,
  async fn() {
    using d = tempDir("sciobench-warm-");
    using trace = tempDir("sciobench-strace-");
    const data = `${d.path}/data`, scratch = `${d.path}/tmp`;
    Deno.mkdirSync(data);
    Deno.mkdirSync(scratch);
    const path = `${data}/t.raw`;
    const w = await runCli(["write", "--framing", "raw", "--n", "64", "--size", "1M", path]);
    assert.equal(w.code, 0, w.stderr);
    for (const args of [[], ["--iodepth", "4", "--engine", "psync"]]) {
      const [out] = await straceSciobench(
        [["read", "--verify", "--format", "csv", ...args, path]],
        trace.path,
        { TMPDIR: scratch },
      );
      assert.equal(out!.code, 0, out!.stderr);
      const calls = parseStrace(trace.path, d.path);
      // the cache drop before the timed open (the format's detection reads the file before)
      const first = calls.findIndex((c) => c.path === path && c.call === "fadvise64");
      assert.ok(first > 0, `no cache drop of ${path}`);
      const warm = calls.filter((c) => c.path.startsWith(`${scratch}/`));
      // every frame read in order and at random each round (a frame is one read or more)
      const reads = warm.filter(isRead).length;
      assert.ok(reads >= 2 * WARM_UP_FRAMES * WARM_UP_ROUNDS, `${args}: ${reads} warm-up reads`);
      assert.ok(warm.some((c) => c.call === "pwrite64"), `${args}: the warm-up file not written`);
      const last = calls.findLastIndex((c) => c.path.startsWith(`${scratch}/`));
      assert.ok(last < first, `${args}: a warm-up call after the file's drop`);
      assert.deepEqual([...Deno.readDirSync(scratch)], [], `${args}: left in TMPDIR`);
      for (const e of Deno.readDirSync(trace.path)) Deno.removeSync(`${trace.path}/${e.name}`);
    }
  },
});
