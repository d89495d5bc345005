/**
 * Checks a run makes before it writes or allocates anything: the scratch directory (`--dir`), its
 * free space, and the memory its buffers need; each refusal is one line.
 * @module
 */
import { SysError, UsageError } from "../core/errors.ts";
import { warn } from "../core/diagnostics.ts";
import { type StatFs, statfs } from "../sys/libc.ts";
import { formatSize } from "../report/units.ts";

/** The kernel's own file systems by statfs magic (no data files can be written there). */
const SYSTEM_FILE_SYSTEMS: Record<number, string> = {
  0x9fa0: "proc",
  0x62656572: "sysfs",
  0x1cd1: "devpts",
  0x27e0eb: "cgroup",
  0x63677270: "cgroup2",
  0x64626720: "debugfs",
};

/**
 * Refuses a run before it writes (one line, UsageError) when `dir`'s file system has less than
 * `bytes` (plus 5% and 64 MiB) free; `what` says what needs the room and `hint` how to need less.
 */
export function checkFreeSpace(
  fs: StatFs,
  dir: string | undefined,
  bytes: number,
  what: string,
  hint: string,
): void {
  const need = bytes * 1.05 + (64 << 20);
  if (fs.availableBytes < need) {
    throw new UsageError(
      `${what} needs about ${formatSize(need)} but ${dir ?? "the current directory"} has ` +
        `${formatSize(fs.availableBytes)} free; ${hint}`,
    );
  }
}

/**
 * Refuses a run before it allocates (one line, UsageError) when `bytes` of buffers would not fit
 * in half the memory available now; `what` names the buffer and `hint` how to need less.
 */
export function checkMemory(bytes: number, what: string, hint: string): void {
  let available = Infinity;
  try {
    available = Deno.systemMemoryInfo().available;
  } catch {
    return; // no --allow-sys: the allocation itself is the check
  }
  if (bytes > available / 2) {
    throw new UsageError(
      `${what} needs ${formatSize(bytes)} of memory but this machine has ` +
        `${formatSize(available)} available; ${hint}`,
    );
  }
}

/**
 * Checks a `--dir` value (it must be an existing directory) and warns on stderr when it is on a
 * memory file system, where cold reads are impossible. Returns the file-system facts.
 */
export function checkScratchParent(dir: string | undefined): StatFs {
  let fs: StatFs;
  try {
    fs = statfs(dir ?? "."); // through libc: also where Deno guards the path (/proc)
  } catch (e) {
    if (e instanceof SysError && e.code === "ENOENT") {
      throw new UsageError(`--dir ${dir} does not exist`);
    }
    throw e;
  }
  const system = SYSTEM_FILE_SYSTEMS[fs.type];
  if (system !== undefined) {
    throw new UsageError(
      `--dir ${dir ?? "."} is on ${system}, a kernel file system that holds no data files; ` +
        `give a directory on a disk`,
    );
  }
  if (dir !== undefined) {
    let isDir = false;
    try {
      isDir = Deno.statSync(dir).isDirectory;
    } catch (e) {
      if (e instanceof Deno.errors.NotFound) throw new UsageError(`--dir ${dir} does not exist`);
      const why = e instanceof Error ? e.message.split("\n")[0] : String(e);
      throw new UsageError(`--dir ${dir} cannot be used: ${why}`);
    }
    if (!isDir) throw new UsageError(`--dir ${dir} is not a directory`);
  }
  if (fs.inMemory) {
    warn(
      `${dir ?? "the current directory"} is on ${fs.typeName}, a memory file system: cold reads ` +
        `are impossible and these are memory numbers (fs_type=${fs.typeName})`,
    );
  }
  return fs;
}

/**
 * Checks `--dir` ({@link checkScratchParent}) and that its file system has room for `bytes`
 * ({@link checkFreeSpace}: `what` needs the room, `hint` says how to need less).
 */
export function checkScratchRoom(
  dir: string | undefined,
  bytes: number,
  what: string,
  hint: string,
): void {
  checkFreeSpace(checkScratchParent(dir), dir, bytes, what, hint);
}
