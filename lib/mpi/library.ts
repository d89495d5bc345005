/**
 * The MPI C library through Deno FFI, for the two ABIs in use: Open MPI (`libmpi.so.40`, handles
 * are addresses of globals such as `ompi_mpi_comm_world`, read as FFI statics) and MPICH and its
 * derivatives (`libmpich.so.12`, Intel MPI and Cray MPICH; handles are integers). The library is
 * chosen by `SCIOBENCH_MPI_LIB` or by the launcher's environment, loaded once with `RTLD_GLOBAL`
 * (Open MPI's components need its symbols) and `RTLD_NODELETE`, and never closed. Without a
 * launcher nothing here is loaded.
 * @module
 */
import { SciobenchError } from "../core/errors.ts";
import { dlopenGlobal, sleepNs, socketPeerPid } from "../sys/libc.ts";

/** The MPI ABI families sciobench speaks. */
export type MpiAbi = "openmpi" | "mpich";

/** Reduction operations used by sciobench. */
export type MpiOp = "max" | "min" | "sum";

/** Element types used by sciobench: 64-bit floats, 32-bit ints, bytes. */
export type MpiType = "double" | "int" | "byte";

/** The communicators sciobench opens files on: every rank (`world`) or this rank alone (`self`). */
export type MpiComm = "world" | "self";

/**
 * A handle of the loaded library as its ABI passes it by value: an address (Open MPI's
 * `MPI_Comm`, `MPI_Info`) or a 32-bit integer (MPICH's). Only the library that made it takes it.
 */
export type MpiHandle = Deno.PointerValue | number;

/** An open `MPI_File` (an address in both ABIs), made by {@link MpiLibrary.fileOpen}. */
export interface MpiFile {
  /** The handle as MPI_File_open stored it (MPI_File_close takes its address). */
  readonly cell: Uint8Array;
  /** The handle passed by value. */
  readonly handle: Deno.PointerValue;
}

/** Access mode bits of MPI_File_open: the same values in both ABIs (ROMIO's, mpio.h). */
export const MPI_MODE = { create: 1, rdonly: 2, wronly: 4, rdwr: 8, excl: 64 } as const;

/** The most bytes one MPI-IO call moves: its count is a C int of MPI_BYTEs. */
export const MPI_MAX_COUNT = 2 ** 31 - 1;

/**
 * How a collective waits for the other ranks: `poll` (the default) starts the nonblocking
 * collective (MPI_Ibarrier, MPI_Iallreduce, ...) and polls MPI_Test, a short spin and then
 * sleeps of 5 µs growing to 50 µs between tests, so waiting ranks leave the cores to the ranks
 * still working (MPICH's blocking calls busy-poll: with more ranks than cores a barrier costs
 * tens of milliseconds); `block` calls the blocking collectives (`SCIOBENCH_MPI_WAIT=block`),
 * a diagnostic knob for comparison.
 */
export type MpiWait = "poll" | "block";

/** The calls sciobench makes, over either ABI; every call throws {@link MpiError} on failure. */
export interface MpiLibrary {
  /** Which ABI the loaded library has. */
  readonly abi: MpiAbi;
  /** The path or soname that was loaded. */
  readonly path: string;
  /** How collectives wait for the other ranks (see {@link MpiWait}). */
  readonly wait: MpiWait;
  /** `MPI_Init(NULL, NULL)`. */
  init(): void;
  /** `MPI_Finalize()`. */
  finalize(): void;
  /** `MPI_Abort(MPI_COMM_WORLD, code)`: stops every rank; does not return when it works. */
  abort(code: number): void;
  /** `MPI_Comm_rank(MPI_COMM_WORLD)`. */
  rank(): number;
  /** `MPI_Comm_size(MPI_COMM_WORLD)`. */
  size(): number;
  /** `MPI_Barrier(MPI_COMM_WORLD)`. */
  barrier(): void;
  /** `MPI_Allreduce` of `count` elements of `type` from `send` into `recv` (byte buffers). */
  allreduce(send: Uint8Array, recv: Uint8Array, count: number, type: MpiType, op: MpiOp): void;
  /** `MPI_Bcast` of `count` elements of `type` in `buf` from `root`. */
  bcast(buf: Uint8Array, count: number, type: MpiType, root: number): void;
  /** `MPI_Gather` of `count` elements of `type` per rank to `root`. */
  gather(send: Uint8Array, recv: Uint8Array, count: number, type: MpiType, root: number): void;
  /** `MPI_Gatherv` of bytes: `counts` and `displs` (int32 per rank) matter at `root` only. */
  gatherv(
    send: Uint8Array,
    recv: Uint8Array,
    counts: Int32Array,
    displs: Int32Array,
    root: number,
  ): void;
  /** `MPI_Get_processor_name`. */
  processorName(): string;
  /** `MPI_Get_library_version`: the library's own one-line (or longer) description. */
  libraryVersion(): string;
  /** `MPI_Wtime()`, seconds. */
  wtime(): number;
  /**
   * `MPI_COMM_WORLD` or `MPI_COMM_SELF` as the ABI passes it, for the libraries that take one
   * (HDF5's MPI-IO driver, PnetCDF).
   */
  comm(which: MpiComm): MpiHandle;
  /** `MPI_Info_create`, then `MPI_Info_set` of each pair in order; free it with `infoFree`. */
  infoCreate(pairs: readonly (readonly [string, string])[]): MpiHandle;
  /**
   * Every key of `info` with its value (`MPI_Info_get_nkeys`, `MPI_Info_get_nthkey`,
   * `MPI_Info_get_valuelen`, `MPI_Info_get`), in the library's order.
   */
  infoEntries(info: MpiHandle): [string, string][];
  /** `MPI_Info_free`. */
  infoFree(info: MpiHandle): void;
  /** `MPI_File_open` of `path` on `comm` with access mode `amode` ({@link MPI_MODE} bits). */
  fileOpen(comm: MpiComm, path: string, amode: number, info: MpiHandle): MpiFile;
  /** `MPI_File_close` (collective over the file's communicator). */
  fileClose(file: MpiFile): void;
  /** `MPI_File_delete` of `path`. */
  fileDelete(path: string): void;
  /**
   * `MPI_File_write_at_all` (collective) or `MPI_File_write_at` of `data` (at most
   * {@link MPI_MAX_COUNT} bytes, as MPI_BYTEs) at byte `offset`.
   */
  fileWriteAt(file: MpiFile, offset: number, data: Uint8Array, collective: boolean): void;
  /** `MPI_File_read_at_all` (collective) or `MPI_File_read_at` into `into` from byte `offset`. */
  fileReadAt(file: MpiFile, offset: number, into: Uint8Array, collective: boolean): void;
  /** `MPI_File_sync`: the file's data on stable storage (collective). */
  fileSync(file: MpiFile): void;
  /** `MPI_File_get_size`, bytes. */
  fileSize(file: MpiFile): number;
  /** `MPI_File_set_size` (collective), bytes. */
  fileSetSize(file: MpiFile, bytes: number): void;
  /** `MPI_File_get_info`: the hints the library uses for the file; free it with `infoFree`. */
  fileInfo(file: MpiFile): MpiHandle;
  /** `MPI_Error_string` of an error code, on one line. */
  errorText(code: number): string;
}

/** An MPI call returned an error code, or no MPI library could be loaded; exit code 1. */
export class MpiError extends SciobenchError {
  constructor(message: string) {
    super(message, 1);
  }
}

/**
 * An MPI call returned an error code: `call` names it, `text` is the library's own text for the
 * code (MPI_Error_string, on one line); exit code 1.
 */
export class MpiCallError extends MpiError {
  /** The MPI function that failed (`MPI_File_open`). */
  readonly call: string;
  /** The library's text for the error code. */
  readonly text: string;
  constructor(call: string, text: string) {
    super(`${call} failed: ${text}`);
    this.call = call;
    this.text = text;
  }
}

/** Sonames tried per ABI, Debian's first. */
const SONAMES: Record<MpiAbi, readonly string[]> = {
  openmpi: ["libmpi.so.40", "libmpi.so"],
  mpich: ["libmpich.so.12", "libmpi.so.12", "libmpich.so"],
};

function commonSymbols<H extends "pointer" | "i32">(h: H) {
  return {
    MPI_Init: { parameters: ["pointer", "pointer"], result: "i32" },
    MPI_Finalize: { parameters: [], result: "i32" },
    MPI_Abort: { parameters: [h, "i32"], result: "i32" },
    MPI_Comm_rank: { parameters: [h, "buffer"], result: "i32" },
    MPI_Comm_size: { parameters: [h, "buffer"], result: "i32" },
    MPI_Barrier: { parameters: [h], result: "i32" },
    MPI_Allreduce: { parameters: ["buffer", "buffer", "i32", h, h, h], result: "i32" },
    MPI_Bcast: { parameters: ["buffer", "i32", h, "i32", h], result: "i32" },
    MPI_Gather: {
      parameters: ["buffer", "i32", h, "buffer", "i32", h, "i32", h],
      result: "i32",
    },
    MPI_Gatherv: {
      parameters: ["buffer", "i32", h, "buffer", "buffer", "buffer", h, "i32", h],
      result: "i32",
    },
    MPI_Ibarrier: { parameters: [h, "buffer"], result: "i32" },
    MPI_Iallreduce: { parameters: ["buffer", "buffer", "i32", h, h, h, "buffer"], result: "i32" },
    MPI_Ibcast: { parameters: ["buffer", "i32", h, "i32", h, "buffer"], result: "i32" },
    MPI_Igather: {
      parameters: ["buffer", "i32", h, "buffer", "i32", h, "i32", h, "buffer"],
      result: "i32",
    },
    MPI_Igatherv: {
      parameters: ["buffer", "i32", h, "buffer", "buffer", "buffer", h, "i32", h, "buffer"],
      result: "i32",
    },
    MPI_Test: { parameters: ["buffer", "buffer", "buffer"], result: "i32" },
    MPI_Get_processor_name: { parameters: ["buffer", "buffer"], result: "i32" },
    MPI_Get_library_version: { parameters: ["buffer", "buffer"], result: "i32" },
    MPI_Wtime: { parameters: [], result: "f64" },
    MPI_Error_string: { parameters: ["i32", "buffer", "buffer"], result: "i32" },
    MPI_Info_create: { parameters: ["buffer"], result: "i32" },
    MPI_Info_set: { parameters: [h, "buffer", "buffer"], result: "i32" },
    MPI_Info_get_nkeys: { parameters: [h, "buffer"], result: "i32" },
    MPI_Info_get_nthkey: { parameters: [h, "i32", "buffer"], result: "i32" },
    MPI_Info_get_valuelen: { parameters: [h, "buffer", "buffer", "buffer"], result: "i32" },
    MPI_Info_get: { parameters: [h, "buffer", "i32", "buffer", "buffer"], result: "i32" },
    MPI_Info_free: { parameters: ["buffer"], result: "i32" },
    MPI_File_open: { parameters: [h, "buffer", "i32", h, "buffer"], result: "i32" },
    MPI_File_close: { parameters: ["buffer"], result: "i32" },
    MPI_File_delete: { parameters: ["buffer", h], result: "i32" },
    MPI_File_write_at: {
      parameters: ["pointer", "i64", "buffer", "i32", h, "buffer"],
      result: "i32",
    },
    MPI_File_write_at_all: {
      parameters: ["pointer", "i64", "buffer", "i32", h, "buffer"],
      result: "i32",
    },
    MPI_File_read_at: {
      parameters: ["pointer", "i64", "buffer", "i32", h, "buffer"],
      result: "i32",
    },
    MPI_File_read_at_all: {
      parameters: ["pointer", "i64", "buffer", "i32", h, "buffer"],
      result: "i32",
    },
    MPI_File_sync: { parameters: ["pointer"], result: "i32" },
    MPI_File_get_size: { parameters: ["pointer", "buffer"], result: "i32" },
    MPI_File_set_size: { parameters: ["pointer", "i64"], result: "i32" },
    MPI_File_get_info: { parameters: ["pointer", "buffer"], result: "i32" },
  } as const;
}

const OMPI_SYMBOLS = {
  ...commonSymbols("pointer"),
  ompi_mpi_comm_world: { type: "pointer" },
  ompi_mpi_comm_self: { type: "pointer" },
  ompi_mpi_info_null: { type: "pointer" },
  ompi_mpi_double: { type: "pointer" },
  ompi_mpi_int: { type: "pointer" },
  ompi_mpi_byte: { type: "pointer" },
  ompi_mpi_op_max: { type: "pointer" },
  ompi_mpi_op_min: { type: "pointer" },
  ompi_mpi_op_sum: { type: "pointer" },
} as const;

const MPICH_SYMBOLS = commonSymbols("i32");

/** MPICH's integer handles (mpich/mpi.h). */
const MPICH = {
  commWorld: 0x44000000,
  commSelf: 0x44000001,
  infoNull: 0x1c000000,
  types: { double: 0x4c00080b, int: 0x4c000405, byte: 0x4c00010d },
  ops: { max: 0x58000001, min: 0x58000002, sum: 0x58000003 },
} as const;

/** Larger than both libraries' MPI_MAX_LIBRARY_VERSION_STRING (8192 MPICH, 256 Open MPI). */
const VERSION_BYTES = 8192 + 64;
/** Larger than both libraries' MPI_MAX_PROCESSOR_NAME (128 MPICH, 256 Open MPI). */
const NAME_BYTES = 512;
/** Larger than both libraries' MPI_MAX_ERROR_STRING (512 MPICH, 256 Open MPI). */
const ERROR_BYTES = 1024;
/** Larger than both libraries' MPI_MAX_INFO_KEY (255 MPICH, 36 Open MPI), with its NUL. */
const INFO_KEY_BYTES = 512;

/** MPI_Test calls before a waiting rank starts to sleep between them. */
const SPIN_TESTS = 64;
/** The first sleep between MPI_Tests, ns; each next one doubles up to {@link MAX_SLEEP_NS}. */
const FIRST_SLEEP_NS = 5_000;
/** The longest sleep between MPI_Tests, ns: a bound on how late a rank sees a collective end. */
const MAX_SLEEP_NS = 50_000;

/** `SCIOBENCH_MPI_WAIT`: `block` for the blocking collectives, else `poll`. */
function waitMode(): MpiWait {
  const v = env("SCIOBENCH_MPI_WAIT");
  if (v === undefined || v === "poll") return "poll";
  if (v === "block") return "block";
  throw new MpiError(`bad SCIOBENCH_MPI_WAIT '${v}': expected poll or block`);
}

/** Every loaded MPI library, kept for the life of the process (never closed). */
const PINNED: unknown[] = [];

function check(call: string, rc: number): void {
  if (rc !== 0) throw new MpiError(`${call} failed with MPI error code ${rc}`);
}

function cText(buf: Uint8Array, length: number): string {
  const end = Math.max(0, Math.min(length, buf.length));
  const nul = buf.subarray(0, end).indexOf(0);
  return new TextDecoder().decode(buf.subarray(0, nul < 0 ? end : nul)).trim();
}

/** Arguments of MPI_Allreduce (MPI_Iallreduce adds the request): send, recv, count, type, op, comm. */
type AllreduceArgs<H> = [a: Uint8Array, b: Uint8Array, n: number, t: H, o: H, c: H];
/** Arguments of MPI_Bcast: buffer, count, type, root, comm. */
type BcastArgs<H> = [a: Uint8Array, n: number, t: H, root: number, c: H];
/** Arguments of MPI_Gather: send, count, type, recv, count, type, root, comm. */
type GatherArgs<H> = [
  a: Uint8Array,
  n: number,
  t: H,
  b: Uint8Array,
  m: number,
  u: H,
  root: number,
  c: H,
];
/** Arguments of MPI_Gatherv: send, count, type, recv, counts, displacements, type, root, comm. */
type GathervArgs<H> = [
  a: Uint8Array,
  n: number,
  t: H,
  b: Uint8Array,
  counts: Uint8Array,
  displs: Uint8Array,
  u: H,
  root: number,
  c: H,
];

/** Arguments of the MPI_File_{write,read}_at calls: file, offset, buffer, count, type, status. */
type FileAtArgs<H> = [
  file: Deno.PointerValue,
  offset: bigint,
  buf: Uint8Array,
  count: number,
  type: H,
  status: Uint8Array,
];

/** What differs between the ABIs beyond the symbols: handles made at run time and constants. */
interface AbiHandles<H> {
  /** MPI_COMM_SELF. */
  readonly self: H;
  /** MPI_INFO_NULL. */
  readonly infoNull: H;
  /** The `MPI_Info` an output cell holds. */
  read(cell: Uint8Array): H;
  /** A cell holding `info`, for MPI_Info_free. */
  cell(info: H): Uint8Array;
}

/** A C string: `text` in UTF-8 with a NUL. */
function cString(text: string): Uint8Array {
  return new TextEncoder().encode(`${text}\0`);
}

/**
 * Builds the calls over one ABI's symbols: `S` is the symbol table's type, `H` a handle value
 * (a pointer for Open MPI, an int for MPICH), so the code below is written once for both. It is
 * long because it is a table: the symbol signatures it takes, then one short method per MPI call;
 * splitting it would declare the ABI's handle type in two places.
 */
function wrap<H>(
  abi: MpiAbi,
  path: string,
  s: {
    MPI_Init(a: null, b: null): number;
    MPI_Finalize(): number;
    MPI_Abort(c: H, code: number): number;
    MPI_Comm_rank(c: H, out: Uint8Array): number;
    MPI_Comm_size(c: H, out: Uint8Array): number;
    MPI_Barrier(c: H): number;
    MPI_Allreduce(...args: AllreduceArgs<H>): number;
    MPI_Bcast(...args: BcastArgs<H>): number;
    MPI_Gather(...args: GatherArgs<H>): number;
    MPI_Gatherv(...args: GathervArgs<H>): number;
    MPI_Ibarrier(c: H, req: Uint8Array): number;
    MPI_Iallreduce(...args: [...AllreduceArgs<H>, req: Uint8Array]): number;
    MPI_Ibcast(...args: [...BcastArgs<H>, req: Uint8Array]): number;
    MPI_Igather(...args: [...GatherArgs<H>, req: Uint8Array]): number;
    MPI_Igatherv(...args: [...GathervArgs<H>, req: Uint8Array]): number;
    MPI_Test(req: Uint8Array, flag: Uint8Array, status: Uint8Array): number;
    MPI_Get_processor_name(a: Uint8Array, n: Uint8Array): number;
    MPI_Get_library_version(a: Uint8Array, n: Uint8Array): number;
    MPI_Wtime(): number;
    MPI_Error_string(code: number, text: Uint8Array, length: Uint8Array): number;
    MPI_Info_create(out: Uint8Array): number;
    MPI_Info_set(info: H, key: Uint8Array, value: Uint8Array): number;
    MPI_Info_get_nkeys(info: H, out: Uint8Array): number;
    MPI_Info_get_nthkey(info: H, n: number, key: Uint8Array): number;
    MPI_Info_get_valuelen(info: H, key: Uint8Array, length: Uint8Array, flag: Uint8Array): number;
    MPI_Info_get(info: H, key: Uint8Array, n: number, value: Uint8Array, flag: Uint8Array): number;
    MPI_Info_free(info: Uint8Array): number;
    MPI_File_open(c: H, path: Uint8Array, amode: number, info: H, out: Uint8Array): number;
    MPI_File_close(file: Uint8Array): number;
    MPI_File_delete(path: Uint8Array, info: H): number;
    MPI_File_write_at(...args: FileAtArgs<H>): number;
    MPI_File_write_at_all(...args: FileAtArgs<H>): number;
    MPI_File_read_at(...args: FileAtArgs<H>): number;
    MPI_File_read_at_all(...args: FileAtArgs<H>): number;
    MPI_File_sync(file: Deno.PointerValue): number;
    MPI_File_get_size(file: Deno.PointerValue, out: Uint8Array): number;
    MPI_File_set_size(file: Deno.PointerValue, bytes: bigint): number;
    MPI_File_get_info(file: Deno.PointerValue, out: Uint8Array): number;
  },
  world: H,
  types: Record<MpiType, H>,
  ops: Record<MpiOp, H>,
  abiHandles: AbiHandles<H>,
): MpiLibrary {
  const one = new Int32Array(1);
  const oneBytes = new Uint8Array(one.buffer);
  const asBytes = (a: Int32Array) => new Uint8Array(a.buffer, a.byteOffset, a.byteLength);
  const text = (call: string, f: (a: Uint8Array, n: Uint8Array) => number, size: number) => {
    const buf = new Uint8Array(size);
    check(call, f(buf, oneBytes));
    return cText(buf, one[0]!);
  };
  const wait = waitMode();
  // MPI_Request is an int (MPICH) or a pointer (Open MPI); MPI_Status is 20 or 24 bytes
  const request = new Uint8Array(8);
  const flag = new Int32Array(1);
  const flagBytes = new Uint8Array(flag.buffer);
  const status = new Uint8Array(64);
  /** Waits for the nonblocking collective `call` started with return code `rc`. */
  const complete = (call: string, rc: number) => {
    check(call, rc);
    const done = () => {
      check("MPI_Test", s.MPI_Test(request, flagBytes, status));
      return flag[0] !== 0;
    };
    for (let i = 0; i < SPIN_TESTS; i++) if (done()) return;
    for (let ns = FIRST_SLEEP_NS; !done(); ns = Math.min(2 * ns, MAX_SLEEP_NS)) sleepNs(ns);
  };
  const block = wait === "block";
  const errorText = (code: number) => {
    const buf = new Uint8Array(ERROR_BYTES);
    if (s.MPI_Error_string(code, buf, oneBytes) !== 0) return `MPI error code ${code}`;
    return cText(buf, one[0]!).replace(/\s+/g, " ");
  };
  /** MpiCallError with the library's text unless `rc` is MPI_SUCCESS. */
  const checkText = (call: string, rc: number) => {
    if (rc !== 0) throw new MpiCallError(call, errorText(rc));
  };
  const comms: Record<MpiComm, H> = { world, self: abiHandles.self };
  // MPI_Status of the file calls: 20 (MPICH) or 24 (Open MPI) bytes
  const fileStatus = new Uint8Array(64);
  const offsetOf = (offset: number) => {
    if (!Number.isSafeInteger(offset) || offset < 0) {
      throw new RangeError(`MPI-IO offset ${offset} is not a byte offset`);
    }
    return BigInt(offset);
  };
  const countOf = (call: string, buf: Uint8Array) => {
    if (buf.length > MPI_MAX_COUNT) {
      throw new RangeError(`${call} of ${buf.length} bytes: at most ${MPI_MAX_COUNT} a call`);
    }
    return buf.length;
  };
  const infoOut = new Uint8Array(8);
  return {
    comm: (which) => comms[which] as MpiHandle,
    infoCreate(pairs) {
      checkText("MPI_Info_create", s.MPI_Info_create(infoOut));
      const info = abiHandles.read(infoOut);
      try {
        for (const [key, value] of pairs) {
          checkText(`MPI_Info_set(${key})`, s.MPI_Info_set(info, cString(key), cString(value)));
        }
      } catch (e) {
        s.MPI_Info_free(abiHandles.cell(info));
        throw e;
      }
      return info as MpiHandle;
    },
    infoEntries(handle) {
      const info = handle as H;
      checkText("MPI_Info_get_nkeys", s.MPI_Info_get_nkeys(info, oneBytes));
      const keys = one[0]!;
      const out: [string, string][] = [];
      const keyBuf = new Uint8Array(INFO_KEY_BYTES);
      for (let i = 0; i < keys; i++) {
        keyBuf.fill(0);
        checkText("MPI_Info_get_nthkey", s.MPI_Info_get_nthkey(info, i, keyBuf));
        const key = cText(keyBuf, keyBuf.length);
        const ckey = cString(key);
        checkText(
          "MPI_Info_get_valuelen",
          s.MPI_Info_get_valuelen(info, ckey, oneBytes, flagBytes),
        );
        if (flag[0] === 0) continue;
        const length = one[0]!;
        const value = new Uint8Array(length + 1);
        checkText("MPI_Info_get", s.MPI_Info_get(info, ckey, length, value, flagBytes));
        if (flag[0] !== 0) out.push([key, cText(value, length)]);
      }
      return out;
    },
    infoFree: (handle) => checkText("MPI_Info_free", s.MPI_Info_free(abiHandles.cell(handle as H))),
    fileOpen(which, path, amode, info) {
      const cell = new Uint8Array(8);
      checkText(
        "MPI_File_open",
        s.MPI_File_open(comms[which], cString(path), amode, info as H, cell),
      );
      const handle = Deno.UnsafePointer.create(new DataView(cell.buffer).getBigUint64(0, true));
      return { cell, handle };
    },
    fileClose: (file) => checkText("MPI_File_close", s.MPI_File_close(file.cell)),
    fileDelete: (path) =>
      checkText("MPI_File_delete", s.MPI_File_delete(cString(path), abiHandles.infoNull)),
    fileWriteAt(file, offset, data, collective) {
      const call = collective ? "MPI_File_write_at_all" : "MPI_File_write_at";
      const n = countOf(call, data);
      const at = offsetOf(offset);
      const rc = collective
        ? s.MPI_File_write_at_all(file.handle, at, data, n, types.byte, fileStatus)
        : s.MPI_File_write_at(file.handle, at, data, n, types.byte, fileStatus);
      checkText(call, rc);
    },
    fileReadAt(file, offset, into, collective) {
      const call = collective ? "MPI_File_read_at_all" : "MPI_File_read_at";
      const n = countOf(call, into);
      const at = offsetOf(offset);
      const rc = collective
        ? s.MPI_File_read_at_all(file.handle, at, into, n, types.byte, fileStatus)
        : s.MPI_File_read_at(file.handle, at, into, n, types.byte, fileStatus);
      checkText(call, rc);
    },
    fileSync: (file) => checkText("MPI_File_sync", s.MPI_File_sync(file.handle)),
    fileSize(file) {
      const out = new BigInt64Array(1);
      checkText("MPI_File_get_size", s.MPI_File_get_size(file.handle, new Uint8Array(out.buffer)));
      return Number(out[0]!);
    },
    fileSetSize: (file, bytes) =>
      checkText("MPI_File_set_size", s.MPI_File_set_size(file.handle, offsetOf(bytes))),
    fileInfo(file) {
      checkText("MPI_File_get_info", s.MPI_File_get_info(file.handle, infoOut));
      return abiHandles.read(infoOut) as MpiHandle;
    },
    errorText,
    abi,
    path,
    wait,
    init: () => check("MPI_Init", s.MPI_Init(null, null)),
    finalize: () => check("MPI_Finalize", s.MPI_Finalize()),
    abort: (code) => check("MPI_Abort", s.MPI_Abort(world, code)),
    rank: () => {
      check("MPI_Comm_rank", s.MPI_Comm_rank(world, oneBytes));
      return one[0]!;
    },
    size: () => {
      check("MPI_Comm_size", s.MPI_Comm_size(world, oneBytes));
      return one[0]!;
    },
    barrier: () =>
      block
        ? check("MPI_Barrier", s.MPI_Barrier(world))
        : complete("MPI_Ibarrier", s.MPI_Ibarrier(world, request)),
    allreduce: (send, recv, count, type, op) =>
      block
        ? check("MPI_Allreduce", s.MPI_Allreduce(send, recv, count, types[type], ops[op], world))
        : complete(
          "MPI_Iallreduce",
          s.MPI_Iallreduce(send, recv, count, types[type], ops[op], world, request),
        ),
    bcast: (buf, count, type, root) =>
      block
        ? check("MPI_Bcast", s.MPI_Bcast(buf, count, types[type], root, world))
        : complete("MPI_Ibcast", s.MPI_Ibcast(buf, count, types[type], root, world, request)),
    gather: (send, recv, count, type, root) =>
      block
        ? check(
          "MPI_Gather",
          s.MPI_Gather(send, count, types[type], recv, count, types[type], root, world),
        )
        : complete(
          "MPI_Igather",
          s.MPI_Igather(send, count, types[type], recv, count, types[type], root, world, request),
        ),
    gatherv: (send, recv, counts, displs, root) => {
      const c = asBytes(counts), d = asBytes(displs), n = send.length, t = types.byte;
      if (block) {
        check("MPI_Gatherv", s.MPI_Gatherv(send, n, t, recv, c, d, t, root, world));
      } else {
        complete("MPI_Igatherv", s.MPI_Igatherv(send, n, t, recv, c, d, t, root, world, request));
      }
    },
    processorName: () =>
      text("MPI_Get_processor_name", (a, n) => s.MPI_Get_processor_name(a, n), NAME_BYTES),
    libraryVersion: () =>
      text("MPI_Get_library_version", (a, n) => s.MPI_Get_library_version(a, n), VERSION_BYTES),
    wtime: () => s.MPI_Wtime(),
  };
}

function openOmpi(path: string): MpiLibrary {
  dlopenGlobal(path);
  const lib = Deno.dlopen(path, OMPI_SYMBOLS);
  PINNED.push(lib);
  const s = lib.symbols;
  return wrap<Deno.PointerValue>(
    "openmpi",
    path,
    s,
    s.ompi_mpi_comm_world,
    { double: s.ompi_mpi_double, int: s.ompi_mpi_int, byte: s.ompi_mpi_byte },
    { max: s.ompi_mpi_op_max, min: s.ompi_mpi_op_min, sum: s.ompi_mpi_op_sum },
    {
      self: s.ompi_mpi_comm_self,
      infoNull: s.ompi_mpi_info_null,
      read: (cell) =>
        Deno.UnsafePointer.create(new DataView(cell.buffer, cell.byteOffset).getBigUint64(0, true)),
      cell(info) {
        const cell = new Uint8Array(8);
        new DataView(cell.buffer).setBigUint64(0, Deno.UnsafePointer.value(info), true);
        return cell;
      },
    },
  );
}

function openMpich(path: string): MpiLibrary {
  dlopenGlobal(path);
  const lib = Deno.dlopen(path, MPICH_SYMBOLS);
  PINNED.push(lib);
  return wrap<number>("mpich", path, lib.symbols, MPICH.commWorld, MPICH.types, MPICH.ops, {
    self: MPICH.commSelf,
    infoNull: MPICH.infoNull,
    read: (cell) => new DataView(cell.buffer, cell.byteOffset).getInt32(0, true),
    cell: (info) => new Uint8Array(Int32Array.of(info).buffer),
  });
}

/** Opens `path` with the ABI it has: Open MPI when it defines `ompi_mpi_comm_world`. */
function openAny(path: string, order: readonly MpiAbi[]): MpiLibrary {
  const problems: string[] = [];
  for (const abi of order) {
    try {
      return abi === "openmpi" ? openOmpi(path) : openMpich(path);
    } catch (e) {
      problems.push(`${abi}: ${e instanceof Error ? e.message : String(e)}`);
    }
  }
  throw new MpiError(`cannot use ${path} as an MPI library (${problems.join("; ")})`);
}

function env(name: string): string | undefined {
  try {
    const v = Deno.env.get(name);
    return v === undefined || v === "" ? undefined : v;
  } catch {
    return undefined;
  }
}

/** What the environment says about an MPI launch: nothing, or the ABIs to try in order. */
export interface LaunchInfo {
  /** The variable that showed the launcher (for messages), or null without a launcher. */
  readonly launcher: string | null;
  /** ABIs to try, most likely first. */
  readonly abis: readonly MpiAbi[];
  /** An explicit library from `SCIOBENCH_MPI_LIB`, or undefined. */
  readonly explicit?: string;
}

/**
 * Reads the launcher's environment: `OMPI_COMM_WORLD_SIZE` (Open MPI's mpirun), `PMI_RANK` or
 * `PMI_SIZE` (MPICH's Hydra and PMI-1/2 launchers), `PMIX_RANK` (PMIx: Open MPI 5, Slurm),
 * `SLURM_PROCID` with `SLURM_NTASKS` (srun). `SCIOBENCH_MPI_LIB` alone does not start MPI.
 */
export function detectLaunch(): LaunchInfo {
  const explicit = env("SCIOBENCH_MPI_LIB");
  const both: MpiAbi[] = ["openmpi", "mpich"];
  if (env("OMPI_COMM_WORLD_SIZE")) {
    return { launcher: "OMPI_COMM_WORLD_SIZE", abis: ["openmpi", "mpich"], explicit };
  }
  if (env("PMI_RANK") || env("PMI_SIZE")) {
    return { launcher: "PMI_RANK", abis: ["mpich", "openmpi"], explicit };
  }
  if (env("PMIX_RANK")) return { launcher: "PMIX_RANK", abis: both, explicit };
  if (env("SLURM_PROCID") && env("SLURM_NTASKS")) {
    return { launcher: "SLURM_PROCID", abis: both, explicit };
  }
  return { launcher: null, abis: both, explicit };
}

/**
 * What a launcher's PMI descriptor says about this process: null when MPI_Init can reach the
 * launcher, else one line saying why not. MPICH's Hydra hands each rank one end of a socketpair
 * and names it in `PMI_FD`; a wrapper between the launcher and Deno (npx's node) does not pass it
 * on, and MPI_Init then fails with raw PMI errors (`readline failed`, `Abort(672779791)`). The
 * descriptor must be a socket made by another process (Deno's own sockets may sit at that number).
 */
export function pmiDescriptorProblem(): string | null {
  const fd = env("PMI_FD");
  if (fd === undefined) return null;
  if (!/^\d+$/.test(fd)) return `PMI_FD=${fd} is not a file descriptor number`;
  const peer = socketPeerPid(Number(fd));
  if (peer !== undefined && peer !== Deno.pid) return null;
  return `started by MPICH's mpiexec (PMI_FD=${fd}) but descriptor ${fd} is not the launcher's ` +
    `socket in this process (a wrapper such as npx did not pass it on): launch the deno binary ` +
    `or the compiled sciobench directly, e.g. mpiexec -n 4 "$(npx -y deno@2.9.6 eval ` +
    `'console.log(Deno.execPath())')" run --allow-all main.ts ...`;
}

/**
 * Loads the MPI library for a launch: `SCIOBENCH_MPI_LIB` when set (its ABI found from its
 * symbols), else the first soname of the likely ABI that opens. MpiError naming what was tried.
 */
export function loadMpi(launch: LaunchInfo): MpiLibrary {
  if (launch.explicit) return openAny(launch.explicit, launch.abis);
  const tried: string[] = [];
  for (const abi of launch.abis) {
    for (const soname of SONAMES[abi]) {
      tried.push(soname);
      try {
        return abi === "openmpi" ? openOmpi(soname) : openMpich(soname);
      } catch {
        // try the next name
      }
    }
  }
  throw new MpiError(
    `started by an MPI launcher (${launch.launcher} is set) but no MPI library loads (tried ` +
      `${tried.join(", ")}); set SCIOBENCH_MPI_LIB to the libmpi.so the launcher belongs to`,
  );
}
