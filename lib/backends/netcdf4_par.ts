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
import { IoError, PeerUnavailableError, UsageError } from "../core/errors.ts";
import { abandonSharedFile, failsInTest, removeQuietly } from "../peers/common.ts";
import { type DType, DTYPE_SIZE, type Frame } from "../framings/types.ts";
import { CHUNK_NAME_ATTR, NETCDF_OPTIONS, schemaForChunks } from "../framings/netcdf/mod.ts";
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
  NC_TYPE,
} from "../peers/netcdf4/bindings.ts";
import type {
  Backend,
  FrameSink,
  FrameSource,
  MpiHandles,
  MpiIo,
  MpiIoSettings,
  ReadChunk,
  SinkOptions,
  SourceOptions,
} from "./backend.ts";
import { installedMpiIo } from "./mpi_io.ts";
import { closeLibraryWrite, closeOrRemove } from "./mpi_library.ts";

/** The backend's name. */
const NAME = "netcdf4-par";

/** The settings an open needs, or UsageError outside MPI. */
function settingsOf(options: { readonly mpiIo?: MpiIoSettings } | undefined): MpiIoSettings {
  const s = options?.mpiIo;
  if (s === undefined) {
    throw new UsageError(
      "netcdf4-par writes and reads through netCDF-C's parallel I/O in the table and records " +
        "workloads under an MPI launcher (mpirun, mpiexec, srun); its files are netCDF-4: read " +
        "them with --framing netcdf4",
    );
  }
  return s;
}

/** The library for the run's MPI, or PeerUnavailableError with the reason. */
function library(abi: MpiHandles["abi"]): NetcdfPar {
  const lib = loadNetcdfPar(abi);
  if (typeof lib === "string") throw new PeerUnavailableError(`${NAME}: ${lib}`);
  return lib;
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
class NetcdfParSink implements FrameSink {
  readonly path: string;
  readonly #lib: NetcdfPar;
  readonly #h: MpiHandles;
  readonly #ncid: number;
  readonly #collective: boolean;
  readonly #part: MpiIoSettings["part"];
  readonly #fsync: boolean;
  readonly #endian: "big" | "little" | "native";
  readonly #recordDim: string;
  readonly #failsRecord: number;
  /** Records the file will hold (this rank's part says), or undefined when not known. */
  readonly #records: number | undefined;
  #vars: ParVar[] = [];
  #fed = 0;
  /** This rank's first failure; its later collective calls are made empty. */
  #failure: unknown;
  #open = true;

  constructor(path: string, options: SinkOptions, settings: MpiIoSettings) {
    this.path = path;
    if (options.create === "append") {
      throw new UsageError(`${NAME} cannot append to ${path}: it writes new files`);
    }
    if (settings.layout === "shared" && settings.part === undefined) {
      throw new UsageError(`${NAME}: a shared file needs this rank's part of the frames (${path})`);
    }
    this.#fsync = (options.fsync ?? "end") !== "none";
    this.#collective = settings.collective;
    this.#part = settings.layout === "shared" ? settings.part : undefined;
    this.#records = settings.layout === "shared" ? settings.part?.total : settings.part?.count;
    this.#endian = options.endian ?? "native";
    this.#recordDim = String(optionOrDefault(netcdf4Par, options.backendOptions, "recordDim"));
    this.#lib = library(settings.io.abi);
    this.#h = settings.io.handles(settings.layout, settings.hints);
    const mode = NC_NETCDF4 | (options.create === "new" ? NC_NOCLOBBER : NC_CLOBBER);
    const id = new Int32Array(1);
    try {
      this.#check(
        this.#lib.fn.nc_create_par(cString(path), mode, this.#h.comm, this.#h.info, id),
        "nc_create_par",
      );
    } catch (e) {
      this.#h.free();
      throw e;
    }
    this.#ncid = id[0]!;
    this.#failsRecord = this.#part === undefined ? -1 : failingFrame(this.#h.rank);
    try {
      this.#check(this.#lib.fn.nc_set_fill(this.#ncid, NC_NOFILL, id), "nc_set_fill");
    } catch (e) {
      this.#closeQuietly();
      if (this.#h.rank === 0) removeQuietly(path);
      throw e;
    }
  }

  #check(status: number, call: string): void {
    checkNetcdfPar(this.#lib, status, call, this.path);
  }

  /** Defines the variables of `frame`'s chunks as the serial netcdf4 peer does (collective). */
  #define(frame: Frame): void {
    const fn = this.#lib.fn;
    const ncid = this.#ncid;
    const id = new Int32Array(1);
    const schema = schemaForChunks(frame.chunks, { recordDim: this.#recordDim, variant: 1 });
    const dimIds = new Int32Array(schema.dimensions.length);
    schema.dimensions.forEach((d, k) => {
      this.#check(
        fn.nc_def_dim(ncid, cString(d.name), BigInt(d.length), id),
        `nc_def_dim '${d.name}'`,
      );
      dimIds[k] = id[0]!;
    });
    frame.chunks.forEach((chunk, i) => {
      const v = schema.variables[i]!;
      const ids = Int32Array.from(v.dims, (k) => dimIds[k]!);
      this.#check(
        fn.nc_def_var(ncid, cString(v.name), NC_TYPE[chunk.dtype], ids.length, ids, id),
        `nc_def_var '${v.name}'`,
      );
      const varid = id[0]!;
      const original = v.attributes.find((a) => a.name === CHUNK_NAME_ATTR)?.values;
      if (typeof original === "string") {
        const text = new TextEncoder().encode(original);
        this.#check(
          fn.nc_put_att_text(ncid, varid, cString(CHUNK_NAME_ATTR), BigInt(text.length), text),
          `nc_put_att_text '${CHUNK_NAME_ATTR}'`,
        );
      }
      const count = new BigUint64Array(ids.length);
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
        start: new BigUint64Array(ids.length),
        count,
        none: new BigUint64Array(ids.length),
        bytes: chunk.data.byteLength,
      });
    });
    this.#check(fn.nc_enddef(ncid), "nc_enddef");
    for (const v of this.#vars) this.#access(v, this.#collective);
    if (!this.#collective) this.#extend();
  }

  /** nc_var_par_access of `v`: collective or independent. */
  #access(v: ParVar, collective: boolean): void {
    const mode = collective ? NC_PAR_ACCESS.collective : NC_PAR_ACCESS.independent;
    this.#check(this.#lib.fn.nc_var_par_access(this.#ncid, v.varid, mode), "nc_var_par_access");
  }

  /** Records the first failure of a call on `v` (a rank keeps going with empty calls). */
  #note(status: number, call: string, v: ParVar, record: number): void {
    if (status === 0 || this.#failure !== undefined) return;
    try {
      this.#check(status, `${call} '${v.name}' record ${record}`);
    } catch (e) {
      this.#failure = e;
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
    const last = this.#part === undefined || this.#part.first + this.#part.count === total;
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
  #put(record: number, frame: Frame | undefined): void {
    const fn = this.#lib.fn;
    const empty = frame === undefined || this.#failure !== undefined;
    // the records not known in advance (a rank's own file): each put grows the file, collectively
    const grows = !this.#collective && this.#records === undefined;
    const { collective, independent } = NC_PAR_ACCESS;
    for (let i = 0; i < this.#vars.length; i++) {
      const v = this.#vars[i]!;
      if (empty && !this.#collective) continue;
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
      if (i === 0 && !empty && this.#failsRecord === this.#fed) {
        // the test hook: a put netCDF-C refuses (no such variable) before any collective step
        const status = fn.nc_put_vara(this.#ncid, -7, v.start, v.count, data);
        this.#note(status, "nc_put_vara", v, record);
      }
    }
  }

  writeFrame(frame: Frame): void {
    if (this.#vars.length === 0) this.#define(frame);
    const record = (this.#part?.first ?? 0) + this.#fed;
    this.#put(record, frame);
    this.#fed++;
    if (this.#failure !== undefined) throw this.#failure;
  }

  close(): void {
    const part = this.#part;
    closeLibraryWrite({
      part,
      wrote: () => this.#failure === undefined && this.#fed === part?.count,
      finish: () => this.#finish(),
      agree: (value) => this.#agree(value),
      setFailure: (failure) => {
        this.#failure = failure;
      },
      closeFile: () => this.#closeFile(),
      abort: () => this.abort(),
    });
  }

  /** Ends define mode of a file of no frames and syncs when asked: the end of the write. */
  #finish(): void {
    if (this.#vars.length === 0) this.#check(this.#lib.fn.nc_enddef(this.#ncid), "nc_enddef");
    // mutant: netcdf4-par-shared-sync
    if (this.#fsync) this.#sync();
  }

  /** nc_sync (collective for a shared file): the durable point, shown in the audit trail. */
  #sync(): void {
    this.#check(this.#lib.fn.nc_sync(this.#ncid), "nc_sync");
    noteLibrarySync(this.path, "nc_sync");
  }

  /** nc_close (collective); when it fails the file is removed (rank 0's, when shared). */
  #closeFile(): void {
    this.#open = false;
    closeOrRemove(
      this.#h,
      this.path,
      () => this.#check(this.#lib.fn.nc_close(this.#ncid), "nc_close"),
    );
  }

  /**
   * Every rank of a shared file says how it did (0, or -1 when it failed); unless all did well,
   * every rank closes the file, rank 0 removes it, and this rank throws its own failure or
   * PeerRankFailed.
   */
  #agree(value: number): void {
    const [min] = this.#h.range(value);
    if (min >= 0) return;
    throw abandonSharedFile({
      path: this.path,
      rank: this.#h.rank,
      value,
      min,
      failure: this.#failure,
      fed: this.#fed,
      release: () => {
        this.#open = false;
        this.#closeQuietly();
      },
    });
  }

  abort(): void {
    if (!this.#open) return;
    const part = this.#part;
    if (part !== undefined) {
      // the collective calls this rank still owes the others, empty, then the agreement
      this.#failure ??= new IoError(`${this.path}: this rank stopped writing`);
      if (this.#vars.length > 0) {
        for (; this.#fed < part.count; this.#fed++) this.#put(part.first + this.#fed, undefined);
      }
      try {
        this.#agree(-1);
      } catch {
        // the caller reports its own failure
      }
      return;
    }
    this.#open = false;
    this.#closeQuietly();
    removeQuietly(this.path);
  }

  #closeQuietly(): void {
    if (this.#lib.fn.nc_close(this.#ncid) !== 0) this.#lib.fn.nc_abort(this.#ncid);
    this.#h.free();
  }
}

/** A netCDF-4 file's record variables read back through parallel netCDF-C, a record a frame. */
class NetcdfParSource implements FrameSource {
  readonly path: string;
  readonly framing = NAME;
  readonly frameCount: number;
  readonly collective: boolean;
  readonly warnings: readonly string[] = [];
  readonly #lib: NetcdfPar;
  readonly #h: MpiHandles;
  readonly #ncid: number;
  readonly #vars: ParVar[] = [];
  #buf = new Uint8Array(0);
  #bytesRead = 0;

  constructor(path: string, settings: MpiIoSettings) {
    this.path = path;
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
      for (const v of this.#vars) {
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
    const fn = this.#lib.fn;
    const ncid = this.#ncid;
    const at = (status: number, call: string) => checkNetcdfPar(this.#lib, status, call, this.path);
    const ndims = new Int32Array(1), nvars = new Int32Array(1), natts = new Int32Array(1);
    const unlimited = new Int32Array(1);
    at(fn.nc_inq(ncid, ndims, nvars, natts, unlimited), "nc_inq");
    const length = new BigUint64Array(1);
    const dimLength = (dim: number) => {
      at(fn.nc_inq_dimlen(ncid, dim, length), "nc_inq_dimlen");
      return Number(length[0]!);
    };
    const records = unlimited[0]! < 0 ? 0 : dimLength(unlimited[0]!);
    const name = new Uint8Array(257), type = new Int32Array(1), nd = new Int32Array(1);
    const dims = new Int32Array(1024);
    for (let varid = 0; varid < nvars[0]!; varid++) {
      name.fill(0);
      at(fn.nc_inq_var(ncid, varid, name, type, nd, dims, natts), "nc_inq_var");
      if (nd[0]! === 0 || dims[0] !== unlimited[0]) continue;
      const dtype = DTYPE_OF_NC[type[0]!];
      if (dtype === undefined) continue;
      const shape = Array.from(dims.subarray(1, nd[0]!), dimLength);
      let bytes = DTYPE_SIZE[dtype];
      for (const d of shape) bytes *= d;
      this.#vars.push({
        name: this.#chunkName(varid, decodeName(name)),
        dtype,
        shape,
        varid,
        start: new BigUint64Array(nd[0]!),
        count: BigUint64Array.from([1, ...shape].map(BigInt)),
        none: new BigUint64Array(nd[0]!),
        bytes,
      });
    }
    return records;
  }

  /** The chunk a variable stands for: its `chunk_name` attribute, else its own name. */
  #chunkName(varid: number, name: string): string {
    const fn = this.#lib.fn;
    const type = new Int32Array(1), length = new BigUint64Array(1);
    const attr = cString(CHUNK_NAME_ATTR);
    if (fn.nc_inq_att(this.#ncid, varid, attr, type, length) !== 0 || type[0] !== 2) return name;
    const text = new Uint8Array(Number(length[0]!) + 1);
    const status = fn.nc_get_att_text(this.#ncid, varid, attr, text);
    checkNetcdfPar(this.#lib, status, "nc_get_att_text", this.path);
    return decodeName(text) || name;
  }

  /** Bytes read by frame reads so far (the variables' records). */
  get bytesRead(): number {
    return this.#bytesRead;
  }

  readFrame(frame: number): readonly ReadChunk[] {
    const fn = this.#lib.fn;
    let total = 0;
    for (const v of this.#vars) total += v.bytes;
    if (this.#buf.length < total) this.#buf = new Uint8Array(total);
    let at = 0;
    return this.#vars.map((v) => {
      const data = this.#buf.subarray(at, at + v.bytes);
      at += v.bytes;
      v.start[0] = BigInt(frame);
      const status = fn.nc_get_vara(this.#ncid, v.varid, v.start, v.count, data);
      checkNetcdfPar(this.#lib, status, `nc_get_vara '${v.name}' record ${frame}`, this.path);
      this.#bytesRead += v.bytes;
      return { name: v.name, dtype: v.dtype, shape: v.shape, data };
    });
  }

  describe(): Record<string, unknown> {
    return {
      library: `netCDF-C ${this.#lib.version} (parallel)`,
      variables: this.#vars.length,
      records: this.frameCount,
    };
  }

  close(): void {
    try {
      checkNetcdfPar(this.#lib, this.#lib.fn.nc_close(this.#ncid), "nc_close", this.path);
    } finally {
      this.#h.free();
    }
  }
}

/** A NUL-terminated name in `buf`. */
function decodeName(buf: Uint8Array): string {
  const end = buf.indexOf(0);
  return new TextDecoder().decode(end < 0 ? buf : buf.subarray(0, end));
}

/** The version (`4.9.0`) of the netCDF-C built for `io`'s MPI, or `unknown` when there is none. */
function netcdfParVersion(io: MpiIo): string {
  const lib = loadNetcdfPar(io.abi);
  return typeof lib === "string" ? "unknown" : lib.version;
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
