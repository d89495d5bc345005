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
 * Runs `fn` with a new empty directory inside `parent` (default the current directory) and
 * removes the directory and everything in it afterwards, whatever happens.
 */
export async function withScratchDir<T>(
  parent: string | undefined,
  fn: (dir: string) => Promise<T> | T,
): Promise<T> {
  const base = parent ?? ".";
  let dir: string;
  try {
    dir = Deno.makeTempDirSync({ dir: base, prefix: ".sciobench-" });
  } catch (e) {
    const why = e instanceof Error ? e.message : String(e);
    throw new IoError(`cannot create a scratch directory in ${base}: ${why}`);
  }
  live.add(dir);
  installHandlers();
  try {
    return await fn(dir);
  } finally {
    live.delete(dir);
    try {
      Deno.removeSync(dir, { recursive: true });
    } finally {
      removeHandlers();
    }
  }
}
