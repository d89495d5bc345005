/**
 * SIGINT and SIGTERM: every registered cleanup runs (newest first; each puts a file back or
 * removes a scratch directory), one line goes to stderr, and the process exits 130 (SIGINT) or
 * 143 (SIGTERM). Signals are handled where the program awaits ({@link signalPoint} in long
 * loops), so a cleanup always finds its files between two frames, never inside one.
 * @module
 */

/** Undoes one piece of unfinished work; returns a few words for the interrupt line, or nothing. */
export type Cleanup = () => string | void;

const cleanups: Cleanup[] = [];
let installed = false;

function interrupted(signal: "SIGINT" | "SIGTERM"): void {
  const notes: string[] = [];
  for (const cleanup of cleanups.splice(0).reverse()) {
    try {
      const note = cleanup();
      if (note) notes.push(note);
    } catch (e) {
      notes.push(`cleanup failed: ${e instanceof Error ? e.message : String(e)}`);
    }
  }
  const what = notes.length > 0 ? `; ${notes.join("; ")}` : "";
  console.error(`sciobench: interrupted by ${signal}${what}`);
  Deno.exit(signal === "SIGINT" ? 130 : 143);
}

const onSigint = () => interrupted("SIGINT");
const onSigterm = () => interrupted("SIGTERM");

/**
 * Registers `cleanup` to run if SIGINT or SIGTERM arrives; returns a function that unregisters
 * it (call it once the work is finished or undone).
 */
export function onInterrupt(cleanup: Cleanup): () => void {
  cleanups.push(cleanup);
  if (!installed) {
    installed = true;
    Deno.addSignalListener("SIGINT", onSigint);
    Deno.addSignalListener("SIGTERM", onSigterm);
  }
  return () => {
    const i = cleanups.lastIndexOf(cleanup);
    if (i >= 0) cleanups.splice(i, 1);
    if (cleanups.length === 0 && installed) {
      installed = false;
      Deno.removeSignalListener("SIGINT", onSigint);
      Deno.removeSignalListener("SIGTERM", onSigterm);
    }
  };
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
