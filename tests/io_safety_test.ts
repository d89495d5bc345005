/**
 * Data safety of lib/io and of --out: locks, journals and temporary files of the resolved file,
 * outputs that are inputs, scratch directories never without an owner, node-local tmpfs.
 * @module
 */
import assert from "node:assert/strict";
import * as libc from "../lib/sys/libc.ts";
import { tempDir } from "./_helpers.ts";

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
