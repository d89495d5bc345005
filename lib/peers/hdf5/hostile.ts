/**
 * A small valid HDF5 file holding what files from elsewhere hold and a reader must not trust
 * (the seed `deno task fuzz` mutates as `hdf5x`): an external link to a FIFO and one to a file
 * that is not there, a dataset kept in an external raw-data file, a chunked 1 GiB dataset never
 * written, a chunked dataset with one chunk of four written, a NULL dataspace, and one small
 * written dataset. Written through the HDF5 library, every handle closed.
 * @module
 */
import { cString } from "../../sys/libc.ts";
import { check, h5, H5F_ACC_TRUNC, H5P_DEFAULT, H5S_ALL, H5S_NULL } from "./bindings.ts";

/** Name of the external raw-data file beside the file (256 int32, 1 KiB). */
export const HOSTILE_RAW = "hostile_raw.bin";
/** Name of the FIFO beside the file an external link names. */
export const HOSTILE_FIFO = "hostile_fifo";

/**
 * Writes the hostile file at `path`; `HOSTILE_RAW` beside it is written too, and the caller
 * makes `HOSTILE_FIFO` beside it (mkfifo) when it wants the link to lead to one.
 */
export function writeHostileHdf5(path: string): void {
  const lib = h5();
  const fn = lib.fn;
  const dir = path.includes("/") ? path.slice(0, path.lastIndexOf("/")) : ".";
  const raw = new Int32Array(256).map((_, i) => i * 7);
  Deno.writeFileSync(`${dir}/${HOSTILE_RAW}`, new Uint8Array(raw.buffer));
  const file = check(
    lib,
    fn.H5Fcreate(cString(path), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT),
    "H5Fcreate",
    path,
  );
  const closers: (() => void)[] = [() => fn.H5Fclose(file)];
  const keep = <T extends bigint>(id: T, close: (id: bigint) => number, call: string): T => {
    check(lib, id, call, path);
    closers.push(() => close(id));
    return id;
  };
  try {
    const int8 = lib.native.int8;
    const int32 = lib.native.int32;
    for (const [name, target] of [["to_fifo", HOSTILE_FIFO], ["to_nothing", "absent.h5"]]) {
      check(
        lib,
        fn.H5Lcreate_external(cString(target!), cString("/x"), file, cString(name!), 0n, 0n),
        "H5Lcreate_external",
        path,
      );
    }
    const dims = (...d: number[]) => BigUint64Array.from(d, BigInt);
    const space256 = keep(fn.H5Screate_simple(1, dims(256), null), fn.H5Sclose, "H5Screate");
    const ext = keep(fn.H5Pcreate(lib.datasetCreate), fn.H5Pclose, "H5Pcreate");
    check(lib, fn.H5Pset_external(ext, cString(HOSTILE_RAW), 0n, 1024n), "H5Pset_external", path);
    keep(
      fn.H5Dcreate2(file, cString("external"), int32, space256, 0n, ext, 0n),
      fn.H5Dclose,
      "H5Dcreate2 external",
    );
    const big = keep(fn.H5Screate_simple(1, dims(2 ** 30), null), fn.H5Sclose, "H5Screate");
    const chunked = keep(fn.H5Pcreate(lib.datasetCreate), fn.H5Pclose, "H5Pcreate");
    check(lib, fn.H5Pset_chunk(chunked, 1, dims(2 ** 20)), "H5Pset_chunk", path);
    check(lib, fn.H5Pset_fill_time(chunked, 1), "H5Pset_fill_time", path); // never
    keep(
      fn.H5Dcreate2(file, cString("sparse"), int8, big, 0n, chunked, 0n),
      fn.H5Dclose,
      "H5Dcreate2 sparse",
    );
    const space4k = keep(fn.H5Screate_simple(1, dims(4096), null), fn.H5Sclose, "H5Screate");
    const quarter = keep(fn.H5Pcreate(lib.datasetCreate), fn.H5Pclose, "H5Pcreate");
    check(lib, fn.H5Pset_chunk(quarter, 1, dims(1024)), "H5Pset_chunk", path);
    const partial = keep(
      fn.H5Dcreate2(file, cString("partial"), int32, space4k, 0n, quarter, 0n),
      fn.H5Dclose,
      "H5Dcreate2 partial",
    );
    const mem = keep(fn.H5Screate_simple(1, dims(1024), null), fn.H5Sclose, "H5Screate");
    const fspace = keep(fn.H5Screate_simple(1, dims(4096), null), fn.H5Sclose, "H5Screate");
    check(
      lib,
      fn.H5Sselect_hyperslab(fspace, 0, dims(0), null, dims(1024), null),
      "H5Sselect_hyperslab",
      path,
    );
    const quarterData = new Int32Array(1024).map((_, i) => i);
    check(
      lib,
      fn.H5Dwrite(partial, int32, mem, fspace, 0n, new Uint8Array(quarterData.buffer)),
      "H5Dwrite partial",
      path,
    );
    const nothing = keep(fn.H5Screate(H5S_NULL), fn.H5Sclose, "H5Screate");
    keep(
      fn.H5Dcreate2(file, cString("nothing"), int32, nothing, 0n, 0n, 0n),
      fn.H5Dclose,
      "H5Dcreate2 nothing",
    );
    const small = keep(
      fn.H5Dcreate2(file, cString("small"), int32, space256, 0n, 0n, 0n),
      fn.H5Dclose,
      "H5Dcreate2 small",
    );
    check(
      lib,
      fn.H5Dwrite(small, int32, H5S_ALL, H5S_ALL, 0n, new Uint8Array(raw.buffer)),
      "H5Dwrite small",
      path,
    );
  } finally {
    for (const close of closers.reverse()) close();
  }
}
