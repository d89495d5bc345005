/**
 * The table's metadata columns (lib/workloads/metadata.ts): at 4 frames a Zarr row counts its
 * 8 chunk files and 6 metadata files, the directories it made and synced, and the chunk opens of
 * its read phases; a gsd row 1 file and no open while reading; a peer's row (HDF5, whose library
 * makes its own calls) leaves them empty. The time in the calls on names is part of the phase's.
 * @module
 */
import assert from "node:assert/strict";
import { backendByName } from "../lib/backends/registry.ts";
import { runCli, tempDir } from "./_helpers.ts";

Deno.test("table: metadata columns count a zarr store's files, gsd's one file", async () => {
  using tmp = tempDir();
  const hdf5 = backendByName("hdf5").unavailable() === null;
  const r = await runCli([
    ...["table", "--framing", hdf5 ? "zarr,gsd,hdf5" : "zarr,gsd", "--n", "64"],
    ...["--size", "7168", "--no-warmup", "--dir", tmp.path, "--format", "csv"],
  ]);
  assert.equal(r.code, 0, r.stderr);
  const [head, ...lines] = r.stdout.trim().split("\n").map((l) => l.split(","));
  const rows = lines.map((l) => Object.fromEntries(head!.map((h, i) => [h, l[i]!])));
  const zarr = rows.find((row) => row.framing === "zarr")!;
  const gsd = rows.find((row) => row.framing === "gsd")!;
  assert.equal(zarr.frames, "4");
  const counts = (row: Record<string, string>) =>
    [
      row.write_files_created,
      row.write_dirs_created,
      row.write_files_opened,
      row.write_files_synced,
      row.write_dirs_synced,
      row.read_files_opened,
      row.random_files_opened,
    ].map(Number);
  // 2 arrays x 4 chunk files + .zgroup x2, .zarray x2, .zattrs x2; the root, particles and the
  // two arrays' directories; each directory synced before the metadata and after it, the root's
  // parent once; a cold read opens every chunk file
  assert.deepEqual(counts(zarr), [14, 4, 14, 14, 9, 8, 8]);
  // one file, fsynced where gsd 2.7 fsyncs (at its creation, its index, its end), opened once
  // before the read phases
  assert.equal(gsd.frames, "4");
  assert.deepEqual(counts(gsd), [1, 0, 1, 4, 0, 0, 0]);
  for (const row of [zarr, gsd]) {
    for (const phase of ["write", "read", "random"]) {
      const meta = Number(row[`${phase}_meta_s`]);
      assert.ok(meta >= 0 && meta <= Number(row[`${phase}_s`]), `${row.framing} ${phase}`);
    }
  }
  assert.ok(Number(zarr.write_meta_s) > 0);
  if (hdf5) {
    const h = rows.find((row) => row.framing === "hdf5")!;
    assert.equal(h.write_files_opened, "");
    assert.equal(h.read_meta_s, "");
  }
});
