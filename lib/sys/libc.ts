/**
 * The only module that opens libc through Deno FFI. Typed, synchronous wrappers that throw
 * {@link SysError} (errno, its name, the path) on failure, and two asynchronous preads: one on
 * another thread ({@link preadAsync}), one through Linux native AIO for O_DIRECT files
 * ({@link preadSubmit}). glibc on x86-64/aarch64 Linux only.
 *
 * One module on purpose, though long: it is the one FFI boundary to libc, the bindings and their
 * typed wrappers, and its parts share state that must not cross a module boundary: the library
 * handle, errno (read right after the failed call), the one I/O observer every call reports to,
 * and the native AIO read in flight, which `close` waits for (the AIO reads, in their own module,
 * would import the observer from here and this module their read in flight: a cycle). Its
 * sections: file calls (open, pread, pwrite, syncs, locks, advice), the asynchronous and native
 * AIO reads, process clocks and usage, file-system facts (statfs, statx, residency, cachestat),
 * mappings and leases, library loading, limits, the uncached and cached-only reads (preadv2), and
 * huge pages.
 * @module
 */
import { SciobenchError, SysError } from "../core/errors.ts";

const SYMBOLS = {
  open: { parameters: ["buffer", "i32", "i32"], result: "i32" },
  close: { parameters: ["i32"], result: "i32" },
  mkdir: { parameters: ["buffer", "u32"], result: "i32" },
  rename: { parameters: ["buffer", "buffer"], result: "i32" },
  unlink: { parameters: ["buffer"], result: "i32" },
  pread: { parameters: ["i32", "buffer", "usize", "i64"], result: "isize" },
  /** pread on a thread of Deno's blocking pool: the call returns a Promise at once. */
  pread_nonblocking: {
    name: "pread",
    parameters: ["i32", "buffer", "usize", "i64"],
    result: "isize",
    nonblocking: true,
  },
  pwrite: { parameters: ["i32", "buffer", "usize", "i64"], result: "isize" },
  lseek: { parameters: ["i32", "i64", "i32"], result: "i64" },
  fsync: { parameters: ["i32"], result: "i32" },
  fdatasync: { parameters: ["i32"], result: "i32" },
  ftruncate: { parameters: ["i32", "i64"], result: "i32" },
  flock: { parameters: ["i32", "i32"], result: "i32" },
  fcntl: { parameters: ["i32", "i32", "i32"], result: "i32" },
  syscall: { parameters: ["i64", "i64", "buffer", "buffer", "i64"], result: "i64" },
  /** `syscall` as renameat2 takes it: number, old directory, old path, new directory, new path, flags. */
  syscall_rename: {
    name: "syscall",
    parameters: ["i64", "i64", "buffer", "i64", "buffer", "i64"],
    result: "i64",
  },
  preadv2: { parameters: ["i32", "buffer", "i32", "i64", "i32"], result: "isize" },
  /** `syscall` with integer arguments only (addresses as numbers): Linux native AIO. */
  syscall_ints: {
    name: "syscall",
    parameters: ["i64", "i64", "i64", "i64", "i64", "i64"],
    result: "i64",
  },
  posix_fadvise: { parameters: ["i32", "i64", "i64", "i32"], result: "i32" },
  times: { parameters: ["buffer"], result: "i64" },
  sysconf: { parameters: ["i32"], result: "i64" },
  getrusage: { parameters: ["i32", "buffer"], result: "i32" },
  clock_gettime: { parameters: ["i32", "buffer"], result: "i32" },
  statfs: { parameters: ["buffer", "buffer"], result: "i32" },
  statx: { parameters: ["i32", "buffer", "i32", "u32", "buffer"], result: "i32" },
  realpath: { parameters: ["buffer", "buffer"], result: "pointer" },
  fgetxattr: { parameters: ["i32", "buffer", "buffer", "usize"], result: "isize" },
  fsetxattr: { parameters: ["i32", "buffer", "buffer", "usize", "i32"], result: "i32" },
  mmap: { parameters: ["pointer", "usize", "i32", "i32", "i32", "i64"], result: "pointer" },
  munmap: { parameters: ["pointer", "usize"], result: "i32" },
  madvise: { parameters: ["pointer", "usize", "i32"], result: "i32" },
  mincore: { parameters: ["pointer", "usize", "buffer"], result: "i32" },
  memcmp: { parameters: ["buffer", "buffer", "usize"], result: "i32" },
  __errno_location: { parameters: [], result: "pointer" },
  strerror: { parameters: ["i32"], result: "pointer" },
  dlopen: { parameters: ["buffer", "i32"], result: "pointer" },
  dlerror: { parameters: [], result: "pointer" },
  gnu_get_libc_version: { parameters: [], result: "pointer" },
  setrlimit: { parameters: ["i32", "buffer"], result: "i32" },
  getrlimit: { parameters: ["i32", "buffer"], result: "i32" },
  nanosleep: { parameters: ["buffer", "pointer"], result: "i32" },
  getsockopt: { parameters: ["i32", "i32", "i32", "buffer", "buffer"], result: "i32" },
} as const;

type Libc = Deno.DynamicLibrary<typeof SYMBOLS>["symbols"];

let lib: Libc | undefined;

function libc(): Libc {
  if (lib) return lib;
  if (Deno.build.os !== "linux") {
    throw new SciobenchError(
      `sciobench needs Linux with glibc (libc.so.6); this is ${Deno.build.os}`,
      1,
    );
  }
  try {
    lib = Deno.dlopen("libc.so.6", SYMBOLS).symbols;
  } catch (e) {
    const why = e instanceof Error ? e.message : String(e);
    throw new SciobenchError(
      `cannot load glibc (libc.so.6) through FFI: ${why}; sciobench needs a glibc Linux ` +
        `(musl systems such as Alpine are not supported) and the --allow-ffi permission`,
      1,
    );
  }
  return lib;
}

/** `open` flags (glibc, x86-64 and aarch64 Linux). */
export const O = {
  RDONLY: 0,
  WRONLY: 1,
  RDWR: 2,
  CREAT: 0o100,
  EXCL: 0o200,
  TRUNC: 0o1000,
  APPEND: 0o2000,
  DSYNC: 0o10000,
  DIRECT: Deno.build.arch === "aarch64" ? 0o200000 : 0o40000,
  DIRECTORY: Deno.build.arch === "aarch64" ? 0o40000 : 0o200000,
  CLOEXEC: 0o2000000,
} as const;

/** `posix_fadvise` advice values. */
export const FADV = { NORMAL: 0, RANDOM: 1, SEQUENTIAL: 2, WILLNEED: 3, DONTNEED: 4 } as const;

/** Clock ids for {@link clockGettime}. */
export const CLOCK = { REALTIME: 0, MONOTONIC: 1, PROCESS_CPUTIME: 2, THREAD_CPUTIME: 3 } as const;

/** `setrlimit` resources (Linux). */
export const RLIMIT = { CPU: 0, AS: 9 } as const;

/** `getrusage` targets. */
export const RUSAGE = { SELF: 0, CHILDREN: -1, THREAD: 1 } as const;

const ERRNO_NAMES: Record<number, string> = {
  1: "EPERM",
  2: "ENOENT",
  4: "EINTR",
  5: "EIO",
  9: "EBADF",
  11: "EAGAIN",
  12: "ENOMEM",
  13: "EACCES",
  14: "EFAULT",
  16: "EBUSY",
  17: "EEXIST",
  20: "ENOTDIR",
  21: "EISDIR",
  22: "EINVAL",
  24: "EMFILE",
  27: "EFBIG",
  28: "ENOSPC",
  29: "ESPIPE",
  30: "EROFS",
  36: "ENAMETOOLONG",
  38: "ENOSYS",
  95: "EOPNOTSUPP",
  122: "EDQUOT",
};

/** Symbolic name of an errno value (`ENOENT`), or `E<number>` when unknown. */
export function errnoName(errno: number): string {
  return ERRNO_NAMES[errno] ?? `E${errno}`;
}

function errno(): number {
  const p = libc().__errno_location();
  return p === null ? 0 : new Deno.UnsafePointerView(p).getInt32();
}

/** The SysError of `call` on `path` failing with errno `code` (its name and strerror text). */
function sysError(call: string, path: string, code: number): SysError {
  let text = "";
  const p = libc().strerror(code);
  if (p !== null) text = Deno.UnsafePointerView.getCString(p);
  return new SysError(call, code, errnoName(code), path, text);
}

function fail(call: string, path: string, code = errno()): never {
  throw sysError(call, path, code);
}

const encoder = new TextEncoder();

/** NUL-terminated UTF-8 bytes of a string, for C `const char *` parameters. */
export function cString(s: string): Uint8Array<ArrayBuffer> {
  const b = new Uint8Array(s.length * 3 + 1);
  const { written } = encoder.encodeInto(s, b);
  return b.subarray(0, written + 1);
}

/** Version string of the glibc in use, e.g. `2.36`. */
export function glibcVersion(): string {
  const p = libc().gnu_get_libc_version();
  return p === null ? "unknown" : Deno.UnsafePointerView.getCString(p);
}

/**
 * Receives every successful open, close, pread, pwrite, fsync, fdatasync and posix_fadvise made
 * through this module (the audit trail, lib/sys/audit.ts). Offsets and counts in bytes.
 */
export interface IoObserver {
  /** A file was opened as `fd` with `flags`. */
  open(fd: number, path: string, flags: number): void;
  /** `fd` was closed. */
  close(fd: number): void;
  /** A pread at `offset` returned `bytes` (or a read through a mapping, {@link noteMappedRead}). */
  read(fd: number, offset: number, bytes: number): void;
  /** A pwrite at `offset` wrote `bytes`. */
  write(fd: number, offset: number, bytes: number): void;
  /** fsync, fdatasync, or posix_fadvise with `advice` (see {@link FADV}; 0 for the syncs). */
  sync(fd: number, call: "fsync" | "fdatasync" | "fadvise", advice: number): void;
  /** A residency measurement of `fd` found `fraction` (0..1) of its pages cached. */
  resident(fd: number, fraction: number): void;
  /**
   * A library made `path` durable through its own descriptors ({@link noteLibrarySync}):
   * `MPI_File_sync`, MPI-IO's durable point; `H5Fflush`, parallel HDF5's (its MPI-IO driver
   * syncs the file); `ncmpi_sync`, PnetCDF's; `nc_sync`, netCDF-4's.
   */
  librarySync(path: string, call: LibrarySync): void;
  /**
   * A metadata call ({@link MetaCall}) returned after `ns` nanoseconds: `fd` for open, close and
   * fsync (-1 for the others), `path` for open, mkdir, rename (its target) and unlink. Absent:
   * these calls are not timed.
   */
  meta?(call: MetaCall, fd: number, path: string, ns: number): void;
  /**
   * A read request of a queue (lib/sys/queue.ts) of `bytes` bytes at `offset` completed: when it
   * was submitted and when it was reaped (CLOCK_MONOTONIC, ns), and how many of the queue's
   * requests were in flight once it was submitted (itself included). Its read is also reported
   * to {@link read}; with `write` true it was a write request, also reported to {@link write}.
   */
  request?(
    fd: number,
    offset: number,
    bytes: number,
    submittedNs: number,
    completedNs: number,
    inFlight: number,
    write?: boolean,
  ): void;
}

/** The calls on names and descriptors (not data) the observer times: {@link IoObserver.meta}. */
export type MetaCall = "open" | "close" | "fsync" | "mkdir" | "rename" | "unlink";

/** The durable points of libraries sciobench records: MPI-IO's, parallel HDF5's, PnetCDF's, netCDF-4's. */
export type LibrarySync = "MPI_File_sync" | "H5Fflush" | "ncmpi_sync" | "nc_sync";

/**
 * Tells the observer that a library made `path` durable through descriptors of its own (the
 * MPI library's MPI_File_sync, parallel HDF5's H5Fflush), which no call of this module saw.
 */
export function noteLibrarySync(path: string, call: LibrarySync): void {
  if (observer !== undefined) observer.librarySync(path, call);
}

let observer: IoObserver | undefined;

/** Sets (or, with undefined, removes) the one observer of the I/O calls. */
export function observeIo(o: IoObserver | undefined): void {
  observer = o;
}

/**
 * Tells the observer of a request a queue (lib/sys/queue.ts) made and reaped: a read of `got`
 * bytes at `offset` of `fd` (`asked` bytes asked), submitted and completed at the CLOCK_MONOTONIC
 * times given, ns, with `inFlight` of the queue's requests in flight once it was submitted.
 */
export function noteQueuedRead(
  fd: number,
  offset: number,
  got: number,
  asked: number,
  submittedNs: number,
  completedNs: number,
  inFlight: number,
): void {
  if (observer === undefined) return;
  observer.read(fd, offset, got);
  observer.request?.(fd, offset, asked, submittedNs, completedNs, inFlight);
}

/** {@link noteQueuedRead} for a write request: `wrote` of `asked` bytes written at `offset`. */
export function noteQueuedWrite(
  fd: number,
  offset: number,
  wrote: number,
  asked: number,
  submittedNs: number,
  completedNs: number,
  inFlight: number,
): void {
  if (observer === undefined) return;
  observer.write(fd, offset, wrote);
  observer.request?.(fd, offset, asked, submittedNs, completedNs, inFlight, true);
}

/**
 * A raw system call with integer arguments (addresses as numbers), for the request queues of
 * lib/sys/queue.ts: its result, or minus the errno when it failed.
 */
export function syscallInts(nr: number, a = 0, b = 0, c = 0, d = 0, e = 0): number {
  const rc = Number(
    libc().syscall_ints(BigInt(nr), BigInt(a), BigInt(b), BigInt(c), BigInt(d), BigInt(e)),
  );
  return rc < 0 ? -errno() : rc;
}

/** The SysError of `call` on `path` failing with errno `code` (its name and strerror text). */
export function systemError(call: string, path: string, code: number): SysError {
  return sysError(call, path, code);
}

/**
 * Maps `bytes` bytes of `fd` from `offset` shared, readable and writable, populated (io_uring's
 * rings, lib/sys/queue.ts): the address, or minus the errno.
 */
export function mapSharedRegion(fd: number, bytes: number, offset: number): number {
  // PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE
  const p = libc().mmap(null, BigInt(bytes), 3, 0x1 | 0x8000, fd, BigInt(offset));
  const v = BigInt(Deno.UnsafePointer.value(p));
  return p === null || v === 0xffffffffffffffffn ? -errno() : Number(v);
}

/** Unmaps what {@link mapSharedRegion} mapped at `at`, `bytes` long. */
export function unmapRegion(at: number, bytes: number): void {
  libc().munmap(Deno.UnsafePointer.create(BigInt(at)), BigInt(bytes));
}

/** The address of `buf`'s first byte (for the iocbs and SQEs of lib/sys/queue.ts). */
export function addressOfBytes(buf: Uint8Array): number {
  return addressOf(buf);
}

/** Opens `path` with `flags` (see {@link O}) and `mode` (permission bits); returns the fd. */
export function open(path: string, flags: number, mode = 0o644): number {
  const t0 = observer?.meta === undefined ? 0 : clockGettime();
  const fd = libc().open(cString(path), flags | O.CLOEXEC, mode);
  if (fd < 0) fail("open", path);
  if (observer !== undefined) {
    observer.open(fd, path, flags);
    observer.meta?.("open", fd, path, clockGettime() - t0);
  }
  return fd;
}

/** Renames `from` to `to` (replacing a file there atomically). */
export function rename(from: string, to: string): void {
  const t0 = observer?.meta === undefined ? 0 : clockGettime();
  if (libc().rename(cString(from), cString(to)) < 0) fail("rename", `${from} -> ${to}`);
  observer?.meta?.("rename", -1, to, clockGettime() - t0);
}

/** Removes the file `path` (a name; the file lives on while open elsewhere). */
export function unlink(path: string): void {
  const t0 = observer?.meta === undefined ? 0 : clockGettime();
  if (libc().unlink(cString(path)) < 0) fail("unlink", path);
  observer?.meta?.("unlink", -1, path, clockGettime() - t0);
}

/** System call number of renameat2 (Linux 3.15). */
const SYS_RENAMEAT2 = Deno.build.arch === "aarch64" ? 276n : 316n;
/** renameat2's flag that swaps the two paths atomically. */
const RENAME_EXCHANGE = 2n;
/** openat's and renameat2's "relative to the working directory". */
const AT_CWD = -100n;

/**
 * Swaps `a` and `b` atomically (renameat2 with RENAME_EXCHANGE): each then names what the other
 * named, both existing throughout. SysError on failure (EINVAL where the file system cannot).
 */
export function renameExchange(a: string, b: string): void {
  const rc = libc().syscall_rename(
    SYS_RENAMEAT2,
    AT_CWD,
    cString(a),
    AT_CWD,
    cString(b),
    RENAME_EXCHANGE,
  );
  if (rc < 0n) fail("renameat2", `${a} <-> ${b}`);
}

/**
 * Makes directory `path` with permission bits `mode` (less the umask); SysError on failure
 * (EEXIST when something is there already).
 */
export function mkdir(path: string, mode = 0o755): void {
  const t0 = observer?.meta === undefined ? 0 : clockGettime();
  if (libc().mkdir(cString(path), mode) < 0) fail("mkdir", path);
  observer?.meta?.("mkdir", -1, path, clockGettime() - t0);
}

/** Closes a file descriptor. */
export function close(fd: number, path = ""): void {
  // a read still in flight on fd completes first (the number may name another file next)
  if (inFlight !== undefined && inFlight.fd === fd) {
    try {
      inFlight.wait();
    } catch {
      // its reader learns of the error when it asks
    }
  }
  if (observer !== undefined) observer.close(fd);
  const t0 = observer?.meta === undefined ? 0 : clockGettime();
  if (libc().close(fd) < 0) fail("close", path);
  observer?.meta?.("close", fd, path, clockGettime() - t0);
}

/** Where each {@link pread} call's latency goes (ns), while a read phase records them. */
let preadLatency: { record(ns: number): void } | undefined;

/**
 * Sets (or, with undefined, removes) the recorder of every {@link pread} call's latency, ns
 * (CLOCK_MONOTONIC around the system call); returns the recorder it replaces.
 */
export function recordPreadLatency(
  recorder: { record(ns: number): void } | undefined,
): { record(ns: number): void } | undefined {
  const before = preadLatency;
  preadLatency = recorder;
  return before;
}

/** Reads up to `buf.length` bytes at byte `offset`; returns the count (0 at end of file). */
export function pread(fd: number, buf: Uint8Array, offset: number, path = ""): number {
  // mutant: pread-latency-recorded
  const t0 = preadLatency === undefined ? 0 : clockGettime();
  const n = Number(libc().pread(fd, buf, BigInt(buf.length), BigInt(offset)));
  if (preadLatency !== undefined) preadLatency.record(clockGettime() - t0);
  if (n < 0) fail("pread", path);
  if (observer !== undefined) observer.read(fd, offset, n);
  return n;
}

/**
 * {@link pread} on another thread (Deno FFI `nonblocking`): the read is in flight when this
 * returns, and the promise gives the count once it completes; the observer sees the read then, in
 * the order reads were issued when the caller has one read in flight at a time. `buf` must not be
 * touched until the promise settles. errno is the other thread's, so a failed read is made once
 * more here to learn it (its SysError names the call's errno, or its result when it then succeeds).
 */
export async function preadAsync(
  fd: number,
  buf: Uint8Array,
  offset: number,
  path = "",
): Promise<number> {
  const n = Number(await libc().pread_nonblocking(fd, buf, BigInt(buf.length), BigInt(offset)));
  if (n < 0) return pread(fd, buf, offset, path);
  if (observer !== undefined) observer.read(fd, offset, n);
  return n;
}

/** System call numbers of Linux native AIO: io_setup, io_submit, io_getevents. */
const SYS_IO = Deno.build.arch === "aarch64"
  ? { setup: 0n, submit: 2n, getevents: 4n }
  : { setup: 206n, submit: 209n, getevents: 208n };
/** IOCB_CMD_PREAD, the iocb's opcode of a positioned read. */
const IOCB_CMD_PREAD = 0;

/**
 * The memory the AIO calls share with the kernel, in one ArrayBuffer (its bytes live off the V8
 * heap and never move): the context id at 0, one iocb (64 bytes) at 64, the array of one iocb
 * pointer at 128, one io_event (32 bytes: data, obj, res, res2) at 160.
 */
const aioMem = new ArrayBuffer(256);
const aioBase = BigInt(Deno.UnsafePointer.value(Deno.UnsafePointer.of(aioMem)));
const aioCtxId = new BigUint64Array(aioMem, 0, 1);
const iocb = new DataView(aioMem, 64, 64);
const iocbList = new BigUint64Array(aioMem, 128, 1);
/** The address of the iocb list (io_submit's) and of the io_event (io_getevents'). */
const IOCB_LIST = aioBase + 128n;
const AIO_EVENT = aioBase + 160n;
/**
 * The iocb's and the event's fields as 32-bit words (little-endian halves of the 64-bit ones),
 * written and read without BigInt: a submission or a reap sits between the device's reads.
 */
const iocbWords = new Uint32Array(aioMem, 64, 16);
const eventWords = new Uint32Array(aioMem, 160, 8);
const eventSigned = new Int32Array(aioMem, 160, 8);
// the fields every read shares (opcode, key, flags, priority, reserved: 0), and the list's iocb
iocb.setUint16(16, IOCB_CMD_PREAD, true);
iocbList[0] = aioBase + 64n;
const TWO32 = 2 ** 32;
/**
 * Address of the first byte of each large buffer read into through AIO, by its ArrayBuffer: its
 * bytes live off the V8 heap and never move, so the address is taken once, not at each read.
 */
const bufferAddress = new WeakMap<ArrayBufferLike, number>();

/** The address of `buf`'s first byte (cached by ArrayBuffer for buffers of a page or more). */
function addressOf(buf: Uint8Array): number {
  const whole = buf.buffer;
  let base = bufferAddress.get(whole);
  if (base === undefined) {
    base = Number(Deno.UnsafePointer.value(Deno.UnsafePointer.of(buf))) - buf.byteOffset;
    if (whole.byteLength < 4096) return base + buf.byteOffset;
    bufferAddress.set(whole, base);
  }
  return base + buf.byteOffset;
}

/** The process's AIO context (made at the first use, never destroyed), or why there is none. */
let aioContext: { readonly id: bigint } | { readonly why: string } | undefined;
/** The one read submitted and not yet waited for. */
let inFlight: AioRead | undefined;
/** aio_data of the last read submitted (32 bits; the word above it stays 0). */
let lastReadId = 0;

/** Makes the AIO context on first use; its id, or undefined when the kernel refused it. */
function aioId(): bigint | undefined {
  if (aioContext === undefined) {
    // SCIOBENCH_AIO=off asks the kernel for a context of 0 events, which io_setup refuses
    // (EINVAL): the fallback's path, taken on purpose
    const off = Deno.env.get("SCIOBENCH_AIO") === "off";
    aioCtxId[0] = 0n;
    const rc = libc().syscall_ints(SYS_IO.setup, off ? 0n : 4n, aioBase, 0n, 0n, 0n);
    // mutant: aio-setup-failure
    if (Number(rc) === 0) aioContext = { id: aioCtxId[0]! };
    else {
      const why = sysError("io_setup", "", errno()).message;
      aioContext = { why: off ? `${why} (as SCIOBENCH_AIO=off asks)` : why };
    }
  }
  return "id" in aioContext ? aioContext.id : undefined;
}

/**
 * Why Linux native AIO cannot be used in this process (io_setup refused: ENOSYS in a kernel
 * without it, EPERM under a seccomp filter, EAGAIN past /proc/sys/fs/aio-max-nr, or
 * SCIOBENCH_AIO=off), or undefined when it can; the first call makes the process's one context.
 */
export function aioUnavailable(): string | undefined {
  aioId();
  return aioContext !== undefined && "why" in aioContext ? aioContext.why : undefined;
}

/**
 * A positioned read submitted through Linux native AIO (io_submit), waited for (io_getevents,
 * blocking this thread) only when its result is asked: {@link wait}, or `then` (so an `await`
 * waits when the awaiting function resumes, after the caller's synchronous work). The count it
 * gives is pread's: bytes read, short only at the end of the file.
 */
export interface SubmittedRead extends PromiseLike<number> {
  /** Waits for the read if it is still in flight; its byte count, or its SysError thrown. */
  wait(): number;
}

/** A read already made (the AIO fallback: a pread, which threw if it failed): its count. */
class MadeRead implements SubmittedRead {
  readonly #count: number;
  constructor(count: number) {
    this.#count = count;
  }
  wait(): number {
    return this.#count;
  }
  then<A = number, B = never>(
    onfulfilled?: ((value: number) => A | PromiseLike<A>) | null,
    onrejected?: ((reason: unknown) => B | PromiseLike<B>) | null,
  ): PromiseLike<A | B> {
    return Promise.resolve(this.#count).then(onfulfilled, onrejected);
  }
}

/** A read in the kernel's hands until {@link wait} reaps its completion. */
class AioRead implements SubmittedRead {
  readonly #id: number;
  readonly #fd: number;
  /** The buffer the kernel writes into: held here until the read completes. */
  #buf: Uint8Array | undefined;
  readonly #offset: number;
  readonly #path: string;
  #count = -1;
  #error: SysError | undefined;

  constructor(id: number, fd: number, buf: Uint8Array, offset: number, path: string) {
    this.#id = id;
    this.#fd = fd;
    this.#buf = buf;
    this.#offset = offset;
    this.#path = path;
  }

  /** The descriptor read. */
  get fd(): number {
    return this.#fd;
  }

  /** Where it reads: descriptor, file offset and bytes asked. */
  get range(): { readonly fd: number; readonly offset: number; readonly bytes: number } {
    return { fd: this.#fd, offset: this.#offset, bytes: this.#buf?.length ?? 0 };
  }

  wait(): number {
    // mutant: aio-reap
    if (this.#buf !== undefined) this.#reap();
    if (this.#error !== undefined) throw this.#error;
    return this.#count;
  }

  /** Waits for this read's completion event (the only one in flight). */
  #reap(): void {
    const ctx = (aioContext as { id: bigint }).id;
    for (;;) {
      const n = Number(libc().syscall_ints(SYS_IO.getevents, ctx, 1n, 1n, AIO_EVENT, 0n));
      if (n === 1) break;
      const code = n < 0 ? errno() : 0;
      if (n === 0 || code === 4) continue; // EINTR (a signal): wait on
      throw sysError("io_getevents", this.#path, code);
    }
    const id = eventWords[1]! * TWO32 + eventWords[0]!;
    if (id !== this.#id) {
      throw new SciobenchError(
        `${this.#path}: io_getevents gave the completion of read ${id}, ` +
          `not of read ${this.#id} (the one in flight)`,
        1,
      );
    }
    inFlight = undefined;
    this.#buf = undefined;
    const res = eventSigned[5]! * TWO32 + eventWords[4]!; // the event's res, an i64
    if (res < 0) {
      this.#error = sysError("pread", this.#path, -res);
      return;
    }
    this.#count = res;
    if (observer !== undefined) observer.read(this.#fd, this.#offset, res);
  }

  then<A = number, B = never>(
    onfulfilled?: ((value: number) => A | PromiseLike<A>) | null,
    onrejected?: ((reason: unknown) => B | PromiseLike<B>) | null,
  ): PromiseLike<A | B> {
    let count: number;
    try {
      count = this.wait();
    } catch (e) {
      return Promise.reject(e).then(onfulfilled, onrejected);
    }
    return Promise.resolve(count).then(onfulfilled, onrejected);
  }
}

/**
 * The read submitted through native AIO and not yet waited for ({@link preadSubmit}): its
 * descriptor, file offset and length in bytes; undefined when none is in flight.
 */
export function readInFlight():
  | { readonly fd: number; readonly offset: number; readonly bytes: number }
  | undefined {
  return inFlight?.range;
}

/**
 * {@link pread} of a file opened with O_DIRECT through Linux native AIO: the read is submitted
 * here (io_submit, on this thread, no thread hop) and waited for only when its result is asked
 * ({@link SubmittedRead}), so the caller works meanwhile while the device reads. One read is in
 * flight at a time in the process: a read still in flight is waited for before the next is
 * submitted (the device sees queue depth 1). The observer sees each read when it completes.
 * Where AIO is unavailable ({@link aioUnavailable}) or io_submit refuses the read, it is made at
 * once with pread. `buf` must not be touched until the read completes.
 */
export function preadSubmit(
  fd: number,
  buf: Uint8Array,
  offset: number,
  path = "",
): SubmittedRead {
  const ctx = aioId();
  if (ctx === undefined) return new MadeRead(pread(fd, buf, offset, path));
  // mutant: aio-wait-in-flight
  inFlight?.wait();
  let id = ++lastReadId;
  if (id >= TWO32) id = lastReadId = 1;
  const address = addressOf(buf);
  // aio_data, aio_fildes, aio_buf, aio_nbytes, aio_offset (the other fields stay 0)
  iocbWords[0] = id;
  iocbWords[5] = fd;
  iocbWords[6] = address % TWO32;
  iocbWords[7] = Math.floor(address / TWO32);
  iocbWords[8] = buf.length % TWO32;
  iocbWords[9] = Math.floor(buf.length / TWO32);
  iocbWords[10] = offset % TWO32;
  iocbWords[11] = Math.floor(offset / TWO32);
  const rc = Number(libc().syscall_ints(SYS_IO.submit, ctx, 1n, IOCB_LIST, 0n, 0n));
  if (rc !== 1) return new MadeRead(pread(fd, buf, offset, path));
  const read = new AioRead(id, fd, buf, offset, path);
  // mutant: aio-wait-at-submit
  inFlight = read;
  return read;
}

/** Reads {@link preadMany} submits at once, at most (its AIO context's events). */
export const PREAD_MANY_MAX = 64;

/**
 * The memory of {@link preadMany}'s calls, in one ArrayBuffer off the V8 heap: its context id at
 * 0, PREAD_MANY_MAX iocbs of 64 bytes at 64, the list of their addresses after them, then as many
 * io_events of 32 bytes.
 */
const manyMem = new ArrayBuffer(64 + PREAD_MANY_MAX * (64 + 8 + 32));
const manyBase = BigInt(Deno.UnsafePointer.value(Deno.UnsafePointer.of(manyMem)));
const manyCtxId = new BigUint64Array(manyMem, 0, 1);
const manyIocbs = new Uint32Array(manyMem, 64, PREAD_MANY_MAX * 16);
const MANY_LIST = 64 + PREAD_MANY_MAX * 64;
const MANY_EVENTS = MANY_LIST + PREAD_MANY_MAX * 8;
const manyEvents = new Uint32Array(manyMem, MANY_EVENTS, PREAD_MANY_MAX * 8);
const manyEventsSigned = new Int32Array(manyMem, MANY_EVENTS, PREAD_MANY_MAX * 8);
{
  const list = new BigUint64Array(manyMem, MANY_LIST, PREAD_MANY_MAX);
  for (let k = 0; k < PREAD_MANY_MAX; k++) list[k] = manyBase + 64n + BigInt(k * 64);
}
/** preadMany's AIO context id (made at the first use, never destroyed); null: none (preads). */
let manyContext: bigint | null | undefined;

/**
 * Reads `count` (at most {@link PREAD_MANY_MAX}) ranges of open file `fd` at once: range k, of
 * `lengths[k]` bytes from byte `offsets[k]`, into `into` from byte k * `stride` (a buffer of a
 * page or more), all submitted in one io_submit and reaped by io_getevents (Linux native AIO,
 * which reads a buffered file in io_submit itself): two system calls for many small reads, where
 * each pread is one. Returns each range's byte count in
 * `counts` (pread's: short only at the end of the file); the observer sees every read, in range
 * order. Where AIO is unavailable (as {@link aioUnavailable}), or io_submit or a read through
 * it is refused, those reads are preads.
 */
export function preadMany(
  fd: number,
  offsets: ArrayLike<number>,
  lengths: ArrayLike<number>,
  count: number,
  into: Uint8Array,
  stride: number,
  counts: Int32Array,
  path = "",
): void {
  if (manyContext === undefined) {
    manyContext = null;
    manyCtxId[0] = 0n;
    const off = Deno.env.get("SCIOBENCH_AIO") === "off";
    const events = BigInt(off ? 0 : PREAD_MANY_MAX);
    if (Number(libc().syscall_ints(SYS_IO.setup, events, manyBase, 0n, 0n, 0n)) === 0) {
      manyContext = manyCtxId[0]!;
    }
  }
  const ctx = manyContext;
  let submitted = 0;
  if (ctx !== null && count > 0) {
    const address = addressOf(into);
    for (let k = 0; k < count; k++) {
      const w = k * 16;
      const at = address + k * stride;
      const offset = offsets[k]!, length = lengths[k]!;
      // aio_data (k), the opcode (IOCB_CMD_PREAD, 0) and priority, aio_fildes, aio_buf,
      // aio_nbytes, aio_offset; the other fields stay 0
      manyIocbs[w] = k;
      manyIocbs[w + 1] = 0;
      manyIocbs[w + 4] = IOCB_CMD_PREAD;
      manyIocbs[w + 5] = fd;
      manyIocbs[w + 6] = at % TWO32;
      manyIocbs[w + 7] = Math.floor(at / TWO32);
      manyIocbs[w + 8] = length;
      manyIocbs[w + 9] = 0;
      manyIocbs[w + 10] = offset % TWO32;
      manyIocbs[w + 11] = Math.floor(offset / TWO32);
    }
    const list = manyBase + BigInt(MANY_LIST);
    const rc = Number(libc().syscall_ints(SYS_IO.submit, ctx, BigInt(count), list, 0n, 0n));
    submitted = rc > 0 ? rc : 0;
    let reaped = 0;
    while (reaped < submitted) {
      const events = manyBase + BigInt(MANY_EVENTS + reaped * 32);
      const left = BigInt(submitted - reaped);
      const n = Number(libc().syscall_ints(SYS_IO.getevents, ctx, left, left, events, 0n));
      const code = n < 0 ? errno() : 0;
      if (n < 0 && code !== 4) throw sysError("io_getevents", path, code);
      if (n > 0) reaped += n;
    }
    for (let e = 0; e < submitted; e++) {
      const k = manyEvents[e * 8]!;
      // mutant: pread-many-count
      counts[k] = manyEventsSigned[e * 8 + 5]! * TWO32 + manyEvents[e * 8 + 4]!;
    }
    for (let k = 0; k < submitted; k++) {
      // a read the kernel refused through AIO (a file system without it) is made again with
      // pread, which names the error if it fails there too
      if (counts[k]! < 0) {
        const view = into.subarray(k * stride, k * stride + lengths[k]!);
        counts[k] = pread(fd, view, offsets[k]!, path);
      } else if (observer !== undefined) observer.read(fd, offsets[k]!, counts[k]!);
    }
  }
  // what io_submit did not take (none, or AIO unavailable): preads
  for (let k = submitted; k < count; k++) {
    const view = into.subarray(k * stride, k * stride + lengths[k]!);
    counts[k] = pread(fd, view, offsets[k]!, path);
  }
}

/** Writes up to `buf.length` bytes at byte `offset`; returns the count written. */
export function pwrite(fd: number, buf: Uint8Array, offset: number, path = ""): number {
  const n = Number(libc().pwrite(fd, buf, BigInt(buf.length), BigInt(offset)));
  if (n < 0) fail("pwrite", path);
  if (observer !== undefined) observer.write(fd, offset, n);
  return n;
}

/** Size of the open file in bytes (`lseek(fd, 0, SEEK_END)`). */
export function fileSize(fd: number, path = ""): number {
  const n = Number(libc().lseek(fd, 0n, 2));
  if (n < 0) fail("lseek", path);
  return n;
}

/** Flushes the file's data and metadata to stable storage. */
export function fsync(fd: number, path = ""): void {
  const t0 = observer?.meta === undefined ? 0 : clockGettime();
  if (libc().fsync(fd) < 0) fail("fsync", path);
  if (observer !== undefined) {
    observer.sync(fd, "fsync", 0);
    observer.meta?.("fsync", fd, path, clockGettime() - t0);
  }
}

/** Flushes the file's data (and the metadata needed to read it) to stable storage. */
export function fdatasync(fd: number, path = ""): void {
  if (libc().fdatasync(fd) < 0) fail("fdatasync", path);
  if (observer !== undefined) observer.sync(fd, "fdatasync", 0);
}

/** Sets the file's length to `length` bytes. */
export function ftruncate(fd: number, length: number, path = ""): void {
  if (libc().ftruncate(fd, BigInt(length)) < 0) fail("ftruncate", path);
}

/** `flock` operations. */
export const LOCK = { SH: 1, EX: 2, NB: 4, UN: 8 } as const;

/**
 * Applies or removes an advisory lock (`flock`, see {@link LOCK}) on an open file; returns false
 * when `LOCK.NB` was given and another open file holds a conflicting lock.
 */
export function flock(fd: number, operation: number, path = ""): boolean {
  if (libc().flock(fd, operation) === 0) return true;
  const code = errno();
  if (code === 11 && (operation & LOCK.NB) !== 0) return false;
  fail("flock", path, code);
}

/** Gives the kernel `advice` (see {@link FADV}) for bytes [offset, offset+length); length 0 = to end. */
export function posixFadvise(
  fd: number,
  offset: number,
  length: number,
  advice: number,
  path = "",
): void {
  const rc = libc().posix_fadvise(fd, BigInt(offset), BigInt(length), advice);
  if (rc !== 0) fail("posix_fadvise", path, rc);
  if (observer !== undefined) observer.sync(fd, "fadvise", advice);
}

/** Clock ticks per second of {@link times} (`sysconf(_SC_CLK_TCK)`, usually 100). */
export function clockTicksPerSecond(): number {
  const n = Number(libc().sysconf(2));
  return n > 0 ? n : 100;
}

/** Page size in bytes (`sysconf(_SC_PAGESIZE)`). */
export function pageSize(): number {
  const n = Number(libc().sysconf(30));
  return n > 0 ? n : 4096;
}

/** Process CPU times in clock ticks, as `times()` reports them. */
export interface Tms {
  /** User CPU of this process, ticks. */
  readonly user: number;
  /** System CPU of this process, ticks. */
  readonly sys: number;
  /** User CPU of waited-for children, ticks. */
  readonly childUser: number;
  /** System CPU of waited-for children, ticks. */
  readonly childSys: number;
  /** Elapsed real time since an arbitrary point, ticks. */
  readonly elapsed: number;
}

const tmsBuf = new BigInt64Array(4);

/** Process CPU times in clock ticks (`times()`). */
export function times(): Tms {
  const r = Number(libc().times(tmsBuf));
  if (r === -1) fail("times", "");
  return {
    // mutant: libc-times-swapped
    user: Number(tmsBuf[0]),
    sys: Number(tmsBuf[1]),
    childUser: Number(tmsBuf[2]),
    childSys: Number(tmsBuf[3]),
    elapsed: r,
  };
}

/** Resource usage (`getrusage`): CPU in microseconds, block I/O in 512-byte units. */
export interface Rusage {
  /** User CPU, µs. */
  readonly userUs: number;
  /** System CPU, µs. */
  readonly sysUs: number;
  /** Maximum resident set size, KiB. */
  readonly maxRssKiB: number;
  /** Blocks read from devices (`ru_inblock`), 512-byte units. */
  readonly inBlocks: number;
  /** Blocks written to devices (`ru_oublock`), 512-byte units. */
  readonly outBlocks: number;
  /** Minor page faults (a page first touched, no I/O). */
  readonly minorFaults: number;
  /** Major page faults. */
  readonly majorFaults: number;
  /** Voluntary context switches. */
  readonly voluntarySwitches: number;
  /** Involuntary context switches. */
  readonly involuntarySwitches: number;
}

const rusageBuf = new BigInt64Array(18);

/** Resource usage of `who` (see {@link RUSAGE}; default the whole process). */
export function getrusage(who: number = RUSAGE.SELF): Rusage {
  if (libc().getrusage(who, rusageBuf) < 0) fail("getrusage", "");
  const b = rusageBuf;
  return {
    userUs: Number(b[0]) * 1e6 + Number(b[1]),
    sysUs: Number(b[2]) * 1e6 + Number(b[3]),
    maxRssKiB: Number(b[4]),
    minorFaults: Number(b[8]),
    majorFaults: Number(b[9]),
    inBlocks: Number(b[11]),
    outBlocks: Number(b[12]),
    voluntarySwitches: Number(b[16]),
    involuntarySwitches: Number(b[17]),
  };
}

const tsBuf = new BigInt64Array(2);

/** Reads clock `clock` (see {@link CLOCK}; default monotonic) in nanoseconds. */
export function clockGettime(clock: number = CLOCK.MONOTONIC): number {
  if (libc().clock_gettime(clock, tsBuf) < 0) fail("clock_gettime", "");
  return Number(tsBuf[0]) * 1e9 + Number(tsBuf[1]);
}

/** File-system facts of a path (`statfs`). */
export interface StatFs {
  /** Magic number of the file-system type (`f_type`), e.g. 0xEF53 for ext4. */
  readonly type: number;
  /** Name of the type when known (`ext4`, `tmpfs`, `nfs`, `lustre`, ...), else hex. */
  readonly typeName: string;
  /** Optimal transfer block size, bytes. */
  readonly blockSize: number;
  /** Free bytes available to unprivileged users. */
  readonly availableBytes: number;
  /** True for memory file systems, where a cold read is impossible. */
  readonly inMemory: boolean;
}

const FS_TYPES: Record<number, string> = {
  0xef53: "ext4",
  0x01021994: "tmpfs",
  0x858458f6: "ramfs",
  0x58465342: "xfs",
  0x9123683e: "btrfs",
  0x6969: "nfs",
  0x0bd00bd0: "lustre",
  0x47504653: "gpfs",
  0x2fc12fc1: "zfs",
  0x794c7630: "overlayfs",
  0x65735546: "fuse",
  0xff534d42: "cifs",
  0x5346414f: "afs",
  0x73717368: "squashfs",
  0x01161970: "gfs2",
  0x19830326: "beegfs",
  0x00c36400: "cephfs",
  0x61756673: "aufs",
};

const statfsBuf = new BigInt64Array(15);

/** File-system type and space of the file system holding `path`. */
export function statfs(path: string): StatFs {
  if (libc().statfs(cString(path), statfsBuf) < 0) fail("statfs", path);
  const type = Number(BigInt.asUintN(32, statfsBuf[0]!));
  const bsize = Number(statfsBuf[1]);
  const name = FS_TYPES[type] ?? `0x${type.toString(16)}`;
  return {
    type,
    typeName: name,
    blockSize: bsize,
    availableBytes: Number(statfsBuf[4]) * bsize,
    inMemory: name === "tmpfs" || name === "ramfs",
  };
}

/** Alignment O_DIRECT needs on a file system, bytes, and where the numbers came from. */
export interface DirectAlignment {
  /** Alignment of buffer addresses in memory, bytes. */
  readonly memory: number;
  /** Alignment of file offsets and transfer lengths, bytes. */
  readonly offset: number;
  /** `statx` (STATX_DIOALIGN, Linux >= 6.1), `statfs` (the block size) or `default` (4096). */
  readonly source: "statx" | "statfs" | "default";
}

/** struct statx: 256 bytes; stx_mask at 0, stx_dio_mem_align at 152, stx_dio_offset_align at 156. */
const statxBuf = new Uint32Array(64);
const AT_FDCWD = -100;
const STATX_DIOALIGN = 0x2000;

/**
 * The alignment O_DIRECT transfers need for `path` (a file or directory): from `statx` with
 * STATX_DIOALIGN when the kernel and file system report it, else the file system's block size
 * (`statfs`), else 4096 bytes. A file system that reports 0 cannot do direct I/O on it.
 */
export function directAlignment(path: string): DirectAlignment {
  statxBuf.fill(0);
  if (libc().statx(AT_FDCWD, cString(path), 0, STATX_DIOALIGN, statxBuf) === 0) {
    if ((statxBuf[0]! & STATX_DIOALIGN) !== 0) {
      return { memory: statxBuf[38]!, offset: statxBuf[39]!, source: "statx" };
    }
  }
  try {
    const block = statfs(path).blockSize;
    if (block > 0) return { memory: block, offset: block, source: "statfs" };
  } catch {
    // fall through to the default
  }
  return { memory: 4096, offset: 4096, source: "default" };
}

/** Identity and state of a file from `statx` (no Deno permission check on the path). */
export interface FileStat {
  /** Device number as `st_dev` encodes it (`makedev(major, minor)`, as `Deno.FileInfo.dev`). */
  readonly dev: number;
  /** Inode number. */
  readonly ino: number;
  /** Size, bytes. */
  readonly size: number;
  /** Last modification time, nanoseconds since the epoch. */
  readonly mtimeNs: bigint;
  /** Change time (inode or data), nanoseconds since the epoch. */
  readonly ctimeNs: bigint;
  /** File type and permission bits (`st_mode`). */
  readonly mode: number;
}

const statBuf = new Uint32Array(64);
const statView = new DataView(statBuf.buffer);
/** STATX_TYPE | STATX_MODE | STATX_MTIME | STATX_CTIME | STATX_INO | STATX_SIZE. */
const STATX_BASIC = 0x1 | 0x2 | 0x40 | 0x80 | 0x100 | 0x200;
const AT_EMPTY_PATH = 0x1000;
const AT_SYMLINK_NOFOLLOW = 0x100;
const EMPTY = cString("");

function makedev(major: number, minor: number): number {
  const ma = BigInt(major);
  const mi = BigInt(minor);
  return Number(
    ((ma & 0xfffff000n) << 32n) | ((ma & 0xfffn) << 8n) | ((mi & 0xffffff00n) << 12n) |
      (mi & 0xffn),
  );
}

function readStat(): FileStat {
  const time = (at: number) =>
    statView.getBigInt64(at, true) * 1_000_000_000n + BigInt(statView.getUint32(at + 8, true));
  return {
    dev: makedev(statBuf[34]!, statBuf[35]!),
    ino: Number(statView.getBigUint64(32, true)),
    size: Number(statView.getBigUint64(40, true)),
    mtimeNs: time(112),
    ctimeNs: time(96),
    mode: statView.getUint16(28, true),
  };
}

/**
 * `statx` of `path` (following symbolic links unless `follow` is false), or of the open file
 * `fd` when `path` is a number. Through libc, so Deno's refusal of paths under /dev does not
 * apply. SysError on failure (ENOENT for a missing path).
 */
export function fileStat(path: string | number, follow = true): FileStat {
  const rc = typeof path === "number"
    ? libc().statx(path, EMPTY, AT_EMPTY_PATH, STATX_BASIC, statBuf)
    : libc().statx(AT_FDCWD, cString(path), follow ? 0 : AT_SYMLINK_NOFOLLOW, STATX_BASIC, statBuf);
  if (rc !== 0) fail("statx", typeof path === "number" ? `descriptor ${path}` : path);
  return readStat();
}

const realBuf = new Uint8Array(4096);

/**
 * The canonical absolute path of the existing `path` (`realpath`: every symbolic link, `.` and
 * `..` resolved), through libc so that Deno's refusal of /dev does not apply. SysError on failure.
 */
export function realPath(path: string): string {
  if (libc().realpath(cString(path), realBuf) === null) fail("realpath", path);
  return new TextDecoder().decode(realBuf.subarray(0, realBuf.indexOf(0)));
}

/** errno values of an extended attribute that is absent or cannot be kept here. */
const NO_XATTR = new Set([61, 95, 1, 13]); // ENODATA, EOPNOTSUPP, EPERM, EACCES

/**
 * Reads the extended attribute `name` of the open file `fd` into `buf`: its length in bytes, or
 * undefined when the file has none or its file system keeps no such attributes. SysError on
 * other failures (ERANGE: `buf` too small).
 */
export function fgetxattr(
  fd: number,
  name: string,
  buf: Uint8Array,
  path = "",
): number | undefined {
  const n = Number(libc().fgetxattr(fd, cString(name), buf, BigInt(buf.length)));
  if (n >= 0) return n;
  const code = errno();
  if (NO_XATTR.has(code)) return undefined;
  fail("fgetxattr", path, code);
}

/**
 * Sets the extended attribute `name` of the open file `fd` to `value`: false when its file
 * system keeps no such attributes (or refuses them), SysError on other failures.
 */
export function fsetxattr(fd: number, name: string, value: Uint8Array, path = ""): boolean {
  if (libc().fsetxattr(fd, cString(name), value, BigInt(value.length), 0) === 0) return true;
  const code = errno();
  if (NO_XATTR.has(code)) return false;
  fail("fsetxattr", path, code);
}

/**
 * Fraction of the bytes [0, length) of an open file that are resident in the page cache
 * (`mmap` + `mincore`); 0 for an empty file.
 */
export function residentFraction(fd: number, length: number, path = ""): number {
  if (length <= 0) return 0;
  const page = pageSize();
  const pages = Math.ceil(length / page);
  const addr = libc().mmap(null, BigInt(length), 1, 1, fd, 0n);
  if (addr === null || Deno.UnsafePointer.value(addr) === 0xffffffffffffffffn) fail("mmap", path);
  try {
    const vec = new Uint8Array(pages);
    if (libc().mincore(addr, BigInt(length), vec) < 0) fail("mincore", path);
    let resident = 0;
    for (let i = 0; i < pages; i++) resident += vec[i]! & 1;
    if (observer !== undefined) observer.resident(fd, resident / pages);
    return resident / pages;
  } finally {
    libc().munmap(addr, BigInt(length));
  }
}

/** mmap protections and flags (x86-64 and aarch64 Linux). */
const MAP = { PROT_NONE: 0, PROT_READ: 1, SHARED: 1, PRIVATE: 2, FIXED: 0x10, ANONYMOUS: 0x20 };
const MAP_FAILED = 0xffffffffffffffffn;
/** Alignment of a {@link MapRegion}: 2 MiB, the size of a large folio mapped by one page table entry. */
const ALIGN = 1 << 21;

/**
 * A range of address space reserved once, into which windows of files are mapped in turn
 * (MAP_FIXED replaces the previous window in one call), with one `bytes` view over it for its
 * whole life: a view made per window would count its bytes as V8 external memory each time and
 * start garbage collections. Outside a window the range is inaccessible (a read there faults).
 */
export interface MapRegion {
  /** The whole range; only [0, length) of the current window holds file bytes. */
  readonly bytes: Uint8Array;
  /**
   * Maps `length` bytes (at most the region's size) of open file `fd` from byte `offset` (a
   * multiple of the page size) read only and shared at the region's start, advised
   * MADV_SEQUENTIAL so that pages missing from the page cache are read ahead in large
   * sequential reads. A file that shrinks under its mapping raises SIGBUS on a read of a lost
   * page: map only a file nobody can cut meanwhile (a read lease, {@link takeReadLease}).
   */
  map(fd: number, offset: number, length: number, path?: string): void;
  /**
   * Fraction (0..1) of the window's pages in [from, from + length) (bytes from the window's
   * start) that are in the page cache now (`mincore`, which costs a page-cache lookup per page;
   * no page is read).
   */
  resident(from: number, length: number): number;
  /** Drops the file's window (the range is reserved again, holding no file). */
  clear(): void;
  /** Returns the range to the system; the region must not be used after. */
  free(): void;
}

/** Reserves `length` bytes (a multiple of the page size) of address space as a {@link MapRegion}. */
export function mapRegion(length: number): MapRegion {
  const size = length;
  // Aligned to 2 MiB, as the kernel aligns a mapping of a whole file: a window from a file
  // offset that is a multiple of 2 MiB can then be mapped a large folio (2 MiB) per page fault.
  const flags = MAP.PRIVATE | MAP.ANONYMOUS;
  const base = libc().mmap(null, BigInt(size + ALIGN), MAP.PROT_NONE, flags, -1, 0n);
  if (base === null || Deno.UnsafePointer.value(base) === MAP_FAILED) fail("mmap", "");
  const skip = (ALIGN - Number(BigInt(Deno.UnsafePointer.value(base)) % BigInt(ALIGN))) % ALIGN;
  if (skip > 0) libc().munmap(base, BigInt(skip));
  libc().munmap(Deno.UnsafePointer.offset(base, skip + size), BigInt(ALIGN - skip));
  const addr = Deno.UnsafePointer.offset(base, skip);
  const bytes = new Uint8Array(Deno.UnsafePointerView.getArrayBuffer(addr!, size));
  /** Reserves [from, size) of the region again, dropping the file pages mapped there. */
  const reserve = (from: number) => {
    const at = Deno.UnsafePointer.offset(addr!, from);
    const p = libc().mmap(at, BigInt(size - from), MAP.PROT_NONE, flags | MAP.FIXED, -1, 0n);
    if (p === null || Deno.UnsafePointer.value(p) === MAP_FAILED) fail("mmap", "");
  };
  let held = 0; // bytes of the range that hold a file window (whole pages)
  return {
    bytes,
    map(fd, offset, length, path = "") {
      const n = BigInt(length);
      const flags = MAP.SHARED | MAP.FIXED;
      const p = libc().mmap(addr, n, MAP.PROT_READ, flags, fd, BigInt(offset));
      if (p === null || Deno.UnsafePointer.value(p) === MAP_FAILED) fail("mmap", path);
      libc().madvise(addr, n, 2); // MADV_SEQUENTIAL: a hint; its failure changes nothing
      const page = pageSize();
      const pages = Math.ceil(length / page) * page;
      // a shorter window than the last: its tail must not keep the last window's pages
      if (pages < held) reserve(pages);
      held = pages;
    },
    resident(from, length) {
      const page = pageSize();
      const first = Math.floor(from / page) * page;
      const end = Math.min(held, from + length);
      if (end <= first) return 0;
      const pages = Math.ceil((end - first) / page);
      const vec = new Uint8Array(pages);
      const at = Deno.UnsafePointer.offset(addr!, first);
      if (libc().mincore(at, BigInt(end - first), vec) < 0) fail("mincore", "");
      let resident = 0;
      for (let i = 0; i < pages; i++) resident += vec[i]! & 1;
      return resident / pages;
    },
    clear() {
      if (held > 0) reserve(0);
      held = 0;
    },
    free() {
      if (libc().munmap(addr, BigInt(size)) < 0) fail("munmap", "");
    },
  };
}

/** cachestat's system call number (x86-64 and aarch64 Linux, 6.5 and later). */
const SYS_CACHESTAT = 451n;
/** struct cachestat_range (offset, length) and struct cachestat (nr_cache first). */
const cachestatRange = new BigUint64Array(2);
const cachestatOut = new BigUint64Array(5);

/**
 * Pages of bytes [offset, offset + length) of open file `fd` that are in the page cache
 * (cachestat: no mapping, no read); undefined when the kernel has no cachestat (before 6.5).
 */
export function cachedPages(fd: number, offset: number, length: number): number | undefined {
  cachestatRange[0] = BigInt(offset);
  cachestatRange[1] = BigInt(length);
  const rc = libc().syscall(SYS_CACHESTAT, BigInt(fd), cachestatRange, cachestatOut, 0n);
  return rc < 0 ? undefined : Number(cachestatOut[0]);
}

/** fcntl commands of leases, and the lease types. */
const F = { SETSIG: 10, SETLEASE: 1024, GETLEASE: 1025, RDLCK: 0, UNLCK: 2 } as const;
/** The signal a lease break sends (instead of SIGIO, which would end the process): SIGURG, ignored. */
const SIGURG = 23;

/**
 * Takes a read lease on `fd` (opened read only): while it is held, another process that opens
 * the file for writing or truncates it waits until the lease is released (or for
 * /proc/sys/fs/lease-break-time seconds, 45 by default), so a mapping of the file keeps its
 * pages (no SIGBUS). The break is signalled with SIGURG, which is ignored. False when the kernel
 * refuses: the file is open for writing somewhere (this process included), the caller neither
 * owns it nor has CAP_LEASE, or its file system has no leases.
 */
export function takeReadLease(fd: number): boolean {
  if (libc().fcntl(fd, F.SETSIG, SIGURG) < 0) return false;
  return libc().fcntl(fd, F.SETLEASE, F.RDLCK) === 0;
}

/** True while the read lease on `fd` is held and no other process is waiting to break it. */
export function leaseIntact(fd: number): boolean {
  return libc().fcntl(fd, F.GETLEASE, 0) === F.RDLCK;
}

/** Releases the lease on `fd` (a process waiting to open the file for writing goes on). */
export function releaseLease(fd: number): void {
  libc().fcntl(fd, F.SETLEASE, F.UNLCK); // fails only when there is no lease: nothing to do
}

/** Reports to the I/O observer a read of `bytes` at `offset` of `fd` made through a mapping. */
export function noteMappedRead(fd: number, offset: number, bytes: number): void {
  if (observer !== undefined) observer.read(fd, offset, bytes);
}

/** True when the first `length` bytes of `a` and `b` are equal (`memcmp`, native speed). */
export function bytesEqual(a: Uint8Array, b: Uint8Array, length = a.length): boolean {
  if (a.length < length || b.length < length) return false;
  if (length === 0) return true;
  return libc().memcmp(a, b, BigInt(length)) === 0;
}

/**
 * Loads a shared library with `RTLD_NOW | RTLD_GLOBAL | RTLD_NODELETE` so later libraries can use
 * its symbols and it stays mapped until the process exits.
 */
export function dlopenGlobal(path: string): void {
  const h = libc().dlopen(cString(path), 2 | 0x100 | 0x1000);
  if (h === null) {
    const p = libc().dlerror();
    const why = p === null ? "unknown error" : Deno.UnsafePointerView.getCString(p);
    throw new SysError("dlopen", 0, "EDLOPEN", path, why);
  }
}

/**
 * Loads a shared library with `RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE` and never closes it, so it
 * stays mapped until the process exits (HDF4's libdf runs exit handlers that call into libmfhdf,
 * which would crash if Deno unloaded libmfhdf first).
 */
export function dlopenPinned(path: string): void {
  const h = libc().dlopen(cString(path), 2 | 0x1000);
  if (h === null) {
    const p = libc().dlerror();
    const why = p === null ? "unknown error" : Deno.UnsafePointerView.getCString(p);
    throw new SysError("dlopen", 0, "EDLOPEN", path, why);
  }
}

const rlimitBuf = new BigUint64Array(2);

/**
 * Sets this process's soft and hard limit on `resource` (see {@link RLIMIT}): seconds for CPU,
 * bytes for AS; `Infinity` is RLIM_INFINITY. The hard limit cannot be raised again.
 */
export function setrlimit(resource: number, soft: number, hard: number): void {
  const toRlim = (v: number) => v === Infinity ? 0xffffffffffffffffn : BigInt(Math.floor(v));
  rlimitBuf[0] = toRlim(soft);
  rlimitBuf[1] = toRlim(hard);
  if (libc().setrlimit(resource, rlimitBuf) < 0) fail("setrlimit", "");
}

/** This process's `[soft, hard]` limit on `resource` (see {@link RLIMIT}); Infinity when unlimited. */
export function getrlimit(resource: number): [number, number] {
  if (libc().getrlimit(resource, rlimitBuf) < 0) fail("getrlimit", "");
  const fromRlim = (v: bigint) => v === 0xffffffffffffffffn ? Infinity : Number(v);
  return [fromRlim(rlimitBuf[0]!), fromRlim(rlimitBuf[1]!)];
}

/**
 * The process id at the other end of the Unix socket `fd` (`SO_PEERCRED`: for a socketpair, the
 * process that made it), or undefined when `fd` is not an open socket.
 */
export function socketPeerPid(fd: number): number | undefined {
  const cred = new Int32Array(3); // struct ucred: pid, uid, gid
  const len = new Uint32Array([cred.byteLength]);
  const SOL_SOCKET = 1;
  const SO_PEERCRED = 17;
  const rc = libc().getsockopt(fd, SOL_SOCKET, SO_PEERCRED, cred, len);
  return rc === 0 ? cred[0]! : undefined;
}

const sleepBuf = new BigInt64Array(2);

/** Sleeps this thread for `ns` nanoseconds (`nanosleep`; an interrupted sleep just ends early). */
export function sleepNs(ns: number): void {
  sleepBuf[0] = BigInt(Math.floor(ns / 1e9));
  sleepBuf[1] = BigInt(Math.floor(ns % 1e9));
  libc().nanosleep(sleepBuf, null);
}

// ---- Reads that leave no pages behind: preadv2 with RWF_DONTCACHE (Linux 6.14) ---------------

/** preadv2's flag: drop the pages this read brings into the page cache once copied out. */
const RWF_DONTCACHE = 0x80;
/** errno of a flag the kernel or the file's file system does not support. */
const EOPNOTSUPP = 95;
const EINVAL = 22;
/** One struct iovec (base address, length), reused. */
const iovec = new BigUint64Array(2);

/**
 * The address of `buf`'s first byte, for {@link preadUncached} and {@link preadIfCached} to be
 * given with a buffer they read into again and again: the lookup (Deno.UnsafePointer.of) costs
 * as much as a cached 8-byte read when hot, and many times more after the CPU caches were
 * flushed, as after a read through a large file (bench/open_large_bench.ts). Only for a buffer that does not move: over 64 bytes (V8 keeps
 * smaller typed arrays in its heap) and not resizable.
 */
export function addressOfBuffer(buf: Uint8Array): bigint {
  return BigInt(addressOf(buf));
}

/**
 * Reads up to `buf.length` bytes at byte `offset` of `fd` as {@link pread} does, except that the
 * pages this read brings into the page cache are dropped once copied (pages that were cached
 * stay): preadv2 with RWF_DONTCACHE. So a small read far into a cold file leaves no cached page
 * in the way of a later sequential read's readahead. Returns the count (0 at end of file), or
 * undefined, having read nothing, when the kernel (before 6.14) or the file's file system cannot
 * read so. `address`: `buf`'s {@link addressOfBuffer}, when the caller keeps it (else looked up).
 */
export function preadUncached(
  fd: number,
  buf: Uint8Array,
  offset: number,
  path = "",
  address?: bigint,
): number | undefined {
  // mutant: uncached-dontcache
  return preadv2Once(fd, buf, offset, path, address, RWF_DONTCACHE);
}

/**
 * One preadv2 of `buf` at byte `offset` of `fd` with `flags`: the count, or undefined where the
 * kernel or the file system cannot read so (EOPNOTSUPP, EINVAL) or, with RWF_NOWAIT, the read
 * would wait for the device (EAGAIN); any other error fails as pread's. `address`: `buf`'s
 * {@link addressOfBuffer} (looked up when not given).
 */
function preadv2Once(
  fd: number,
  buf: Uint8Array,
  offset: number,
  path: string,
  address: bigint | undefined,
  flags: number,
): number | undefined {
  if (buf.length === 0) return 0;
  iovec[0] = address ?? addressOfBuffer(buf);
  iovec[1] = BigInt(buf.length);
  const n = Number(libc().preadv2(fd, iovec, 1, BigInt(offset), flags));
  if (n < 0) {
    const code = errno();
    if (code === EOPNOTSUPP || code === EINVAL) return undefined;
    if (code === EAGAIN && (flags & RWF_NOWAIT) !== 0) return undefined;
    fail("preadv2", path, code);
  }
  if (observer !== undefined) observer.read(fd, offset, n);
  return n;
}

/** preadv2's flag: read only what the page cache holds, never wait for the device (EAGAIN). */
const RWF_NOWAIT = 0x08;
/** errno when a RWF_NOWAIT read would have to wait for the device. */
const EAGAIN = 11;

/**
 * Reads up to `buf.length` bytes at byte `offset` of `fd` as {@link pread} does when they are in
 * the page cache; else reads nothing and returns undefined (preadv2 with RWF_NOWAIT: a read and a
 * page-cache probe in one call). Also undefined where the kernel or the file system cannot read
 * so. A short count: only the first pages were cached. A failed probe starts the kernel's
 * readahead at `offset`, as a pread there would. `address`: `buf`'s {@link addressOfBuffer}.
 */
export function preadIfCached(
  fd: number,
  buf: Uint8Array,
  offset: number,
  path = "",
  address?: bigint,
): number | undefined {
  return preadv2Once(fd, buf, offset, path, address, RWF_NOWAIT);
}

/** Bytes of a transparent huge page (x86-64 and aarch64 with 4 KiB pages). */
export const HUGE_PAGE = 2 << 20;

/** The kernel's transparent huge page mode: `always`, `madvise` or `never`; "" without THP. */
export function transparentHugePages(): string {
  return /\[(\w+)\]/.exec(readProc("/sys/kernel/mm/transparent_hugepage/enabled"))?.[1] ?? "";
}

/**
 * A new zeroed Uint8Array of `bytes` bytes that starts on a {@link HUGE_PAGE} boundary, its whole
 * 2 MiB pages advised to be transparent huge pages ({@link adviseHugePages}) before anything
 * touches them: its first touch faults in 2 MiB at a time (instead of a fault a 4 KiB page,
 * 7,200 for a 28 MiB buffer, each dear on a shadow-paged VM). Takes `bytes` rounded up to 2 MiB, plus
 * 2 MiB of address space.
 */
export function hugePageBytes(bytes: number): Uint8Array {
  const whole = Math.ceil(bytes / HUGE_PAGE) * HUGE_PAGE;
  const raw = new Uint8Array(whole + HUGE_PAGE);
  const skip = (HUGE_PAGE - (addressOf(raw) % HUGE_PAGE)) % HUGE_PAGE;
  // mutant: direct-huge-pages-advise
  adviseHugePages(raw.subarray(skip, skip + whole));
  return raw.subarray(skip, skip + bytes);
}

/**
 * Asks that `buf`, whose address and length are multiples of {@link HUGE_PAGE} and whose bytes
 * nobody has written (all zeros), be backed by transparent huge pages (MADV_HUGEPAGE), and drops
 * the 4 KiB pages it may already have (MADV_DONTNEED: they read back as zeros), so its first
 * touch faults in 2 MiB pages. A hint: false when the kernel refused it (the buffer is unchanged).
 */
export function adviseHugePages(buf: Uint8Array): boolean {
  const address = addressOf(buf);
  if (address % HUGE_PAGE !== 0 || buf.length % HUGE_PAGE !== 0) {
    throw new RangeError("adviseHugePages: the buffer must be whole 2 MiB pages");
  }
  const ptr = Deno.UnsafePointer.create(BigInt(address));
  const length = BigInt(buf.length);
  if (libc().madvise(ptr, length, 14) !== 0) return false; // MADV_HUGEPAGE
  return libc().madvise(ptr, length, 4) === 0; // MADV_DONTNEED
}

/**
 * A /proc (or /sys) file's text, read through libc: Deno refuses /proc/self, /proc/meminfo and
 * /proc/cpuinfo without --allow-all, and their stat size is 0, so they are read until end of
 * file. "" when the file cannot be read.
 */
export function readProc(path: string): string {
  try {
    const fd = open(path, O.RDONLY);
    try {
      const decoder = new TextDecoder();
      const buf = new Uint8Array(1 << 16);
      let text = "";
      for (let at = 0;;) {
        const n = pread(fd, buf, at, path);
        text += decoder.decode(buf.subarray(0, n), { stream: n > 0 });
        at += n;
        if (n === 0) return text;
      }
    } finally {
      close(fd, path);
    }
  } catch {
    return "";
  }
}
