/**
 * Stores: files that are directories of member files (a Zarr store's metadata files and one file
 * per chunk). Writing one makes its directories as needed and keeps the files it wrote open until
 * a sync point fsyncs them and every directory that gained an entry (so the chunks are durable
 * before the metadata that makes them visible); reading one hands a decoder its members by name,
 * never outside the store. A store's size is the sum of its files' sizes; it is removed whole.
 * @module
 */
import { FormatError, IoError, SysError, UsageError } from "../core/errors.ts";
import * as libc from "../sys/libc.ts";
import { Buffer } from "node:buffer";
import { directoryOf, syncDirectoryOf } from "./atomic.ts";
import { FileHandle } from "./file.ts";
import { journalPath } from "./journal.ts";
import { tryLockFile } from "./lock.ts";
import { warn } from "../core/diagnostics.ts";
import type { StoreMembers } from "./types.ts";

/** `st_mode` file-type bits of a directory. */
const S_IFDIR = 0o040000;
/** Mask of the file-type bits of `st_mode`. */
const S_IFMT = 0o170000;

/**
 * Files a writer keeps open awaiting the next sync before it syncs and closes them early: a
 * store of many chunks never holds more descriptors than this.
 */
const MAX_PENDING_FILES = 256;

/** True when `path` is a directory (through symbolic links); false for anything else or nothing. */
export function isDirectory(path: string): boolean {
  try {
    return (libc.fileStat(path).mode & S_IFMT) === S_IFDIR;
  } catch (e) {
    if (e instanceof SysError) return false;
    throw e;
  }
}

/** True when something is at `path` (through symbolic links). */
function exists(path: string): boolean {
  try {
    libc.fileStat(path);
    return true;
  } catch (e) {
    if (e instanceof SysError) return false;
    throw e;
  }
}

/** True when the store at `root` has an entry `name` (a file or directory, through links). */
export function hasMember(root: string, name: string): boolean {
  return exists(`${root}/${name}`);
}

/**
 * Every regular file under directory `root`, depth first, each directory's entries in name order
 * (symbolic links are not followed: a store's files are its own).
 */
export function storeFiles(root: string): string[] {
  const out: string[] = [];
  const walk = (dir: string) => {
    const entries = [...Deno.readDirSync(dir)].sort((a, b) => a.name < b.name ? -1 : 1);
    for (const e of entries) {
      const path = `${dir}/${e.name}`;
      if (e.isDirectory) walk(path);
      else if (e.isFile) out.push(path);
    }
  };
  walk(root);
  return out;
}

/** Every directory under `root` and `root` itself, parents before their children. */
function storeDirectories(root: string): string[] {
  const out: string[] = [root];
  for (let i = 0; i < out.length; i++) {
    for (const e of Deno.readDirSync(out[i]!)) {
      if (e.isDirectory) out.push(`${out[i]}/${e.name}`);
    }
  }
  return out;
}

/**
 * Bytes `path` holds: a regular file's size, or for a directory (a store) the sum of the sizes of
 * every regular file under it.
 */
export function storeBytes(path: string): number {
  if (!isDirectory(path)) return Deno.statSync(path).size;
  let total = 0;
  for (const file of storeFiles(path)) total += libc.fileStat(file, false).size;
  return total;
}

/** Removes `path`: a file, or a directory (a store) with everything under it. */
export function removeStore(path: string): void {
  Deno.removeSync(path, { recursive: isDirectory(path) });
}

/**
 * fsyncs the directory (or with `directory` false, the file) `path` names, opened read-only for
 * the call.
 */
function syncPath(path: string, directory = true): void {
  // mutant: store-sync-opens-directory
  const fd = libc.open(path, libc.O.RDONLY | (directory ? libc.O.DIRECTORY : 0));
  try {
    libc.fsync(fd, path);
  } finally {
    libc.close(fd, path);
  }
}

/**
 * fsyncs everything of the store at `root`: every file under it, then every directory (deepest
 * first), then the directory holding it, so its whole tree is durable (a store written with
 * `--fsync none` before it is renamed into place).
 */
export function syncStore(root: string): void {
  for (const file of storeFiles(root)) syncPath(file, false);
  for (const dir of storeDirectories(root).reverse()) syncPath(dir);
  syncPath(directoryOf(root));
}

/**
 * The parts of member name `name` of the store at `root`, checked: relative, `/` between parts,
 * no part empty, `.` or `..` (nothing outside the store is ever named). FormatError otherwise
 * (the name came from a file's metadata).
 */
function memberParts(root: string, name: string): string[] {
  const parts = name.split("/");
  if (parts.some((p) => p === "" || p === "." || p === ".." || p.includes("\0"))) {
    throw new FormatError(
      "store",
      root,
      -1,
      `member name '${name}' is not a path inside the store (empty, '.' or '..' parts)`,
    );
  }
  return parts;
}

/** How a {@link StoreWriter} creates its store and whether it keeps files for the syncs. */
export interface StoreWriterOptions {
  /**
   * `new`: nothing may exist at the root; `truncate`: a file or store there is removed first;
   * `append`: the store exists and gains members ({@link StoreWriter.replace} for those it has).
   */
  readonly mode: "new" | "truncate" | "append";
  /**
   * True when the writer's {@link StoreWriter.sync} is ever called (`--fsync` end or each): the
   * files it writes stay open until then. False (`--fsync none`): each is closed once written.
   */
  readonly syncs: boolean;
}

/**
 * Writes a new store: a directory at `root` whose members are written whole, each directory of a
 * member made when first needed. {@link sync} makes every member written and every directory made
 * or given an entry so far durable (fsync of each file, then of each such directory, deepest
 * first, and of the directory holding the root); {@link abort} removes the store whole.
 */
export class StoreWriter {
  /** Path of the store's root directory. */
  readonly root: string;
  readonly #syncs: boolean;
  /** Directories of the store known to exist (relative to the root; "" is the root). */
  readonly #made = new Set<string>([""]);
  /** Directories that gained an entry since the last sync (relative; "" is the root). */
  readonly #dirty = new Set<string>();
  /** The root's own entry in its parent directory is not yet synced. */
  #rootEntryDirty = true;
  /** Files written since the last sync, open until it fsyncs them. */
  #pending: FileHandle[] = [];
  #open = true;

  /**
   * Makes the store's root directory (removing what is there first when `mode` is truncate), or
   * takes the existing one (`append`).
   */
  constructor(root: string, options: StoreWriterOptions) {
    this.root = root;
    this.#syncs = options.syncs;
    if (options.mode === "append") {
      if (!isDirectory(root)) throw new IoError(`${root}: no such store (a directory)`);
      this.#rootEntryDirty = false;
      return;
    }
    if (options.mode === "truncate") {
      try {
        removeStore(root);
      } catch (e) {
        if (!(e instanceof Deno.errors.NotFound)) throw e;
      }
    }
    try {
      libc.mkdir(root);
    } catch (e) {
      if (e instanceof SysError && e.code === "EEXIST") {
        throw new IoError(`${root} exists; refusing to overwrite it (pass --force to replace it)`);
      }
      throw e;
    }
  }

  /** Bytes of the files written: the sum of every member's size so far. */
  bytes = 0;

  /** Makes the directories of member `name` that are missing; its directory, relative. */
  #directoryOf(name: string): string {
    const parts = memberParts(this.root, name);
    let dir = "";
    for (const part of parts.slice(0, -1)) {
      const next = dir === "" ? part : `${dir}/${part}`;
      if (!this.#made.has(next)) {
        try {
          libc.mkdir(`${this.root}/${next}`);
          this.#dirty.add(dir);
        } catch (e) {
          if (!(e instanceof SysError && e.code === "EEXIST")) throw e;
        }
        this.#made.add(next);
      }
      dir = next;
    }
    return dir;
  }

  /** Writes `data` as the whole content of member `name` (made, or replaced in place). */
  write(name: string, data: Uint8Array): void {
    const dir = this.#directoryOf(name);
    this.#dirty.add(dir);
    const file = FileHandle.open(`${this.root}/${name}`, "truncate");
    try {
      file.writeAt(data, 0);
    } catch (e) {
      file.close();
      throw e;
    }
    this.bytes += data.length;
    if (!this.#syncs) return file.close();
    this.#pending.push(file);
    if (this.#pending.length >= MAX_PENDING_FILES) this.#syncFiles();
  }

  /**
   * Puts `data` in place of member `name` atomically: written whole to a temporary file beside
   * it ({@link storeTempName}), fsynced and renamed over it, so a reader sees the old content or
   * the new, never a part. The rename is durable at the next {@link sync}.
   */
  replace(name: string, data: Uint8Array): void {
    const dir = this.#directoryOf(name);
    const temp = `${this.root}/${storeTempName(name)}`;
    const file = FileHandle.open(temp, "truncate");
    try {
      file.writeAt(data, 0);
      file.sync();
    } catch (e) {
      file.close();
      Deno.removeSync(temp);
      throw e;
    }
    file.close();
    // mutant: store-replace-rename
    libc.rename(temp, `${this.root}/${name}`);
    this.#dirty.add(dir);
    this.bytes += data.length;
  }

  /** fsyncs and closes the files written since the last sync. */
  #syncFiles(): void {
    const pending = this.#pending;
    this.#pending = [];
    for (let i = 0; i < pending.length; i++) {
      try {
        pending[i]!.sync();
      } catch (e) {
        for (const f of pending.slice(i)) f.close();
        throw e;
      }
      pending[i]!.close();
    }
  }

  /**
   * Makes everything written so far durable: each file written since the last sync, then each
   * directory that gained an entry (deepest first), then the directory holding the root.
   */
  sync(): void {
    this.#syncFiles();
    const dirs = [...this.#dirty].sort((a, b) => b.length - a.length);
    this.#dirty.clear();
    // mutant: store-sync-directories
    for (const dir of dirs) syncPath(dir === "" ? this.root : `${this.root}/${dir}`);
    if (this.#rootEntryDirty) {
      syncPath(directoryOf(this.root));
      this.#rootEntryDirty = false;
    }
  }

  /** Closes the files still open (without a sync: the caller synced first when it should). */
  close(): void {
    if (!this.#open) return;
    this.#open = false;
    for (const f of this.#pending.splice(0)) f.close();
  }

  /** Closes what is open and removes the store whole. */
  abort(): void {
    this.close();
    try {
      removeStore(this.root);
    } catch {
      // already gone
    }
  }
}

/**
 * Reads the members of the store at `root` ({@link StoreMembers}), counting the bytes it reads
 * into {@link bytesRead}. Chunk reads ({@link readMember}, {@link readMemberInto}) go through
 * the same file handles as any file's.
 */
export class StoreReader implements StoreMembers {
  /** Path of the store's root directory. */
  readonly path: string;
  /** Bytes read from the store's files so far (metadata and chunks). */
  bytesRead = 0;

  /**
   * A reader of the store at `root`: IoError when nothing is there, UsageError when it is not a
   * directory.
   */
  constructor(root: string) {
    if (!isDirectory(root)) {
      if (exists(root)) {
        throw new UsageError(`${root} is not a directory; a store is a directory of files`);
      }
      throw new IoError(`${root}: no such file or directory`);
    }
    this.path = root;
  }

  /** The open member `name`, or undefined when there is no such file (or it is a directory). */
  #open(name: string): FileHandle | undefined {
    memberParts(this.path, name);
    let file: FileHandle;
    try {
      file = FileHandle.open(`${this.path}/${name}`, "read");
    } catch (e) {
      if (e instanceof IoError || (e instanceof SysError && e.code === "ENOTDIR")) {
        return undefined;
      }
      throw e;
    }
    if ((libc.fileStat(file.fd).mode & S_IFMT) === S_IFDIR) {
      file.close();
      return undefined;
    }
    return file;
  }

  read(name: string, limit: number): Uint8Array | undefined {
    const file = this.#open(name);
    if (file === undefined) return undefined;
    try {
      if (file.size > limit) {
        throw new FormatError(
          "store",
          `${this.path}/${name}`,
          -1,
          `holds ${file.size} bytes, more than the ${limit} a metadata file may hold here`,
        );
      }
      const out = new Uint8Array(file.size);
      const n = file.readInto(out, 0);
      this.bytesRead += n;
      return out.subarray(0, n);
    } finally {
      file.close();
    }
  }

  /**
   * The whole content of member `name` in `scratch` when it fits (else a new array), or
   * undefined when there is no such file: a view of the bytes read.
   */
  readMember(name: string, scratch: Uint8Array): Uint8Array | undefined {
    const file = this.#open(name);
    if (file === undefined) return undefined;
    try {
      const into = file.size <= scratch.length ? scratch : new Uint8Array(file.size);
      const n = file.readInto(into.subarray(0, file.size), 0);
      this.bytesRead += n;
      return into.subarray(0, n);
    } finally {
      file.close();
    }
  }

  /**
   * Reads `into` from byte `offset` of member `name`: the count read (less than `into.length`
   * when the file ends first), or undefined when there is no such file.
   */
  readMemberInto(name: string, into: Uint8Array, offset: number): number | undefined {
    const file = this.#open(name);
    if (file === undefined) return undefined;
    try {
      const n = file.readInto(into, offset);
      this.bytesRead += n;
      return n;
    } finally {
      file.close();
    }
  }

  sizeOf(name: string): number | undefined {
    const file = this.#open(name);
    if (file === undefined) return undefined;
    try {
      return file.size;
    } finally {
      file.close();
    }
  }

  readAt(name: string, offset: number, length: number): Uint8Array | undefined {
    const out = new Uint8Array(length);
    const n = this.readMemberInto(name, out, offset);
    return n === undefined ? undefined : out.subarray(0, n);
  }

  list(dir: string, limit: number): readonly string[] | undefined {
    if (dir !== "") memberParts(this.path, dir);
    const path = dir === "" ? this.path : `${this.path}/${dir}`;
    const names: string[] = [];
    try {
      for (const e of Deno.readDirSync(path)) {
        if (names.length >= limit) {
          throw new FormatError(
            "store",
            path,
            -1,
            `holds more than ${limit} entries, more than a group of a store may hold here`,
          );
        }
        names.push(e.name);
      }
    } catch (e) {
      if (e instanceof Deno.errors.NotFound || e instanceof Deno.errors.NotADirectory) {
        return undefined;
      }
      throw e;
    }
    return names.sort();
  }
}

/** The temporary member that {@link StoreWriter.replace} writes before renaming it to `name`. */
export function storeTempName(name: string): string {
  const slash = name.lastIndexOf("/");
  return `${name.slice(0, slash + 1)}.${name.slice(slash + 1)}.sciobench-tmp`;
}

/** The journal's content: each saved member's old bytes (base64), or null where it had none. */
interface StoreJournalDoc {
  readonly sciobenchStoreJournal: 1;
  /** Device and inode of the store's root directory: the journal applies to that store only. */
  readonly dev: number;
  readonly ino: number;
  readonly saved: Record<string, string | null>;
}

/** Writes `doc` as the journal `jpath` atomically (a temporary beside it, fsynced, renamed). */
function writeJournal(jpath: string, doc: StoreJournalDoc): void {
  const temp = `${jpath}-tmp`;
  const file = FileHandle.open(temp, "truncate");
  try {
    file.writeAt(new TextEncoder().encode(JSON.stringify(doc)), 0);
    file.sync();
  } catch (e) {
    file.close();
    Deno.removeSync(temp);
    throw e;
  }
  file.close();
  Deno.renameSync(temp, jpath);
  syncDirectoryOf(jpath);
}

/**
 * The undo journal of an append to a store: `.NAME.sciobench-journal` beside the store NAME
 * (through symbolic links, as a file's journal), holding the old content of every member the
 * append replaces, saved before it is replaced; each change of it is atomic (a temporary file
 * renamed over it) and durable. The members the append adds are the store's strays (found by
 * the framing from the restored metadata, Framing.store.strays) and go on a rollback; the
 * journal is removed after the append's last fsync.
 */
export class StoreJournal {
  /** Path of the store. */
  readonly root: string;
  readonly #path: string;
  readonly #saved: Record<string, string | null> = {};
  #open = true;

  readonly #dev: number;
  readonly #ino: number;

  private constructor(root: string, path: string, dev: number, ino: number) {
    this.root = root;
    this.#path = path;
    this.#dev = dev;
    this.#ino = ino;
  }

  /**
   * Creates the (empty) journal of the store at `root`, durable before this returns: from then on
   * the store may be changed. IoError when a journal already exists.
   */
  static begin(root: string): StoreJournal {
    const jpath = journalPath(root);
    if (exists(jpath)) {
      throw new IoError(`${jpath} exists: an append to ${root} was interrupted; read it first`);
    }
    const { dev, ino } = libc.fileStat(root);
    const journal = new StoreJournal(root, jpath, dev, ino);
    writeJournal(jpath, { sciobenchStoreJournal: 1, dev, ino, saved: {} });
    return journal;
  }

  /** True when member `name`'s old content is saved (or it had none). */
  has(name: string): boolean {
    return name in this.#saved;
  }

  /**
   * Saves the current content of members `names` (null for those that do not exist) in the
   * journal, durable before this returns; call it before they are replaced.
   */
  save(names: readonly string[]): void {
    const fresh = names.filter((n) => !this.has(n));
    if (fresh.length === 0) return;
    for (const name of fresh) {
      memberParts(this.root, name);
      const path = `${this.root}/${name}`;
      this.#saved[name] = exists(path)
        ? Buffer.from(Deno.readFileSync(path)).toString("base64")
        : null;
    }
    writeJournal(this.#path, {
      sciobenchStoreJournal: 1,
      dev: this.#dev,
      ino: this.#ino,
      saved: this.#saved,
    });
  }

  /** The append is durable: removes the journal and fsyncs its directory. */
  commit(): void {
    if (!this.#open) return;
    this.#open = false;
    Deno.removeSync(this.#path);
    syncDirectoryOf(this.#path);
  }

  /** Puts the store back as it was (see {@link rollBackStore}); the journal is removed. */
  rollBack(strays: ((store: StoreMembers) => string[]) | undefined): void {
    if (!this.#open) return;
    this.#open = false;
    rollBackStore(this.root, strays);
  }
}

/**
 * True when the store at `root` has the journal of an interrupted append beside it (or the
 * temporary one it was being written as).
 */
export function hasStoreJournal(root: string): boolean {
  const jpath = journalPath(root);
  return exists(jpath) || exists(`${jpath}-tmp`);
}

/**
 * Rolls back the append journaled for the store at `root`, if there is a journal: every saved
 * member put back atomically (removed where it had none) and its temporary removed, then every
 * stray the framing finds from the restored metadata removed (the chunks the append added),
 * every directory changed fsynced, the journal removed. A journal made for another store (one
 * since replaced at `root`, another inode) is removed without being applied. Returns whether it
 * rolled an append back. The caller must hold the store's lock.
 */
export function rollBackStore(
  root: string,
  strays: ((store: StoreMembers) => string[]) | undefined,
): boolean {
  const jpath = journalPath(root);
  // a journal being written when the append was killed (before it began changing the store)
  try {
    Deno.removeSync(`${jpath}-tmp`);
  } catch {
    // none
  }
  let doc: StoreJournalDoc | undefined;
  try {
    doc = JSON.parse(new TextDecoder().decode(Deno.readFileSync(jpath))) as StoreJournalDoc;
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) return false;
    if (!(e instanceof SyntaxError)) {
      throw new IoError(`cannot read the journal ${jpath}: ${(e as Error).message}`);
    }
  }
  const dirs = new Set<string>();
  const { dev, ino } = libc.fileStat(root);
  // mutant: store-journal-identity
  if (doc !== undefined && (doc.dev !== dev || doc.ino !== ino)) {
    // the journal of a store since replaced (write --force): never applied to this one
    Deno.removeSync(jpath);
    syncDirectoryOf(jpath);
    return false;
  }
  const saved = doc?.sciobenchStoreJournal === 1 && typeof doc.saved === "object" ? doc.saved : {};
  for (const [name, old] of Object.entries(saved)) {
    memberParts(root, name);
    const path = `${root}/${name}`;
    const temp = `${root}/${storeTempName(name)}`;
    if (typeof old === "string") {
      const file = FileHandle.open(temp, "truncate");
      try {
        file.writeAt(new Uint8Array(Buffer.from(old, "base64")), 0);
        file.sync();
      } finally {
        file.close();
      }
      Deno.renameSync(temp, path);
    } else {
      for (const p of [temp, path]) {
        try {
          Deno.removeSync(p);
        } catch {
          // not there
        }
      }
    }
    dirs.add(directoryOf(path));
  }
  if (strays !== undefined) {
    for (const name of strays(new StoreReader(root))) {
      const path = `${root}/${memberParts(root, name).join("/")}`;
      Deno.removeSync(path, { recursive: true });
      dirs.add(directoryOf(path));
    }
  }
  for (const dir of dirs) syncPath(dir);
  Deno.removeSync(jpath);
  syncDirectoryOf(jpath);
  return true;
}

/**
 * Rolls back the append to the store at `root` that was killed (its journal is beside it), under
 * the store's lock, saying so in one line on stderr; nothing when there is no journal. IoError
 * when another process holds the lock (an append in progress).
 */
export function recoverInterruptedStoreAppend(
  root: string,
  strays: ((store: StoreMembers) => string[]) | undefined,
): void {
  if (!hasStoreJournal(root)) return;
  const lock = tryLockFile(root);
  if (!lock) {
    throw new IoError(
      `${root} is being appended to by another process (it holds the store's lock); ` +
        "try again when it has finished",
    );
  }
  try {
    if (rollBackStore(root, strays)) {
      warn(`${root}: an interrupted append was rolled back; the store is as it was before it`);
    }
  } finally {
    lock.release();
  }
}
