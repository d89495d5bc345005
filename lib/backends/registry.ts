/**
 * The one registry of backends: the native framings (run by the engine), `mpiio` (the raw
 * framing through MPI-IO, lib/backends/mpiio.ts), the library peers and the program peers, by
 * name; and the one detection of a file's backend, driven by the magic
 * numbers each backend declares. Adding a native framing is one file (or folder) in
 * lib/framings plus one line in {@link FRAMINGS}; adding a peer is one folder in lib/peers plus
 * one line in lib/peers/mod.ts; what it can do it declares itself (its `Capabilities`), so no
 * other file names it. Every backend is registered behind the guard (lib/backends/guard.ts).
 * Tests and plugins add backends with {@link registerBackend}.
 * @module
 */
import { FormatError, PeerUnavailableError, UsageError } from "../core/errors.ts";
import { f77 } from "../framings/f77/mod.ts";
import { gsd } from "../framings/gsd/mod.ts";
import { ieeeio } from "../framings/ieeeio/mod.ts";
import { netcdf } from "../framings/netcdf/mod.ts";
import { raw } from "../framings/raw.ts";
import { zarr, zarrV3 } from "../framings/zarr/mod.ts";
import { type Framing, matchesMagic } from "../framings/types.ts";
import { PEERS } from "../peers/mod.ts";
import { didYouMean } from "../core/suggest.ts";
import { nativeBackend } from "./engine.ts";
import { engineBackend } from "./guard.ts";
import { mpiio } from "./mpiio.ts";
import { pnetcdf } from "./pnetcdf.ts";
import { netcdf4Par } from "./netcdf4_par.ts";
import { FileHandle } from "../io/file.ts";
import { hasMember, isDirectory } from "../io/store.ts";
import type { Backend } from "./backend.ts";
import { hexBytes } from "../framings/kit.ts";

/** Every native framing, in the order `sciobench framings` lists them. */
export const FRAMINGS: readonly Framing[] = [gsd, raw, ieeeio, netcdf, f77, zarr, zarrV3];

const registered: Backend[] = [
  ...FRAMINGS.map(nativeBackend),
  engineBackend(mpiio),
  engineBackend(pnetcdf),
  engineBackend(netcdf4Par),
  ...PEERS.map(engineBackend),
];

/**
 * Every backend: native framings first, then mpiio (raw frames through MPI-IO), then peers (and
 * any added by {@link registerBackend}).
 */
export const BACKENDS: readonly Backend[] = registered;

/**
 * Adds a backend (a framing through {@link nativeBackend}, or a peer) to the registry, where
 * every command finds it by name and detection; UsageError when the name is taken.
 */
export function registerBackend(backend: Backend): void {
  if (registered.some((b) => b.name === backend.name)) {
    throw new UsageError(`a backend named '${backend.name}' is already registered`);
  }
  registered.push(engineBackend(backend));
}

/** Removes a backend added by {@link registerBackend} (tests clean up with it). */
export function unregisterBackend(name: string): void {
  const i = registered.findIndex((b) => b.name === name);
  if (i >= 0) registered.splice(i, 1);
}

/** The backend registered as `name`; UsageError listing known names (and the nearest) when there is none. */
export function backendByName(name: string): Backend {
  const b = BACKENDS.find((x) => x.name === name);
  if (!b) {
    const known = BACKENDS.map((x) => x.name);
    throw new UsageError(
      `unknown backend '${name}'${didYouMean(name, known)}; known: ${known.join(", ")}`,
    );
  }
  return b;
}

/** Like {@link backendByName}, but also PeerUnavailableError when the backend cannot run here. */
export function usableBackend(name: string): Backend {
  const b = backendByName(name);
  const why = b.unavailable();
  if (why !== null) throw new PeerUnavailableError(`backend '${name}' is unavailable: ${why}`);
  return b;
}

/**
 * The backend whose format a file's first bytes (`head`, up to 4096) and size show: among the
 * backends whose declared magic number matches, the first usable one whose `detect` (if any)
 * agrees; when no magic number of any backend matches, the first usable backend without magic
 * numbers whose heuristic `detect` agrees. undefined when none does.
 */
export function detectFormat(
  head: Uint8Array,
  fileSize: number,
  backends: readonly Backend[] = BACKENDS,
): Backend | undefined {
  const usable = (b: Backend) =>
    b.unavailable() === null && (b.detect === undefined || b.detect(head, fileSize));
  const byMagic = backends.filter((b) => matchesMagic(b.magic, head));
  if (byMagic.length > 0) return byMagic.find(usable);
  return backends.find((b) => b.magic.length === 0 && b.detect !== undefined && usable(b));
}

/**
 * The usable backend whose stores (directories of member files) the directory `path` is one of:
 * the first that declares a member name (Backend.store) present in it. FormatError when none.
 */
export function detectStoreBackend(path: string, backends: readonly Backend[] = BACKENDS): Backend {
  const stores = backends.filter((b) => b.store !== undefined);
  const found = stores.find((b) =>
    b.unavailable() === null && b.store!.markers.some((m) => hasMember(path, m))
  );
  if (found !== undefined) return found;
  const markers = [...new Set(stores.flatMap((b) => b.store!.markers))].join(", ");
  throw new FormatError(
    "detect",
    path,
    -1,
    `a directory holding none of ${markers}: not a store sciobench reads; give a file, or a ` +
      "store's directory",
  );
}

/**
 * The backend whose format `path` is in, judged from its first 4096 bytes (a directory: from
 * the member names of stores, {@link detectStoreBackend}); FormatError when none matches.
 */
export function detectBackend(path: string): Backend {
  if (isDirectory(path)) return detectStoreBackend(path);
  const f = FileHandle.open(path, "read");
  let head: Uint8Array;
  let size: number;
  try {
    size = f.size;
    head = new Uint8Array(Math.min(4096, size));
    f.readInto(head, 0);
  } finally {
    f.close();
  }
  const b = detectFormat(head, size);
  if (!b) {
    const hex = hexBytes(head.subarray(0, 8));
    throw new FormatError(
      "detect",
      path,
      0,
      `unknown format (first bytes ${hex || "none: the file is empty"}); name one with --framing`,
    );
  }
  return b;
}
