/**
 * Growable columns of numbers over typed arrays, for indexes that hold a few numbers per record
 * of a file with millions of records: 8 bytes a float64 entry and 4 an int32 one, and no object
 * per record. A column grows a block of 4096 entries at a time and never copies a whole block,
 * so its memory while it grows is what it holds plus one block (an array grown by copying would
 * need two and a half times that, and leave the old arrays to the collector). Its first block
 * starts at 256 entries and doubles (a copy) until it is whole: an index of a few hundred records
 * allocates and zeroes a few KiB, not a whole block per column (an open of a small file).
 * @module
 */

/** Entries in a block of a column: 2^12. */
const BLOCK_SHIFT = 12;
const BLOCK = 1 << BLOCK_SHIFT;
/** Entries in a block of a column ({@link NumberColumn.ofBlocks}). */
export const COLUMN_BLOCK = BLOCK;
const BLOCK_MASK = BLOCK - 1;
/** Entries of a column's first block when it is made; it doubles until it has COLUMN_BLOCK. */
export const FIRST_BLOCK = 256;

/**
 * The block after `block` (the last of a column, full) is filled: `block` doubled (its entries
 * copied) while it is a first block under {@link COLUMN_BLOCK} entries, else a new whole block
 * (`grown` false: append it). `make` makes an array of n entries of the column's type.
 */
export function nextBlock<T extends Float64Array | Int32Array>(
  block: T | undefined,
  make: (n: number) => T,
): { block: T; grown: boolean } {
  if (block === undefined) return { block: make(FIRST_BLOCK), grown: false };
  if (block.length >= BLOCK) return { block: make(BLOCK), grown: false };
  const bigger = make(Math.min(BLOCK, 2 * block.length));
  bigger.set(block);
  return { block: bigger, grown: true };
}

/** A growable column of float64 (any safe integer, such as a byte offset) or int32 values. */
export class NumberColumn {
  readonly #kind: "float64" | "int32";
  readonly #blocks: (Float64Array | Int32Array)[] = [];
  #length = 0;

  /** Entries of the first block (it doubles from there up to COLUMN_BLOCK). */
  readonly #first: number;

  /**
   * An empty column of `kind` values; `first`: entries its first block holds (the count
   * expected, when known: a small file's column then needs no larger array nor a copy).
   */
  constructor(kind: "float64" | "int32", first = FIRST_BLOCK) {
    this.#kind = kind;
    this.#first = Math.max(1, Math.min(BLOCK, first));
  }

  /**
   * A column of the first `length` entries of `blocks` (each of {@link COLUMN_BLOCK} entries of
   * `kind`, filled in order by a caller that appends faster without a call per entry).
   */
  static ofBlocks(
    kind: "float64" | "int32",
    blocks: readonly (Float64Array | Int32Array)[],
    length: number,
  ): NumberColumn {
    const column = new NumberColumn(kind);
    column.#blocks.push(...blocks.slice(0, Math.ceil(length / BLOCK)));
    column.#length = length;
    column.trim();
    return column;
  }

  /** Entries in the column. */
  get length(): number {
    return this.#length;
  }

  /** Appends `value` (an int32 column keeps its low 32 bits). */
  push(value: number): void {
    const i = this.#length++;
    const block = this.#blocks[i >> BLOCK_SHIFT];
    if (block !== undefined && (i & BLOCK_MASK) < block.length) block[i & BLOCK_MASK] = value;
    else this.#newBlock(i)[i & BLOCK_MASK] = value;
  }

  /**
   * The block that holds entry `i`, made (or made larger after `trim`, or while the first block
   * doubles: FIRST_BLOCK entries, then twice as many until COLUMN_BLOCK).
   */
  #newBlock(i: number): Float64Array | Int32Array {
    const old = this.#blocks[i >> BLOCK_SHIFT];
    const n = i < BLOCK ? Math.min(BLOCK, Math.max(this.#first, 2 * (old?.length ?? 0))) : BLOCK;
    const block = this.#kind === "float64" ? new Float64Array(n) : new Int32Array(n);
    // mutant: columns-grow
    if (old !== undefined) block.set(old);
    this.#blocks[i >> BLOCK_SHIFT] = block;
    return block;
  }

  /** Gives back the room kept for growth (call when done appending; pushing again still works). */
  trim(): void {
    const last = this.#blocks.length - 1;
    const used = this.#length - (last << BLOCK_SHIFT);
    if (last >= 0 && used < this.#blocks[last]!.length) {
      this.#blocks[last] = this.#blocks[last]!.slice(0, used);
    }
  }

  /** Entry `i` (0 <= i < length). */
  at(i: number): number {
    return this.#blocks[i >> BLOCK_SHIFT]![i & BLOCK_MASK]!;
  }

  /** Sets entry `i` (0 <= i < length) to `value`. */
  set(i: number, value: number): void {
    this.#blocks[i >> BLOCK_SHIFT]![i & BLOCK_MASK] = value;
  }
}
