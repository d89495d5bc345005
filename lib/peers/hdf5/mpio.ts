/**
 * The `hdf5-mpio` peer: frames through parallel HDF5, the HDF5 build for the launcher's MPI
 * library (Debian's libhdf5_openmpi.so.103 under Open MPI, libhdf5_mpich.so.103 under MPICH;
 * `SCIOBENCH_HDF5_MPI_LIB` names another), whose MPI-IO driver (H5Pset_fapl_mpio) opens the file
 * on MPI_COMM_WORLD (`--layout shared`: every rank opens it, creates every dataset with the same
 * arguments, as HDF5 needs its metadata calls collective, and writes its own frames) or
 * MPI_COMM_SELF (`per-rank`), with the run's `--hint`s as the MPI_Info. Reads and writes are
 * collective (H5Pset_dxpl_mpio H5FD_MPIO_COLLECTIVE, `--collective on`) or independent.
 *
 * The file's layout is the serial `hdf5` peer's (lib/peers/hdf5/mod.ts), so it and h5dump read
 * it: one dataset per chunk name, shape (frames, ...chunk shape), each frame one hyperslab along
 * the slowest dimension; chunked one frame per HDF5 chunk with an unlimited first dimension, or
 * contiguous (`--option layout=contiguous`, a fixed shape). Every dataset is made at its full
 * size with the first frame (the frames of a file are known before it is written), so no call
 * extends it while ranks write. The durable point is H5Fflush (the MPI-IO driver syncs the file:
 * MPI_File_sync), shown in the audit trail, then H5Fclose.
 *
 * Failure, as the `mpiio` backend's: a rank whose call fails makes the collective writes it still
 * owes the others with nothing selected, every rank then agrees on the failure (MPI_Allreduce),
 * closes the file, rank 0 removes it, and the others stop with PeerRankFailed.
 * @module
 */
import type {
  Backend,
  FrameSink,
  FrameSource,
  MpiHandles,
  MpiHandleValue,
  MpiIo,
  MpiIoSettings,
  ReadChunk,
  SinkOptions,
  SourceOptions,
} from "../../backends/backend.ts";
import { IoError, UsageError } from "../../core/errors.ts";
import type { ChunkLayout, Frame } from "../../framings/types.ts";
import { DTYPE_SIZE } from "../../framings/types.ts";
import { cString, noteLibrarySync } from "../../sys/libc.ts";
import {
  agreeOnSharedFile,
  allocChunk,
  checkChunkBytes,
  checkSameLayout,
  elementCount,
  failsInTest,
  libraryFailure,
  loadLibrary,
  removeQuietly,
} from "../common.ts";
import {
  closeAll,
  components,
  errorSummary,
  H5E_DEFAULT,
  H5F_ACC_EXCL,
  H5F_ACC_RDONLY,
  H5F_ACC_TRUNC,
  H5F_SCOPE_LOCAL,
  H5P_CRT_ORDER_INDEXED,
  H5P_CRT_ORDER_TRACKED,
  H5S_SELECT_SET,
  H5S_UNLIMITED,
  type Hdf5,
  openHdf5,
} from "./bindings.ts";
import { createFrameDataset, type FrameExtent, frameSpace, type Groups } from "./datasets.ts";

/** The backend name, used in errors. */
export const NAME = "hdf5-mpio";

/** Environment variable naming the parallel HDF5 library; tried before the sonames when set. */
export const HDF5_MPI_ENV = "SCIOBENCH_HDF5_MPI_LIB";

/** Sonames of the HDF5 build for each MPI ABI (Debian's), tried in order. */
export const HDF5_MPI_SONAMES: Readonly<Record<MpiIo["abi"], readonly string[]>> = {
  openmpi: ["libhdf5_openmpi.so.103", "libhdf5_openmpi.so"],
  mpich: ["libhdf5_mpich.so.103", "libhdf5_mpich.so"],
};

/**
 * The id `id` returned by HDF5 call `call` on `path`; IoError naming this backend, the call and
 * the HDF5 error stack's summary when it is negative.
 */
function check(lib: Hdf5, id: bigint | number, call: string, path: string): bigint {
  const v = BigInt(id);
  if (v < 0n) throw libraryFailure(NAME, path, call, errorSummary(lib));
  return v;
}

/** HDF5 1.10 constants `H5FD_MPIO_INDEPENDENT` and `H5FD_MPIO_COLLECTIVE`. */
const H5FD_MPIO = { independent: 0, collective: 1 } as const;

/** The option that picks contiguous datasets over chunked ones. */
const LAYOUT_OPTION = "layout";

/** The calls whose MPI handles differ between ABIs: an address (Open MPI) or an int (MPICH). */
function mpioSymbols<H extends "pointer" | "i32">(h: H) {
  return {
    H5Pset_fapl_mpio: { parameters: ["i64", h, h], result: "i32" },
    H5Pset_dxpl_mpio: { parameters: ["i64", "i32"], result: "i32" },
  } as const;
}

/** A parallel HDF5 build, loaded: the shared bindings and its MPI-IO driver's calls. */
interface MpiHdf5 {
  readonly lib: Hdf5;
  /** H5Pset_fapl_mpio(fapl, comm, info). */
  setFapl(fapl: bigint, comm: MpiHandleValue, info: MpiHandleValue): number;
  /** H5Pset_dxpl_mpio(dxpl, mode). */
  setDxpl(dxpl: bigint, mode: number): number;
}

const LOADED = new Map<MpiIo["abi"], MpiHdf5 | string>();

/** The HDF5 build for MPI ABI `abi`, or why it cannot be loaded (tried once, cached). */
function loadFor(abi: MpiIo["abi"]): MpiHdf5 | string {
  const have = LOADED.get(abi);
  if (have !== undefined) return have;
  const label = `HDF5 for ${abi === "openmpi" ? "Open MPI" : "MPICH"}`;
  let made: MpiHdf5 | string;
  let lib: Hdf5 | string;
  try {
    lib = openHdf5(label, HDF5_MPI_SONAMES[abi], HDF5_MPI_ENV);
  } catch (e) {
    // SCIOBENCH_HDF5_MPI_LIB names a library that does not load: the reason it cannot run
    if (!(e instanceof UsageError)) throw e;
    lib = e.message;
  }
  if (typeof lib === "string") made = lib;
  else if (abi === "openmpi") {
    const s = loadLibrary(label, [lib.path], HDF5_MPI_ENV, mpioSymbols("pointer"));
    made = !s.ok ? s.reason : {
      lib,
      setFapl: (f, c, i) =>
        s.symbols.H5Pset_fapl_mpio(f, c as Deno.PointerValue, i as Deno.PointerValue),
      setDxpl: (d, m) => s.symbols.H5Pset_dxpl_mpio(d, m),
    };
  } else {
    const s = loadLibrary(label, [lib.path], HDF5_MPI_ENV, mpioSymbols("i32"));
    made = !s.ok ? s.reason : {
      lib,
      setFapl: (f, c, i) => s.symbols.H5Pset_fapl_mpio(f, c as number, i as number),
      setDxpl: (d, m) => s.symbols.H5Pset_dxpl_mpio(d, m),
    };
  }
  LOADED.set(abi, made);
  return made;
}

/**
 * The build for `io`'s MPI; UsageError with the reason when there is none (the run's backend
 * check refuses it first, in one line, through the capability's `problem`).
 */
function hdf5For(io: MpiIo): MpiHdf5 {
  const h = loadFor(io.abi);
  if (typeof h === "string") throw new UsageError(`${NAME}: ${h}`);
  return h;
}

/** The settings an MPI-IO open needs, or UsageError when a caller gave none. */
function settingsOf(options: { readonly mpiIo?: MpiIoSettings } | undefined): MpiIoSettings {
  const s = options?.mpiIo;
  if (s === undefined) {
    throw new UsageError(
      `${NAME} writes and reads through parallel HDF5 in the table and records workloads under ` +
        "an MPI launcher (mpirun, mpiexec, srun); its files are HDF5 files: read them with " +
        "--framing hdf5",
    );
  }
  return s;
}

/**
 * A file access property list for the MPI-IO driver on the communicator of `mpi` with its hints
 * (H5Pset_fapl_mpio keeps copies of both); the caller closes it.
 */
function mpioAccess(h: MpiHdf5, mpi: MpiHandles, path: string): bigint {
  const { lib } = h;
  const fapl = check(lib, lib.fn.H5Pcreate(lib.fileAccess), "H5Pcreate", path);
  try {
    check(lib, h.setFapl(fapl, mpi.comm, mpi.info), "H5Pset_fapl_mpio", path);
  } catch (e) {
    lib.fn.H5Pclose(fapl);
    throw e;
  }
  return fapl;
}

/** A transfer property list: collective or independent MPI-IO; the caller closes it. */
function mpioTransfer(h: MpiHdf5, collective: boolean, path: string): bigint {
  const { lib } = h;
  const dxpl = check(lib, lib.fn.H5Pcreate(lib.datasetXfer), "H5Pcreate", path);
  const mode = collective ? H5FD_MPIO.collective : H5FD_MPIO.independent;
  if (h.setDxpl(dxpl, mode) < 0) {
    const why = errorSummary(lib);
    lib.fn.H5Pclose(dxpl);
    throw new IoError(`${NAME}: ${path}: H5Pset_dxpl_mpio failed: ${why}`);
  }
  return dxpl;
}

/** Keeps the hints the MPI library reports for the file HDF5 opened (its MPI_File). */
function reportHints(
  h: MpiHdf5,
  file: bigint,
  fapl: bigint,
  mpi: MpiHandles,
  access: "write" | "read",
  path: string,
): void {
  const out = new BigUint64Array(1);
  check(h.lib, h.lib.fn.H5Fget_vfd_handle(file, fapl, out), "H5Fget_vfd_handle", path);
  // the MPI-IO driver hands the address of its MPI_File
  const cell = Deno.UnsafePointer.create(out[0]!);
  if (cell === null) return;
  const handle = Deno.UnsafePointer.create(new Deno.UnsafePointerView(cell).getBigUint64());
  mpi.report(access, { file: handle });
}

/**
 * The hidden test hook `SCIOBENCH_TEST_FAIL_RANK=R` with `SCIOBENCH_TEST_FAIL_PHASE=hdf5-mpio-write`:
 * rank R of a shared file's communicator: its write of its second frame selects nothing in memory,
 * which HDF5 refuses (the selections differ in size), and the rank reports the library's error
 * as its own.
 */
function failsWrites(rank: number): boolean {
  return failsInTest("hdf5-mpio-write", rank);
}

/** One dataset being written: a chunk name's frames. */
interface WriteSet extends ChunkLayout {
  readonly id: bigint;
  readonly memspace: bigint;
  readonly start: BigUint64Array;
  readonly count: BigUint64Array;
}

/** A file of frames written through parallel HDF5 by one rank, or by every rank of a shared one. */
class Hdf5MpioSink implements FrameSink {
  readonly path: string;
  readonly #h: MpiHdf5;
  readonly #s: MpiIoSettings;
  /** The file's communicator and hints, freed once the file is closed. */
  readonly #mpi: MpiHandles;
  readonly #shared: boolean;
  readonly #contiguous: boolean;
  readonly #fsync: boolean;
  readonly #order: "big" | "little";
  readonly #file: bigint;
  readonly #dxpl: bigint;
  readonly #failWrites: boolean;
  #sets: WriteSet[] = [];
  #groups: bigint[] = [];
  /** Frames handed to this sink (written, or made empty once the rank gave up). */
  #fed = 0;
  /** The first failure of this rank. */
  #failure: unknown;
  /** True once the rank gave up: its collective writes select nothing. */
  #draining = false;
  #open = true;

  constructor(h: MpiHdf5, path: string, options: SinkOptions, s: MpiIoSettings) {
    this.path = path;
    this.#h = h;
    this.#s = s;
    if (options.create === "append") {
      throw new UsageError(`${NAME} cannot append to ${path}: it writes new files`);
    }
    if (options.fsync === "each") {
      throw new UsageError(
        `${NAME} cannot honour --fsync each (HDF5 writes the file until it is flushed at its ` +
          "end): use --fsync end or --fsync none",
      );
    }
    this.#shared = s.layout === "shared";
    if (this.#shared && s.part === undefined) {
      throw new UsageError(`${NAME}: a shared file needs this rank's part of the frames (${path})`);
    }
    this.#contiguous = options.backendOptions?.[LAYOUT_OPTION] === "contiguous";
    if (this.#contiguous && s.part === undefined) {
      throw new UsageError(
        `${NAME}: a contiguous dataset has a fixed size: the writer needs the frame count (${path})`,
      );
    }
    this.#fsync = options.fsync !== "none";
    this.#order = options.endian === "big" ? "big" : "little";
    const { lib } = h;
    const fn = lib.fn;
    this.#mpi = s.io.handles(s.layout, s.hints);
    this.#failWrites = failsWrites(this.#mpi.rank);
    const closers: (() => unknown)[] = [];
    try {
      const fapl = mpioAccess(h, this.#mpi, path);
      closers.push(() => fn.H5Pclose(fapl));
      const fcpl = check(lib, fn.H5Pcreate(lib.fileCreate), "H5Pcreate", path);
      closers.push(() => fn.H5Pclose(fcpl));
      check(
        lib,
        fn.H5Pset_link_creation_order(fcpl, H5P_CRT_ORDER_TRACKED | H5P_CRT_ORDER_INDEXED),
        "H5Pset_link_creation_order",
        path,
      );
      const flags = options.create === "new" ? H5F_ACC_EXCL : H5F_ACC_TRUNC;
      this.#file = check(lib, fn.H5Fcreate(cString(path), flags, fcpl, fapl), "H5Fcreate", path);
      try {
        reportHints(h, this.#file, fapl, this.#mpi, "write", path);
        this.#dxpl = mpioTransfer(h, s.collective, path);
      } catch (e) {
        fn.H5Fclose(this.#file);
        throw e;
      }
    } catch (e) {
      this.#mpi.free();
      throw e;
    } finally {
      closeAll(closers);
    }
  }

  /**
   * Every chunk's dataset, at its full size when the frame count is known (else one frame,
   * grown per frame: a per-rank chunked file written without a count).
   */
  #createLayout(frame: Frame): void {
    const lib = this.#h.lib;
    const count = BigInt(this.#s.part?.total ?? 1);
    const frames: FrameExtent = {
      frames: count,
      maxFrames: this.#contiguous ? count : H5S_UNLIMITED,
      chunked: !this.#contiguous,
    };
    const groups: Groups = { made: new Map(), open: this.#groups };
    for (const chunk of frame.chunks) {
      const type = lib.fileType[this.#order][chunk.dtype];
      this.#sets.push(createFrameDataset(lib, this.#file, chunk, type, frames, groups, this.path));
    }
  }

  writeFrame(frame: Frame): void {
    if (!this.#open) throw new IoError(`${NAME}: ${this.path}: write after close`);
    try {
      checkChunkBytes(NAME, this.path, this.#fed, frame.chunks);
      if (this.#sets.length === 0) this.#createLayout(frame);
      else checkSameLayout(NAME, this.path, this.#fed, this.#sets, frame.chunks);
    } catch (e) {
      this.#failure ??= e;
      this.#draining = true;
      throw e;
    }
    const lib = this.#h.lib;
    const fn = lib.fn;
    // this rank's frames of a shared file start at its part's first (a per-rank file's at 0)
    const row = BigInt((this.#s.part?.first ?? 0) + this.#fed);
    const grow = this.#s.part === undefined;
    for (let i = 0; i < this.#sets.length; i++) {
      const set = this.#sets[i]!;
      if (this.#draining) {
        this.#writeNothing(set);
        continue;
      }
      try {
        if (grow) {
          const extent = new BigUint64Array(set.count);
          extent[0] = row + 1n;
          check(lib, fn.H5Dset_extent(set.id, extent), "H5Dset_extent", this.path);
        }
        const fspace = frameSpace(lib, set, row, this.path);
        try {
          // the test hook: a memory selection of nothing against one frame in the file
          if (this.#failWrites && this.#fed === 1) fn.H5Sselect_none(set.memspace);
          const data = frame.chunks[i]!.data;
          check(
            lib,
            fn.H5Dwrite(set.id, lib.native[set.dtype], set.memspace, fspace, this.#dxpl, data),
            `H5Dwrite '${set.name}' frame ${row}`,
            this.path,
          );
        } finally {
          fn.H5Sclose(fspace);
        }
      } catch (e) {
        this.#failure ??= e;
        this.#draining = true;
        // this call is still owed to the ranks that made it
        this.#writeNothing(set);
      }
    }
    this.#fed++;
    if (this.#failure !== undefined) throw this.#failure;
  }

  /**
   * The collective write a rank that gave up still owes the others: nothing selected in memory
   * or in the file (an independent write owes nothing). Its own failure is not reported: the
   * rank's first one is.
   */
  #writeNothing(set: WriteSet): void {
    if (!this.#shared || !this.#s.collective) return;
    const fn = this.#h.lib.fn;
    const fspace = fn.H5Dget_space(set.id);
    fn.H5Sselect_none(fspace);
    fn.H5Sselect_none(set.memspace);
    fn.H5Dwrite(set.id, this.#h.lib.native[set.dtype], set.memspace, fspace, this.#dxpl, NOTHING);
    fn.H5Sclose(fspace);
    fn.H5Eclear2(H5E_DEFAULT);
  }

  close(): void {
    if (!this.#open) return;
    if (!this.#shared) {
      this.#open = false;
      if (this.#failure !== undefined) {
        this.#release();
        removeQuietly(this.path);
        throw this.#failure;
      }
      this.#finish();
      return;
    }
    // every rank wrote its frames before the flush, a collective call
    const wrote = this.#failure === undefined && this.#fed === this.#s.part!.count;
    this.#agree(wrote ? 0 : -1);
    let failure: unknown;
    try {
      this.#flush();
    } catch (e) {
      failure = e;
    }
    this.#failure = failure;
    this.#agree(failure === undefined ? 0 : -1);
    this.#open = false;
    this.#closeFile();
  }

  /** Per-rank: the flush, then the close. */
  #finish(): void {
    try {
      this.#flush();
    } catch (e) {
      this.#release();
      removeQuietly(this.path);
      throw e;
    }
    this.#closeFile();
  }

  /** The durable point: H5Fflush (the MPI-IO driver's MPI_File_sync), in the audit trail. */
  #flush(): void {
    // mutant: hdf5-mpio-flush
    if (!this.#fsync) return;
    const lib = this.#h.lib;
    check(lib, lib.fn.H5Fflush(this.#file, H5F_SCOPE_LOCAL), "H5Fflush", this.path);
    noteLibrarySync(this.path, "H5Fflush");
  }

  /** Closes the datasets and the file; on failure rank 0 (or a per-rank file's) removes it. */
  #closeFile(): void {
    const lib = this.#h.lib;
    const fn = lib.fn;
    let failed = 0;
    for (const s of this.#sets) {
      if (fn.H5Sclose(s.memspace) < 0) failed++;
      if (fn.H5Dclose(s.id) < 0) failed++;
    }
    for (const g of this.#groups) if (fn.H5Gclose(g) < 0) failed++;
    if (fn.H5Pclose(this.#dxpl) < 0) failed++;
    this.#sets = [];
    this.#groups = [];
    const closed = fn.H5Fclose(this.#file) >= 0 && failed === 0;
    this.#mpi.free();
    if (!closed) {
      const why = errorSummary(lib);
      if (this.#mpi.rank === 0) removeQuietly(this.path);
      throw new IoError(`${NAME}: ${this.path}: closing the file failed: ${why}`);
    }
  }

  /** Closes everything, ignoring failures (the first failure is the one reported). */
  #release(): void {
    try {
      this.#closeFile();
    } catch {
      // the first failure is the one to report
    }
  }

  /**
   * Every rank of a shared file says how it did (a collective call): 0, or -1 when it failed.
   * Unless all say 0, every rank closes the file, rank 0 removes it, and this rank throws: its
   * own failure, or PeerRankFailed when another rank's was the cause.
   */
  #agree(value: number): void {
    agreeOnSharedFile(this.#mpi, value, {
      path: this.path,
      failure: this.#failure,
      fed: this.#fed,
      release: () => {
        this.#open = false;
        this.#release();
      },
    });
  }

  abort(): void {
    if (!this.#open) return;
    if (!this.#shared) {
      this.#open = false;
      this.#release();
      removeQuietly(this.path);
      return;
    }
    // the collective writes this rank still owes the others, then the agreement
    this.#draining = true;
    for (let k = this.#fed; k < this.#s.part!.count; k++) {
      for (const set of this.#sets) this.#writeNothing(set);
    }
    try {
      this.#agree(-1);
    } catch {
      // the caller reports its own failure
    }
  }
}

/** The buffer of a write that selects nothing (HDF5 wants one all the same). */
const NOTHING = new Uint8Array(8);

/** One dataset being read: a chunk name's frames. */
interface ReadSet extends ChunkLayout {
  readonly id: bigint;
  readonly fspace: bigint;
  readonly memspace: bigint;
  readonly start: BigUint64Array;
  readonly count: BigUint64Array;
  readonly buf: Uint8Array<ArrayBuffer>;
}

/**
 * A file of frames read through parallel HDF5: the datasets the frames' layout names (the
 * caller's, as the table and records workloads give it), each frame one hyperslab per dataset.
 */
class Hdf5MpioSource implements FrameSource {
  readonly path: string;
  readonly framing = NAME;
  readonly frameCount: number;
  readonly collective: boolean;
  readonly warnings: readonly string[] = [];
  readonly #h: MpiHdf5;
  readonly #file: bigint;
  #dxpl = -1n;
  #dapl = -1n;
  #sets: ReadSet[] = [];
  #bytesRead = 0;

  constructor(h: MpiHdf5, path: string, layout: readonly ChunkLayout[], s: MpiIoSettings) {
    this.path = path;
    this.#h = h;
    const { lib } = h;
    const fn = lib.fn;
    // the communicator and hints serve the open alone (HDF5 keeps copies of both)
    const mpi = s.io.handles(s.layout, s.hints);
    try {
      const fapl = mpioAccess(h, mpi, path);
      try {
        this.#file = check(lib, fn.H5Fopen(cString(path), H5F_ACC_RDONLY, fapl), "H5Fopen", path);
        try {
          reportHints(h, this.#file, fapl, mpi, "read", path);
        } catch (e) {
          fn.H5Fclose(this.#file);
          throw e;
        }
      } finally {
        fn.H5Pclose(fapl);
      }
    } finally {
      mpi.free();
    }
    try {
      this.#dxpl = mpioTransfer(h, s.collective, path);
      // without HDF5's chunk cache: every frame read goes to the file (a cold read is cold)
      this.#dapl = check(lib, fn.H5Pcreate(lib.datasetAccess), "H5Pcreate", path);
      check(lib, fn.H5Pset_chunk_cache(this.#dapl, 0n, 0n, 1), "H5Pset_chunk_cache", path);
      let frames = Infinity;
      for (const chunk of layout) frames = Math.min(frames, this.#open(chunk));
      this.frameCount = layout.length === 0 ? 0 : frames;
    } catch (e) {
      this.#closeQuietly();
      throw e;
    }
    this.collective = s.collective && s.layout === "shared";
  }

  /** Opens `chunk`'s dataset, checks its shape; returns its frames. */
  #open(chunk: ChunkLayout): number {
    const lib = this.#h.lib;
    const fn = lib.fn;
    const name = components(chunk.name, this.path).join("/");
    const id = check(
      lib,
      fn.H5Dopen2(this.#file, cString(name), this.#dapl),
      `H5Dopen2 '${name}'`,
      this.path,
    );
    const fspace = fn.H5Dget_space(id);
    const rank = chunk.shape.length + 1;
    const dims = new BigUint64Array(rank);
    const ok = fspace >= 0n && fn.H5Sget_simple_extent_ndims(fspace) === rank &&
      fn.H5Sget_simple_extent_dims(fspace, dims, null) === rank &&
      chunk.shape.every((d, k) => BigInt(d) === dims[k + 1]);
    if (!ok) {
      if (fspace >= 0n) fn.H5Sclose(fspace);
      fn.H5Dclose(id);
      fn.H5Eclear2(H5E_DEFAULT);
      throw new IoError(
        `${NAME}: ${this.path}: dataset '${name}' is not (frames, ${chunk.shape.join(", ")})`,
      );
    }
    const count = new BigUint64Array(rank);
    count.set(dims);
    count[0] = 1n;
    const memspace = fn.H5Screate_simple(rank, count, null);
    const bytes = elementCount(chunk.shape) * DTYPE_SIZE[chunk.dtype];
    this.#sets.push({
      ...chunk,
      id,
      fspace,
      memspace,
      start: new BigUint64Array(rank),
      count,
      buf: allocChunk(bytes),
    });
    check(lib, memspace, "H5Screate_simple", this.path);
    return Number(dims[0]!);
  }

  /** Bytes of frames read so far. */
  get bytesRead(): number {
    return this.#bytesRead;
  }

  readFrame(frame: number): readonly ReadChunk[] {
    const lib = this.#h.lib;
    const fn = lib.fn;
    return this.#sets.map((set) => {
      set.start[0] = BigInt(frame);
      check(
        lib,
        fn.H5Sselect_hyperslab(set.fspace, H5S_SELECT_SET, set.start, null, set.count, null),
        "H5Sselect_hyperslab",
        this.path,
      );
      check(
        lib,
        fn.H5Dread(set.id, lib.native[set.dtype], set.memspace, set.fspace, this.#dxpl, set.buf),
        `H5Dread '${set.name}' frame ${frame}`,
        this.path,
      );
      this.#bytesRead += set.buf.length;
      return { name: set.name, dtype: set.dtype, shape: set.shape, data: set.buf };
    });
  }

  #closeQuietly(): void {
    try {
      this.close();
    } catch {
      // the first failure is the one to report
    }
  }

  close(): void {
    const lib = this.#h.lib;
    const fn = lib.fn;
    let failed = 0;
    for (const s of this.#sets) {
      if (s.memspace >= 0n && fn.H5Sclose(s.memspace) < 0) failed++;
      if (fn.H5Sclose(s.fspace) < 0) failed++;
      if (fn.H5Dclose(s.id) < 0) failed++;
    }
    this.#sets = [];
    if (this.#dxpl >= 0n && fn.H5Pclose(this.#dxpl) < 0) failed++;
    if (this.#dapl >= 0n && fn.H5Pclose(this.#dapl) < 0) failed++;
    if (fn.H5Fclose(this.#file) < 0 || failed > 0) {
      throw new IoError(`${NAME}: ${this.path}: closing the file failed: ${errorSummary(lib)}`);
    }
  }
}

/** Why the HDF5 build for `io`'s MPI cannot be used, or null. */
function problem(io: MpiIo): string | null {
  const h = loadFor(io.abi);
  return typeof h === "string"
    ? `no parallel HDF5 for this MPI library (${io.library}): ${h}`
    : null;
}

/** The row's `library`: the HDF5 build and its version, on the MPI library. */
function library(io: MpiIo): string {
  const h = loadFor(io.abi);
  if (typeof h === "string") return io.library;
  const file = h.lib.path.slice(h.lib.path.lastIndexOf("/") + 1);
  return `HDF5 ${h.lib.version} (${file}) on ${io.library}`;
}

/** The parallel HDF5 peer backend (see the module documentation). */
export const hdf5Mpio: Backend = {
  name: NAME,
  description: "parallel HDF5 (the HDF5 built for the launcher's MPI, FFI): the hdf5 peer's " +
    "layout through the MPI-IO driver, collective or independent (H5Pset_dxpl_mpio)",
  kind: "peer",
  orders: ["little", "big"],
  options: [
    {
      name: LAYOUT_OPTION,
      type: "string",
      choices: ["chunked", "contiguous"],
      default: "chunked",
      help: "chunked: one frame per HDF5 chunk (the hdf5 peer's); contiguous: fixed-size datasets",
      workloads: ["records"],
    },
  ],
  magic: [],
  fsyncPolicies: ["end", "none"],
  transfer: false,
  sharedLayout: false,
  mpiIo: {
    layouts: ["shared", "per-rank"],
    collective: true,
    segments: false,
    bs: false,
    problem,
    library,
  },
  library: {
    displayName: "HDF5 (parallel)",
    files: [...HDF5_MPI_SONAMES.openmpi, ...HDF5_MPI_SONAMES.mpich],
  },
  // the guard says why it cannot run without an MPI launcher or a matching build (mpiIo.problem)
  unavailable: () => null,
  openWriter(path: string, options: SinkOptions): FrameSink {
    const s = settingsOf(options);
    return new Hdf5MpioSink(hdf5For(s.io), path, options, s);
  },
  openReader(path: string, options?: SourceOptions): FrameSource {
    const s = settingsOf(options);
    const layout = options?.layout;
    if (layout === undefined) {
      throw new UsageError(
        `${NAME} reads the datasets of the frames it was told of (table, records); read ` +
          `${path} with --framing hdf5`,
      );
    }
    return new Hdf5MpioSource(hdf5For(s.io), path, layout, s);
  },
};
