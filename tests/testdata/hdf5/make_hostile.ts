/**
 * Makes two valid but hostile HDF5 files for tests/isolate_test.ts (run from the repository root:
 * deno run -A tests/testdata/hdf5/make_hostile.ts):
 * - selflink.h5: a sciobench table file whose group `particles` holds a hard link `loop` to itself;
 * - sparse.h5: a chunked float32 dataset `particles/position` of extent {1e9, 4, 3} with one frame
 *   written (a file of a few KiB).
 */
import { runCli } from "../../../lib/cli/main.ts";

const dir = new URL(".", import.meta.url).pathname;
const lib = Deno.dlopen("libhdf5_serial.so.103", {
  H5open: { parameters: [], result: "i32" },
  H5Fopen: { parameters: ["buffer", "u32", "i64"], result: "i64" },
  H5Fclose: { parameters: ["i64"], result: "i32" },
  H5Lcreate_hard: { parameters: ["i64", "buffer", "i64", "buffer", "i64", "i64"], result: "i32" },
  H5Dopen2: { parameters: ["i64", "buffer", "i64"], result: "i64" },
  H5Dset_extent: { parameters: ["i64", "buffer"], result: "i32" },
  H5Dclose: { parameters: ["i64"], result: "i32" },
});
const c = (s: string) => new TextEncoder().encode(s + "\0");
const fn = lib.symbols;
fn.H5open();
for (const name of ["selflink.h5", "sparse.h5"]) {
  const path = `${dir}${name}`;
  try {
    Deno.removeSync(path);
  } catch {
    // not there yet
  }
  const args = ["write", "--framing", "hdf5", "--n", "4", "--frames", "1", path];
  if (await runCli(args) !== 0) throw new Error(`writing ${path} failed`);
  const fid = fn.H5Fopen(c(path), 1, 0n);
  if (name === "selflink.h5") {
    if (fn.H5Lcreate_hard(fid, c("/particles"), fid, c("/particles/loop"), 0n, 0n) < 0) {
      throw new Error("H5Lcreate_hard failed");
    }
  } else {
    for (const set of ["position", "orientation"]) {
      const d = fn.H5Dopen2(fid, c(`/particles/${set}`), 0n);
      const dims = new BigUint64Array([1_000_000_000n, 4n, set === "position" ? 3n : 4n]);
      if (fn.H5Dset_extent(d, dims) < 0) throw new Error("H5Dset_extent failed");
      fn.H5Dclose(d);
    }
  }
  fn.H5Fclose(fid);
}
