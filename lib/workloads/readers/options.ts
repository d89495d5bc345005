/**
 * A `readers` run's options and the row of one (cache, mode, procs) measurement from its readers'
 * reports.
 * @module
 */
import type { OptionValues } from "../../framings/options.ts";
import type { EndianOption } from "../../framings/types.ts";
import type { Transfer } from "../../io/transfer.ts";
import { queueColumns, transferColumns } from "../transfer.ts";
import { readThrough } from "../../io/cache.ts";
import type { Backend, QueueSpec } from "../../backends/backend.ts";
import type { Row } from "../../report/row.ts";
import type { Progress } from "../../report/progress.ts";
import { type ReaderReport } from "./packman.ts";
import { type ReaderLauncher } from "./children.ts";

/** The two ways of sharing data between readers. */
export type ReadersMode = "shared" | "separate";

/** Page-cache state the readers start from. */
export type CacheState = "cold" | "warm";

/** Options of a `readers` run. */
export interface ReadersOptions {
  readonly backend: Backend;
  readonly procs: readonly number[];
  readonly modes: readonly ReadersMode[];
  readonly caches: readonly CacheState[];
  readonly records: number;
  readonly length: number;
  readonly seed: number;
  readonly endian: EndianOption;
  /** The backend's options (f77: marker, subrecordLimit), for writer and readers. */
  readonly backendOptions: OptionValues;
  readonly dir?: string;
  readonly progress: Progress;
  readonly launch: ReaderLauncher;
  /** The readers' backend options (under MPI each rank reads in-process with these). */
  readonly readerOptions?: OptionValues;
  /** Which program reads (`sciobench`, `gfortran`): the rows' `reader` column. */
  readonly reader?: string;
  /** A user's existing file to read instead of writing one (shared mode only). */
  readonly file?: string;
  /** Repeats of every (cache, mode, procs) cell (default 1). */
  readonly repeat?: number;
  /**
   * `--bs` / `--direct` of the writer and the readers (native framings; the launcher passes them
   * to reader processes). With O_DIRECT no cache drop is made and the rows say cache=direct.
   */
  readonly transfer?: Transfer;
  /**
   * `--iodepth` / `--engine` of every reader's reads (native framings, sciobench's reader; the
   * launcher passes them to reader processes); undefined: one read at a time.
   */
  readonly queue?: QueueSpec;
  /** Under MPI, one row per rank (with its host and audit trail) after each aggregate row. */
  readonly perRank?: boolean;
}

/** Reads `path` through once, so that the readers start warm. */
export function warmUp(path: string): void {
  readThrough(path, 1 << 20);
}

/**
 * The row of one (cache, mode, procs) run from its readers' reports: `wall` seconds from the
 * first start to the last end, `spread` seconds between the first and the last start.
 */
export function readersRow(
  o: ReadersOptions,
  cache: CacheState,
  mode: ReadersMode,
  fileBytes: number,
  resident: number,
  reports: readonly ReaderReport[],
  wall: number,
  spread: number,
): Omit<Row, "slope_s_per_proc"> & { wall_s: number } {
  for (const [k, r] of reports.entries()) {
    for (const w of r.warnings) o.progress.note(`reader ${k + 1}: ${w}`);
  }
  const procs = reports.length;
  const walls = reports.map((r) => r.wallS);
  const sum = (f: (r: ReaderReport) => number) => reports.reduce((a, r) => a + f(r), 0);
  return {
    mode,
    procs,
    file_bytes: fileBytes,
    wall_s: wall,
    mean_s: sum((r) => r.wallS) / procs,
    max_s: Math.max(...walls),
    min_s: Math.min(...walls),
    aggregate_MiBps: (procs * fileBytes) / 2 ** 20 / wall,
    read_user_s: sum((r) => r.userS),
    read_sys_s: sum((r) => r.sysS),
    read_dev_bytes: sum((r) => r.devReadBytes),
    cache: o.transfer?.direct ? "direct" : cache,
    framing: o.backend.name,
    reader: o.reader ?? "sciobench",
    records: o.records,
    length: o.length,
    reader_bytes: sum((r) => r.bytes),
    start_spread_s: spread,
    resident_before: resident,
    ...transferColumns(o.transfer),
    ...queueColumns(o.queue),
  };
}
