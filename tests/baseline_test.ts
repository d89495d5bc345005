/**
 * `table --baseline fio`: fio's command line for a cell (same size, block size, direct flag,
 * fsync policy, cache state), the efficiency columns of a real run (and their summary rows),
 * the one line when fio is missing, and fio's file removed on SIGINT.
 * @module
 */
import assert from "node:assert/strict";
import { fioArgs, fioBandwidth, type FioCell } from "../lib/baselines/fio.ts";
import { commandMissing, PERMISSIONS, runCli, tempDir } from "./_helpers.ts";

const CELL: FioCell = {
  path: "/scratch/.sciobench-1/fio.raw",
  fileBytes: 134_242_304,
  readBytes: 67_108_864,
  blockBytes: 4_194_304,
  readBlockBytes: 458_752,
  direct: false,
  fsync: "end",
  seed: 3,
  cold: true,
};

Deno.test("fio baseline: the command line has the cell's size, block size and flags", () => {
  const w = fioArgs(CELL, "write");
  for (
    const a of [
      "--filename=/scratch/.sciobench-1/fio.raw",
      "--rw=write",
      "--size=134242304",
      "--bs=4194304",
      "--ioengine=psync",
      "--direct=0",
      "--end_fsync=1",
      "--fallocate=none",
      "--output-format=json",
    ]
  ) assert.ok(w.includes(a), `${a} in ${w.join(" ")}`);
  assert.ok(!w.includes("--fsync=1"), "end: no fsync per block");
  const each = fioArgs({ ...CELL, fsync: "each", direct: true }, "write");
  assert.ok(each.includes("--fsync=1") && each.includes("--end_fsync=1"), each.join(" "));
  assert.ok(each.includes("--direct=1"), each.join(" "));
  const none = fioArgs({ ...CELL, fsync: "none" }, "write");
  assert.ok(!none.some((a) => /fsync/.test(a)), none.join(" "));
  const r = fioArgs(CELL, "read");
  for (
    const a of [
      "--rw=read",
      // what fio's write left: 32 whole 4 MiB blocks (a larger --size would make fio lay the
      // file out anew, with buffered writes, before it reads)
      "--size=134217728",
      "--io_size=67108864",
      "--invalidate=1",
      "--bs=458752",
    ]
  ) {
    assert.ok(r.includes(a), `${a} in ${r.join(" ")}`);
  }
  const x = fioArgs({ ...CELL, cold: false }, "random");
  for (
    const a of [
      "--rw=randread",
      "--io_size=67108864",
      "--invalidate=0",
      "--bs=458752",
      "--randseed=3",
    ]
  ) {
    assert.ok(x.includes(a), `${a} in ${x.join(" ")}`);
  }
  assert.ok(
    !x.includes("--norandommap"),
    "each block once, as our random order reads each frame once",
  );
  assert.equal(fioBandwidth('{"jobs":[{"read":{"bw_bytes":1048576}}]}', "random"), 1048576);
  assert.throws(() => fioBandwidth('{"jobs":[]}', "write"), /no bandwidth/);
});

/** True (with a message) when fio is missing; a failure under SCIOBENCH_REQUIRE_PEERS=1. */
function fioSkipped(): boolean {
  const missing = commandMissing("fio");
  if (missing === null) return false;
  if (Deno.env.get("SCIOBENCH_REQUIRE_PEERS") === "1") throw new Error(missing);
  console.log(`skipped: ${missing}`);
  return true;
}

const TABLE = ["table", "--framing", "raw,gsd", "--size", "4M", "--n", "64^2", "--no-warmup"];
const FIO_COLUMNS = ["fio_write_MiBps", "fio_read_MiBps", "fio_random_MiBps"];
const EFFICIENCY = ["efficiency_write", "efficiency_read", "efficiency_random"];

Deno.test("table --baseline fio: fio's MiB/s and ours / fio in every row and summary row", async () => {
  if (fioSkipped()) return;
  using d = tempDir("sciobench-fio-");
  const r = await runCli([
    ...TABLE,
    "--repeat",
    "2",
    "--baseline",
    "fio",
    "--dir",
    d.path,
    "--format",
    "json",
  ]);
  assert.equal(r.code, 0, r.stderr);
  const rows = JSON.parse(r.stdout).rows as Record<string, unknown>[];
  assert.equal(rows.length, 2 * 2 + 2 * 5, "two runs and five summary rows per framing");
  for (const row of rows) {
    const what = `${row.framing} ${row.stat}`;
    for (const c of [...FIO_COLUMNS, ...EFFICIENCY]) {
      // a number in every row: > 0, and >= 0 for the spread (fio's rates are coarse)
      const low = row.stat === "stddev" ? 0 : Number.MIN_VALUE;
      assert.ok(typeof row[c] === "number" && (row[c] as number) >= low, `${what}: ${c} ${row[c]}`);
    }
    // summary rows: the mean efficiency is the ratio of the mean rates (our io rates for reads)
    if (row.stat === "mean") {
      const expected = (row.read_io_MiBps as number) / (row.fio_read_MiBps as number);
      assert.ok(Math.abs((row.efficiency_read as number) - expected) < 1e-9 * expected, what);
      assert.equal(typeof row.efficiency_read_mean_of_ratios, "number", what);
    }
    if (row.stat !== "run") continue;
    assert.equal(row.fio_bs_bytes, 28 * 64 * 64, `${what}: fio reads one frame per call`);
    assert.equal(row.fio_write_bs_bytes, 28 * 64 * 64, `${what}: and writes one frame per call`);
    for (
      const [ours, fio, eff] of [
        ["write_MiBps", "fio_write_MiBps", "efficiency_write"],
        // the reads: our I/O calls without our verification, like with like (fio verifies nothing)
        ["read_io_MiBps", "fio_read_MiBps", "efficiency_read"],
        ["random_io_MiBps", "fio_random_MiBps", "efficiency_random"],
      ] as const
    ) {
      const expected = (row[ours] as number) / (row[fio] as number);
      assert.ok(Math.abs((row[eff] as number) - expected) < 1e-9 * expected, `${what}: ${eff}`);
    }
    assert.ok((row.read_io_MiBps as number) >= (row.read_MiBps as number), what);
  }
  assert.deepEqual([...Deno.readDirSync(d.path)], [], "fio's file and scratch are removed");
});

Deno.test("table --direct --baseline fio: fio writes 4 MiB calls as ours and reads aligned frames as ours", async () => {
  if (fioSkipped()) return;
  using d = tempDir("sciobench-fio-");
  // 100 particles: a 2800-byte frame, not a multiple of any direct-I/O alignment
  const r = await runCli([
    ...["table", "--framing", "raw", "--size", "8M", "--n", "100", "--no-warmup", "--direct"],
    ...["--baseline", "fio", "--dir", d.path, "--format", "json", "--audit"],
  ]);
  assert.equal(r.code, 0, r.stderr);
  const [row] = JSON.parse(r.stdout).rows as Record<string, unknown>[];
  assert.equal(row!.fio_write_bs_bytes, 4 << 20, "our staged direct writes are 4 MiB calls");
  const read = row!.fio_bs_bytes as number;
  assert.ok(read >= 2800 && read < 2800 + 4096 && read % 512 === 0, `fio reads ${read} per call`);
  // ours: the aligned blocks that cover each frame (less a block already read), as fio's +- 512
  const audit = row!.audit as {
    phases: { name: string; timed: boolean; files: { readLog?: number[] }[] }[];
  };
  const phase = audit.phases.find((p) => p.timed && p.name === "read")!;
  const log = phase.files.flatMap((f) => f.readLog ?? []);
  const sizes = new Set(log.filter((_, k) => k % 2 === 1));
  assert.ok(sizes.size > 0, "the trail logged our reads");
  for (const size of sizes) {
    assert.ok(
      size % 512 === 0 && Math.abs(size - read) <= 512,
      `our call ${size}, fio's ${read}`,
    );
  }
});

Deno.test("fio baseline: fio reads the file its write left, not one it lays out anew", async () => {
  if (fioSkipped()) return;
  using d = tempDir("sciobench-fio-");
  // 3 blocks and 5000 bytes: fio's write leaves the 3 whole blocks only
  const cell: FioCell = {
    ...CELL,
    path: `${d.path}/fio.raw`,
    fileBytes: 3 * 65536 + 5000,
    readBytes: 65536,
    blockBytes: 65536,
    readBlockBytes: 4096,
    cold: false,
  };
  const fio = async (phase: "write" | "read" | "random") => {
    const out = await new Deno.Command("fio", { args: fioArgs(cell, phase), stdin: "null" })
      .output();
    assert.equal(out.code, 0, new TextDecoder().decode(out.stderr));
  };
  await fio("write");
  const written = Deno.statSync(cell.path).size;
  assert.equal(written, 3 * 65536);
  for (const phase of ["read", "random"] as const) {
    await fio(phase);
    // a --size past the file makes fio lay it out again (and extend it) before it reads
    assert.equal(Deno.statSync(cell.path).size, written, `${phase}: the file fio's write left`);
  }
});

Deno.test("table --baseline fio without fio: one line on stderr, the columns empty", async () => {
  using d = tempDir("sciobench-fio-");
  const r = await runCli(
    [...TABLE, "--baseline", "fio", "--dir", d.path, "--format", "csv"],
    { env: { PATH: "/nonexistent" } },
  );
  assert.equal(r.code, 0, r.stderr);
  const lines = r.stderr.split("\n").filter((l) => /fio/.test(l));
  assert.equal(lines.length, 1, r.stderr);
  assert.match(
    lines[0]!,
    /--baseline fio: fio is not installed \(not on PATH\); the fio_\* and efficiency_\* columns stay empty/,
  );
  const [head, ...data] = r.stdout.trim().split("\n");
  const names = head!.split(",");
  assert.equal(data.length, 2, "raw and gsd rows");
  for (const line of data) {
    const cells = line.split(",");
    for (const c of [...FIO_COLUMNS, ...EFFICIENCY]) {
      assert.ok(names.includes(c), `${c} is a column`);
      assert.equal(cells[names.indexOf(c)], "", `${c} empty without fio`);
    }
  }
});

Deno.test("table --baseline fio: SIGINT while fio runs removes fio's file and every scratch", async () => {
  if (fioSkipped()) return;
  using d = tempDir("sciobench-fio-");
  const child = new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "--quiet",
      ...PERMISSIONS,
      new URL("../main.ts", import.meta.url).pathname,
      "table",
      "--framing",
      "raw",
      "--size",
      "256M",
      "--n",
      "128^2",
      "--sample",
      "8M",
      "--no-warmup",
      "--fsync",
      "none",
      "--baseline",
      "fio",
      "--dir",
      d.path,
      "--format",
      "csv",
    ],
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  // wait for fio's file to appear in a scratch directory
  const fioFile = (): string | undefined => {
    for (const e of Deno.readDirSync(d.path)) {
      try {
        for (const f of Deno.readDirSync(`${d.path}/${e.name}`)) {
          if (f.name.startsWith("fio.")) return `${d.path}/${e.name}/${f.name}`;
        }
      } catch {
        // removed meanwhile
      }
    }
    return undefined;
  };
  let seen: string | undefined;
  for (let t = 0; t < 1200 && seen === undefined; t++) {
    seen = fioFile();
    if (seen === undefined) await new Promise((ok) => setTimeout(ok, 25));
  }
  child.kill("SIGINT");
  const out = await child.output();
  const stderr = new TextDecoder().decode(out.stderr);
  assert.ok(seen !== undefined, `fio's file appeared: ${stderr}`);
  assert.equal(out.code, 130, stderr);
  await new Promise((ok) => setTimeout(ok, 500));
  assert.deepEqual([...Deno.readDirSync(d.path)].map((e) => e.name), [], "nothing left");
});

Deno.test("fio baseline: its writes and reads through our engine at our depth", () => {
  for (const engine of ["io_uring", "libaio"] as const) {
    const cell = { ...CELL, direct: true, engine, iodepth: 16 };
    for (const phase of ["write", "read", "random"] as const) {
      const a = fioArgs(cell, phase);
      const one = (flag: string) => a.filter((x) => x.startsWith(`${flag}=`));
      assert.deepEqual(one("--ioengine"), [`--ioengine=${engine}`], a.join(" "));
      assert.deepEqual(one("--iodepth"), ["--iodepth=16"], a.join(" "));
    }
    // the write's fsync as without a depth: once at its end, inside fio's timing
    const w = fioArgs(cell, "write");
    assert.ok(w.includes("--end_fsync=1") && !w.includes("--fsync=1"), w.join(" "));
    assert.ok(w.includes("--rw=write") && w.includes("--direct=1"), w.join(" "));
  }
  // depth 1 with an engine: that engine, fio's default depth
  const d1 = fioArgs({ ...CELL, engine: "io_uring", iodepth: 1 }, "write");
  assert.ok(d1.includes("--ioengine=io_uring") && !d1.some((x) => x.startsWith("--iodepth")));
  for (const phase of ["write", "read", "random"] as const) {
    const plain = fioArgs(CELL, phase);
    assert.ok(plain.includes("--ioengine=psync") && !plain.some((x) => x.startsWith("--iodepth")));
  }
});
