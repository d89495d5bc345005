/**
 * The I/O-level interface every backend offers to workloads: write frames to a path, read
 * frames from a path. Native framings get it from the engine (lib/backends/engine.ts); the peers in
 * lib/peers implement it directly over their C libraries.
 * @module
 */
import type {
  ByteOrder,
  ChunkLayout,
  ChunkRef,
  DType,
  EndianOption,
  Frame,
  FrameIndex,
  MagicNumber,
  OptionSpec,
  StoredVariable,
} from "../framings/types.ts";
import type { Row } from "../report/row.ts";
import type { Transfer } from "../io/transfer.ts";
import type { EngineName } from "../sys/queue.ts";

/**
 * When a write phase calls fsync (fio's `end_fsync` / `fsync=1`): `end` once after the last frame
 * and the trailer (the default), `each` after every frame and once more at the end, `none` never
 * (the write numbers are then page-cache numbers).
 */
export type FsyncPolicy = "end" | "each" | "none";

/** The fsync policies, in the order help lists them. */
export const FSYNC_POLICIES: readonly FsyncPolicy[] = ["end", "each", "none"];

/**
 * Under MPI, where a run's frames go: a file per rank (`per-rank`), or one file every rank writes
 * its own frames of (`shared`).
 */
export type FileLayout = "per-rank" | "shared";

/**
 * The frames of one rank in a file every rank writes: global frames `first` .. `first + count -
 * 1` of `total` (rank r's are r x count .. (r + 1) x count - 1).
 */
export interface FramePart {
  /** Global index of this rank's first frame. */
  readonly first: number;
  /** Frames this rank writes (the same on every rank). */
  readonly count: number;
  /** Frames in the file (all ranks). */
  readonly total: number;
  /**
   * Segments the rank's frames are split into (`--segments`, IOR's `-s`): 1, its frames one
   * block from `first`; S, S blocks of count / S frames, the ranks' blocks interleaved.
   */
  readonly segments: number;
  /** Index in the file of local frame `i` (0 .. count - 1) of `rank` (default this rank). */
  frameOf(i: number, rank?: number): number;
}

/** One MPI-IO hint (`--hint KEY=VALUE`): an MPI_Info key and its value. */
export type MpiHint = readonly [key: string, value: string];

/**
 * One file open through MPI-IO on the launcher's MPI library (lib/mpi/io.ts): on every rank
 * (`shared`) or on this rank alone (`per-rank`, MPI_COMM_SELF). The calls marked collective must
 * be made by every rank that opened the file, in the same order and number; every call throws a
 * SciobenchError naming the file and the library's own text on failure.
 */
export interface MpiIoFile {
  /** Path of the file. */
  readonly path: string;
  /** This rank among the processes that opened the file (0 for a per-rank file). */
  readonly rank: number;
  /** Processes that opened the file (1 for a per-rank file). */
  readonly ranks: number;
  /**
   * Writes `data` at byte `offset`: MPI_File_write_at_all (`collective`, a collective call) or
   * MPI_File_write_at, in calls of at most 1 GiB (the same number on every rank for the same
   * length).
   */
  writeAt(data: Uint8Array, offset: number, collective: boolean): void;
  /** Reads `into.length` bytes from byte `offset`: MPI_File_read_at_all or MPI_File_read_at. */
  readAt(into: Uint8Array, offset: number, collective: boolean): void;
  /** MPI_File_get_size, bytes. */
  size(): number;
  /** MPI_File_set_size (collective), bytes. */
  setSize(bytes: number): void;
  /**
   * MPI_File_sync (collective): the durable point of an MPI-IO file, shown in the audit trail
   * as the fsyncs of sciobench's own files are.
   */
  sync(): void;
  /** MPI_File_close (collective). */
  close(): void;
  /** The smallest and the largest of `value` over the file's processes (collective). */
  range(value: number): [min: number, max: number];
  /** Every process's `bytes` at the file's rank 0, by rank (the others get []; collective). */
  gather(bytes: Uint8Array): Uint8Array[];
}

/**
 * An MPI handle as the launcher's library passes it by value: an address (Open MPI's MPI_Comm
 * and MPI_Info) or a 32-bit integer (MPICH's). Only that library takes it.
 */
export type MpiHandleValue = Deno.PointerValue | number;

/**
 * What a library that opened a file through the run's MPI reports of the hints it runs with: an
 * MPI_Info it made (`info`, such as ncmpi_inq_file_info's; freed by the report) or the file's
 * MPI_File (`file`, such as the one HDF5's MPI-IO driver holds; asked with MPI_File_get_info).
 */
export type MpiHintSource =
  | { readonly info: MpiHandleValue }
  | { readonly file: Deno.PointerValue };

/**
 * The run's MPI as a library that takes an MPI communicator and an MPI_Info by value sees it
 * (parallel HDF5, PnetCDF, netCDF-4 parallel): the handles in the ABI of the launcher's MPI
 * library, valid until {@link MpiHandles.free}, and the collectives the backends need to agree
 * on a failure over the communicator.
 */
export interface MpiHandles {
  /** The ABI of the run's MPI library ({@link MpiIo.abi}). */
  readonly abi: MpiIo["abi"];
  /** MPI_COMM_WORLD (`shared`) or MPI_COMM_SELF (`per-rank`), as the ABI passes it. */
  readonly comm: MpiHandleValue;
  /** The run's hints (`--hint`) as an MPI_Info, as the ABI passes it. */
  readonly info: MpiHandleValue;
  /** This rank in the communicator (0 on MPI_COMM_SELF). */
  readonly rank: number;
  /** Processes in the communicator (1 on MPI_COMM_SELF). */
  readonly ranks: number;
  /** The smallest and the largest of `value` over the communicator (collective). */
  range(value: number): [min: number, max: number];
  /**
   * Keeps, for the run's meta, what the library reports of the hints (see {@link MpiHintSource})
   * for an open of `access`, as {@link MpiIo.open} keeps them.
   */
  report(access: "write" | "read", reported: MpiHintSource): void;
  /** Frees the MPI_Info of the hints (once; later calls do nothing). */
  free(): void;
}

/** MPI-IO on the launcher's MPI library (lib/mpi/io.ts), as backends that use it see it. */
export interface MpiIo {
  /** The MPI library doing the I/O: the first line of MPI_Get_library_version. */
  readonly library: string;
  /** The ABI of that library (the form of its handles, the library a peer must link). */
  readonly abi: "openmpi" | "mpich";
  /**
   * The communicator of `layout` and the hints as an MPI_Info, for a library that opens files
   * itself through this MPI (parallel HDF5, PnetCDF, netCDF-4): free them once the file is
   * closed.
   */
  handles(layout: FileLayout, hints: readonly MpiHint[]): MpiHandles;
  /**
   * Opens `path` with `hints` (an MPI_Info) on every rank (`shared`: MPI_COMM_WORLD, collective)
   * or on this rank alone (`per-rank`: MPI_COMM_SELF): `create` makes it (an existing file is
   * cut to 0 bytes), `create-new` refuses an existing file, `read` opens it read-only. The hints
   * the library applied are read back (MPI_File_get_info) for the run's meta.
   */
  open(
    path: string,
    access: "create" | "create-new" | "read",
    layout: FileLayout,
    hints: readonly MpiHint[],
  ): MpiIoFile;
}

/** How a run drives its MPI-IO backends: the library, collective or independent calls, hints. */
export interface MpiIoRun {
  /** The run's MPI-IO. */
  readonly io: MpiIo;
  /** Collective reads and writes (`--collective on`, the default) or independent ones. */
  readonly collective: boolean;
  /** The `--hint KEY=VALUE` pairs passed to every open, in order. */
  readonly hints: readonly MpiHint[];
}

/** What a backend with {@link MpiIoCapability} is told at each open, beside the usual options. */
export interface MpiIoSettings extends MpiIoRun {
  /** One file for every rank, or a file of this rank's own. */
  readonly layout: FileLayout;
  /**
   * Writes: this rank's frames of the file, when the caller knows them (a library that sizes its
   * datasets or records before the first frame needs them): of a `shared` file its part (every
   * rank writes as many), of a `per-rank` file all of them (`ownFrames`: first 0, total = count).
   */
  readonly part?: FramePart;
}

/**
 * What a backend that does its I/O through MPI-IO declares: it runs only under an MPI launcher
 * (mpirun, mpiexec, srun), takes `--hint` and `--collective`, and writes the layouts listed.
 */
export interface MpiIoCapability {
  /** The `--layout` values it writes. */
  readonly layouts: readonly FileLayout[];
  /** True when it can make its reads and writes collective calls (`--collective on`). */
  readonly collective: boolean;
  /**
   * True when it places a shared file's frames through {@link FramePart.frameOf}, so it takes
   * `--segments` above 1 (each rank's frames in interleaved blocks, as IOR's `-s`).
   */
  readonly segments: boolean;
  /**
   * True when `--bs` (without `--direct`) sets the bytes of each of its MPI-IO read and write
   * calls of frame data, as IOR's `-t` does.
   */
  readonly bs: boolean;
  /**
   * Why it cannot run on the launcher's MPI library `io` (no library of its own built for that
   * MPI), or null; undefined: it runs on any.
   */
  problem?(io: MpiIo): string | null;
  /**
   * What a row's `library` column says of it on `io`: its own library and version on the MPI
   * library's (undefined: the MPI library alone).
   */
  library?(io: MpiIo): string;
}

/** How a writer treats an existing file at its path. */
export type CreateMode =
  /** Fail when the path exists (the default for user paths). */
  | "new"
  /** Replace an existing file (the user said `--force`, or a scratch file). */
  | "truncate"
  /**
   * Add frames to an existing file of the same framing, in its byte order; on failure the file
   * is put back as it was. Only native framings with `appendWriter` support it.
   */
  | "append";

/** Options for opening a file to write frames. */
export interface SinkOptions {
  /** What to do when the file exists. */
  readonly create: CreateMode;
  /** Byte order of the data on disk, for backends that allow a choice; default native. */
  readonly endian?: EndianOption;
  /**
   * When to fsync inside the timed write (default `end`: before `close` returns); backends refuse
   * a policy missing from their {@link Capabilities.fsyncPolicies}.
   */
  readonly fsync?: FsyncPolicy;
  /** The backend's own options (marker width, netCDF variant ...), as it declares them in `options`. */
  readonly backendOptions?: Readonly<Record<string, unknown>>;
  /**
   * `--bs` / `--direct`: the size of each system call and O_DIRECT (backends with `transfer`),
   * or of each MPI-IO call (`--bs` alone, backends with `mpiIo.bs`).
   */
  readonly transfer?: Transfer;
  /**
   * `--iodepth` / `--engine` of the writes (native framings, a new file of one process): each
   * transfer of `transfer.bs` bytes (4 MiB without) a write request, up to the depth in flight;
   * every one completes before the file is synced or closed. Undefined: one write at a time.
   */
  readonly queue?: QueueSpec;
  /** `--allow-external`: read external raw-data files outside the file's directory (HDF5). */
  readonly allowExternal?: boolean;
  /** Under MPI, for backends with {@link Capabilities.mpiIo}: the run's MPI-IO and the layout. */
  readonly mpiIo?: MpiIoSettings;
}

/** An open file being written frame by frame. */
export interface FrameSink {
  /** Path of the file. */
  readonly path: string;
  /** Appends one frame. */
  writeFrame(frame: Frame): void;
  /** Completes the file (trailers, header rewrites), fsyncs when asked, closes. */
  close(): void;
  /** Closes without completing and removes the partial file (used on errors). */
  abort(): void;
}

/** One chunk of a frame as read back: bytes in native byte order. */
export interface ReadChunk {
  /** Chunk name. */
  readonly name: string;
  /** Element type. */
  readonly dtype: DType;
  /** Shape, slowest dimension first. */
  readonly shape: readonly number[];
  /** Data in native byte order; a view valid until the next `readFrame` or `readStored` call or `close`. */
  readonly data: Uint8Array;
}

/**
 * One chunk of a frame as stored in the file: its bytes in the file's byte order (`order`), not
 * swapped to native, and where they are. What a verified read compares with the expected bytes in
 * the same order, so a big-endian file is checked without a byte swap.
 */
export interface StoredChunk {
  /** Chunk name. */
  readonly name: string;
  /** Element type. */
  readonly dtype: DType;
  /** Shape, slowest dimension first. */
  readonly shape: readonly number[];
  /** Byte order of the elements in `data` (the file's). */
  readonly order: ByteOrder;
  /** Absolute file offset of the chunk's first byte, bytes. */
  readonly offset: number;
  /** Set when the chunk is stored in pieces: [file offset, length] in order, bytes. */
  readonly pieces?: readonly (readonly [number, number])[];
  /** The stored bytes; a view valid until the next `readFrame`, `readFrameStored`, `readStored` or `close`. */
  readonly data: Uint8Array;
}

/**
 * One stored array of a file, whatever its layout: what `info` lists for every file and what
 * `read` reads when the file holds no frames.
 */
export interface DatasetInfo {
  /** Full name: an HDF5 path such as `/grp/x`, a netCDF variable, an SDS name. */
  readonly name: string;
  /** Element type: a {@link DType} when numeric, else the type class (`compound`, `string`, `enum`, `vlen`, `opaque` ...). */
  readonly type: string;
  /** Set when the elements are numeric and `readRegion` can read them. */
  readonly dtype?: DType;
  /** Shape, slowest dimension first ([] for a scalar). */
  readonly shape: readonly number[];
  /** `contiguous`, `chunked`, `compact`, `virtual`, `record` (netCDF) ... */
  readonly storage: string;
  /** Chunk shape when chunked. */
  readonly chunk?: readonly number[];
  /** Filters in pipeline order (`deflate`, `shuffle`, `fletcher32` ...), when any. */
  readonly filters?: readonly string[];
  /** Byte offset of the data in the file, or -1 when unknown or not contiguous. */
  readonly offset: number;
  /** Bytes the data takes in the file (after compression), or -1 when unknown. */
  readonly storedBytes: number;
  /** Other names of the same object (hard links), when any. */
  readonly aliases?: readonly string[];
  /** `null` for an HDF5 NULL dataspace: no elements at all (shape is then []). */
  readonly space?: "null";
  /**
   * Set when the dataset's storage was never (or only partly) written, saying how much was
   * (`0 of 2000 chunks written`); such a dataset has no `dtype` and is listed, not read.
   */
  readonly unwritten?: string;
}

/** How many read requests are in flight at once, and through which engine (`--iodepth`). */
export interface QueueSpec {
  /** The I/O engine (lib/sys/queue.ts). */
  readonly engine: EngineName;
  /** Most requests in flight, >= 1. */
  readonly depth: number;
}

/** An open file read frame by frame. */
export interface FrameSource {
  /** Path of the file. */
  readonly path: string;
  /** Name of the backend that reads it. */
  readonly framing: string;
  /** Number of frames. */
  readonly frameCount: number;
  /** Reads frame `frame` (0-based): all its chunks, converted to native byte order. */
  readFrame(frame: number): readonly ReadChunk[];
  /**
   * Reads frame `frame` (0-based) as stored: the chunks' bytes in the file's byte order, without
   * the swap to native `readFrame` makes (for verifying). Native framings offer it.
   */
  readFrameStored?(frame: number): readonly StoredChunk[];
  /**
   * Reads frame `frame` as `readFrame` does (the same system calls, in the same order), with the
   * large reads in flight on another thread until the promise settles, so the caller can work on
   * the frame before meanwhile (native framings; lib/backends/overlap.ts). The chunks stay valid
   * until the second frame read after this one is started; one call at a time.
   */
  readFrameAsync?(frame: number): PromiseLike<readonly ReadChunk[]>;
  /** `readFrameStored` as `readFrameAsync` reads: large reads on another thread. */
  readFrameStoredAsync?(frame: number): PromiseLike<readonly StoredChunk[]>;
  /**
   * True when `readFrameAsync` and `readFrameStoredAsync` may be called while the frame before is
   * still in flight: the call completes that frame first (its result then ready), then submits its
   * own read, so one read is in flight at a time (native framings with O_DIRECT, native AIO).
   */
  readonly pipelined?: boolean;
  /**
   * The byte order `readFrameStored` hands every chunk in, when the format fixes one for the
   * whole file at open (netCDF classic: big; raw: its header's); known without a frame lookup.
   */
  readonly storedOrder?: ByteOrder;
  /** Where the chunks of a frame are stored, when the backend knows (native framings). */
  locate?(frame: number): readonly ChunkRef[];
  /**
   * Reads every frame `order` lists with up to `queue.depth` read requests in flight through
   * `queue.engine` (`--iodepth`, `--engine`; native framings): requests prepared in order,
   * submitted together, at least one reaped, and as many submitted again before the frames
   * completed are handed to `visit` (each once, in the order they complete, their chunks valid
   * during the call, in native byte order). Each request's latency
   * (submission to reap, ns) goes to `latency`. A frame whose chunks lie apart is read as several
   * ranges, each its own requests; one stored in pieces (Fortran subrecords) is read alone, once
   * the requests in flight are in.
   */
  readFramesQueued?(
    order: ArrayLike<number>,
    queue: QueueSpec,
    visit: (frame: number, chunks: readonly ReadChunk[], k: number) => void,
    latency?: { record(ns: number): void },
  ): void;
  /**
   * Makes the buffers {@link readFramesQueued} at `queue`'s depth will read frames like frame 0
   * into, their pages touched, before a timed phase: its requests then find them ready.
   */
  reserveQueued?(queue: QueueSpec): void;
  /** {@link readFramesQueued} with the chunks as stored (`readFrameStored`'s). */
  readFramesStoredQueued?(
    order: ArrayLike<number>,
    queue: QueueSpec,
    visit: (frame: number, chunks: readonly StoredChunk[], k: number) => void,
    latency?: { record(ns: number): void },
  ): void;
  /**
   * Visits the bytes of `pieces` ([offset, length] in order) as stored, without byte swapping, in
   * blocks of at most 4 MiB (each view valid during its call); FormatError naming the offset when
   * the file ends first. Backends that `locate` chunks offer it, for checksums of stored bytes.
   */
  readStored?(
    pieces: readonly (readonly [number, number])[],
    visit: (bytes: Uint8Array) => void,
  ): void;
  /** Format facts for `info`. */
  describe?(): Record<string, unknown>;
  /**
   * Whole stored arrays spanning frames (netCDF variables), for per-variable CRC-32: made one at
   * a time as they are iterated.
   */
  variables?(): Iterable<StoredVariable>;
  /** Every stored array of the file (frames or not), in file order where known. */
  datasets?(): readonly DatasetInfo[];
  /**
   * Reads elements [start, start + count) of dataset `index` of {@link datasets} (numeric ones),
   * in native byte order, into `into` (product(count) x element size bytes).
   */
  readRegion?(
    index: number,
    start: readonly number[],
    count: readonly number[],
    into: Uint8Array,
  ): void;
  /** Departures from the format specification the format's library tolerates (`info --strict`). */
  readonly departures?: readonly string[];
  /**
   * True when every frame read is a collective call (MPI-IO `--collective on` on a shared file):
   * every rank must read as many frames, so a reader that fails on one frame reads the rest of
   * its frames before it gives up (lib/backends/overlap.ts), and no rank waits forever.
   */
  readonly collective?: boolean;
  /** Notes for stderr (recovered counts, ambiguous detection). */
  readonly warnings: readonly string[];
  /** Bytes read from the file so far (headers and markers included), when the backend counts them. */
  readonly bytesRead?: number;
  /** Closes the file; the views of frames read from it are not valid after (buffers are reused). */
  close(): void;
}

/** Options for opening a file to read frames. */
export interface SourceOptions {
  /** What each frame holds, when the caller knows; untyped formats (Fortran) rely on it. */
  readonly layout?: readonly ChunkLayout[];
  /** Byte order to expect, for formats that cannot tell (default: detected or the file's). */
  readonly endian?: EndianOption;
  /** The backend's own options, as it declares them in `options`. */
  readonly backendOptions?: Readonly<Record<string, unknown>>;
  /**
   * `--bs` / `--direct`: the size of each system call and O_DIRECT (backends with `transfer`),
   * or of each MPI-IO call (`--bs` alone, backends with `mpiIo.bs`).
   */
  readonly transfer?: Transfer;
  /** `--allow-external`: read external raw-data files outside the file's directory (HDF5). */
  readonly allowExternal?: boolean;
  /** Under MPI, for backends with {@link Capabilities.mpiIo}: the run's MPI-IO and the layout. */
  readonly mpiIo?: MpiIoSettings;
}

/**
 * The most datasets one file of a backend can hold, where its library has such a limit (HDF4's
 * SD interface: 9361). A backend with a limit stores one dataset per chunk of every frame.
 */
export interface DatasetLimit {
  /** Most datasets in one file. */
  readonly max: number;
  /** How a write past the limit fails, as the library says it (`error 62`). */
  readonly failure: string;
}

/** Limits of a backend's files, beyond what the format's sizes allow. */
export interface Limits {
  /** The most datasets one file can hold, when the library has such a limit. */
  readonly datasets?: DatasetLimit;
}

/** How a backend's stores (directories of member files) are recognised. */
export interface StoreLayout {
  /** Member names whose presence in a directory shows it is one of the backend's stores. */
  readonly markers: readonly string[];
  /**
   * Rolls back a killed append to the store `path` (its journal beside it), one line on stderr;
   * nothing without a journal. IoError when an append in progress holds the store's lock.
   */
  readonly recover: (path: string) => void;
  /**
   * Rolls back an interrupted append by the writer holding the store's lock: true when there was
   * one to roll back (the store is as it was), false when it never began or was committed.
   */
  readonly undo: (path: string) => boolean;
}

/** The C library a peer loads, for messages and `framings`. */
export interface LibraryInfo {
  /** The name users know it by (`HDF5`, `netCDF`, `HDF4`). */
  readonly displayName: string;
  /** The shared objects it loads, tried in order. */
  readonly files: readonly string[];
}

/**
 * The element types a backend can store, when not every {@link DType}: the types it holds and
 * the one-line reason the others are refused.
 */
export interface DTypeLimit {
  /** The types it stores. */
  readonly only: readonly DType[];
  /**
   * Why `dtype` (missing from `only`) cannot be stored, one line naming the backend
   * (`hdf4 (SD interface) cannot store int64: it has no 64-bit integers`).
   */
  refusal(dtype: string): string;
}

/**
 * What a backend can do, declared on it as data: the checks in lib/backends/capabilities.ts and
 * the guard (lib/backends/guard.ts) read these, never the backend's name.
 */
export interface Capabilities {
  /** Byte orders the writer can produce. */
  readonly orders: readonly ByteOrder[];
  /** The element types it can store, when not all of them (undefined: every {@link DType}). */
  readonly dtypes?: DTypeLimit;
  /** The `--fsync` policies its writer honours (the native framings: all three). */
  readonly fsyncPolicies: readonly FsyncPolicy[];
  /**
   * True when it honours {@link Transfer} (`--bs`, `--direct`): the native framings, whose system
   * calls sciobench makes. Peers make their own calls inside a library or program and refuse them.
   */
  readonly transfer: boolean;
  /**
   * True when MPI ranks can write one file together (`--layout shared`): a native framing whose
   * layout follows from the frame sizes alone, so every rank computes the same positioned writes.
   */
  readonly sharedLayout: boolean;
  /**
   * Set when it does its I/O through MPI-IO: it runs only under an MPI launcher, takes `--hint`
   * and `--collective`, and writes the layouts it lists (`mpiio`).
   */
  readonly mpiIo?: MpiIoCapability;
  /** Limits of its files (HDF4's dataset count). */
  readonly limits?: Limits;
  /**
   * Set when its files are stores, directories of member files (Zarr): the member names whose
   * presence shows a directory is one (detection). A store's size, cache drop, residency and
   * removal cover every file under it (lib/io/store.ts); it writes and reads each member whole,
   * so it declares no `transfer` and no `sharedLayout`.
   */
  readonly store?: StoreLayout;
  /** The C library it loads (peers). */
  readonly library?: LibraryInfo;
  /**
   * Set when its files' frames can be read without its library (the loader's `--access
   * direct`): the index of each frame's chunks at the file offsets its library reports (HDF5's
   * chunk index), which sciobench's own reads then read. The library is asked during the call
   * only, its handles closed before it returns. UsageError (one line) when the file's frames are
   * filtered (compressed) or not stored as whole frames.
   */
  frameChunks?(path: string): FrameIndex;
  /**
   * Bytes a record of `payloadBytes` takes in its files, written with `options` (the declared
   * defaults applied): the payload plus the format's framing of it (f77: two record markers).
   * Undefined: the payload alone.
   */
  recordBytes?(payloadBytes: number, options: Readonly<Record<string, unknown>>): number;
}

/** A way to store frames in files: a native framing driven by the engine, or a peer library. */
export interface Backend extends Capabilities {
  /** Registry name, e.g. `raw`, `gsd`, `hdf5`. */
  readonly name: string;
  /** One line for `--help` and `sciobench framings`. */
  readonly description: string;
  /**
   * `native` (a pure TypeScript framing run by the engine), `peer` (a C library through FFI), or
   * `program` (a program that measures whole table cells in its own process, such as python3-gsd).
   */
  readonly kind: "native" | "peer" | "program";
  /** The options it takes through `backendOptions` (`--option KEY=VALUE`), as data. */
  readonly options: readonly OptionSpec[];
  /** Magic numbers of its files, which detection matches first (empty: none). */
  readonly magic: readonly MagicNumber[];
  /** null when usable here, else the reason it is not (library missing ...). */
  unavailable(): string | null;
  /**
   * A further check once a magic number matched (HDF5 superblock version ...), or, without magic
   * numbers, a heuristic tried when no magic number matched. Without either, never detected.
   */
  detect?(head: Uint8Array, fileSize: number): boolean;
  /** Opens `path` for writing frames (program peers: UsageError, they only measure table cells). */
  openWriter(path: string, options: SinkOptions): FrameSink;
  /** Opens `path` for reading frames; throws FormatError on a malformed file. */
  openReader(path: string, options?: SourceOptions): FrameSource;
  /**
   * Program peers: measures one cell of the table workload in the program's own process (same
   * seeded data, sample and random order) and returns its row with the table's columns.
   */
  measureTableCell?(cell: TableCell): Promise<Row>;
  /**
   * Program peers that write whole files (IOspeed's F77 writer under gfortran): opens `path`,
   * writes `datasets` copies of `data` (one record each), closes, timed in its own process.
   */
  measureDatasetWrites?(run: DatasetWrites): Promise<ProgramSample>;
  /** Program peers that write files: the backend whose reader reads them (`f77`). */
  readonly fileFraming?: string;
}

/** A file of datasets for a program peer to write (the scaling workload). */
export interface DatasetWrites {
  /** File to create (replaced if it exists). */
  readonly path: string;
  /** Number of datasets. */
  readonly datasets: number;
  /** One dataset's bytes, native order; its element type is `dtype`. */
  readonly data: Uint8Array;
  /** Element type of `data`. */
  readonly dtype: DType;
}

/** What a program measured in its own process: open to close. */
export interface ProgramSample {
  /** Wall-clock seconds (CLOCK_MONOTONIC). */
  readonly wallS: number;
  /** User and system CPU seconds of the program (getrusage). */
  readonly userS: number;
  readonly sysS: number;
  /** Bytes it wrote to devices (ru_oublock x 512). */
  readonly devWriteBytes: number;
}

/** One cell of the table workload, for a program peer to measure. */
export interface TableCell {
  /** Bytes of data to write. */
  readonly size: number;
  /** Particles per frame. */
  readonly n: number;
  /** Repeat index. */
  readonly repeat: number;
  /** Seed of the data and of the random order. */
  readonly seed: number;
  /** Bytes of each read sample (default 0.25 GiB). */
  readonly sampleBytes?: number;
  /** Write once untimed first. */
  readonly warmup: boolean;
  /** Page cache before each read phase (default cold). */
  readonly cache?: "cold" | "warm";
  /** Parent directory of the scratch file (default: current directory). */
  readonly dir?: string;
  /** `--bs` / `--direct` asked of the cell (the guard refuses it to a backend without `transfer`). */
  readonly transfer?: Transfer;
}
