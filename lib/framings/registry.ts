/**
 * The list of native framings, by name, and detection of a file's framing from its first bytes.
 * Adding a format is one new file in lib/framings plus one line here.
 * @module
 */
import { UsageError } from "../errors.ts";
import { gsd } from "./gsd.ts";
import { raw } from "./raw.ts";
import { f77 } from "./f77.ts";
import { ieeeio } from "./ieeeio.ts";
import { netcdf } from "./netcdf.ts";
import type { Framing } from "./types.ts";

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
