/**
 * The workloads (`sciobench/workloads`): the four seed benchmarks as functions that take typed
 * options (backends, sizes, seeds, a Progress) and return rows with the CSV columns of the
 * matching command (`table`, `scaling`, `records`, `readers`), each column as the schema
 * (`COLUMN_SCHEMA`: unit, kind, meaning) declares it.
 *
 * ```ts
 * import { READERS_COLUMNS, runTable, TABLE_COLUMNS } from "./mod.ts";
 *
 * console.log(typeof runTable, TABLE_COLUMNS[0], READERS_COLUMNS.includes("procs")); // function framing true
 * ```
 * @module
 */
export { runTable, TABLE_COLUMNS, TableFrames, type TableOptions } from "./table/mod.ts";
export {
  runScaling,
  SCALING_COLUMNS,
  type ScalingOptions,
  scalingRow,
  type ScalingRun,
} from "./scaling/mod.ts";
export {
  RECORDS_COLUMNS,
  type RecordsOptions,
  recordsRow,
  type RecordsRun,
  recordsTargets,
  runRecords,
} from "./records/mod.ts";
export { READERS_COLUMNS, type ReadersOptions, runReaders } from "./readers/mod.ts";
export { COLUMN_SCHEMA, type ColumnEntry, type ColumnName } from "./columns.ts";
export type { Row } from "../report/row.ts";
export { Progress } from "../report/progress.ts";
