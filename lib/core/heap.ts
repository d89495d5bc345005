/**
 * V8's first major garbage collection, brought forward into an untimed warm-up. A process starts
 * with a small old generation, whose first mark-compact (concurrent marking on the other core,
 * then a pause of 10-20 ms on the main thread) comes once startup and the warm-ups have filled
 * it: inside the first timed phase, which then ran 2-3 times slower than the same phase later
 * (a warm 128 MiB read: 1,300 MiB/s against 3,300). After it, the old generation's limit grows
 * with what is live, and a run of a few seconds sees no other.
 * @module
 */

/** Most ballast kept alive waiting for the collection, in bytes (then it gives up). */
const BALLAST_LIMIT_BYTES = 64 * 1024 * 1024;

/** Ballast added between two turns of the event loop, in bytes. */
const BALLAST_STEP_BYTES = 256 * 1024;

/**
 * Short-lived bytes allocated so that minor collections move the canary to the old generation
 * (and again at the end, to touch the young generation's pages).
 */
const PROMOTE_BYTES = 32 * 1024 * 1024;

/** Elements of each allocated array (8 bytes each at most). */
const ARRAY_LENGTH = 128;

/** Yields to the event loop, where V8's incremental marking tasks and finalizers run. */
const tick = () => new Promise<void>((resolve) => setTimeout(resolve, 0));

/** What {@link settleHeap} did. */
export interface HeapSettled {
  /** Whether a major collection ran (false: the ballast limit came first). */
  readonly collected: boolean;
  /** How long it took, in seconds. */
  readonly seconds: number;
}

/**
 * Runs the process's next major garbage collection now, untimed: a canary object is promoted to
 * the old generation and dropped, then ballast is kept alive, step by step, until a mark-compact
 * has freed the canary (a FinalizationRegistry says so) or {@link BALLAST_LIMIT_BYTES} is held.
 * The ballast is dropped at the end, and as many short-lived bytes again touch the pages the
 * young generation grew by meanwhile. Without V8 flags (`gc()` needs `--expose-gc`, and Deno's
 * shrinks the heap, so the next collection comes as soon).
 */
export async function settleHeap(): Promise<HeapSettled> {
  const start = performance.now();
  let collected = false;
  const registry = new FinalizationRegistry<number>(() => {
    collected = true;
  });
  // the canary is only reachable through `box` (never held in this suspended function's
  // registers), so deleting it leaves it unreachable
  const box: { canary?: object } = {};
  ((b) => {
    b.canary = { canary: true };
    registry.register(b.canary, 0);
  })(box);
  let sink = 0;
  for (let i = 0; i < PROMOTE_BYTES / (ARRAY_LENGTH * 8); i++) {
    sink += new Array<number>(ARRAY_LENGTH).fill(i).length;
  }
  await tick();
  delete box.canary;
  const ballast: number[][] = [];
  for (let held = 0; !collected && held < BALLAST_LIMIT_BYTES; held += BALLAST_STEP_BYTES) {
    for (let i = 0; i < BALLAST_STEP_BYTES / (ARRAY_LENGTH * 8); i++) {
      ballast.push(new Array<number>(ARRAY_LENGTH).fill(sink));
    }
    await tick();
  }
  ballast.length = 0;
  // The young generation grew while the ballast survived; its new pages are touched here. Left
  // to the first timed phase, every allocation site there faulted pages in: a raw read of 32 MiB
  // with a median frame read of 17 us against 6 us in later phases.
  // mutant: heap-settle-touch
  for (let i = 0; i < PROMOTE_BYTES / (ARRAY_LENGTH * 8); i++) {
    sink += new Array<number>(ARRAY_LENGTH).fill(i).length;
  }
  return { collected, seconds: (performance.now() - start) / 1000 };
}
