/**
 * Scratch directories for benchmark files: created under a parent the user chose (default the
 * current directory, where fio and IOR also write), and always removed: on return, on error,
 * and on SIGINT or SIGTERM.
 * @module
 */
import { IoError } from "../errors.ts";

const live = new Set<string>();
let handlersInstalled = false;

function removeAll(): void {
  for (const dir of live) {
    try {
      Deno.removeSync(dir, { recursive: true });
    } catch {
      // best effort while exiting
    }
  }
  live.clear();
}

function onSigint(): void {
  removeAll();
  Deno.exit(130);
}

function onSigterm(): void {
  removeAll();
  Deno.exit(143);
}

function installHandlers(): void {
  if (handlersInstalled) return;
  handlersInstalled = true;
  Deno.addSignalListener("SIGINT", onSigint);
  Deno.addSignalListener("SIGTERM", onSigterm);
  globalThis.addEventListener("unload", removeAll);
}

function removeHandlers(): void {
  if (!handlersInstalled || live.size > 0) return;
  handlersInstalled = false;
  Deno.removeSignalListener("SIGINT", onSigint);
  Deno.removeSignalListener("SIGTERM", onSigterm);
  globalThis.removeEventListener("unload", removeAll);
}

let lastYield = 0;

/**
 * Lets pending signals (SIGINT, SIGTERM) be handled during a long synchronous loop: returns a
 * promise to await about every 100 ms, else undefined. The cost inside a timed loop is one clock
 * read per call and one event-loop turn (microseconds) per 100 ms.
 */
export function signalPoint(): Promise<void> | undefined {
  const now = performance.now();
  if (now - lastYield < 100) return undefined;
  lastYield = now;
  return new Promise((resolve) => setTimeout(resolve, 0));
}

/**
 * How ranks of a parallel run share one scratch directory: rank 0 creates it and `agree` gives
 * every rank rank 0's path (a broadcast); the other ranks create it where it is missing (a
 * node-local `--dir`). Every rank removes it afterwards, tolerating the others' removals.
 */
export interface ScratchShare {
  /** This process's rank; rank 0 creates the directory. */
  readonly rank: number;
  /** Returns rank 0's directory path on every rank (rank 0 passes its own). */
  agree(path: string): string;
  /**
   * Called by every rank once the directory exists there (`problem` is "") or could not be made:
   * throws on every rank when any rank has a problem, so none goes on alone.
   */
  check(problem: string): void;
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
 * Runs `fn` with a new empty directory inside `parent` (default the current directory) and
 * removes the directory and everything in it afterwards, whatever happens. With `share`, all
 * ranks of a parallel run get the same directory.
 */
export async function withScratchDir<T>(
  parent: string | undefined,
  fn: (dir: string) => Promise<T> | T,
  share?: ScratchShare,
): Promise<T> {
  const base = parent ?? ".";
  let dir = "";
  let problem = "";
  try {
    if (!share || share.rank === 0) {
      dir = Deno.makeTempDirSync({ dir: base, prefix: ".sciobench-" });
    }
  } catch (e) {
    problem = e instanceof Error ? e.message : String(e);
  }
  if (share) {
    // every rank takes part in the broadcast, even rank 0 after a failure ("" tells the others)
    dir = share.agree(dir);
    if (dir !== "" && share.rank !== 0) {
      try {
        Deno.mkdirSync(dir, { recursive: true });
      } catch (e) {
        problem = e instanceof Error ? e.message : String(e);
      }
    }
    if (dir === "" && problem === "") problem = "rank 0 could not create it";
    // every rank has its directory before any goes on (none recreates it after a failed rank
    // removed it), or all stop here together
    share.check(problem === "" ? "" : `${base}: ${problem}`);
  }
  if (problem !== "") throw new IoError(`cannot create a scratch directory in ${base}: ${problem}`);
  live.add(dir);
  installHandlers();
  try {
    return await fn(dir);
  } finally {
    live.delete(dir);
    try {
      if (share) removeTolerant(dir);
      else Deno.removeSync(dir, { recursive: true });
    } finally {
      removeHandlers();
    }
  }
}
