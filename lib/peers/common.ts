/**
 * Shared plumbing of the library peers (HDF5, netCDF, HDF4): finding and loading a shared
 * library by soname or environment variable, path checks before a library touches a file, the
 * fsync after the library closed it, and dtype helpers. No library is loaded at import time.
 * @module
 */
import { FormatError, IoError, PeerRankFailed, UsageError } from "../core/errors.ts";
import { parseSize } from "../core/sizes.ts";
import { type DType, DTYPE_SIZE, type TypedArray } from "../framings/types.ts";
import { close, dlopenPinned, fsync, O, open, statfs } from "../sys/libc.ts";

/**
 * A loaded library's symbols (never its handle: a peer library is never closed), or why none
 * could be loaded.
 */
export type Loaded<S extends Deno.ForeignLibraryInterface> =
  | {
    readonly ok: true;
    readonly symbols: Deno.StaticForeignLibraryInterface<S>;
    readonly path: string;
  }
  | { readonly ok: false; readonly reason: string };

/**
 * Every library handle loaded by `loadLibrary`, kept for the life of the process. The libraries
 * are also opened with `RTLD_NODELETE`, so neither a dropped handle nor Deno's own unloading at
 * shutdown can unmap code whose exit handlers (HDF5's `H5_term_library`, netCDF's) still run.
 */
const PINNED: Deno.DynamicLibrary<Deno.ForeignLibraryInterface>[] = [];

/**
 * Loads the library named by the environment variable `envVar` when it is set (an explicit choice,
 * as HPC sites that load libraries from modules need), else the first of `sonames` that opens
 * (Debian's names first, so a Debian system works without settings).
 * `label` names the library in the one-line reason returned when nothing loads.
 */
export function loadLibrary<S extends Deno.ForeignLibraryInterface>(
  label: string,
  sonames: readonly string[],
  envVar: string,
  symbols: S,
): Loaded<S> {
  const tried: string[] = [];
  const problems: string[] = [];
  const fromEnv = envValue(envVar);
  const candidates = fromEnv ? [fromEnv, ...sonames] : [...sonames];
  for (const path of candidates) {
    tried.push(path);
    try {
      dlopenPinned(path);
      const lib = Deno.dlopen(path, symbols);
      PINNED.push(lib as unknown as Deno.DynamicLibrary<Deno.ForeignLibraryInterface>);
      return { ok: true, symbols: lib.symbols, path };
    } catch (e) {
      const why = e instanceof Error ? e.message : String(e);
      if (path === fromEnv) {
        throw new UsageError(`${envVar}=${fromEnv} cannot be loaded: ${dlopenProblem(path, why)}`);
      }
      // A library that exists but lacks a symbol or a dependency is worth reporting; "not
      // found" is the norm.
      const problem = dlopenProblem(path, why);
      if (problem !== "not found") problems.push(`${path}: ${problem}`);
    }
  }
  if (problems.length > 0) {
    return { ok: false, reason: `${label} library cannot be loaded: ${problems.join("; ")}` };
  }
  return {
    ok: false,
    reason: `${label} library not found (tried ${tried.join(", ")}; set ${envVar} to its path)`,
  };
}

/**
 * What a failed dlopen of `path` means: "not found" when the library itself is missing, else
 * the missing dependency by name (`needs libhdf5_serial.so.103, which is not installed`) or the
 * loader's message.
 */
export function dlopenProblem(path: string, why: string): string {
  const m = /([^\s:]+): cannot open shared object file/.exec(why);
  if (m) {
    const base = path.slice(path.lastIndexOf("/") + 1);
    return m[1] === path || m[1] === base || why.startsWith(`${path}:`)
      ? "not found"
      : `needs ${m[1]}, which is not installed`;
  }
  if (/No such file/i.test(why)) return "not found";
  return why.split("\n")[0]!;
}

/** A library (or program) a peer loaded, for the run's metadata. */
export interface LoadedLibrary {
  /** What it is: `HDF5`, `netCDF-C`, `HDF4`, `python3-gsd`. */
  readonly name: string;
  /** The path or soname it was loaded from. */
  readonly path: string;
  /** Its version as the library reports it. */
  readonly version: string;
}

const LOADED: LoadedLibrary[] = [];

/** Notes that a peer library was loaded (called once per library by the peer that loaded it). */
export function recordLoaded(name: string, path: string, version: string): void {
  if (!LOADED.some((l) => l.name === name && l.path === path)) {
    LOADED.push({ name, path, version });
  }
}

/** Every library a peer has loaded so far in this process. */
export function loadedLibraries(): readonly LoadedLibrary[] {
  return LOADED;
}

/** Value of an environment variable, or undefined when unset, empty, or not permitted. */
export function envValue(name: string): string | undefined {
  try {
    const v = Deno.env.get(name);
    return v === undefined || v === "" ? undefined : v;
  } catch {
    return undefined;
  }
}

/**
 * The hidden test hook `SCIOBENCH_TEST_FAIL_RANK=R` with `SCIOBENCH_TEST_FAIL_PHASE=phase`: true
 * on rank R, whose write then fails in the library as each backend's hook says.
 */
export function failsInTest(phase: string, rank: number): boolean {
  return envValue("SCIOBENCH_TEST_FAIL_PHASE") === phase &&
    Number(envValue("SCIOBENCH_TEST_FAIL_RANK")) === rank;
}

/** True when something exists at `path` (a file, a directory, a dangling link). */
export function pathExists(path: string): boolean {
  try {
    Deno.lstatSync(path);
    return true;
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) return false;
    throw e;
  }
}

/**
 * Checks the create mode before a library touches `path`: UsageError for "append" (the library
 * peers cannot append), IoError when "new" and `path` already exists.
 */
export function refuseExisting(backend: string, path: string, create: string): void {
  if (create === "append") {
    throw new UsageError(`peer '${backend}' cannot append to an existing file`);
  }
  if (create === "new" && pathExists(path)) {
    throw new IoError(
      `${backend}: ${path} already exists; refusing to overwrite it (use --force to replace it)`,
    );
  }
}

/** fsyncs a file that a library has already closed (reopened read-only through libc). */
export function fsyncPath(path: string): void {
  const fd = open(path, O.RDONLY);
  try {
    fsync(fd, path);
  } finally {
    close(fd, path);
  }
}

/** Removes a partial file after an aborted write; never throws. */
export function removeQuietly(path: string): void {
  try {
    Deno.removeSync(path);
  } catch {
    // already gone or not removable: nothing more to do on an abort path
  }
}

/** What one rank of a shared-file write knows once the ranks' agreement found a failure. */
export interface SharedFailure {
  /** The file every rank writes. */
  readonly path: string;
  /** This rank's MPI rank: rank 0 removes the file. */
  readonly rank: number;
  /** This rank's own value in the agreement: negative when this rank failed. */
  readonly value: number;
  /** The smallest value of all ranks: negative when some rank failed. */
  readonly min: number;
  /** This rank's own failure, when it caught one. */
  readonly failure: unknown;
  /** Frames this rank wrote (said when it failed without a failure of its own). */
  readonly fed: number;
  /** Marks the sink closed and closes this rank's handle of the file; never throws. */
  readonly release: () => void;
}

/**
 * Ends a shared file every rank writes through MPI once the ranks' agreement (a collective min
 * of 0 or -1) found that not all did well: this rank releases its handle, rank 0 removes the
 * file, and the error this rank throws is returned: its own failure (an IoError naming the frames
 * it wrote when it has none), else PeerRankFailed when another rank failed, else undefined (the
 * ranks disagreed without failing: the caller says how).
 */
export function abandonSharedFile(s: SharedFailure): unknown {
  s.release();
  if (s.rank === 0) removeQuietly(s.path);
  if (s.value < 0) {
    return s.failure ?? new IoError(`${s.path}: this rank wrote ${s.fed} frames, not its share`);
  }
  if (s.min < 0) {
    return new PeerRankFailed(`${s.path}: another rank failed while writing the shared file`);
  }
  return undefined;
}

/** What {@link agreeOnSharedFile} needs of a shared file's MPI handles. */
export interface RankAgreement {
  /** This rank among the ranks that opened the file. */
  readonly rank: number;
  /** The smallest and largest `value` of all ranks (collective). */
  range(value: number): [min: number, max: number];
}

/**
 * Every rank of a shared file says how it did (collective): `value` 0, or -1 when this rank
 * failed. Returns when all did well; else this rank releases the file, rank 0 removes it (see
 * {@link abandonSharedFile}) and this rank throws its own failure or PeerRankFailed.
 */
export function agreeOnSharedFile(
  h: RankAgreement,
  value: number,
  s: Omit<SharedFailure, "rank" | "value" | "min">,
): void {
  const [min] = h.range(value);
  if (min >= 0) return;
  throw abandonSharedFile({ ...s, rank: h.rank, value, min });
}

import { bytesOf, elementCount } from "../framings/kit.ts";
import type { FrameSink, FsyncPolicy } from "../backends/backend.ts";
import type { Frame } from "../framings/types.ts";
export { bytesOf, elementCount };

/** Environment variable holding the memory limit for library reads (bytes, or 512MiB, 8GiB). */
export const LIBRARY_MEMORY_ENV = "SCIOBENCH_LIBRARY_MEMORY";

/** Default memory limit for one library read of a file sciobench did not write: 4 GiB. */
export const DEFAULT_LIBRARY_MEMORY = 4 * 2 ** 30;

/**
 * The memory limit for library reads in bytes: `SCIOBENCH_LIBRARY_MEMORY` (a size as every size
 * option reads it, lib/core/sizes.ts: `8G`, `8GiB`, bytes) or 4 GiB. UsageError for a malformed value.
 */
export function libraryMemoryLimit(): number {
  const text = envValue(LIBRARY_MEMORY_ENV);
  if (text === undefined) return DEFAULT_LIBRARY_MEMORY;
  const bytes = parseSize(text, LIBRARY_MEMORY_ENV);
  if (bytes < 2 ** 20) {
    throw new UsageError(
      `bad ${LIBRARY_MEMORY_ENV} '${text}': expected a size of at least 1MiB such as 8GiB`,
    );
  }
  return bytes;
}

/**
 * A frame buffer of `bytes` bytes for dataset `name`, after checking the size a library reported:
 * FormatError (one line, naming the limit and how to raise it) when it is not a whole number of
 * bytes or exceeds the memory limit, so a forged dimension never reaches the allocator.
 */
export function allocFrameBuffer(
  backend: string,
  path: string,
  name: string,
  bytes: number,
): Uint8Array<ArrayBuffer> {
  if (!Number.isSafeInteger(bytes) || bytes < 0) {
    throw new FormatError(
      backend,
      path,
      -1,
      `'${name}' reports an impossible frame size (${bytes} bytes)`,
    );
  }
  const limit = libraryMemoryLimit();
  if (bytes > limit) {
    throw new FormatError(
      backend,
      path,
      -1,
      `one frame of '${name}' needs ${bytes} bytes, more than the memory limit of ${limit} ` +
        `bytes (raise it with ${LIBRARY_MEMORY_ENV}=SIZE, e.g. 16GiB)`,
    );
  }
  return allocChunk(bytes);
}

/**
 * Checks a frame count a library reported against the file's size: FormatError when there are
 * more frames than bytes in the file (a forged extent, or a sparse dataset whose frames were
 * never written), before anything iterates over them.
 */
export function checkFrameCount(backend: string, path: string, frames: number): void {
  let size = 0;
  try {
    size = Deno.statSync(path).size;
  } catch {
    return; // the library has the file open; a vanished path is reported by the next read
  }
  if (!Number.isSafeInteger(frames) || frames < 0 || frames > size) {
    throw new FormatError(
      backend,
      path,
      -1,
      `the library reports ${frames} frames in a file of ${size} bytes; the extent is forged ` +
        `or the frames were never written (sparse datasets are not read)`,
    );
  }
}

/** A chunk buffer for `bytes` bytes, 8-byte aligned so every element type fits. */
export function allocChunk(bytes: number): Uint8Array<ArrayBuffer> {
  return new Uint8Array(new ArrayBuffer(Math.max(8, Math.ceil(bytes / 8) * 8)), 0, bytes);
}

/** Free bytes below which a file system counts as full when a library call on it fails. */
export const FULL_DISK_BYTES = 1 << 20;

/** What libraries say on a full disk or quota (HDF5's `errno = 28`, strerror's texts). */
const NO_SPACE_TEXT =
  /errno = (28|122)\b|No space left on device|Disk quota exceeded|ENOSPC|EDQUOT/i;

/**
 * "no space left on the device (N KiB free on DIR); ..." when the file system that holds `path`
 * has less than `marginBytes` free (Infinity: the failure already said the disk is full), else
 * undefined. The one wording of a full disk, for library failures in-process and in a child.
 */
export function diskFullNote(path: string, marginBytes: number): string | undefined {
  const dir = path.includes("/") ? path.slice(0, path.lastIndexOf("/")) || "/" : ".";
  let free = Infinity;
  try {
    free = statfs(dir).availableBytes;
  } catch {
    // the directory is gone or unreadable: only a failure that said so counts as a full disk
  }
  if (!(free < marginBytes) && marginBytes !== Infinity) return undefined;
  const left = Number.isFinite(free) ? ` (${Math.floor(free / 1024)} KiB free on ${dir})` : "";
  return `no space left on the device${left}; free some space or write elsewhere`;
}

/**
 * The IoError (exit 1, one line) for library call `call` on `path` that failed with `detail`
 * (the library's own text, such as `nc_strerror`'s or HDF5's error stack). When the disk is full
 * (the text says so, or the file system of `path` has less than {@link FULL_DISK_BYTES} free:
 * libraries report a full disk as anything, `Permission denied (status 13)` among them) the line
 * says that instead of the library's text; otherwise the text, with HDF5's buffer addresses and
 * times left out and at most 300 characters.
 */
export function libraryFailure(
  backend: string,
  path: string,
  call: string,
  detail: string,
): IoError {
  const full = diskFullNote(path, NO_SPACE_TEXT.test(detail) ? Infinity : FULL_DISK_BYTES);
  if (full !== undefined) return new IoError(`${backend}: ${path}: ${call} failed: ${full}`);
  const text = oneLineText(detail)
    .replace(
      /,?\s*\b(buf|time|file descriptor|total write size|bytes this sub-write|bytes actually written) = [^,)]*/g,
      "",
    )
    .replace(/\b0x[0-9a-f]{6,}\b/gi, "0x...");
  return new IoError(
    `${backend}: ${path}: ${call} failed: ${text.length > 300 ? `${text.slice(0, 297)}...` : text}`,
  );
}

/** A library's message on one line: line breaks and runs of blanks become "; " and " ". */
export function oneLineText(text: string): string {
  return text.trim().replace(/\s*[\r\n]+\s*/g, "; ").replace(/[ \t]+/g, " ");
}

/** Reads a NUL-terminated C string from a pointer; "" for NULL. */
export function cStringAt(p: Deno.PointerValue): string {
  return p === null ? "" : Deno.UnsafePointerView.getCString(p);
}

/** Decodes a NUL-terminated string held in a byte buffer (up to the first NUL). */
export function decodeCBuffer(buf: Uint8Array): string {
  const end = buf.indexOf(0);
  return new TextDecoder().decode(end < 0 ? buf : buf.subarray(0, end));
}

/** Validates a frame's chunk list against the first frame's (same names, dtypes, shapes). */
export function checkSameLayout(
  backend: string,
  path: string,
  frameIndex: number,
  expected: readonly { name: string; dtype: DType; shape: readonly number[] }[],
  chunks: readonly { name: string; dtype: DType; shape: readonly number[] }[],
): void {
  const same = chunks.length === expected.length &&
    chunks.every((c, i) => {
      const e = expected[i]!;
      return c.name === e.name && c.dtype === e.dtype && c.shape.length === e.shape.length &&
        c.shape.every((d, k) => d === e.shape[k]);
    });
  if (!same) {
    const show = (l: typeof chunks) =>
      l.map((c) => `${c.name}:${c.dtype}[${c.shape.join("x")}]`).join(", ");
    throw new IoError(
      `${backend}: ${path}: frame ${frameIndex} has chunks (${show(chunks)}) but this file ` +
        `stores (${show(expected)}) in every frame`,
    );
  }
}

/**
 * Throws IoError unless every chunk's data holds exactly product(shape) elements of its dtype:
 * the C libraries read that many bytes from the pointer, so a short array must never reach them.
 */
export function checkChunkBytes(
  backend: string,
  path: string,
  frameIndex: number,
  chunks: readonly { name: string; dtype: DType; shape: readonly number[]; data: TypedArray }[],
): void {
  for (const c of chunks) {
    const want = elementCount(c.shape) * DTYPE_SIZE[c.dtype];
    if (c.data.byteLength !== want) {
      throw new IoError(
        `${backend}: ${path}: frame ${frameIndex} chunk '${c.name}' has ${c.data.byteLength} bytes; ` +
          `${c.dtype}[${c.shape.join("x")}] needs ${want}`,
      );
    }
  }
}

/**
 * The lifecycle every library peer's writer shares: `close` once (the library completes and
 * closes the file, then the file is fsynced when asked), `abort` once (the library's handle is
 * released without completing, then the partial file is removed), and no write after either.
 */
export abstract class PeerSink implements FrameSink {
  /** Path of the file. */
  readonly path: string;
  /** Backend name, for messages. */
  protected readonly backend: string;
  /** fsync before `close` returns (part of the timed write phase). */
  protected readonly fsync: boolean;
  #done = false;

  /** `fsync` end (the default) or none; each is refused (the library holds frames until close). */
  constructor(backend: string, path: string, fsync: FsyncPolicy = "end") {
    if (fsync === "each") {
      throw new UsageError(
        `${backend} cannot honour --fsync each (the library writes the file until it is closed; ` +
          "sciobench can fsync it only then): use --fsync end or --fsync none",
      );
    }
    this.backend = backend;
    this.path = path;
    this.fsync = fsync === "end";
  }

  /** Appends one frame (call {@link checkOpen} first). */
  abstract writeFrame(frame: Frame): void;

  /** Completes and closes the file through the library (flushing when `fsync`); throws on failure. */
  protected abstract closeFile(): void;

  /** Releases the library's handle after a failure, without completing the file; never throws. */
  protected abstract releaseFile(): void;

  /** IoError when the sink is already closed or aborted. */
  protected checkOpen(): void {
    if (this.#done) throw new IoError(`${this.backend}: ${this.path}: write after close`);
  }

  close(): void {
    if (this.#done) return;
    this.#done = true;
    this.closeFile();
    if (this.fsync) fsyncPath(this.path);
  }

  abort(): void {
    if (!this.#done) {
      this.#done = true;
      this.releaseFile();
    }
    removeQuietly(this.path);
  }
}
