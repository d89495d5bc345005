/**
 * The seeded frames the table writes and verifies: position and orientation of N particles,
 * stamped with the frame's index.
 * @module
 */
import {
  type ByteOrder,
  type Chunk,
  type ChunkLayout,
  DTYPE_SIZE,
  type Frame,
} from "../../framings/types.ts";
import { alignedBytes } from "../../io/transfer.ts";
import { type ExpectedFrames, fillRandom, Rng } from "../pattern.ts";
import { copySwapped, NATIVE_ORDER } from "../../bytes/byteswap.ts";
import { chunkBytes } from "../../framings/kit.ts";

/**
 * A Float32Array of `count` elements whose first byte sits on a 64-byte cache line: a verified
 * read compares the frame read with it (a memcmp of two arrays runs faster with both on a line
 * than with one 16 bytes off: bench/read_path_bench.ts).
 */
function lineAlignedFloats(count: number): Float32Array {
  const bytes = alignedBytes(count * 4, 64);
  // mutant: table-expected-cache-line
  return new Float32Array(bytes.buffer, bytes.byteOffset, count);
}

/** The seeded frames of the table workload for N particles; `frame(i)` stamps and returns frame i. */
export class TableFrames implements ExpectedFrames {
  /** Particles per frame. */
  readonly n: number;
  readonly #position: Float32Array;
  readonly #orientation: Float32Array;
  readonly #chunks: readonly Chunk[];
  /** The chunks' bytes in the other byte order (made at the first `bytesIn` asking for it). */
  #swapped: readonly Uint8Array[] | undefined;

  /** `rank` (an MPI rank, default 0) makes each rank's data differ; rank 0's is the serial data. */
  constructor(n: number, seed: number, rank = 0) {
    this.n = n;
    const rng = new Rng(seed ^ Math.imul(n, 0x27d4eb2d) ^ Math.imul(rank, 0x9e3779b1));
    this.#position = fillRandom(lineAlignedFloats(3 * n), rng);
    this.#orientation = fillRandom(lineAlignedFloats(4 * n), rng);
    this.#chunks = [
      { name: "particles/position", dtype: "float32", shape: [n, 3], data: this.#position },
      { name: "particles/orientation", dtype: "float32", shape: [n, 4], data: this.#orientation },
    ];
  }

  /** What every frame holds, for readers of untyped formats. */
  get layout(): readonly ChunkLayout[] {
    return this.#chunks.map(({ name, dtype, shape }) => ({ name, dtype, shape }));
  }

  /** Frame i: step 10 i, element [0][0] of both arrays set to i (the arrays are shared and reused). */
  frame(i: number): Frame {
    this.#position[0] = i;
    this.#orientation[0] = i;
    return { step: 10 * i, chunks: this.#chunks };
  }

  /**
   * Frame i's chunk bytes with the elements in `order`: the native arrays, or copies swapped once
   * (at the first call) whose stamp, element [0][0], is rewritten in that order for each frame.
   */
  bytesIn(i: number, order: ByteOrder): readonly Uint8Array[] {
    if (order === NATIVE_ORDER) return this.frame(i).chunks.map(chunkBytes);
    if (this.#swapped === undefined) {
      this.#swapped = this.#chunks.map((c) => {
        const bytes = new Uint8Array(c.data.byteLength);
        copySwapped(chunkBytes(c), bytes, DTYPE_SIZE[c.dtype]);
        return bytes;
      });
    }
    for (const bytes of this.#swapped) {
      // mutant: table-expected-stamp
      new DataView(bytes.buffer).setFloat32(0, i, order === "little");
    }
    return this.#swapped;
  }
}
