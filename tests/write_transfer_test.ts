/**
 * `--direct`, `--bs` and `--fsync` on the `write` and `read` commands: the strace observer sees the file
 * written with O_DIRECT in aligned calls of at most `--bs` bytes (64 KiB ones among them) and
 * its padded tail cut with ftruncate; the audit trail counts the same calls; the file is byte
 * for byte the one written without them, written atomically (temporary name, then linked into
 * place). `--fsync each` fsyncs once per frame; `--fsync none` none inside the timing, but FILE
 * is still fsynced before it appears. Peers and `--append --direct` refuse in one line. `read
 * --direct --bs 64k` reads every frame (verified) through O_DIRECT preads of at most 64 KiB at
 * aligned offsets, with no cache drop; `read --bs 64k` reads in 64 KiB calls from a dropped cache.
 * @module
 */
import assert from "node:assert/strict";
import { FRAMINGS } from "../lib/backends/registry.ts";
import type { RowAudit } from "../lib/sys/audit.ts";
import { directAlignment } from "../lib/sys/libc.ts";
import {
  commandMissing,
  REQUIRE_PEERS,
  runCli,
  runCliLimited,
  spawnCli,
  tempDir,
} from "./_helpers.ts";
import { DIRECT_REFUSED, isRead, parseStrace, straceSciobench, type Traced } from "./_syscalls.ts";

// the framings whose system calls --bs and --direct shape (a store's members are written whole)
const NAMES = FRAMINGS.filter((f) => f.store === undefined).map((f) => f.name);
const STRACE = commandMissing("strace") === null || REQUIRE_PEERS;
const WRITE = ["write", "--n", "1000", "--frames", "10"];

type AuditedRow = Record<string, unknown> & { audit: RowAudit };

/** The calls on the temporary file `write` wrote `file` under (`.NAME.sciobench-tmp-PID`). */
function tempCalls(calls: readonly Traced[], dir: string, name: string): Traced[] {
  const prefix = `${dir}/.${name}.sciobench-tmp-`;
  return calls.filter((c) => c.path.startsWith(prefix));
}

Deno.test({
  name:
    "write --direct --bs 64k: O_DIRECT, aligned 64 KiB calls, tail cut, same bytes, audit agrees",
  ignore: DIRECT_REFUSED !== null || !STRACE,
  async fn() {
    using scratch = tempDir("sciobench-direct-");
    using trace = tempDir("sciobench-strace-");
    using rows = tempDir("sciobench-rows-");
    for (const name of NAMES) {
      const r = await runCli([...WRITE, "--framing", name, `${scratch.path}/plain.${name}`]);
      assert.equal(r.code, 0, r.stderr);
    }
    const outs = await straceSciobench(
      NAMES.map((name) => [
        ...[...WRITE, "--framing", name, "--direct", "--bs", "64k", "--audit"],
        ...["--format", "json", "--out", `${rows.path}/${name}.json`],
        `${scratch.path}/direct.${name}`,
      ]),
      trace.path,
    );
    const calls = parseStrace(trace.path, scratch.path);
    const align = directAlignment(`${scratch.path}/plain.raw`).offset;
    for (const [k, name] of NAMES.entries()) {
      const what = `write --framing ${name} --direct --bs 64k`;
      assert.equal(outs[k]!.code, 0, `${what}: ${outs[k]!.stderr}`);
      const file = `${scratch.path}/direct.${name}`;
      const bytes = Deno.readFileSync(file);
      assert.deepEqual(bytes, Deno.readFileSync(`${scratch.path}/plain.${name}`), what);
      const [row] = JSON.parse(Deno.readTextFileSync(`${rows.path}/${name}.json`))
        .rows as AuditedRow[];
      assert.equal(row!.bs_bytes, 65536, what);
      assert.equal(row!.direct, true, what);
      assert.equal(row!.fsync, "end", what);
      const mine = tempCalls(calls, scratch.path, `direct.${name}`);
      const opens = mine.filter((c) => c.call === "openat");
      assert.equal(opens.length, 1, `${what}: one open of the temporary file`);
      assert.match(opens[0]!.flags, /O_DIRECT/, what);
      assert.match(opens[0]!.flags, /O_EXCL/, `${what}: the temporary file is created new`);
      const io = mine.filter((c) => isRead(c) || c.call === "pwrite64");
      for (const c of io) {
        assert.match(c.flags, /O_DIRECT/, `${what}: ${c.call} without O_DIRECT`);
        assert.equal(c.offset % align, 0, `${what}: ${c.call} at ${c.offset}`);
        assert.equal(c.count % align, 0, `${what}: ${c.call} of ${c.count}`);
        assert.ok(c.count <= 65536, `${what}: ${c.call} of ${c.count}`);
      }
      const writes = io.filter((c) => c.call === "pwrite64");
      assert.ok(writes.filter((c) => c.count === 65536).length >= 2, `${what}: 64 KiB writes`);
      if (bytes.length % align !== 0) {
        const cut = mine.filter((c) => c.call === "ftruncate");
        assert.deepEqual(cut.map((c) => c.offset), [bytes.length], `${what}: the tail cut`);
      }
      assert.ok(mine.some((c) => c.call === "fsync"), `${what}: fsynced`);
      const files = row!.audit.phases.flatMap((p) => p.files).filter((f) =>
        f.path.includes(`.direct.${name}.sciobench-tmp-`)
      );
      assert.ok(files.length > 0, `${what}: the trail lists the file`);
      for (const f of files) assert.match(f.flags, /DIRECT/, `${what}: trail flags ${f.flags}`);
      const sum = (key: "writes" | "reads") => files.reduce((a, f) => a + f[key], 0);
      assert.equal(sum("writes"), writes.length, `${what}: writes in the trail and strace`);
      assert.equal(
        sum("reads"),
        io.length - writes.length,
        `${what}: reads in the trail and strace`,
      );
    }
    // nothing left but the files asked for
    const left = [...Deno.readDirSync(scratch.path)].map((e) => e.name).sort();
    assert.deepEqual(left, NAMES.flatMap((n) => [`direct.${n}`, `plain.${n}`]).sort());
  },
});

Deno.test({
  name:
    "write --fsync each fsyncs once per frame; none fsyncs only after the timing, before FILE appears",
  ignore: !STRACE,
  async fn() {
    using scratch = tempDir("sciobench-fsync-");
    using trace = tempDir("sciobench-strace-");
    const frames = 6;
    const policies = ["each", "none", "end"] as const;
    const outs = await straceSciobench(
      policies.map((fsync) => [
        ...["write", "--framing", "raw", "--n", "1000", "--frames", String(frames)],
        ...["--fsync", fsync, "--format", "json", "--audit", `${scratch.path}/${fsync}.raw`],
      ]),
      trace.path,
    );
    const calls = parseStrace(trace.path, scratch.path);
    for (const [k, fsync] of policies.entries()) {
      const what = `write --fsync ${fsync}`;
      assert.equal(outs[k]!.code, 0, `${what}: ${outs[k]!.stderr}`);
      const [row] = JSON.parse(outs[k]!.stdout).rows as AuditedRow[];
      assert.equal(row!.fsync, fsync, what);
      const write = row!.audit.phases.find((p) => p.name === "write" && p.timed)!;
      const timedSyncs = write.syncs.filter((s) => s.call === "fsync").length;
      const mine = tempCalls(calls, scratch.path, `${fsync}.raw`);
      const synced = mine.filter((c) => c.call === "fsync").length;
      // raw: one pwrite per frame and one for the trailer, each followed by its fsync
      const expected = { each: frames + 1, none: 0, end: 1 }[fsync];
      assert.equal(timedSyncs, expected, `${what}: fsyncs inside the timing`);
      assert.equal(synced, Math.max(expected, 1), `${what}: fsyncs strace saw`);
      // the last call on the temporary file is an fsync: it is durable before it is linked
      assert.equal(mine.at(-1)!.call, "fsync", `${what}: ${mine.at(-1)!.call} last`);
    }
    const warn = outs[1]!.stderr.split("\n").filter((l) => l.includes("--fsync none"));
    assert.equal(warn.length, 1, outs[1]!.stderr);
  },
});

Deno.test("write refuses --direct and --bs for peers, --append --direct and --append --fsync none, in one line", async () => {
  using d = tempDir();
  const appendTo = `${d.path}/a.raw`;
  const first = await runCli([
    "write",
    "--framing",
    "raw",
    "--n",
    "100",
    "--frames",
    "2",
    appendTo,
  ]);
  assert.equal(first.code, 0, first.stderr);
  const before = Deno.readFileSync(appendTo);
  const cases: [string[], RegExp][] = [
    [["--framing", "hdf5", "--direct", `${d.path}/x.h5`], /--direct: hdf5 is a library peer/],
    [["--framing", "netcdf4", "--bs", "64k", `${d.path}/x.nc`], /--bs: netcdf4 is a library peer/],
    [["--append", "--direct", appendTo], /--append cannot use --direct/],
    [["--append", "--fsync", "none", appendTo], /--append always fsyncs/],
    [["--framing", "raw", "--bs", "1000", "--direct", `${d.path}/y.raw`], /is not a multiple/],
  ];
  for (const [args, pattern] of cases) {
    const r = await runCli(["write", "--n", "100", "--frames", "2", ...args]);
    const what = `write ${args.join(" ")}`;
    assert.equal(r.code, 2, `${what}: ${r.stderr}`);
    const lines = r.stderr.trim().split("\n");
    assert.equal(lines.length, 1, `${what}: ${r.stderr}`);
    assert.match(lines[0]!, pattern, what);
  }
  assert.deepEqual(Deno.readFileSync(appendTo), before, "the file appended to is unchanged");
  assert.deepEqual([...Deno.readDirSync(d.path)].map((e) => e.name), ["a.raw"]);
});

Deno.test("write --append --bs 64k gives the file an append without it gives", async () => {
  using d = tempDir();
  for (const [name, extra] of [["plain", []], ["sized", ["--bs", "64k"]]] as const) {
    const path = `${d.path}/${name}.gsd`;
    const w = await runCli(["write", "--framing", "gsd", "--n", "1000", "--frames", "3", path]);
    assert.equal(w.code, 0, w.stderr);
    const a = await runCli(["write", "--append", "--n", "1000", "--frames", "4", ...extra, path]);
    assert.equal(a.code, 0, a.stderr);
  }
  assert.deepEqual(
    Deno.readFileSync(`${d.path}/sized.gsd`),
    Deno.readFileSync(`${d.path}/plain.gsd`),
  );
  const v = await runCli(["read", "--verify", `${d.path}/sized.gsd`]);
  assert.equal(v.code, 0, v.stderr);
});

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

Deno.test({
  name:
    "write --force --direct: SIGTERM mid-write or a full disk leaves FILE as it was and no temporary file",
  ignore: DIRECT_REFUSED !== null,
  async fn() {
    using d = tempDir();
    const f = `${d.path}/t.raw`;
    const w0 = await runCli(["write", "--framing", "raw", "--n", "1000", "--frames", "2", f]);
    assert.equal(w0.code, 0, w0.stderr);
    const before = Deno.readFileSync(f);
    const long = ["write", "--force", "--framing", "raw", "--n", "1024", "--frames", "3000"];
    const child = spawnCli([...long, "--direct", "--bs", "64k", f]);
    assert.ok(await appears(`${d.path}/.t.raw.sciobench-tmp-${child.pid}`));
    child.kill("SIGTERM");
    const out = await child.output();
    const stderr = new TextDecoder().decode(out.stderr);
    if (out.code === 0 || /is complete/.test(stderr)) {
      // the signal came after the file was complete: it is the new file, whole
      const v = await runCli(["read", "--verify", f]);
      assert.equal(v.code, 0, v.stderr);
    } else {
      assert.equal(out.code, 143, stderr);
      assert.match(stderr.trim(), /^sciobench: interrupted by SIGTERM; [^\n]*$/);
      const now = Deno.readFileSync(f);
      assert.ok(now.length === before.length && now.every((b, i) => b === before[i]), stderr);
    }
    Deno.writeFileSync(f, before);
    // a full disk (RLIMIT_FSIZE: EFBIG) in the middle of the aligned writes
    const full = await runCliLimited([...long, "--direct", "--bs", "64k", f], 512);
    assert.equal(full.code, 1, full.stderr);
    assert.equal(full.stderr.trim().split("\n").length, 1, full.stderr);
    assert.deepEqual(Deno.readFileSync(f), before);
    assert.deepEqual([...Deno.readDirSync(d.path)].map((e) => e.name), ["t.raw"]);
  },
});

Deno.test({
  name:
    "read --direct --bs 64k: aligned O_DIRECT preads, no drop, trail agrees; --bs 64k alone: 64 KiB preads",
  ignore: DIRECT_REFUSED !== null || !STRACE,
  async fn() {
    using scratch = tempDir("sciobench-direct-");
    using trace = tempDir("sciobench-strace-");
    for (const name of NAMES) {
      const r = await runCli([...WRITE, "--framing", name, `${scratch.path}/f.${name}`]);
      assert.equal(r.code, 0, r.stderr);
    }
    const sized = ["raw", "f77"];
    const cases = [
      ...NAMES.map((name) => ({ name, args: ["--direct", "--bs", "64k"] })),
      ...sized.map((name) => ({ name, args: ["--bs", "64k"] })),
    ];
    const outs = await straceSciobench(
      // (--framing: no detection, which reads the first 4 KiB through the page cache untimed)
      cases.map(({ name, args }) => [
        ...["read", "--framing", name, "--verify", "--format", "json", "--audit", ...args],
        `${scratch.path}/f.${name}`,
      ]),
      trace.path,
    );
    const align = directAlignment(`${scratch.path}/f.raw`).offset;
    for (const [k, { name, args }] of cases.entries()) {
      const what = `read ${args.join(" ")} ${name}`;
      const direct = args.includes("--direct");
      assert.equal(outs[k]!.code, 0, `${what}: ${outs[k]!.stderr}`);
      const [row] = JSON.parse(outs[k]!.stdout).rows as AuditedRow[];
      assert.equal(row!.cache, direct ? "direct" : "cold", what);
      assert.equal(row!.cold_ok, direct ? "" : true, what);
      assert.equal(row!.bs_bytes, 65536, what);
      assert.equal(row!.direct, direct, what);
      assert.equal(row!.verified, true, what);
      const file = `${scratch.path}/f.${name}`;
      const size = Deno.statSync(file).size;
      const mine = parseStrace(trace.path, file, k).filter((c) => c.path === file);
      const reads = mine.filter(isRead);
      assert.ok(reads.length > 0, what);
      const drops = mine.filter((c) => c.call === "fadvise64").length;
      if (direct) assert.equal(drops, 0, `${what}: no cache drop`);
      else assert.ok(drops >= 2, `${what}: ${drops} drops`);
      for (const c of reads) {
        assert.ok(c.count <= 65536, `${what}: pread of ${c.count}`);
        if (direct) {
          assert.match(c.flags, /O_DIRECT/, `${what}: pread without O_DIRECT`);
          assert.equal(c.offset % align, 0, `${what}: pread at ${c.offset}`);
          assert.equal(c.count % align, 0, `${what}: pread of ${c.count}`);
        } else {
          assert.doesNotMatch(c.flags, /O_DIRECT/, what);
          assert.ok(c.count === 65536 || c.offset + c.count >= size, `${what}: ${c.count}`);
        }
      }
      // the trail saw the same reads of the file, with the same open flags
      const files = row!.audit.phases.flatMap((p) => p.files).filter((f) => f.path === file);
      const trailReads = files.reduce((a, f) => a + f.reads, 0);
      assert.equal(trailReads, reads.length, `${what}: reads in the trail and strace`);
      // (an untimed stretch also opens the file to measure its residency: its flags are that open's)
      const timed = row!.audit.phases.filter((p) => p.timed).flatMap((p) => p.files);
      for (const f of timed.filter((f) => f.path === file && f.reads > 0)) {
        if (direct) assert.match(f.flags, /DIRECT/, `${what}: trail flags ${f.flags}`);
        else assert.doesNotMatch(f.flags, /DIRECT/, `${what}: trail flags ${f.flags}`);
      }
    }
  },
});
