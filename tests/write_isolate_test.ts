/**
 * `write` with a library framing (hdf5, netcdf4, netcdf-lib, hdf4) runs the library in a child
 * process while this process owns the temporary file: a crash of the library mid-write (injected
 * with SCIOBENCH_CHILD_FAULT) and a disk that fills up during the write (a small tmpfs mounted
 * here) are one line, the temporary file is removed and the old file is left as it was.
 */
import assert from "node:assert/strict";
import { backendByName } from "../lib/backends/registry.ts";
import { readProc } from "../lib/sys/libc.ts";
import { peerTest, runCli, spawnCli, tempDir } from "./_helpers.ts";

const LIBRARY_FRAMINGS = ["hdf5", "netcdf4", "netcdf-lib", "hdf4"];

function missing(framing: string): () => string | null {
  return () => backendByName(framing).unavailable();
}

/** Names in `dir`, sorted. */
function names(dir: string): string[] {
  return [...Deno.readDirSync(dir)].map((e) => e.name).sort();
}

function oneErrorLine(stderr: string): string {
  const lines = stderr.trimEnd().split("\n");
  assert.equal(lines.length, 1, `expected one line on stderr, got:\n${stderr}`);
  assert.match(lines[0]!, /^sciobench: error: /);
  return lines[0]!;
}

for (const framing of LIBRARY_FRAMINGS) {
  peerTest(
    `write --framing ${framing}: a library crash mid-write is one line; no temporary file, the old file intact`,
    missing(framing),
    async () => {
      using d = tempDir();
      const f = `${d.path}/out.${framing}`;
      Deno.writeTextFileSync(f, "the old file");
      const args = ["write", "--force", "--framing", framing, "--n", "64", "--frames", "6", f];
      for (const [fault, sig] of [["segv", "SIGSEGV"], ["abort", "SIGABRT"]] as const) {
        const r = await runCli(args, { env: { SCIOBENCH_CHILD_FAULT: fault } });
        assert.equal(r.code, 1, r.stderr);
        const line = oneErrorLine(r.stderr);
        assert.match(line, new RegExp(`library crashed \\(${sig}\\) writing '.*out\\.${framing}'`));
        assert.match(line, /out\.\S+ was left as it was$/);
        assert.equal(r.stdout, "");
        assert.deepEqual(names(d.path), [`out.${framing}`], "no temporary file left");
        assert.equal(Deno.readTextFileSync(f), "the old file");
      }
      // A new file: not written, nothing left.
      const g = `${d.path}/new.${framing}`;
      const r = await runCli(["write", "--framing", framing, "--n", "64", "--frames", "6", g], {
        env: { SCIOBENCH_CHILD_FAULT: "segv" },
      });
      assert.equal(r.code, 1, r.stderr);
      assert.match(oneErrorLine(r.stderr), /new\.\S+ was not written$/);
      assert.deepEqual(names(d.path), [`out.${framing}`]);
      // And without a fault the child's write is the file and the row.
      const ok = await runCli([...args, "--format", "csv"]);
      assert.equal(ok.code, 0, ok.stderr);
      assert.match(ok.stdout, new RegExp(`\\n${framing},.*out\\.${framing},64,6,`));
      const back = await runCli(["read", "--verify", "--format", "csv", f]);
      assert.equal(back.code, 0, back.stderr);
    },
  );
}

/** Mounts a tmpfs of `mib` MiB on `dir`; false (with a message) where mounting is not permitted. */
async function mountTmpfs(dir: string, mib: number): Promise<boolean> {
  let out: Deno.CommandOutput;
  try {
    out = await new Deno.Command("mount", {
      args: ["-t", "tmpfs", "-o", `size=${mib}m`, "tmpfs", dir],
      stdout: "null",
      stderr: "piped",
    }).output();
  } catch (e) {
    console.log(`skipped: cannot run mount (${e instanceof Error ? e.message : e})`);
    return false;
  }
  if (!out.success) {
    const why = new TextDecoder().decode(out.stderr).trim().split("\n")[0];
    console.log(`skipped: mounting a tmpfs is not permitted here (${why})`);
    return false;
  }
  return true;
}

/** Unmounts `dir` (lazily when a straggler still holds it: it goes when that one ends). */
async function unmount(dir: string): Promise<void> {
  for (let i = 0; i < 50; i++) {
    const out = await new Deno.Command("umount", { args: [dir], stderr: "null" }).output();
    if (out.success) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  const out = await new Deno.Command("umount", { args: ["-l", dir], stderr: "piped" }).output();
  assert.ok(out.success, `umount -l ${dir}: ${new TextDecoder().decode(out.stderr)}`);
}

/** Processes that `pid` started from its main thread (Deno spawns there), from /proc. */
function childrenOf(pid: number): number[] {
  // Through libc: Deno guards /proc behind --allow-all.
  return readProc(`/proc/${pid}/task/${pid}/children`).trim().split(/\s+/).filter((w) => w !== "")
    .map(Number);
}

/** Fills the file system of `dir` with `dir/filler` until ENOSPC. */
function fill(dir: string): void {
  const f = Deno.openSync(`${dir}/filler`, { write: true, create: true });
  const block = new Uint8Array(1 << 20);
  try {
    for (;;) f.writeSync(block);
  } catch (e) {
    assert.match(String(e), /No space left|os error 28/);
  } finally {
    f.close();
  }
}

for (const framing of ["hdf5", "netcdf4"]) {
  peerTest(
    `write --framing ${framing}: a disk that fills up during the write is one line saying so; no temporary file, the old file intact`,
    missing(framing),
    async () => {
      const mnt = Deno.makeTempDirSync({ prefix: "sciobench-full-" });
      // Room for the up-front check (64 MiB of margin) and no more.
      if (!(await mountTmpfs(mnt, 72))) {
        Deno.removeSync(mnt);
        return;
      }
      let write: Deno.ChildProcess | undefined;
      let stopped: number[] = [];
      try {
        const f = `${mnt}/out.${framing}`;
        Deno.writeTextFileSync(f, "the old file");
        // Many small frames: the write lasts long enough to be caught in the middle.
        write = spawnCli([
          "write",
          "--force",
          "--framing",
          framing,
          "--n",
          "1",
          "--frames",
          "40000",
          "--format",
          "csv",
          f,
        ]);
        // Once the temporary file is there, stop the library, fill the disk, let it go on.
        const end = Date.now() + 60_000;
        while (Date.now() < end) {
          if (names(mnt).some((n) => n.includes(".sciobench-tmp-"))) {
            // the library child, else (a library in-process) the writer itself
            stopped = childrenOf(write.pid);
            if (stopped.length === 0) stopped = [write.pid];
            for (const pid of stopped) Deno.kill(pid, "SIGSTOP");
            break;
          }
          await new Promise((r) => setTimeout(r, 2));
        }
        fill(mnt);
        for (const pid of stopped) Deno.kill(pid, "SIGCONT");
        stopped = [];
        const out = await write.output();
        const stderr = new TextDecoder().decode(out.stderr);
        assert.equal(out.code, 1, stderr);
        const line = oneErrorLine(stderr);
        assert.match(
          line,
          new RegExp(
            `out\\.${framing}: no space left on the device \\(\\d+ KiB free on .*sciobench-full-\\w+\\).*was left as it was$`,
          ),
        );
        assert.ok(line.length < 300, line);
        assert.deepEqual(names(mnt), ["filler", `out.${framing}`], "no temporary file left");
        assert.equal(Deno.readTextFileSync(f), "the old file");
      } finally {
        for (const pid of stopped) { // still stopped: a failure above
          try {
            Deno.kill(pid, "SIGKILL");
          } catch {
            // ended
          }
        }
        if (write !== undefined) {
          try {
            write.kill("SIGKILL");
          } catch {
            // ended
          }
          await write.status;
        }
        await unmount(mnt);
        Deno.removeSync(mnt, { recursive: true });
      }
    },
  );
}

peerTest(
  "write --framing hdf5: SIGTERM mid-write stops the library child; no temporary file, the old file intact",
  missing("hdf5"),
  async () => {
    using d = tempDir();
    const f = `${d.path}/out.h5`;
    Deno.writeTextFileSync(f, "the old file");
    const write = spawnCli([
      ...["write", "--force", "--framing", "hdf5", "--n", "1", "--frames", "200000", f],
    ]);
    let child: number[] = [];
    const end = Date.now() + 60_000;
    while (Date.now() < end && child.length === 0) {
      if (names(d.path).some((n) => n.includes(".sciobench-tmp-"))) child = childrenOf(write.pid);
      await new Promise((r) => setTimeout(r, 2));
    }
    assert.equal(child.length, 1, "one library child writes");
    write.kill("SIGTERM");
    const out = await write.output();
    const stderr = new TextDecoder().decode(out.stderr);
    assert.equal(out.code, 143, stderr);
    assert.match(
      stderr,
      /^sciobench: interrupted by SIGTERM; [^\n]*out\.h5 was left as it was\n$/,
    );
    // the child is gone (its /proc entry, read through libc, is empty), and so is its file
    for (let i = 0; i < 100 && readProc(`/proc/${child[0]}/stat`) !== ""; i++) {
      await new Promise((r) => setTimeout(r, 20));
    }
    assert.equal(readProc(`/proc/${child[0]}/stat`), "", "the library child was stopped");
    assert.deepEqual(names(d.path), ["out.h5"]);
    assert.equal(Deno.readTextFileSync(f), "the old file");
  },
);
