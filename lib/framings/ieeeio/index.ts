/**
 * The IEEEIO reader: the open (the file header read and checked, the records scanned, the
 * datasets grouped into frames) and the index it returns, which reads a dataset's attributes
 * and annotations from the file when they are asked for.
 * @module
 */
import { FormatError, UsageError } from "../../core/errors.ts";
import { copySwapped, NATIVE_ORDER } from "../../bytes/byteswap.ts";
import type { ByteOrder, ByteSource, ChunkRef, ReaderOptions, TypedArray } from "../types.ts";
import { typedArray } from "../types.ts";
import { cStringOf, hexBytes } from "../kit.ts";
import { COLUMN_BLOCK, FIRST_BLOCK, NumberColumn } from "../columns.ts";
import {
  FORMAT,
  IEEEIO_FILE_HEADER_BYTES,
  IEEEIO_RECORD,
  IEEEIO_RECORD_HEADER_BYTES,
  IEEEIO_TYPE_NAMES,
  type IeeeioAnnotation,
  type IeeeioAttribute,
  type IeeeioDataset,
  type IeeeioIndex,
  ieeeioTypeSize,
  TYPE_DTYPE,
  TYPE_SIZE,
} from "./format.ts";
import { PEEK_BYTES, type RecordScan, scanRecords } from "./scan.ts";
import type { RecordShape } from "./tables.ts";

/** Element values of `bytes` (file order `order`) as a native typed array of type `code` (a copy). */
function decodeValues(bytes: Uint8Array, code: number, order: ByteOrder): TypedArray {
  const copy = bytes.slice();
  const width = TYPE_SIZE[code as 0];
  if (order !== NATIVE_ORDER && width > 1) copySwapped(copy, copy, width);
  const dtype = TYPE_DTYPE[code];
  return dtype === undefined ? copy : typedArray(dtype, copy.length / width, copy.buffer);
}

/**
 * The attribute or annotation record at byte `offset` of `source` (checked by the scan), read
 * and decoded; in `into` (attributes or annotations).
 */
function readAttachment(
  source: ByteSource,
  offset: number,
  order: ByteOrder,
  into: { attributes: IeeeioAttribute[]; annotations: IeeeioAnnotation[] },
): void {
  const le = order === "little";
  const head = source.read(offset, IEEEIO_RECORD_HEADER_BYTES);
  const hv = new DataView(head.buffer, head.byteOffset, head.byteLength);
  const type = hv.getInt32(0, le);
  const body = source.read(offset + IEEEIO_RECORD_HEADER_BYTES, hv.getInt32(4, le));
  if (type === IEEEIO_RECORD.annotation) {
    into.annotations.push({ recordOffset: offset, text: cStringOf(body) });
    return;
  }
  const bv = new DataView(body.buffer, body.byteOffset, body.byteLength);
  const bytes = bv.getInt32(0, le);
  const code = bv.getInt32(4, le);
  const nameSize = bv.getInt32(8, le);
  const raw = body.subarray(12 + nameSize, 12 + nameSize + bytes);
  into.attributes.push({
    name: cStringOf(body.subarray(12, 12 + nameSize)),
    numberType: code,
    type: IEEEIO_TYPE_NAMES[code as 0],
    count: bytes / ieeeioTypeSize(code),
    recordOffset: offset,
    valueOffset: offset + 24 + nameSize,
    bytes,
    value: code === 10 ? cStringOf(raw) : decodeValues(raw, code, order),
  });
}

function jsonValue(v: string | TypedArray, limit = 16): unknown {
  if (typeof v === "string") return v;
  const items: unknown[] = [];
  for (let i = 0; i < Math.min(v.length, limit); i++) {
    const x = v[i]!;
    items.push(
      typeof x === "bigint" ? (Number.isSafeInteger(Number(x)) ? Number(x) : x.toString()) : x,
    );
  }
  if (v.length > limit) items.push(`... (${v.length} values)`);
  return items;
}

/**
 * The copy of a file's first bytes (its header and the first records' peek) an open reads from its
 * source's window: one buffer that every open reuses, as an open is done with it when its scan
 * has started (a new array an open cost more than its read, after a read through a large file).
 */
const HEAD = new Uint8Array(IEEEIO_FILE_HEADER_BYTES + PEEK_BYTES);

/** A failure at a byte offset of the file being opened: throws its FormatError. */
type Fail = (offset: number, problem: string) => never;

/** The file header, checked: its first bytes (the first records' peek with it) and its fields. */
interface FileHeader {
  /** The file's first bytes (header and peek): a read, or a copy in {@link HEAD}. */
  readonly head: Uint8Array;
  readonly order: ByteOrder;
  /** The dataset count it stores (-1 while a writer has the file open). */
  readonly headerCount: number;
  /** Version fields (text made only when described). */
  readonly major: number;
  readonly minor: number;
}

/**
 * Reads and checks the 16-byte header of `source` (at least that long) and the peek after it in
 * one read: the source's window when it has one (no array made; copied, as the scan's next
 * window replaces it, into the buffer every open uses).
 */
function readFileHeader(source: ByteSource, fail: Fail): FileHeader {
  const size = source.size;
  // mutant: ieeeio-head-peek
  const headBytes = Math.min(size, IEEEIO_FILE_HEADER_BYTES + PEEK_BYTES);
  const window = source.window?.(0, headBytes);
  let head: Uint8Array;
  if (window === undefined) head = source.read(0, headBytes);
  else {
    HEAD.set(window.subarray(0, headBytes));
    head = HEAD.subarray(0, headBytes);
    source.readInPlace?.(headBytes);
  }
  if (head[0] !== 1 || head[1] !== 2 || head[2] !== 3 || head[3] !== 4) {
    fail(0, `wrong magic number ${hexBytes(head.subarray(0, 4))}: expected 01 02 03 04`);
  }
  // the byte-order mark 0x01020304 as the file stores it (compared as bytes: no string made)
  const little = head[4] === 4 && head[5] === 3 && head[6] === 2 && head[7] === 1;
  if (!little && !(head[4] === 1 && head[5] === 2 && head[6] === 3 && head[7] === 4)) {
    fail(
      4,
      `byte-order mark ${
        hexBytes(head.subarray(4, 8))
      } is neither 04 03 02 01 (little) nor 01 02 03 04 (big)`,
    );
  }
  const order: ByteOrder = little ? "little" : "big";
  const le = order === "little";
  const hv = new DataView(head.buffer, head.byteOffset, head.byteLength);
  // the version's text is made when described (formatting numbers costs an open more than a read)
  return {
    head,
    order,
    headerCount: hv.getInt32(8, le),
    major: hv.getInt16(12, le),
    minor: hv.getInt16(14, le),
  };
}

/**
 * Checks what the scan found against the header: every attachment's dataset exists, and a closed
 * file holds the datasets its header counts; a recovered file's count (-1) and dropped tail go
 * to `warnings`.
 */
function checkDatasetCount(
  scan: RecordScan,
  headerCount: number,
  warnings: string[],
  fail: Fail,
): void {
  const datasetCount = scan.datasets;
  // Attachments carry the sequence id of their dataset (checked here: the file's count is known).
  for (let k = 0; k < scan.displacedSeq.length; k++) {
    const seq = scan.displacedSeq.at(k);
    if (seq < 0 || seq >= datasetCount) {
      fail(
        scan.displacedOffset.at(k) + 8,
        `record belongs to dataset ${seq} but the file has ${datasetCount} datasets`,
      );
    }
  }
  if (headerCount < 0) {
    warnings.push(
      `header dataset count is ${headerCount} (the writer did not close the file); ` +
        `found ${datasetCount} datasets by scanning (the file was not changed)`,
    );
    if (scan.dropped) warnings.push(`ignored ${scan.dropped} left by the unfinished write`);
  } else if (headerCount !== datasetCount) {
    fail(
      8,
      `header says ${headerCount} datasets but the file holds ${datasetCount} data records`,
    );
  }
}

/** Datasets grouped into frames: frame f is datasets starts[f] .. starts[f + 1] - 1. */
interface FrameGroups {
  /** Per frame its first dataset, and the dataset count after the last frame. */
  readonly starts: NumberColumn;
  /** Per frame its step. */
  readonly stepOf: NumberColumn;
}

/**
 * Groups the scanned datasets into frames: by an explicit `datasetsPerFrame`; else by the
 * writer's `frame_datasets` attributes; else, for a file without them, by the caller's layout (a
 * workload reading its own k-chunk frames). A frame's step is its first dataset's first `step`
 * attribute (without one, or with a fixed grouping, its index). `first`: entries of the columns'
 * first blocks; an incomplete last frame is a warning when `recovering`, else a FormatError.
 */
function groupFrames(
  scan: RecordScan,
  options: ReaderOptions,
  first: number,
  recovering: boolean,
  warnings: string[],
  fail: Fail,
): FrameGroups {
  const datasetCount = scan.datasets;
  const starts = new NumberColumn("int32", first + 1);
  const stepOf = new NumberColumn("float64", first);
  const fd = scan.frameDatasets;
  const marked = fd.length > 0;
  const layout = options.layout;
  const perFrame = options["datasetsPerFrame"] ??
    (!marked && layout !== undefined && layout.length > 1 ? layout.length : undefined);
  let grouped = 0;
  if (perFrame !== undefined) {
    if (typeof perFrame !== "number" || !Number.isSafeInteger(perFrame) || perFrame < 1) {
      throw new UsageError(
        `ieeeio: datasetsPerFrame must be a positive integer, not ${String(perFrame)}`,
      );
    }
    for (; grouped + perFrame <= datasetCount; grouped += perFrame) {
      stepOf.push(starts.length);
      starts.push(grouped);
    }
    const rest = datasetCount % perFrame;
    if (rest !== 0) {
      warnings.push(
        `the last ${rest} datasets do not make a whole frame of ${perFrame} and are not read`,
      );
    }
  } else {
    const first = fd.firstByDataset(datasetCount);
    const firstStep = scan.steps.firstByDataset(datasetCount);
    while (grouped < datasetCount) {
      const k = first[grouped]!;
      const stored = k < 0 ? NaN : fd.value(k);
      const count = Number.isNaN(stored) ? 1 : stored;
      if (count < 1) {
        fail(
          fd.valueOffset(k),
          `frame_datasets attribute is ${count}, expected a positive count`,
        );
      }
      if (grouped + count > datasetCount) {
        if (!recovering) {
          fail(
            fd.valueOffset(k),
            `frame of ${count} datasets starts at dataset ${grouped} but the file has only ${datasetCount}`,
          );
        }
        warnings.push(`the last frame (datasets ${grouped}..) is incomplete and is not read`);
        break;
      }
      const s = firstStep[grouped]!;
      const step = s < 0 ? NaN : scan.steps.value(s);
      stepOf.push(Number.isNaN(step) ? starts.length : step);
      starts.push(grouped);
      grouped += count;
    }
  }
  starts.push(grouped);
  starts.trim();
  stepOf.trim();
  return { starts, stepOf };
}

/**
 * The scanned datasets of an open file, as the index reports them: what it keeps of the scan
 * (not the scan itself: its attribute lists go after the open), and a dataset's attachments read
 * from the file when it is asked for.
 */
class ScannedDatasets {
  readonly #source: ByteSource;
  readonly #order: ByteOrder;
  readonly #le: boolean;
  readonly #dataOffset: NumberColumn;
  readonly #shapeId: NumberColumn;
  readonly #shapes: readonly RecordShape[];
  readonly #nameId: NumberColumn;
  readonly #names: readonly string[];
  readonly #displacedSeq: NumberColumn;
  readonly #displacedOffset: NumberColumn;
  /** Byte offset just after the last complete record. */
  readonly #end: number;
  /** Complete datasets. */
  readonly count: number;

  constructor(source: ByteSource, order: ByteOrder, scan: RecordScan) {
    this.#source = source;
    this.#order = order;
    this.#le = order === "little";
    this.#dataOffset = scan.dataOffset;
    this.#shapeId = scan.shapeId;
    this.#shapes = scan.shapes;
    this.#nameId = scan.nameId;
    this.#names = scan.names;
    this.#displacedSeq = scan.displacedSeq;
    this.#displacedOffset = scan.displacedOffset;
    this.#end = scan.end;
    this.count = scan.dataOffset.length;
  }

  /** Dataset i's stored name, or null. */
  nameOf(i: number): string | null {
    const id = this.#nameId.at(i);
    return id < 0 ? null : this.#names[id]!;
  }

  /** Dataset i's shape. */
  shapeOf(i: number): RecordShape {
    return this.#shapes[this.#shapeId.at(i)]!;
  }

  /** Byte offset of dataset i's data. */
  dataOffsetOf(i: number): number {
    return this.#dataOffset.at(i);
  }

  /** Byte offset of dataset i's record header. */
  recordOffsetOf(i: number): number {
    return this.#dataOffset.at(i) - 24 - 4 * this.shapeOf(i).dims.length;
  }

  /** Dataset i as the reader reports it, made (its attachments read) when asked for. */
  dataset(i: number): IeeeioDataset {
    const shape = this.shapeOf(i);
    const found = { attributes: [] as IeeeioAttribute[], annotations: [] as IeeeioAnnotation[] };
    for (const at of this.#attachmentOffsets(i)) {
      readAttachment(this.#source, at, this.#order, found);
    }
    return {
      index: i,
      recordOffset: this.recordOffsetOf(i),
      dataOffset: this.#dataOffset.at(i),
      bytes: shape.bytes,
      numberType: shape.code,
      type: IEEEIO_TYPE_NAMES[shape.code as 0],
      dtype: TYPE_DTYPE[shape.code]!,
      dims: shape.dims,
      shape: shape.shape,
      name: this.nameOf(i),
      ...found,
    };
  }

  /**
   * Byte offsets of dataset i's attachments, in file order: the records after it that carry its
   * sequence id, and the displaced ones.
   */
  #attachmentOffsets(i: number): number[] {
    const source = this.#source, le = this.#le;
    const offsets: number[] = [];
    const stop = i + 1 < this.count ? this.recordOffsetOf(i + 1) : this.#end;
    for (let at = this.#dataOffset.at(i) + this.shapeOf(i).bytes; at < stop;) {
      const h = source.read(at, IEEEIO_RECORD_HEADER_BYTES);
      const v = new DataView(h.buffer, h.byteOffset, h.byteLength);
      if (v.getInt32(8, le) === i) offsets.push(at);
      at += IEEEIO_RECORD_HEADER_BYTES + v.getInt32(4, le);
    }
    for (let k = 0; k < this.#displacedSeq.length; k++) {
      if (this.#displacedSeq.at(k) === i) offsets.push(this.#displacedOffset.at(k));
    }
    return offsets.sort((a, b) => a - b);
  }
}

/** `describe()` of an IEEEIO index: the header's fields and every dataset, attachments read. */
function describeIndex(
  header: Omit<FileHeader, "head">,
  datasets: ScannedDatasets,
  frameCount: number,
): Record<string, unknown> {
  return {
    format: "IEEEIO",
    version: `${header.major}.${header.minor}`,
    byteOrder: header.order,
    headerCount: header.headerCount,
    recovered: header.headerCount < 0,
    datasets: datasets.count,
    frames: frameCount,
    records: Array.from({ length: datasets.count }, (_, i) => datasets.dataset(i)).map((d) => ({
      index: d.index,
      name: d.name,
      type: d.type,
      rank: d.dims.length,
      dims: d.dims,
      shape: d.shape,
      offset: d.dataOffset,
      bytes: d.bytes,
      attributes: d.attributes.map((a) => ({
        name: a.name,
        type: a.type,
        count: a.count,
        value: jsonValue(a.value),
      })),
      annotations: d.annotations.map((a) => a.text),
    })),
  };
}

/** Decodes an IEEEIO file's record table; options: `datasetsPerFrame` (positive integer). */
export function openIeeeio(source: ByteSource, options: ReaderOptions = {}): IeeeioIndex {
  const path = source.path;
  const size = source.size;
  const fail: Fail = (offset, problem) => {
    throw new FormatError(FORMAT, path, offset, problem);
  };
  if (size < IEEEIO_FILE_HEADER_BYTES) {
    fail(0, `file is ${size} bytes, shorter than the 16-byte IEEEIO header`);
  }
  const header = readFileHeader(source, fail);
  // the index keeps the header's fields, not its bytes
  const { order, headerCount, major, minor } = header;
  const recovering = headerCount < 0;
  const warnings: string[] = [];

  // Compact tables (memory linear in the datasets with a small constant): a column per field,
  // shapes and names interned, attributes and annotations read when a dataset is asked for.
  // columns sized by the header's count (a wrong count only costs their doubling or room)
  const first = recovering ? FIRST_BLOCK : Math.max(1, Math.min(COLUMN_BLOCK, headerCount));
  const scan = scanRecords(source, order === "little", recovering, fail, header.head, first);
  checkDatasetCount(scan, headerCount, warnings, fail);
  const datasets = new ScannedDatasets(source, order, scan);
  const datasetCount = datasets.count;
  const { starts, stepOf } = groupFrames(scan, options, first, recovering, warnings, fail);
  const frameCount = starts.length - 1;

  // The last frame's chunk refs only: a cache of every frame read would grow with the file.
  let refsFrame = -1;
  let refs: ChunkRef[] = [];
  return {
    framing: FORMAT,
    order,
    headerCount,
    datasetCount,
    endOffset: scan.end,
    frameCount,
    warnings,
    dataset(i: number): IeeeioDataset {
      if (!Number.isInteger(i) || i < 0 || i >= datasetCount) {
        throw new RangeError(`dataset ${i} is outside 0..${datasetCount - 1}`);
      }
      return datasets.dataset(i);
    },
    chunks(frame: number): readonly ChunkRef[] {
      if (!Number.isInteger(frame) || frame < 0 || frame >= frameCount) {
        throw new RangeError(`frame ${frame} is outside 0..${frameCount - 1}`);
      }
      if (refsFrame !== frame) {
        refs = [];
        const start = starts.at(frame);
        for (let i = start; i < starts.at(frame + 1); i++) {
          const shape = datasets.shapeOf(i);
          refs.push({
            name: datasets.nameOf(i) ?? `dataset/${i - start}`,
            dtype: TYPE_DTYPE[shape.code]!,
            shape: shape.shape,
            offset: datasets.dataOffsetOf(i),
            bytes: shape.bytes,
            order,
          });
        }
        refsFrame = frame;
      }
      return refs;
    },
    step(frame: number): number | undefined {
      return Number.isInteger(frame) && frame >= 0 && frame < frameCount
        ? stepOf.at(frame)
        : undefined;
    },
    describe(): Record<string, unknown> {
      return describeIndex({ order, headerCount, major, minor }, datasets, frameCount);
    },
  };
}
