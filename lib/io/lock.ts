/**
 * Exclusive advisory locks (`flock`) on the files sciobench writes: a writer (append, or a
 * `--force` replacement) holds the lock on the target from before it reads the file until its
 * change is durable; a second writer is refused with one line, or waits with `--wait`.
 * @module
 */
import { IoError } from "../core/errors.ts";
import * as libc from "../sys/libc.ts";

/** How often a waiting writer tries the lock again, milliseconds. */
const RETRY_MS = 50;

/** An exclusive lock on one file, held until {@link FileLock.release}. */
export interface FileLock {
  /** The locked path. */
  readonly path: string;
  /** Releases the lock (closes its descriptor); safe to call twice. */
  release(): void;
}

/**
 * How many times {@link tryLockFile} locks again when the file at the path was replaced between
 * its open and its lock (each replacement is another writer's completed rename).
 */
const MAX_RELOCKS = 100;

/** True when the open file `fd` is the file `path` names now (same device and inode). */
function stillAt(fd: number, path: string): boolean {
  const held = libc.fileStat(fd);
  let now;
  try {
    now = libc.fileStat(path);
  } catch {
    return false; // removed or renamed away meanwhile
  }
  return now.dev === held.dev && now.ino === held.ino;
}

/**
 * Tries once to lock the existing file `path` (through a symbolic link: the file it points to):
 * the lock, or undefined when another process holds it. The lock is taken on the file the path
 * names after locking (a file renamed over `path` meanwhile is locked instead); IoError when the
 * file keeps being replaced 100 times in a row.
 */
export function tryLockFile(path: string): FileLock | undefined {
  for (let attempt = 0; attempt < MAX_RELOCKS; attempt++) {
    const fd = libc.open(path, libc.O.RDONLY | libc.O.CLOEXEC);
    let kept = false;
    try {
      if (!libc.flock(fd, libc.LOCK.EX | libc.LOCK.NB, path)) return undefined;
      // The locked file is still the one at `path` (else a replacement was renamed over it
      // meanwhile: lock that one).
      kept = stillAt(fd, path);
    } finally {
      if (!kept) libc.close(fd, path);
    }
    if (kept) {
      let open = true;
      return {
        path,
        release() {
          if (!open) return;
          open = false;
          libc.close(fd, path);
        },
      };
    }
  }
  throw new IoError(
    `${path} was replaced ${MAX_RELOCKS} times while this process tried to lock it; ` +
      `another program keeps renaming files over it: try again when it has stopped`,
  );
}

/**
 * Locks the existing file `path` for writing. Another writer holding it: IoError in one line,
 * or, with `wait`, tries again every 50 ms (signals are handled meanwhile) until it is free.
 */
export async function lockFile(path: string, wait: boolean): Promise<FileLock> {
  for (;;) {
    const lock = tryLockFile(path);
    if (lock) return lock;
    if (!wait) {
      throw new IoError(
        `${path} is being written by another process (it holds the file's lock); ` +
          `try again when it has finished, or pass --wait`,
      );
    }
    await new Promise((resolve) => setTimeout(resolve, RETRY_MS));
  }
}
