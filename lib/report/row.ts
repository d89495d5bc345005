/**
 * The result row every workload produces and every output format writes.
 * @module
 */

/**
 * One result row: column name to value. Objects appear only in JSON output (a row's audit
 * trail), never in CSV columns.
 */
export type Row = Record<string, string | number | boolean | null | object>;
