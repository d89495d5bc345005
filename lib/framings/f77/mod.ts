/**
 * The Fortran unformatted sequential framing (`f77`), as gfortran writes it: no header and no
 * magic number, only records, each framed by a signed byte count before and after its payload.
 *
 * Layout (see shared/specs/fortran.md):
 * - a record is one or more subrecords: leading marker, payload, trailing marker;
 * - a marker is a signed 4-byte integer (gfortran's default) or 8-byte integer
 *   (`-frecord-marker=8`), in the byte order of the data (`-fconvert=big-endian` swaps both);
 * - |marker| is the payload size of that subrecord in bytes; a negative leading marker means
 *   another subrecord follows, a negative trailing marker means one precedes. A record that fits
 *   in one subrecord is framed (+n ... +n);
 * - records longer than the subrecord limit are split: gfortran's limit is 2^31 - 9 bytes with
 *   4-byte markers and "never" with 8-byte markers; `-fmax-subrecord-length=N` sets it for both
 *   (verified with gfortran 12: exact multiples of the limit get no empty trailing subrecord).
 *
 * Frames: every chunk of a frame is one record, in chunk order, so the table workload's frames
 * (position, orientation) are two records each. The file stores no names, types or steps: a
 * reader gets them from the `layout` option (a workload reading its own file), or from the
 * options below, or uses the defaults (one float64 record per frame, chunks `record/<r>` with r
 * the 1-based record number, as Fortran counts records).
 *
 * Writer options: `marker` 4 | 8 (default 4), `endian` little | big | native (default native),
 * `subrecordLimit` bytes per subrecord (default 2^31 - 9 for 4-byte markers, unlimited for 8).
 *
 * Reader options: `layout` (ChunkLayout per record of a frame; each record must match it),
 * `recordsPerFrame` (default 1), `dtype` (a type or comma list, one per record of a frame;
 * `float32:3` adds trailing dimensions; default float64; a record whose size is not a whole
 * number of elements is read as uint8 with a warning), `names` (comma list), `marker` 4 | 8 |
 * auto and `endian` little | big | native | auto (default auto: the first record tells, the
 * whole file must agree, and a file that fits several combinations is an error).
 *
 * The reader checks every trailing marker (gfortran does not) and the subrecord signs, and
 * reports a broken file with the record number and the byte offset.
 *
 * ## Files
 *
 * format.ts (sizes, markers, the options both sides parse), writer.ts, scan.ts (one pass over the
 * markers), detect.ts (the marker width and byte order, given or detected), plan.ts (records to
 * chunks), index.ts; this module is the framing and its exports.
 * @module
 */
import {
  type ByteSource,
  type FrameIndex,
  type FrameWriter,
  type Framing,
  type ReaderOptions,
  type WriterOptions,
} from "../types.ts";
import { UsageError } from "../../core/errors.ts";
import { checkAppendOrder } from "../raw.ts";
import { F77_OPTIONS, FORMAT } from "./format.ts";
import { F77Writer, writtenRecords } from "./writer.ts";
import { headFits, readTable } from "./detect.ts";
import { framePlan, tablePlan } from "./plan.ts";
import { F77Index } from "./index.ts";

export { F77_MAX_SUBRECORD, F77_MIN_SUBRECORD, int64At, type MarkerWidth } from "./format.ts";

/** The Fortran unformatted sequential framing (`f77`): gfortran's record markers, 4 or 8 bytes, either byte order. */
export const f77: Framing = {
  name: FORMAT,
  description:
    "Fortran unformatted sequential records (gfortran markers: 4 or 8 bytes, subrecords)",
  orders: ["little", "big"],
  options: F77_OPTIONS,
  sharedLayout: true,
  /** A record's payload plus a leading and a trailing marker per subrecord. */
  recordBytes(payloadBytes: number, options: WriterOptions): number {
    const { marker, subrecordLimit } = writtenRecords(options);
    return payloadBytes + 2 * marker * Math.max(1, Math.ceil(payloadBytes / subrecordLimit));
  },
  magic: [],
  detect(head: Uint8Array, fileSize: number): boolean {
    for (const w of [4, 8] as const) {
      for (const o of ["little", "big"] as const) {
        if (headFits(head, fileSize, w, o)) return true;
      }
    }
    return false;
  },
  createWriter(options: WriterOptions = {}): FrameWriter {
    return new F77Writer(options);
  },
  appendWriter(source: ByteSource, options: WriterOptions = {}): FrameWriter {
    // The existing records decide marker width and byte order (given options must agree).
    const { t } = readTable(source, { ...options, endian: undefined }, []);
    checkAppendOrder(FORMAT, source.path, t.order, options.endian);
    return new F77Writer({ ...options, marker: t.w, endian: t.order }).startAt(source.size);
  },
  openIndex(source: ByteSource, options: ReaderOptions = {}): FrameIndex {
    const given = framePlan(options);
    const warnings: string[] = [];
    const { t, detected } = readTable(source, options, warnings);
    const plan = given.assumed ? tablePlan(t) ?? given : given;
    if (t.starts.length > 0 && plan.perFrame > t.starts.length) {
      throw new UsageError(
        `f77: ${source.path} holds ${t.starts.length} record(s): recordsPerFrame=${plan.perFrame} ` +
          `leaves no frame; give at most ${t.starts.length}`,
      );
    }
    return new F77Index(source, t, plan, detected, warnings);
  },
};
