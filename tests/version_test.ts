/**
 * `sciobench version`: the version from deno.json (the only copy in the code), the git commit of
 * the checkout (read without git), of a stamped build, or "unknown" outside a checkout, and the
 * runtime; `--format json` as data; `--version` is the same.
 */
import assert from "node:assert/strict";
import denoJson from "../deno.json" with { type: "json" };
import { runCli, runScript, tempDir } from "./_helpers.ts";

const ROOT = new URL("..", import.meta.url).pathname.replace(/\/$/, "");

function git(...args: string[]): string | null {
  try {
    const out = new Deno.Command("git", { args: ["-C", ROOT, ...args], stderr: "null" })
      .outputSync();
    return out.success ? new TextDecoder().decode(out.stdout).trim() : null;
  } catch {
    return null;
  }
}

Deno.test("version: version, the checkout's commit, Deno, V8, TypeScript, target; json", async () => {
  const text = await runCli(["version"]);
  assert.equal(text.code, 0, text.stderr);
  const lines = text.stdout.trimEnd().split("\n");
  assert.equal(lines[0], `sciobench ${denoJson.version}`);
  const facts = Object.fromEntries(lines.slice(1).map((l) => l.split(/\s+/, 2)));
  assert.deepEqual(Object.keys(facts), ["commit", "deno", "v8", "typescript", "target"]);
  const head = git("rev-parse", "HEAD");
  if (head !== null) assert.equal(facts.commit, head, "the checkout's HEAD, read from .git");
  else assert.match(facts.commit!, /^([0-9a-f]{40}|unknown)$/);
  assert.equal(facts.deno, Deno.version.deno);
  assert.equal(facts.v8, Deno.version.v8);
  assert.equal(facts.target, Deno.build.target);
  assert.match(facts.target!, /^(x86_64|aarch64)-unknown-linux-gnu$/);

  const json = await runCli(["version", "--format", "json"]);
  assert.equal(json.code, 0, json.stderr);
  const doc = JSON.parse(json.stdout);
  assert.deepEqual(doc, {
    tool: "sciobench",
    version: denoJson.version,
    commit: facts.commit,
    deno: Deno.version.deno,
    v8: Deno.version.v8,
    typescript: Deno.version.typescript,
    target: Deno.build.target,
  });
  assert.equal((await runCli(["--version"])).stdout, text.stdout);
  const bad = await runCli(["version", "--format", "csv"]);
  assert.equal(bad.code, 2);
  assert.match(bad.stderr, /^sciobench: error: bad --format 'csv'/);
});

/** Copies the sources a run needs (no .git) into `dir`. */
function copySources(dir: string): void {
  for (const f of ["main.ts", "deno.json", "deno.lock"]) {
    Deno.copyFileSync(`${ROOT}/${f}`, `${dir}/${f}`);
  }
  const copyTree = (from: string, to: string) => {
    Deno.mkdirSync(to, { recursive: true });
    for (const e of Deno.readDirSync(from)) {
      if (e.isDirectory) copyTree(`${from}/${e.name}`, `${to}/${e.name}`);
      else if (e.isFile) Deno.copyFileSync(`${from}/${e.name}`, `${to}/${e.name}`);
    }
  };
  copyTree(`${ROOT}/lib`, `${dir}/lib`);
}

async function versionIn(dir: string): Promise<Record<string, string>> {
  const out = await runScript(`${dir}/main.ts`, ["version", "--format", "json"], { cwd: dir });
  assert.equal(out.code, 0, out.stderr);
  return JSON.parse(out.stdout);
}

Deno.test("version: 'unknown' commit outside a checkout; a stamped commit wins", async () => {
  using d = tempDir("sciobench-version-");
  copySources(d.path);
  assert.equal((await versionIn(d.path)).commit, "unknown");
  // The release workflow stamps the commit into lib/core/version.ts before compiling.
  const path = `${d.path}/lib/core/version.ts`;
  const text = Deno.readTextFileSync(path);
  const stamped = text.replace(
    'export const COMMIT = "";',
    `export const COMMIT = "${"ab".repeat(20)}";`,
  );
  assert.notEqual(stamped, text, "lib/core/version.ts has the line the release workflow stamps");
  Deno.writeTextFileSync(path, stamped);
  assert.equal((await versionIn(d.path)).commit, "ab".repeat(20));
});

Deno.test("version: one copy of the version string in the code (deno.json's)", () => {
  const v = denoJson.version;
  assert.match(v, /^\d+\.\d+\.\d+/);
  const hits: string[] = [];
  const walk = (dir: string) => {
    for (const e of Deno.readDirSync(dir)) {
      const p = `${dir}/${e.name}`;
      if (e.isDirectory && !["testdata", "node_modules", "dist", ".git"].includes(e.name)) walk(p);
      else if (
        e.isFile && /\.(ts|js|json|ya?ml|py|sh)$/.test(e.name) && p !== `${ROOT}/deno.json`
      ) {
        if (p.endsWith("deno.lock")) continue; // npm package versions, not ours
        if (
          Deno.readTextFileSync(p).includes(`"${v}"`) || Deno.readTextFileSync(p).includes(`'${v}'`)
        ) {
          hits.push(p.slice(ROOT.length + 1));
        }
      }
    }
  };
  for (const d of ["lib", "tools", "bench", ".github", ".ci"]) {
    try {
      walk(`${ROOT}/${d}`);
    } catch (e) {
      if (!(e instanceof Deno.errors.NotFound)) throw e;
    }
  }
  for (const f of ["main.ts", "mod.ts"]) {
    if (Deno.readTextFileSync(`${ROOT}/${f}`).includes(v)) hits.push(f);
  }
  assert.deepEqual(hits, [], `the version ${v} is written out beside deno.json`);
});
