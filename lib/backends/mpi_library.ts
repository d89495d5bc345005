/**
 * The end of a write the backends that write one file through an MPI-aware library share
 * (`pnetcdf`, `netcdf4-par`): a file of this rank's own is finished and closed; a shared file is
 * finished only once every rank says it wrote its share, and closed only once every rank says
 * the finish went well (the `mpiio` backend's protocol); a close that fails removes the file
 * (rank 0's, when shared). Each backend supplies its library's calls.
 * @module
 */
import { removeQuietly } from "../peers/common.ts";
import type { MpiHandles } from "./backend.ts";

/** A sink's library calls and state that {@link closeLibraryWrite} drives. */
export interface LibraryWrite {
  /** This rank's part of a shared file, or undefined for a file of this rank's own. */
  readonly part: { readonly count: number } | undefined;
  /** True when this rank wrote its whole part without a failure. */
  readonly wrote: () => boolean;
  /** The library calls that end the write (the durable point among them); throws on failure. */
  readonly finish: () => void;
  /**
   * The ranks' agreement on a shared file: 0, or -1 when this rank failed; throws when any rank
   * failed (see abandonSharedFile in lib/peers/common.ts).
   */
  readonly agree: (value: number) => void;
  /** Keeps the failure of `finish` (undefined when it went well) as this rank's own. */
  readonly setFailure: (failure: unknown) => void;
  /** Closes the file (collective when shared); see {@link closeOrRemove}. */
  readonly closeFile: () => void;
  /** Abandons a file of this rank's own: closes it quietly and removes it. */
  readonly abort: () => void;
}

/** Ends `w`'s write: finishes and closes the file, agreed with every rank when it is shared. */
export function closeLibraryWrite(w: LibraryWrite): void {
  if (w.part === undefined) {
    try {
      w.finish();
    } catch (e) {
      w.abort();
      throw e;
    }
    w.closeFile();
    return;
  }
  w.agree(w.wrote() ? 0 : -1);
  let failure: unknown;
  try {
    w.finish();
  } catch (e) {
    failure = e;
  }
  w.setFailure(failure);
  w.agree(failure === undefined ? 0 : -1);
  w.closeFile();
}

/**
 * Closes `path` through the library's `close` (which throws on failure); when it fails the file
 * is removed (by rank 0 when shared) before the failure goes on. The handles are freed either way.
 */
export function closeOrRemove(h: MpiHandles, path: string, close: () => void): void {
  try {
    close();
  } catch (e) {
    if (h.rank === 0) removeQuietly(path);
    throw e;
  } finally {
    h.free();
  }
}
