/**
 * Exclusive advisory locks (`flock`) on the files sciobench writes: a writer (append, or a
 * `--force` replacement) holds the lock on the target from before it reads the file until its
 * change is durable; a second writer is refused with one line, or waits with `--wait`.
 * @module
 */
import { IoError } from "../errors.ts";
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

/** Inode number of `path` (a replacement renamed over it stays on its file system). */
function inode(path: string): number | null | undefined {
  try {
    return Deno.statSync(path).ino;
  } catch {
    return undefined;
  }
}

/**
 * Tries once to lock the existing file `path`: the lock, or undefined when another process
 * holds it. The lock is taken on the file the path names after locking (a file renamed over
 * `path` meanwhile is locked instead).
 */
export function tryLockFile(path: string): FileLock | undefined {
  for (;;) {
    const before = inode(path);
    const fd = libc.open(path, libc.O.RDONLY);
    let locked = false;
    try {
      locked = libc.flock(fd, libc.LOCK.EX | libc.LOCK.NB, path);
    } finally {
      if (!locked) libc.close(fd, path);
    }
    if (!locked) return undefined;
    // Unchanged inode before the open and after the lock: the locked file is the one at `path`
    // (else a replacement was renamed over it meanwhile: lock that one).
    if (before !== undefined && inode(path) === before) {
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
    libc.close(fd, path);
  }
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
