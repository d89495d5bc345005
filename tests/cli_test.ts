import assert from "node:assert/strict";
import { crc32 } from "node:zlib";
import { VerifyError } from "../lib/core/errors.ts";
import { TABLE_COLUMNS } from "../lib/workloads/table/mod.ts";
import { flipByte, MAIN, PERMISSIONS, runCli, runSmallCell, tempDir } from "./_helpers.ts";

function assertOneLineError(stderr: string, pattern: RegExp): void {
  const lines = stderr.trim().split("\n");
  assert.equal(lines.length, 1, `one line on stderr, got:\n${stderr}`);
  assert.match(lines[0]!, /^sciobench: error: /);
  assert.match(lines[0]!, pattern);
  assert.doesNotMatch(stderr, /\bat .*\.ts:\d+/, "no stack trace");
}

function leftovers(dir: string): string[] {
  return [...Deno.readDirSync(dir)].map((e) => e.name).filter((n) => n.startsWith(".sciobench-"));
}

Deno.test("table: CSV header and one verified row per cell", async () => {
  using d = tempDir();
  const r = await runCli([
    "table",
    "--framing",
    "raw",
    "--size",
    "1MiB",
    "--n",
    "32^2,64",
    "--dir",
    d.path,
  ]);
  assert.equal(r.code, 0, r.stderr);
  const lines = r.stdout.trim().split("\n");
  assert.equal(lines[0], TABLE_COLUMNS.join(","));
  assert.ok(
    lines[0]!.startsWith(
      "framing,size_bytes,N,open_ms,write_MiBps,read_MiBps,random_MiBps,random_ms,frames,file_bytes,repeat,write_s,write_user_s,write_sys_s,read_user_s,read_sys_s,write_dev_bytes,read_dev_bytes,resident_after_drop,fs_type",
    ),
  );
  assert.equal(lines.length, 3);
  const row = Object.fromEntries(lines[0]!.split(",").map((k, i) => [k, lines[1]!.split(",")[i]]));
  assert.equal(row.framing, "raw");
  assert.equal(row.size_bytes, String(2 ** 20));
  assert.equal(row.N, "1024");
  assert.equal(row.frames, "37");
  assert.ok(Number(row.file_bytes) > 37 * 28 * 1024);
  for (const k of ["open_ms", "write_MiBps", "read_MiBps", "random_MiBps", "random_ms"]) {
    assert.ok(Number(row[k]) > 0, k);
  }
  assert.deepEqual(leftovers(d.path), [], "scratch files removed");
});

Deno.test("table: --format json and --format seed (gsd's reST table)", async () => {
  using d = tempDir();
  const j = await runCli([
    "table",
    "--size",
    "256KiB",
    "--n",
    "64",
    "--dir",
    d.path,
    "--format",
    "json",
    "--repeat",
    "2",
    "--no-peers",
  ]);
  assert.equal(j.code, 0, j.stderr);
  const doc = JSON.parse(j.stdout);
  assert.equal(doc.meta.tool, "sciobench");
  // Two runs (repeat 1, 2), then the five summary rows (repeat = runs summarised).
  assert.deepEqual(
    doc.rows.map((r: { repeat: number; stat: string }) => `${r.stat}${r.repeat}`),
    ["run1", "run2", "mean2", "median2", "stddev2", "min2", "max2"],
  );
  const t = await runCli([
    "table",
    "--size",
    "256KiB",
    "--n",
    "32^2",
    "--dir",
    d.path,
    "--format",
    "seed",
    "--no-peers",
  ]);
  assert.equal(t.code, 0, t.stderr);
  assert.match(
    t.stdout,
    /^Size {4}N {6}Open \(ms\) Write \(MiB\/s\) Read \(MiB\/s\) Random \(MiB\/s\) Random \(ms\)$/m,
  );
  assert.match(t.stdout, /^256 KiB 32\^2 /m);
});

Deno.test("table --cache warm reads from the page cache: no device reads, fully resident", async () => {
  using d = tempDir();
  const r = await runCli([
    "table",
    "--size",
    "1MiB",
    "--n",
    "32^2",
    "--dir",
    d.path,
    "--cache",
    "warm",
    "--format",
    "json",
  ]);
  assert.equal(r.code, 0, r.stderr);
  const row = JSON.parse(r.stdout).rows[0];
  assert.equal(row.cache, "warm");
  assert.equal(row.resident_after_drop, 1);
  assert.equal(row.read_dev_bytes, 0);
  assert.equal(row.random_dev_bytes, 0);
  const bad = await runCli(["table", "--cache", "lukewarm"]);
  assert.equal(bad.code, 2);
  assertOneLineError(bad.stderr, /bad --cache 'lukewarm': expected one of cold, warm/);
});

Deno.test("table --out refuses to overwrite a file unless --force", async () => {
  using d = tempDir();
  const out = `${d.path}/results.csv`;
  Deno.writeTextFileSync(out, "precious");
  const r = await runCli(["table", "--size", "64KiB", "--n", "64", "--dir", d.path, "--out", out]);
  assert.equal(r.code, 1);
  assertOneLineError(
    r.stderr.split("\n").filter((l) => l.startsWith("sciobench: error")).join("\n"),
    /exists; refusing/,
  );
  assert.equal(Deno.readTextFileSync(out), "precious");
  const f = await runCli([
    "table",
    "--size",
    "64KiB",
    "--n",
    "64",
    "--dir",
    d.path,
    "--out",
    out,
    "--force",
  ]);
  assert.equal(f.code, 0, f.stderr);
  assert.match(Deno.readTextFileSync(out), /^framing,size_bytes,N,/);
});

Deno.test("--out is written atomically: a failed or interrupted run keeps the old file, no temporary left", async () => {
  using d = tempDir();
  const out = `${d.path}/results.csv`;
  Deno.writeTextFileSync(out, "precious");
  const base = ["table", "--framing", "raw", "--no-warmup", "--size", "64KiB", "--dir", d.path];
  // SIGTERM while the sweep runs (rows are being written to the temporary file).
  const temps = () =>
    [...Deno.readDirSync(d.path)].map((e) => e.name).filter((n) => n.includes("sciobench-tmp"));
  const child = new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "--quiet",
      ...PERMISSIONS,
      MAIN,
      ...base,
      "--n",
      "64,64,64,64,64,64,64,64,64,64,64,64,64,64,64,64,64,64,64,64",
      "--repeat",
      "20",
      "--out",
      out,
      "--force",
    ],
    stdout: "null",
    stderr: "piped",
  }).spawn();
  for (let i = 0; i < 3000 && temps().length === 0; i++) await new Promise((r) => setTimeout(r, 2));
  assert.equal(temps().length, 1, "rows go to a temporary file beside --out");
  child.kill("SIGTERM");
  const r = await child.output();
  assert.equal(r.code, 143, new TextDecoder().decode(r.stderr));
  assert.equal(Deno.readTextFileSync(out), "precious", "the old --out file is kept");
  assert.deepEqual(temps(), [], "no temporary file is left");
  // A usage error after the target was checked: nothing is created or replaced.
  const bad = await runCli([...base, "--n", "64", "--cache", "lukewarm", "--out", out, "--force"]);
  assert.equal(bad.code, 2);
  assert.equal(Deno.readTextFileSync(out), "precious");
  assert.deepEqual(temps(), []);
  // A complete run replaces it, with no temporary file left.
  const ok = await runCli([...base, "--n", "64", "--out", out, "--force"]);
  assert.equal(ok.code, 0, ok.stderr);
  assert.match(Deno.readTextFileSync(out), /^framing,size_bytes,N,/);
  assert.deepEqual(temps(), []);
});

Deno.test("bad flags and values: one line, exit 2, no stack trace", async () => {
  for (
    const [args, pattern] of [
      [["table", "--bogus"], /table: Unknown option '--bogus'/],
      [
        ["table", "--size", "12 parsecs"],
        /bad --size '12 parsecs': expected bytes \(4096\), .*k, M, G, T or KiB/,
      ],
      [["table", "--sample", "1Q"], /bad --sample '1Q': expected bytes .*kB, MB, GB, TB \(decimal/],
      [["table", "--n", "0"], /bad --n '0'/],
      [["table", "--framing", "nope"], /unknown backend 'nope'/],
      [["table", "--dir", "/nonexistent/dir"], /--dir \/nonexistent\/dir does not exist/],
      [
        ["table", "--size", "4096TiB"],
        /the largest --size needs about .* free; use a smaller --size/,
      ],
      [["frobnicate"], /unknown command 'frobnicate'/],
      [["write", "--framing", "raw", "--n", "4", "never-written.raw"], /--frames is required/],
      [["write", "--framing", "raw", "--n", "4", "--frames", "2"], /give exactly one FILE/],
      [["read"], /give exactly one FILE/],
      [["info", "a.raw", "b.raw"], /info: give exactly one FILE/],
    ] as const
  ) {
    const r = await runCli([...args]);
    assert.equal(r.code, 2, `${args.join(" ")}: ${r.stderr}`);
    assertOneLineError(r.stderr, pattern);
    assert.equal(r.stdout, "");
  }
});

Deno.test("write keeps the file, refuses to overwrite it, and info lists chunks with CRC-32", async () => {
  using d = tempDir();
  const path = `${d.path}/t.raw`;
  const w = await runCli(["write", "--framing", "raw", "--n", "8", "--frames", "3", path]);
  assert.equal(w.code, 0, w.stderr);
  assert.match(w.stdout, /^framing,path,N,frames,/);
  const before = Deno.readFileSync(path);
  const again = await runCli(["write", "--framing", "raw", "--n", "8", "--frames", "5", path]);
  assert.equal(again.code, 1);
  assertOneLineError(again.stderr, /t\.raw exists; refusing to overwrite it/);
  assert.deepEqual(Deno.readFileSync(path), before, "the existing file is untouched");
  const forced = await runCli([
    "write",
    "--framing",
    "raw",
    "--n",
    "8",
    "--frames",
    "5",
    "--force",
    path,
  ]);
  assert.equal(forced.code, 0, forced.stderr);

  const info = await runCli(["info", "--json", path]);
  assert.equal(info.code, 0, info.stderr);
  const doc = JSON.parse(info.stdout);
  assert.equal(doc.framing, "raw");
  assert.equal(doc.frames, 5);
  assert.equal(doc.chunks.length, 10);
  const bytes = Deno.readFileSync(path);
  for (const c of doc.chunks) {
    assert.deepEqual(Object.keys(c), [
      "frame",
      "name",
      "dtype",
      "shape",
      "offset",
      "bytes",
      "crc32",
    ]);
    const stored = bytes.subarray(c.offset, c.offset + c.bytes);
    assert.equal(c.crc32, crc32(stored).toString(16).padStart(8, "0"));
  }
  assert.deepEqual(doc.chunks[0].shape, [8, 3]);
  const text = await runCli(["info", path]);
  assert.match(text.stdout, /^framing: raw$/m);
  assert.match(text.stdout, /^frame,name,dtype,shape,offset,bytes,crc32$/m);
});

Deno.test("read times a file and --verify catches a flipped byte", async () => {
  using d = tempDir();
  const path = `${d.path}/t.raw`;
  assert.equal(
    (await runCli(["write", "--framing", "raw", "--n", "16", "--frames", "4", "--seed", "3", path]))
      .code,
    0,
  );
  const ok = await runCli(["read", "--verify", "--seed", "3", path]);
  assert.equal(ok.code, 0, ok.stderr);
  assert.match(ok.stdout, /^framing,path,frames,file_bytes,open_ms,/);
  const [head, line] = ok.stdout.trim().split("\n");
  const row = Object.fromEntries(head!.split(",").map((k, i) => [k, line!.split(",")[i]]));
  assert.equal(row.verified, "true");
  assert.equal(row.cache, "cold");
  const bytes = Deno.readFileSync(path);
  bytes[16 + 2 * 448 + 100]! ^= 0xff;
  Deno.writeFileSync(path, bytes);
  const bad = await runCli(["read", "--verify", "--seed", "3", path]);
  assert.equal(bad.code, 1);
  assertOneLineError(
    bad.stderr,
    /frame 2: chunk 'particles\/position' differs from what was written at byte 100/,
  );
});

Deno.test("malformed and unknown files: one line, exit 2", async () => {
  using d = tempDir();
  const junk = `${d.path}/junk.bin`;
  Deno.writeFileSync(junk, new TextEncoder().encode("hello, this is not a data file\n"));
  const r = await runCli(["info", junk]);
  assert.equal(r.code, 2);
  assertOneLineError(r.stderr, /junk\.bin/);
  const path = `${d.path}/t.raw`;
  assert.equal(
    (await runCli(["write", "--framing", "raw", "--n", "4", "--frames", "2", path])).code,
    0,
  );
  const cut = Deno.readFileSync(path).subarray(0, 200);
  Deno.writeFileSync(path, cut);
  const t = await runCli(["info", "--framing", "raw", path]);
  assert.equal(t.code, 2);
  assertOneLineError(t.stderr, /raw: .*t\.raw at byte \d+: no index footer/);
  const dir = await runCli(["read", d.path]);
  assert.equal(dir.code, 2);
  assertOneLineError(
    dir.stderr,
    /a directory holding none of .*: not a store sciobench reads; give a file, or a store's directory/,
  );
  const missing = await runCli(["info", `${d.path}/nothing`]);
  assert.equal(missing.code, 1);
  assertOneLineError(missing.stderr, /no such file/);
});

Deno.test("verify-on-read: a byte flipped between write and read fails the cell, and scratch is cleaned", async () => {
  using d = tempDir();
  await assert.rejects(
    () => runSmallCell("raw", d.path, (path) => flipByte(path, 16 + 28 * 64 * 3 + 5)),
    (e: unknown) => {
      assert.ok(e instanceof VerifyError, String(e));
      assert.match(e.message, /frame 3: chunk 'particles\/position' differs .* at byte 5 /);
      return true;
    },
  );
  assert.deepEqual(leftovers(d.path), []);
});

Deno.test("SIGTERM during a run removes the scratch directory", async () => {
  using d = tempDir();
  const child = new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "--quiet",
      "--allow-all",
      new URL("../main.ts", import.meta.url).pathname,
      "table",
      "--size",
      "4GiB",
      "--n",
      "32^2",
      "--dir",
      d.path,
    ],
    stdout: "null",
    stderr: "null",
  }).spawn();
  const until = Date.now() + 20_000;
  while (leftovers(d.path).length === 0 && Date.now() < until) {
    await new Promise((r) => setTimeout(r, 50));
  }
  assert.equal(leftovers(d.path).length, 1, "the run made its scratch directory");
  await new Promise((r) => setTimeout(r, 300));
  child.kill("SIGTERM");
  const status = await child.status;
  assert.equal(status.code, 143);
  assert.deepEqual(leftovers(d.path), []);
});

Deno.test("read --sample reads part of the file in each phase; --verify works on gsd files", async () => {
  using d = tempDir();
  const path = `${d.path}/t.gsd`;
  assert.equal(
    (await runCli(["write", "--framing", "gsd", "--n", "64", "--frames", "50", path])).code,
    0,
  );
  const r = await runCli(["read", "--sample", "16KiB", "--verify", "--format", "json", path]);
  assert.equal(r.code, 0, r.stderr);
  const row = JSON.parse(r.stdout).rows[0];
  assert.equal(row.framing, "gsd");
  assert.equal(row.frames, 50);
  assert.equal(row.read_frames, 10, "10 frames of 1792 bytes reach 16 KiB");
  assert.ok(row.random_bytes >= 10 * 1792);
  assert.equal(row.verified, true);
});
