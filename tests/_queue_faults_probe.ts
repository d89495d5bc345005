/**
 * Prints the minor page faults of this thread while a raw file (argument 1) is read through a
 * queue of depth 8 (io_uring, buffered), after `reserveQueued` when argument 2 is `reserve`: a
 * fresh process, so no spare buffer of an earlier read hides the faults.
 * @module
 */
import { nativeBackend } from "../lib/backends/engine.ts";
import { FRAMINGS } from "../lib/backends/registry.ts";
import { getrusage, RUSAGE } from "../lib/sys/libc.ts";

const [path, mode] = Deno.args;
const source = nativeBackend(FRAMINGS.find((f) => f.name === "raw")!).openReader(path!, {});
const queue = { engine: "io_uring", depth: 8 } as const;
const order = Uint32Array.from({ length: source.frameCount }, (_, i) => i);
if (mode === "reserve") source.reserveQueued!(queue);
const before = getrusage(RUSAGE.THREAD).minorFaults;
source.readFramesQueued!(order, queue, () => {});
console.log(getrusage(RUSAGE.THREAD).minorFaults - before);
source.close();
