/**
 * `sciobench report`: one self-contained HTML file of results files, opened in headless Chromium
 * (Debian `chromium`): it renders every section, requests nothing and logs no console message;
 * the rows embedded as JSON lines are the results files' rows. A screenshot is kept in
 * tests/artifacts/ (git-ignored).
 * @module
 */
import assert from "node:assert/strict";
import { parseResults } from "../lib/report/plot.ts";
import { escapeHtml, inlineSvg } from "../lib/report/html.ts";
import { renderSpec } from "../lib/report/plot.ts";
import { compareRows } from "../lib/report/compare/compare.ts";
import { compareChartSpec, comparisonLabel, varyingKeys } from "../lib/report/compare/chart.ts";
import { commandMissing, peerTest, runCli, tempDir } from "./_helpers.ts";

const ARTIFACTS = new URL("./artifacts/", import.meta.url).pathname;

/** What Chromium saw opening `html`: the DOM, its console messages and the URLs requested. */
async function openInChromium(
  html: string,
  dir: string,
  screenshot?: string,
): Promise<{ dom: string; console: string[]; requests: string[] }> {
  const common = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    `--user-data-dir=${dir}/profile`,
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-default-apps",
    "--disable-extensions",
    "--enable-logging=stderr",
    "--v=0",
    `--log-net-log=${dir}/net.json`,
  ];
  const run = async (extra: string[]) => {
    const out = await new Deno.Command("chromium", {
      args: [...common, ...extra, `file://${html}`],
      stdout: "piped",
      stderr: "piped",
      signal: AbortSignal.timeout(120_000),
    }).output();
    return {
      stdout: new TextDecoder().decode(out.stdout),
      stderr: new TextDecoder().decode(out.stderr),
    };
  };
  const dumped = await run(["--dump-dom"]);
  const requests = [...Deno.readTextFileSync(`${dir}/net.json`).matchAll(/"url":"([^"]*)"/g)]
    .map((m) => m[1]!);
  const shot = screenshot
    ? await run([`--screenshot=${screenshot}`, "--window-size=1400,2400"])
    : undefined;
  const console = [dumped.stderr, shot?.stderr ?? ""].join("\n").split("\n").filter((l) =>
    /:CONSOLE[:(]/.test(l)
  );
  return { dom: dumped.stdout, console, requests };
}

/**
 * The requests a page made: every URL Chromium's net log holds but its own background services
 * (time, update and account checks it makes whatever it opens) and the page's own file.
 */
function pageRequests(requests: readonly string[], html: string): string[] {
  const own = /^https?:\/\/([\w-]+\.)*(google\.com|googleapis\.com|gvt1\.com|gstatic\.com)\//;
  return [...new Set(requests)].filter((u) => !own.test(u) && u !== `file://${html}`);
}

peerTest(
  "report: two runs of table, offline in Chromium: every section, no request, no console message",
  () => commandMissing("chromium"),
  async () => {
    using d = tempDir("sciobench-report-");
    const files: string[] = [];
    for (const name of ["a.jsonl", "b.jsonl"]) {
      const r = await runCli([
        ...["table", "--framing", "raw,gsd", "--size", "4M", "--n", "32^2,64^2", "--no-warmup"],
        ...["--repeat", "3", "--dir", d.path, "--format", "jsonl", "--out", `${d.path}/${name}`],
      ]);
      assert.equal(r.code, 0, r.stderr);
      files.push(`${d.path}/${name}`);
    }
    const html = `${d.path}/report.html`;
    const r = await runCli(["report", ...files, "-o", html, "--format", "csv"]);
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(r.stdout.trim().split("\n"), [
      "report,results,comparisons,charts",
      `${html},2,1,3`,
    ]);
    const text = Deno.readTextFileSync(html);
    // its own data: each file's rows as JSON lines, equal to the rows read from the file
    const blocks = [
      ...text.matchAll(/<script type="application\/x-ndjson"[^>]*>\n([\s\S]*?)\n<\/script>/g),
    ].map((m) => m[1]!.split("\n").map((l) => JSON.parse(l)));
    assert.equal(blocks.length, 2);
    for (const [i, f] of files.entries()) {
      assert.deepEqual(blocks[i], parseResults(Deno.readTextFileSync(f), f).rows);
    }
    // nothing to fetch: the only URLs are XML namespaces, and a policy forbids every request
    const urls = [...text.matchAll(/https?:\/\/[^\s"'<>)]+/g)].map((m) => m[0]);
    assert.deepEqual(urls.filter((u) => !u.startsWith("http://www.w3.org/")), []);
    assert.match(text, /Content-Security-Policy" content="default-src 'none'/);

    Deno.mkdirSync(ARTIFACTS, { recursive: true });
    const seen = await openInChromium(html, d.path, `${ARTIFACTS}report.png`);
    assert.deepEqual(seen.console, [], "no console message");
    assert.deepEqual(pageRequests(seen.requests, html), [], "no request");
    for (const id of ["results-1", "results-2", "comparisons", "comparison-1"]) {
      assert.match(seen.dom, new RegExp(`<section[^>]* id="${id}"`), id);
    }
    for (const heading of ["Metadata", "Summaries", "Chart", "Rows"]) {
      assert.equal(seen.dom.split(`<h3>${heading}</h3>`).length - 1, 2, heading);
    }
    assert.equal(
      (seen.dom.match(/<svg /g) ?? []).length,
      3,
      "two table charts and a compare chart",
    );
    assert.match(seen.dom, /<td>raw<\/td>/);
    assert.match(seen.dom, /±/);
    assert.ok(Deno.statSync(`${ARTIFACTS}report.png`).size > 10_000, "a screenshot");

    // the checks catch a request: the same page with an image from the network fails them
    const bad = `${d.path}/bad.html`;
    Deno.writeTextFileSync(
      bad,
      text.replace("<body>", '<body><img src="http://127.0.0.1:9/x.png">'),
    );
    Deno.removeSync(`${d.path}/profile`, { recursive: true });
    const caught = await openInChromium(bad, d.path);
    assert.ok(caught.console.some((l) => l.includes("127.0.0.1:9")), caught.console.join("\n"));
  },
);

Deno.test("report: a chart's ids are its own; text is escaped", () => {
  const svg =
    '<svg><defs><clipPath id="clip1"></clipPath></defs><g clip-path="url(#clip1)"></g></svg>';
  assert.equal(
    inlineSvg(svg, "c2"),
    '<svg><defs><clipPath id="c2-clip1"></clipPath></defs><g clip-path="url(#c2-clip1)"></g></svg>',
  );
  assert.equal(escapeHtml(`<a href="x">&'`), "&#60;a href=&#34;x&#34;&#62;&#38;&#39;");
});

Deno.test("report: refused without -o FILE.html, in one line", async () => {
  const r = await runCli(["report", "x.jsonl"]);
  assert.equal(r.code, 2);
  assert.equal(r.stderr.trim().split("\n").length, 1, r.stderr);
  const s = await runCli(["report", "x.jsonl", "-o", "x.svg"]);
  assert.equal(s.code, 2);
  assert.match(s.stderr, /must end in \.html/);
});

Deno.test("compare chart: each ratio with its interval, over the threshold's band", async () => {
  const rows = (scale: number) =>
    ["raw", "gsd"].flatMap((framing) =>
      [1, 2, 3, 4, 5].map((repeat) => ({
        framing,
        N: 1024,
        repeat,
        stat: "run",
        read_MiBps: (framing === "gsd" ? scale : 1) * (100 + repeat),
      }))
    );
  const result = compareRows(rows(1), rows(0.5), {
    keys: ["framing", "N"],
    backendColumn: "framing",
    metrics: [{ name: "read_MiBps", better: "higher" }],
    threshold: 0.05,
    alpha: 0.05,
    confidence: 0.95,
  });
  const spec = compareChartSpec(result.comparisons, "a.jsonl", "b.jsonl", 0.05);
  const svg = await renderSpec(spec);
  // the band spans 1/1.05 .. 1.05, the rule sits at 1, gsd's ratio is 0.5 and a regression
  assert.match(
    svg,
    /distribution-free\): 0\.952\d*; to: 1\.05" role="graphics-symbol" aria-roledescription="rect mark"/,
  );
  const points = [
    ...svg.matchAll(/distribution-free\): ([\d.]+); label: (\w+) read_MiBps; verdict: (\w+)"/g),
  ]
    .map((m) => [m[2], Number(m[1]), m[3]]);
  assert.deepEqual(points, [["raw", 1, "same"], ["gsd", 0.5, "regression"]]);
  assert.equal(
    comparisonLabel(result.comparisons[1]!, varyingKeys(result.comparisons)),
    "gsd read_MiBps",
  );
  const domain = (spec.layer as { encoding: { x: { scale: { domain: number[] } } } }[])[3]!
    .encoding.x.scale.domain;
  assert.ok(domain[0]! < 0.5 && domain[1]! > 1.05, `padded: ${domain}`);
});
