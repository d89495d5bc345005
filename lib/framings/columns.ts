/**
 * Growable columns of numbers over typed arrays, for indexes that hold a few numbers per record
 * of a file with millions of records: 8 bytes a float64 entry and 4 an int32 one, plus at most
 * half again while growing, and no object per record.
 * @module
 */

/** A growable column of float64 (any safe integer, such as a byte offset) or int32 values. */
export class NumberColumn {
  #values: Float64Array | Int32Array;
  #length = 0;

  /** An empty column of `kind` values. */
  constructor(kind: "float64" | "int32") {
    this.#values = kind === "float64" ? new Float64Array(64) : new Int32Array(64);
  }

  /** Entries in the column. */
  get length(): number {
    return this.#length;
  }

  /** Appends `value` (an int32 column keeps its low 32 bits). */
  push(value: number): void {
    if (this.#length === this.#values.length) this.#grow();
    this.#values[this.#length++] = value;
  }

  #grow(): void {
    this.#values = grown(this.#values);
  }

  /** Gives back the room kept for growth (call when done appending; pushing again still works). */
  trim(): void {
    if (this.#values.length > this.#length) this.#values = this.#values.slice(0, this.#length);
  }

  /** Entry `i` (0 <= i < length). */
  at(i: number): number {
    return this.#values[i]!;
  }
}

/** A copy of `values` half again as long (at least one entry more), for a column that is full. */
export function grown<T extends Float64Array | Int32Array>(values: T): T {
  const room = Math.ceil(values.length * 1.5) + 1;
  const out = new (values.constructor as new (length: number) => T)(room);
  out.set(values);
  return out;
}
