/**
 * `sciobench plot`: draws a results file (CSV, JSON lines or JSON) of a workload with a chart
 * (table, scaling, records, readers, or one registered with lib/workloads/registry.ts) as that
 * workload's SVG chart, the one `--plot` draws at the end of a run.
 * @module
 */
import { IoError, UsageError } from "../core/errors.ts";
import { col, type ColumnDoc, columnHelp } from "../report/human.ts";
import { parseResults, resultsChart } from "../workloads/charts.ts";
import { chartContents } from "../report/plot.ts";
import { parseFlags } from "./parse_flags.ts";
import { commandHelp } from "./help.ts";
import type { Command } from "./command.ts";
import { checkOutputsApart, checkPlotPath, openResults, writeChart } from "./output.ts";

const COLUMNS: readonly ColumnDoc[] = [
  col("chart", "", "text", "the SVG file written"),
  col("workload", "", "text", "the workload whose chart it is (table, scaling, records, readers)"),
  col("rows", "", "count", "measured rows drawn (summary rows and failed cells are left out)"),
  col("series", "", "text", "series drawn, one per backend (readers: mode and cache), joined by /"),
];

/** The help of `plot`, made when asked: it lists the output formats registered by then. */
const help = () =>
  commandHelp("plot", {
    title: "draw results as an SVG chart",
    usage: "RESULTS.(csv|jsonl|json) -o CHART.svg [--force] [--format F]",
    intro:
      `Reads the rows 'sciobench table', 'scaling', 'records' or 'readers' wrote (any format but the
text ones; the workload is taken from the JSON meta or the columns) and draws that workload's
chart with Vega-Lite, rendered to SVG without a browser:
  table    write, read and random MiB/s against N per backend, one panel per size and phase,
           error bars (standard deviation over repeats), fio dashed (--baseline fio)
  readers  wall time (s) against reader processes per mode and cache, and the seed's linear
           model (every process costs what the first did), dashed
  scaling  wall and CPU (user + system) seconds against datasets written, per backend
  records  wall and CPU seconds per backend and byte order, write and read
The title names the host, the --dir file system and the date when the results carry them (JSON).
'--plot CHART.svg' on those commands draws the same chart at the end of a run. A workload
registered beside them is drawn by its own chart, if it declares one.`,
    after: `Columns:
${columnHelp(COLUMNS)}`,
  });

/** The `plot` subcommand. */
export const plotCommand: Command = {
  name: "plot",
  summary: "draw a results file (CSV, JSON lines, JSON) as an SVG chart",
  get help(): string {
    return help();
  },
  async run(args: string[]): Promise<void> {
    const { values, positionals } = parseFlags("plot", args, true);
    if (positionals.length !== 1) {
      throw new UsageError("plot: give exactly one RESULTS file (see 'sciobench plot --help')");
    }
    if (values.out === undefined) {
      throw new UsageError("plot: give the chart's name with -o FILE.svg");
    }
    const path = positionals[0]!;
    checkOutputsApart({ out: values.out }, [["RESULTS", path]]);
    let text: string;
    try {
      text = Deno.readTextFileSync(path);
    } catch (e) {
      throw new IoError(`${path}: ${e instanceof Error ? e.message : String(e)}`);
    }
    const results = parseResults(text, path);
    const workload = resultsChart(results, path);
    checkPlotPath(workload.name, workload.chart, values.out, values.force);
    const contents = chartContents(workload.chart, results);
    const summary = openResults({
      command: "plot",
      args,
      columns: COLUMNS,
      human: COLUMNS.map((c) => c.name),
      options: { results: path, out: values.out, force: values.force },
    }, { format: values.format });
    await writeChart(values.out, workload.name, workload.chart, results, values.force);
    summary.add({
      chart: values.out,
      workload: workload.name,
      rows: contents.rows,
      series: contents.series.join("/"),
    });
    await summary.finish();
  },
};
