/**
 * The record-by-record workload (seed 003, Ed Hartnett's 2003 netCDF-4 timing test): one
 * variable of shape records x y x z (the seed: 2000 x 300 x 500) written one record at a time
 * per framing and byte order (open, each record, fsync, close: timed), dropped from the page
 * cache, then read back one record at a time (open, each record, close: timed) and checked.
 * Reports wall time, CPU time (user + system) and MiB/s per phase, and averages over trials,
 * so the seed's "avg CPU time" / "avg User Time" (its wall clock) lines can be reproduced.
 *
 * Differences from the seed, on purpose: CPU and wall time come from getrusage and the
 * monotonic clock for the whole process; the write phase includes an fsync before close (the
 * seed's wall times suggest the data reached the disk, but its code is lost); reads start from a
 * cold page cache (posix_fadvise, no root needed); every record read is verified inside the
 * timing (one memcmp per record).
 *
 * The parts: columns.ts (columns, keys, aggregation, chart), options.ts (what a run takes and
 * gives), targets.ts (backends and byte orders), frames.ts (the seeded records), ranks.ts (which
 * records and files an MPI rank writes and reads), cell.ts (one target and repeat measured),
 * run.ts (the run), rows.ts (result rows and the seed's text layout).
 * @module
 */
export {
  RECORDS_AGGREGATE,
  RECORDS_CHART,
  RECORDS_COLUMN_DOCS,
  RECORDS_COLUMNS,
  RECORDS_HUMAN_COLUMNS,
  RECORDS_KEYS,
} from "./columns.ts";
export type { RecordsOptions, RecordsRun, RecordsTarget, RecordsType } from "./options.ts";
export { commonOrder, recordsTargets, resolveOrder } from "./targets.ts";
export { RecordFrames } from "./frames.ts";
export { runRecords } from "./run.ts";
export { recordsRow, seedRecordsRenderer } from "./rows.ts";
