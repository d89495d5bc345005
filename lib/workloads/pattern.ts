/**
 * Deterministic, seeded data for benchmark frames, and the check that data read back is what
 * was written. The per-frame stamp makes every frame differ, as gsd's benchmark does.
 * @module
 */
import { VerifyError } from "../errors.ts";
import type { Chunk } from "../framings/types.ts";
import type { ReadChunk } from "../backends/backend.ts";
import { bytesEqual } from "../sys/libc.ts";
import { chunkBytes } from "../framings/kit.ts";

/** A seeded pseudo-random generator (SplitMix32-style); `next()` gives floats in [0, 1). */
export class Rng {
  #s: number;

  constructor(seed: number) {
    this.#s = (seed >>> 0) ^ 0x9e3779b9;
  }

  /** Next unsigned 32-bit integer. */
  nextU32(): number {
    let z = (this.#s = (this.#s + 0x9e3779b9) | 0);
    z = Math.imul(z ^ (z >>> 16), 0x85ebca6b);
    z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35);
    return (z ^ (z >>> 16)) >>> 0;
  }

  /** Next float in [0, 1). */
  next(): number {
    return this.nextU32() / 4294967296;
  }

  /** Integer in [0, n). */
  below(n: number): number {
    return Math.floor(this.next() * n);
  }
}

/** Fills `out` with seeded floats in [0, 1); returns it. */
export function fillRandom<T extends Float32Array | Float64Array>(out: T, rng: Rng): T {
  for (let i = 0; i < out.length; i++) out[i] = rng.next();
  return out;
}

/** The first `take` entries of a seeded random permutation of 0..n-1. */
export function shuffledOrder(n: number, take: number, rng: Rng): Uint32Array {
  const order = new Uint32Array(n);
  for (let i = 0; i < n; i++) order[i] = i;
  for (let i = n - 1; i > 0; i--) {
    const j = rng.below(i + 1);
    const t = order[i]!;
    order[i] = order[j]!;
    order[j] = t;
  }
  return order.subarray(0, take);
}

/**
 * Checks that the chunks read for `frame` hold exactly the expected chunks' bytes. A read chunk
 * is matched by name, or else by order among chunks of the same byte length (formats without
 * names). Throws VerifyError naming the file, frame, chunk and first differing byte.
 */
export function verifyFrame(
  path: string,
  frame: number,
  expected: readonly Chunk[],
  got: readonly ReadChunk[],
): void {
  const used = new Set<number>();
  for (const e of expected) {
    const want = chunkBytes(e);
    let k = got.findIndex((g) => g.name === e.name);
    if (k < 0) {
      k = got.findIndex((g, i) =>
        !used.has(i) && g.data.length === want.length && g.name !== e.name
      );
    }
    if (k < 0) {
      throw new VerifyError(
        `${path}: frame ${frame}: no chunk '${e.name}' of ${want.length} bytes was read (got ${
          got.map((g) => `${g.name}:${g.data.length}`).join(", ") || "nothing"
        })`,
      );
    }
    used.add(k);
    const g = got[k]!;
    if (g.data.length !== want.length) {
      throw new VerifyError(
        `${path}: frame ${frame}: chunk '${g.name}' has ${g.data.length} bytes, expected ${want.length}`,
      );
    }
    if (!bytesEqual(g.data, want)) {
      let at = 0;
      while (at < want.length && g.data[at] === want[at]) at++;
      throw new VerifyError(
        `${path}: frame ${frame}: chunk '${g.name}' differs from what was written at byte ${at} of the chunk ` +
          `(read 0x${g.data[at]!.toString(16).padStart(2, "0")}, wrote 0x${
            want[at]!.toString(16).padStart(2, "0")
          })`,
      );
    }
  }
}
