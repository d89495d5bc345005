/**
 * IEEEIO (John Shalf's FlexIO binary format): a 16-byte file header with a byte-order mark and a
 * dataset count (-1 while open), then a plain sequence of data, annotation and attribute records
 * with 12-byte record headers; no on-disk index. Byte layout: the IEEEIO specification (shared/specs/ieeeio.md §2 beside the checkout).
 *
 * ## How frames map to datasets
 *
 * - Each chunk of a frame becomes one data record (dataset). Dims are stored in Fortran order,
 *   fastest axis first, so a chunk of C-order shape `[s0, s1, ..., sN]` (slowest first) is stored
 *   with dims `[sN, ..., s1, s0]`; the bytes are the same, only the dim list is reversed. The
 *   reader reverses them back, so a 3x2 dataset on disk (dims 3,2) is a chunk of shape `[2, 3]`.
 * - Element types: `int8 int16 int32 int64 float32 float64 uint8 uint16 uint32 uint64 char` map to
 *   the IEEEIO codes 0..10 (Int8 .. Char8). The twelfth type, Char16 (code 11), has no DType: a
 *   chunk writes it with `numberType: "Char16"` ({@link IeeeioChunk}) and reads back as `uint16`
 *   (the per-dataset info keeps the name `Char16`).
 * - Chunk names: chunk k of a frame whose name is not the default `dataset/<k>` gets a Char8
 *   attribute `name` holding the chunk name (stored without a NUL, as FlexIO callers store
 *   strings). The reader names a chunk by its `name` attribute (Char8 or uInt8), else
 *   `dataset/<k>` (k = its position in its frame: `dataset/0` in one-dataset frames), so names
 *   repeat from frame to frame like variable names, as the other framings' do.
 * - Frames: a frame of k > 1 chunks marks its first dataset with an Int32 attribute
 *   `frame_datasets` = k, and a frame whose step differs from its 0-based frame index marks its
 *   first dataset with an Int64 attribute `step`. The reader groups datasets accordingly (a
 *   dataset without `frame_datasets` is a frame of one), so files of other IEEEIO writers read
 *   as one dataset per frame with step = frame index, and a one-chunk frame with step = index
 *   (the `scaling` workload) adds no attribute at all: 16 + n x (24 + 4 x rank + data) bytes.
 *   Reader option `datasetsPerFrame` (a positive integer) forces a fixed grouping instead; a
 *   `layout` of k > 1 chunks groups by k a file that has no `frame_datasets` attributes.
 * - Annotations and attributes: {@link IeeeioChunk} may carry `attributes` and `annotations`,
 *   written right after its dataset (attributes first); {@link IeeeioWriter} also has
 *   `writeAttribute` / `writeAnnotation` for the current (last written) dataset, as FlexIO does.
 *
 * ## Writer options
 *
 * `endian` (`native` default, `little`, `big`); `append` (a {@link ByteSource} over an existing
 * IEEEIO file: records are added after its last record, in that file's byte order, see
 * {@link appendWriter}). The header count is written as -1 by `begin()` and rewritten by
 * `finish()`.
 *
 * ## Reader
 *
 * One scan from byte 16 builds the record table; every header field is checked (unknown record
 * or number type, a record past end of file, a rank or dims that disagree with the data size
 * each throw {@link FormatError} with the offset). A header count of -1 (a writer that died) is
 * recovered by the scan without touching the file, and reported in `warnings`; a partial last
 * record is then dropped (with a warning) instead of being an error. The index keeps 16 bytes a
 * dataset (data offset, shape id, name id) and 12 a frame; of the attributes the scan keeps only
 * those it acts on (`name`, `frame_datasets`, `step`): a dataset's attributes and annotations are
 * read from the file when `dataset(i)` (or `describe()`) asks for them.
 *
 * ## Files
 *
 * format.ts (sizes, type codes, the shapes of what is written and read), writer.ts, scan.ts (the
 * open's one pass over the records), tables.ts (the compact tables the scan fills), names.ts
 * (chunk names interned, per open and per process), index.ts (the open and the index it
 * returns); this module is the framing and its exports.
 * @module
 */
import type {
  ByteSource,
  FrameIndex,
  FrameWriter,
  Framing,
  ReaderOptions,
  WriterOptions,
} from "../types.ts";
import { ALL_WORKLOADS, WRITING_WORKLOADS } from "../types.ts";
import { hexBytes } from "../kit.ts";
import { FORMAT, IEEEIO_FILE_HEADER_BYTES } from "./format.ts";
import { createIeeeioWriter } from "./writer.ts";
import { openIeeeio } from "./index.ts";

export {
  IEEEIO_FILE_HEADER_BYTES,
  IEEEIO_MAX_BYTES,
  IEEEIO_MAX_NAME_BYTES,
  IEEEIO_RECORD,
  IEEEIO_RECORD_HEADER_BYTES,
  IEEEIO_TYPE_NAMES,
  type IeeeioAnnotation,
  type IeeeioAttribute,
  type IeeeioAttributeInput,
  type IeeeioChunk,
  type IeeeioDataset,
  type IeeeioIndex,
  ieeeioTypeCode,
  type IeeeioTypeName,
  ieeeioTypeSize,
  type IeeeioWriter,
} from "./format.ts";
export { appendWriter, createIeeeioWriter } from "./writer.ts";
export { openIeeeio } from "./index.ts";

/** The IEEEIO framing: either byte order, attributes and annotations, -1 count recovery. */
export const ieeeio: Framing = {
  name: FORMAT,
  description: "IEEEIO (FlexIO): 16-byte header, self-describing data/attribute/annotation records",
  orders: ["little", "big"],
  sharedLayout: false,
  options: [
    {
      name: "datasetsPerFrame",
      type: "integer",
      min: 1,
      help: "datasets per frame when reading (default: the writer's frame_datasets attributes)",
      workloads: ALL_WORKLOADS,
    },
    {
      name: "append",
      type: "value",
      help: "a ByteSource of an existing file to append to (library API)",
      workloads: WRITING_WORKLOADS,
    },
  ],
  magic: [{ bytes: [1, 2, 3, 4] }],
  detect(head: Uint8Array, fileSize: number): boolean {
    if (fileSize < IEEEIO_FILE_HEADER_BYTES || head.length < 8) return false;
    if (head[0] !== 1 || head[1] !== 2 || head[2] !== 3 || head[3] !== 4) return false;
    const m = hexBytes(head.subarray(4, 8));
    return m === "04 03 02 01" || m === "01 02 03 04";
  },
  createWriter(options?: WriterOptions): FrameWriter {
    return createIeeeioWriter(options);
  },
  appendWriter(source: ByteSource, options: WriterOptions = {}): FrameWriter {
    return createIeeeioWriter({ ...options, append: source });
  },
  openIndex(source: ByteSource, options?: ReaderOptions): FrameIndex {
    return openIeeeio(source, options);
  },
};
