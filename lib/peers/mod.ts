/**
 * Peer backends: real C libraries (HDF5, netCDF-4, HDF4) through FFI, and external tools.
 * Each is a {@link Backend}; one that cannot load reports why through `unavailable()`.
 * @module
 */
import type { Backend } from "../io/store.ts";

/** Every peer backend, in the order `sciobench framings` lists them. */
export const PEERS: readonly Backend[] = [];
