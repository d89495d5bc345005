/**
 * The readers of what backends declare they can do (lib/backends/backend.ts, `Capabilities`):
 * callers ask these, never a backend's name, and give the one-line messages they return. The
 * transfer capability is read by the guard (lib/backends/guard.ts, `checkTransfer`), the fsync
 * policies by lib/backends/write.ts (`fsyncRefusal`).
 * @module
 */
import { UsageError } from "../core/errors.ts";
import { withWriteDefaults } from "../framings/options.ts";
import type { Backend, DatasetLimit, FileLayout } from "./backend.ts";
import { BACKENDS } from "./registry.ts";

/** Why `backend` cannot store elements of type `dtype` (one line naming it), or null when it can. */
export function unstorableReason(backend: Backend, dtype: string): string | null {
  const limit = backend.dtypes;
  if (limit === undefined || limit.only.some((t) => t === dtype)) return null;
  return limit.refusal(dtype);
}

/** UsageError (one line, exit 2) when `backend` cannot store `dtype` (`--type T`). */
export function refuseUnstorable(backend: Backend, dtype: string): void {
  const why = unstorableReason(backend, dtype);
  if (why !== null) throw new UsageError(`--type ${dtype}: ${why}`);
}

/**
 * True when MPI ranks can write one file together through `backend` (`--layout shared`): a
 * native framing whose layout follows from the frame sizes (lib/mpi/shared.ts), or a backend
 * whose MPI-IO writes shared files.
 */
export function writesSharedFile(backend: Pick<Backend, "sharedLayout" | "mpiIo">): boolean {
  return backend.sharedLayout || (backend.mpiIo?.layouts.includes("shared") ?? false);
}

/**
 * UsageError (one line, exit 2) unless `backend` can be one file written by every MPI rank
 * (`--layout shared`); the message lists those of `backends` that can.
 */
export function checkSharedLayout(
  backend: Pick<Backend, "name" | "sharedLayout" | "mpiIo">,
  backends: readonly Backend[] = BACKENDS,
): void {
  if (writesSharedFile(backend)) return;
  const can = backends.filter(writesSharedFile).map((b) => b.name);
  throw new UsageError(
    `--layout shared works for ${can.join(", ")} only; '${backend.name}' ` +
      `cannot place frames at offsets known in advance (use --layout per-rank)`,
  );
}

/**
 * UsageError (one line, exit 2) when `backend` does its I/O through MPI-IO and does not write
 * files of `layout` (a backend without MPI-IO takes either).
 */
export function checkMpiIoLayout(
  backend: Pick<Backend, "name" | "mpiIo">,
  layout: FileLayout,
): void {
  const layouts = backend.mpiIo?.layouts;
  if (layouts === undefined || layouts.includes(layout)) return;
  throw new UsageError(
    `--layout ${layout}: ${backend.name} writes ${layouts.join(" or ")} files only`,
  );
}

/**
 * UsageError (one line) when `backend` goes through MPI-IO but cannot place a shared file's
 * frames in `segments` interleaved blocks per rank (`--segments` above 1).
 */
export function checkMpiIoSegments(
  backend: Pick<Backend, "name" | "mpiIo">,
  segments: number,
): void {
  if (segments === 1 || backend.mpiIo === undefined || backend.mpiIo.segments) return;
  const able = BACKENDS.filter((b) => b.sharedLayout || b.mpiIo?.segments).map((b) => b.name);
  throw new UsageError(
    `--segments ${segments}: ${backend.name} writes each rank's frames as one block; use ` +
      `--segments 1, or one of ${able.join(", ")} for interleaved blocks`,
  );
}

/**
 * The limit `datasets` datasets in one file of `backend` exceed (one dataset per chunk of every
 * frame), or undefined when they fit or the backend has no such limit.
 */
export function exceededDatasetLimit(
  backend: Backend,
  datasets: number,
): DatasetLimit | undefined {
  const limit = backend.limits?.datasets;
  return limit !== undefined && datasets > limit.max ? limit : undefined;
}

/**
 * Why the files of `backend` cannot be read directly (one line naming it and those that can), or
 * null when it declares {@link Backend.frameChunks}.
 */
export function directReadRefusal(
  backend: Backend,
  backends: readonly Backend[] = BACKENDS,
): string | null {
  if (backend.frameChunks !== undefined) return null;
  const able = backends.filter((b) => b.frameChunks !== undefined).map((b) => b.name);
  return backend.kind === "native"
    ? `${backend.name} is read by sciobench's own reads already (access native)`
    : `${backend.name}'s files are read through its library only; direct reads take ` +
      `${able.join(" and ")} files`;
}

/** The name users know the library `backend` loads by (`HDF5`), else the backend's name. */
export function libraryName(backend: Backend): string {
  return backend.library?.displayName ?? backend.name;
}

/**
 * Bytes a record of `payloadBytes` takes in a file `backend` writes with the options `given`
 * (its declared defaults filled in): the payload plus the format's framing of it (f77's record
 * markers).
 */
export function recordFileBytes(
  backend: Backend,
  payloadBytes: number,
  given: Readonly<Record<string, unknown>> | undefined,
): number {
  return backend.recordBytes?.(payloadBytes, withWriteDefaults(backend, given)) ?? payloadBytes;
}
