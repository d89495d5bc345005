/**
 * `sciobench report RESULTS... -o report.html`: one self-contained, offline HTML file of results
 * files (lib/report/html.ts): per file its metadata, summaries, chart (the workload's chart, drawn
 * as `plot` draws it, inline SVG) and rows; results of one workload compared in order, each
 * against the first (lib/report/compare/compare.ts), with the compare chart.
 * @module
 */
import { IoError, UsageError } from "../core/errors.ts";
import { VERSION } from "../core/version.ts";
import { col, type ColumnDoc, columnHelp } from "../report/human.ts";
import { parseResults } from "../workloads/charts.ts";
import { chooseMetrics, resultsWorkload } from "../workloads/results.ts";
import { renderChart, renderSpec, type Results } from "../report/plot.ts";
import { COMPARE_DEFAULTS, compareRows } from "../report/compare/compare.ts";
import { compareChartSpec } from "../report/compare/chart.ts";
import { type ReportComparison, reportHtml, type ReportResults } from "../report/html.ts";
import { parseFlags } from "./parse_flags.ts";
import { commandHelp } from "./help.ts";
import type { Command } from "./command.ts";
import { checkOutputsApart, openResults, writeOutputFile } from "./output.ts";

const COLUMNS: readonly ColumnDoc[] = [
  col("report", "", "text", "the HTML file written"),
  col("results", "", "count", "results files in it"),
  col(
    "comparisons",
    "",
    "count",
    "comparisons in it (results of one workload, each against the first)",
  ),
  col("charts", "", "count", "charts drawn in it (inline SVG)"),
];

/** The thresholds a report's comparisons use: those of `compare` by default. */
export const REPORT_COMPARE = COMPARE_DEFAULTS;

/** The backend the others are also compared relative to, when both runs hold it. */
const CONTROL = COMPARE_DEFAULTS.control;

/** Reads a results file; IoError (one line) when it cannot be read. */
function readResults(path: string): Results {
  let text: string;
  try {
    text = Deno.readTextFileSync(path);
  } catch (e) {
    throw new IoError(`${path}: ${e instanceof Error ? e.message : String(e)}`);
  }
  return parseResults(text, path);
}

/** The report's part of one results file, its chart drawn. */
async function reportResults(path: string): Promise<ReportResults> {
  const results = readResults(path);
  const workload = resultsWorkload(results, path);
  const columns = results.columns && results.columns.length > 0
    ? results.columns
    : [...new Set(results.rows.flatMap((r) => Object.keys(r)))];
  const docs = new Map(workload.columns.map((c) => [c.name, c.unit]));
  let chart: string | undefined;
  if (workload.chart !== undefined) {
    try {
      chart = await renderChart(workload.name, workload.chart, results);
    } catch (e) {
      if (!(e instanceof UsageError)) throw e; // no measured rows: the report says so
    }
  }
  return {
    name: path,
    workload: workload.name,
    meta: results.meta,
    rows: results.rows,
    columns,
    keys: workload.keys.filter((k) => columns.includes(k)),
    measures: chooseMetrics(workload).filter((m) =>
      columns.length === 0 || columns.includes(m.name)
    )
      .map((m) => ({ name: m.name, unit: docs.get(m.name)!, better: m.better })),
    chart,
  };
}

/** Each results file after the first of its workload compared against that first one. */
async function comparisons(results: readonly ReportResults[]): Promise<ReportComparison[]> {
  const out: ReportComparison[] = [];
  for (const a of results) {
    if (results.find((r) => r.workload === a.workload) !== a) continue;
    for (const b of results.filter((r) => r !== a && r.workload === a.workload)) {
      const backendColumn = a.keys[0] ?? "framing";
      const held = (r: ReportResults) => r.rows.some((row) => row[backendColumn] === CONTROL);
      const result = compareRows(a.rows, b.rows, {
        keys: a.keys,
        backendColumn,
        metrics: a.measures,
        ...REPORT_COMPARE,
        control: held(a) && held(b) ? CONTROL : undefined,
      });
      const chart = result.comparisons.length > 0
        ? await renderSpec(
          compareChartSpec(result.comparisons, a.name, b.name, REPORT_COMPARE.threshold),
        )
        : undefined;
      out.push({ a: a.name, b: b.name, result, threshold: REPORT_COMPARE.threshold, chart });
    }
  }
  return out;
}

/** The help of `report`. */
const help = () =>
  commandHelp("report", {
    title: "one offline HTML report of results files",
    usage: "RESULTS.(csv|jsonl|json)... -o REPORT.html [--force] [--format F]",
    intro:
      `Writes one self-contained HTML file (no CDN, no script, nothing requested when opened) of the
results files given: for each, the metadata, the summaries (mean ± sd (min … max), n per cell and
rate), its workload's chart as inline SVG (the chart 'plot' draws) and the rows (a table, and JSON
lines in a <script type="application/x-ndjson"> element, so the file carries its data). Results of
one workload are compared, each against the first given: per cell and rate the ratio B/A with its
interval (Hodges-Lehmann, distribution-free), the exact Mann-Whitney p-value and a verdict beyond
±${REPORT_COMPARE.threshold * 100}%, relative to the ${CONTROL} backend's change where both hold it,
drawn as a compare chart.`,
    after: `Columns:
${columnHelp(COLUMNS)}`,
  });

/** The `report` subcommand. */
export const reportCommand: Command = {
  name: "report",
  summary: "one offline HTML report (metadata, summaries, comparisons, charts, rows)",
  get help(): string {
    return help();
  },
  async run(args: string[]): Promise<void> {
    const { values, positionals } = parseFlags("report", args, true);
    if (positionals.length === 0) {
      throw new UsageError(
        "report: give one or more RESULTS files (see 'sciobench report --help')",
      );
    }
    if (values.out === undefined) {
      throw new UsageError("report: give the report's name with -o FILE.html");
    }
    if (!values.out.endsWith(".html")) {
      throw new UsageError(`report: ${values.out}: the report's name must end in .html`);
    }
    checkOutputsApart({ out: values.out }, positionals.map((p) => ["RESULTS", p] as const));
    const summary = openResults({
      command: "report",
      args,
      columns: COLUMNS,
      human: COLUMNS.map((c) => c.name),
      options: { results: positionals.join(","), out: values.out, force: values.force },
    }, { format: values.format });
    const results: ReportResults[] = [];
    for (const path of positionals) results.push(await reportResults(path));
    const compared = await comparisons(results);
    const html = reportHtml({
      date: new Date().toISOString(),
      version: VERSION,
      results,
      comparisons: compared,
    });
    writeOutputFile(values.out, html, values.force);
    summary.add({
      report: values.out,
      results: results.length,
      comparisons: compared.length,
      charts: results.filter((r) => r.chart).length + compared.filter((c) => c.chart).length,
    });
    await summary.finish();
  },
};
