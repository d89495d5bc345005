/**
 * A command's results: the output format (`--format`, `--out`, `--plot`, `--audit`), the files
 * that must stay apart from its inputs, and the sink its rows go to.
 * @module
 */
import { CellsFailedError, IoError, UsageError } from "../core/errors.ts";
import { world } from "../mpi/world.ts";
import { type Progress } from "../report/progress.ts";
import { type ColumnDoc, humanTable } from "../report/human.ts";
import { openRowSink, type OutputFormat, type TableRenderer, writeAll } from "../report/output.ts";
import {
  DATA_FORMAT,
  orList,
  rowFormat,
  rowFormatNames,
  rowFormats,
  TERMINAL_FORMAT,
} from "../report/formats/mod.ts";
import type { Row } from "../report/row.ts";
import { chartWorkloads } from "../workloads/charts.ts";
import { coldMark } from "../workloads/transfer.ts";
import { SETTING_COLUMNS } from "../workloads/columns.ts";
import { renderChart, type Results as ChartResults } from "../report/plot.ts";
import type { ChartSpec } from "../report/chart.ts";
import { auditOf, auditSummary } from "../sys/audit.ts";
import { summaryText } from "../report/summary.ts";
import { parseChoice } from "../core/values.ts";
import {
  checkOutputTarget,
  commitTemp,
  refuseOutputOnInput,
  removeQuietly,
  tempPathFor,
} from "../io/atomic.ts";
import { endMeta, runMeta } from "./meta.ts";
import { checkStore, storeDir, storeRun } from "../report/store.ts";
import { writeStderr } from "../core/diagnostics.ts";

/** UsageError when `--audit` is given with an output format whose rows keep no nested values. */
export function checkAuditFormat(audit: boolean | undefined, format: string | undefined): void {
  const formats = rowFormats().filter((f) => f.nested).map((f) => f.name);
  if (audit && !formats.includes(format ?? "")) {
    throw new UsageError(
      "--audit adds the audit trail to rows that keep nested values: use it with --format " +
        orList(formats),
    );
  }
}

/**
 * The output format of `--format` and `--out` ({@link resolveFormat}); refuses `--audit` with a
 * format that is not JSON ({@link checkAuditFormat}) and a `--plot` that is the `--out` file
 * ({@link checkOutputsApart}).
 */
export function checkOutputFormat(
  values: { format?: string; out?: string; audit?: boolean; plot?: string },
  hasSeed: boolean,
): OutputFormat {
  checkOutputsApart(values, []);
  const format = resolveFormat(values.format, values.out, hasSeed);
  checkAuditFormat(values.audit, format);
  return format;
}

/**
 * Checks a `--plot FILE.svg` before anything runs: the command must have a chart (`chart`), the
 * name must end in .svg, and an existing file is replaced only with --force. Returns the path.
 */
export function checkPlotPath(
  command: string,
  chart: ChartSpec | undefined,
  plot: string | undefined,
  force: boolean | undefined,
): string | undefined {
  if (plot === undefined) return undefined;
  if (chart === undefined) {
    const charted = chartWorkloads().map((w) => w.name).join(", ");
    throw new UsageError(`--plot: '${command}' has no chart (${charted} do)`);
  }
  if (!plot.toLowerCase().endsWith(".svg")) {
    throw new UsageError(`--plot ${plot}: the chart is SVG; give a name ending in .svg`);
  }
  if (!force) {
    try {
      Deno.lstatSync(plot);
      throw new IoError(`${plot} exists; refusing to overwrite it (pass --force to replace it)`);
    } catch (e) {
      if (!(e instanceof Deno.errors.NotFound)) throw e;
    }
  }
  return plot;
}

/**
 * Renders `chart`, the chart of the workload `command`, of `results` and writes it to `path`
 * (replaced only with `force`).
 */
export async function writeChart(
  path: string,
  command: string,
  chart: ChartSpec,
  results: ChartResults,
  force: boolean | undefined,
): Promise<void> {
  writeOutputFile(path, await renderChart(command, chart, results), force);
}

/**
 * Writes `text` to `path` atomically: into `.NAME.sciobench-tmp-PID` beside it, fsynced, then
 * renamed into place, so `path` is either as it was or complete; an existing file is replaced
 * only with `force`. IoError (or UsageError for a directory or device) in one line.
 */
export function writeOutputFile(path: string, text: string, force: boolean | undefined): void {
  const target = checkOutputTarget(path, force ?? false, "--out");
  const temp = tempPathFor(target.path);
  try {
    const file = Deno.openSync(temp, { write: true, createNew: true, mode: 0o644 });
    try {
      const bytes = new TextEncoder().encode(text);
      for (let done = 0; done < bytes.length;) done += file.writeSync(bytes.subarray(done));
      file.syncSync();
    } finally {
      file.close();
    }
    commitTemp(temp, target);
  } catch (e) {
    removeQuietly(temp);
    if (e instanceof IoError || e instanceof UsageError) throw e;
    throw new IoError(`cannot write ${path}: ${e instanceof Error ? e.message : String(e)}`);
  }
}

/**
 * Checks `--format` against the formats of lib/report/formats/mod.ts (default: `table` when
 * stdout is a terminal, there is no --out and no MPI, else `csv`); a format that draws the seed
 * layout only where the command has one.
 */
export function resolveFormat(
  value: string | undefined,
  out: string | undefined,
  hasSeed: boolean,
): OutputFormat {
  if (value === undefined) {
    // Under MPI a rank's stdout is often the launcher's pseudo-terminal, whatever mpirun's own
    // stdout is: only a single process trusts isTerminal().
    const terminal = Deno.stdout.isTerminal() && world().size === 1;
    return out === undefined && terminal ? TERMINAL_FORMAT : DATA_FORMAT;
  }
  return parseChoice(value, rowFormatNames(hasSeed), "--format");
}

/** What a command's results look like, for {@link openResults}. */
export interface ResultsSpec {
  /** The command's name. */
  readonly command: string;
  /** Its arguments as given. */
  readonly args: readonly string[];
  /** Every column with its unit, in CSV order. */
  readonly columns: readonly ColumnDoc[];
  /** Columns the human table shows. */
  readonly human: readonly string[];
  /** The chart `--plot` draws, where the command has one. */
  readonly chart?: ChartSpec;
  /** Key columns of a cell: summary rows over repeats are added when given (and not empty). */
  readonly keys?: readonly string[];
  /** The seed's own layout (`--format seed`). */
  readonly seed?: TableRenderer;
  /** Every resolved option, for the JSON meta. */
  readonly options: Record<string, unknown>;
  /** Facts about the input the command reads, for the JSON meta (`facts`). */
  readonly facts?: Record<string, unknown>;
  /** The scratch parent directory (for the file-system facts). */
  readonly dir?: string;
  /** The files the command reads (see {@link checkOutputsApart}). */
  readonly inputs?: Inputs;
  /** performance.now() (ms) when the run began, for its duration (default: when this opens). */
  readonly startMs?: number;
  /** Bytes the plan writes and reads (meta `planned_bytes`: a later run's estimate scales by it). */
  readonly plannedBytes?: number;
}

/** A command's input or data files, each `[name in messages, path]` (`["FILE", path]`). */
export type Inputs = readonly (readonly [string, string])[];

/**
 * Refuses (UsageError, exit 2) an `--out` or `--plot` that is one of the command's `inputs`, or
 * a `--plot` that is the `--out` file, however spelled (same inode, through symbolic and hard
 * links), with or without `--force`. Commands call it before they read or write anything;
 * {@link openResults} calls it again.
 */
export function checkOutputsApart(
  values: { out?: string; plot?: string },
  inputs: Inputs,
): void {
  if (values.out !== undefined) refuseOutputOnInput("--out", values.out, inputs);
  if (values.plot !== undefined) {
    refuseOutputOnInput("--plot", values.plot, [
      ...inputs,
      ...(values.out === undefined ? [] : [["--out", values.out] as const]),
    ]);
  }
}

/** A command's open results: add rows, then `finish()`. */
export interface Results {
  /** Adds one row. */
  add(row: Row): void;
  /**
   * Completes the output (and the --plot chart); CellsFailedError when some cell failed (its row
   * says why).
   */
  finish(): Promise<void>;
  /** Completes the output after an error (no summary of a broken run is claimed). */
  abort(): void;
}

/**
 * Opens a command's results in the format its options ask for. Call only after every option is
 * checked and every preflight passed: `--out` is created here. With a store (`--store DIR` or
 * $SCIOBENCH_STORE) a run whose cells all succeeded is also written there at its end
 * (lib/report/store.ts).
 */
export function openResults(
  spec: ResultsSpec,
  values: {
    format?: string;
    out?: string;
    force?: boolean;
    audit?: boolean;
    plot?: string;
    store?: string;
  },
): Results {
  checkOutputsApart(values, spec.inputs ?? []);
  // under MPI only rank 0 writes the store, as it writes --out
  const store = world().rank === 0 ? storeDir(values.store) : undefined;
  if (store !== undefined) checkStore(store);
  const stored: Row[] = [];
  const format = checkOutputFormat(values, spec.seed !== undefined);
  const plot = checkPlotPath(spec.command, spec.chart, values.plot, values.force);
  const startMs = spec.startMs ?? performance.now();
  const meta = runMeta(spec.command, spec.args, spec.options, spec.dir);
  if (spec.facts !== undefined) meta.facts = spec.facts;
  if (spec.plannedBytes !== undefined) meta.planned_bytes = spec.plannedBytes;
  const keys = spec.keys !== undefined && spec.keys.length > 0 ? spec.keys : undefined;
  const human = spec.human.map((name) => spec.columns.find((c) => c.name === name)!);
  const sink = openRowSink(spec.columns.map((c) => c.name), {
    format,
    out: values.out,
    force: values.force,
    meta,
    // rows whose numbers a cache served are marked, with the footnote under the table
    human: humanTable(human, coldMark),
    seed: spec.seed,
    // under MPI, --per-rank rows are cells of their own
    summaryKeys: keys && world().size > 1 ? [...keys, "rank", "host"] : keys,
    // the chart is drawn from every row at the end
    keepRows: plot !== undefined,
    ratios: spec.columns.filter((c) => c.ratio !== undefined),
    settings: SETTING_COLUMNS,
  });
  let rows = 0;
  const nested = rowFormat(format).nested === true;
  return {
    add(row: Row): void {
      rows++;
      // rows that keep nested values (JSON) carry their audit trail (lib/sys/audit.ts): a
      // one-line summary, or with --audit the whole trail.
      const audit = nested || store !== undefined ? auditOf(row) : undefined;
      const full = audit === undefined
        ? row
        : { ...row, audit: values.audit ? audit : auditSummary(audit) };
      sink.add(nested ? full : row);
      if (store !== undefined) stored.push(full);
    },
    async finish(): Promise<void> {
      // Libraries loaded during the run, the load at its end and its duration belong in the facts.
      endMeta(meta, startMs);
      sink.close();
      if (plot !== undefined) {
        await writeChart(
          plot,
          spec.command,
          spec.chart!,
          { meta, rows: sink.rows },
          values.force,
        );
      }
      if (store !== undefined && sink.failed === 0) {
        const id = storeRun(store, meta, spec.columns.map((c) => c.name), stored);
        writeStderr(`stored run ${id} in ${store}\n`);
      }
      if (world().rank === 0) {
        const written = [values.out, plot].filter((f) => f !== undefined);
        showSummary(runSummary(spec, sink.rows), written, format, values.out);
      }
      if (sink.failed > 0) {
        const first = sink.firstFailed;
        const which = [first?.framing, first?.phase, first?.datasets ?? first?.size_bytes]
          .filter((v) => v !== undefined && v !== "").join(" ");
        throw new CellsFailedError(
          `${sink.failed} of ${rows} cells failed (first: ${which}: ${first?.error}); ` +
            "each row's 'error' column says why",
        );
      }
    },
    abort(): void {
      endMeta(meta, startMs);
      sink.close({ interrupted: true });
    },
  };
}

/** Where the end-of-run summary goes (see {@link summaryStream}). */
export type SummaryStream = "stdout" | "stderr" | undefined;

/**
 * Where the end-of-run summary and the list of files written go: after the human table on
 * stdout when that table is drawn on a terminal, else to stderr when stderr is a terminal (stdout
 * then carries data, or nothing with --out), else nowhere: a run piped or captured keeps its
 * streams as they were.
 */
export function summaryStream(
  format: OutputFormat,
  out: string | undefined,
  terminal: { readonly stdout: boolean; readonly stderr: boolean },
): SummaryStream {
  if (format === TERMINAL_FORMAT && out === undefined && terminal.stdout) return "stdout";
  return terminal.stderr ? "stderr" : undefined;
}

/**
 * The summary of a run's rows (lib/report/summary.ts): the cells by the command's key columns,
 * the rates the human table shows (MiB/s); empty without keys or repeats.
 */
export function runSummary(spec: ResultsSpec, rows: readonly Row[]): string {
  if (spec.keys === undefined || spec.keys.length === 0) return "";
  const doc = (name: string) => spec.columns.find((c) => c.name === name);
  const keys = spec.keys.map(doc).filter((d) => d !== undefined);
  const rates = spec.human.filter((name) => doc(name)?.unit === "MiB/s");
  return summaryText(rows, keys, rates);
}

/**
 * Prints `summary` and a `wrote FILE` line per file in `written` where {@link summaryStream}
 * says, for the run's `format` and `out`.
 */
function showSummary(
  summary: string,
  written: readonly string[],
  format: OutputFormat,
  out: string | undefined,
): void {
  const terminal = { stdout: Deno.stdout.isTerminal(), stderr: Deno.stderr.isTerminal() };
  const stream = summaryStream(format, out, terminal);
  if (stream === undefined) return;
  const text = (summary === "" ? "" : "\n" + summary) +
    written.map((f) => `wrote ${f}\n`).join("");
  if (text === "") return;
  const bytes = new TextEncoder().encode(text);
  if (stream === "stdout") writeAll(Deno.stdout, bytes);
  else writeAll(Deno.stderr, bytes, "standard error");
}

/**
 * Results opened by `open` at their first row (or at the end, when there is none): a run that
 * fails before its first row leaves no output at all (`abort` has nothing to complete).
 */
export function openAtFirstRow(open: () => Results): Results {
  let results: Results | undefined;
  return {
    add: (row) => (results ??= open()).add(row),
    finish: () => (results ??= open()).finish(),
    abort: () => results?.abort(),
  };
}

/**
 * Runs a measurement that adds its rows to `results`, then completes them. On an error it
 * clears the progress line, closes the output as interrupted and rethrows.
 */
export async function measureInto(
  results: Results,
  progress: Progress,
  measure: () => Promise<unknown>,
): Promise<void> {
  try {
    await measure();
  } catch (e) {
    progress.clear();
    results.abort();
    throw e;
  }
  progress.clear();
  await results.finish();
}
