/**
 * `sciobench records`: the record-by-record workload (seed 003) — write a records x y x z
 * variable one record at a time per framing and byte order, drop the cache, read it back record
 * by record, verify; wall and CPU time per phase and averages over trials.
 * @module
 */
import { UsageError } from "../../core/errors.ts";
import { DTYPE_SIZE } from "../../framings/types.ts";
import { rankRows } from "../../mpi/aggregate.ts";
import { world } from "../../mpi/world.ts";
import { columnHelp } from "../../report/human.ts";
import {
  commonOrder,
  RECORDS_AGGREGATE,
  RECORDS_CHART,
  RECORDS_COLUMN_DOCS,
  RECORDS_HUMAN_COLUMNS,
  RECORDS_KEYS,
  recordsRow,
  type RecordsTarget,
  recordsTargets,
  type RecordsType,
  runRecords,
  seedRecordsRenderer,
} from "./mod.ts";
import { RECORDS_QUICK, RECORDS_SEED } from "../seeds.ts";
import { parseChoice, parseCount, parseShape } from "../../core/values.ts";
import { checkMemory, checkScratchRoom } from "../checks.ts";
import type { FlagValues } from "../../cli/flags.ts";
import {
  planForRanks,
  type PlannedRun,
  type RunPlan,
  type SkippedBackend,
  type Workload,
  type WorkloadHelp,
} from "../workload.ts";
import {
  mpiIoOptions,
  parseFsync,
  parseLayout,
  parseMpiIo,
  parseQueue,
  parseReorder,
  parseSegments,
  parseTransfer,
  repeatOption,
} from "../settings.ts";
import { mpiIoColumns } from "../cells.ts";
import { queueColumns } from "../transfer.ts";
import { DEFAULT_DIRECT_BS } from "../../io/transfer.ts";
import { MPI_IO_COLUMN_NAMES, rankColumnDocs } from "../columns.ts";
import { parseOptionArgs } from "../../framings/options.ts";
import { refuseUnstorable } from "../../backends/capabilities.ts";
import { EndianChoice, NUMBER_TYPES, resolveBackends } from "../settings.ts";
import { checkSegments } from "../../mpi/shared.ts";

const HELP: WorkloadHelp = {
  title: "write and read a variable record by record (netCDF-4's 2003 timing test)",
  intro:
    `For each trial, backend and byte order: open a file, write the variable one record (the first
dimension) at a time, fsync, close (timed: the write phase); drop the file from the page cache
(posix_fadvise, no root needed); open it, read every record in order and check it against what
was written, close (timed: the read phase); delete the file. Wall time comes from the monotonic
clock, CPU (user + system) from getrusage for the whole process. Files go to a scratch
directory that is always removed.`,
  after: `Columns (CSV order):
${columnHelp(RECORDS_COLUMN_DOCS)}
One row per (framing, endian, phase, repeat) in the order measured; with --repeat K > 1, then
five summary rows per (framing, endian, phase): stat = mean, median, stddev, min, max.`,
};

/** The plan of a records run: one file per (target, trial), written once and read once. */
function recordsPlan(
  p: {
    shape: readonly number[];
    dtype: string;
    trials: number;
    seed: number;
    recordBytes: number;
    options: readonly string[];
  },
  targets: readonly RecordsTarget[],
  skipped: readonly SkippedBackend[],
): RunPlan {
  const bytes = p.recordBytes * p.shape[0]!;
  return {
    command: "records",
    parameters: {
      shape: p.shape,
      records: p.shape[0],
      record_shape: p.shape.slice(1),
      type: p.dtype,
      record_bytes: p.recordBytes,
      file_bytes: bytes,
      framing: [...new Set(targets.map((t) => t.backend.name))],
      endian: targets.map((t) => `${t.backend.name}=${t.endian}`),
      trials: p.trials,
      seed: p.seed,
      option: p.options,
    },
    backends: targets.map((t) => ({ name: t.backend.name, endian: t.endian })),
    skipped,
    files: targets.map((t) => ({
      name: `records.${t.backend.name}.${t.endian}`,
      count: p.trials,
      bytes,
    })),
    writeBytes: targets.length * p.trials * bytes,
    readBytes: targets.length * p.trials * bytes,
    warnings: [],
  };
}

/** The `records` workload. */
export const recordsWorkload: Workload<FlagValues<"records">> = {
  name: "records",
  summary: "netCDF-4's 2003 test: write and read a variable record by record, big-endian vs native",
  help: HELP,
  flags: [],
  columns: RECORDS_COLUMN_DOCS,
  keys: RECORDS_KEYS,
  aggregate: RECORDS_AGGREGATE,
  human: RECORDS_HUMAN_COLUMNS,
  chart: RECORDS_CHART,
  seedLayout: "the seed's 'About to write ... / avg CPU time = ... secs. / avg User Time = " +
    "... secs.' lines, means over the repeats (the seed's \"User Time\" is wall clock time)",
  plan(values): PlannedRun {
    const shapeText = values.shape ?? (values.quick ? RECORDS_QUICK.shape : RECORDS_SEED.shape);
    const shape = parseShape(shapeText, "--shape");
    if (shape.length < 2) {
      throw new UsageError(
        `bad --shape '${shapeText}': expected records x record shape, such as 2000x300x500`,
      );
    }
    const dtype: RecordsType = parseChoice(values.type, NUMBER_TYPES, "--type");
    const repeat = repeatOption(values.repeat, values.trials);
    const seed = parseCount(values.seed, "--seed");
    const recordBytes = shape.slice(1).reduce((a, b) => a * b, 1) * DTYPE_SIZE[dtype];
    if (!Number.isSafeInteger(recordBytes * shape[0]!) || recordBytes > 2 ** 31 - 1) {
      throw new UsageError(`--shape ${shapeText} of ${dtype}: at most 2 GiB - 1 per record`);
    }
    const resolved = resolveBackends(values.framing ?? RECORDS_SEED.framing);
    // the bare command keeps the seed's orders (HDF5 big-endian, netCDF-4 native); backends the
    // user names are measured in one byte order, so the comparison is of backends, not of orders
    const endian = new EndianChoice(
      values.endian ??
        (values.framing === undefined ? RECORDS_SEED.endian : commonOrder(resolved.run)),
    );
    const backendOptions = parseOptionArgs(resolved.run, values.option, "records");
    const fsync = parseFsync(values.fsync, resolved.run);
    const layout = parseLayout(values.layout, resolved.run, fsync);
    const mpiIo = parseMpiIo(values, resolved.run);
    for (const b of resolved.run) refuseUnstorable(b, dtype);
    const notes: string[] = [];
    const targets = recordsTargets(
      resolved.run,
      (name) => endian.ordersOf(name),
      (t) => notes.push(t),
    );
    // every rank writes and reads what one rank's plan says (--layout shared: its part of one file)
    const plan = planForRanks(
      recordsPlan(
        { shape, dtype, trials: repeat, seed, recordBytes, options: values.option ?? [] },
        targets,
        resolved.skipped,
      ),
      world().size,
      layout === "shared",
    );
    checkScratchRoom(
      values.dir,
      recordBytes * shape[0]!,
      "the file of --shape",
      "use a smaller --shape or another --dir",
    );
    checkMemory(3 * recordBytes, "a record of --shape", "use a smaller --shape");
    const transfer = parseTransfer(values, resolved.run, values.dir);
    const queue = parseQueue(values, resolved.run);
    if (queue !== undefined) {
      // a staging buffer per write request in flight, and the runs being filled
      const bs = transfer?.bs ?? DEFAULT_DIRECT_BS;
      checkMemory(
        (queue.depth + 2) * bs,
        `--iodepth ${queue.depth} write buffers of ${bs} bytes`,
        "use a smaller --iodepth or --bs",
      );
    }
    const reorder = parseReorder(values.reorder);
    const segments = parseSegments(values.segments, layout, resolved.run);
    checkSegments(shape[0]!, segments);
    return {
      plan,
      notes,
      dir: values.dir,
      columns: rankColumnDocs(RECORDS_COLUMN_DOCS, RECORDS_AGGREGATE, MPI_IO_COLUMN_NAMES),
      seed: seedRecordsRenderer(shape),
      options: {
        framing: resolved.run.map((b) => b.name),
        endian: targets.map((t) => `${t.backend.name}=${t.endian}`),
        shape,
        type: dtype,
        repeat,
        seed,
        option: Object.fromEntries(backendOptions),
        fsync,
        ...(world().size > 1 ? { reorder, per_rank: values["per-rank"], layout, segments } : {}),
        ...mpiIoOptions(mpiIo),
        bs: transfer?.bs ?? null,
        direct: transfer?.direct ?? false,
        ...queueColumns(queue),
        dir: values.dir ?? ".",
      },
      run: (add, progress) =>
        runRecords(
          {
            ...{ targets, shape, dtype, repeat, seed, dir: values.dir, backendOptions, progress },
            ...{ reorder, fsync, transfer, queue, layout, segments, mpiIo },
          },
          (run) => {
            // under MPI every rank's row goes to rank 0, which prints the aggregate (and
            // --per-rank rows), each saying how its files were written
            const row = recordsRow(run, shape, transfer);
            if (world().size > 1) {
              const backend = targets.find((t) => t.backend.name === run.framing)!.backend;
              Object.assign(row, mpiIoColumns(backend, mpiIo, layout, segments));
            }
            for (const r of rankRows(row, RECORDS_AGGREGATE, values["per-rank"])) add(r);
          },
        ),
    };
  },
};
