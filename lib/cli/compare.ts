/**
 * `sciobench compare A B [C ...]`: results of one workload (files, or runs of the store) compared
 * cell by cell, each later one against the first, with the exact Mann-Whitney test and the
 * Hodges-Lehmann ratio over the repeats (lib/report/compare/); `--by framing --reference R FILE`
 * compares the backends of one run against R the same way, `--by order FILE` each backend measured
 * first in its repeat against the same backend measured later.
 * @module
 */
import { COMPARE_DEFAULTS } from "../report/compare/compare.ts";
import { IoError, RegressionFoundError, UsageError } from "../core/errors.ts";
import { warn } from "../core/diagnostics.ts";
import { parseChoice, parseList } from "../core/values.ts";
import { writeStdout } from "../report/output.ts";
import { parseResults, type Results } from "../report/plot.ts";
import {
  compareBackends,
  type CompareOptions,
  compareOrders,
  compareRows,
  type Comparison,
  ORDER_COLUMN,
} from "../report/compare/compare.ts";
import { metaDifferences } from "../report/compare/meta.ts";
import {
  cellLabel,
  compareCsv,
  compareJson,
  type CompareReport,
  compareTable,
} from "../report/compare/render.ts";
import { resolveRun, storeDir } from "../report/store.ts";
import { chooseMetrics, metricsAbsent, resultsWorkload } from "../workloads/results.ts";
import type { Workload } from "../workloads/workload.ts";
import { commandHelp } from "./help.ts";
import { writeOutputFile } from "./output.ts";
import { parseFlags } from "./parse_flags.ts";
import type { Command } from "./command.ts";

/** Significance level of every test. */
const ALPHA = COMPARE_DEFAULTS.alpha;
/** Confidence of every ratio's interval (the real one, discrete with few repeats, is printed). */
const CONFIDENCE = COMPARE_DEFAULTS.confidence;

/** Results read for a comparison, with the name the user gave and the workload that wrote them. */
interface Loaded {
  readonly name: string;
  readonly results: Results;
  readonly workload: Workload;
}

/** `--threshold`: a percentage (`5%`) as a fraction; UsageError otherwise. */
export function parseThreshold(text: string): number {
  const m = /^(\d+(?:\.\d+)?)%$/.exec(text.trim());
  if (m === null || !(Number(m[1]) < 100)) {
    throw new UsageError(`bad --threshold '${text}': expected a percentage below 100, such as 5%`);
  }
  return Number(m[1]) / 100;
}

/** The results `ref` names: a run of the store (`latest`, `latest~K`, an id), else a file. */
function load(ref: string, store: string | undefined): Loaded {
  let path = ref;
  if (/^latest(~\d+)?$/.test(ref) && store === undefined) {
    throw new UsageError(`${ref}: no results store (give --store DIR or set SCIOBENCH_STORE)`);
  }
  if (store !== undefined) {
    let exists = false;
    try {
      Deno.statSync(ref);
      exists = true;
    } catch {
      // not a file: a run of the store, maybe
    }
    if (!exists) path = resolveRun(store, ref) ?? ref;
  }
  let text: string;
  try {
    text = Deno.readTextFileSync(path);
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) {
      throw new UsageError(
        `${ref}: no such results file${
          store === undefined ? "" : ` nor run in the store ${store}`
        }`,
      );
    }
    throw new IoError(`${ref}: ${e instanceof Error ? e.message : String(e)}`);
  }
  const results = parseResults(text, path);
  if (results.rows.length === 0) {
    throw new UsageError(`${ref}: holds no rows of results`);
  }
  return { name: ref, results, workload: resultsWorkload(results, ref) };
}

/** The column naming a row's backend. */
const BACKEND = "framing";

/**
 * Whether `--fail-on regression` fails on `c`: its verdict (relative to the control where the
 * control itself moved: a machine that moved as a whole is no regression of a backend); the
 * control's own cells never where `control` is set (they measure the machine): pass it only when
 * the control was found in both runs.
 */
function failing(c: Comparison, control: string | undefined): boolean {
  return c.cell[BACKEND] !== control && c.verdict === "regression";
}

/** `options` without a control: the backends of one run are compared with none. */
function withoutControl(options: CompareOptions): Omit<CompareOptions, "control"> {
  const { control: _, ...rest } = options;
  return rest;
}

const help = () =>
  commandHelp("compare", {
    title: "compare results: is B different from A beyond noise",
    usage: "A B [C ...] | --by framing --reference BACKEND RESULTS | --by order RESULTS",
    intro:
      `Compares results of one workload: files (CSV, JSON lines, JSON) or runs of the results store
(a run id, latest, latest~1, ...). Cells are matched by the workload's key columns; each later
one is compared with the first. For every metric: the median and number of repeats on each
side, the ratio B/A (Hodges-Lehmann: the median of all pairwise ratios) with its
distribution-free interval and that interval's real confidence (discrete with few repeats), the
exact two-sided Mann-Whitney p-value, and a verdict: regression or improvement (significant at
0.05 and beyond --threshold), small (significant within it), ~ (not significant), or "too few
repeats" where no p-value could reach 0.05 (3 against 3 repeats never can; use 5 or more).
Rank-based and exact because with 3-10 repeats nothing can check normality, one outlier moves a
mean, and a bootstrap of 5 values gives intervals too narrow.
Where both runs hold the control backend (--control, raw by default), every other backend is
also compared relative to the control's median in the same run ("vs control"), and the answer
takes the control into account: where the backend moved as the control did (the control beyond
--threshold, the two within it of each other), "the machine changed" and no regression; else,
where the control changed significantly, the change relative to it; else the backend's own change
(dividing by a control that did not move only adds its noise). The control's own line says the
machine changed when every other backend moved its way.
By default the metrics are the rates and times of the workload's table and each phase's median
latency (read_p50_us, random_p50_us, record_p50_us, batch_p50_us): the typical operation's time,
which the few operations a neighbour slowed do not move.
--by order looks for an order effect in one run: each backend's repeats where it was measured
first against those where it came later (table and records alternate the order between
repeats and record it in the order column; 10 repeats give 5 against 5).
Refused in one line (exit 2): results of different workloads, a file that is not results, a
metric that is not a rate or time column of the workload.`,
  });

/** The `compare` subcommand. */
export const compareCommand: Command = {
  name: "compare",
  summary: "compare results (files or stored runs) with a noise test: is B different from A",
  get help(): string {
    return help();
  },
  run(args: string[]): Promise<void> {
    const { values, positionals } = parseFlags("compare", args, true);
    const format = parseChoice(values.format, ["table", "csv", "json"], "--format");
    const threshold = parseThreshold(values.threshold);
    const failOn = values["fail-on"] === undefined
      ? undefined
      : parseChoice(values["fail-on"], ["regression"], "--fail-on");
    const by = values.by === undefined
      ? undefined
      : parseChoice(values.by, [BACKEND, ORDER_COLUMN], "--by");
    if (by === BACKEND && values.reference === undefined) {
      throw new UsageError("compare: --by framing needs --reference BACKEND");
    }
    if (by !== BACKEND && values.reference !== undefined) {
      throw new UsageError("compare: --reference goes with --by framing");
    }
    const wanted = by === undefined ? "at least two results (A B)" : "one results file";
    if (by === undefined ? positionals.length < 2 : positionals.length !== 1) {
      throw new UsageError(`compare: give ${wanted} (see 'sciobench compare --help')`);
    }
    const store = storeDir(values.store);
    const loaded = positionals.map((ref) => load(ref, store));
    const first = loaded[0]!;
    for (const other of loaded.slice(1)) {
      if (other.workload.name !== first.workload.name) {
        throw new UsageError(
          `${other.name} holds results of '${other.workload.name}', ${first.name} of ` +
            `'${first.workload.name}': compare results of one workload`,
        );
      }
    }
    const metrics = chooseMetrics(
      first.workload,
      values.metric === undefined ? undefined : parseList(values.metric, "--metric"),
    );
    // a default metric no input holds (a column an earlier release did not write) goes unsaid
    const asked = values.metric !== undefined;
    const held = new Set(loaded.flatMap((l) => {
      const absent = metricsAbsent(l.results, metrics);
      return metrics.map((m) => m.name).filter((name) => !absent.includes(name));
    }));
    for (const l of loaded) {
      const absent = metricsAbsent(l.results, metrics).filter((name) => asked || held.has(name));
      if (absent.length > 0) {
        const by = l.results.meta.commit ?? l.results.meta.version;
        warn(
          `${l.name} has no ${absent.join(", ")} (${
            typeof by === "string" ? `written by sciobench ${by.slice(0, 12)}` : "not measured"
          }): left out of the comparison`,
        );
      }
    }
    const keys = first.workload.keys.length > 0 ? first.workload.keys : [BACKEND];
    const options: CompareOptions = {
      keys,
      backendColumn: BACKEND,
      metrics,
      threshold,
      alpha: ALPHA,
      confidence: CONFIDENCE,
      control: values.control === "none" ? undefined : values.control,
    };
    const reports: CompareReport[] = by === undefined
      ? loaded.slice(1).map((b) => ({
        a: first.name,
        b: b.name,
        result: compareRows(first.results.rows, b.results.rows, options),
      }))
      : by === BACKEND
      ? [{
        a: values.reference!,
        b: `the other backends of ${first.name}`,
        result: compareBackends(first.results.rows, values.reference!, withoutControl(options)),
      }]
      : [{
        a: "each backend measured first in its repeat",
        b: `the same measured later (${first.name})`,
        result: compareOrders(first.results.rows, withoutControl(options)),
      }];
    if (by === BACKEND && reports[0]!.result.comparisons.length === 0) {
      throw new UsageError(
        `${first.name}: no measured rows of the backend '${values.reference}' to compare with`,
      );
    }
    if (by === ORDER_COLUMN && reports[0]!.result.comparisons.length === 0) {
      throw new UsageError(
        `${first.name}: no backend measured both first and later in its repeats (the '${ORDER_COLUMN}' ` +
          "column: table and records record it with --repeat 2 or more and several backends)",
      );
    }
    const differences = by === undefined ? metaDifferences(loaded.map((l) => l.results.meta)) : [];
    const names = loaded.filter((l) => Object.keys(l.results.meta).length > 0).map((l) => l.name);
    const text = format === "json"
      ? compareJson(reports, differences)
      : format === "csv"
      ? compareCsv(reports)
      : compareTable(reports, differences, names);
    // with --out the file, atomically (a --fail-on exit still leaves it written)
    if (values.out !== undefined) writeOutputFile(values.out, text, values.force);
    else writeStdout(text);
    if (failOn === "regression") {
      const found = reports.flatMap((r) => {
        const list = r.result.comparisons;
        const control = list.some((c) => c.relative !== undefined) ? options.control : undefined;
        return list.filter((c) => failing(c, control));
      });
      if (found.length > 0) {
        const c = found[0]!;
        const relative = c.relative !== undefined && c.verdict !== c.change.verdict;
        const ratio = (relative ? c.relative! : c.change).ratio;
        throw new RegressionFoundError(
          `${found.length} significant regression${found.length === 1 ? "" : "s"} beyond ` +
            `${values.threshold} (first: ${cellLabel(c.cell)} ${c.metric.name} x${
              ratio.toPrecision(3)
            }${relative ? " relative to the control, which moved" : ""})`,
        );
      }
    }
    return Promise.resolve();
  },
};
