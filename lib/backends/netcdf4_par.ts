/**
 * The `netcdf4-par` backend: netCDF-4 files (HDF5 storage) written and read through netCDF-C's
 * parallel I/O (lib/peers/netcdf_par/: libnetcdf_mpi on parallel HDF5) on the run's MPI
 * communicator. `nc_create_par(NC_NETCDF4 | NC_CLOBBER)` on MPI_COMM_WORLD (`--layout shared`)
 * or MPI_COMM_SELF (`per-rank`) with the run's `--hint`s as the MPI_Info; the variables are the
 * serial `netcdf4` peer's (the native netcdf schema: one record variable per chunk along the
 * unlimited record dimension, chunked one record per HDF5 chunk, `nc_def_var_endian` for a byte
 * order other than native); `nc_var_par_access` NC_COLLECTIVE (`--collective on`) or
 * NC_INDEPENDENT; each rank puts its own records with nc_put_vara and reads them back with
 * nc_get_vara. The durable point is nc_sync, then nc_close.
 *
 * Growing the unlimited dimension is collective in parallel HDF5: netCDF-C refuses it during
 * independent access (NC_ECANTEXTEND), and a zero-count collective put does not grow it. So
 * under `--collective off` the file is grown to all its records first, by one collective put of
 * zeros at the last record (which the rank owning it overwrites later: that record is written
 * twice), and every rank's own puts are independent; when the records are not known in advance
 * (a rank's own file opened without its frame count) each put is made collective on that rank's
 * MPI_COMM_SELF instead.
 * A rank that fails keeps making its collective calls empty, every rank agrees on the failure,
 * closes the file and rank 0 removes it (the `mpiio` backend's protocol).
 * @module
 */
import { failsInTest, removeQuietly } from "../peers/common.ts";
import type { DType, Frame } from "../framings/types.ts";
import { NETCDF_OPTIONS, schemaForChunks } from "../framings/netcdf/mod.ts";
import { optionOrDefault } from "../framings/options.ts";
import { cString, noteLibrarySync } from "../sys/libc.ts";
import {
  checkNetcdfPar,
  loadNetcdfPar,
  NC_PAR_ACCESS,
  NETCDF_PAR_SONAMES,
  type NetcdfPar,
  netcdfParProblem,
} from "../peers/netcdf_par/bindings.ts";
import {
  DTYPE_OF_NC,
  NC_CHUNKED,
  NC_CLOBBER,
  NC_ENDIAN_BIG,
  NC_ENDIAN_LITTLE,
  NC_NETCDF4,
  NC_NOCLOBBER,
  NC_NOFILL,
  NC_NOWRITE,
} from "../peers/netcdf4/bindings.ts";
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
const NAME = "netcdf4-par";

/** The settings an open needs, or UsageError outside MPI. */
function settingsOf(options: { readonly mpiIo?: MpiIoSettings } | undefined): MpiIoSettings {
  return mpiSettingsOf(
    options,
    "netcdf4-par writes and reads through netCDF-C's parallel I/O in the table and records " +
      "workloads under an MPI launcher (mpirun, mpiexec, srun); its files are netCDF-4: read " +
      "them with --framing netcdf4",
  );
}

/** The library for the run's MPI, or PeerUnavailableError with the reason. */
function library(abi: MpiHandles["abi"]): NetcdfPar {
  return loadedOrUnavailable(NAME, loadNetcdfPar(abi));
}

/** The open file `ncid` as the shared define and inquire calls take it. */
function ncFile(lib: NetcdfPar, ncid: number, path: string): NcFile<BigUint64Array> {
  return {
    ncid,
    prefix: "nc_",
    calls: lib.nc,
    size: () => new BigUint64Array(1),
    check: (status, call) => checkNetcdfPar(lib, status, call, path),
  };
}

interface ParVar {
  readonly name: string;
  readonly dtype: DType;
  readonly shape: readonly number[];
  readonly varid: number;
  readonly start: BigUint64Array;
  readonly count: BigUint64Array;
  /** The count of a put without data (zeros). */
  readonly none: BigUint64Array;
  readonly bytes: number;
}

/**
 * The hidden test hook `SCIOBENCH_TEST_FAIL_RANK=R` with
 * `SCIOBENCH_TEST_FAIL_PHASE=netcdf4-par-write`: rank R of a shared file puts its second frame's
 * first variable as it should, then once more into a variable that does not exist, which
 * netCDF-C refuses with its own text before any collective step. The frame (1), else -1.
 */
function failingFrame(rank: number): number {
  return failsInTest("netcdf4-par-write", rank) ? 1 : -1;
}

/** A netCDF-4 file written through parallel netCDF-C by one rank, or by every rank of a shared one. */
class NetcdfParSink extends LibrarySink {
  readonly #lib: NetcdfPar;
  protected readonly h: MpiHandles;
  readonly #ncid: number;
  readonly #fsync: boolean;
  readonly #endian: "big" | "little" | "native";
  readonly #recordDim: string;
  readonly #failsRecord: number;
  /** Records the file will hold (this rank's part says), or undefined when not known. */
  readonly #records: number | undefined;
  #vars: ParVar[] = [];

  constructor(path: string, options: SinkOptions, settings: MpiIoSettings) {
    super(NAME, path, options, settings);
    this.#fsync = (options.fsync ?? "end") !== "none";
    this.#records = settings.layout === "shared" ? settings.part?.total : settings.part?.count;
    this.#endian = options.endian ?? "native";
    this.#recordDim = String(optionOrDefault(netcdf4Par, options.backendOptions, "recordDim"));
    this.#lib = library(settings.io.abi);
    this.h = settings.io.handles(settings.layout, settings.hints);
    const mode = NC_NETCDF4 | (options.create === "new" ? NC_NOCLOBBER : NC_CLOBBER);
    const id = new Int32Array(1);
    try {
      this.#check(
        this.#lib.fn.nc_create_par(cString(path), mode, this.h.comm, this.h.info, id),
        "nc_create_par",
      );
    } catch (e) {
      this.h.free();
      throw e;
    }
    this.#ncid = id[0]!;
    this.#failsRecord = this.part === undefined ? -1 : failingFrame(this.h.rank);
    try {
      this.#check(this.#lib.fn.nc_set_fill(this.#ncid, NC_NOFILL, id), "nc_set_fill");
    } catch (e) {
      this.closeQuietly();
      if (this.h.rank === 0) removeQuietly(path);
      throw e;
    }
  }

  #check(status: number, call: string): void {
    checkNetcdfPar(this.#lib, status, call, this.path);
  }

  protected get defined(): boolean {
    return this.#vars.length > 0;
  }

  /** Defines the variables of `frame`'s chunks as the serial netcdf4 peer does (collective). */
  protected define(frame: Frame): void {
    const fn = this.#lib.fn;
    const ncid = this.#ncid;
    const schema = schemaForChunks(frame.chunks, { recordDim: this.#recordDim, variant: 1 });
    const nc = ncFile(this.#lib, ncid, this.path);
    defineRecordVariables(nc, schema, frame.chunks, (chunk, varid, ndims) => {
      const count = new BigUint64Array(ndims);
      count[0] = 1n;
      chunk.shape.forEach((d, k) => (count[k + 1] = BigInt(d)));
      this.#check(fn.nc_def_var_chunking(ncid, varid, NC_CHUNKED, count), "nc_def_var_chunking");
      if (this.#endian !== "native") {
        const e = this.#endian === "big" ? NC_ENDIAN_BIG : NC_ENDIAN_LITTLE;
        this.#check(fn.nc_def_var_endian(ncid, varid, e), "nc_def_var_endian");
      }
      this.#vars.push({
        name: chunk.name,
        dtype: chunk.dtype,
        shape: [...chunk.shape],
        varid,
        start: new BigUint64Array(ndims),
        count,
        none: new BigUint64Array(ndims),
        bytes: chunk.data.byteLength,
      });
    });
    this.#check(fn.nc_enddef(ncid), "nc_enddef");
    for (const v of this.#vars) this.#access(v, this.collective);
    if (!this.collective) this.#extend();
  }

  /** nc_var_par_access of `v`: collective or independent. */
  #access(v: ParVar, collective: boolean): void {
    const mode = collective ? NC_PAR_ACCESS.collective : NC_PAR_ACCESS.independent;
    this.#check(this.#lib.fn.nc_var_par_access(this.#ncid, v.varid, mode), "nc_var_par_access");
  }

  /** Records the first failure of a call on `v` (a rank keeps going with empty calls). */
  #note(status: number, call: string, v: ParVar, record: number): void {
    if (status === 0 || this.failure !== undefined) return;
    try {
      this.#check(status, `${call} '${v.name}' record ${record}`);
    } catch (e) {
      this.failure = e;
    }
  }

  /**
   * Independent access: grows the record dimension to the file's records (collective; the rank
   * whose frames end the file puts zeros at the last record, which its own put later
   * overwrites), so no independent put has to grow it. Nothing when the records are unknown.
   */
  #extend(): void {
    const total = this.#records;
    if (total === undefined || total === 0) return;
    const fn = this.#lib.fn;
    const last = this.part === undefined || this.part.first + this.part.count === total;
    for (const v of this.#vars) {
      this.#access(v, true);
      v.start[0] = BigInt(total - 1);
      const zeros = new Uint8Array(last ? v.bytes : 0);
      const status = fn.nc_put_vara(this.#ncid, v.varid, v.start, last ? v.count : v.none, zeros);
      this.#check(status, `nc_put_vara '${v.name}' record ${total - 1} (growing the file)`);
      this.#access(v, false);
    }
  }

  /**
   * Puts record `record` of every variable from `frame` (empty once this rank failed, or
   * without a frame: collective calls are still made, independent ones not).
   */
  protected put(record: number, frame: Frame | undefined): void {
    const fn = this.#lib.fn;
    const empty = frame === undefined || this.failure !== undefined;
    // the records not known in advance (a rank's own file): each put grows the file, collectively
    const grows = !this.collective && this.#records === undefined;
    const { collective, independent } = NC_PAR_ACCESS;
    for (let i = 0; i < this.#vars.length; i++) {
      const v = this.#vars[i]!;
      if (empty && !this.collective) continue;
      v.start[0] = BigInt(record);
      const data = empty ? new Uint8Array(0) : frame!.chunks[i]!.data;
      const count = empty ? v.none : v.count;
      const access = (mode: number) =>
        this.#note(fn.nc_var_par_access(this.#ncid, v.varid, mode), "nc_var_par_access", v, record);
      if (grows) access(collective);
      this.#note(
        fn.nc_put_vara(this.#ncid, v.varid, v.start, count, data),
        "nc_put_vara",
        v,
        record,
      );
      if (grows) access(independent);
      if (i === 0 && !empty && this.#failsRecord === this.fed) {
        // the test hook: a put netCDF-C refuses (no such variable) before any collective step
        const status = fn.nc_put_vara(this.#ncid, -7, v.start, v.count, data);
        this.#note(status, "nc_put_vara", v, record);
      }
    }
  }

  /** Ends define mode of a file of no frames and syncs when asked: the end of the write. */
  protected finish(): void {
    if (this.#vars.length === 0) this.#check(this.#lib.fn.nc_enddef(this.#ncid), "nc_enddef");
    // mutant: netcdf4-par-shared-sync
    if (this.#fsync) this.#sync();
  }

  /** nc_sync (collective for a shared file): the durable point, shown in the audit trail. */
  #sync(): void {
    this.#check(this.#lib.fn.nc_sync(this.#ncid), "nc_sync");
    noteLibrarySync(this.path, "nc_sync");
  }

  protected closeCall(): void {
    this.#check(this.#lib.fn.nc_close(this.#ncid), "nc_close");
  }

  protected closeQuietly(): void {
    if (this.#lib.fn.nc_close(this.#ncid) !== 0) this.#lib.fn.nc_abort(this.#ncid);
    this.h.free();
  }
}

/** A netCDF-4 file's record variables read back through parallel netCDF-C, a record a frame. */
class NetcdfParSource extends LibrarySource<ParVar> implements FrameSource {
  readonly framing = NAME;
  readonly frameCount: number;
  readonly collective: boolean;
  readonly #lib: NetcdfPar;
  readonly #h: MpiHandles;
  readonly #ncid: number;

  constructor(path: string, settings: MpiIoSettings) {
    super(path);
    this.#lib = library(settings.io.abi);
    this.#h = settings.io.handles(settings.layout, settings.hints);
    const fn = this.#lib.fn;
    const id = new Int32Array(1);
    try {
      const status = fn.nc_open_par(cString(path), NC_NOWRITE, this.#h.comm, this.#h.info, id);
      checkNetcdfPar(this.#lib, status, "nc_open_par", path);
    } catch (e) {
      this.#h.free();
      throw e;
    }
    this.#ncid = id[0]!;
    try {
      this.frameCount = this.#inquire();
      const mode = settings.collective ? NC_PAR_ACCESS.collective : NC_PAR_ACCESS.independent;
      for (const v of this.vars) {
        const status = fn.nc_var_par_access(this.#ncid, v.varid, mode);
        checkNetcdfPar(this.#lib, status, "nc_var_par_access", path);
      }
    } catch (e) {
      fn.nc_close(this.#ncid);
      this.#h.free();
      throw e;
    }
    this.collective = settings.collective && this.#h.ranks > 1;
  }

  /** Finds the record variables (in file order) and returns the records in the file. */
  #inquire(): number {
    const nc = ncFile(this.#lib, this.#ncid, this.path);
    const { records, variables } = recordVariables(nc, DTYPE_OF_NC);
    for (const v of variables) {
      this.vars.push({
        ...v,
        start: new BigUint64Array(v.ndims),
        count: BigUint64Array.from([1, ...v.shape].map(BigInt)),
        none: new BigUint64Array(v.ndims),
      });
    }
    return records;
  }

  protected get library(): string {
    return `netCDF-C ${this.#lib.version} (parallel)`;
  }

  protected get(v: ParVar, data: Uint8Array, frame: number): void {
    const status = this.#lib.fn.nc_get_vara(this.#ncid, v.varid, v.start, v.count, data);
    checkNetcdfPar(this.#lib, status, `nc_get_vara '${v.name}' record ${frame}`, this.path);
  }

  close(): void {
    try {
      checkNetcdfPar(this.#lib, this.#lib.fn.nc_close(this.#ncid), "nc_close", this.path);
    } finally {
      this.#h.free();
    }
  }
}

/** The version (`4.9.0`) of the netCDF-C built for `io`'s MPI, or `unknown` when there is none. */
function netcdfParVersion(io: MpiIo): string {
  return versionOf(loadNetcdfPar(io.abi));
}

/** The `netcdf4-par` backend (registered in lib/backends/registry.ts). */
export const netcdf4Par: Backend = {
  name: NAME,
  description: "netCDF-4/HDF5 through netCDF-C's parallel I/O on the run's MPI (nc_create_par, " +
    "nc_var_par_access collective, or independent with --collective off)",
  kind: "peer",
  options: NETCDF_OPTIONS.filter((o) => o.name === "recordDim"),
  magic: [],
  orders: ["little", "big"],
  fsyncPolicies: ["end", "none"],
  transfer: false,
  sharedLayout: false,
  mpiIo: {
    layouts: ["shared", "per-rank"],
    collective: true,
    segments: false,
    bs: false,
    library: (io) => `netCDF-C ${netcdfParVersion(io)} (parallel HDF5) on ${io.library}`,
  },
  library: { displayName: "netCDF-C (parallel)", files: NETCDF_PAR_SONAMES },
  // without a launcher the guard says why (lib/backends/mpi_io.ts); under one, the library
  // must be there and built for the launcher's MPI
  unavailable: () => netcdfParProblem(installedMpiIo()?.abi),
  openWriter(path: string, options: SinkOptions): FrameSink {
    return new NetcdfParSink(path, options, settingsOf(options));
  },
  openReader(path: string, options?: SourceOptions): FrameSource {
    return new NetcdfParSource(path, settingsOf(options));
  },
};
