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
import { directoryOf } from "./atomic.ts";
import { FileHandle } from "./file.ts";
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

/** fsyncs the open directory or file `path` names (opened read-only for the call). */
function syncPath(path: string): void {
  const fd = libc.open(path, libc.O.RDONLY);
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
  for (const file of storeFiles(root)) syncPath(file);
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
  /** `new`: nothing may exist at the root; `truncate`: a file or store there is removed first. */
  readonly mode: "new" | "truncate";
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

  /** Makes the store's root directory (removing what is there first when `mode` is truncate). */
  constructor(root: string, options: StoreWriterOptions) {
    this.root = root;
    this.#syncs = options.syncs;
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

  /** Writes `data` as the whole content of member `name` (made, or replaced in place). */
  write(name: string, data: Uint8Array): void {
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
