/**
 * The schemas and data of the ncgen golden files in tests/testdata/netcdf (one entry per .nc file),
 * written out by hand from their CDL, shared by netcdf_test.ts and the benchmark.
 * @module
 */
import type { NcSchema, NcValues } from "../lib/framings/netcdf/mod.ts";

/** One golden file: its CDL's schema and data as the writer's lower-level API takes them. */
export interface Golden {
  /** File name in tests/testdata/netcdf. */
  readonly file: string;
  /** Header contents. */
  readonly schema: NcSchema;
  /** Values per variable, row-major, records included; ncgen's `_` written as the fill value. */
  readonly data: Readonly<Record<string, NcValues>>;
  /** Record count. */
  readonly numrecs: number;
  /** False when the file was written with NC_NOFILL (nccopy): padding is zero bytes. */
  readonly fill?: boolean;
}

const demo = (variant: 1 | 2 | 5): Golden => ({
  file: `demo${variant}.nc`,
  numrecs: 2,
  schema: {
    variant,
    dimensions: [{ name: "time", length: 0 }, { name: "x", length: 3 }],
    attributes: [{ name: "title", type: "char", values: "demo" }],
    variables: [
      { name: "xc", type: "double", dims: [1], attributes: [] },
      {
        name: "temp",
        type: "float",
        dims: [0, 1],
        attributes: [{ name: "units", type: "char", values: "K" }],
      },
      { name: "flag", type: "short", dims: [0], attributes: [] },
    ],
  },
  data: { xc: [0.5, 1.5, 2.5], temp: [1, 2, 3, 4, 5, 6], flag: [7, 8] },
});

const FILL_FLOAT = 9.969209968386869e36;

const types = (variant: 1 | 2 | 5): Golden => ({
  file: `types${variant}.nc`,
  numrecs: 3,
  schema: {
    variant,
    dimensions: [{ name: "time", length: 0 }, { name: "n", length: 5 }, { name: "two", length: 2 }],
    attributes: [
      { name: "b", type: "byte", values: [1, -2, 127] },
      { name: "c", type: "char", values: "text with\nnewline" },
      { name: "s", type: "short", values: [1, -300, 32767] },
      { name: "i", type: "int", values: [70000, -2147483647] },
      { name: "f", type: "float", values: [1.5, -2.25, 1e30] },
      { name: "d", type: "double", values: [3.14159265358979, -0] },
      { name: "empty", type: "char", values: "\0" }, // ncgen stores "" as one NUL
    ],
    variables: [
      {
        name: "vb",
        type: "byte",
        dims: [1],
        attributes: [{ name: "valid_range", type: "byte", values: [-100, 100] }],
      },
      { name: "vc", type: "char", dims: [1], attributes: [] },
      {
        name: "vs",
        type: "short",
        dims: [1],
        attributes: [{ name: "scale", type: "float", values: [2.5] }],
      },
      { name: "vi", type: "int", dims: [2, 1], attributes: [] },
      {
        name: "vf",
        type: "float",
        dims: [1],
        attributes: [{ name: "_FillValue", type: "float", values: [-999] }],
      },
      {
        name: "vd",
        type: "double",
        dims: [2],
        attributes: [
          { name: "long_name", type: "char", values: "a double" },
          { name: "offsets", type: "double", values: [0.25, -1e300] },
        ],
      },
      {
        name: "rs",
        type: "short",
        dims: [0, 1],
        attributes: [{ name: "_FillValue", type: "short", values: [-1] }],
      },
      { name: "rb", type: "byte", dims: [0, 2], attributes: [] },
      { name: "rd", type: "double", dims: [0], attributes: [] },
      { name: "rc", type: "char", dims: [0, 1], attributes: [] },
    ],
  },
  data: {
    vb: [1, -2, 3, -127, 5],
    vc: "abc",
    vs: [-1, 2, -32767, 4, 5],
    vi: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10],
    vf: [0.5, -999, 1e-30, -3, 1e30],
    vd: [1.5, FILL_FLOAT],
    rs: [1, 2, 3, 4, 5, 6, -1, 8, 9, 10, 11, 12, 13, 14, 15],
    rb: [1, 2, 3, 4, 5, -127],
    rd: [0.125, 0.25, 0.5],
    rc: new TextEncoder().encode("ab\0\0\0cdefgh\0\0\0\0"),
  },
});

const cdf5types: Golden = {
  file: "cdf5types.nc",
  numrecs: 2,
  fill: false, // made by nccopy, which writes with NC_NOFILL
  schema: {
    variant: 5,
    dimensions: [{ name: "rec", length: 0 }, { name: "k", length: 3 }],
    attributes: [
      { name: "us", type: "ushort", values: [65535, 1] },
      { name: "ui", type: "uint", values: [4294967295] },
      { name: "u64", type: "uint64", values: [18446744073709551615n] },
      { name: "title", type: "char", values: "CDF-5 types" },
    ],
    variables: [
      {
        name: "vub",
        type: "ubyte",
        dims: [1],
        attributes: [{ name: "range", type: "ubyte", values: [0, 255] }],
      },
      { name: "vus", type: "ushort", dims: [1], attributes: [] },
      { name: "vui", type: "uint", dims: [1], attributes: [] },
      {
        name: "vi64",
        type: "int64",
        dims: [1],
        attributes: [{
          name: "big",
          type: "int64",
          values: [-9223372036854775807n, 9007199254740993n],
        }],
      },
      {
        name: "vu64",
        type: "uint64",
        dims: [1],
        attributes: [{ name: "_FillValue", type: "uint64", values: [7n] }],
      },
      { name: "rub", type: "ubyte", dims: [0], attributes: [] },
      { name: "rus", type: "ushort", dims: [0, 1], attributes: [] },
      { name: "ri64", type: "int64", dims: [0], attributes: [] },
    ],
  },
  data: {
    vub: [1, 200, 255],
    vus: [65535, 65535, 3],
    vui: [4000000000, 1, 4294967295],
    vi64: [-1n, 9007199254740993n, -9223372036854775806n],
    vu64: [18446744073709551615n, 7n, 0n],
    rub: [1, 2],
    rus: [1, 2, 3, 4, 65535, 6],
    ri64: [-5n, 5n],
  },
};

const single = (variant: 1 | 5): Golden => ({
  file: `single${variant}.nc`,
  numrecs: 3,
  schema: {
    variant,
    dimensions: [{ name: "time", length: 0 }],
    attributes: [],
    variables: [{ name: "s", type: "short", dims: [0], attributes: [] }],
  },
  data: { s: [1, 2, 3] },
});

const single3: Golden = {
  file: "single3.nc",
  numrecs: 2,
  schema: {
    variant: 1,
    dimensions: [{ name: "time", length: 0 }, { name: "x", length: 3 }],
    attributes: [],
    variables: [{
      name: "s",
      type: "short",
      dims: [0, 1],
      attributes: [{ name: "units", type: "char", values: "1" }],
    }],
  },
  data: { s: [1, 2, 3, 4, 5, 6] },
};

const fixed2: Golden = {
  file: "fixed2.nc",
  numrecs: 0,
  schema: {
    variant: 2,
    dimensions: [{ name: "y", length: 2 }, { name: "z", length: 3 }],
    attributes: [],
    variables: [
      {
        name: "grid",
        type: "float",
        dims: [0, 1],
        attributes: [{ name: "units", type: "char", values: "m" }],
      },
      { name: "flags", type: "byte", dims: [1], attributes: [] },
    ],
  },
  data: { grid: [1, 2, 3, 4, 5, 6], flags: [1, 2, 3] },
};

/** Every golden file that our writer reproduces byte for byte. */
export const GOLDENS: readonly Golden[] = [
  demo(1),
  demo(2),
  demo(5),
  types(1),
  types(2),
  types(5),
  cdf5types,
  single(1),
  single(5),
  single3,
  fixed2,
];

/** Directory of the golden files. */
export const GOLDEN_DIR = new URL("./testdata/netcdf/", import.meta.url).pathname;
