/**
 * `slow`: gsd with a delay injected into its read path, registered on import with registerBackend
 * and nothing else (never a hook in lib/). Every frame read (verified or not) is followed by a sleep of SCIOBENCH_SLOW_FACTOR times the time the read took (default 0: gsd's
 * own speed), so `SCIOBENCH_SLOW_FACTOR=0.25` makes reads take 1.25 times as long: a read rate
 * 20% lower. tests/compare_test.ts and tools/aa_compare.ts compare runs of it. Run as a program,
 * this module is the sciobench CLI with `slow` registered.
 * @module
 */
import type { Backend, FrameSource } from "../lib/backends/backend.ts";
import { backendByName, registerBackend } from "../lib/backends/registry.ts";
import { runCli } from "../lib/cli/main.ts";

/** The environment variable holding the delay factor. */
export const SLOW_FACTOR_ENV = "SCIOBENCH_SLOW_FACTOR";

const cell = new Int32Array(new SharedArrayBuffer(4));

/**
 * The delay owed, in milliseconds. Paid in sleeps of 1 ms or more (a sleep overshoots by a
 * scheduler's wake-up, about 0.1 ms, which would double the delay of a 0.1 ms read), each
 * overshoot taken off what is owed next: the total stays the factor times the reads' time. A
 * sleep, not a busy wait: a spinning thread on a loaded machine is preempted for far longer
 * than it asked.
 */
let owed = 0;

/** Adds `ms` milliseconds to the delay owed and pays it once it reaches 1 ms. */
function delay(ms: number): void {
  owed += ms;
  if (owed < 1) return;
  const start = performance.now();
  Atomics.wait(cell, 0, 0, owed);
  owed -= performance.now() - start;
}

/** The read methods delayed. */
const SYNC = new Set(["readFrame", "readFrameStored"]);
/**
 * What `slow` does not offer, whatever its factor: reads on another thread. A busy wait after an
 * async read would also time the caller's work and the waits of the reads before (they overlap),
 * so each read's delay would grow with the last one's.
 */
const HIDDEN = new Set(["readFrameAsync", "readFrameStoredAsync", "pipelined"]);

/**
 * `source` read on the caller's thread only, each frame read followed by `factor` times its own
 * duration of busy waiting.
 */
export function delayed(source: FrameSource, factor: number): FrameSource {
  return new Proxy(source, {
    has: (target, key) => !(typeof key === "string" && HIDDEN.has(key)) && key in target,
    get(target, key) {
      if (typeof key === "string" && HIDDEN.has(key)) return undefined;
      const value = Reflect.get(target, key);
      if (typeof key !== "string" || typeof value !== "function") return value;
      if (SYNC.has(key) && factor > 0) {
        return (...args: unknown[]) => {
          const start = performance.now();
          const out = value.apply(target, args);
          delay((performance.now() - start) * factor);
          return out;
        };
      }
      return value.bind(target);
    },
  });
}

const gsd = backendByName("gsd");
const factor = Number(Deno.env.get(SLOW_FACTOR_ENV) ?? "0");

/** gsd under the name `slow`, its reads delayed by {@link SLOW_FACTOR_ENV}. */
export const slowBackend: Backend = {
  ...gsd,
  name: "slow",
  description: `gsd with reads delayed by ${SLOW_FACTOR_ENV} (tests/_slow_backend.ts)`,
  // never detected from a file's bytes: gsd's files are gsd's
  magic: [],
  detect: undefined,
  openReader: (path, options) => delayed(gsd.openReader(path, options), factor),
};

registerBackend(slowBackend);

if (import.meta.main) {
  // Child processes (library child, readers) run this program too, so they know `slow`.
  Deno.env.set("SCIOBENCH_SELF", new URL(import.meta.url).pathname);
  Deno.exit(await runCli(Deno.args));
}
