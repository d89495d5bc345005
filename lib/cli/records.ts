/**
 * `sciobench records`: the record-by-record workload (seed 003) — write a records x y x z
 * variable one record at a time per framing and byte order, drop the cache, read it back record
 * by record, verify; wall and CPU time per phase and averages over trials.
 * @module
 */
import { UsageError } from "../errors.ts";
import type { EndianOption } from "../framings/types.ts";
import { rankColumns, rankRows } from "../mpi/aggregate.ts";
import { openRowSink, type Row } from "../report/output.ts";
import { Progress } from "../report/progress.ts";
import {
  RECORDS_AGGREGATE,
  RECORDS_COLUMNS,
  recordsAverages,
  recordsRow,
  recordsTargets,
  type RecordsType,
  runRecords,
  seedRecordsRenderer,
} from "../workloads/records.ts";
import { parseArgs, parseChoice, parseCount, parseList, parseShape } from "./args.ts";
import type { Command } from "./command.ts";
import {
  AUDIT_HELP,
  AUDIT_OPTION,
  auditedRows,
  backendOptionsHelp,
  checkAuditFormat,
  checkScratchParent,
  MPI_HELP,
  MPI_OPTIONS,
  parseEndian,
  parseReorder,
  runMeta,
  usableBackends,
} from "./common.ts";
import { parseOptionArgs } from "../framings/options.ts";

/** The default shape: a tenth of the seed's records (120 MB as float32), seconds per phase here. */
export const DEFAULT_RECORDS_SHAPE = "200x300x500";

/** The seed's shape: x 2000 records of y 300 x z 500. */
export const SEED_RECORDS_SHAPE = "2000x300x500";

const HELP =
  `sciobench records: write and read a variable record by record (netCDF-4's 2003 timing test)

Usage: sciobench records [options]

For each trial, framing and byte order: open a file, write the variable one record (the first
dimension) at a time, fsync, close (timed: the write phase); drop the file from the page cache
(posix_fadvise, no root needed); open it, read every record in order and check it against what
was written, close (timed: the read phase); delete the file. Wall time comes from the monotonic
clock, CPU (user + system) from getrusage for the whole process. Files go to a scratch
directory that is always removed.

Options:
  --shape SHAPE       records x record shape (default ${DEFAULT_RECORDS_SHAPE}; the seed's shape is
                      ${SEED_RECORDS_SHAPE}: 1.2 GB as float32, 2.4 GB as float64)
  --type T            float32 or float64 (default float32)
  --framing LIST      framings and peers to compare (default netcdf,raw; peers such as hdf5 or
                      netcdf4 are measured where their library is installed)
  --endian LIST       big, native (or little), one or both (default big,native), for framings
                      that allow both; netcdf (classic) is always big-endian
  --trials K          repeat everything K times; K > 1 adds average rows (default 1)
  --seed S            data seed (default 1)
  --option KEY=VALUE  writer setting, repeatable (e.g. variant=2, fill=true, numrecs=frame for
                      netcdf)
  --dir DIR           where to write the scratch files (default: current directory)
  --format F          csv (default), json, or seed: the seed's 'About to write ... / avg CPU time
                      = ... secs. / avg User Time = ... secs.' lines from the averages (the seed's
                      "User Time" is wall clock time)
  --out FILE          write the output to FILE instead of stdout (refused if FILE exists)
  --force             allow --out to replace an existing file
${MPI_HELP}
${AUDIT_HELP}

Columns (CSV): ${RECORDS_COLUMNS.join(",")}
One row per (framing, endian, phase, trial) in the order measured (trial 1..K); with --trials > 1,
then one row per (framing, endian, phase) with trial=avg holding the means. bytes is the payload
(records x record bytes), cpu_s = user_s + sys_s, MiBps = bytes / 2^20 / wall_s. JSON rows also
carry file_bytes, dev_read_bytes, dev_write_bytes and resident_after_drop.`;

/** The `records` subcommand. */
export const recordsCommand: Command = {
  name: "records",
  summary: "netCDF-4's 2003 test: write and read a variable record by record, big-endian vs native",
  get help(): string {
    return HELP + backendOptionsHelp("records");
  },
  async run(args: string[]): Promise<void> {
    const { values } = parseArgs("records", args, {
      options: {
        shape: { type: "string", default: DEFAULT_RECORDS_SHAPE },
        type: { type: "string", default: "float32" },
        framing: { type: "string", default: "netcdf,raw" },
        endian: { type: "string", default: "big,native" },
        trials: { type: "string", default: "1" },
        seed: { type: "string", default: "1" },
        option: { type: "string", multiple: true },
        dir: { type: "string" },
        format: { type: "string", default: "csv" },
        out: { type: "string" },
        force: { type: "boolean", default: false },
        help: { type: "boolean", short: "h", default: false },
        ...AUDIT_OPTION,
        ...MPI_OPTIONS,
      },
    });
    const shape = parseShape(values.shape, "--shape");
    if (shape.length < 2) {
      throw new UsageError(
        `bad --shape '${values.shape}': expected records x record shape, such as 200x300x500`,
      );
    }
    const dtype = parseChoice(
      values.type,
      ["float32", "float64"] as const,
      "--type",
    ) as RecordsType;
    const trials = parseCount(values.trials, "--trials");
    const seed = parseCount(values.seed, "--seed");
    const endians: EndianOption[] = parseList(values.endian, "--endian").map(parseEndian);
    const format = parseChoice(values.format, ["csv", "json", "seed"] as const, "--format");
    const recordBytes = shape.slice(1).reduce((a, b) => a * b, 1) * (dtype === "float32" ? 4 : 8);
    if (!Number.isSafeInteger(recordBytes * shape[0]!) || recordBytes > 2 ** 31 - 1) {
      throw new UsageError(`--shape ${values.shape} of ${dtype}: at most 2 GiB - 1 per record`);
    }
    checkScratchParent(values.dir);
    const progress = new Progress();
    const backends = usableBackends(values.framing);
    const backendOptions = parseOptionArgs(backends, values.option, "records");
    const targets = recordsTargets(backends, endians, (t) => progress.note(t));

    checkAuditFormat(values.audit, format);
    const sink = auditedRows(
      openRowSink(rankColumns(RECORDS_COLUMNS, RECORDS_AGGREGATE), {
        format: format === "seed" ? "table" : format,
        out: values.out,
        force: values.force,
        meta: { ...runMeta("records", args), shape, type: dtype, trials, seed },
        table: seedRecordsRenderer(shape),
      }),
      format,
      values.audit,
    );
    // under MPI every rank's row goes to rank 0, which prints the aggregate (and --per-rank rows)
    const add = (row: Row) => {
      for (const r of rankRows(row, RECORDS_AGGREGATE, values["per-rank"])) sink.add(r);
    };
    const reorder = parseReorder(values.reorder);
    try {
      const runs = await runRecords(
        { targets, shape, dtype, trials, seed, dir: values.dir, backendOptions, progress, reorder },
        (run) => add(recordsRow(run, shape)),
      );
      if (trials > 1 || format === "seed") {
        for (const row of recordsAverages(runs, shape)) add(row);
      }
    } finally {
      sink.close();
    }
  },
};
