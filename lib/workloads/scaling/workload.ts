/**
 * `sciobench scaling`: the IOspeed workload (seed 000) — write 5..40 datasets of 64^3 float64
 * per framing, open and close inside the timing, CPU in times() ticks; CSV, JSON or the seed's
 * own text layout.
 * @module
 */
import { UsageError } from "../../core/errors.ts";
import type { Backend, FsyncPolicy } from "../../backends/backend.ts";
import { rankRows } from "../../mpi/aggregate.ts";
import { world } from "../../mpi/world.ts";
import { columnHelp } from "../../report/human.ts";
import { Progress } from "../../report/progress.ts";
import type { Row } from "../../report/row.ts";
import { writeStderrPartial } from "../../core/diagnostics.ts";
import { SCALING_QUICK, SCALING_SEED } from "../seeds.ts";
import {
  datasetBytes,
  runScaling,
  SCALING_AGGREGATE,
  SCALING_CHART,
  SCALING_COLUMN_DOCS,
  SCALING_HUMAN_COLUMNS,
  SCALING_KEYS,
  type ScalingObserver,
  scalingRow,
  seedRenderer,
  seedStderrLabel,
} from "./mod.ts";
import { formatSize } from "../../report/units.ts";
import { parseChoice, parseIntegers, parseShape } from "../../core/values.ts";
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
import { parseFsync, parseTransfer, repeatOption } from "../settings.ts";
import { refuseUnstorable } from "../../backends/capabilities.ts";
import { EndianChoice, NUMBER_TYPES, refuseMpiIo, resolveBackends } from "../settings.ts";

const HELP: WorkloadHelp = {
  title: "FlexIO's IOspeed (write 5..40 datasets of 64^3 doubles per backend)",
  intro:
    `For each trial, backend and dataset count n: open a file, write n datasets (one frame of one
array each, the same array every time), close it; open, writes and close are all timed. Real
time comes from the monotonic clock, user and system CPU from times() in clock ticks and from
getrusage in seconds (whole process). A '*' goes to stderr as each dataset is written, as
IOspeed did. Before the first timed run each backend writes one untimed dataset (warm-up), and
each run's file is deleted before its timer starts. Files go to a scratch directory that is
always removed.

With no options it is the seed's experiment: sections IEEE, HDF, F77 in that order (HDF4 where
the library loads, with a note otherwise), 5..40 datasets of 64^3 float64, HDF4 big-endian
(DFNT_FLOAT64) and the others in native order.`,
  after: `Columns (CSV order):
${columnHelp(SCALING_COLUMN_DOCS)}
One row per (framing, datasets, repeat) in the order measured; with --repeat K > 1, then five
summary rows per (framing, datasets): stat = mean, median, stddev, min, max.`,
};

/** Most datasets one scaling file may hold. */
const MAX_DATASETS = 100_000;

/** The plan of a scaling run: one file per (framing, count, trial) plus one warm-up each. */
function scalingPlan(
  p: {
    datasets: readonly number[];
    shape: readonly number[];
    dtype: string;
    trials: number;
    fsync: FsyncPolicy;
    bytes: number;
    endian: EndianChoice;
  },
  resolved: { run: readonly Backend[]; skipped: readonly SkippedBackend[] },
): RunPlan {
  const perTrial = p.datasets.reduce((a, n) => a + n, 0) * p.bytes;
  return {
    command: "scaling",
    parameters: {
      framing: resolved.run.map((b) => b.name),
      datasets: p.datasets,
      shape: p.shape,
      type: p.dtype,
      dataset_bytes: p.bytes,
      trials: p.trials,
      fsync: p.fsync,
      endian: Object.fromEntries(resolved.run.map((b) => [b.name, p.endian.of(b.name)])),
    },
    backends: resolved.run.map((b) => ({ name: b.name, endian: p.endian.of(b.name) })),
    skipped: resolved.skipped,
    files: resolved.run.flatMap((b) => [
      { name: `warmup.${b.name}`, count: 1, bytes: p.bytes },
      ...p.datasets.map((n) => ({
        name: `speed.${b.name} (${n} datasets)`,
        count: p.trials,
        bytes: n * p.bytes,
      })),
    ]),
    writeBytes: resolved.run.length * (p.trials * perTrial + p.bytes),
    readBytes: 0,
    warnings: [],
  };
}

/** What a scaling run writes: the dataset counts, each dataset's shape, type and bytes. */
interface ScalingCells {
  readonly datasets: readonly number[];
  readonly shape: readonly number[];
  readonly dtype: (typeof NUMBER_TYPES)[number];
  readonly repeat: number;
  readonly endian: EndianChoice;
  readonly bytes: number;
}

/**
 * The cells of a scaling run, checked in this order: `--layout` (never shared), `--datasets`,
 * `--shape`, `--type`, `--repeat` (or `--trials`), `--endian`, and a dataset of at most 2 GiB - 1.
 */
function scalingCells(values: FlagValues<"scaling">): ScalingCells {
  if (parseChoice(values.layout, ["per-rank", "shared"] as const, "--layout") === "shared") {
    throw new UsageError(
      "scaling --layout shared is not offered: IOspeed times opening one file, writing n " +
        "datasets and closing it, and in a shared file only rank 0 would create and complete " +
        "the file (use table or records --layout shared)",
    );
  }
  const datasets = parseIntegers(
    values.datasets ?? (values.quick ? SCALING_QUICK.datasets : SCALING_SEED.datasets),
    "--datasets",
    1,
    MAX_DATASETS,
  );
  const shape = parseShape(values.shape, "--shape");
  const dtype = parseChoice(values.type, NUMBER_TYPES, "--type");
  const repeat = repeatOption(values.repeat, values.trials);
  const endian = new EndianChoice(values.endian);
  const bytes = datasetBytes(shape, dtype);
  if (!Number.isSafeInteger(bytes) || bytes > 2 ** 31 - 1) {
    throw new UsageError(
      `--shape ${values.shape} of ${dtype} is ${bytes} bytes; at most 2 GiB - 1 per dataset`,
    );
  }
  return { datasets, shape, dtype, repeat, endian, bytes };
}

/**
 * What a scaling run tells as it goes: the progress line per run, IOspeed's stars on stderr with
 * `--format seed` (under MPI only rank 0 draws them), and each run's row (under MPI every rank's
 * row goes to rank 0, which prints the aggregate and the --per-rank rows).
 */
function scalingObserver(
  values: FlagValues<"scaling">,
  cells: ScalingCells,
  count: number,
  quiet: boolean,
  out: { add: (row: Row) => void; progress: Progress },
): ScalingObserver {
  const { repeat, bytes } = cells;
  const { add, progress } = out;
  const stars = (text: string) => {
    if (!quiet) writeStderrPartial(text);
  };
  let index = 0;
  return {
    runStart: (backend, n, rep, path) => {
      index++;
      const again = repeat > 1 ? ` repeat ${rep}/${repeat}` : "";
      progress.begin(`${backend.name} datasets=${n}${again}`, {
        index,
        count,
        phaseBytes: { write: n * bytes },
      });
      stars(seedStderrLabel(backend.name, n, path));
    },
    dataset: () => stars("*"),
    runEnd: (run) => {
      stars("\n");
      progress.clear();
      // under MPI every rank's row goes to rank 0, which prints the aggregate (and
      // --per-rank rows)
      for (const r of rankRows(scalingRow(run), SCALING_AGGREGATE, values["per-rank"])) {
        add(r);
      }
    },
  };
}

/** The `scaling` workload. */
export const scalingWorkload: Workload<FlagValues<"scaling">> = {
  name: "scaling",
  summary: "FlexIO's IOspeed: time open + n dataset writes + close per backend, CPU in ticks",
  help: HELP,
  flags: [],
  columns: SCALING_COLUMN_DOCS,
  keys: SCALING_KEYS,
  aggregate: SCALING_AGGREGATE,
  human: SCALING_HUMAN_COLUMNS,
  chart: SCALING_CHART,
  seedLayout: "IOspeed's text layout (a banner per backend, 'Write  5:*****', then " +
    "'Realtime=R, UserTime=U, SystemTime=S, Combined=C' with R in seconds and CPU in clock " +
    "ticks; with K > 1 the 'Average of K trials' blocks, in seconds)",
  plan(values, _args, { format }): PlannedRun {
    const cells = scalingCells(values);
    const { datasets, shape, dtype, repeat, endian, bytes } = cells;
    const resolved = resolveBackends(values.framing);
    refuseMpiIo(resolved.run, "scaling");
    for (const b of resolved.run) {
      refuseUnstorable(b, dtype);
      endian.of(b.name);
    }
    const fsync = parseFsync(values.fsync, resolved.run, "none");
    // under MPI each rank writes its own files
    const plan = planForRanks(
      scalingPlan({ datasets, shape, dtype, trials: repeat, fsync, bytes, endian }, resolved),
      world().size,
    );
    checkScratchRoom(
      values.dir,
      Math.max(...datasets) * bytes,
      `the largest file (${Math.max(...datasets)} datasets of ${formatSize(bytes)})`,
      "use fewer --datasets, a smaller --shape or another --dir",
    );
    checkMemory(2 * bytes, `a dataset of --shape ${values.shape}`, "use a smaller --shape");
    const transfer = parseTransfer(values, resolved.run, values.dir);
    const backends = resolved.run;
    // IOspeed's stars with --format seed; under MPI only rank 0 draws them
    const quiet = format !== "seed" || world().rank !== 0;
    const count = repeat * backends.length * datasets.length;
    return {
      plan,
      dir: values.dir,
      seed: seedRenderer(repeat),
      progress: new Progress({ quiet: format === "seed" }),
      options: {
        framing: backends.map((b) => b.name),
        datasets,
        shape,
        type: dtype,
        repeat,
        fsync,
        endian: backends.map((b) => `${b.name}=${endian.of(b.name)}`),
        bs: transfer?.bs ?? null,
        direct: transfer?.direct ?? false,
        dir: values.dir ?? ".",
        ...(world().size > 1 ? { per_rank: values["per-rank"] } : {}),
      },
      run: (add, progress) =>
        runScaling(
          {
            backends,
            datasets,
            shape,
            dtype,
            repeat,
            fsync,
            dir: values.dir,
            endianOf: (name) => endian.of(name),
            transfer,
          },
          scalingObserver(values, cells, count, quiet, { add, progress }),
        ),
    };
  },
};
