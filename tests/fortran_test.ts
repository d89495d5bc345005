/**
 * gfortran program peers: the seed's own `wr` and `rd` (seed 001) and the IOspeed-style F77
 * writer, compiled from the sources sciobench carries. Their files are byte-identical to the f77
 * framing's; `rd` checks every record (a(n) = i and the whole pattern); `readers` runs them.
 */
import assert from "node:assert/strict";
import { backendByName } from "../lib/backends/registry.ts";
import { fortranProgram, gfortranUnavailable } from "../lib/baselines/gfortran/compile.ts";
import { f77Gfortran } from "../lib/peers/gfortran/mod.ts";
import { writeFrames } from "../lib/backends/write.ts";
import { datasetArray } from "../lib/workloads/scaling/mod.ts";
import { packmanPattern, writePackmanFile } from "../lib/workloads/readers/mod.ts";
import { peerTest, runCli, tempDir } from "./_helpers.ts";

const LENGTH = 13000;
const RECORDS = 10;

function writePattern(path: string, length: number, seed: number, fileIndex: number): void {
  const p = packmanPattern(length, seed, fileIndex).subarray(0, length - 1);
  Deno.writeFileSync(path, new Uint8Array(p.buffer, p.byteOffset, p.byteLength));
}

async function run(exe: string, args: string[]) {
  const child = new Deno.Command(exe, {
    args,
    stdin: "piped",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const w = child.stdin.getWriter();
  try {
    await w.write(new TextEncoder().encode("go\n")); // the start barrier (rd)
    await w.close();
  } catch {
    // wr does not read its input and may have exited already
  }
  const out = await child.output();
  const dec = new TextDecoder();
  return { code: out.code, stdout: dec.decode(out.stdout), stderr: dec.decode(out.stderr) };
}

peerTest(
  "gfortran wr writes the f77 framing's bytes; rd checks a(n) = i and the whole pattern",
  gfortranUnavailable,
  async () => {
    using d = tempDir();
    const pattern = `${d.path}/pattern.f64`;
    writePattern(pattern, LENGTH, 1, 0);
    const fortran = `${d.path}/wr.f77`;
    const wr = await run(fortranProgram("wr"), [fortran, String(RECORDS), String(LENGTH), pattern]);
    assert.equal(wr.code, 0, wr.stderr);
    const ours = `${d.path}/ours.f77`;
    writePackmanFile(backendByName("f77"), ours, {
      records: RECORDS,
      length: LENGTH,
      seed: 1,
      fileIndex: 0,
      endian: "native",
      backendOptions: {},
    });
    const a = Deno.readFileSync(fortran);
    const b = Deno.readFileSync(ours);
    assert.equal(a.length, RECORDS * (LENGTH * 8 + 8));
    assert.deepEqual(a, b, "gfortran's file and the f77 framing's are byte-identical");

    // The seed's wr without a pattern: zeros and a(n) = i, as fortran.md §6.2 lays it out.
    const plain = `${d.path}/plain.f77`;
    assert.equal((await run(fortranProgram("wr"), [plain, "10", "130000"])).code, 0);
    const bytes = Deno.readFileSync(plain);
    assert.equal(bytes.length, 10_400_080);
    const view = new DataView(bytes.buffer);
    assert.equal(view.getInt32(0, true), 1_040_000);
    assert.equal(view.getFloat64(bytes.length - 12, true), 10);

    const rd = fortranProgram("rd");
    const ok = await run(rd, [fortran, String(RECORDS), String(LENGTH), pattern]);
    assert.equal(ok.code, 0, ok.stderr);
    const [ready, json] = ok.stdout.trim().split("\n");
    assert.equal(ready, "ready");
    const report = JSON.parse(json!);
    assert.equal(report.records, RECORDS);
    assert.equal(report.bytes, a.length);
    assert.ok(report.t1Ns > report.t0Ns && report.wallS > 0);

    // One element in the middle of record 4 changed: the pattern check finds it.
    const bad = a.slice();
    const at = 3 * (LENGTH * 8 + 8) + 4 + 8 * 100;
    bad[at + 3] = bad[at + 3]! ^ 0x10;
    Deno.writeFileSync(fortran, bad);
    const middle = await run(rd, [fortran, String(RECORDS), String(LENGTH), pattern]);
    assert.equal(middle.code, 1);
    assert.match(middle.stderr, /record 4 element 101 differs from the pattern/);
    // a(n) of record 3 changed: the seed's own check.
    const last = a.slice();
    const atLast = 2 * (LENGTH * 8 + 8) + 4 + 8 * (LENGTH - 1);
    new DataView(last.buffer).setFloat64(atLast, 7, true);
    Deno.writeFileSync(fortran, last);
    const seedCheck = await run(rd, [fortran, String(RECORDS), String(LENGTH)]);
    assert.equal(seedCheck.code, 1);
    assert.match(seedCheck.stderr, / i= 3 bad value = 7\.00000D\+00/);
  },
);

peerTest(
  "readers runs gfortran rd processes by default, sciobench's with --reader sciobench; --file",
  gfortranUnavailable,
  async () => {
    using d = tempDir();
    const base = ["readers", "--procs", "1,2", "--length", "13000", "--dir", d.path];
    const r = await runCli([...base, "--format", "json"]);
    assert.equal(r.code, 0, r.stderr);
    const rows = JSON.parse(r.stdout).rows as Record<string, unknown>[];
    assert.deepEqual(rows.map((x) => [x["mode"], x["procs"], x["reader"]]), [
      ["shared", 1, "gfortran"],
      ["shared", 2, "gfortran"],
      ["separate", 1, "gfortran"],
      ["separate", 2, "gfortran"],
    ]);
    assert.ok(rows.every((x) => x["reader_bytes"] === Number(x["procs"]) * 10 * (13000 * 8 + 8)));
    const own = await runCli([...base, "--reader", "sciobench", "--mode", "shared"]);
    assert.equal(own.code, 0, own.stderr);
    assert.match(
      own.stdout.trim().split("\n")[1]!,
      /,sciobench,1,true,,0,false,false,psync,1,run,$/,
    );

    // A user's own Fortran file: read as it is, never written or removed.
    const file = `${d.path}/user.f77`;
    assert.equal((await run(fortranProgram("wr"), [file, "5", "2000"])).code, 0);
    const before = Deno.readFileSync(file);
    const u = await runCli(["readers", "--file", file, "--procs", "1..3", "--format", "json"]);
    assert.equal(u.code, 0, u.stderr);
    const urows = JSON.parse(u.stdout).rows as Record<string, unknown>[];
    assert.deepEqual(urows.map((x) => [x["mode"], x["procs"], x["records"], x["length"]]), [
      ["shared", 1, 5, 2000],
      ["shared", 2, 5, 2000],
      ["shared", 3, 5, 2000],
    ]);
    assert.deepEqual(Deno.readFileSync(file), before);
    const plan = await runCli(["readers", "--file", file, "--dry-run", "--format", "json"]);
    assert.equal(JSON.parse(plan.stdout).write_bytes, 0);
  },
);

peerTest(
  "scaling --framing f77-gfortran: the Fortran runtime writes the f77 framing's bytes, timed",
  gfortranUnavailable,
  async () => {
    using d = tempDir();
    const shape = [8, 8, 8];
    const data = datasetArray(shape, "float64");
    const bytes = new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
    const fortran = `${d.path}/speed.f77-gfortran`;
    const sample = await f77Gfortran.measureDatasetWrites!({
      path: fortran,
      datasets: 3,
      data: bytes,
      dtype: "float64",
    });
    assert.ok(sample.wallS > 0 && sample.userS >= 0);
    const ours = `${d.path}/speed.f77`;
    const chunks = [{ name: "dataset/0", dtype: "float64" as const, shape, data }];
    await writeFrames(
      backendByName("f77"),
      ours,
      { create: "truncate", fsync: "none" },
      3,
      (i) => ({ step: i, chunks }),
    );
    assert.deepEqual(Deno.readFileSync(fortran), Deno.readFileSync(ours), "byte-identical");
    assert.equal(Deno.statSync(fortran).size, 3 * (512 * 8 + 8));

    const r = await runCli([
      ...["scaling", "--framing", "f77,f77-gfortran", "--datasets", "1,2", "--shape", "8x8x8"],
      ...["--dir", d.path, "--format", "json"],
    ]);
    assert.equal(r.code, 0, r.stderr);
    const rows = JSON.parse(r.stdout).rows as Record<string, unknown>[];
    assert.deepEqual(rows.map((x) => [x["framing"], x["datasets"], x["file_bytes"]]), [
      ["f77", 1, 4104],
      ["f77", 2, 8208],
      ["f77-gfortran", 1, 4104],
      ["f77-gfortran", 2, 8208],
    ]);
    const bad = await runCli(["scaling", "--framing", "f77-gfortran", "--type", "float32"]);
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /^sciobench: error: --type float32: f77-gfortran writes float64 only/);
  },
);
