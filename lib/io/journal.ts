/**
 * The undo journal of an append: a file `.NAME.sciobench-journal` beside NAME holding NAME's size
 * before the append and the original bytes of every 4 KiB page the append changes in place. It
 * is created and fsynced (with its directory) before the first byte of NAME changes, each page
 * is saved and fsynced before it is overwritten, and it is removed after the append's final
 * fsync. Rolling back (on an error, a signal, or by the next command after a kill or power cut)
 * cuts NAME to its old size and writes the saved pages back. Records carry CRC-32s, so a record
 * torn by a crash is ignored (its page was not yet overwritten).
 *
 * The journal lies beside the file NAME resolves to (through symbolic links), so every spelling
 * of one file finds it. It is applied only to the file it was made for in the state the append
 * left: the same device and inode, no smaller than before the append, modified no earlier than
 * when the journal began, and with no append committed since. Every committed append counts up
 * the file's generation, an extended attribute (`user.sciobench.generation`, a u64) of the inode,
 * so a commit through any name of the file (another hard link too) is seen; where the file
 * system keeps no such attributes the generation stays 0. A journal that does not match is
 * removed (one line), never applied.
 *
 * Layout (little-endian): header `SCIOJNL2`, u64 size, u64 inode, u64 device, i64 modification
 * time in nanoseconds since the epoch, u64 generation, u32 CRC-32 of the preceding 48 bytes, u32
 * zero; then records: u64 offset, u32 length, u32 CRC-32 of the offset, length and data, data.
 * A `SCIOJNL1` header (of earlier versions) has no modification time nor generation and ends
 * after 40 bytes.
 * @module
 */
import { crc32 } from "node:zlib";
import { IoError } from "../core/errors.ts";
import { syncDirectoryOf } from "./atomic.ts";
import { FileHandle } from "./file.ts";
import { tryLockFile } from "./lock.ts";
import { warn } from "../core/diagnostics.ts";
import * as libc from "../sys/libc.ts";

/** Granularity of the saved original bytes, bytes. */
const PAGE = 4096;
const MAGIC = new TextEncoder().encode("SCIOJNL2");
/** The header of earlier versions, without the modification time. */
const MAGIC_V1 = new TextEncoder().encode("SCIOJNL1");
const HEADER_BYTES = 56;
const HEADER_V1_BYTES = 40;
const RECORD_HEAD = 16;

/**
 * The journal path of `path`: `.NAME.sciobench-journal` beside the file `path` resolves to
 * (through symbolic links, so every spelling of one file finds the same journal); beside `path`
 * itself when it does not exist.
 */
export function journalPath(path: string): string {
  const real = resolvedPath(path);
  const slash = real.lastIndexOf("/");
  return `${real.slice(0, slash + 1)}.${real.slice(slash + 1)}.sciobench-journal`;
}

/** `path` with its symbolic links resolved (its directory's, when it does not exist). */
function resolvedPath(path: string): string {
  try {
    return libc.realPath(path);
  } catch {
    const slash = path.lastIndexOf("/");
    try {
      return `${libc.realPath(slash < 0 ? "." : path.slice(0, slash) || "/")}/${
        path.slice(slash + 1)
      }`;
    } catch {
      return path;
    }
  }
}

/** Extended attribute holding a file's count of committed appends (u64, little-endian). */
const GENERATION_XATTR = "user.sciobench.generation";

/**
 * The count of committed appends of the file `path` (its {@link GENERATION_XATTR}); 0 when it
 * has none or its file system keeps no extended attributes.
 */
export function generationOf(path: string): bigint {
  const fd = libc.open(path, libc.O.RDONLY | libc.O.CLOEXEC);
  try {
    return readGeneration(fd, path);
  } finally {
    libc.close(fd, path);
  }
}

function readGeneration(fd: number, path: string): bigint {
  const buf = new Uint8Array(8);
  const n = libc.fgetxattr(fd, GENERATION_XATTR, buf, path);
  return n === 8 ? new DataView(buf.buffer).getBigUint64(0, true) : 0n;
}

/** Counts up the generation of the file `path` and fsyncs it (nothing where not kept). */
function nextGeneration(path: string): void {
  const fd = libc.open(path, libc.O.RDONLY | libc.O.CLOEXEC);
  try {
    const buf = new Uint8Array(8);
    new DataView(buf.buffer).setBigUint64(0, readGeneration(fd, path) + 1n, true);
    if (libc.fsetxattr(fd, GENERATION_XATTR, buf, path)) libc.fsync(fd, path);
  } finally {
    libc.close(fd, path);
  }
}

/** Identity and state of the file `path` as a journal records them. */
function identity(path: string): libc.FileStat {
  return libc.fileStat(path);
}

/** What {@link rollBack} did. */
export type RollBackResult = "none" | "rolled-back" | "untouched" | "stale" | "changed";

/**
 * Undoes an append to `path` that a signal interrupted, where the file held `sizeBefore` bytes
 * before it: rolls it back while its journal exists (lib/io/journal.ts rollBack). Without a
 * journal the append either never changed the file or was committed (the journal is removed
 * after the append's final fsync, so a signal handled after that finds the file complete).
 * Returns "as-it-was" or "complete".
 */
export function undoInterruptedAppend(path: string, sizeBefore: number): "as-it-was" | "complete" {
  if (rollBack(path) !== "none") return "as-it-was";
  // mutant: journal-signal-after-commit
  return libc.fileStat(path).size === sizeBefore ? "as-it-was" : "complete";
}

/** An open journal of an append in progress. */
export class AppendJournal {
  /** Path of the file being appended to. */
  readonly path: string;
  /** Size of the file before the append, bytes. */
  readonly size: number;
  readonly #journal: FileHandle;
  readonly #saved = new Set<number>();
  #open = true;

  private constructor(path: string, size: number, journal: FileHandle) {
    this.path = path;
    this.size = size;
    this.#journal = journal;
  }

  /**
   * Creates the journal of `path` (whose size is `size` bytes), fsyncs it and its directory:
   * from then on the file may be changed. IoError when a journal already exists.
   */
  static begin(path: string, size: number): AppendJournal {
    const jpath = journalPath(path);
    const journal = FileHandle.open(jpath, "new");
    try {
      const { ino, dev, mtimeNs } = identity(path);
      const h = new Uint8Array(HEADER_BYTES);
      const v = new DataView(h.buffer);
      h.set(MAGIC);
      v.setBigUint64(8, BigInt(size), true);
      v.setBigUint64(16, BigInt(ino), true);
      v.setBigUint64(24, BigInt(dev), true);
      v.setBigInt64(32, mtimeNs, true);
      v.setBigUint64(40, generationOf(path), true);
      v.setUint32(48, crc32(h.subarray(0, 48)), true);
      journal.writeAt(h, 0);
      journal.sync();
      syncDirectoryOf(jpath);
    } catch (e) {
      journal.close();
      Deno.removeSync(jpath);
      throw e;
    }
    return new AppendJournal(path, size, journal);
  }

  /**
   * Saves the original bytes of the pages of [offset, offset+length) that lie in the file's old
   * size and were not saved before, as one record, fsynced before this returns. Call it before
   * those bytes are overwritten. A page not yet saved was never written by this append, so
   * `file` still holds its original bytes.
   */
  save(file: FileHandle, offset: number, length: number): void {
    const end = Math.min(offset + length, this.size);
    let first = -1;
    for (let page = Math.floor(offset / PAGE); page * PAGE < end; page++) {
      if (this.#saved.has(page)) {
        if (first >= 0) this.#record(file, first, page);
        first = -1;
        continue;
      }
      this.#saved.add(page);
      if (first < 0) first = page;
    }
    if (first >= 0) this.#record(file, first, Math.ceil(end / PAGE));
  }

  #record(file: FileHandle, firstPage: number, endPage: number): void {
    const at = firstPage * PAGE;
    const bytes = Math.min(endPage * PAGE, this.size) - at;
    const rec = new Uint8Array(RECORD_HEAD + bytes);
    const v = new DataView(rec.buffer);
    v.setBigUint64(0, BigInt(at), true);
    v.setUint32(8, bytes, true);
    file.readInto(rec.subarray(RECORD_HEAD), at);
    v.setUint32(12, crc32(rec.subarray(RECORD_HEAD), crc32(rec.subarray(0, 12))), true);
    this.#journal.writeAt(rec, this.#journal.size);
    this.#journal.sync();
  }

  /**
   * The append is durable: counts up the file's generation (so that an older journal of it is
   * never applied over this append), removes the journal and fsyncs its directory.
   */
  commit(): void {
    if (!this.#open) return;
    this.#open = false;
    this.#journal.close();
    nextGeneration(this.path);
    const jpath = journalPath(this.path);
    Deno.removeSync(jpath);
    syncDirectoryOf(jpath);
  }

  /** Puts the file back as it was before the append (see {@link rollBack}) and removes the journal. */
  rollBack(): void {
    if (!this.#open) return;
    this.#open = false;
    this.#journal.close();
    rollBack(this.path);
  }
}

/**
 * Rolls back the append journaled for `path`, if there is a journal: cuts the file to its old
 * size, writes the saved pages back, fsyncs, removes the journal. Returns what it did:
 * `none` (no journal), `rolled-back`, `untouched` (the journal ended before any change),
 * `stale` (the journal belonged to another file, since replaced) or `changed` (the file is smaller
 * than before the append, was last modified before the journal began, or another append was
 * committed to it since: not the state the append left); for the last two the journal alone is
 * removed. The caller must hold the file's
 * lock.
 */
export function rollBack(path: string): RollBackResult {
  const jpath = journalPath(path);
  let bytes: Uint8Array;
  try {
    bytes = Deno.readFileSync(jpath);
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) return "none";
    throw new IoError(`cannot read the journal ${jpath}: ${(e as Error).message}`);
  }
  const v = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const v1 = MAGIC_V1.every((b, i) => bytes[i] === b);
  const head = v1 ? HEADER_V1_BYTES : HEADER_BYTES;
  const valid = bytes.length >= head && (v1 || MAGIC.every((b, i) => bytes[i] === b)) &&
    v.getUint32(head - 8, true) === crc32(bytes.subarray(0, head - 8));
  let result: Exclude<RollBackResult, "none"> = "untouched";
  if (valid) {
    const size = Number(v.getBigUint64(8, true));
    const now = identity(path);
    if (
      Number(v.getBigUint64(16, true)) !== now.ino || Number(v.getBigUint64(24, true)) !== now.dev
    ) {
      result = "stale";
    } else if (
      now.size < size ||
      (!v1 &&
        (now.mtimeNs < v.getBigInt64(32, true) || generationOf(path) !== v.getBigUint64(40, true)))
    ) {
      result = "changed";
    } else {
      const file = FileHandle.open(path, "update");
      try {
        if (file.size !== size) file.truncate(size);
        for (let p = head; p + RECORD_HEAD <= bytes.length;) {
          const length = v.getUint32(p + 8, true);
          const data = bytes.subarray(p + RECORD_HEAD, p + RECORD_HEAD + length);
          if (data.length !== length) break;
          const crc = crc32(data, crc32(bytes.subarray(p, p + 12)));
          if (crc !== v.getUint32(p + 12, true)) break;
          file.writeAt(data, Number(v.getBigUint64(p, true)));
          p += RECORD_HEAD + length;
        }
        file.sync();
      } finally {
        file.close();
      }
      result = "rolled-back";
    }
  }
  Deno.removeSync(jpath);
  syncDirectoryOf(jpath);
  return result;
}

/**
 * Finds and rolls back the journal of an append to `path` that was killed (SIGKILL, power cut),
 * saying so in one line on stderr; nothing when there is no journal. IoError when another
 * process holds the file's lock (an append in progress). Called by every command that opens a
 * user's file; a writer that already holds the lock calls {@link rollBack} instead.
 */
export function recoverInterruptedAppend(path: string): void {
  if (!exists(journalPath(path))) return;
  const lock = tryLockFile(path);
  if (!lock) {
    throw new IoError(
      `${path} is being appended to by another process (it holds the file's lock); ` +
        `try again when it has finished`,
    );
  }
  try {
    reportRollBack(path, rollBack(path));
  } finally {
    lock.release();
  }
}

/** Says on stderr (one line) what {@link rollBack} did, when it did something. */
export function reportRollBack(path: string, result: RollBackResult): void {
  const jpath = journalPath(path);
  if (result === "rolled-back") {
    warn(
      `${path}: an interrupted append was rolled back; the file is as it was before it (${jpath})`,
    );
  } else if (result === "untouched") {
    warn(`${path}: removed the journal of an append interrupted before it changed the file`);
  } else if (result === "stale") {
    warn(
      `${path}: removed ${jpath}, the journal of an interrupted append to a file since replaced`,
    );
  } else if (result === "changed") {
    warn(
      `${path}: removed ${jpath} without applying it: the file changed after that interrupted ` +
        `append (it is smaller than before it, older, or appended to since); check the file`,
    );
  }
}

function exists(path: string): boolean {
  try {
    libc.fileStat(path, false);
    return true;
  } catch {
    return false;
  }
}
