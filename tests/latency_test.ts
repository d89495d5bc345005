/**
 * Each read phase's latency columns (percentiles and IOPS, from the histogram of its operations'
 * latencies, lib/report/histogram.ts) in real runs: table, read (frames and blocks' phases), and
 * a table under MPI (2 ranks), whose aggregate row merges the ranks' histograms.
 */
import assert from "node:assert/strict";
import { commandMissing, peerTest, runCli, tempDir } from "./_helpers.ts";
import { type JsonDoc, mpiTest, runMpiJson } from "./_mpi.ts";
import { LATENCY_PERCENTILES, LatencyHistogram } from "../lib/report/histogram.ts";
import { LATENCY_COLUMN_NAMES } from "../lib/workloads/columns.ts";

type JsonRow = Record<string, unknown>;

/** Checks `phase`'s latency columns against the row's histogram, its operations and seconds. */
function checkPhase(
  row: JsonRow,
  phase: "read" | "random" | "record",
  ops: number,
  seconds: string,
  ranks = 1,
): void {
  const h = LatencyHistogram.fromJSON(row[`${phase}_latency`]);
  assert.ok(h, `${phase}_latency is a histogram`);
  assert.equal(h.count, ops, `${phase}: one latency per operation`);
  const values = [...LATENCY_PERCENTILES.map((p) => p.suffix), "max"].map((s) =>
    Number(row[`${phase}_${s}_us`])
  );
  assert.ok(values[0]! > 0, `${phase}_p50_us > 0`);
  for (let k = 1; k < values.length; k++) {
    assert.ok(values[k - 1]! <= values[k]!, `${phase}: percentiles in order: ${values}`);
  }
  assert.equal(values.at(-1), h.max / 1000);
  // every operation lies inside the phase: the slowest no longer than it, their sum at most it
  // (at most ranks times it, the ranks reading at once)
  const phaseS = Number(row[seconds]);
  assert.ok(h.max / 1e9 <= phaseS && h.mean * h.count / 1e9 <= ranks * phaseS * 1.0001);
  const iops = Number(row[`${phase}_iops`]);
  assert.ok(Math.abs(iops - ops / phaseS) <= 1e-9 * iops, `${phase}_iops = ops / ${seconds}`);
}

/**
 * Checks `phase`'s pread-call columns: at least one call per operation, each call no longer than
 * the slowest operation that made it, the columns from the histogram.
 */
function checkCalls(row: JsonRow, phase: "read" | "random", ops: number): void {
  const calls = LatencyHistogram.fromJSON(row[`${phase}_call_latency`]);
  const frames = LatencyHistogram.fromJSON(row[`${phase}_latency`])!;
  assert.ok(calls && calls.count >= ops, `${phase}: a pread per operation at least`);
  assert.ok(calls.max <= frames.max);
  assert.equal(row[`${phase}_call_p50_us`], calls.percentile(0.5) / 1000);
  assert.equal(row[`${phase}_call_p99_us`], calls.percentile(0.99) / 1000);
  assert.ok(Number(row[`${phase}_call_p50_us`]) <= Number(row[`${phase}_call_p99_us`]));
}

Deno.test("latency: a table run's rows carry each read phase's percentiles, IOPS and histogram", async () => {
  using dir = tempDir();
  const r = await runCli([
    "table",
    ...["--framing", "raw,gsd", "--size", "1MiB", "--n", "32^2", "--dir", dir.path],
    ...["--format", "json"],
  ]);
  assert.equal(r.code, 0, r.stderr);
  const doc = JSON.parse(r.stdout) as JsonDoc;
  const at = doc.columns.indexOf("read_p50_us");
  assert.deepEqual(doc.columns.slice(at, at + LATENCY_COLUMN_NAMES.length), LATENCY_COLUMN_NAMES);
  assert.equal(doc.rows.length, 2);
  for (const row of doc.rows as JsonRow[]) {
    const frames = Number(row.read_frames);
    assert.ok(frames >= 30);
    checkPhase(row, "read", frames, "read_s");
    checkPhase(row, "random", frames, "random_s");
    checkCalls(row, "read", frames);
    checkCalls(row, "random", frames);
  }
  // CSV has the columns, not the histograms
  const csv = await runCli([
    "table",
    ...["--framing", "raw", "--size", "256KiB", "--n", "32^2", "--dir", dir.path],
    ...["--format", "csv"],
  ]);
  assert.equal(csv.code, 0, csv.stderr);
  const [head, line] = csv.stdout.trim().split("\n");
  const cells = Object.fromEntries(head!.split(",").map((c, k) => [c, line!.split(",")[k]]));
  assert.ok(Number(cells.random_p99_us) > 0 && !head!.includes("_latency"));
});

Deno.test("latency: read's frame phases record each frame's read", async () => {
  using dir = tempDir();
  const file = `${dir.path}/f.gsd`;
  const w = await runCli(["write", "--framing", "gsd", "--size", "1MiB", "--n", "32^2", file]);
  assert.equal(w.code, 0, w.stderr);
  for (const extra of [[], ["--verify", "--cache", "warm"]]) {
    const r = await runCli(["read", file, ...extra, "--format", "json"]);
    assert.equal(r.code, 0, r.stderr);
    const row = (JSON.parse(r.stdout) as JsonDoc).rows[0] as JsonRow;
    checkPhase(row, "read", Number(row.read_frames), "read_s");
    checkPhase(row, "random", Number(row.random_units), "random_s");
    checkCalls(row, "random", Number(row.random_units));
  }
});

Deno.test("latency: each records phase records its records' writes or reads", async () => {
  using dir = tempDir();
  const r = await runCli([
    ...["records", "--framing", "netcdf,hdf5", "--quick", "--dir", dir.path, "--format", "json"],
  ]);
  assert.equal(r.code, 0, r.stderr);
  const runs = ((JSON.parse(r.stdout) as JsonDoc).rows as JsonRow[]).filter((x) =>
    x.stat === "run"
  );
  assert.equal(runs.length, 4);
  for (const row of runs) {
    // one latency a record, inside the phase's wall time
    checkPhase(row, "record", Number(String(row.shape).split("x")[0]), "wall_s");
  }
});

peerTest(
  "latency: read's block phases (a netCDF-4 file without frames) record each block's read",
  () => commandMissing("ncgen"),
  async () => {
    using dir = tempDir();
    const file = `${dir.path}/fixed.nc`;
    const cdl = new URL("./testdata/netcdf/fixed.cdl", import.meta.url).pathname;
    const made = await new Deno.Command("ncgen", { args: ["-k", "nc4", "-o", file, cdl] }).output();
    assert.ok(made.success);
    const r = await runCli(["read", file, "--format", "json"]);
    assert.equal(r.code, 0, r.stderr);
    const row = (JSON.parse(r.stdout) as JsonDoc).rows[0] as JsonRow;
    assert.equal(row.unit, "block");
    checkPhase(row, "read", Number(row.read_frames), "read_s");
    checkPhase(row, "random", Number(row.random_units), "random_s");
  },
);

mpiTest(
  "latency: under MPI the aggregate row's percentiles merge the ranks' histograms",
  async (launcher) => {
    using tmp = tempDir();
    const doc = await runMpiJson(launcher, [
      "table",
      ...["--size", "512KiB", "--n", "1024", "--framing", "raw", "--dir", tmp.path, "--per-rank"],
    ], { nodes: ["a", "b"] });
    const [all, ...ranks] = doc.rows as JsonRow[];
    assert.equal(ranks.length, 2);
    for (const phase of ["read", "random"] as const) {
      const seconds = `${phase === "read" ? "read" : "random"}_s`;
      const merged = new LatencyHistogram();
      for (const r of ranks) merged.merge(LatencyHistogram.fromJSON(r[`${phase}_latency`])!);
      assert.deepEqual(all![`${phase}_latency`], merged.toJSON());
      for (const p of LATENCY_PERCENTILES) {
        assert.equal(all![`${phase}_${p.suffix}_us`], merged.percentile(p.fraction) / 1000);
      }
      checkPhase(all!, phase, Number(all!.read_frames), seconds, 2);
      const calls = new LatencyHistogram();
      for (const r of ranks) calls.merge(LatencyHistogram.fromJSON(r[`${phase}_call_latency`])!);
      assert.deepEqual(all![`${phase}_call_latency`], calls.toJSON());
      checkCalls(all!, phase, Number(all!.read_frames));
    }
  },
);
