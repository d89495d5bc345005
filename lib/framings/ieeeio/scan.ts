/**
 * The IEEEIO open's scan: one pass over the records from byte 16 that checks every header field
 * and keeps, per dataset, its data offset, shape id and name id in columns, and of the attributes
 * only those the reader acts on (`name`, `frame_datasets`, `step`). Records are read through a
 * peek: a window of the source's mapping, or a read.
 * @module
 */
import type { ByteSource } from "../types.ts";
import { elementCount } from "../kit.ts";
import { NumberColumn } from "../columns.ts";
import {
  IEEEIO_FILE_HEADER_BYTES,
  IEEEIO_RECORD,
  IEEEIO_RECORD_HEADER_BYTES,
  IEEEIO_TYPE_NAMES,
  TYPE_SIZE,
} from "./format.ts";
import { knownBytes, NameTable, sameBytesAt } from "./names.ts";
import { DatasetColumns, NamedAttributes, type RecordShape, ShapeTable } from "./tables.ts";

/** Bytes read at the start of each record during the scan. */
export const PEEK_BYTES = 256;
/** A record whose first this many bytes are in the last peek is read from it, not read again. */
const PEEK_AGAIN_BYTES = 64;

/** `name` and `step` as the little-endian int32 of their four bytes (attribute names). */
const NAME_WORD = 0x656d616e;
const STEP_WORD = 0x70657473;

const encoder = new TextEncoder();
/** `frame_datasets` as stored (without the NUL), and its first four bytes as a little-endian int32. */
const FRAME_DATASETS_ATTRIBUTE = knownBytes(encoder.encode("frame_datasets"));
const FRAME_DATASETS_WORD = 0x6d617266;
/** Name id of a dataset whose `name` attribute the scan has not met yet. */
const UNSEEN = -2;
/** No bytes, and a view of them: where a peek starts (no array made an open). */
const NO_BYTES = new Uint8Array(0);
const NO_VIEW: DataView = new DataView(NO_BYTES.buffer);

/**
 * Bytes of a source a scan reads records from: a window of its mapping (in place) or a read. The
 * scan reads them through `bytes` and `view`, which span the whole buffer the window is in (kept
 * while the windows come from one buffer, as a source's mapping and its far reads do: no view
 * made per record), at index (file offset - `at`).
 */
class Peek {
  readonly #source: ByteSource;
  /** The window's whole buffer, bytes `start` to `end` of the file at indexes from start - at. */
  bytes: Uint8Array = NO_BYTES;
  /** A DataView of `bytes`. */
  view: DataView = NO_VIEW;
  /** File offset of index 0 of `bytes` (bytes before `start` are not the window's). */
  at = 0;
  start = 0;
  end = 0;
  /** True when the window is the source's (read in place). */
  inPlace = false;

  constructor(source: ByteSource) {
    this.#source = source;
  }

  /** Moves to `offset`, at least `length` bytes (inside the file); returns this. */
  fetch(offset: number, length: number): this {
    const source = this.#source;
    const want = Math.min(source.size - offset, Math.max(length, PEEK_BYTES));
    const window = source.window?.(offset, want, true);
    this.inPlace = window !== undefined;
    const bytes = window ?? source.read(offset, want);
    if (bytes.buffer !== this.view.buffer) {
      this.view = new DataView(bytes.buffer);
      this.bytes = new Uint8Array(bytes.buffer);
    }
    this.at = offset - bytes.byteOffset;
    this.start = offset;
    this.end = offset + bytes.length;
    return this;
  }

  /** Starts at `head`, the file's first bytes (read already, not read again); returns this. */
  seed(head: Uint8Array): this {
    this.inPlace = false;
    this.view = new DataView(head.buffer);
    this.bytes = new Uint8Array(head.buffer);
    this.at = -head.byteOffset;
    this.start = 0;
    this.end = head.length;
    return this;
  }
}

/** What one pass over the records finds (see {@link scanRecords}). */
export interface RecordScan {
  /** Datasets found. */
  readonly datasets: number;
  /** Per dataset: the byte offset of its data. */
  readonly dataOffset: NumberColumn;
  /** Per dataset: its shape's id in `shapes`. */
  readonly shapeId: NumberColumn;
  readonly shapes: readonly RecordShape[];
  /** Per dataset: its name's id in `names` (negative: none), from its first `name` attribute. */
  readonly nameId: NumberColumn;
  readonly names: readonly string[];
  /** The `frame_datasets` attributes (value: the count, NaN when not one Int32). */
  readonly frameDatasets: NamedAttributes;
  /** The `step` attributes (value: the step, NaN when not one Int32 or Int64). */
  readonly steps: NamedAttributes;
  /** Attributes and annotations that do not belong to the data record before them: dataset. */
  readonly displacedSeq: NumberColumn;
  /** ... and byte offset of each (file order). */
  readonly displacedOffset: NumberColumn;
  /** Byte offset just after the last complete record. */
  readonly end: number;
  /** What a recovering scan ignored at the end of the file ("" when nothing). */
  readonly dropped: string;
}

/**
 * One pass over the records from byte 16, checking every header field (a FormatError with the
 * offset for each broken rule; with `recovering`, a partial last record ends the scan instead).
 * It keeps per dataset its data offset, shape and name, and only the attributes the reader acts
 * on; the other attributes and the annotations are read when a dataset is asked for. Records
 * are read through a peek of at least 256 bytes: a window of the source's mapping (in place) or
 * a read, which covers a record's headers, dims and short names and often the next records.
 * Written for the first open of a process, which runs before the JIT has compiled it: few calls
 * and no allocation per record. `head`: the file's first bytes, read with its header (the first
 * records' peek: not read again). `first`: entries of the first block of each column (the
 * datasets the header counts, when it does: a small file's columns are made once, to size).
 *
 * One function of about 250 lines, on purpose: the record loop keeps the peek and the columns'
 * last blocks in locals and makes no call per record (a call per record, or the state in an
 * object's fields, costs the interpreted first open); only its rare steps are functions
 * ({@link DatasetColumns.grow} once a block, {@link placeDisplacedNames} once a scan).
 */
export function scanRecords(
  source: ByteSource,
  le: boolean,
  recovering: boolean,
  fail: (offset: number, problem: string) => never,
  head: Uint8Array,
  first: number,
): RecordScan {
  const size = source.size;
  // The peek, in locals the loop reads; `fetch` (one function for every scan, so that compiled
  // code made in one open stays valid in the next) moves `p` and the locals are read back.
  const p = new Peek(source).seed(head);
  let peek = p.bytes;
  let view = p.view;
  let peekAt = p.at;
  let peekStart = p.start;
  let peekEnd = p.end;
  let inPlaceBytes = 0;
  // per dataset: blocks of COLUMN_BLOCK entries, the last ones filled here (no call per entry)
  const columns = new DatasetColumns(first);
  let offsets = columns.offsets;
  let shapeIds = columns.shapeIds;
  let nameIds = columns.nameIds;
  /** Entries of the last blocks filled. */
  let filled = 0;
  const shapes = new ShapeTable();
  const names = new NameTable();
  /** `name` attributes not after their dataset (value: the name id): set after the scan. */
  const displacedNames = new NamedAttributes(first);
  const frameDatasets = new NamedAttributes(first);
  const steps = new NamedAttributes(first);
  const displacedSeq = new NumberColumn("int32");
  const displacedOffset = new NumberColumn("float64");
  const DATA = IEEEIO_RECORD.data;
  const ANNOTATION = IEEEIO_RECORD.annotation;
  let datasets = 0;
  let pos = IEEEIO_FILE_HEADER_BYTES;
  let end = pos;
  let dropped = "";
  while (pos < size) {
    // A partial last record is an error in a closed file, and the crash's leftovers when recovering.
    const left = size - pos;
    if (left < IEEEIO_RECORD_HEADER_BYTES) {
      if (recovering) {
        dropped = `a partial record header (${left} bytes) at byte ${pos}`;
        break;
      }
      fail(pos, `truncated record header: ${left} bytes left, a record header needs 12`);
    }
    // Small attribute and annotation records follow one another: one peek covers several.
    if (pos < peekStart || pos + (left < PEEK_AGAIN_BYTES ? left : PEEK_AGAIN_BYTES) > peekEnd) {
      ({ bytes: peek, view, at: peekAt, start: peekStart, end: peekEnd } = p.fetch(
        pos,
        IEEEIO_RECORD_HEADER_BYTES,
      ));
    }
    let read = IEEEIO_RECORD_HEADER_BYTES;
    const type = view.getInt32(pos - peekAt, le);
    const recSize = view.getInt32(pos - peekAt + 4, le);
    const seq = view.getInt32(pos - peekAt + 8, le);
    if (type < 1 || type > 3) {
      fail(pos, `unknown record type ${type}: expected 1 (data), 2 (annotation) or 3 (attribute)`);
    }
    if (recSize < 0) fail(pos + 4, `negative record size ${recSize}`);
    const body = pos + IEEEIO_RECORD_HEADER_BYTES;
    if (body + recSize > size) {
      if (recovering) {
        dropped = `a partial record (${recSize} bytes declared, ${
          size - body
        } present) at byte ${pos}`;
        break;
      }
      fail(
        pos + 4,
        `record size ${recSize} runs past the end of the file: the record would end at byte ${
          body + recSize
        }, the file ends at byte ${size}`,
      );
    }
    if (type !== ANNOTATION) {
      // Data and attribute records: a 12-byte header of data size, type code and rank or name size.
      if (recSize < 12) {
        fail(
          pos + 4,
          `${
            type === DATA ? "data" : "attribute"
          } record size ${recSize} is smaller than its 12-byte header`,
        );
      }
      if (body + 12 > peekEnd) {
        ({ bytes: peek, view, at: peekAt, start: peekStart, end: peekEnd } = p.fetch(body, 12));
      }
      read += 12;
      const dataSize = view.getInt32(body - peekAt, le);
      const code = view.getInt32(body - peekAt + 4, le);
      const third = view.getInt32(body - peekAt + 8, le);
      const width = code >= 0 && code < 12 ? TYPE_SIZE[code as 0] : 0;
      if (width === 0) fail(body + 4, `unknown number type code ${code}: expected 0..11`);
      const after = body + 12; // the dims, or the attribute's name
      if (type === DATA) {
        const rank = third;
        if (dataSize < 0) fail(body, `negative data size ${dataSize}`);
        if (rank < 0 || 12 + 4 * rank > recSize) {
          fail(body + 8, `rank ${rank} does not fit in a data record of ${recSize} bytes`);
        }
        if (recSize !== dataSize + 12 + 4 * rank) {
          fail(
            pos + 4,
            `record size ${recSize} does not match data size ${dataSize} + 12 + 4 x rank ${rank} = ${
              dataSize + 12 + 4 * rank
            }`,
          );
        }
        if (after + 4 * rank > peekEnd) {
          ({ bytes: peek, view, at: peekAt, start: peekStart, end: peekEnd } = p.fetch(
            after,
            4 * rank,
          ));
        }
        read += 4 * rank;
        let id = shapes.find(view, after - peekAt, le, code, rank);
        if (id < 0 || shapes.shapes[id]!.bytes !== dataSize) {
          id = newShape(view, after, peekAt, le, code, rank, width, dataSize, shapes, fail);
        }
        if (seq !== datasets) {
          fail(pos + 8, `data record has sequence id ${seq}, expected ${datasets}`);
        }
        if (filled === offsets.length) {
          if (!columns.grow()) filled = 0;
          ({ offsets, shapeIds, nameIds } = columns);
        }
        offsets[filled] = after + 4 * rank;
        shapeIds[filled] = id;
        nameIds[filled] = UNSEEN;
        filled++;
        datasets++;
      } else {
        const nameSize = third;
        if (dataSize < 0 || dataSize % width !== 0) {
          fail(
            body,
            `attribute data size ${dataSize} is not a whole number of ${width}-byte elements`,
          );
        }
        if (nameSize < 1 || recSize !== dataSize + nameSize + 12) {
          fail(
            pos + 4,
            `attribute record size ${recSize} does not match value ${dataSize} + name ${nameSize} + 12 bytes`,
          );
        }
        if (after + nameSize > peekEnd) {
          ({ bytes: peek, view, at: peekAt, start: peekStart, end: peekEnd } = p.fetch(
            after,
            nameSize,
          ));
        }
        read += nameSize;
        // the names acted on, told apart by their first four bytes
        const word = nameSize < 4 ? 0 : view.getInt32(after - peekAt, true);
        const short = nameSize === 4 || (nameSize > 4 && peek[after - peekAt + 4] === 0);
        const valueOffset = after + nameSize;
        if (word === NAME_WORD && short) {
          let id = -1;
          if (code === 10 || code === 6) {
            if (valueOffset + dataSize > peekEnd) {
              ({ bytes: peek, view, at: peekAt, start: peekStart, end: peekEnd } = p.fetch(
                valueOffset,
                dataSize,
              ));
            }
            read += dataSize;
            id = names.id(peek, view, valueOffset - peekAt, dataSize);
          }
          if (seq !== datasets - 1) displacedNames.push(seq, id, pos);
          else if (nameIds[filled - 1] === UNSEEN) nameIds[filled - 1] = id;
        } else if (word === STEP_WORD && short) {
          let step = NaN;
          if ((code === 2 && dataSize === 4) || (code === 3 && dataSize === 8)) {
            if (valueOffset + dataSize > peekEnd) {
              ({ bytes: peek, view, at: peekAt, start: peekStart, end: peekEnd } = p.fetch(
                valueOffset,
                dataSize,
              ));
            }
            read += dataSize;
            const at = valueOffset - peekAt;
            step = code === 2
              ? view.getInt32(at, le)
              // an Int64 as its two halves: the nearest double, as Number(BigInt) gives, no BigInt
              : view.getInt32(at + (le ? 4 : 0), le) * 2 ** 32 +
                view.getUint32(at + (le ? 0 : 4), le);
          }
          steps.push(seq, step, valueOffset);
        } else if (
          word === FRAME_DATASETS_WORD && nameSize >= FRAME_DATASETS_ATTRIBUTE.bytes.length &&
          (nameSize === FRAME_DATASETS_ATTRIBUTE.bytes.length ||
            peek[after - peekAt + FRAME_DATASETS_ATTRIBUTE.bytes.length] === 0) &&
          sameBytesAt(peek, view, after - peekAt, FRAME_DATASETS_ATTRIBUTE)
        ) {
          let count = NaN;
          if (code === 2 && dataSize === 4) {
            if (valueOffset + 4 > peekEnd) {
              ({ bytes: peek, view, at: peekAt, start: peekStart, end: peekEnd } = p.fetch(
                valueOffset,
                4,
              ));
            }
            read += 4;
            count = view.getInt32(valueOffset - peekAt, le);
          }
          frameDatasets.push(seq, count, valueOffset);
        }
      }
    }
    // An attachment carries the sequence id of its dataset, usually the data record's before it.
    if (type !== DATA && seq !== datasets - 1) {
      displacedSeq.push(seq);
      displacedOffset.push(pos);
    }
    if (p.inPlace) inPlaceBytes += read;
    pos = body + recSize;
    end = pos;
  }
  if (inPlaceBytes > 0) source.readInPlace?.(inPlaceBytes);
  displacedSeq.trim();
  displacedOffset.trim();
  const dataOffset = NumberColumn.ofBlocks("float64", columns.offsetBlocks, datasets);
  const shapeId = NumberColumn.ofBlocks("int32", columns.shapeBlocks, datasets);
  const nameId = NumberColumn.ofBlocks("int32", columns.nameBlocks, datasets);
  placeDisplacedNames(displacedNames, nameId, dataOffset);
  return {
    datasets,
    dataOffset,
    shapeId,
    shapes: shapes.shapes,
    nameId,
    names: names.names,
    frameDatasets,
    steps,
    displacedSeq,
    displacedOffset,
    end,
    dropped,
  };
}

/**
 * Names the datasets that the scan found `name` attributes for away from their data records
 * (`named`, value: the name id): one before its dataset (first in the file) names it; one after
 * a later dataset only when none came before it. `nameId` and `dataOffset`: the scan's columns.
 */
function placeDisplacedNames(
  named: NamedAttributes,
  nameId: NumberColumn,
  dataOffset: NumberColumn,
): void {
  const datasets = dataOffset.length;
  for (let k = named.length - 1; k >= 0; k--) {
    const seq = named.seq(k);
    if (seq >= 0 && seq < datasets && named.valueOffset(k) < dataOffset.at(seq)) {
      nameId.set(seq, named.value(k));
    }
  }
  for (let k = 0; k < named.length; k++) {
    const seq = named.seq(k);
    if (seq >= 0 && seq < datasets && named.valueOffset(k) > dataOffset.at(seq)) {
      if (nameId.at(seq) === UNSEEN) nameId.set(seq, named.value(k));
    }
  }
}

/**
 * The id of the shape of the data record whose `rank` dims are at byte `at` of the file (in
 * `view`, which starts at byte `viewAt`), after checking them: none negative, and as many
 * elements of `width` bytes as its data size says.
 */
function newShape(
  view: DataView,
  at: number,
  viewAt: number,
  le: boolean,
  code: number,
  rank: number,
  width: number,
  dataSize: number,
  shapes: ShapeTable,
  fail: (offset: number, problem: string) => never,
): number {
  const dims: number[] = [];
  for (let i = 0; i < rank; i++) {
    const d = view.getInt32(at - viewAt + 4 * i, le);
    if (d < 0) fail(at + 4 * i, `negative dimension ${d}`);
    dims.push(d);
  }
  const expect = elementCount(dims) * width;
  if (expect !== dataSize) {
    fail(
      at,
      `dims [${dims.join(", ")}] of ${
        IEEEIO_TYPE_NAMES[code as 0]
      } need ${expect} bytes but the data size is ${dataSize}`,
    );
  }
  return shapes.id(code, dims, dataSize);
}
