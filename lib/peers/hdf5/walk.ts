/**
 * What the two HDF5 readers (reader.ts, catalog.ts) share when they walk a file sciobench did not
 * write: a group's links listed in one pass (H5Literate, so a group of n links costs O(n), not the
 * O(n^2) of asking for each name by index), whether a dataset's storage was ever written (so no
 * work is spent on extents that hold nothing), and the check of external raw-data files (inside
 * the file's own directory unless allowed, and never a device, FIFO or socket).
 * @module
 */
import { FormatError } from "../../core/errors.ts";
import { cString } from "../../sys/libc.ts";
import { cStringAt, decodeCBuffer } from "../common.ts";
import type { Hdf5 } from "./bindings.ts";
import { checkFile, errorSummary, H5_ITER_INC, H5O_INFO_BASIC, NAME } from "./bindings.ts";

/** One link of a group: its name and `H5L_type_t` (0 hard, 1 soft, 64 external, more: user). */
export interface GroupLink {
  /** The link's name in its group. */
  readonly name: string;
  /** `H5L_type_t` of the link. */
  readonly type: number;
}

let collected: GroupLink[] = [];
let iterator:
  | Deno.UnsafeCallback<
    { parameters: ["i64", "pointer", "pointer", "pointer"]; result: "i32" }
  >
  | undefined;

/** Every link of `group` in `index` order (H5_INDEX_NAME or H5_INDEX_CRT_ORDER), in one pass. */
export function groupLinks(lib: Hdf5, group: bigint, index: number, path: string): GroupLink[] {
  iterator ??= new Deno.UnsafeCallback(
    { parameters: ["i64", "pointer", "pointer", "pointer"], result: "i32" } as const,
    (_group, name, info) => {
      const type = info === null ? -1 : new Deno.UnsafePointerView(info).getInt32(0);
      collected.push({ name: cStringAt(name), type });
      return 0;
    },
  );
  collected = [];
  try {
    checkFile(
      lib,
      lib.fn.H5Literate(group, index, H5_ITER_INC, null, iterator.pointer, null),
      "H5Literate",
      path,
    );
    return collected;
  } finally {
    collected = [];
  }
}

/** HDF5 1.10 `H5O_type_t` of a group. */
export const H5O_TYPE_GROUP = 0;
/** HDF5 1.10 `H5O_type_t` of a dataset. */
export const H5O_TYPE_DATASET = 1;

const objectInfoBuf = new BigUint64Array(64); // H5O_info_t of 1.10 (about 160 bytes)

/**
 * The `H5O_type_t` and file address of the object `name` names in `loc`, found through the
 * access list `lapl` (see {@link accessList}) without opening the object, or undefined when the
 * link leads nowhere (dangling, or through an external link). Opening only after knowing the
 * type lets every dataset be opened with one access list (HDF5 refuses a second list for a
 * dataset already open).
 */
export function objectInfo(
  lib: Hdf5,
  loc: bigint,
  name: Uint8Array,
  lapl: bigint,
): { type: number; address: bigint } | undefined {
  if (lib.fn.H5Oget_info_by_name2(loc, name, objectInfoBuf, H5O_INFO_BASIC, lapl) < 0) {
    errorSummary(lib);
    return undefined;
  }
  const type = new DataView(objectInfoBuf.buffer).getInt32(16, true);
  return { type, address: objectInfoBuf[1]! };
}

/** HDF5 1.10 layouts by `H5D_layout_t` value that can be partly unwritten. */
const CONTIGUOUS = 1;
const CHUNKED = 2;

/**
 * Why a dataset holds no data of its own, or undefined when all of it is stored: a contiguous
 * dataset never allocated, or a chunked one with fewer chunks written than its extent has
 * (HDF5 would hand back the fill value: bytes no device delivered). Work: O(chunks written).
 */
export function unwritten(
  lib: Hdf5,
  dset: bigint,
  layout: number,
  shape: readonly number[],
  chunk: readonly number[] | undefined,
  storedBytes: number,
  external: boolean,
): string | undefined {
  if (external || shape.some((n) => n === 0)) return undefined;
  if (layout === CONTIGUOUS) return storedBytes === 0 ? "never written" : undefined;
  if (layout !== CHUNKED || !chunk || chunk.length !== shape.length) return undefined;
  let grid = 1;
  for (let k = 0; k < shape.length; k++) grid *= Math.ceil(shape[k]! / Math.max(1, chunk[k]!));
  if (storedBytes === 0) return `0 of ${grid} chunks written`;
  const n = new BigUint64Array(1);
  // The whole extent (1.10.8 refuses H5S_ALL here).
  const space = lib.fn.H5Dget_space(dset);
  const status = space < 0n ? -1 : lib.fn.H5Dget_num_chunks(dset, space, n);
  if (space >= 0n) lib.fn.H5Sclose(space);
  if (status < 0) {
    errorSummary(lib);
    return undefined;
  }
  const written = Number(n[0]!);
  return written < grid ? `${written} of ${grid} chunks written` : undefined;
}

/** True when `path` is `dir` or below it (both real paths). */
function inside(path: string, dir: string): boolean {
  return path === dir || path.startsWith(dir.endsWith("/") ? dir : `${dir}/`);
}

/** The directory of a real path. */
function dirOf(path: string): string {
  const slash = path.lastIndexOf("/");
  return slash <= 0 ? "/" : path.slice(0, slash);
}

/**
 * Checks the external raw-data files of a dataset (its creation property list `dcpl`) before
 * the library opens any: each must be a regular file (never a device, FIFO or socket) and,
 * unless `allowExternal`, inside the directory of the HDF5 file. FormatError (exit 2) naming the
 * dataset and the external file otherwise. Returns true when the dataset has external storage.
 * Relative names are resolved against the HDF5 file's directory, where {@link accessList} with
 * `origin` makes the library look (without it, against the working directory too).
 */
export function checkExternal(
  lib: Hdf5,
  dcpl: bigint,
  path: string,
  dataset: string,
  allowExternal: boolean,
  origin = true,
): boolean {
  const fn = lib.fn;
  const count = fn.H5Pget_external_count(dcpl);
  if (count <= 0) return false;
  // The library resolves a relative name against the directory of the path as opened.
  const base = dirOf(path.startsWith("/") ? path : `${Deno.cwd()}/${path}`);
  const home = Deno.realPathSync(base);
  const nameBuf = new Uint8Array(4097);
  const offset = new BigInt64Array(1);
  const size = new BigUint64Array(1);
  for (let i = 0; i < count; i++) {
    nameBuf.fill(0);
    checkFile(
      lib,
      fn.H5Pget_external(dcpl, i, BigInt(nameBuf.length - 1), nameBuf, offset, size),
      `H5Pget_external '${dataset}'`,
      path,
    );
    const name = decodeCBuffer(nameBuf);
    // Without `${ORIGIN}` (a file libnetcdf has open) the library may resolve a relative name
    // against the working directory: both places are checked.
    const targets = name.startsWith("/")
      ? [name]
      : origin
      ? [`${base}/${name}`]
      : [`${base}/${name}`, `${Deno.cwd()}/${name}`];
    const refuse = (why: string): never => {
      throw new FormatError(
        NAME,
        path,
        -1,
        `dataset '${dataset}' keeps its data in external file '${name}', ${why}`,
      );
    };
    let found = 0;
    for (const target of targets) {
      let real: string;
      let info: Deno.FileInfo;
      try {
        real = Deno.realPathSync(target);
        info = Deno.statSync(real);
      } catch {
        continue;
      }
      found++;
      if (!info.isFile) {
        refuse("which is not a regular file (a device, FIFO or socket is never read)");
      }
      if (!allowExternal && !inside(real, home)) {
        refuse(`outside the file's directory ${home} (give --allow-external to read it)`);
      }
    }
    if (found === 0) refuse("which does not exist");
  }
  return true;
}

let refuseExternal:
  | Deno.UnsafeCallback<
    {
      parameters: ["pointer", "pointer", "pointer", "pointer", "pointer", "i64", "pointer"];
      result: "i32";
    }
  >
  | undefined;

/**
 * The access property list every object of a file being read is opened with: with `origin` it
 * makes the library look for external raw-data files in the HDF5 file's own directory
 * (`${ORIGIN}`, where {@link checkExternal} looked; not for a file another library such as
 * libnetcdf has open, whose datasets are open without it), and it fails the traversal of any external link (also one reached
 * through a soft link) before the library opens the file it names. A dataset access list, which
 * is a link access list too (H5Oopen, H5Dopen2).
 */
export function accessList(lib: Hdf5, path: string, origin = true): bigint {
  const fn = lib.fn;
  refuseExternal ??= new Deno.UnsafeCallback(
    {
      parameters: ["pointer", "pointer", "pointer", "pointer", "pointer", "i64", "pointer"],
      result: "i32",
    } as const,
    () => -1,
  );
  const dapl = checkFile(lib, fn.H5Pcreate(lib.datasetAccess), "H5Pcreate", path);
  if (
    (origin && fn.H5Pset_efile_prefix(dapl, cString("${ORIGIN}")) < 0) ||
    fn.H5Pset_elink_cb(dapl, refuseExternal.pointer, null) < 0
  ) {
    fn.H5Pclose(dapl);
    checkFile(lib, -1, "H5Pset_efile_prefix", path);
  }
  return dapl;
}
