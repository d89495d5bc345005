/**
 * The `pnetcdf` backend: netCDF classic files (CDF-1, CDF-2, CDF-5) written and read
 * through PnetCDF (lib/peers/pnetcdf/) on the run's MPI communicator, as HPC codes write one file
 * from many ranks. `--layout shared`: every rank creates the file together (MPI_COMM_WORLD, the
 * run's `--hint`s as the MPI_Info), defines the record variables as the native `netcdf` framing
 * and the serial `netcdf-lib` peer define them (`schemaForChunks`), and puts its own records
 * (`ncmpi_put_vara_all`, or `ncmpi_put_vara` between begin/end_indep_data with
 * `--collective off`); `per-rank`: each rank a file of its own (MPI_COMM_SELF). The header is
 * laid out as netCDF-C lays it out (`ncmpi__enddef(0, 4, 0, 4)`: no free space after the
 * header, variables on 4-byte boundaries; PnetCDF's own default pads the header to a 512-byte
 * boundary), so the file is byte for byte what `netcdf` and `netcdf-lib` write for the same
 * frames. The durable point is ncmpi_sync, then
 * ncmpi_close. A rank that fails keeps making its collective calls empty, then every rank agrees
 * on the failure, closes the file and rank 0 removes it (the `mpiio` backend's protocol).
 * @module
 */
import { UsageError } from "../core/errors.ts";
import { failsInTest } from "../peers/common.ts";
import type { DType, Frame } from "../framings/types.ts";
import { NETCDF_OPTIONS, schemaForChunks } from "../framings/netcdf/mod.ts";
import { cString, noteLibrarySync } from "../sys/libc.ts";
import {
  checkPnetcdf,
  loadPnetcdf,
  NCMPI,
  type Pnetcdf,
  PNETCDF_SONAMES,
  pnetcdfProblem,
  type VaraCall,
  varaName,
} from "../peers/pnetcdf/bindings.ts";
import { DTYPE_OF_NC } from "../peers/netcdf4/bindings.ts";
import { optionOrDefault } from "../framings/options.ts";
import type {
  Backend,
  FrameSink,
  FrameSource,
  MpiHandles,
  MpiIo,
  MpiIoSettings,
  SinkOptions,
  SourceOptions,
} from "./backend.ts";
import { installedMpiIo } from "./mpi_io.ts";
import {
  defineRecordVariables,
  LibrarySink,
  LibrarySource,
  loadedOrUnavailable,
  mpiSettingsOf,
  type NcFile,
  recordVariables,
  versionOf,
} from "./mpi_library.ts";

/** The backend's name. */
const NAME = "pnetcdf";

/** nc_set_fill's "no fill" (the native writer's and netcdf-lib's default). */
const NC_NOFILL = 0x100;

// mutant: pnetcdf-netcdf-layout
/** netCDF-C's nc_enddef layout: no free bytes after the header, variables on 4-byte bounds. */
const ENDDEF = { hMinfree: 0n, vAlign: 4n, vMinfree: 0n, rAlign: 4n } as const;

/** The types netCDF classic holds in CDF-1 and CDF-2 (CDF-5 holds every type). */
const CLASSIC_DTYPES: readonly DType[] = ["int8", "int16", "int32", "float32", "float64"];

/** The settings an open needs, or UsageError outside MPI. */
function settingsOf(options: { readonly mpiIo?: MpiIoSettings } | undefined): MpiIoSettings {
  return mpiSettingsOf(
    options,
    "pnetcdf writes and reads through PnetCDF in the table and records workloads under an MPI " +
      "launcher (mpirun, mpiexec, srun); its files are netCDF classic: read them with " +
      "--framing netcdf",
  );
}

/** The library for the run's MPI, or PeerUnavailableError with the reason. */
function library(abi: MpiHandles["abi"]): Pnetcdf {
  return loadedOrUnavailable(NAME, loadPnetcdf(abi));
}

/** The MPI_Info handle an output cell of `abi` holds (an address, or a 32-bit integer). */
function cellHandle(abi: MpiHandles["abi"], cell: Uint8Array): Deno.PointerValue | number {
  const v = new DataView(cell.buffer, cell.byteOffset, cell.byteLength);
  return abi === "openmpi"
    ? Deno.UnsafePointer.create(v.getBigUint64(0, true))
    : v.getInt32(0, true);
}

/** The open file `ncid` as the shared define and inquire calls take it. */
function ncFile(lib: Pnetcdf, ncid: number, path: string): NcFile<BigInt64Array> {
  return {
    ncid,
    prefix: "ncmpi_",
    calls: lib.nc,
    size: () => new BigInt64Array(1),
    check: (status, call) => checkPnetcdf(lib, status, call, path),
  };
}

/** Asks PnetCDF which hints it runs the open `ncid` with, for the run's meta. */
function reportHints(
  lib: Pnetcdf,
  h: MpiHandles,
  ncid: number,
  access: "write" | "read",
  path: string,
): void {
  const cell = new Uint8Array(8);
  checkPnetcdf(lib, lib.fn.ncmpi_inq_file_info(ncid, cell), "ncmpi_inq_file_info", path);
  h.report(access, { info: cellHandle(h.abi, cell) });
}

/** A record variable of an open file: where a record starts and how many elements it holds. */
interface RecordVar {
  readonly name: string;
  readonly dtype: DType;
  readonly shape: readonly number[];
  readonly varid: number;
  readonly start: BigInt64Array;
  readonly count: BigInt64Array;
}

interface PutVar extends RecordVar {
  /** The typed put call of its type (collective or not) and its name. */
  readonly put: VaraCall;
  readonly putName: string;
}

/**
 * The hidden test hook `SCIOBENCH_TEST_FAIL_RANK=R` with `SCIOBENCH_TEST_FAIL_PHASE=pnetcdf-write`:
 * rank R of a shared file puts its second frame's first variable as it should, then once more
 * through the call of the other data mode (the independent call in collective data mode, or the
 * other way round), which PnetCDF refuses with its own text without any collective step. The
 * frame (1) for rank R, else -1.
 */
function failingFrame(rank: number): number {
  return failsInTest("pnetcdf-write", rank) ? 1 : -1;
}

/** A netCDF classic file written through PnetCDF by one rank, or by every rank of a shared one. */
class PnetcdfSink extends LibrarySink {
  readonly #lib: Pnetcdf;
  protected readonly h: MpiHandles;
  /** The open file's id; -1 until the first frame (or the close) creates it. */
  #ncid = -1;
  readonly #noclobber: boolean;
  readonly #fsync: boolean;
  /** The `variant` option (1, 2, 5), or undefined: the native framing's choice. */
  readonly #variant: 1 | 2 | 5 | undefined;
  readonly #recordDim: string;
  #vars: PutVar[] = [];
  /** The test hook's frame (see {@link failingFrame}), or -1. */
  readonly #failsRecord: number;

  constructor(path: string, options: SinkOptions, settings: MpiIoSettings) {
    super(NAME, path, options, settings);
    if ((options.endian ?? "big") === "little") {
      throw new UsageError(`${NAME}: netCDF classic files are always big-endian`);
    }
    this.#fsync = (options.fsync ?? "end") !== "none";
    const given = options.backendOptions;
    const variant = given?.variant;
    this.#variant = variant === 1 || variant === 2 || variant === 5 ? variant : undefined;
    this.#recordDim = String(optionOrDefault(pnetcdf, given, "recordDim"));
    this.#noclobber = options.create === "new";
    this.#lib = library(settings.io.abi);
    this.h = settings.io.handles(settings.layout, settings.hints);
    this.#failsRecord = this.part === undefined ? -1 : failingFrame(this.h.rank);
  }

  /**
   * Creates the file (collective) as netCDF classic `variant`: the first frame decides it, as the
   * native writer's schema does (CDF-1 unless a type or size needs CDF-5, or the option's).
   */
  #create(variant: 1 | 2 | 5): void {
    const fn = this.#lib.fn;
    const mode = (this.#noclobber ? NCMPI.noclobber : NCMPI.clobber) |
      (variant === 5 ? NCMPI.cdf5 : variant === 2 ? NCMPI.cdf2 : 0);
    const id = new Int32Array(1);
    this.#check(
      fn.ncmpi_create(this.h.comm, cString(this.path), mode, this.h.info, id),
      "ncmpi_create",
    );
    this.#ncid = id[0]!;
    reportHints(this.#lib, this.h, this.#ncid, "write", this.path);
    this.#check(fn.ncmpi_set_fill(this.#ncid, NC_NOFILL, id), "ncmpi_set_fill");
  }

  #check(status: number, call: string): void {
    checkPnetcdf(this.#lib, status, call, this.path);
  }

  protected get defined(): boolean {
    return this.#vars.length > 0;
  }

  /** Defines the record variables of `frame`'s chunks as the native netcdf writer does (collective). */
  protected define(frame: Frame): void {
    const schema = schemaForChunks(frame.chunks, {
      recordDim: this.#recordDim,
      ...(this.#variant === undefined ? {} : { variant: this.#variant }),
    });
    const variant = schema.variant;
    for (const chunk of frame.chunks) {
      if (variant !== 5 && !CLASSIC_DTYPES.includes(chunk.dtype)) {
        throw new UsageError(
          `${NAME}: netCDF classic (variant ${variant}) cannot store ${chunk.dtype}: ` +
            "use --option variant=5",
        );
      }
    }
    this.#create(variant);
    const nc = ncFile(this.#lib, this.#ncid, this.path);
    defineRecordVariables(nc, schema, frame.chunks, (chunk, varid, ndims) => {
      const count = new BigInt64Array(ndims);
      count[0] = 1n;
      chunk.shape.forEach((d, k) => (count[k + 1] = BigInt(d)));
      this.#vars.push({
        name: chunk.name,
        dtype: chunk.dtype,
        shape: [...chunk.shape],
        varid,
        start: new BigInt64Array(ndims),
        count,
        put: this.#lib.vara("put", chunk.dtype, this.collective),
        putName: varaName("put", chunk.dtype, this.collective),
      });
    });
    this.#enddef();
  }

  /** Ends define mode with netCDF-C's layout, then enters independent data mode when asked. */
  #enddef(): void {
    const e = ENDDEF;
    const fn = this.#lib.fn;
    this.#check(
      fn.ncmpi__enddef(this.#ncid, e.hMinfree, e.vAlign, e.vMinfree, e.rAlign),
      "ncmpi__enddef",
    );
    if (!this.collective) {
      this.#check(fn.ncmpi_begin_indep_data(this.#ncid), "ncmpi_begin_indep_data");
    }
  }

  /** Puts record `record` of every variable from `frame` (empty calls once this rank failed). */
  protected put(record: number, frame: Frame | undefined): void {
    for (let i = 0; i < this.#vars.length; i++) {
      const v = this.#vars[i]!;
      const empty = frame === undefined || this.failure !== undefined;
      if (empty && !this.collective) return;
      v.start[0] = BigInt(record);
      const count = empty ? new BigInt64Array(v.count.length) : v.count;
      const data = empty ? new Uint8Array(0) : frame!.chunks[i]!.data;
      const status = this.#failsRecord === this.fed && !empty
        ? this.#refusedPut(v, data)
        : v.put(this.#ncid, v.varid, v.start, count, data);
      if (status !== 0 && this.failure === undefined) {
        try {
          this.#check(status, `${v.putName} '${v.name}' record ${record}`);
        } catch (e) {
          this.failure = e;
        }
      }
    }
  }

  /** The test hook's put: made as it should be, then refused (see {@link failingFrame}). */
  #refusedPut(v: PutVar, data: ArrayBufferView): number {
    const status = v.put(this.#ncid, v.varid, v.start, v.count, data);
    if (status !== 0) return status;
    const other = this.#lib.vara("put", v.dtype, !this.collective);
    return other(this.#ncid, v.varid, v.start, v.count, data);
  }

  override close(): void {
    // a file of no frames (no variables), as the native writer writes one: CDF-1
    if (this.#ncid < 0) {
      this.#create(this.#variant ?? 1);
      this.#enddef();
    }
    super.close();
  }

  /** Leaves independent data mode and syncs when asked: the end of the write (collective). */
  protected finish(): void {
    if (!this.collective) {
      this.#check(this.#lib.fn.ncmpi_end_indep_data(this.#ncid), "ncmpi_end_indep_data");
    }
    // mutant: pnetcdf-shared-sync
    if (this.#fsync) this.#sync();
  }

  /** ncmpi_sync (collective): the durable point, shown in the audit trail. */
  #sync(): void {
    this.#check(this.#lib.fn.ncmpi_sync(this.#ncid), "ncmpi_sync");
    noteLibrarySync(this.path, "ncmpi_sync");
  }

  protected closeCall(): void {
    this.#check(this.#lib.fn.ncmpi_close(this.#ncid), "ncmpi_close");
  }

  protected closeQuietly(): void {
    if (this.#ncid >= 0) this.#lib.fn.ncmpi_close(this.#ncid);
    this.h.free();
  }
}

interface GetVar extends RecordVar {
  readonly bytes: number;
  /** The typed get call of its type (collective or not) and its name. */
  readonly get: VaraCall;
  readonly getName: string;
}

/** A netCDF classic file's record variables read back through PnetCDF, a record a frame. */
class PnetcdfSource extends LibrarySource<GetVar> implements FrameSource {
  readonly framing = NAME;
  readonly frameCount: number;
  readonly storedOrder = "big" as const;
  readonly collective: boolean;
  readonly #lib: Pnetcdf;
  readonly #h: MpiHandles;
  readonly #ncid: number;

  constructor(path: string, settings: MpiIoSettings) {
    super(path);
    this.#lib = library(settings.io.abi);
    this.#h = settings.io.handles(settings.layout, settings.hints);
    const fn = this.#lib.fn;
    const id = new Int32Array(1);
    try {
      const status = fn.ncmpi_open(this.#h.comm, cString(path), NCMPI.nowrite, this.#h.info, id);
      checkPnetcdf(this.#lib, status, "ncmpi_open", path);
    } catch (e) {
      this.#h.free();
      throw e;
    }
    this.#ncid = id[0]!;
    try {
      reportHints(this.#lib, this.#h, this.#ncid, "read", path);
      this.frameCount = this.#inquire(settings.collective);
      if (!settings.collective) {
        checkPnetcdf(
          this.#lib,
          fn.ncmpi_begin_indep_data(this.#ncid),
          "ncmpi_begin_indep_data",
          path,
        );
      }
    } catch (e) {
      fn.ncmpi_close(this.#ncid);
      this.#h.free();
      throw e;
    }
    this.collective = settings.collective && this.#h.ranks > 1;
  }

  /** Finds the record variables (in file order) and returns the records in the file. */
  #inquire(collective: boolean): number {
    const nc = ncFile(this.#lib, this.#ncid, this.path);
    const { records, variables } = recordVariables(nc, DTYPE_OF_NC);
    for (const v of variables) {
      this.vars.push({
        ...v,
        start: new BigInt64Array(v.ndims),
        count: BigInt64Array.from([1, ...v.shape].map(BigInt)),
        get: this.#lib.vara("get", v.dtype, collective),
        getName: varaName("get", v.dtype, collective),
      });
    }
    return records;
  }

  protected get library(): string {
    return `PnetCDF ${this.#lib.version}`;
  }

  protected get(v: GetVar, data: Uint8Array, frame: number): void {
    const status = v.get(this.#ncid, v.varid, v.start, v.count, data);
    checkPnetcdf(this.#lib, status, `${v.getName} '${v.name}' record ${frame}`, this.path);
  }

  close(): void {
    try {
      checkPnetcdf(this.#lib, this.#lib.fn.ncmpi_close(this.#ncid), "ncmpi_close", this.path);
    } finally {
      this.#h.free();
    }
  }
}

/** The `pnetcdf` backend (registered in lib/backends/registry.ts). */
export const pnetcdf: Backend = {
  name: NAME,
  description: "netCDF classic (CDF-1, CDF-2, CDF-5) through PnetCDF on the run's " +
    "MPI (ncmpi_put_vara_all/get_vara_all, or the independent calls with --collective off)",
  kind: "peer",
  options: [
    ...NETCDF_OPTIONS.filter((o) => o.name === "variant" || o.name === "recordDim"),
  ],
  magic: [],
  orders: ["big"],
  fsyncPolicies: ["end", "none"],
  transfer: false,
  sharedLayout: false,
  mpiIo: {
    layouts: ["shared", "per-rank"],
    collective: true,
    segments: false,
    bs: false,
    library: (io) => `PnetCDF ${pnetcdfVersion(io)} on ${io.library}`,
  },
  library: { displayName: "PnetCDF", files: PNETCDF_SONAMES },
  // without a launcher the guard says why (lib/backends/mpi_io.ts); under one, the library
  // must be there and built for the launcher's MPI
  unavailable: () => pnetcdfProblem(installedMpiIo()?.abi),
  openWriter(path: string, options: SinkOptions): FrameSink {
    return new PnetcdfSink(path, options, settingsOf(options));
  },
  openReader(path: string, options?: SourceOptions): FrameSource {
    return new PnetcdfSource(path, settingsOf(options));
  },
};

/** The version (`1.12.3`) of the PnetCDF built for `io`'s MPI, or `unknown` when there is none. */
function pnetcdfVersion(io: MpiIo): string {
  return versionOf(loadPnetcdf(io.abi));
}
