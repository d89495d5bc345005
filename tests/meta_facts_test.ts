/**
 * The run's facts that explain a number: the load average at the start and at the end, the
 * run's duration, the absolute --dir, the mount options, and the device under --dir (name,
 * model, I/O scheduler, read_ahead_kb); each fact absent (tmpfs, no block device) is null and
 * never a failure.
 * @module
 */
import assert from "node:assert/strict";
import { parseResults } from "../lib/report/plot.ts";
import { deviceMeta, fileSystemMeta, loadAverage, mountOf } from "../lib/cli/meta.ts";
import * as libc from "../lib/sys/libc.ts";
import { runCli, tempDir } from "./_helpers.ts";

const TABLE = ["table", "--framing", "raw", "--size", "64KiB", "--n", "64", "--no-warmup"];

function isLoad(v: unknown): boolean {
  return Array.isArray(v) && v.length === 3 && v.every((x) => typeof x === "number" && x >= 0);
}

Deno.test("meta: load at start and end, duration, absolute --dir given relative, the disk's device", async () => {
  using d = tempDir("sciobench-meta-");
  if (libc.statfs(d.path).inMemory) throw new Error(`${d.path} is in memory: set TMPDIR to a disk`);
  Deno.mkdirSync(`${d.path}/scratch`);
  const t0 = performance.now();
  // a relative --dir, as users give it
  const r = await runCli([...TABLE, "--dir", "scratch", "--format", "json"], { cwd: d.path });
  const wallS = (performance.now() - t0) / 1000;
  assert.equal(r.code, 0, r.stderr);
  const { meta } = JSON.parse(r.stdout);
  assert.ok(isLoad(meta.load_average_start), JSON.stringify(meta.load_average_start));
  assert.ok(isLoad(meta.load_average_end), JSON.stringify(meta.load_average_end));
  assert.ok(meta.duration_s > 0 && meta.duration_s < wallS, `${meta.duration_s} of ${wallS} s`);
  const fs = meta.file_system;
  assert.equal(fs.dir, "scratch");
  assert.equal(fs.absolute_dir, Deno.realPathSync(`${d.path}/scratch`));
  assert.match(fs.mount_options, /(^|,)r[wo](,|$)/);
  // the facts of the disk this test runs on, read here the same way
  const device = mountOf(d.path).device;
  const ra = Deno.readTextFileSync(`/sys/class/bdi/${device}/read_ahead_kb`).trim();
  assert.equal(fs.read_ahead_kb, Number(ra));
  assert.ok(fs.device_name === null || typeof fs.device_name === "string");
  assert.ok(fs.io_scheduler === null || /^[\w-]+$/.test(fs.io_scheduler), fs.io_scheduler);
  assert.ok(fs.device_model === null || typeof fs.device_model === "string");
  // JSON lines write the facts first: what is known only at the end is null there
  const l = await runCli([...TABLE, "--dir", d.path, "--format", "jsonl"]);
  assert.equal(l.code, 0, l.stderr);
  const head = JSON.parse(l.stdout.split("\n")[0]!).meta;
  assert.ok(isLoad(head.load_average_start));
  assert.equal(head.load_average_end, null);
  assert.equal(head.duration_s, null);
  // ... and come in the last line, which a reader merges into the meta
  const last = JSON.parse(l.stdout.trimEnd().split("\n").at(-1)!);
  assert.deepEqual(Object.keys(last.end), ["load_average_end", "duration_s", "libraries"]);
  const read = parseResults(l.stdout, "run.jsonl").meta;
  assert.ok(isLoad(read.load_average_end), JSON.stringify(read.load_average_end));
  assert.ok((read.duration_s as number) > 0);
  assert.deepEqual(read.load_average_start, head.load_average_start);
});

Deno.test("meta: on tmpfs the device facts are null and the run succeeds", async () => {
  const r = await runCli([...TABLE, "--dir", "/dev/shm", "--format", "json"]);
  assert.equal(r.code, 0, r.stderr);
  const fs = JSON.parse(r.stdout).meta.file_system;
  assert.equal(fs.absolute_dir, "/dev/shm");
  assert.equal(fs.type, "tmpfs");
  assert.match(fs.mount_options, /\brw\b/);
  for (const k of ["device_name", "device_model", "io_scheduler", "read_ahead_kb"]) {
    assert.equal(fs[k], null, k);
  }
});

Deno.test("meta: facts that cannot be found are null, never an error", () => {
  assert.deepEqual(deviceMeta(""), {
    device_name: null,
    device_model: null,
    io_scheduler: null,
    read_ahead_kb: null,
  });
  assert.deepEqual(deviceMeta("4095:1048575"), deviceMeta(""));
  const gone = fileSystemMeta("/nonexistent/sciobench");
  assert.deepEqual(gone, { dir: "/nonexistent/sciobench", absolute_dir: null });
  const load = loadAverage();
  assert.ok(load === null || isLoad(load));
});
