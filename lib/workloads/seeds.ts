/**
 * The four seed experiments as parameters: each workload's defaults (the bare command reproduces
 * its seed) and its `--quick` variant (the same experiment scaled down to seconds). The seed texts
 * are in ../shared/seeds/; each value names the line it comes from.
 * @module
 */

/** gsd's benchmark-hoomd.py table (seed 002, lines 20-41): the command-line values of `table`. */
export const TABLE_SEED = {
  /** gsd's own writer, with python3-gsd (gsd.hoomd) as a peer where it is importable. */
  framing: "gsd",
  /** The published sizes (128 MiB, 1 GiB; 16 and 128 GiB were the big-disk rows). */
  size: "128MiB,1GiB",
  /** N = 32^2, 128^2, 1024^2 particles. */
  n: "32^2,128^2,1024^2",
  /** The benchmark writes each file once untimed before the timed write. */
  warmup: true,
  /** The real gsd library beside ours. */
  peer: "python-gsd",
} as const;

/** `table --quick`: the same three N on a 16 MiB file. */
export const TABLE_QUICK = { size: "16MiB", n: "32^2,128^2,1024^2" } as const;

/** FlexIO's IOspeed (seed 000): sections IEEE, HDF, F77 in this order, 5..40 datasets of 64^3. */
export const SCALING_SEED = {
  /** The seed's sections in its order (000 lines 52, 69, 86). */
  framing: "ieeeio,hdf4,f77",
  /** "between 5 and 40 datasets" in steps of 5 (000 lines 13, 53-67). */
  datasets: "5..40:5",
  /** "Each dataset is 64^3 double precision floats" (000 line 14). */
  shape: "64x64x64",
  /** float64 (000 line 14). */
  type: "float64",
  /** IEEEIO and F77 in native order, HDF4 as DFNT_FLOAT64: big-endian (ieeeio.md §4). */
  endian: "native,hdf4=big",
} as const;

/** `scaling --quick`: 1..8 datasets of 64^3. */
export const SCALING_QUICK = { datasets: "1..8" } as const;

/** Packman's readers (seed 001): 10 records of 130000 doubles, 1..7 readers, both modes, cold. */
export const READERS_SEED = {
  /** `do 10 i=1,10` (001 line 27). */
  records: 10,
  /** `double precision a(130000)` (001 line 25). */
  length: 130000,
  /** 1..7 simultaneous processes (001 line 11). */
  procs: "1..7",
  /** One tmp file shared, or n tmp files (001 lines 13, 15). */
  mode: "shared,separate",
  /** Reads from the disk (the seed's 10 MB file on an otherwise unloaded machine). */
  cache: "cold",
} as const;

/** `readers --quick`: 1..3 readers. */
export const READERS_QUICK = { procs: "1..3" } as const;

/** netCDF-4's 2003 record-by-record test (seed 003): four files of x 2000 y 300 z 500 integers. */
export const RECORDS_SEED = {
  /** "x 2000 y 300 z 500" (003 lines 72-73). */
  shape: "2000x300x500",
  /** Integers: 1.2 GB per file (the seed adds "floating point stuff" later, line 38). */
  type: "int32",
  /**
   * Pure HDF5, netCDF-3 through the library, netCDF-4/HDF5 (003 lines 58-64), and our native
   * classic writer beside them.
   */
  framing: "hdf5,netcdf-lib,netcdf4,netcdf",
  /** HDF5 big-endian as netCDF-3 (line 59), netCDF-4 native (line 64). */
  endian: "big,netcdf4=native",
} as const;

/** `records --quick`: 20 records of the seed's 300 x 500. */
export const RECORDS_QUICK = { shape: "20x300x500" } as const;

/**
 * `loader`'s defaults (no seed paper: DLIO's training loop): a 64 MiB raw file of 1024-particle
 * frames (28 KiB samples), read two epochs of seeded shuffles in batches of 32.
 */
export const LOADER_DEFAULTS = {
  /** The native framing with the fewest bytes around each sample. */
  framing: "raw",
  /** File size. */
  size: "64MiB",
  /** Particles per frame: 28 KiB samples. */
  n: "32^2",
  /** Samples per batch (DLIO's and PyTorch's usual small batch). */
  samplesPerBatch: 32,
  /** Epochs: the first cold, the second as the first left the cache. */
  epochs: 2,
  /** Each epoch a seeded permutation of every frame. */
  sample: "shuffle",
  /** Reader processes: none, the consumer reads each batch itself. */
  readers: 1,
} as const;
