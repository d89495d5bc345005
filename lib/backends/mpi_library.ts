/**
 * What the backends that write and read one netCDF file through an MPI-aware library share
 * (`pnetcdf`, `netcdf4-par`): the end of a write (a file of this rank's own is finished and
 * closed; a shared file is finished only once every rank says it wrote its share, and closed only
 * once every rank says the finish went well, the `mpiio` backend's protocol; a close that fails
 * removes the file, rank 0's when shared), the record variables defined from a frame's chunks as
 * the native netcdf framing defines them, and the record variables found and read back. Each
 * backend supplies its library's calls.
 * @module
 */
import { IoError, PeerUnavailableError, UsageError } from "../core/errors.ts";
import { agreeOnSharedFile, removeQuietly } from "../peers/common.ts";
import { NC_TYPE } from "../peers/netcdf4/bindings.ts";
import type { NcCalls, NcSizes } from "../peers/nc_calls.ts";
import { cStringOf } from "../framings/kit.ts";
import { CHUNK_NAME_ATTR, type schemaForChunks } from "../framings/netcdf/mod.ts";
import { type Chunk, type DType, DTYPE_SIZE, type Frame } from "../framings/types.ts";
import { cString } from "../sys/libc.ts";
import type { FrameSink, MpiHandles, MpiIoSettings, ReadChunk, SinkOptions } from "./backend.ts";

/** The MPI settings an open needs, or UsageError (`usage`: how the backend is run) outside MPI. */
export function mpiSettingsOf(
  options: { readonly mpiIo?: MpiIoSettings } | undefined,
  usage: string,
): MpiIoSettings {
  const s = options?.mpiIo;
  if (s === undefined) throw new UsageError(usage);
  return s;
}

/** A loaded library, or PeerUnavailableError naming backend `name` when it is why it did not load. */
export function loadedOrUnavailable<L>(name: string, lib: L | string): L {
  if (typeof lib === "string") throw new PeerUnavailableError(`${name}: ${lib}`);
  return lib;
}

/** A loaded library's version, or `unknown` when it did not load. */
export function versionOf(lib: { readonly version: string } | string): string {
  return typeof lib === "string" ? "unknown" : lib.version;
}

/**
 * A file written through an MPI-aware library by one rank, or by every rank of a shared one:
 * the frames' record counting, the end of the write and the abandoning of a failed one. The
 * backend's class supplies the library's calls and the handles `h`.
 */
export abstract class LibrarySink implements FrameSink {
  readonly path: string;
  /** This rank's part of a shared file, or undefined for a file of this rank's own. */
  protected readonly part: MpiIoSettings["part"];
  /** True for collective puts (`--collective on`). */
  protected readonly collective: boolean;
  /** The file's communicator and hints (the backend's constructor opens them). */
  protected abstract readonly h: MpiHandles;
  /** Frames this rank wrote. */
  protected fed = 0;
  /** This rank's first failure; its later collective calls are made empty. */
  protected failure: unknown;
  /** False once the file is closed or abandoned. */
  protected open = true;

  /** Checks the options backend `name` cannot write with; UsageError for them. */
  constructor(name: string, path: string, options: SinkOptions, settings: MpiIoSettings) {
    this.path = path;
    if (options.create === "append") {
      throw new UsageError(`${name} cannot append to ${path}: it writes new files`);
    }
    if (settings.layout === "shared" && settings.part === undefined) {
      throw new UsageError(`${name}: a shared file needs this rank's part of the frames (${path})`);
    }
    this.collective = settings.collective;
    this.part = settings.layout === "shared" ? settings.part : undefined;
  }

  /** True once the first frame defined the variables. */
  protected abstract get defined(): boolean;
  /** Defines the variables of `frame`'s chunks (collective). */
  protected abstract define(frame: Frame): void;
  /**
   * Puts record `record` of every variable from `frame` (empty once this rank failed, or
   * without a frame: collective calls are still made), keeping the first failure in `failure`.
   */
  protected abstract put(record: number, frame: Frame | undefined): void;
  /** The library calls that end the write (the durable point among them); throws on failure. */
  protected abstract finish(): void;
  /** The library's close (collective when shared); throws on failure. */
  protected abstract closeCall(): void;
  /** Closes the file ignoring failures and frees the handles. */
  protected abstract closeQuietly(): void;

  writeFrame(frame: Frame): void {
    if (!this.defined) this.define(frame);
    const record = (this.part?.first ?? 0) + this.fed;
    this.put(record, frame);
    this.fed++;
    if (this.failure !== undefined) throw this.failure;
  }

  /** Finishes and closes the file, agreed with every rank when it is shared. */
  close(): void {
    const part = this.part;
    if (part === undefined) {
      try {
        this.finish();
      } catch (e) {
        this.abort();
        throw e;
      }
      this.#closeFile();
      return;
    }
    this.#agree(this.failure === undefined && this.fed === part.count ? 0 : -1);
    let failure: unknown;
    try {
      this.finish();
    } catch (e) {
      failure = e;
    }
    this.failure = failure;
    this.#agree(failure === undefined ? 0 : -1);
    this.#closeFile();
  }

  /** The library's close; when it fails the file is removed (rank 0's, when shared). */
  #closeFile(): void {
    this.open = false;
    try {
      this.closeCall();
    } catch (e) {
      if (this.h.rank === 0) removeQuietly(this.path);
      throw e;
    } finally {
      this.h.free();
    }
  }

  /**
   * Every rank of a shared file says how it did (0, or -1 when it failed); unless all did well,
   * every rank closes the file, rank 0 removes it, and this rank throws its own failure or
   * PeerRankFailed.
   */
  #agree(value: number): void {
    agreeOnSharedFile(this.h, value, {
      path: this.path,
      failure: this.failure,
      fed: this.fed,
      release: () => {
        this.open = false;
        this.closeQuietly();
      },
    });
  }

  abort(): void {
    if (!this.open) return;
    const part = this.part;
    if (part !== undefined) {
      // the collective calls this rank still owes the others, empty, then the agreement
      this.failure ??= new IoError(`${this.path}: this rank stopped writing`);
      if (this.collective && this.defined) {
        for (let k = this.fed; k < part.count; k++) this.put(part.first + k, undefined);
      }
      try {
        this.#agree(-1);
      } catch {
        // the caller reports its own failure
      }
      return;
    }
    this.open = false;
    this.closeQuietly();
    removeQuietly(this.path);
  }
}

/** One open file of a library: its id, the calls it shares, how its calls are named and checked. */
export interface NcFile<S extends NcSizes> {
  readonly ncid: number;
  /** `nc_` or `ncmpi_`, for the messages. */
  readonly prefix: string;
  readonly calls: NcCalls<S>;
  /** A length cell of the library's size type. */
  size(): S;
  /** Throws the library's failure for a status other than 0. */
  check(status: number, call: string): void;
}

/**
 * Defines `schema`'s dimensions and one record variable a chunk of `chunks` (with its
 * `chunk_name` attribute when the name had to change), as the native netcdf writer does; `each`
 * gets every variable's id and dimension count right after its definition.
 */
export function defineRecordVariables<S extends NcSizes>(
  nc: NcFile<S>,
  schema: ReturnType<typeof schemaForChunks>,
  chunks: readonly Chunk[],
  each: (chunk: Chunk, varid: number, ndims: number) => void,
): void {
  const { ncid, calls } = nc;
  const id = new Int32Array(1);
  const dimIds = new Int32Array(schema.dimensions.length);
  schema.dimensions.forEach((d, k) => {
    nc.check(
      calls.defDim(ncid, cString(d.name), BigInt(d.length), id),
      `${nc.prefix}def_dim '${d.name}'`,
    );
    dimIds[k] = id[0]!;
  });
  chunks.forEach((chunk, i) => {
    const v = schema.variables[i]!;
    const ids = Int32Array.from(v.dims, (k) => dimIds[k]!);
    nc.check(
      calls.defVar(ncid, cString(v.name), NC_TYPE[chunk.dtype], ids.length, ids, id),
      `${nc.prefix}def_var '${v.name}'`,
    );
    const varid = id[0]!;
    const original = v.attributes.find((a) => a.name === CHUNK_NAME_ATTR)?.values;
    if (typeof original === "string") {
      const text = new TextEncoder().encode(original);
      nc.check(
        calls.putAttText(ncid, varid, cString(CHUNK_NAME_ATTR), BigInt(text.length), text),
        `${nc.prefix}put_att_text '${CHUNK_NAME_ATTR}'`,
      );
    }
    each(chunk, varid, ids.length);
  });
}

/** A record variable found in a file. */
export interface FoundVariable {
  readonly varid: number;
  /** The chunk it stands for: its `chunk_name` attribute, else its own name. */
  readonly name: string;
  readonly dtype: DType;
  /** The shape of one record. */
  readonly shape: number[];
  /** Its dimensions, the record dimension's among them. */
  readonly ndims: number;
  /** The bytes of one record. */
  readonly bytes: number;
}

/** Finds the record variables of a file (in file order) and the records it holds. */
export function recordVariables<S extends NcSizes>(
  nc: NcFile<S>,
  types: Readonly<Record<number, DType | undefined>>,
): { readonly records: number; readonly variables: FoundVariable[] } {
  const { ncid, calls } = nc;
  const at = (status: number, call: string) => nc.check(status, `${nc.prefix}${call}`);
  const ndims = new Int32Array(1), nvars = new Int32Array(1), natts = new Int32Array(1);
  const unlimited = new Int32Array(1);
  at(calls.inq(ncid, ndims, nvars, natts, unlimited), "inq");
  const length = nc.size();
  const dimLength = (dim: number) => {
    at(calls.inqDimlen(ncid, dim, length), "inq_dimlen");
    return Number(length[0]!);
  };
  const records = unlimited[0]! < 0 ? 0 : dimLength(unlimited[0]!);
  const name = new Uint8Array(257), type = new Int32Array(1), nd = new Int32Array(1);
  const dims = new Int32Array(1024);
  const variables: FoundVariable[] = [];
  for (let varid = 0; varid < nvars[0]!; varid++) {
    name.fill(0);
    at(calls.inqVar(ncid, varid, name, type, nd, dims, natts), "inq_var");
    if (nd[0]! === 0 || dims[0] !== unlimited[0]) continue;
    const dtype = types[type[0]!];
    if (dtype === undefined) continue;
    const shape = Array.from(dims.subarray(1, nd[0]!), dimLength);
    let bytes = DTYPE_SIZE[dtype];
    for (const d of shape) bytes *= d;
    const chunkName = chunkNameOf(nc, varid, cStringOf(name));
    variables.push({ varid, name: chunkName, dtype, shape, ndims: nd[0]!, bytes });
  }
  return { records, variables };
}

/** The chunk a variable stands for: its `chunk_name` attribute, else its own name. */
function chunkNameOf<S extends NcSizes>(nc: NcFile<S>, varid: number, name: string): string {
  const type = new Int32Array(1), length = nc.size();
  const attr = cString(CHUNK_NAME_ATTR);
  if (nc.calls.inqAtt(nc.ncid, varid, attr, type, length) !== 0 || type[0] !== 2) return name;
  const text = new Uint8Array(Number(length[0]!) + 1);
  nc.check(nc.calls.getAttText(nc.ncid, varid, attr, text), `${nc.prefix}get_att_text`);
  return cStringOf(text) || name;
}

/** A record variable being read: one record a frame. */
export interface ReadVariable {
  readonly name: string;
  readonly dtype: DType;
  readonly shape: readonly number[];
  /** Where a record starts; its first element is set to the record read. */
  readonly start: NcSizes;
  /** The bytes of one record. */
  readonly bytes: number;
}

/**
 * A file's record variables read back through an MPI-aware library, a record a frame: the
 * backend's class finds the variables (`vars`) and supplies the library's read of one record.
 */
export abstract class LibrarySource<V extends ReadVariable> {
  readonly path: string;
  readonly warnings: readonly string[] = [];
  /** The record variables, in file order. */
  protected readonly vars: V[] = [];
  #buf = new Uint8Array(0);
  #bytesRead = 0;

  constructor(path: string) {
    this.path = path;
  }

  /** Records in the file. */
  abstract readonly frameCount: number;
  /** The library's name and version, for `describe`. */
  protected abstract readonly library: string;
  /** Reads record `frame` of `v` into `data` (its `start` set to it); throws on failure. */
  protected abstract get(v: V, data: Uint8Array, frame: number): void;

  /** Bytes read by frame reads so far (the variables' records). */
  get bytesRead(): number {
    return this.#bytesRead;
  }

  readFrame(frame: number): readonly ReadChunk[] {
    let total = 0;
    for (const v of this.vars) total += v.bytes;
    if (this.#buf.length < total) this.#buf = new Uint8Array(total);
    let at = 0;
    return this.vars.map((v) => {
      const data = this.#buf.subarray(at, at + v.bytes);
      at += v.bytes;
      v.start[0] = BigInt(frame);
      this.get(v, data, frame);
      this.#bytesRead += v.bytes;
      return { name: v.name, dtype: v.dtype, shape: v.shape, data };
    });
  }

  describe(): Record<string, unknown> {
    return { library: this.library, variables: this.vars.length, records: this.frameCount };
  }
}
