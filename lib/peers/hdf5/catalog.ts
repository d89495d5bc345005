/**
 * Every dataset of any HDF5 file (netCDF-4 files included) through the HDF5 library: a walk of
 * all groups from `/` that visits each object once (hard links to an object already seen, cycles
 * included, become aliases; soft links are followed, external links are listed and not followed),
 * with each dataset's type (numeric or its class), shape, layout, chunk shape, filters, offset
 * and stored size; numeric datasets can be read by region in native byte order.
 * @module
 */
import type { DatasetInfo, FrameSource } from "../../backends/backend.ts";
import { FormatError, IoError } from "../../core/errors.ts";
import type { DType } from "../../framings/types.ts";
import { DTYPE_SIZE, DTYPES } from "../../framings/types.ts";
import { cString } from "../../sys/libc.ts";
import { decodeCBuffer } from "../common.ts";
import type { Hdf5 } from "./bindings.ts";
import {
  accessList,
  checkExternal,
  groupLinks,
  H5O_TYPE_DATASET,
  H5O_TYPE_GROUP,
  objectInfo,
  unwritten,
} from "./walk.ts";
import {
  checkFile as check,
  errorSummary,
  H5_INDEX_NAME,
  H5D_LAYOUT_NAMES,
  H5F_ACC_RDONLY,
  H5L_TYPE_HARD,
  H5L_TYPE_SOFT,
  H5O_INFO_BASIC,
  H5P_DEFAULT,
  H5S_ALL,
  H5S_NULL,
  H5S_SELECT_SET,
  H5T_CLASS_NAMES,
  H5T_FLOAT,
  H5T_INTEGER,
  H5T_SGN_NONE,
  HADDR_UNDEF,
  NAME,
} from "./bindings.ts";

/** The numeric {@link DType} of an HDF5 type, or the reason it is not one (its class). */
export function numericType(lib: Hdf5, type: bigint): DType | string {
  const fn = lib.fn;
  const cls = fn.H5Tget_class(type);
  const size = Number(fn.H5Tget_size(type));
  if (cls === H5T_FLOAT && (size === 4 || size === 8)) return size === 4 ? "float32" : "float64";
  if (cls === H5T_INTEGER && [1, 2, 4, 8].includes(size)) {
    return `${fn.H5Tget_sign(type) === H5T_SGN_NONE ? "uint" : "int"}${size * 8}` as DType;
  }
  const name = H5T_CLASS_NAMES[cls] ?? `class ${cls}`;
  return cls === H5T_FLOAT || cls === H5T_INTEGER ? `${size}-byte ${name}` : name;
}

/** HDF5 filter names by filter id (H5Pget_filter2), as h5dump names them. */
export const FILTER_NAMES: Readonly<Record<number, string>> = {
  1: "deflate",
  2: "shuffle",
  3: "fletcher32",
  4: "szip",
  5: "nbit",
  6: "scaleoffset",
};

interface Listed {
  readonly rank: number;
  readonly dtype?: DType;
}

interface Live {
  readonly id: bigint;
  readonly space: bigint;
}

/**
 * Most datasets a catalog keeps open for reading (least recently read closed first): an open
 * dataset costs the library about 12 KiB, so a file of 100,000 stays in bounded memory.
 */
export const MAX_OPEN_DATASETS = 256;

/** What a dataset's `NAME` attribute says, when it is a fixed-length string (netCDF-4 dimensions). */
function nameAttribute(lib: Hdf5, id: bigint): string | undefined {
  const fn = lib.fn;
  if (fn.H5Aexists(id, cString("NAME")) <= 0) return undefined;
  const attr = fn.H5Aopen(id, cString("NAME"), H5P_DEFAULT);
  if (attr < 0n) return undefined;
  try {
    const type = fn.H5Aget_type(attr);
    if (type < 0n) return undefined;
    try {
      if (fn.H5Tis_variable_str(type) !== 0) return undefined;
      const size = Number(fn.H5Tget_size(type));
      if (size <= 0 || size > 4096) return undefined;
      const buf = new Uint8Array(size + 1);
      if (fn.H5Aread(attr, type, buf) < 0) return undefined;
      return decodeCBuffer(buf);
    } finally {
      fn.H5Tclose(type);
    }
  } finally {
    fn.H5Aclose(attr);
  }
}

/** Opens `path` read-only; FormatError with HDF5's reason when the library cannot. */
export function openReadOnly(lib: Hdf5, path: string): bigint {
  const id = lib.fn.H5Fopen(cString(path), H5F_ACC_RDONLY, H5P_DEFAULT);
  if (id < 0n) {
    throw new FormatError(NAME, path, -1, `the HDF5 library cannot open it: ${errorSummary(lib)}`);
  }
  return id;
}

/** A reader of regions of a source's datasets (see FrameSource.readRegion). */
export type ReadRegion = NonNullable<FrameSource["readRegion"]>;

/** The address of an open object in its file (its identity for a visited set), when known. */
export function objectAddress(lib: Hdf5, obj: bigint): bigint | undefined {
  const info = new BigUint64Array(64); // H5O_info_t (1.10) is about 160 bytes
  if (lib.fn.H5Oget_info2(obj, info, H5O_INFO_BASIC) < 0) return undefined;
  return info[1]!;
}

/** Text netCDF-4 puts in the NAME attribute of a dimension that is not also a variable. */
const NETCDF_DIMENSION_ONLY = "This is a netCDF dimension but not a netCDF variable";

/** How a catalog treats what a file points to and what it never wrote. */
export interface CatalogOptions {
  /** Read external raw-data files outside the file's own directory (`--allow-external`). */
  readonly allowExternal?: boolean;
  /**
   * List datasets whose storage was never (or only partly) written without a `dtype`, so they are
   * not read (their data would be the fill value, not bytes of the file); `unwritten` says why.
   */
  readonly skipUnwritten?: boolean;
  /**
   * Look for external raw-data files in the file's own directory (`${ORIGIN}`); false for a file
   * libnetcdf also has open (HDF5 refuses a second prefix for a dataset already open).
   */
  readonly origin?: boolean;
}

/** Every dataset of an HDF5 file, open for reading by region. */
export class Hdf5Catalog {
  /** The datasets in walk order (groups by name, depth first). */
  readonly datasets: DatasetInfo[] = [];
  /** Notes: links not followed, objects that could not be opened. */
  readonly warnings: string[] = [];
  /** External and dangling soft links: name and target kind. */
  readonly links: { name: string; kind: string }[] = [];
  /** Names of netCDF-4 dimension-only datasets (not variables). */
  readonly dimensionOnly = new Set<string>();
  readonly #lib: Hdf5;
  readonly #path: string;
  readonly #file: bigint;
  readonly #listed: Listed[] = [];
  readonly #live = new Map<number, Live>(); // index -> open dataset, least recently read first
  readonly #seen = new Map<bigint, number>(); // object address -> index in datasets (-1: group)
  readonly #options: CatalogOptions;
  #dapl: bigint | undefined;
  #closed = false;

  constructor(lib: Hdf5, path: string, options: CatalogOptions = {}) {
    this.#lib = lib;
    this.#path = path;
    this.#options = options;
    const id = openReadOnly(lib, path);
    this.#file = id;
    try {
      const root = check(lib, lib.fn.H5Gopen2(id, cString("/"), H5P_DEFAULT), "H5Gopen2 /", path);
      try {
        const addr = this.#address(root);
        if (addr !== undefined) this.#seen.set(addr, -1);
        this.#walk(root, "");
      } finally {
        lib.fn.H5Gclose(root);
      }
    } catch (e) {
      this.close();
      throw e;
    }
  }

  /**
   * The access property list of every object opened (see {@link accessList}), with HDF5's chunk
   * cache turned off (made once).
   */
  #uncached(): bigint {
    if (this.#dapl !== undefined) return this.#dapl;
    const fn = this.#lib.fn;
    const dapl = accessList(this.#lib, this.#path, this.#options.origin !== false);
    if (fn.H5Pset_chunk_cache(dapl, 0n, 0n, 1) < 0) {
      fn.H5Pclose(dapl);
      check(this.#lib, -1, "H5Pset_chunk_cache", this.#path);
    }
    return (this.#dapl = dapl);
  }

  #address(obj: bigint): bigint | undefined {
    return objectAddress(this.#lib, obj);
  }

  #walk(group: bigint, prefix: string): void {
    const lib = this.#lib;
    const fn = lib.fn;
    for (const link of groupLinks(lib, group, H5_INDEX_NAME, this.#path)) {
      const name = link.name;
      const full = `${prefix}/${name}`;
      const cname = cString(name);
      const linkType = link.type;
      if (linkType !== H5L_TYPE_HARD && linkType !== H5L_TYPE_SOFT) {
        // External (and user-defined) links are listed, never followed.
        this.links.push({ name: full, kind: linkType === 64 ? "external" : "user-defined" });
        continue;
      }
      const found = objectInfo(lib, group, cname, this.#uncached());
      if (found === undefined) {
        this.links.push({
          name: full,
          kind: linkType === H5L_TYPE_SOFT ? "dangling soft" : "hard",
        });
        continue;
      }
      const seen = this.#seen.get(found.address);
      if (seen !== undefined) {
        if (seen >= 0) {
          const d = this.datasets[seen]!;
          this.datasets[seen] = { ...d, aliases: [...(d.aliases ?? []), full] };
        }
        continue;
      }
      if (found.type === H5O_TYPE_GROUP) {
        this.#seen.set(found.address, -1);
        const sub = check(
          lib,
          fn.H5Gopen2(group, cname, H5P_DEFAULT),
          `H5Gopen2 '${full}'`,
          this.#path,
        );
        try {
          this.#walk(sub, full);
        } finally {
          fn.H5Gclose(sub);
        }
      } else if (found.type === H5O_TYPE_DATASET) {
        this.#seen.set(found.address, this.datasets.length);
        // Opened without HDF5's chunk cache, so a timed read of a chunk reads the file.
        const dset = check(
          lib,
          fn.H5Dopen2(group, cname, this.#uncached()),
          `H5Dopen2 '${full}'`,
          this.#path,
        );
        try {
          this.#addDataset(dset, full);
        } finally {
          fn.H5Dclose(dset);
        }
      }
    }
  }

  #addDataset(id: bigint, name: string): void {
    const lib = this.#lib;
    const fn = lib.fn;
    const type = check(lib, fn.H5Dget_type(id), "H5Dget_type", this.#path);
    let kind: DType | string;
    try {
      kind = numericType(lib, type);
    } finally {
      fn.H5Tclose(type);
    }
    const space = check(lib, fn.H5Dget_space(id), "H5Dget_space", this.#path);
    const nullSpace = fn.H5Sget_simple_extent_type(space) === H5S_NULL;
    const rank = Math.max(0, fn.H5Sget_simple_extent_ndims(space));
    const dims = new BigUint64Array(Math.max(1, rank));
    if (rank > 0) fn.H5Sget_simple_extent_dims(space, dims, null);
    const shape = [...dims.subarray(0, rank)].map(Number);
    let storage = "unknown";
    let chunk: number[] | undefined;
    const filters: string[] = [];
    let layout = -1;
    let external = false;
    const dcpl = fn.H5Dget_create_plist(id);
    if (dcpl >= 0n) {
      try {
        external = checkExternal(
          lib,
          dcpl,
          this.#path,
          name,
          this.#options.allowExternal === true,
          this.#options.origin !== false,
        );
        layout = fn.H5Pget_layout(dcpl);
        storage = H5D_LAYOUT_NAMES[layout] ?? `layout ${layout}`;
        if (storage === "chunked") {
          const c = new BigUint64Array(32);
          const n = fn.H5Pget_chunk(dcpl, 32, c);
          if (n > 0) chunk = [...c.subarray(0, n)].map(Number);
        }
        const nf = fn.H5Pget_nfilters(dcpl);
        const flags = new Uint32Array(1);
        const nelmts = new BigUint64Array(1);
        const values = new Uint32Array(8);
        const fname = new Uint8Array(64);
        const config = new Uint32Array(1);
        for (let k = 0; k < nf; k++) {
          nelmts[0] = 8n;
          const f = fn.H5Pget_filter2(dcpl, k, flags, nelmts, values, 64n, fname, config);
          filters.push(FILTER_NAMES[f] ?? (decodeCBuffer(fname) || `filter ${f}`));
        }
      } finally {
        fn.H5Pclose(dcpl);
      }
    }
    const offset = fn.H5Dget_offset(id);
    const storedBytes = Number(fn.H5Dget_storage_size(id));
    const empty = nullSpace || !this.#options.skipUnwritten
      ? undefined
      : unwritten(lib, id, layout, shape, chunk, storedBytes, external);
    const numeric = (DTYPES as readonly string[]).includes(kind) && !nullSpace && !empty;
    const dtype = numeric ? kind as DType : undefined;
    if (nameAttribute(lib, id)?.startsWith(NETCDF_DIMENSION_ONLY)) this.dimensionOnly.add(name);
    fn.H5Sclose(space);
    this.#listed.push({ rank, dtype });
    this.datasets.push({
      name,
      type: kind,
      ...(dtype ? { dtype } : {}),
      shape,
      storage,
      ...(chunk ? { chunk } : {}),
      ...(filters.length > 0 ? { filters } : {}),
      offset: offset === HADDR_UNDEF ? -1 : Number(offset),
      storedBytes,
      ...(nullSpace ? { space: "null" as const } : {}),
      ...(empty ? { unwritten: empty } : {}),
    });
  }

  /** Reads a region of numeric dataset `index` in native byte order into `into`. */
  readRegion(
    index: number,
    start: readonly number[],
    count: readonly number[],
    into: Uint8Array,
  ): void {
    if (this.#closed) throw new IoError(`${NAME}: ${this.#path}: read after close`);
    const lib = this.#lib;
    const fn = lib.fn;
    const listed = this.#listed[index];
    const info = this.datasets[index];
    if (!listed || !info || !listed.dtype) {
      throw new RangeError(`dataset ${index} is not a numeric dataset of ${this.#path}`);
    }
    const elements = count.reduce((a, b) => a * b, 1);
    if (into.length < elements * DTYPE_SIZE[listed.dtype]) {
      throw new RangeError(
        `buffer of ${into.length} bytes for ${elements} ${listed.dtype} elements`,
      );
    }
    if (elements === 0) return;
    const d = { ...listed, dtype: listed.dtype, ...this.#opened(index, info.name) };
    // Storage never allocated and no fill value (netCDF-4 with fill off): HDF5 leaves the
    // buffer as it is, so the data reads as zeros, as for classic data never written.
    if (info.storedBytes === 0) into.fill(0, 0, elements * DTYPE_SIZE[d.dtype]);
    if (d.rank === 0) {
      check(
        lib,
        fn.H5Dread(d.id, lib.native[d.dtype], H5S_ALL, H5S_ALL, H5P_DEFAULT, into),
        `H5Dread '${info.name}'`,
        this.#path,
      );
      return;
    }
    const s = BigUint64Array.from(start, BigInt);
    const c = BigUint64Array.from(count, BigInt);
    check(
      lib,
      fn.H5Sselect_hyperslab(d.space, H5S_SELECT_SET, s, null, c, null),
      "H5Sselect_hyperslab",
      this.#path,
    );
    const mem = check(lib, fn.H5Screate_simple(d.rank, c, null), "H5Screate_simple", this.#path);
    try {
      check(
        lib,
        fn.H5Dread(d.id, lib.native[d.dtype], mem, d.space, H5P_DEFAULT, into),
        `H5Dread '${info.name}'`,
        this.#path,
      );
    } finally {
      fn.H5Sclose(mem);
    }
  }

  /** Dataset `index` open for reading (at most {@link MAX_OPEN_DATASETS} stay open). */
  #opened(index: number, name: string): Live {
    const fn = this.#lib.fn;
    const live = this.#live.get(index);
    if (live) {
      this.#live.delete(index);
      this.#live.set(index, live);
      return live;
    }
    if (this.#live.size >= MAX_OPEN_DATASETS) {
      const [oldest, old] = this.#live.entries().next().value!;
      this.#live.delete(oldest);
      fn.H5Sclose(old.space);
      fn.H5Dclose(old.id);
    }
    const id = check(
      this.#lib,
      fn.H5Dopen2(this.#file, cString(name), this.#uncached()),
      `H5Dopen2 '${name}'`,
      this.#path,
    );
    const space = fn.H5Dget_space(id);
    if (space < 0n) {
      fn.H5Dclose(id);
      check(this.#lib, space, `H5Dget_space '${name}'`, this.#path);
    }
    const opened = { id, space };
    this.#live.set(index, opened);
    return opened;
  }

  /** Closes every dataset and the file. */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    const fn = this.#lib.fn;
    for (const d of this.#live.values()) {
      fn.H5Sclose(d.space);
      fn.H5Dclose(d.id);
    }
    this.#live.clear();
    if (this.#dapl !== undefined) fn.H5Pclose(this.#dapl);
    fn.H5Fclose(this.#file);
  }
}

/** The variables of a netCDF-4 file as HDF5 datasets, readable by region. */
export interface NetcdfDatasets {
  /** Variables in every group (HDF5 path without the leading `/`). */
  readonly datasets: readonly DatasetInfo[];
  /** Reads a region of variable `index` (native byte order). */
  readRegion(
    index: number,
    start: readonly number[],
    count: readonly number[],
    into: Uint8Array,
  ): void;
  /** Closes the HDF5 file. */
  close(): void;
}

/**
 * The variables of the netCDF-4 file at `path` through the HDF5 library: every dataset except
 * the dimension-only ones netCDF-4 creates, named as ncdump names them (group path, no leading `/`).
 */
export function netcdf4Datasets(lib: Hdf5, path: string): NetcdfDatasets {
  const cat = new Hdf5Catalog(lib, path, { origin: false });
  const keep = cat.datasets.map((d, i) => ({ d, i })).filter(({ d }) =>
    !cat.dimensionOnly.has(d.name)
  );
  return {
    datasets: keep.map(({ d }) => ({ ...d, name: d.name.slice(1) })),
    readRegion: (index, start, count, into) => cat.readRegion(keep[index]!.i, start, count, into),
    close: () => cat.close(),
  };
}
