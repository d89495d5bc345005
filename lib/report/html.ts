/**
 * The offline HTML report (`sciobench report`): one self-contained file with, per results file,
 * its metadata, the summaries (mean ± sd (min … max), n per cell and rate), its chart as inline
 * SVG and its raw rows (a table, and JSON lines in a `<script type="application/x-ndjson">`, so
 * the file carries its own data); then the comparisons of results of one workload. A Content
 * Security Policy forbids every request, so the file opened anywhere loads nothing.
 * @module
 */
import type { Row } from "./row.ts";
import { type CompareResult, measuredRows, summarize } from "./compare/compare.ts";
import { comparisonLabel } from "./compare/chart.ts";
import { controlNote } from "./compare/render.ts";

/** One results file in the report. */
export interface ReportResults {
  /** Its name (the path given). */
  readonly name: string;
  /** The workload that wrote it. */
  readonly workload: string;
  /** The JSON `meta` (empty for CSV). */
  readonly meta: Record<string, unknown>;
  /** Every row, as read. */
  readonly rows: readonly Row[];
  /** The columns in order (the file's, else the workload's). */
  readonly columns: readonly string[];
  /** The columns that identify a cell. */
  readonly keys: readonly string[];
  /** The rates and times summed up per cell (their unit, e.g. `MiB/s`, `s`). */
  readonly measures: readonly {
    readonly name: string;
    readonly unit: string;
    readonly better: "higher" | "lower";
  }[];
  /** The workload's chart as SVG text, if it has one. */
  readonly chart?: string;
}

/** Two results files of one workload compared. */
export interface ReportComparison {
  /** A's name (the reference). */
  readonly a: string;
  /** B's name. */
  readonly b: string;
  /** compareRows of A's and B's rows. */
  readonly result: CompareResult;
  /** The threshold the verdicts used (a fraction: 0.05 is 5%). */
  readonly threshold: number;
  /** The compare chart as SVG text. */
  readonly chart?: string;
}

/** What the report holds. */
export interface ReportInput {
  /** When it was made (ISO 8601). */
  readonly date: string;
  /** The sciobench version that made it. */
  readonly version: string;
  /** The results files, in the order given. */
  readonly results: readonly ReportResults[];
  /** The comparisons (none with fewer than two results files of one workload). */
  readonly comparisons: readonly ReportComparison[];
}

/** Text made safe for HTML content and attribute values. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/** A value as a cell's text: numbers to 4 significant digits, objects as JSON. */
function show(value: unknown): string {
  if (value === undefined || value === null) return "";
  if (typeof value === "number") {
    return Number.isInteger(value) ? String(value) : String(Number(value.toPrecision(4)));
  }
  return typeof value === "object" ? JSON.stringify(value) : String(value);
}

/** An HTML table of `head` and `body` (texts escaped here). */
function table(head: readonly string[], body: readonly (readonly unknown[])[], cls = ""): string {
  const th = head.map((h) => `<th>${escapeHtml(h)}</th>`).join("");
  const tr = body.map((r) =>
    `<tr>${r.map((v) => `<td>${escapeHtml(show(v))}</td>`).join("")}</tr>`
  );
  return `<table${cls ? ` class="${cls}"` : ""}><thead><tr>${th}</tr></thead><tbody>\n` +
    `${tr.join("\n")}\n</tbody></table>`;
}

/**
 * An inline SVG whose ids (Vega names its clip paths clip1, clip2, ...) are prefixed with
 * `prefix`, so that two charts in one page do not share them.
 */
export function inlineSvg(svg: string, prefix: string): string {
  return svg
    .replace(/^<\?xml[^>]*>\s*/, "")
    .replace(/\bid="([^"]+)"/g, `id="${prefix}-$1"`)
    .replace(/url\(#([^)]+)\)/g, `url(#${prefix}-$1)`)
    .replace(/href="#([^"]+)"/g, `href="#${prefix}-$1"`);
}

/** The summaries of one results file: per cell, each measure as mean ± sd (min … max), n. */
function summaries(r: ReportResults): string {
  const measured = measuredRows(r.rows);
  const groups = new Map<string, Row[]>();
  for (const row of measured) {
    const id = JSON.stringify(r.keys.map((k) => row[k] ?? ""));
    groups.set(id, [...(groups.get(id) ?? []), row]);
  }
  const measures = r.measures.filter((m) =>
    measured.some((row) => typeof row[m.name] === "number")
  );
  const body = [...groups.entries()].map(([id, rows]) => {
    const keyValues = JSON.parse(id) as unknown[];
    const cells = measures.map((m) => {
      const xs = rows.map((row) => row[m.name]).filter((v): v is number =>
        typeof v === "number" && Number.isFinite(v)
      );
      if (xs.length === 0) return "";
      const s = summarize(xs);
      return `${show(s.mean)} ± ${show(s.sd)} (${show(s.min)} … ${show(s.max)}), n=${s.n}`;
    });
    return [...keyValues, ...cells];
  });
  const head = [...r.keys, ...measures.map((m) => `${m.name} (${m.unit})`)];
  return body.length === 0
    ? "<p>No measured rows (every row failed or is a summary).</p>"
    : table(head, body, "summary");
}

/** The metadata as a two-column table (nested values as JSON). */
function metaTable(meta: Record<string, unknown>): string {
  const entries = Object.entries(meta);
  return entries.length === 0
    ? "<p>No metadata (CSV results carry none).</p>"
    : table(["fact", "value"], entries, "meta");
}

/** The rows as JSON lines, safe inside a script element (`<` escaped as \u003c). */
function ndjson(rows: readonly Row[]): string {
  return rows.map((r) => JSON.stringify(r).replaceAll("<", "\\u003c")).join("\n");
}

/** One results file's section. */
function resultsSection(r: ReportResults, i: number): string {
  const id = `results-${i + 1}`;
  return `<section id="${id}" class="results">
<h2>${escapeHtml(r.name)} <small>${escapeHtml(r.workload)}</small></h2>
<h3>Metadata</h3>
${metaTable(r.meta)}
<h3>Summaries</h3>
${summaries(r)}
<h3>Chart</h3>
${
    r.chart
      ? `<figure class="chart">${inlineSvg(r.chart, `c${i + 1}`)}</figure>`
      : "<p>No chart.</p>"
  }
<h3>Rows</h3>
<div class="rows">${
    table(r.columns, r.rows.map((row) => r.columns.map((c) => row[c])), "rows")
  }</div>
<script type="application/x-ndjson" id="${id}-data" data-name="${escapeHtml(r.name)}">
${ndjson(r.rows)}
</script>
</section>`;
}

/** A ratio and its interval, `1.23 [1.10, 1.31]`. */
function ratioText(c: { ratio: number; low: number; high: number }): string {
  return `${show(c.ratio)} [${show(c.low)}, ${show(c.high)}]`;
}

/** One comparison's section: the chart, the table of every cell's metric, the unmatched cells. */
function comparisonSection(c: ReportComparison, i: number): string {
  const body = c.result.comparisons.map((x) => [
    comparisonLabel(x),
    `${show(x.a.mean)} ± ${show(x.a.sd)}, n=${x.a.n}`,
    `${show(x.b.mean)} ± ${show(x.b.sd)}, n=${x.b.n}`,
    ratioText(x.change),
    show(x.change.p),
    x.change.verdict === "same" ? "~" : x.change.verdict,
    x.relative ? `${ratioText(x.relative)} ${x.relative.verdict}` : "",
    controlNote(x),
  ]);
  const unmatched = [
    ...c.result.onlyA.map((cell) => `only in ${c.a}: ${Object.values(cell).join(" ")}`),
    ...c.result.onlyB.map((cell) => `only in ${c.b}: ${Object.values(cell).join(" ")}`),
  ];
  return `<section class="comparison" id="comparison-${i + 1}">
<h3>${escapeHtml(c.b)} against ${escapeHtml(c.a)}</h3>
<p>Ratio B/A: Hodges-Lehmann estimate with its distribution-free interval; p: exact two-sided
Mann-Whitney; flagged beyond ±${show(c.threshold * 100)}%; ~: not significant.</p>
${c.chart ? `<figure class="chart">${inlineSvg(c.chart, `k${i + 1}`)}</figure>` : ""}
${
    table(
      ["cell and metric", "A", "B", "B/A [interval]", "p", "verdict", "relative to control", ""],
      body,
      "compare",
    )
  }
${
    unmatched.length > 0
      ? `<ul class="unmatched">${unmatched.map((u) => `<li>${escapeHtml(u)}</li>`).join("")}</ul>`
      : ""
  }
</section>`;
}

const STYLE = `body{font-family:"DejaVu Sans",Helvetica,Arial,sans-serif;margin:1.5em;color:#222}
table{border-collapse:collapse;font-size:12px;margin:.5em 0}
th,td{border:1px solid #ccc;padding:2px 6px;text-align:left;vertical-align:top}
th{background:#f3f3f3}
.rows{max-height:30em;overflow:auto}
figure.chart{margin:.5em 0}
h2 small{color:#777;font-weight:normal}`;

/** The whole report: a standalone HTML document that requests nothing when opened. */
export function reportHtml(input: ReportInput): string {
  const names = input.results.map((r) => `${r.name} (${r.workload})`).join(", ");
  const comparisons = input.comparisons.length > 0
    ? input.comparisons.map(comparisonSection).join("\n")
    : "<p>No comparison: give two or more results files of one workload.</p>";
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; img-src data:">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="generator" content="sciobench ${escapeHtml(input.version)}">
<title>sciobench report: ${escapeHtml(names)}</title>
<style>${STYLE}</style>
</head>
<body>
<h1>sciobench report</h1>
<p>Made ${escapeHtml(input.date)} by sciobench ${escapeHtml(input.version)} from ${
    escapeHtml(names)
  }. Summaries are mean ± standard deviation (min … max) over the run rows of a cell; the rows of
each file are also in this page as JSON lines (<code>script[type="application/x-ndjson"]</code>).</p>
<nav><ul>${
    input.results.map((r, i) => `<li><a href="#results-${i + 1}">${escapeHtml(r.name)}</a></li>`)
      .join("")
  }<li><a href="#comparisons">Comparisons</a></li></ul></nav>
${input.results.map(resultsSection).join("\n")}
<section id="comparisons">
<h2>Comparisons</h2>
${comparisons}
</section>
</body>
</html>
`;
}
