/**
 * The compact tables an IEEEIO scan fills (memory linear in the datasets with a small constant):
 * the distinct shapes of the data records, the attributes the reader acts on, and the
 * per-dataset columns, in blocks of numbers rather than an object a record.
 * @module
 */
import { COLUMN_BLOCK, FIRST_BLOCK } from "../columns.ts";
import { RECENT } from "./names.ts";

/** A distinct number type and dims of data records, shared by every dataset that has them. */
export interface RecordShape {
  /** Number type code (0..11). */
  readonly code: number;
  /** Dims as stored (Fortran order, fastest first). */
  readonly dims: readonly number[];
  /** Shape in C order (slowest first): `dims` reversed. */
  readonly shape: readonly number[];
  /** Data bytes of a record of this shape. */
  readonly bytes: number;
}

/**
 * One copy of each distinct (number type, dims) of the data records, by id: a file of a million
 * frames has a few. A record is compared with the first few as it lies in the file (no key made).
 */
export class ShapeTable {
  /** Shapes by id. */
  readonly shapes: RecordShape[] = [];
  readonly #ids = new Map<string, number>();

  /**
   * Id of the known shape with type `code` and the `rank` dims at byte `at` of `view` (order
   * `le`), when it is one of the first few known; else -1.
   */
  find(view: DataView, at: number, le: boolean, code: number, rank: number): number {
    const shapes = this.shapes;
    const known = shapes.length < RECENT ? shapes.length : RECENT;
    for (let id = 0; id < known; id++) {
      const s = shapes[id]!;
      if (s.code !== code || s.dims.length !== rank) continue;
      let d = 0;
      while (d < rank && view.getInt32(at + 4 * d, le) === s.dims[d]) d++;
      if (d === rank) return id;
    }
    return -1;
  }

  /**
   * Id of type `code` with `dims` (checked: their element count times `width` is `bytes`), which
   * {@link find} did not find among the first few: a new one while there are no more than those
   * (no key made: a file's one or two shapes cost an open no text), else looked up by key.
   */
  id(code: number, dims: readonly number[], bytes: number): number {
    if (this.shapes.length < RECENT) {
      return this.shapes.push({ code, dims, shape: dims.toReversed(), bytes }) - 1;
    }
    const key = `${code}:${dims.join(",")}`;
    // mutant: ieeeio-shape-intern
    let id = this.#ids.get(key);
    if (id === undefined) {
      id = this.shapes.push({ code, dims, shape: dims.toReversed(), bytes }) - 1;
      this.#ids.set(key, id);
    }
    return id;
  }
}

/**
 * The attributes of one name that the reader acts on (`frame_datasets`, `step`; `name` where it
 * is not after its dataset), in file order: the dataset each belongs to, its value as a number (a
 * name's id; NaN when it is not of the type acted on) and the offset of its value (of its record
 * for a name), three numbers an attribute in one array.
 */
export class NamedAttributes {
  /** Blocks of COLUMN_BLOCK attributes (three numbers each), the last being filled. */
  readonly #blocks: Float64Array[] = [];
  #length = 0;
  /** Attributes the first block holds (it doubles from there up to COLUMN_BLOCK). */
  readonly #first: number;

  /** `first`: attributes the first block holds (at most the datasets expected are enough). */
  constructor(first = FIRST_BLOCK) {
    this.#first = Math.max(1, Math.min(COLUMN_BLOCK, first));
  }

  /** Attributes held. */
  get length(): number {
    return this.#length;
  }

  /** Appends the attribute of dataset `seq` with `value`, its value at byte `valueOffset`. */
  push(seq: number, value: number, valueOffset: number): void {
    const k = this.#length++ % COLUMN_BLOCK;
    const blocks = this.#blocks;
    let block = blocks[blocks.length - 1];
    if (block === undefined || k === 0 || 3 * k >= block.length) {
      // the first block doubles from #first attributes (a small file's few), then whole ones
      const first = block !== undefined && blocks.length === 1 && k > 0;
      const next = new Float64Array(
        3 * (first ? Math.min(COLUMN_BLOCK, 2 * k) : blocks.length ? COLUMN_BLOCK : this.#first),
      );
      if (first) {
        // mutant: ieeeio-attributes-grow
        next.set(block!);
        blocks.pop();
      }
      blocks.push(block = next);
    }
    block[3 * k] = seq;
    block[3 * k + 1] = value;
    block[3 * k + 2] = valueOffset;
  }

  /** The dataset attribute k belongs to. */
  seq(k: number): number {
    return this.#blocks[(k / COLUMN_BLOCK) | 0]![3 * (k % COLUMN_BLOCK)]!;
  }

  /** The value of attribute k. */
  value(k: number): number {
    return this.#blocks[(k / COLUMN_BLOCK) | 0]![3 * (k % COLUMN_BLOCK) + 1]!;
  }

  /** The value offset of attribute k. */
  valueOffset(k: number): number {
    return this.#blocks[(k / COLUMN_BLOCK) | 0]![3 * (k % COLUMN_BLOCK) + 2]!;
  }

  /** Per dataset (of `datasets`, every seq below it), the index of its first attribute here, or -1. */
  firstByDataset(datasets: number): Int32Array {
    const first = new Int32Array(datasets).fill(-1);
    for (let b = 0; b < this.#blocks.length; b++) {
      const block = this.#blocks[b]!;
      const n = Math.min(COLUMN_BLOCK, this.#length - b * COLUMN_BLOCK);
      for (let j = 0; j < n; j++) {
        const seq = block[3 * j]!;
        if (first[seq] === -1) first[seq] = b * COLUMN_BLOCK + j;
      }
    }
    return first;
  }
}

/**
 * The scan's per-dataset columns, in blocks of COLUMN_BLOCK entries: data offsets, shape ids and
 * name ids. The scan fills the last blocks (`offsets`, `shapeIds`, `nameIds`) in place and calls
 * {@link grow} when they are full.
 */
export class DatasetColumns {
  readonly offsetBlocks: Float64Array[] = [];
  readonly shapeBlocks: Int32Array[] = [];
  readonly nameBlocks: Int32Array[] = [];
  /** The last blocks (empty before the first grow). */
  offsets = new Float64Array(0);
  shapeIds = new Int32Array(0);
  nameIds = new Int32Array(0);
  /** Entries of the first blocks. */
  readonly #first: number;

  /** `first`: entries of the first blocks (they double from there up to COLUMN_BLOCK). */
  constructor(first: number) {
    this.#first = first;
  }

  /**
   * New last blocks, the full ones being `offsets`, `shapeIds` and `nameIds`: the first blocks
   * doubled (up to COLUMN_BLOCK), their entries copied (true: the scan keeps its count of
   * entries filled), else whole new blocks after them (false: the count starts again at 0).
   */
  grow(): boolean {
    const offsets = this.offsets, shapeIds = this.shapeIds, nameIds = this.nameIds;
    const { offsetBlocks, shapeBlocks, nameBlocks } = this;
    // the first blocks double from `first` entries (up to COLUMN_BLOCK), then whole blocks
    const grown = offsetBlocks.length > 0 && offsets.length < COLUMN_BLOCK;
    const next = grown
      ? Math.min(COLUMN_BLOCK, 2 * offsets.length)
      : offsetBlocks.length > 0
      ? COLUMN_BLOCK
      : this.#first;
    const o = new Float64Array(next), sh = new Int32Array(next), nm = new Int32Array(next);
    if (grown) {
      // mutant: ieeeio-offsets-grow
      o.set(offsets);
      sh.set(shapeIds);
      nm.set(nameIds);
      offsetBlocks.pop();
      shapeBlocks.pop();
      nameBlocks.pop();
    }
    offsetBlocks.push(this.offsets = o);
    shapeBlocks.push(this.shapeIds = sh);
    nameBlocks.push(this.nameIds = nm);
    return grown;
  }
}
