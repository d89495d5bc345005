/**
 * The run's MPI-IO, as the backends that use it find it: lib/mpi/world.ts installs it once MPI is
 * initialised under a launcher (mpirun, mpiexec, srun); without a launcher there is none, and
 * every backend that declares the `mpiIo` capability is unavailable with one reason.
 * @module
 */
import type { Backend, MpiIo } from "./backend.ts";

let installed: MpiIo | undefined;

/** Makes `io` the run's MPI-IO (lib/mpi/world.ts, after MPI_Init). */
export function installMpiIo(io: MpiIo): void {
  installed = io;
}

/** The run's MPI-IO, or undefined when this process was not started by an MPI launcher. */
export function installedMpiIo(): MpiIo | undefined {
  return installed;
}

/** Why a backend with the `mpiIo` capability cannot run in this process. */
export const NO_MPI_LAUNCHER = "it runs only under an MPI launcher (mpirun, mpiexec, srun), " +
  "through MPI-IO of the launcher's MPI library; this process was not started by one";

/**
 * Why `backend` cannot run here because it needs MPI-IO and there is none (no launcher), or its
 * own library for the launcher's MPI is missing (its capability's `problem`), or null: it does
 * not use MPI-IO, or it can run.
 */
export function mpiIoProblem(backend: Pick<Backend, "mpiIo">): string | null {
  if (backend.mpiIo === undefined) return null;
  if (installed === undefined) return NO_MPI_LAUNCHER;
  return backend.mpiIo.problem?.(installed) ?? null;
}
