/**
 * The charting packages (vega, vega-lite and their d3 dependencies) load only when a chart is
 * drawn: with an empty DENO_DIR, `table --quick` fetches none of them and `plot` then draws; the
 * bundle (release.ts) carries them and draws with nothing fetched. These tests fetch from npm.
 * @module
 */
import assert from "node:assert/strict";
import { MAIN, PERMISSIONS, tempDir } from "./_helpers.ts";

const ROOT = new URL("..", import.meta.url).pathname.replace(/\/$/, "");

/** A package of the charting stack (what only drawing needs), by its tarball's name. */
const CHARTING = /\/(vega[-\w]*|d3-[-\w]+|topojson-client|delaunator)\/-\//;

/** The source's way to run: deno.json's `sciobench` task, from any directory. */
const SOURCE = [`--config=${ROOT}/deno.json`, `--lock=${ROOT}/deno.run.lock`, MAIN];

/** `deno run ARGS` with DENO_DIR at `denoDir`; the URLs Deno downloaded and the exit code. */
async function runFresh(
  denoDir: string,
  cwd: string,
  args: string[],
): Promise<{ code: number; downloads: string[]; stderr: string }> {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", ...PERMISSIONS, ...args],
    cwd,
    env: { DENO_DIR: denoDir, NO_COLOR: "1" },
    stdout: "piped",
    stderr: "piped",
  }).output();
  const stderr = new TextDecoder().decode(out.stderr);
  const downloads = stderr.split("\n").filter((l) => l.startsWith("Download ")).map((l) =>
    l.slice("Download ".length)
  );
  return { code: out.code, downloads, stderr };
}

Deno.test("an empty DENO_DIR: table --quick fetches nothing chart-related, plot then draws", async () => {
  using d = tempDir("sciobench-lazy-");
  const denoDir = `${d.path}/deno_dir`;
  const table = await runFresh(denoDir, d.path, [
    ...SOURCE,
    "table",
    "--quick",
    "--framing",
    "raw",
    "--dir",
    d.path,
    "--out",
    "q.jsonl",
  ]);
  assert.equal(table.code, 0, table.stderr);
  assert.ok(table.downloads.length > 0, "an empty DENO_DIR fetches the CSV packages");
  assert.deepEqual(table.downloads.filter((u) => CHARTING.test(u)), [], table.stderr);
  const plot = await runFresh(denoDir, d.path, [...SOURCE, "plot", "q.jsonl", "-o", "q.svg"]);
  assert.equal(plot.code, 0, plot.stderr);
  assert.ok(plot.downloads.some((u) => /\/vega-lite-/.test(u)), "plot fetches vega-lite");
  assert.match(Deno.readTextFileSync(`${d.path}/q.svg`), /^<svg[^>]*>[\s\S]*<\/svg>$/);
});

Deno.test("the bundle carries the charting packages: plot draws with an empty DENO_DIR", async () => {
  using d = tempDir("sciobench-lazy-bundle-");
  const bundle = `${d.path}/sciobench.js`;
  const made = await new Deno.Command(Deno.execPath(), {
    args: ["bundle", `--lock=${ROOT}/deno.run.lock`, "--platform=deno", "-o", bundle, "release.ts"],
    cwd: ROOT,
    stdout: "piped",
    stderr: "piped",
  }).output();
  assert.equal(made.code, 0, new TextDecoder().decode(made.stderr));
  const denoDir = `${d.path}/deno_dir`;
  const table = await runFresh(denoDir, d.path, [
    bundle,
    ...["table", "--quick", "--framing", "raw", "--dir", d.path, "--out", "t.jsonl"],
  ]);
  assert.equal(table.code, 0, table.stderr);
  const plot = await runFresh(denoDir, d.path, [bundle, "plot", "t.jsonl", "-o", "t.svg"]);
  assert.equal(plot.code, 0, plot.stderr);
  assert.deepEqual(plot.downloads, [], "the bundle needs no package");
  assert.match(Deno.readTextFileSync(`${d.path}/t.svg`), /<svg/);
});
