/**
 * The records a records run writes and checks: one seeded record, element 0 stamped with the
 * record number, so every record differs and is known without keeping them all.
 * @module
 */
import { UsageError } from "../../core/errors.ts";
import type { ChunkLayout, Frame, TypedArray } from "../../framings/types.ts";
import { DTYPE_SIZE, typedArray } from "../../framings/types.ts";
import { fillRandom, Rng } from "../pattern.ts";
import type { RecordsType } from "./options.ts";

/** The records of the workload: one shared array, element 0 stamped with the record number. */
export class RecordFrames {
  /** Number of records. */
  readonly records: number;
  /** Shape of one record. */
  readonly recordShape: readonly number[];
  /** Bytes of one record. */
  readonly recordBytes: number;
  readonly #data: TypedArray;
  readonly #frame: Frame;

  /** `rank` (an MPI rank, default 0) makes each rank's data differ; rank 0's is the serial data. */
  constructor(shape: readonly number[], dtype: RecordsType, seed: number, rank = 0) {
    if (shape.length < 1) {
      throw new UsageError("records: the shape needs at least the record count");
    }
    this.records = shape[0]!;
    this.recordShape = shape.slice(1);
    const n = this.recordShape.reduce((a, b) => a * b, 1);
    this.recordBytes = n * DTYPE_SIZE[dtype];
    const rng = new Rng(seed ^ 0x5eed0003 ^ Math.imul(rank, 0x9e3779b1));
    this.#data = recordData(dtype, n, rng);
    this.#frame = {
      step: 0,
      chunks: [{ name: "data", dtype, shape: this.recordShape, data: this.#data }],
    };
  }

  /** What every frame holds. */
  get layout(): readonly ChunkLayout[] {
    return this.#frame.chunks.map(({ name, dtype, shape }) => ({ name, dtype, shape }));
  }

  /** Record r (the array is shared: valid until the next call). */
  frame(r: number): Frame {
    const data = this.#data;
    if (data instanceof BigInt64Array || data instanceof BigUint64Array) data[0] = BigInt(r);
    else data[0] = r; // integer types keep r modulo their range
    return { step: r, chunks: this.#frame.chunks };
  }
}

/** A record's seeded values: floats in [0, 1), integers from random bytes. */
function recordData(dtype: RecordsType, n: number, rng: Rng): TypedArray {
  if (dtype === "float32") return fillRandom(new Float32Array(n), rng);
  if (dtype === "float64") return fillRandom(new Float64Array(n), rng);
  const bytes = n * DTYPE_SIZE[dtype];
  const buffer = new ArrayBuffer(Math.ceil(bytes / 4) * 4);
  const words = new Uint32Array(buffer);
  for (let i = 0; i < words.length; i++) words[i] = rng.nextU32();
  return typedArray(dtype, n, buffer);
}
