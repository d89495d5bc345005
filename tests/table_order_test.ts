import assert from "node:assert/strict";
import { backendByName } from "../lib/backends/registry.ts";
import { Progress } from "../lib/report/progress.ts";
import type { Row } from "../lib/report/row.ts";
import { auditOf } from "../lib/sys/audit.ts";
import { statfs } from "../lib/sys/libc.ts";
import { backendOrder, runTable } from "../lib/workloads/table/mod.ts";
import { addIoRates } from "../lib/workloads/table/io_rates.ts";
import { addFioColumns } from "../lib/workloads/table/fio.ts";
import { WARM_UP_PHASE } from "../lib/workloads/table/warm_up.ts";
import { WARM_UP_CELL_PHASE } from "../lib/workloads/table/cell.ts";
import { recordsRow, recordsTargets, runRecords } from "../lib/workloads/records/mod.ts";
import { tempDir } from "./_helpers.ts";

function diskDir(): { path: string } & Disposable {
  const d = tempDir("sciobench-order-");
  const fs = statfs(d.path);
  if (fs.inMemory) throw new Error(`${d.path} is on ${fs.typeName}: these tests need a disk`);
  return d;
}

/** Two repeats of raw and gsd, one small cell each. */
async function twoRepeats(dir: string): Promise<Row[]> {
  const rows: Row[] = [];
  await runTable({
    backends: ["raw", "gsd"].map(backendByName),
    sizes: [256 * 1024],
    ns: [1024],
    dir,
    repeat: 2,
    seed: 7,
    warmup: false,
    sampleBytes: 128 * 1024,
    progress: new Progress({ quiet: true }),
  }, (row) => rows.push(row));
  return rows;
}

Deno.test("table order: the backends' order alternates between repeats (A B, then B A)", () => {
  assert.deepEqual(backendOrder(["a", "b", "c"], 1), ["a", "b", "c"]);
  assert.deepEqual(backendOrder(["a", "b", "c"], 2), ["c", "b", "a"]);
  assert.deepEqual(backendOrder(["a", "b", "c"], 3), ["a", "b", "c"]);
});

Deno.test("table: the cell's warm-up writes the whole file, reads it all back untimed, then removes it", async () => {
  using d = diskDir();
  const rows: Row[] = [];
  const size = 256 * 1024;
  await runTable({
    backends: [backendByName("raw")],
    sizes: [size],
    ns: [1024],
    dir: d.path,
    repeat: 1,
    seed: 7,
    warmup: true,
    sampleBytes: 128 * 1024,
    progress: new Progress({ quiet: true }),
  }, (row) => rows.push(row));
  const phases = auditOf(rows[0]!)!.phases;
  const warm = phases.findIndex((p) => p.name === WARM_UP_CELL_PHASE);
  const write = phases.findIndex((p) => p.name === "write");
  assert.ok(warm >= 0 && warm < write, "the cell's warm-up precedes its timed write");
  assert.equal(phases[warm]!.timed, false);
  const file = phases[warm]!.files.find((f) => f.path.endsWith("/table.raw"));
  assert.ok(file, "the warm-up wrote the cell's file");
  assert.ok(file.writeBytes >= size, `written ${file.writeBytes} of ${size}`);
  // every frame read back, not the sample the timed phases read
  const data = Number(rows[0]!.data_bytes);
  assert.ok(Number(rows[0]!.read_bytes) < data / 2, "the timed phases read a sample");
  assert.ok(file.readBytes >= data, `read back ${file.readBytes} of ${data}`);
});

Deno.test("table order: rows say their place, the warm-up is untimed in the first cell's trail, io rates", async () => {
  using d = diskDir();
  const rows = await twoRepeats(d.path);
  assert.deepEqual(
    rows.map((r) => [r.repeat, r.framing, r.order]),
    [[1, "raw", 1], [1, "gsd", 2], [2, "gsd", 1], [2, "raw", 2]],
  );
  // every backend's write and read path ran once before the first timed phase, untimed
  const first = auditOf(rows[0]!)!;
  const timed = first.phases.findIndex((p) => p.timed);
  const warmUp = first.phases.findIndex((p) => p.name === WARM_UP_PHASE);
  assert.ok(warmUp >= 0 && warmUp < timed, "the warm-up precedes the first timed phase");
  assert.equal(first.phases[warmUp]!.timed, false, "the warm-up is untimed");
  for (const name of ["raw", "gsd"]) {
    const warm = first.phases[warmUp]!.files.filter((f) => f.path.endsWith(`/warm-up.${name}`));
    assert.ok(warm.some((f) => f.writeBytes > 0), `${name}'s warm-up file was written`);
    assert.ok(warm.some((f) => f.readBytes > 0), `${name}'s warm-up file was read`);
  }
  for (const row of rows) {
    const phases = auditOf(row)!.phases;
    assert.ok(
      phases.filter((p) => p.timed).every((p) => p.files.every((f) => !f.path.includes("warm-up"))),
      "no timed phase touches a warm-up file",
    );
    if (row !== rows[0]) {
      assert.ok(
        phases.every((p) => p.files.every((f) => !f.path.includes("warm-up"))),
        "the warm-up runs once, before the first cell",
      );
    }
    // the rate of the I/O calls alone: the phase without the verification the thread did
    const io = Number(row.read_bytes) / 2 ** 20 / (Number(row.read_s) - Number(row.read_verify_s));
    assert.ok(Math.abs(Number(row.read_io_MiBps) - io) <= io * 1e-12);
    assert.ok(Number(row.read_io_MiBps) > Number(row.read_MiBps), "verification took time");
    assert.ok(Number(row.random_io_MiBps) > Number(row.random_MiBps));
  }
});

Deno.test("table io rates: at least the verified rate, equal without verification", () => {
  const row: Row = {
    "read_bytes": 2 ** 20,
    "read_s": 0.5,
    "read_verify_s": 0.25,
    "random_s": 1,
    "random_verify_s": 0,
  };
  addIoRates(row);
  assert.equal(row.read_io_MiBps, 4);
  assert.equal(row.random_io_MiBps, 1);
  // a peer's row without verification times: the rate of the whole phase
  const bare: Row = { "read_bytes": 2 ** 20, "read_s": 0.5, "read_verify_s": "", "random_s": 2 };
  addIoRates(bare);
  assert.equal(bare.read_io_MiBps, 2);
  assert.equal(bare.random_io_MiBps, 0.5);
  // no time left: no rate
  const odd: Row = { "read_bytes": 2 ** 20, "read_s": 0.5, "read_verify_s": 0.5, "random_s": "" };
  addIoRates(odd);
  assert.equal(odd.read_io_MiBps, "");
  assert.equal(odd.random_io_MiBps, "");
});

Deno.test("table io rates: fio's read efficiencies compare the io rates, like with like", () => {
  const row: Row = {
    "write_MiBps": 50,
    "read_MiBps": 100,
    "random_MiBps": 40,
    "read_io_MiBps": 200,
    "random_io_MiBps": 80,
  };
  addFioColumns(row, {
    writeMiBps: 100,
    readMiBps: 400,
    randomMiBps: 160,
    writeBlockBytes: 4096,
    readBlockBytes: 4096,
    hugePages: false,
  });
  assert.equal(row.efficiency_write, 0.5);
  assert.equal(row.efficiency_read, 0.5);
  assert.equal(row.efficiency_random, 0.5);
});

Deno.test("records order: the targets' order alternates between repeats, each row says its place", async () => {
  using d = diskDir();
  const shape = [4, 16];
  const runs = await runRecords({
    targets: recordsTargets(["raw", "f77"].map(backendByName), ["native"]),
    shape,
    dtype: "float32",
    repeat: 2,
    dir: d.path,
    seed: 3,
  });
  const rows = runs.map((run) => recordsRow(run, shape));
  assert.deepEqual(
    rows.map((r) => `${r.repeat} ${r.framing} ${r.phase} ${r.order}`),
    [
      "1 raw write 1",
      "1 raw read 1",
      "1 f77 write 2",
      "1 f77 read 2",
      "2 f77 write 1",
      "2 f77 read 1",
      "2 raw write 2",
      "2 raw read 2",
    ],
  );
});
