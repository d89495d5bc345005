/**
 * Scratch directories for benchmark files: created under a parent the user chose (default the
 * current directory, where fio and IOR also write), and always removed: on return, on error,
 * and on SIGINT or SIGTERM. Each holds an `owner` record (pid, host, start time), so a later run
 * in the same parent removes the directories of runs that were killed. A directory is never
 * without its owner: it is made under a temporary name that says whose it is
 * (`.sciobench-new-PID-...`), the owner record written inside, then renamed to its name; it is
 * removed with its owner record last. Owner-less empty ones are removed once they are a minute
 * old. Under MPI a reaper process beside the first rank of each host (lib/io/reaper.ts) removes
 * the directory when that rank is killed, from before the directory exists until it is removed.
 * @module
 */
import { IoError } from "../core/errors.ts";
import { warn } from "../core/diagnostics.ts";
import { onInterrupt } from "./interrupt.ts";
import { ownerGone, parseOwner, processStart, thisOwner } from "./owner.ts";
import { type Reaper, startReaper } from "./reaper.ts";

export { signalPoint } from "./interrupt.ts";

/** Prefix of every scratch directory's name. */
export const SCRATCH_PREFIX = ".sciobench-";

/** Name of the owner record inside a scratch directory. */
const OWNER_FILE = "owner";

/** Prefix of a scratch directory's name while its owner record is written (then `PID-`). */
const NEW_PREFIX = `${SCRATCH_PREFIX}new-`;

/** Age after which an owner-less empty scratch directory is removed, milliseconds. */
const OWNERLESS_AGE_MS = 60_000;

/** Random letters and digits for a directory name. */
function randomName(): string {
  return crypto.randomUUID().replaceAll("-", "").slice(0, 12);
}

/**
 * The two names of one scratch directory in its parent: `temp` (`.sciobench-new-PID-RANDOM`)
 * while its owner record is written, then `dir` (`.sciobench-RANDOM`).
 */
interface DirNames {
  readonly temp: string;
  readonly dir: string;
}

function newNames(parent: string): DirNames {
  return {
    temp: `${parent}/${NEW_PREFIX}${Deno.pid}-${randomName()}`,
    dir: `${parent}/${SCRATCH_PREFIX}${randomName()}`,
  };
}

/**
 * Makes the scratch directory `names.dir` holding `owner` (its owner record) from its first
 * moment under that name: made as `names.temp` (mode 0700), the record written inside, then
 * renamed. Throws `AlreadyExists` when either name is taken, leaving the other's untouched.
 */
function makeOwnedDir(names: DirNames, owner: string): void {
  Deno.mkdirSync(names.temp, { mode: 0o700 });
  try {
    Deno.writeTextFileSync(`${names.temp}/${OWNER_FILE}`, owner);
    // rename(2) would replace an empty directory of that name: never take another's name
    if (exists(names.dir)) throw new Deno.errors.AlreadyExists(names.dir);
    Deno.renameSync(names.temp, names.dir);
  } catch (e) {
    removeOwnedDir(names.temp);
    throw e;
  }
}

/**
 * Makes a scratch directory in `parent` (see {@link makeOwnedDir}; a taken name is tried again
 * with new ones) and returns its path, with its reaper when `withReaper`: started before the
 * directory exists and told it is the rank's as soon as it is, so that the rank killed at any
 * moment leaves nothing behind.
 */
async function makeScratch(
  parent: string,
  withReaper: boolean,
): Promise<{ dir: string; reaper?: Reaper }> {
  const owner = JSON.stringify(thisOwner());
  for (let attempt = 0;; attempt++) {
    const names = newNames(parent);
    const reaper = withReaper ? startReaper({ ...names, owner }) : undefined;
    try {
      makeOwnedDir(names, owner);
    } catch (e) {
      await reaper?.finish();
      if (e instanceof Deno.errors.AlreadyExists && attempt < 10) continue;
      throw e;
    }
    await reaper?.claim();
    return { dir: names.dir, reaper };
  }
}

function exists(path: string): boolean {
  try {
    Deno.lstatSync(path);
    return true;
  } catch {
    return false;
  }
}

/**
 * Removes the scratch directory `dir` and everything in it, its owner record last (so that a
 * kill during the removal leaves a directory a later run can judge by its owner).
 */
function removeOwnedDir(dir: string): void {
  let entries: Deno.DirEntry[];
  try {
    entries = [...Deno.readDirSync(dir)];
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) return;
    throw e;
  }
  for (const e of entries) {
    if (e.name !== OWNER_FILE) Deno.removeSync(`${dir}/${e.name}`, { recursive: true });
  }
  try {
    Deno.removeSync(`${dir}/${OWNER_FILE}`);
  } catch (e) {
    if (!(e instanceof Deno.errors.NotFound)) throw e;
  }
  Deno.removeSync(dir);
}

const live = new Set<string>();

function removeAll(): void {
  for (const dir of live) {
    try {
      removeOwnedDir(dir);
    } catch {
      // best effort while exiting
    }
  }
  live.clear();
}

/**
 * Removes the scratch directories in `parent` whose owner ran on this host and is dead, each
 * said in one line on stderr; returns their paths. Owner-less directories are removed when empty
 * and over a minute old (a run was killed while it made or removed one); those with files, of
 * live owners or other hosts, and `own` (the caller's) are left alone.
 */
export function removeStaleScratch(parent: string, own = ""): string[] {
  const removed: string[] = [];
  let entries: Deno.DirEntry[];
  try {
    entries = [...Deno.readDirSync(parent)];
  } catch {
    return removed;
  }
  for (const e of entries) {
    if (!e.isDirectory || !e.name.startsWith(SCRATCH_PREFIX)) continue;
    const dir = `${parent}/${e.name}`;
    if (dir === own) continue;
    let owner;
    try {
      owner = parseOwner(Deno.readTextFileSync(`${dir}/${OWNER_FILE}`));
    } catch {
      owner = undefined;
    }
    if (owner === undefined) {
      if (removeOwnerless(dir)) removed.push(dir);
      continue;
    }
    if (!ownerGone(owner)) continue;
    try {
      removeOwnedDir(dir);
    } catch {
      continue;
    }
    warn(`removed stale scratch directory ${dir} left by process ${owner.pid}, no longer running`);
    removed.push(dir);
  }
  return removed;
}

/**
 * Removes `dir` when it has no owner record, holds nothing (or only a torn owner record) and
 * either was last changed over a minute ago or is named for a process that no longer runs
 * (`.sciobench-new-PID-...`), saying so in one line; true when it did.
 */
function removeOwnerless(dir: string): boolean {
  try {
    const name = dir.slice(dir.lastIndexOf("/") + 1);
    const pid = name.startsWith(NEW_PREFIX)
      ? Number(name.slice(NEW_PREFIX.length).split("-")[0])
      : 0;
    const dead = Number.isSafeInteger(pid) && pid > 0 && pid !== Deno.pid &&
      processStart(pid) === undefined;
    const mtime = Deno.statSync(dir).mtime?.getTime();
    if (!dead && (mtime === undefined || Date.now() - mtime < OWNERLESS_AGE_MS)) return false;
    const names = [...Deno.readDirSync(dir)].map((e) => e.name);
    if (names.some((n) => n !== OWNER_FILE)) return false;
    if (names.length > 0) Deno.removeSync(`${dir}/${OWNER_FILE}`);
    Deno.removeSync(dir); // rmdir: refused if a file appeared meanwhile
  } catch {
    return false;
  }
  warn(`removed empty scratch directory ${dir} without an owner record, left by a killed run`);
  return true;
}

/**
 * How ranks of a parallel run share one scratch directory: rank 0 creates it and `agree` gives
 * every rank rank 0's path (a broadcast); the first rank of each other host creates it there
 * where it is missing (a node-local `--dir`). Every rank removes it afterwards, tolerating the
 * others' removals.
 */
export interface ScratchShare {
  /** This process's rank; rank 0 creates the directory. */
  readonly rank: number;
  /**
   * True on the first rank of each host (rank 0 on its own): it makes the directory on its host
   * where missing and keeps a reaper beside it (lib/io/reaper.ts) that removes the directory
   * (every rank's files) when this rank ends without finishing, killed by SIGKILL or by a
   * launcher that stops the job after another rank died. The other ranks never make it, so none
   * makes it again after a reaper removed it.
   */
  readonly firstOnHost: boolean;
  /** Returns rank 0's directory path on every rank (rank 0 passes its own). */
  agree(path: string): string;
  /**
   * Called by every rank once the directory exists there (`problem` is "") or could not be made:
   * throws on every rank when any rank has a problem, so none goes on alone.
   */
  check(problem: string): void;
  /**
   * Called on this rank when the work fails, before the directory is removed: a rank whose
   * failure no collective step will tell the others reports it first, so its line is out
   * before the other ranks find the directory gone and fail on that.
   */
  failing?(error: unknown): void;
}

function removeTolerant(dir: string): void {
  for (let attempt = 0;; attempt++) {
    try {
      Deno.removeSync(dir, { recursive: true });
      return;
    } catch (e) {
      if (e instanceof Deno.errors.NotFound) return;
      // another rank removing the same directory at once: retry, then give up quietly
      if (attempt >= 3) {
        try {
          Deno.statSync(dir);
        } catch {
          return;
        }
        throw e;
      }
    }
  }
}

/**
 * Makes this rank's scratch directory in `base` (rank 0 and a lone run make it; with `share`,
 * the first rank of each other host makes rank 0's path there where missing), each with its
 * reaper under MPI. Throws, with nothing left behind, when any rank could not.
 */
async function makeShared(
  base: string,
  share: ScratchShare | undefined,
): Promise<{ dir: string; reaper?: Reaper }> {
  let made: { dir: string; reaper?: Reaper } = { dir: "" };
  let problem = "";
  try {
    if (!share || share.rank === 0) {
      made = await makeScratch(base, share?.firstOnHost ?? false);
      removeStaleScratch(base, made.dir);
    }
  } catch (e) {
    problem = e instanceof Error ? e.message : String(e);
  }
  try {
    if (share) {
      // every rank takes part in the broadcast, even rank 0 after a failure ("" tells the others)
      made.dir = share.agree(made.dir);
      if (made.dir !== "" && share.rank !== 0 && share.firstOnHost) {
        // the reaper first: no moment leaves the new directory without one
        made.reaper = startReaper({ dir: made.dir, temp: "", owner: "" });
        try {
          Deno.mkdirSync(made.dir, { recursive: true });
        } catch (e) {
          problem = e instanceof Error ? e.message : String(e);
        }
      }
      if (made.dir === "" && problem === "") problem = "rank 0 could not create it";
      // every rank has its directory before any goes on, or all stop here together
      share.check(problem === "" ? "" : `${base}: ${problem}`);
    }
    if (problem !== "") {
      throw new IoError(`cannot create a scratch directory in ${base}: ${problem}`);
    }
    return made;
  } catch (e) {
    try {
      if (made.dir !== "") removeTolerant(made.dir);
    } finally {
      await made.reaper?.finish();
    }
    throw e;
  }
}

/**
 * Runs `fn` with a new empty directory inside `parent` (default the current directory) and
 * removes the directory and everything in it afterwards, whatever happens. With `share`, all
 * ranks of a parallel run get the same directory. Stale scratch directories of dead runs in
 * `parent` are removed first (by rank 0).
 */
export async function withScratchDir<T>(
  parent: string | undefined,
  fn: (dir: string) => Promise<T> | T,
  share?: ScratchShare,
): Promise<T> {
  const { dir, reaper } = await makeShared(parent ?? ".", share);
  live.add(dir);
  if (live.size === 1) globalThis.addEventListener("unload", removeAll);
  const unregister = onInterrupt(() => {
    if (live.delete(dir)) removeTolerant(dir);
  });
  try {
    return await fn(dir);
  } catch (e) {
    share?.failing?.(e);
    throw e;
  } finally {
    unregister();
    try {
      if (live.delete(dir)) {
        if (share) removeTolerant(dir);
        else removeOwnedDir(dir);
      }
    } finally {
      if (live.size === 0) globalThis.removeEventListener("unload", removeAll);
      // only now: the reaper removes what is left should the rank be killed before this
      await reaper?.finish();
    }
  }
}
