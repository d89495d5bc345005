/**
 * `sciobench scaling`: the IOspeed workload (seed 000) — write 5..40 datasets of 64^3 float64
 * per framing, open and close inside the timing, CPU in times() ticks; CSV, JSON or the seed's
 * own text layout.
 * @module
 */
import { UsageError } from "../errors.ts";
import { DTYPES } from "../framings/types.ts";
import { rankColumns, rankRows } from "../mpi/aggregate.ts";
import { world } from "../mpi/world.ts";
import { openRowSink, type Row } from "../report/output.ts";
import {
  averageRows,
  datasetBytes,
  runScaling,
  SCALING_AGGREGATE,
  SCALING_COLUMNS,
  scalingRow,
  seedRenderer,
  seedStderrLabel,
} from "../workloads/scaling.ts";
import { parseArgs, parseChoice, parseCount, parseIntegers, parseShape } from "./args.ts";
import type { Command } from "./command.ts";
import {
  AUDIT_HELP,
  AUDIT_OPTION,
  auditedRows,
  checkAuditFormat,
  checkScratchParent,
  parseEndian,
  PER_RANK_HELP,
  PER_RANK_OPTION,
  runMeta,
  usableBackends,
} from "./common.ts";

const HELP = `sciobench scaling: FlexIO's IOspeed (write 5..40 datasets of 64^3 doubles per framing)

Usage: sciobench scaling [options]

For each trial, framing and dataset count n: open a file, write n datasets (one frame of one
array each, the same array every time), close it; open, writes and close are all timed. Real
time comes from the monotonic clock, user and system CPU from times() in clock ticks and from
getrusage in seconds (whole process). A '*' goes to stderr as each dataset is written, as
IOspeed did. Before the first timed run each framing writes one untimed dataset (warm-up), and
each run's file is deleted before its timer starts. Files go to a scratch directory that is
always removed.

Options:
  --framing LIST      framings to compare, in section order (default ieeeio,f77,raw; the seed's
                      sections are ieeeio,hdf4,f77)
  --datasets LIST     dataset counts, e.g. 5..40:5 (default) or 1,2,4
  --shape SHAPE       shape of each dataset, slowest first (default 64x64x64)
  --type T            element type: ${DTYPES.join(", ")} (default float64)
  --trials K          repeat everything K times; K > 1 adds per-framing averages (default 1)
  --fsync             fsync before close, inside the timing (default off, as in the seed)
  --endian E          native|little|big, for framings that offer a choice (default native)
  --dir DIR           where to write the scratch files (default: current directory)
  --format F          csv (default), json, or seed: IOspeed's text layout (banner per framing,
                      'Write  5:*****', '        Realtime=R, UserTime=U, SystemTime=S, Combined=C'
                      with R in seconds and the CPU times in clock ticks; with K > 1 the
                      'Average of K trials' blocks, times in seconds)
  --out FILE          write the output to FILE instead of stdout (refused if FILE exists)
  --force             allow --out to replace an existing file
${PER_RANK_HELP}
${AUDIT_HELP}

Columns (CSV): ${SCALING_COLUMNS.join(",")}
One row per (framing, datasets, trial) in the order measured; with --trials > 1, then one row
per framing with datasets=all averaging every count and trial (as IOspeed's final block; MiBps
is the mean of the runs' MiB/s). bytes is the payload (datasets x dataset bytes), MiBps is
bytes / 2^20 / real_s. JSON rows also carry trial, file_bytes and dev_write_bytes.`;

/** The `scaling` subcommand. */
export const scalingCommand: Command = {
  name: "scaling",
  summary: "FlexIO's IOspeed: time open + n dataset writes + close per framing, CPU in ticks",
  help: HELP,
  async run(args: string[]): Promise<void> {
    const { values } = parseArgs("scaling", args, {
      options: {
        framing: { type: "string", default: "ieeeio,f77,raw" },
        datasets: { type: "string", default: "5..40:5" },
        shape: { type: "string", default: "64x64x64" },
        type: { type: "string", default: "float64" },
        trials: { type: "string", default: "1" },
        fsync: { type: "boolean", default: false },
        endian: { type: "string", default: "native" },
        dir: { type: "string" },
        format: { type: "string", default: "csv" },
        out: { type: "string" },
        force: { type: "boolean", default: false },
        help: { type: "boolean", short: "h", default: false },
        ...AUDIT_OPTION,
        ...PER_RANK_OPTION,
      },
    });
    const datasets = parseIntegers(values.datasets, "--datasets", 1);
    const shape = parseShape(values.shape, "--shape");
    const dtype = parseChoice(values.type, DTYPES, "--type");
    const trials = parseCount(values.trials, "--trials");
    const endian = parseEndian(values.endian);
    const format = parseChoice(values.format, ["csv", "json", "seed"] as const, "--format");
    const bytes = datasetBytes(shape, dtype);
    if (!Number.isSafeInteger(bytes) || bytes > 2 ** 31 - 1) {
      throw new UsageError(
        `--shape ${values.shape} of ${dtype} is ${bytes} bytes; at most 2 GiB - 1 per dataset`,
      );
    }
    checkScratchParent(values.dir);
    const backends = usableBackends(values.framing);

    checkAuditFormat(values.audit, format);
    const sink = auditedRows(
      openRowSink(rankColumns(SCALING_COLUMNS, SCALING_AGGREGATE), {
        format: format === "seed" ? "table" : format,
        out: values.out,
        force: values.force,
        meta: { ...runMeta("scaling", args), shape, type: dtype, fsync: values.fsync, trials },
        table: seedRenderer(trials),
      }),
      format,
      values.audit,
    );
    const enc = new TextEncoder();
    // under MPI only rank 0 draws the stars
    const quiet = world().rank !== 0;
    const stars = (text: string) => {
      if (quiet) return;
      const b = enc.encode(text);
      let done = 0;
      while (done < b.length) done += Deno.stderr.writeSync(b.subarray(done));
    };
    const star = enc.encode("*");
    // under MPI every rank's row goes to rank 0, which prints the aggregate (and --per-rank rows)
    const add = (row: Row) => {
      for (const r of rankRows(row, SCALING_AGGREGATE, values["per-rank"])) sink.add(r);
    };
    try {
      const runs = await runScaling(
        { backends, datasets, shape, dtype, trials, fsync: values.fsync, dir: values.dir, endian },
        {
          runStart: (backend, n, _trial, path) => stars(seedStderrLabel(backend.name, n, path)),
          dataset: () => {
            if (!quiet) Deno.stderr.writeSync(star);
          },
          runEnd: (run) => {
            stars("\n");
            add(scalingRow(run));
          },
        },
      );
      if (trials > 1) { for (const row of averageRows(runs)) add(row); }
    } finally {
      sink.close();
    }
  },
};
