/**
 * Distribution: .github/workflows/release.yml parses as YAML, runs on a `v*` tag, compiles for
 * Linux x86_64 and aarch64 with exactly the permission flags of deno.json's `sciobench` task
 * (the test fails when they drift apart), bundles, sums with SHA-256 and attaches all of it to
 * the release; `deno task compile` says in one line what to do when Deno cannot fetch its base
 * runtime.
 */
import assert from "node:assert/strict";
import { parse } from "npm:yaml@2.9.1";
import { fetchFailureLine, runtimeFetchFailed, taskPermissions } from "../tools/compile.ts";
import { PERMISSIONS, tempDir } from "./_helpers.ts";

const ROOT = new URL("..", import.meta.url).pathname.replace(/\/$/, "");
const DENO_JSON = Deno.readTextFileSync(`${ROOT}/deno.json`);
const TASKS = (JSON.parse(DENO_JSON) as { tasks: Record<string, string> }).tasks;
const TARGETS = ["x86_64-unknown-linux-gnu", "aarch64-unknown-linux-gnu"];

interface Step {
  name?: string;
  uses?: string;
  run?: string;
  with?: Record<string, unknown>;
  env?: Record<string, string>;
  "working-directory"?: string;
}

function workflow(): {
  on: { push: { tags: string[] } };
  permissions: Record<string, string>;
  jobs: Record<string, { "runs-on": string; steps: Step[] }>;
} {
  return parse(Deno.readTextFileSync(`${ROOT}/.github/workflows/release.yml`));
}

/** The shell commands of a `run:` script, continuation lines joined, comments dropped. */
function commands(script: string): string[] {
  return script.replace(/\\\n\s*/g, "").split("\n").map((l) => l.trim()).filter((l) =>
    l !== "" && !l.startsWith("#")
  );
}

/** The `--allow-*` flags (and any -A) of a command line, sorted. */
function allowFlags(command: string): string[] {
  return command.split(/\s+/).filter((w) => w.startsWith("--allow-") || w === "-A").sort();
}

Deno.test("release.yml: parses; on a v* tag compiles x86_64 and aarch64 with the task's permissions", () => {
  const wf = workflow();
  assert.deepEqual(wf.on.push.tags, ["v*"]);
  assert.equal(wf.permissions.contents, "write", "the job may create the release");
  const steps = Object.values(wf.jobs).flatMap((j) => j.steps);
  const runs = steps.flatMap((s) => (s.run ? commands(s.run) : []));
  const product = taskPermissions(DENO_JSON).sort();
  // The product's permission set, the same in every place that states it.
  assert.deepEqual(product, [...PERMISSIONS].sort(), "tests/_helpers.ts PERMISSIONS");
  for (const task of ["sciobench", "demo", "test"]) {
    assert.deepEqual(allowFlags(TASKS[task]!), product, `deno.json task '${task}'`);
  }
  const readme = Deno.readTextFileSync(`${ROOT}/README.md`);
  assert.ok(readme.includes(`\n${taskPermissions(DENO_JSON).join(" ")}\n`), "README's flags");

  const compiles = runs.filter((c) => /^deno compile /.test(c));
  assert.equal(compiles.length, TARGETS.length);
  const targets = compiles.map((c) => / --target (\S+)/.exec(c)?.[1]);
  assert.deepEqual(targets.sort(), [...TARGETS].sort());
  for (const c of compiles) {
    assert.deepEqual(allowFlags(c), product, `permission flags drifted: ${c}`);
    assert.ok(c.includes(" --lock=deno.run.lock "), `only the runtime's packages: ${c}`);
    assert.match(c, / --output dist\/sciobench-\S+ release\.ts$/);
  }
  // The bundle is run with the same flags in the smoke test.
  assert.ok(runs.some((c) => /^deno bundle .*-o dist\/sciobench\.js release\.ts$/.test(c)));
  const bundleRuns = runs.filter((c) => /^deno run .*dist\/sciobench\.js/.test(c));
  assert.ok(bundleRuns.length > 0);
  for (const c of bundleRuns) assert.deepEqual(allowFlags(c), product, c);

  // Deno is the pinned version, set up by a maintained action.
  const setup = steps.find((s) => s.uses?.startsWith("denoland/setup-deno@"));
  assert.equal(setup?.with?.["deno-version"], Deno.version.deno);
  assert.ok(steps.some((s) => s.uses?.startsWith("actions/checkout@")));

  // The release commit is stamped into the line lib/core/version.ts has.
  const version = Deno.readTextFileSync(`${ROOT}/lib/core/version.ts`);
  assert.match(version, /^export const COMMIT = "";$/m);
  assert.ok(runs.some((c) => c.includes(`s/^export const COMMIT = \\"\\";`)), "stamp step");

  // Every artifact is summed, and the sums and artifacts are attached.
  const artifacts = [...TARGETS.map((t) => `sciobench-${t}`), "sciobench.js"];
  const sums = runs.find((c) => c.startsWith("sha256sum "));
  assert.ok(sums?.endsWith("> SHA256SUMS"), sums);
  for (const a of artifacts) assert.ok(sums!.split(/\s+/).includes(a), `${a} summed`);
  const attach = steps.find((s) => s.run?.includes("gh release"));
  assert.ok(attach?.env?.GH_TOKEN, "gh is given the job's token");
  for (const a of [...artifacts, "SHA256SUMS"]) {
    assert.ok(attach!.run!.includes(`dist/${a}`), `${a} attached`);
  }
});

Deno.test("compile: the one line when denort cannot be fetched (deno's real error text)", () => {
  const deno = `error: Writing deno compile executable to temporary file 'x.tmp-1'

Caused by:
    0: Setting up base binary.
    1: error sending request for url (https://dl.deno.land/release/v2.9.6/denort-x86_64-unknown-linux-gnu.zip): client error (Connect)`;
  assert.equal(runtimeFetchFailed(deno), true);
  assert.equal(runtimeFetchFailed('error: Module not found "file:///x/main.ts".'), false);
  const line = fetchFailureLine("aarch64-unknown-linux-gnu", PERMISSIONS);
  assert.equal(line.includes("\n"), false);
  assert.match(line, /denort\) for aarch64-unknown-linux-gnu/);
  assert.ok(line.includes(`deno run ${PERMISSIONS.join(" ")} main.ts`));
  assert.match(line, /release executable/);
});

Deno.test("deno task compile: with dl.deno.land unreachable, one line and a non-zero exit", async () => {
  using d = tempDir("sciobench-compile-");
  // A proxy that refuses every connection stands in for a machine without access to
  // dl.deno.land; npm stays direct. Deno keeps a fetched denort in DENO_DIR/dl: when this
  // machine has one for the target, a fresh DENO_DIR makes sure it is not used.
  const info = await new Deno.Command(Deno.execPath(), { args: ["info", "--json"] }).output();
  const denoDir = JSON.parse(new TextDecoder().decode(info.stdout)).denoDir as string;
  const target = "aarch64-unknown-linux-gnu";
  let cached = false;
  try {
    cached = Deno.statSync(`${denoDir}/dl/release/v${Deno.version.deno}/denort-${target}.zip`)
      .isFile;
  } catch {
    // not fetched on this machine
  }
  const env: Record<string, string> = {
    PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin",
    HOME: Deno.env.get("HOME") ?? d.path,
    DENO_DIR: cached ? `${d.path}/deno_dir` : denoDir,
    HTTPS_PROXY: "http://127.0.0.1:9",
    HTTP_PROXY: "http://127.0.0.1:9",
    NO_PROXY: "registry.npmjs.org,npmjs.org",
    NO_COLOR: "1",
  };
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["task", "compile", "--target", target, "--output", `${d.path}/x`],
    cwd: ROOT,
    clearEnv: true,
    env,
    stdout: "piped",
    stderr: "piped",
  }).output();
  const stderr = new TextDecoder().decode(out.stderr);
  assert.notEqual(out.code, 0, stderr);
  const lines = stderr.split("\n").filter((l) => l.trim() !== "" && !/^(Task|Download) /.test(l));
  assert.deepEqual(lines, [fetchFailureLine(target, PERMISSIONS)], stderr);
  assert.deepEqual(
    [...Deno.readDirSync(d.path)].map((e) => e.name).filter((n) => n !== "deno_dir"),
    [],
  );
});

/** The npm packages (name@version) imported by the files under `dir` (and its folders). */
function npmImports(paths: string[]): Set<string> {
  const found = new Set<string>();
  const visit = (path: string) => {
    const stat = Deno.statSync(path);
    if (stat.isDirectory) {
      for (const e of Deno.readDirSync(path)) visit(`${path}/${e.name}`);
    } else if (path.endsWith(".ts")) {
      for (
        const m of Deno.readTextFileSync(path).matchAll(/"npm:((?:@[^/"]+\/)?[^/@"]+@[^/"]+)/g)
      ) {
        found.add(`npm:${m[1]}`);
      }
    }
  };
  for (const p of paths) visit(p);
  return found;
}

Deno.test("a first run fetches only what the product imports: deno.run.lock for the product's tasks", () => {
  // Deno fetches every package of the lock file it uses, and `deno task` the config's lock before
  // any task: the config names none, the product's tasks name deno.run.lock, the rest deno.lock.
  assert.equal(JSON.parse(DENO_JSON).lock, false);
  const runLock = JSON.parse(Deno.readTextFileSync(`${ROOT}/deno.run.lock`)) as {
    specifiers: Record<string, string>;
  };
  const devLock = JSON.parse(Deno.readTextFileSync(`${ROOT}/deno.lock`)) as {
    specifiers: Record<string, string>;
  };
  const product = npmImports([
    `${ROOT}/main.ts`,
    `${ROOT}/release.ts`,
    `${ROOT}/mod.ts`,
    `${ROOT}/lib`,
  ]);
  assert.deepEqual(Object.keys(runLock.specifiers).sort(), [...product].sort());
  // What only tests and tools use is never in it.
  const dev = npmImports([`${ROOT}/tests`, `${ROOT}/tools`, `${ROOT}/bench`]);
  const devOnly = [...dev].filter((p) => !product.has(p));
  assert.ok(devOnly.length > 0);
  for (const p of devOnly) assert.ok(!(p in runLock.specifiers), p);
  for (const p of product) assert.equal(devLock.specifiers[p], runLock.specifiers[p], p);
  for (const [task, command] of Object.entries(TASKS)) {
    const lock = ["sciobench", "demo", "compile", "bundle"].includes(task)
      ? "deno.run.lock"
      : "deno.lock";
    for (const part of command.split("&&").map((c) => c.trim())) {
      if (/^deno (fmt|lint)\b/.test(part)) continue; // no packages
      assert.match(part, new RegExp(`^deno \\w+ --lock=${lock.replaceAll(".", "\\.")} `), task);
    }
  }
});
