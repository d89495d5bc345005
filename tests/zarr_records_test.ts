/**
 * `records` over Zarr beside netCDF classic (and netCDF-4 and HDF5 where their libraries are
 * installed): every record a chunk file of its own, written one by one, dropped from the cache
 * and read back record by record (each verified); the rows of each framing's write and read phases, cold, the
 * store's size its chunk files and metadata, nothing left in the scratch directory.
 * @module
 */
import assert from "node:assert/strict";
import { backendByName } from "../lib/backends/registry.ts";
import { runCli, tempDir } from "./_helpers.ts";

Deno.test("records --framing zarr,netcdf,...: a write and a cold read row per framing", async () => {
  using d = tempDir();
  const framings = ["zarr", "netcdf", "netcdf4", "hdf5"].filter((f) =>
    backendByName(f).unavailable() === null
  );
  const r = await runCli([
    ...["records", "--shape", "6x30x50", "--framing", framings.join(",")],
    ...["--endian", "big", "--dir", d.path, "--format", "csv"],
  ]);
  assert.equal(r.code, 0, r.stderr);
  const [head, ...lines] = r.stdout.trim().split("\n").map((l) => l.split(","));
  const rows = lines.map((l) => Object.fromEntries(head!.map((h, i) => [h, l[i]!])));
  assert.deepEqual(
    rows.map((x) => `${x.framing}/${x.phase}`),
    framings.flatMap((f) => [`${f}/write`, `${f}/read`]),
  );
  const data = 6 * 30 * 50 * 4;
  for (const row of rows) {
    assert.equal(row.bytes, String(data), row.framing);
    assert.ok(Number(row.MiBps) > 0, `${row.framing} ${row.phase}`);
    assert.ok(Number(row.record_iops) > 0, `${row.framing} ${row.phase}`);
  }
  const zarr = rows.filter((x) => x.framing === "zarr");
  // six chunk files of 30x50 float32 plus the metadata (.zgroup, .zarray, .zattrs)
  const size = Number(zarr[0]!.file_bytes);
  assert.ok(size > data && size < data + 1024, `zarr store of ${size} bytes`);
  if (zarr[1]!.cold_why === "") assert.equal(zarr[1]!.cold_ok, "true");
  assert.deepEqual([...Deno.readDirSync(d.path)], [], "scratch stores removed");
});
