/**
 * What a workload is: its name and help, the flags it takes, its columns (with units and docs),
 * the key columns of a cell, how MPI aggregates its rows, the columns people see, its chart, and
 * how it plans and runs. The CLI makes one command of each registered workload
 * (lib/workloads/registry.ts): parsing, `--help`, `--dry-run`, every output format, `--plot` and
 * MPI come from there, not from the workload.
 * @module
 */
import type { AggregateSpec } from "../mpi/aggregate.ts";
import type { ColumnDoc } from "../report/human.ts";
import type { ChartSpec } from "../report/chart.ts";
import type { OutputFormat, TableRenderer } from "../report/output.ts";
import type { Progress } from "../report/progress.ts";
import type { Row } from "../report/row.ts";

/** A backend left out of a run, with the reason. */
export interface SkippedBackend {
  /** Backend (or peer program) name. */
  readonly name: string;
  /** Why it does not run. */
  readonly reason: string;
}

/** One kind of file a run creates (in its scratch directory), how many, and each one's bytes. */
export interface PlannedFile {
  /** File name inside the scratch directory (a pattern where it varies). */
  readonly name: string;
  /** How many times the run creates it. */
  readonly count: number;
  /** Approximate payload bytes of one file. */
  readonly bytes: number;
}

/** The resolved plan of a workload run, as `--dry-run` prints it. */
export interface RunPlan {
  /** The workload's name. */
  readonly command: string;
  /** Every parameter after defaults, by option name. */
  readonly parameters: Record<string, unknown>;
  /** Backends (and peer programs) that will run, in order. */
  readonly backends: readonly { name: string; endian?: string }[];
  /** Backends asked for (or defaulted) that will not run. */
  readonly skipped: readonly SkippedBackend[];
  /** Files the run creates (all removed at the end). */
  readonly files: readonly PlannedFile[];
  /** Total bytes written, warm-ups included, in bytes. */
  readonly writeBytes: number;
  /** Total bytes read back, in bytes. */
  readonly readBytes: number;
  /** Cells known to exceed a library's limits, and other cautions. */
  readonly warnings: readonly string[];
}

/**
 * The plan of a run on `ranks` MPI ranks, each doing what `plan` says for one rank: the bytes
 * written and read times `ranks`, and each file made once per rank, or with `sharedFile` (one
 * file all ranks write their parts of) made as often, `ranks` times larger; the parameters say
 * `ranks`. One rank: `plan` unchanged.
 */
export function planForRanks(plan: RunPlan, ranks: number, sharedFile = false): RunPlan {
  if (ranks <= 1) return plan;
  return {
    ...plan,
    parameters: { ...plan.parameters, ranks },
    files: plan.files.map((f) =>
      sharedFile
        ? { ...f, bytes: f.bytes * ranks }
        : { ...f, name: `${f.name} per rank`, count: f.count * ranks }
    ),
    writeBytes: plan.writeBytes * ranks,
    readBytes: plan.readBytes * ranks,
  };
}

/** A flag a workload declares for itself, beside the shared ones of the CLI's flag table. */
export interface WorkloadFlag {
  /** Name after `--`. */
  readonly name: string;
  /** `string` takes a value, `boolean` none. */
  readonly type: "string" | "boolean";
  /** Placeholder of the value in the help (`LIST`). */
  readonly value?: string;
  /** The value when the flag is not given. */
  readonly default?: string;
  /** A comma-separated list: repeats accumulate. */
  readonly list?: true;
  /** What the flag does. */
  readonly help: string;
}

/** The values of a workload's flags as parsed (strings, booleans, repeated strings). */
export type FlagRecord = Readonly<Record<string, string | boolean | string[] | undefined>>;

/** A workload's own help prose; the usage line and the Options come from the CLI. */
export interface WorkloadHelp {
  /** What the workload is, after `sciobench NAME: `. */
  readonly title: string;
  /** What it does, before the options. */
  readonly intro: string;
  /** What follows the options (columns, notes). */
  readonly after?: string;
  /**
   * The usage line after `sciobench NAME`, where it says more than `[options]` and the
   * positionals (write: the flags it requires).
   */
  readonly usage?: string;
}

/** A run whose every check has passed: its plan, its output's shape, and how to run it. */
export interface PlannedRun {
  /**
   * What the run will do (`--dry-run` prints it; a run's first stderr line sums it up). Absent
   * for a run on the user's own file that makes no scratch files (read, write, info): no
   * `--dry-run`, no summary line.
   */
  readonly plan?: RunPlan;
  /** Lines said on stderr after the plan's summary (backends added, readers chosen). */
  readonly notes?: readonly string[];
  /** Every resolved option, for the JSON meta; read when the output opens. */
  readonly options: Record<string, unknown>;
  /**
   * Facts about the input the run reads, for the JSON meta (`meta.facts`: info's file facts);
   * read when the output opens.
   */
  readonly facts?: Record<string, unknown>;
  /** The columns of this run (with those MPI adds), when they differ from the workload's. */
  readonly columns?: readonly ColumnDoc[];
  /** The seed's own layout (`--format seed`), where the workload has one. */
  readonly seed?: TableRenderer;
  /** The scratch parent directory (`--dir`), for the file-system facts. */
  readonly dir?: string;
  /** The progress line of the run (default: one on stderr). */
  readonly progress?: Progress;
  /**
   * The output (stdout or `--out`) opens at the run's first row instead of before the run: a run
   * that fails before that prints nothing, and its options and facts may be learnt by then
   * (write --append: the framing, from the file under its lock; info: the file's facts).
   */
  readonly openAtFirstRow?: true;
  /**
   * The run prints its output itself, in the workload's own layout of the format asked (info's
   * text and JSON documents, streamed as the file is read): no output is opened and `run` adds
   * no rows.
   */
  readonly ownOutput?: true;
  /** Runs once the plan is known not to be a dry run, before its summary (notes, probes). */
  begin?(): void;
  /** Measures every cell, handing each row to `add` as it is made. */
  run(add: (row: Row) => void, progress: Progress): Promise<unknown>;
}

/** The output a run's rows go to, chosen before the plan. */
export interface RunOutput {
  /** The `--format` of the rows (after its default). */
  readonly format: OutputFormat;
}

/** One workload: everything the CLI needs to make a command of it. */
export interface Workload<V extends FlagRecord = FlagRecord> {
  /** The command's name (`sciobench NAME`). */
  readonly name: string;
  /** One line for the command list. */
  readonly summary: string;
  /** The help prose. */
  readonly help: WorkloadHelp;
  /**
   * Flags beside those every workload takes: names of the CLI's shared flags, or flags of its
   * own. The built-in workloads are named in the flag table instead.
   */
  readonly flags: readonly (string | WorkloadFlag)[];
  /** Every column with its unit and doc, in CSV order. */
  readonly columns: readonly ColumnDoc[];
  /**
   * Key columns of a cell: summary rows over repeats are made per key (none: the rows are not
   * cells, and no summary rows are made).
   */
  readonly keys: readonly string[];
  /** How MPI aggregates a row over ranks (absent: the workload refuses several ranks). */
  readonly aggregate?: AggregateSpec;
  /** The columns the human table shows. */
  readonly human: readonly string[];
  /**
   * The chart of its rows, if any: `--plot` draws it at the end of a run, and `sciobench plot`
   * draws it of a results file this workload wrote (lib/workloads/charts.ts finds the workload).
   */
  readonly chart?: ChartSpec;
  /**
   * It offers `--format seed`, the seed's own text layout (PlannedRun.seed draws it): what that
   * layout looks like, for the `--format` help.
   */
  readonly seedLayout?: string;
  /**
   * The arguments it takes after its options, by the names its usage line shows (`["FILE"]`):
   * each one is required, and `inputs` and `plan` get their values in this order. Absent: none.
   */
  readonly positionals?: readonly string[];
  /**
   * The `--format` asked for, where flags of the workload's own also choose it or its default
   * is its own (info: `--json`, and `table` wherever stdout goes). Absent: `--format` as given
   * (default: table on a terminal, else csv).
   */
  outputFormat?(values: V): string | undefined;
  /**
   * The files a run reads (or writes in place), `[name in messages, path]`, from its flags and
   * its `positionals`' values: an `--out` or `--plot` that is one of them is refused before the
   * plan touches anything.
   */
  inputs?(values: V, positionals: readonly string[]): readonly (readonly [string, string])[];
  /**
   * Resolves the flags (and the `positionals`' values) into a run, checking everything before
   * anything is written; `output` is the output already chosen (its flags checked first).
   */
  plan(
    values: V,
    args: readonly string[],
    output: RunOutput,
    positionals: readonly string[],
  ): PlannedRun | Promise<PlannedRun>;
}
