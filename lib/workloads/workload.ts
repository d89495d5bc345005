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
}

/** A run whose every check has passed: its plan, its output's shape, and how to run it. */
export interface PlannedRun {
  /** What the run will do (`--dry-run` prints it; a run's first stderr line sums it up). */
  readonly plan: RunPlan;
  /** Lines said on stderr after the plan's summary (backends added, readers chosen). */
  readonly notes?: readonly string[];
  /** Every resolved option, for the JSON meta. */
  readonly options: Record<string, unknown>;
  /** The columns of this run (with those MPI adds), when they differ from the workload's. */
  readonly columns?: readonly ColumnDoc[];
  /** The seed's own layout (`--format seed`), where the workload has one. */
  readonly seed?: TableRenderer;
  /** The scratch parent directory (`--dir`), for the file-system facts. */
  readonly dir?: string;
  /** The progress line of the run (default: one on stderr). */
  readonly progress?: Progress;
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
  /** Key columns of a cell: summary rows over repeats are made per key. */
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
   * The files a run reads, `[name in messages, path]`, from its flags: an `--out` or `--plot`
   * that is one of them is refused before the plan touches anything.
   */
  inputs?(values: V): readonly (readonly [string, string])[];
  /**
   * Resolves the flags into a run, checking everything before anything is written; `output` is
   * the output already chosen (its flags checked first).
   */
  plan(values: V, args: readonly string[], output: RunOutput): PlannedRun | Promise<PlannedRun>;
}
