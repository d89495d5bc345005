/**
 * `scaling` over Zarr: the datasets of one file are the frames of one array (`dataset/0`, of shape
 * (n, ...dataset shape), one chunk file per dataset), as in HDF5 and netCDF-4 they are slices of
 * one extendible dataset or variable. The sweep runs beside hdf5 and netcdf4 (where their
 * libraries load); the store a run writes opens in python3-zarr 2.13 with every dataset's values.
 * @module
 */
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { backendByName } from "../lib/backends/registry.ts";
import { datasetArray, runScaling } from "../lib/workloads/scaling/mod.ts";
import { peerTest, PYTHON, pythonZarrMissing, runCli, tempDir } from "./_helpers.ts";

Deno.test("scaling --framing zarr,hdf5,netcdf4: a row per framing and count, no error", async () => {
  using d = tempDir();
  const framings = ["zarr", "hdf5", "netcdf4"].filter((f) =>
    backendByName(f).unavailable() === null
  );
  const r = await runCli([
    ...["scaling", "--framing", framings.join(","), "--datasets", "1..3"],
    ...["--shape", "8x8x8", "--dir", d.path, "--format", "csv"],
  ]);
  assert.equal(r.code, 0, r.stderr);
  const [head, ...lines] = r.stdout.trim().split("\n").map((l) => l.split(","));
  const rows = lines.map((l) => Object.fromEntries(head!.map((h, i) => [h, l[i]!])));
  assert.deepEqual(
    rows.map((x) => `${x.framing}/${x.datasets}/${x.error}`),
    framings.flatMap((f) => [1, 2, 3].map((n) => `${f}/${n}/`)),
  );
  const zarr = rows.filter((x) => x.framing === "zarr");
  // n chunk files of 8^3 float64 plus the metadata of one array and its groups
  for (const [k, row] of zarr.entries()) {
    const data = (k + 1) * 8 ** 3 * 8;
    assert.equal(row.bytes, String(data));
    assert.ok(Number(row.file_bytes) > data && Number(row.file_bytes) < data + 1024);
  }
  assert.deepEqual([...Deno.readDirSync(d.path)], [], "scratch stores removed");
});

/** Python: the arrays of the store argv[1] (shape, dtype) and the sha256 of each dataset. */
const PY_DATASETS = `
import hashlib, json, sys, zarr
root = zarr.open_group(zarr.DirectoryStore(sys.argv[1]), mode="r")
out = {}
def visit(name, a):
    if isinstance(a, zarr.Array):
        out[name] = {"shape": list(a.shape), "dtype": a.dtype.str,
                     "sha256": [hashlib.sha256(a[i].astype("<f8").tobytes()).hexdigest()
                                for i in range(a.shape[0])]}
root.visititems(visit)
print(json.dumps(out))
`;

peerTest(
  "scaling over zarr: python3-zarr opens the store, one array of the datasets, values equal",
  pythonZarrMissing,
  async () => {
    using d = tempDir();
    const kept = `${d.path}/kept.zarr`;
    const shape = [8, 8, 8];
    await runScaling({
      backends: [backendByName("zarr")],
      datasets: [3],
      shape,
      dtype: "float64",
      repeat: 1,
      fsync: "none",
      dir: d.path,
      endian: "little",
    }, {
      // the run's store is removed after it: kept as it is when the run ends
      runEnd: () => {
        new Deno.Command("cp", { args: ["-r", `${d.path}/${scratchOf(d.path)}`, kept] })
          .outputSync();
      },
    });
    const out = await new Deno.Command(PYTHON, {
      args: ["-c", PY_DATASETS, kept],
      stdout: "piped",
      stderr: "piped",
    }).output();
    assert.ok(out.success, new TextDecoder().decode(out.stderr));
    const arrays = JSON.parse(new TextDecoder().decode(out.stdout));
    const data = datasetArray(shape, "float64");
    const want = createHash("sha256")
      .update(new Uint8Array(data.buffer, data.byteOffset, data.byteLength)).digest("hex");
    assert.deepEqual(arrays, {
      "dataset/0": { shape: [3, 8, 8, 8], dtype: "<f8", sha256: [want, want, want] },
    });
    // one chunk file per dataset
    const chunks = [...Deno.readDirSync(`${kept}/dataset/0`)].map((e) => e.name)
      .filter((n) => !n.startsWith(".")).sort();
    assert.deepEqual(chunks, ["0.0.0.0", "1.0.0.0", "2.0.0.0"]);
  },
);

/** The scaling run's scratch directory (the one entry of `dir` other than the kept copy). */
function scratchOf(dir: string): string {
  const scratch = [...Deno.readDirSync(dir)].filter((e) => e.name !== "kept.zarr");
  assert.equal(scratch.length, 1);
  const inner = [...Deno.readDirSync(`${dir}/${scratch[0]!.name}`)]
    .filter((e) => e.name.startsWith("speed."));
  assert.equal(inner.length, 1);
  return `${scratch[0]!.name}/${inner[0]!.name}`;
}
