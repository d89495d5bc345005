/**
 * Every backend by name: the native framings (through the engine) and the peer libraries;
 * and detection of a file's backend from its first bytes. Adding a native framing is one new
 * file in lib/framings plus one line in {@link FRAMINGS}.
 * @module
 */
import { FormatError, PeerUnavailableError, UsageError } from "../errors.ts";
import { f77 } from "../framings/f77.ts";
import { gsd } from "../framings/gsd/mod.ts";
import { ieeeio } from "../framings/ieeeio.ts";
import { netcdf } from "../framings/netcdf/mod.ts";
import { raw } from "../framings/raw.ts";
import type { Framing } from "../framings/types.ts";
import { PEERS } from "../peers/mod.ts";
import { nativeBackend } from "./engine.ts";
import { FileHandle } from "../io/file.ts";
import type { Backend } from "./backend.ts";

/** Every native framing, in the order detection tries them (formats with a magic number first). */
export const FRAMINGS: readonly Framing[] = [
  gsd,
  raw,
  ieeeio,
  netcdf,
  f77, // no magic number (marker consistency only): keep after every format that has one
];

/** The framing registered as `name`; throws UsageError listing the known names otherwise. */
export function framingByName(name: string): Framing {
  const f = FRAMINGS.find((x) => x.name === name);
  if (!f) {
    throw new UsageError(
      `unknown framing '${name}'; known: ${FRAMINGS.map((x) => x.name).join(", ")}`,
    );
  }
  return f;
}

/** The first framing whose `detect` accepts the head bytes and size, or undefined. */
export function detectFraming(head: Uint8Array, fileSize: number): Framing | undefined {
  return FRAMINGS.find((f) => !f.heuristicDetect && f.detect(head, fileSize)) ??
    FRAMINGS.find((f) => f.heuristicDetect && f.detect(head, fileSize));
}

/** Native framings first, then peers. */
export const BACKENDS: readonly Backend[] = [...FRAMINGS.map(nativeBackend), ...PEERS];

/** The backend registered as `name`; UsageError listing known names when there is none. */
export function backendByName(name: string): Backend {
  const b = BACKENDS.find((x) => x.name === name);
  if (!b) {
    throw new UsageError(
      `unknown framing '${name}'; known: ${BACKENDS.map((x) => x.name).join(", ")}`,
    );
  }
  return b;
}

/** Like {@link backendByName}, but also PeerUnavailableError when the backend cannot run here. */
export function usableBackend(name: string): Backend {
  const b = backendByName(name);
  const why = b.unavailable();
  if (why !== null) throw new PeerUnavailableError(`framing '${name}' is unavailable: ${why}`);
  return b;
}

/** The backend whose format `path` is in, judged from its first 4096 bytes; FormatError when none matches. */
export function detectBackend(path: string): Backend {
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
  const order = [
    ...BACKENDS.filter((x) => !x.heuristicDetect),
    ...BACKENDS.filter((x) => x.heuristicDetect),
  ];
  const b = order.find((x) => x.unavailable() === null && x.detect(head, size));
  if (!b) {
    const hex = [...head.subarray(0, 8)].map((x) => x.toString(16).padStart(2, "0")).join(" ");
    throw new FormatError(
      "detect",
      path,
      0,
      `unknown format (first bytes ${hex || "none: the file is empty"}); name one with --framing`,
    );
  }
  return b;
}
