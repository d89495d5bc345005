import assert from "node:assert/strict";
import { SysError } from "../lib/core/errors.ts";
import * as libc from "../lib/sys/libc.ts";
import { tempDir } from "./_helpers.ts";

function sysError(fn: () => unknown, code: string, call: string): void {
  assert.throws(fn, (e: unknown) => {
    assert.ok(e instanceof SysError, `expected SysError, got ${e}`);
    assert.equal(e.code, code);
    assert.equal(e.call, call);
    assert.ok(e.errno > 0);
    assert.match(e.message, new RegExp(`${call}.*${code}`));
    return true;
  });
}

Deno.test("open, pwrite, pread, fileSize, ftruncate, fsync, fdatasync, close work on a real file", () => {
  using d = tempDir();
  const path = `${d.path}/f`;
  const fd = libc.open(path, libc.O.RDWR | libc.O.CREAT | libc.O.EXCL);
  const data = new Uint8Array([1, 2, 3, 4, 5, 6, 7, 8]);
  assert.equal(libc.pwrite(fd, data, 100, path), 8);
  assert.equal(libc.fileSize(fd, path), 108);
  const back = new Uint8Array(8);
  assert.equal(libc.pread(fd, back, 100, path), 8);
  assert.deepEqual(back, data);
  assert.equal(libc.pread(fd, back, 108, path), 0, "pread at end of file returns 0");
  libc.fsync(fd, path);
  libc.fdatasync(fd, path);
  libc.ftruncate(fd, 50, path);
  assert.equal(libc.fileSize(fd, path), 50);
  libc.close(fd, path);
});

Deno.test("libc wrappers throw SysError with errno, its name and the path", () => {
  using d = tempDir();
  const missing = `${d.path}/missing`;
  sysError(() => libc.open(missing, libc.O.RDONLY), "ENOENT", "open");
  assert.throws(() => libc.open(missing, libc.O.RDONLY), new RegExp(missing));
  const path = `${d.path}/f`;
  Deno.writeFileSync(path, new Uint8Array(10));
  sysError(() => libc.open(path, libc.O.RDWR | libc.O.CREAT | libc.O.EXCL), "EEXIST", "open");
  const ro = libc.open(path, libc.O.RDONLY);
  sysError(() => libc.pwrite(ro, new Uint8Array(1), 0, path), "EBADF", "pwrite");
  sysError(() => libc.ftruncate(ro, 0, path), "EINVAL", "ftruncate");
  sysError(() => libc.posixFadvise(ro, 0, 0, 99, path), "EINVAL", "posix_fadvise");
  libc.close(ro, path);
  sysError(() => libc.close(ro, path), "EBADF", "close");
  sysError(() => libc.pread(ro, new Uint8Array(1), 0, path), "EBADF", "pread");
  sysError(() => libc.fsync(ro, path), "EBADF", "fsync");
  sysError(() => libc.fdatasync(ro, path), "EBADF", "fdatasync");
  sysError(() => libc.statfs(missing), "ENOENT", "statfs");
});

Deno.test("times, getrusage and the monotonic clock advance with CPU work", () => {
  const t0 = libc.times();
  const r0 = libc.getrusage();
  const c0 = libc.clockGettime();
  let x = 0;
  // Spin until this process has used 60 ms of CPU (not wall time: a loaded machine stretches it).
  const cpu0 = libc.clockGettime(libc.CLOCK.PROCESS_CPUTIME);
  while (libc.clockGettime(libc.CLOCK.PROCESS_CPUTIME) - cpu0 < 60e6) {
    for (let i = 0; i < 1000; i++) x += Math.sqrt(x + 1);
  }
  const t1 = libc.times();
  const r1 = libc.getrusage();
  const c1 = libc.clockGettime();
  assert.ok(x > 0);
  assert.ok(c1 - c0 >= 30e6, `monotonic clock advanced ${c1 - c0} ns`);
  assert.ok(
    r1.userUs + r1.sysUs - r0.userUs - r0.sysUs >= 30_000,
    "getrusage counted at least 30 ms of CPU",
  );
  assert.ok(t1.user + t1.sys >= t0.user + t0.sys);
  assert.ok(t1.elapsed >= t0.elapsed);
  // sysconf(_SC_CLK_TCK) as another program reads it (getconf), not a constant.
  const getconf = new Deno.Command("getconf", { args: ["CLK_TCK"], stdout: "piped" }).outputSync();
  assert.ok(getconf.success, "getconf CLK_TCK runs");
  const clkTck = Number(new TextDecoder().decode(getconf.stdout).trim());
  assert.ok(Number.isInteger(clkTck) && clkTck > 0, `getconf CLK_TCK printed ${clkTck}`);
  assert.equal(libc.clockTicksPerSecond(), clkTck);
  // The ticks agree with getrusage's seconds (times() and getrusage read the same counters).
  const tickS = (t1.user + t1.sys - t0.user - t0.sys) / clkTck;
  const rusageS = (r1.userUs + r1.sysUs - r0.userUs - r0.sysUs) / 1e6;
  assert.ok(
    Math.abs(tickS - rusageS) <= 0.05 + 0.2 * rusageS,
    `ticks ${tickS} s, rusage ${rusageS} s`,
  );
  assert.ok(libc.clockGettime(libc.CLOCK.PROCESS_CPUTIME) > 0);
});

Deno.test("statfs names the file system and its free space", () => {
  const s = libc.statfs(".");
  assert.ok(s.type > 0);
  assert.ok(s.typeName.length > 0);
  assert.ok(s.blockSize >= 512);
  assert.ok(s.availableBytes > 0);
  assert.equal(s.inMemory, s.typeName === "tmpfs" || s.typeName === "ramfs");
});

Deno.test("residentFraction sees a freshly read file in the cache", () => {
  using d = tempDir();
  const path = `${d.path}/f`;
  Deno.writeFileSync(path, new Uint8Array(1 << 20).fill(7));
  Deno.readFileSync(path);
  const fd = libc.open(path, libc.O.RDONLY);
  try {
    assert.equal(libc.residentFraction(fd, 1 << 20, path), 1);
    assert.equal(libc.residentFraction(fd, 0, path), 0);
  } finally {
    libc.close(fd, path);
  }
});

Deno.test("O_DIRECT opens on a disk file system and needs aligned buffers", () => {
  using d = tempDir();
  const path = `${d.path}/direct`;
  Deno.writeFileSync(path, new Uint8Array(8192).fill(3));
  if (libc.statfs(d.path).inMemory) {
    sysError(() => libc.open(path, libc.O.RDONLY | libc.O.DIRECT), "EINVAL", "open");
    return;
  }
  const fd = libc.open(path, libc.O.RDONLY | libc.O.DIRECT);
  try {
    const raw = new Uint8Array(8192 + 4096);
    const addr = Number(Deno.UnsafePointer.value(Deno.UnsafePointer.of(raw)));
    const aligned = raw.subarray((4096 - (addr % 4096)) % 4096).subarray(0, 4096);
    assert.equal(libc.pread(fd, aligned, 4096, path), 4096);
    assert.equal(aligned[0], 3);
    sysError(() => libc.pread(fd, aligned.subarray(1, 100), 1, path), "EINVAL", "pread");
  } finally {
    libc.close(fd, path);
  }
});

Deno.test("bytesEqual compares with memcmp", () => {
  const a = new Uint8Array(1 << 16).fill(9);
  const b = a.slice();
  assert.ok(libc.bytesEqual(a, b));
  b[40000] = 1;
  assert.ok(!libc.bytesEqual(a, b));
  assert.ok(libc.bytesEqual(a, b, 40000));
  assert.ok(!libc.bytesEqual(a.subarray(0, 3), b, 4));
  assert.ok(libc.bytesEqual(new Uint8Array(0), new Uint8Array(0)));
});
