/**
 * The `hdf4` peer: frames stored as HDF4 Scientific Data Sets through the HDF4 C library's SD
 * interface via Deno FFI, as IOspeed drove it through FlexIO's HDFIO (ieeeio.md §4):
 * `SDstart(DFACC_CREATE)`, then per dataset `SDcreate` / `SDwritedata` (the whole array) /
 * `SDendaccess`, and `SDend` on close.
 *
 * Layout: one SDS per chunk per frame, in write order, named by the chunk name (HDF4 allows
 * repeated names; IOspeed named every dataset "" which HDF4 stores as "DataSet"). A reader
 * groups the SDSs into frames by the period of their names: the chunks of frame 0 are the SDSs
 * up to the first repeated name. Files from IOspeed therefore read as one 64^3 dataset per frame.
 * Byte order: HDF4's standard number types are big-endian (`DFNT_FLOAT64`); `endian` little or
 * native (little here) adds `DFNT_LITEND`, stored little-endian. Steps are not stored.
 *
 * Loading: `libmfhdf` has no DT_NEEDED entry for `libdf` (ffi.md §7.3), so `libdf` is first
 * loaded with RTLD_GLOBAL through lib/sys/libc.ts; `libmfhdf` is also pinned (RTLD_NODELETE)
 * because libdf's exit handler calls into it after Deno has unloaded its libraries (a crash
 * at exit otherwise). The `alt` pair (libdfalt/libmfhdfalt, Debian
 * package libhdf4-0-alt) is tried first because the plain libmfhdf also exports netCDF-2 names
 * that clash with libnetcdf in the same process; then the plain pair; then
 * `SCIOBENCH_HDF4_LIBS` = `LIBDF:LIBMFHDF`. HDF4 has no no-clobber create flag: "new" is
 * enforced by checking the path first. Failures carry HDF4's own error text (`HEstring` of
 * `HEvalue(1)`), and every SDS and file id is released, also on error.
 * @module
 */
import { FormatError, IoError, PeerUnavailableError, UsageError } from "../../core/errors.ts";
import type { DType, Frame } from "../../framings/types.ts";
import { DTYPE_SIZE, DTYPES } from "../../framings/types.ts";
import type {
  Backend,
  FrameSink,
  FrameSource,
  ReadChunk,
  SinkOptions,
} from "../../backends/backend.ts";
import { cString, dlopenGlobal, dlopenPinned } from "../../sys/libc.ts";
import {
  allocFrameBuffer,
  checkChunkBytes,
  checkSameLayout,
  cStringAt,
  decodeCBuffer,
  envValue,
  oneLineText,
  recordLoaded,
  refuseExisting,
} from "../common.ts";
import { requireFile } from "../../io/file.ts";
import { PeerSink } from "../common.ts";

const NAME = "hdf4";

/** Library pairs [libdf, libmfhdf] tried in order after `SCIOBENCH_HDF4_LIBS`, when it is set. */
export const HDF4_PAIRS: readonly (readonly [string, string])[] = [
  ["/usr/lib/libdfalt.so.0", "/usr/lib/libmfhdfalt.so.0"],
  ["libdfalt.so.0", "libmfhdfalt.so.0"],
  ["/usr/lib/libdf.so.0", "/usr/lib/libmfhdf.so.0"],
  ["libdf.so.0", "libmfhdf.so.0"],
];

/** The SD interface's limit on datasets in one file (SDcreate fails with error 62 past it). */
export const HDF4_MAX_DATASETS = 9361;

/** Environment variable: `LIBDF:LIBMFHDF`, paths of the two HDF4 libraries. */
export const HDF4_ENV = "SCIOBENCH_HDF4_LIBS";

const MF_SYMBOLS = {
  SDstart: { parameters: ["buffer", "i32"], result: "i32" },
  SDend: { parameters: ["i32"], result: "i32" },
  SDcreate: { parameters: ["i32", "buffer", "i32", "i32", "buffer"], result: "i32" },
  SDwritedata: { parameters: ["i32", "buffer", "buffer", "buffer", "buffer"], result: "i32" },
  SDreaddata: { parameters: ["i32", "buffer", "buffer", "buffer", "buffer"], result: "i32" },
  SDendaccess: { parameters: ["i32"], result: "i32" },
  SDselect: { parameters: ["i32", "i32"], result: "i32" },
  SDgetinfo: {
    parameters: ["i32", "buffer", "buffer", "buffer", "buffer", "buffer"],
    result: "i32",
  },
  SDfileinfo: { parameters: ["i32", "buffer", "buffer"], result: "i32" },
  SDiscoordvar: { parameters: ["i32"], result: "i32" },
} as const;

const DF_SYMBOLS = {
  HEvalue: { parameters: ["i32"], result: "i16" },
  HEstring: { parameters: ["i32"], result: "pointer" },
  Hgetlibversion: { parameters: ["buffer", "buffer", "buffer", "buffer"], result: "i32" },
} as const;

// Constants from hdf.h / hntdefs.h / hlimits.h (HDF 4.2.15; ffi.md §7.2).
const DFACC_READ = 1;
const DFACC_CREATE = 4;
const FAIL = -1;
const DFNT_LITEND = 0x4000;
const DFNT_NATIVE = 0x1000;
const H4_MAX_NC_NAME = 256;
const H4_MAX_VAR_DIMS = 32;

const DFNT: Readonly<Record<DType, number>> = {
  char: 4,
  float32: 5,
  float64: 6,
  int8: 20,
  uint8: 21,
  int16: 22,
  uint16: 23,
  int32: 24,
  uint32: 25,
  int64: 26,
  uint64: 27,
};

const DTYPE_OF_DFNT: Readonly<Record<number, DType>> = {
  ...Object.fromEntries(Object.entries(DFNT).map(([k, v]) => [v, k as DType])),
  3: "uint8", // DFNT_UCHAR8
};

interface Hdf4 {
  readonly mf: Deno.DynamicLibrary<typeof MF_SYMBOLS>["symbols"];
  readonly df: Deno.DynamicLibrary<typeof DF_SYMBOLS>["symbols"];
  readonly paths: readonly [string, string];
  readonly version: string;
}

let state: Hdf4 | string | undefined;

function tryPair(df: string, mf: string): Hdf4 | string {
  try {
    dlopenGlobal(df);
  } catch (e) {
    return `${df}: ${e instanceof Error ? e.message : String(e)}`;
  }
  try {
    // Keep libmfhdf mapped until exit: libdf's exit handler (HDPend) calls functions libmfhdf
    // registered; Deno unloads its own libraries at shutdown, before exit handlers run.
    dlopenPinned(mf);
    const mfLib = Deno.dlopen(mf, MF_SYMBOLS).symbols;
    const dfLib = Deno.dlopen(df, DF_SYMBOLS).symbols;
    const v = new Uint32Array(3);
    const text = new Uint8Array(96);
    dfLib.Hgetlibversion(v.subarray(0, 1), v.subarray(1, 2), v.subarray(2, 3), text);
    return { mf: mfLib, df: dfLib, paths: [df, mf], version: `${v[0]}.${v[1]}.${v[2]}` };
  } catch (e) {
    return `${mf}: ${e instanceof Error ? e.message : String(e)}`;
  }
}

function load(): Hdf4 | string {
  if (state !== undefined) return state;
  const pairs: (readonly [string, string])[] = [...HDF4_PAIRS];
  const env = envValue(HDF4_ENV);
  if (env !== undefined) {
    const [df, mf] = env.split(":");
    if (!df || !mf) {
      throw new UsageError(`${HDF4_ENV}=${env}: expected LIBDF:LIBMFHDF (two paths joined by ':')`);
    }
    pairs.unshift([df, mf]);
  }
  const problems: string[] = [];
  for (const [k, [df, mf]] of pairs.entries()) {
    const r = tryPair(df, mf);
    if (typeof r !== "string") {
      recordLoaded("HDF4", r.paths.join(":"), r.version);
      return (state = r);
    }
    if (env !== undefined && k === 0) {
      throw new UsageError(`${HDF4_ENV}=${env} cannot be loaded: ${r}`);
    }
    if (!/No such file|cannot open shared object/i.test(r)) problems.push(r);
  }
  const tried = pairs.map(([df, mf]) => `${df}+${mf}`).join(", ");
  const extra = problems.length > 0 ? `; ${problems.join("; ")}` : "";
  return (state = `HDF4 libraries not found (tried ${tried}; set ${HDF4_ENV}=LIBDF:LIBMFHDF)` +
    extra);
}

function h4(): Hdf4 {
  const s = load();
  if (typeof s === "string") throw new PeerUnavailableError(`${NAME}: ${s}`);
  return s;
}

/** HDF4 library version such as `4.2.15`, or null when the libraries are not available. */
export function hdf4Version(): string | null {
  const s = load();
  return typeof s === "string" ? null : s.version;
}

/** Paths of the HDF4 pair loaded here, [libdf, libmfhdf], or null when none is available. */
export function hdf4Libraries(): readonly [string, string] | null {
  const s = load();
  return typeof s === "string" ? null : s.paths;
}

/** HDF4's text for its most recent error (`HEstring(HEvalue(1))`). */
function lastError(lib: Hdf4): string {
  const code = lib.df.HEvalue(1);
  if (code === 0) return "no HDF4 error detail";
  return `${oneLineText(cStringAt(lib.df.HEstring(code)))} (HDF4 error ${code})`;
}

/** Throws IoError naming the call and HDF4's error text when `rc` is FAIL. */
function check(lib: Hdf4, rc: number, call: string, path: string): number {
  if (rc === FAIL) throw new IoError(`${NAME}: ${path}: ${call} failed: ${lastError(lib)}`);
  return rc;
}

// ---- writer --------------------------------------------------------------------------------

interface Spec {
  readonly name: string;
  readonly dtype: DType;
  readonly shape: readonly number[];
  readonly cname: Uint8Array;
  readonly dims: Int32Array;
  readonly start: Int32Array;
}

class Hdf4Sink extends PeerSink {
  #lib: Hdf4;
  #fid: number;
  #littleFlag: number;
  #specs: Spec[] = [];
  #frames = 0;

  constructor(lib: Hdf4, path: string, options: SinkOptions) {
    super(NAME, path, options.fsync);
    this.#lib = lib;
    this.#littleFlag = options.endian === "big" ? 0 : DFNT_LITEND;
    refuseExisting(NAME, path, options.create);
    const fid = lib.mf.SDstart(cString(path), DFACC_CREATE);
    if (fid === FAIL) {
      const code = lib.df.HEvalue(1);
      // SDstart often fails without pushing an error (a missing directory, no permission).
      const why = code !== 0
        ? lastError(lib)
        : "cannot create the file (does its directory exist, is it writable?)";
      throw new IoError(`${NAME}: ${path}: SDstart failed: ${why}`);
    }
    this.#fid = fid;
  }

  writeFrame(frame: Frame): void {
    this.checkOpen();
    checkChunkBytes(NAME, this.path, this.#frames, frame.chunks);
    if (this.#frames === 0) {
      this.#specs = frame.chunks.map((c) => {
        if (c.shape.length < 1 || c.shape.length > H4_MAX_VAR_DIMS) {
          throw new IoError(
            `${NAME}: ${this.path}: chunk '${c.name}' has rank ${c.shape.length}; HDF4 SDS need 1..32`,
          );
        }
        return {
          name: c.name,
          dtype: c.dtype,
          shape: [...c.shape],
          cname: cString(c.name),
          dims: Int32Array.from(c.shape),
          start: new Int32Array(c.shape.length),
        };
      });
    } else {
      checkSameLayout(NAME, this.path, this.#frames, this.#specs, frame.chunks);
    }
    const lib = this.#lib;
    const mf = lib.mf;
    for (let i = 0; i < this.#specs.length; i++) {
      const s = this.#specs[i]!;
      const nt = DFNT[s.dtype] | this.#littleFlag;
      const sds = check(
        lib,
        mf.SDcreate(this.#fid, s.cname, nt, s.dims.length, s.dims),
        `SDcreate '${s.name}'`,
        this.path,
      );
      try {
        check(
          lib,
          mf.SDwritedata(sds, s.start, null, s.dims, frame.chunks[i]!.data),
          `SDwritedata '${s.name}' frame ${this.#frames}`,
          this.path,
        );
      } finally {
        const rc = mf.SDendaccess(sds);
        if (rc === FAIL) check(lib, rc, "SDendaccess", this.path);
      }
    }
    this.#frames++;
  }

  protected closeFile(): void {
    check(this.#lib, this.#lib.mf.SDend(this.#fid), "SDend", this.path);
  }

  protected releaseFile(): void {
    this.#lib.mf.SDend(this.#fid);
  }
}

// ---- reader --------------------------------------------------------------------------------

interface Sds {
  readonly index: number;
  readonly name: string;
  readonly dtype: DType;
  readonly nt: number;
  readonly shape: readonly number[];
}

interface Slot {
  readonly dtype: DType;
  readonly shape: readonly number[];
  readonly start: Int32Array;
  readonly edges: Int32Array;
  readonly buf: Uint8Array<ArrayBuffer>;
}

function sameKind(a: Sds, b: Sds): boolean {
  return a.name === b.name && a.dtype === b.dtype && a.shape.length === b.shape.length &&
    a.shape.every((d, k) => d === b.shape[k]);
}

/** Chunks per frame: the SDSs up to the first repeated name, if the whole list repeats that way. */
function framePeriod(list: readonly Sds[]): number {
  const seen = new Set<string>();
  let period = list.length;
  for (let i = 0; i < list.length; i++) {
    if (seen.has(list[i]!.name)) {
      period = i;
      break;
    }
    seen.add(list[i]!.name);
  }
  if (period === 0) return 1;
  for (let i = period; i < list.length; i++) {
    if (!sameKind(list[i]!, list[i % period]!)) return 1;
  }
  return period;
}

class Hdf4Source implements FrameSource {
  readonly path: string;
  readonly framing = NAME;
  readonly frameCount: number;
  readonly warnings: string[] = [];
  #lib: Hdf4;
  #fid: number;
  #sds: Sds[] = [];
  #period = 1;
  #slots = new Map<number, Slot>();
  #closed = false;

  constructor(lib: Hdf4, path: string) {
    this.#lib = lib;
    this.path = path;
    requireFile(path, NAME);
    const fid = lib.mf.SDstart(cString(path), DFACC_READ);
    if (fid === FAIL) {
      throw new FormatError(NAME, path, -1, `the HDF4 library cannot open it: ${lastError(lib)}`);
    }
    this.#fid = fid;
    try {
      this.#scan();
      if (this.#sds.length === 0) {
        // Nothing to read (raster images, vdata ...), which is no reason to refuse the file.
        this.warnings.push(`${path}: no scientific data set (SDS) of a number type; no frames`);
      }
      this.#period = framePeriod(this.#sds);
      this.frameCount = Math.floor(this.#sds.length / this.#period);
      const rest = this.#sds.length - this.frameCount * this.#period;
      if (rest > 0) {
        this.warnings.push(
          `${path}: ${rest} trailing data set(s) do not complete a frame of ${this.#period}; ignored`,
        );
      }
      if (this.#period === 1 && new Set(this.#sds.map((s) => s.name)).size > 1) {
        this.warnings.push(`${path}: data sets do not repeat by name; reading each as one frame`);
      }
    } catch (e) {
      this.close();
      throw e;
    }
  }

  #scan(): void {
    const lib = this.#lib;
    const mf = lib.mf;
    const counts = new Int32Array(2);
    check(
      lib,
      mf.SDfileinfo(this.#fid, counts.subarray(0, 1), counts.subarray(1, 2)),
      "SDfileinfo",
      this.path,
    );
    const nameBuf = new Uint8Array(H4_MAX_NC_NAME + 1);
    const rank = new Int32Array(1);
    const dims = new Int32Array(H4_MAX_VAR_DIMS);
    const nt = new Int32Array(1);
    const nattr = new Int32Array(1);
    for (let index = 0; index < counts[0]!; index++) {
      const sds = check(lib, mf.SDselect(this.#fid, index), `SDselect ${index}`, this.path);
      try {
        if (mf.SDiscoordvar(sds) > 0) continue;
        nameBuf.fill(0);
        check(
          lib,
          mf.SDgetinfo(sds, nameBuf, rank, dims, nt, nattr),
          `SDgetinfo ${index}`,
          this.path,
        );
        const name = decodeCBuffer(nameBuf);
        const r = rank[0]!;
        if (r < 0 || r > H4_MAX_VAR_DIMS || dims.subarray(0, r).some((d) => d < 0)) {
          throw new FormatError(
            NAME,
            this.path,
            -1,
            `data set ${index} '${name}' reports rank ${r} and dimensions ` +
              `[${dims.subarray(0, Math.max(0, Math.min(r, H4_MAX_VAR_DIMS))).join(", ")}]`,
          );
        }
        const dtype = DTYPE_OF_DFNT[nt[0]! & 0xfff];
        if (dtype === undefined) {
          this.warnings.push(
            `${this.path}: skipping data set ${index} '${name}' of HDF4 number type ${nt[0]}`,
          );
          continue;
        }
        this.#sds.push({ index, name, dtype, nt: nt[0]!, shape: [...dims.subarray(0, rank[0]!)] });
      } finally {
        mf.SDendaccess(sds);
      }
    }
  }

  #slot(position: number, s: Sds): Slot {
    let slot = this.#slots.get(position);
    if (
      slot === undefined || slot.dtype !== s.dtype || slot.shape.some((d, k) => d !== s.shape[k])
    ) {
      let bytes = DTYPE_SIZE[s.dtype];
      for (const d of s.shape) bytes *= d;
      slot = {
        dtype: s.dtype,
        shape: s.shape,
        start: new Int32Array(s.shape.length),
        edges: Int32Array.from(s.shape),
        buf: allocFrameBuffer(NAME, this.path, `data set ${s.index} '${s.name}'`, bytes),
      };
      this.#slots.set(position, slot);
    }
    return slot;
  }

  readFrame(frame: number): readonly ReadChunk[] {
    if (this.#closed) throw new IoError(`${NAME}: ${this.path}: read after close`);
    const lib = this.#lib;
    const mf = lib.mf;
    const out: ReadChunk[] = [];
    for (let k = 0; k < this.#period; k++) {
      const s = this.#sds[frame * this.#period + k]!;
      const slot = this.#slot(k, s);
      const sds = check(lib, mf.SDselect(this.#fid, s.index), `SDselect ${s.index}`, this.path);
      try {
        check(
          lib,
          mf.SDreaddata(sds, slot.start, null, slot.edges, slot.buf),
          `SDreaddata '${s.name}'`,
          this.path,
        );
      } finally {
        mf.SDendaccess(sds);
      }
      out.push({ name: s.name, dtype: s.dtype, shape: s.shape, data: slot.buf });
    }
    return out;
  }

  describe(): Record<string, unknown> {
    const order = (
      nt: number,
    ) => (nt & DFNT_LITEND ? "little" : nt & DFNT_NATIVE ? "native" : "big");
    return {
      library: `HDF ${this.#lib.version}`,
      interface: "SD (scientific data sets)",
      datasets: this.#sds.length,
      chunks_per_frame: this.#period,
      sds: this.#sds.slice(0, this.#period).map((s) => ({
        name: s.name,
        dtype: s.dtype,
        shape: s.shape,
        number_type: s.nt,
        endian: order(s.nt),
      })),
    };
  }

  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#lib.mf.SDend(this.#fid);
  }
}

/** The HDF4 SD peer backend (see the module documentation for the layout). */
export const hdf4: Backend = {
  name: NAME,
  description: "HDF4 SD interface (FFI), as IOspeed used it: one SDS per chunk per frame",
  kind: "peer",
  orders: ["big", "little"],
  unavailable(): string | null {
    const s = load();
    return typeof s === "string" ? s : null;
  },
  options: [],
  /** HDF4 files begin with the magic number 0e 03 13 01. */
  magic: [{ bytes: [0x0e, 0x03, 0x13, 0x01] }],
  fsyncPolicies: ["end", "none"],
  transfer: false,
  sharedLayout: false,
  dtypes: {
    only: DTYPES.filter((t) => t !== "int64" && t !== "uint64"),
    refusal: (dtype) => `hdf4 (SD interface) cannot store ${dtype}: it has no 64-bit integers`,
  },
  limits: { datasets: { max: HDF4_MAX_DATASETS, failure: "error 62" } },
  library: { displayName: "HDF4", files: [...new Set(HDF4_PAIRS.flat())] },
  openWriter(path: string, options: SinkOptions): FrameSink {
    return new Hdf4Sink(h4(), path, options);
  },
  openReader(path: string): FrameSource {
    return new Hdf4Source(h4(), path);
  },
};

/**
 * Calls `HEvalue(1)` once (i32 argument, i16 result): a trivial HDF4 call for measuring FFI
 * overhead in bench/ffi_bench.ts. Returns the top error code (0 when none).
 */
export function hdf4ErrorValueCall(): number {
  return h4().df.HEvalue(1);
}
