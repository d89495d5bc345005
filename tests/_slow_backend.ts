/**
 * `slow`: gsd with a delay injected into its read path, registered on import with registerBackend
 * and nothing else (never a hook in lib/). Every frame read (verified or not) is followed by a
 * wait of SCIOBENCH_SLOW_FACTOR times the time the read took (default 0: gsd's own speed), so
 * `SCIOBENCH_SLOW_FACTOR=0.25` makes reads take 1.25 times as long: a read rate 20% lower. tests/compare_test.ts and tools/aa_compare.ts compare runs of it. Run as a program,
 * this module is the sciobench CLI with `slow` registered.
 * @module
 */
import type { Backend, FrameSource } from "../lib/backends/backend.ts";
import { backendByName, registerBackend } from "../lib/backends/registry.ts";
import { runCli } from "../lib/cli/main.ts";

/** The environment variable holding the delay factor. */
export const SLOW_FACTOR_ENV = "SCIOBENCH_SLOW_FACTOR";

/**
 * Waits `ms` milliseconds on this thread, spinning on the clock: the wait is exact on a quiet
 * machine. A sleep is not: a vCPU that idles for a millisecond comes back with cold caches (and
 * may be descheduled by the host), so the reads after it slow down too and the injected change
 * grows well beyond the factor asked (a factor of 0.25 measured as 0.63 of the read rate, not
 * 0.8). On a loaded machine a spin is preempted as the reads around it are.
 */
function delay(ms: number): void {
  const until = performance.now() + ms;
  while (performance.now() < until) {
    // spin
  }
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
