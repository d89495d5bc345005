/**
 * The untimed warm-up before a table run's first timed cell: every in-process backend writes a
 * tiny file, opens it and reads it back verified, in order and at random, so that V8 has
 * compiled each backend's write and read code before any of them is timed and the first
 * backend measured does not pay for it inside its phases (nor for running it unoptimized), and
 * V8's first major garbage collection has run (lib/core/heap.ts).
 * @module
 */
import { writeFrames } from "../../backends/write.ts";
import type { Backend } from "../../backends/backend.ts";
import { rankScratchShare } from "../../mpi/phase.ts";
import { world } from "../../mpi/world.ts";
import { withScratchDir } from "../../io/scratch.ts";
import { beginPhase, endPhase } from "../../sys/audit.ts";
import { prepareVerified, Rng, shuffledOrder } from "../pattern.ts";
import { readOverlap, settleHeapUntimed } from "../transfer.ts";
import { readAsPhase, UNTIMED_PROGRESS } from "./cell.ts";
import { TableFrames } from "./frames.ts";
import { mpiIoSettings, ownFrames } from "../cells.ts";
import type { TableOptions } from "./options.ts";

/** Frames of each warm-up file. */
export const WARM_UP_FRAMES = 8;

/** Particles per frame of a warm-up file, at most (the run's smallest N when smaller). */
export const WARM_UP_N = 1024;

/**
 * Rounds of a warm-up file's reads (each: in order, then at random): enough for V8 to optimize
 * the read loop, the engine's calls and the verification, not only to compile them. Measured:
 * one round left a 448 KiB O_DIRECT read phase at io_uring depth 1 with 17-25 us of JavaScript
 * between a completion and the next submission, against 4-6 us once optimized. The read loop
 * itself runs once per phase and is optimized after a few hundred calls: at 32 rounds it was
 * still being compiled as the first timed read phase began.
 */
export const WARM_UP_ROUNDS = 256;

/** The name of `backend`'s warm-up file (in a scratch directory of its own). */
export function warmUpFile(backend: Backend): string {
  return `warm-up.${backend.name}${world().size > 1 ? `.r${world().rank}` : ""}`;
}

/**
 * Writes, opens and reads back (verified, in order then at random) a tiny file through each
 * backend measured in-process, untimed and without fsync, with the run's byte order and
 * transfer settings. Program peers are left out: each of their cells is a process of its own,
 * which warms itself. A failure is left to the backend's first timed cell, whose row says why.
 */
export async function warmUpBackends(
  backends: readonly Backend[],
  options: TableOptions,
): Promise<void> {
  const inProcess = backends.filter((b) => b.kind !== "program");
  if (inProcess.length === 0) return;
  const n = Math.min(WARM_UP_N, ...options.ns);
  const frames = new TableFrames(n, options.seed, world().rank);
  // the audit trail shows it apart, untimed
  beginPhase(WARM_UP_PHASE, false);
  try {
    await warmUpIn(inProcess, frames, options);
    // V8's first major collection, here rather than in the first timed phase
    // mutant: table-heap-settle
    await settleHeapUntimed();
  } finally {
    endPhase();
  }
}

/** The name of the warm-up's untimed phase in the audit trail. */
export const WARM_UP_PHASE = "backend warm-up";

/** {@link warmUpBackends}' files and reads, in a scratch directory of their own. */
async function warmUpIn(
  inProcess: readonly Backend[],
  frames: TableFrames,
  options: TableOptions,
): Promise<void> {
  await withScratchDir(options.dir, async (dir) => {
    for (const backend of inProcess) {
      const path = `${dir}/${warmUpFile(backend)}`;
      // through the cells' own writes and reads: their engine and depth where they have one
      const queue = backend.transfer ? options.queue : undefined;
      // each rank's own file (MPI-IO: on MPI_COMM_SELF, so no rank waits for another)
      const mpiIo = mpiIoSettings(backend, options.mpiIo, "per-rank", ownFrames(WARM_UP_FRAMES));
      try {
        await writeFrames(
          backend,
          path,
          {
            create: "truncate",
            endian: options.endianOf?.(backend.name) ?? options.endian,
            fsync: "none",
            transfer: options.transfer,
            mpiIo,
            queue,
          },
          WARM_UP_FRAMES,
          (i) => frames.frame(i),
        );
        const source = backend.openReader(path, {
          layout: frames.layout,
          transfer: options.transfer,
          mpiIo,
        });
        try {
          prepareVerified(source, frames);
          const overlap = readOverlap(options.transfer, options.overlap).mode !== "none";
          const seq = Uint32Array.from({ length: WARM_UP_FRAMES }, (_, i) => i);
          const rng = new Rng(options.seed);
          for (let r = 0; r < WARM_UP_ROUNDS; r++) {
            await readAsPhase(source, seq, frames, UNTIMED_PROGRESS, "read", overlap, queue);
            const order = shuffledOrder(WARM_UP_FRAMES, WARM_UP_FRAMES, rng);
            await readAsPhase(source, order, frames, UNTIMED_PROGRESS, "random", overlap, queue);
          }
        } finally {
          source.close();
        }
      } catch {
        // the same failure fails the backend's cells, each row saying why; the scratch
        // directory and what is left in it are removed at the end
      }
    }
    // every rank removes the shared directory as it leaves: none leaves while another still
    // writes or reopens its file there (PnetCDF reopens by path at begin_indep_data)
    // mutant: warm-up-leave-together
    world().barrier();
  }, rankScratchShare());
}
