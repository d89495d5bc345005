/**
 * Atomic file creation and replacement: checks an output target before anything is written
 * (regular file or nothing; never a FIFO, device or directory), writes to a temporary name in
 * the same directory (`.NAME.sciobench-tmp-PID`), then renames it over the target (or links it
 * exclusively when the target must be new) and fsyncs the directory. The old file survives any
 * failure, signal or kill; temporary files of killed runs are removed by the next write to NAME.
 * @module
 */
import { IoError, UsageError } from "../core/errors.ts";
import * as libc from "../sys/libc.ts";
import { warn } from "../core/diagnostics.ts";
import { processStart } from "./owner.ts";

const TEMP_MARK = ".sciobench-tmp-";

/** Directory part of `path` (`.` when it has none). */
export function directoryOf(path: string): string {
  const slash = path.lastIndexOf("/");
  return slash < 0 ? "." : slash === 0 ? "/" : path.slice(0, slash);
}

/** fsyncs the directory that holds `path`, so a creation, rename or removal in it is durable. */
export function syncDirectoryOf(path: string): void {
  const dir = directoryOf(path);
  const fd = libc.open(dir, libc.O.RDONLY | libc.O.DIRECTORY);
  try {
    libc.fsync(fd, dir);
  } finally {
    libc.close(fd, dir);
  }
}

function splitName(path: string): [string, string] {
  const slash = path.lastIndexOf("/");
  return [path.slice(0, slash + 1), path.slice(slash + 1)];
}

/** The temporary name this process writes `path` under: `.NAME.sciobench-tmp-PID` beside it. */
export function tempPathFor(path: string): string {
  const [dir, name] = splitName(path);
  // Keep the name within NAME_MAX (255 bytes) whatever the length of NAME.
  return `${dir}.${name.slice(0, 200)}${TEMP_MARK}${Deno.pid}`;
}

/**
 * Removes temporary files of `path` (`.NAME.sciobench-tmp-PID`) whose process no longer runs on
 * this host, each said in one line on stderr.
 */
export function removeStaleTemps(path: string): void {
  const [dir, name] = splitName(path);
  const prefix = `.${name.slice(0, 200)}${TEMP_MARK}`;
  let entries: Deno.DirEntry[];
  try {
    entries = [...Deno.readDirSync(dir || ".")];
  } catch {
    return;
  }
  for (const e of entries) {
    // a file, or a store (a directory) written under the temporary name
    if (!(e.isFile || e.isDirectory) || !e.name.startsWith(prefix)) continue;
    const pid = Number(e.name.slice(prefix.length));
    if (!Number.isSafeInteger(pid) || pid <= 0 || processStart(pid) !== undefined) continue;
    try {
      Deno.removeSync(`${dir}${e.name}`, { recursive: e.isDirectory });
      warn(`removed ${dir}${e.name}, left by an interrupted write (process ${pid})`);
    } catch {
      // another run removed it first
    }
  }
}

/** An output file checked before anything was written. */
export interface OutputTarget {
  /** The path to write: the given path, or the file a symbolic link there points to. */
  readonly path: string;
  /** The file exists (and may be replaced: `force` was given). */
  readonly exists: boolean;
  /** Permission bits of the existing file, kept by the replacement. */
  readonly mode?: number;
}

/**
 * Checks that `path` may be written: its directory exists, it is a regular file or absent
 * (UsageError for a directory, FIFO, socket or device: they are never replaced), and an existing
 * file is replaced only with `force` (IoError otherwise). `what` names the option in messages.
 */
export function checkOutputTarget(path: string, force: boolean, what = "FILE"): OutputTarget {
  let info: Deno.FileInfo;
  try {
    info = Deno.statSync(path);
  } catch (e) {
    if (!(e instanceof Deno.errors.NotFound)) {
      throw new IoError(`cannot write ${path}: ${(e as Error).message}`);
    }
    let dir: Deno.FileInfo;
    try {
      dir = Deno.statSync(directoryOf(path));
    } catch {
      throw new IoError(`cannot write ${path}: its directory ${directoryOf(path)} does not exist`);
    }
    if (!dir.isDirectory) {
      throw new IoError(`cannot write ${path}: ${directoryOf(path)} is not a directory`);
    }
    return { path, exists: false };
  }
  if (!info.isFile) {
    const kind = info.isDirectory
      ? "a directory"
      : info.isFifo
      ? "a FIFO"
      : info.isCharDevice || info.isBlockDevice
      ? "a device"
      : info.isSocket
      ? "a socket"
      : "not a regular file";
    throw new UsageError(`${what} ${path} is ${kind}; sciobench writes only regular files`);
  }
  if (!force) {
    throw new IoError(`${path} exists; refusing to overwrite it (pass --force to replace it)`);
  }
  return {
    path: libc.realPath(path),
    exists: true,
    mode: (info.mode ?? 0o644) & 0o7777,
  };
}

/**
 * Checks that a store (a directory of files) may be written at `path`: its directory exists, and
 * anything there is replaced only with `force` (IoError otherwise) and only when it is a store
 * (`isStore`) or a regular file (UsageError for another directory, a FIFO, a device).
 */
export function checkStoreTarget(
  path: string,
  force: boolean,
  isStore: (path: string) => boolean,
): OutputTarget {
  let info: Deno.FileInfo;
  try {
    info = Deno.statSync(path);
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) return checkOutputTarget(path, force);
    throw new IoError(`cannot write ${path}: ${(e as Error).message}`);
  }
  if (info.isDirectory && !isStore(path)) {
    throw new UsageError(
      `FILE ${path} is a directory that is no store; sciobench replaces only a store or a file`,
    );
  }
  if (!info.isDirectory) return checkOutputTarget(path, force);
  if (!force) {
    throw new IoError(`${path} exists; refusing to overwrite it (pass --force to replace it)`);
  }
  return { path: libc.realPath(path), exists: true };
}

/**
 * Makes the written temporary store `temp` (complete and synced) the target: renamed to a new
 * target, or swapped with an existing one atomically (renameat2 RENAME_EXCHANGE: the path names
 * the old store or the new one at every moment), the old one then removed; the directory is
 * fsynced. A file system that cannot swap (EINVAL) leaves the target as it was (IoError).
 */
export function commitTempStore(temp: string, target: OutputTarget): void {
  if (!target.exists) {
    Deno.renameSync(temp, target.path);
  } else {
    try {
      libc.renameExchange(temp, target.path);
    } catch (e) {
      throw new IoError(
        `${target.path} was left as it was: this file system cannot swap it with the new store ` +
          `atomically (${e instanceof Error ? e.message : String(e)}); remove it first`,
      );
    }
    Deno.removeSync(temp, { recursive: true });
  }
  syncDirectoryOf(target.path);
}

/** `dev:ino` of an existing path (through symbolic links), or undefined. */
export function fileIdentity(path: string): string | undefined {
  try {
    // libc's statx: Deno's own stat refuses paths under /dev (node-local /dev/shm)
    const s = libc.fileStat(path);
    return `${s.dev}:${s.ino}`;
  } catch {
    return undefined;
  }
}

/**
 * Makes the written temporary file `temp` the target: renamed over an existing target (its
 * permission bits kept), or linked to a new one exclusively (IoError when a file appeared there
 * meanwhile: nothing is replaced that the user did not ask to replace); then the directory is
 * fsynced. `temp` must be complete and fsynced.
 */
export function commitTemp(temp: string, target: OutputTarget): void {
  if (target.exists) {
    if (target.mode !== undefined) Deno.chmodSync(temp, target.mode);
    Deno.renameSync(temp, target.path);
  } else {
    try {
      Deno.linkSync(temp, target.path);
    } catch (e) {
      if (e instanceof Deno.errors.AlreadyExists) {
        removeQuietly(temp);
        throw new IoError(
          `${target.path} was created by another process while this one wrote it; ` +
            `refusing to overwrite it (pass --force to replace it)`,
        );
      }
      // No hard links on this file system: a rename (the target was absent a moment ago).
      Deno.renameSync(temp, target.path);
    }
    removeQuietly(temp);
  }
  syncDirectoryOf(target.path);
}

/** Removes `path` if it exists; never throws. */
export function removeQuietly(path: string): void {
  try {
    Deno.removeSync(path);
  } catch {
    // already gone
  }
}

/** True when `a` and `b` name the same file (same inode, or the same place when absent). */
export function samePath(a: string, b: string): boolean {
  const ia = fileIdentity(a);
  const ib = fileIdentity(b);
  if (ia !== undefined || ib !== undefined) return ia === ib;
  return placeOf(a) === placeOf(b);
}

function placeOf(path: string): string {
  const slash = path.lastIndexOf("/");
  try {
    return `${libc.realPath(directoryOf(path))}/${path.slice(slash + 1)}`;
  } catch {
    return path;
  }
}

/**
 * Refuses (UsageError, exit 2) the output `output` of the option `what` (`--out`, `--plot`) when
 * it is one of `inputs` (each `[name in messages, path]`: a command's input or data files),
 * however spelled: the same device and inode, through symbolic and hard links, or the same place
 * when neither exists yet. Every output option is checked with this before a byte is written.
 */
export function refuseOutputOnInput(
  what: string,
  output: string,
  inputs: readonly (readonly [string, string])[],
): void {
  for (const [name, input] of inputs) {
    if (!samePath(output, input)) continue;
    const spelled = input === output ? "" : ` (${input}, the same file)`;
    throw new UsageError(
      `${what} ${output} is ${name} itself${spelled}; give another file for the output`,
    );
  }
}
