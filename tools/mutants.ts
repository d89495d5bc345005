/**
 * `deno task mutants`: the mutation check. Each mutant (tools/mutant_list.ts) is a change to the
 * product that would make its numbers lie, written as edits next to marker comments
 * (`// mutant: NAME`) in lib/. The tool copies the project's tracked files to a temporary
 * directory, checks that the relevant tests pass there unchanged, then applies each mutant in turn
 * and runs only its tests: every mutant must make them fail. It fails loudly when an edit no longer
 * applies (its marker is gone, or the code below it changed: update the mutant), when a mutant
 * does not type-check (not a real product change), and when a mutant survives.
 *
 *     deno task mutants            (all mutants)
 *     deno task mutants NAME...    (the mutants whose name or claim contains one of the words)
 *     deno task mutants --check    (only whether every edit applies; runs no test)
 *     deno task mutants --typecheck (whether every edit applies and type-checks; runs no test)
 * @module
 */
import {
  MARKER_WINDOW_LINES,
  type Mutant,
  type MutantEdit,
  type MutantImport,
  MUTANTS,
} from "./mutant_list.ts";

export { MUTANTS };

const PERMISSIONS = ["--allow-all"];
const ROOT = new URL("..", import.meta.url).pathname.replace(/\/$/, "");
const decoder = new TextDecoder();
/** A marker line: `// mutant: NAME` alone on its line. */
const MARKER_LINE = /^[ \t]*\/\/ mutant: ([a-z0-9]+(?:-[a-z0-9]+)*)[ \t]*$/gm;

function say(text: string): void {
  console.error(`mutants: ${text}`);
}

/** Where one marker sits: its file (from the root given) and its 0-based line. */
export interface MarkerPlace {
  readonly file: string;
  readonly line: number;
}

/** Every marker under `root`/lib, by name; a name met twice has two places. */
export function findMarkers(root: string): Map<string, MarkerPlace[]> {
  const found = new Map<string, MarkerPlace[]>();
  const walk = (dir: string): void => {
    for (const entry of Deno.readDirSync(`${root}/${dir}`)) {
      const path = `${dir}/${entry.name}`;
      if (entry.isDirectory) walk(path);
      else if (entry.isFile && path.endsWith(".ts")) {
        const text = Deno.readTextFileSync(`${root}/${path}`);
        for (const m of text.matchAll(MARKER_LINE)) {
          const line = text.slice(0, m.index).split("\n").length - 1;
          const places = found.get(m[1]!) ?? [];
          places.push({ file: path, line });
          found.set(m[1]!, places);
        }
      }
    }
  };
  walk("lib");
  return found;
}

/** `search` as a pattern: its whitespace matches any run of whitespace, or none. */
export function searchPattern(search: string): RegExp {
  const parts = search.trim().split(/\s+/).map((p) => p.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&"));
  return new RegExp(parts.join("\\s*"), "g");
}

/** The path of `from` (from the root) as an import specifier in `file` (from the root). */
function relativeImport(file: string, from: string): string {
  const dir = file.split("/").slice(0, -1);
  const target = from.split("/");
  let common = 0;
  while (common < dir.length && dir[common] === target[common]) common++;
  const up = dir.length - common;
  return (up === 0 ? "./" : "../".repeat(up)) + target.slice(common).join("/");
}

/** The text of one file with one edit made, or the reason it does not apply. */
function applyEdit(text: string, file: string, line: number, e: MutantEdit): string | Error {
  const lines = text.split("\n");
  const start = lines.slice(0, line + 1).join("\n").length + 1;
  const end = lines.slice(0, line + 1 + MARKER_WINDOW_LINES).join("\n").length;
  const window = text.slice(start, end);
  const hits = [...window.matchAll(searchPattern(e.search))];
  if (hits.length !== 1) {
    return new Error(
      `${file}: ${JSON.stringify(e.search)} occurs ${hits.length} times in the ` +
        `${MARKER_WINDOW_LINES} lines after '// mutant: ${e.marker}' (exactly once expected)`,
    );
  }
  const at = start + hits[0]!.index!;
  return text.slice(0, at) + e.replace + text.slice(at + hits[0]![0].length);
}

/** Applies a mutant's edits and imports in `dir`; returns the original texts, or the reason. */
function apply(dir: string, m: Mutant): Map<string, string> | Error {
  const markers = findMarkers(dir);
  const texts = new Map<string, string>();
  // Edits from the bottom of each file up, so the lines of the markers above stay where they are.
  const placed = m.edits.map((e) => ({ e, places: markers.get(e.marker) ?? [] }));
  for (const { e, places } of placed) {
    if (places.length !== 1) {
      return new Error(`the marker '// mutant: ${e.marker}' is in lib/ ${places.length} times`);
    }
  }
  placed.sort((a, b) => b.places[0]!.line - a.places[0]!.line);
  for (const { e, places } of placed) {
    const { file, line } = places[0]!;
    const text = applyEdit(
      texts.get(file) ?? Deno.readTextFileSync(`${dir}/${file}`),
      file,
      line,
      e,
    );
    if (text instanceof Error) return text;
    texts.set(file, text);
  }
  const first = markers.get(m.edits[0]!.marker)![0]!.file;
  for (const i of m.imports ?? []) texts.set(first, importLine(first, i) + texts.get(first)!);
  const originals = new Map<string, string>();
  for (const file of texts.keys()) originals.set(file, Deno.readTextFileSync(`${dir}/${file}`));
  for (const [file, text] of texts) Deno.writeTextFileSync(`${dir}/${file}`, text);
  return originals;
}

function importLine(file: string, i: MutantImport): string {
  return `import { ${i.names.join(", ")} } from "${relativeImport(file, i.from)}";\n`;
}

/** Copies the files git tracks (and the working-tree edits of them) to a new directory. */
function copyProject(): string {
  const ls = new Deno.Command("git", { args: ["ls-files", "-z"], cwd: ROOT, stdout: "piped" })
    .outputSync();
  if (!ls.success) throw new Error("git ls-files failed: run from a git checkout");
  const dir = Deno.makeTempDirSync({ prefix: "sciobench-mutants-" });
  for (const file of decoder.decode(ls.stdout).split("\0").filter((f) => f !== "")) {
    const to = `${dir}/${file}`;
    Deno.mkdirSync(to.slice(0, to.lastIndexOf("/")), { recursive: true });
    try {
      Deno.copyFileSync(`${ROOT}/${file}`, to);
    } catch (e) {
      if (!(e instanceof Deno.errors.NotFound)) throw e; // deleted in the working tree
    }
  }
  return dir;
}

interface TestRun {
  readonly code: number;
  readonly output: string;
}

async function runTests(dir: string, tests: readonly string[], filter?: string): Promise<TestRun> {
  const args = [
    "test",
    "--quiet",
    ...PERMISSIONS,
    ...(filter ? ["--filter", filter] : []),
    ...tests,
  ];
  const out = await new Deno.Command(Deno.execPath(), {
    args,
    cwd: dir,
    stdout: "piped",
    stderr: "piped",
    env: { NO_COLOR: "1" },
  }).output();
  return { code: out.code, output: decoder.decode(out.stdout) + decoder.decode(out.stderr) };
}

/** The first assertion message of a failed run, for the report. */
function firstFailure(output: string): string {
  const line = output.split("\n").find((l) => /^error: /.test(l.trim()));
  return (line ?? "").trim().slice(0, 160);
}

/** Puts the originals `apply` returned back. */
function restore(dir: string, originals: Map<string, string>): void {
  for (const [file, text] of originals) Deno.writeTextFileSync(`${dir}/${file}`, text);
}

/** Type-checks each mutant's tests with the mutant applied; 0 when all of them type-check. */
async function typecheckEach(dir: string, chosen: readonly Mutant[]): Promise<number> {
  let invalid = 0;
  for (const [k, m] of chosen.entries()) {
    const r = apply(dir, m) as Map<string, string>;
    let out: Deno.CommandOutput;
    try {
      out = await new Deno.Command(Deno.execPath(), {
        args: ["check", "--quiet", ...m.tests],
        cwd: dir,
        stdout: "piped",
        stderr: "piped",
        env: { NO_COLOR: "1" },
      }).output();
    } finally {
      restore(dir, r);
    }
    if (out.code !== 0) {
      say(`INVALID: [${k + 1}/${chosen.length}] ${m.name}: the mutant does not type-check:`);
      console.error(decoder.decode(out.stderr).slice(0, 2000));
      invalid++;
    }
  }
  say(
    invalid === 0
      ? `all ${chosen.length} mutants type-check`
      : `${invalid} of ${chosen.length} mutants do not type-check`,
  );
  return invalid === 0 ? 0 : 1;
}

async function main(): Promise<number> {
  const checkOnly = Deno.args.includes("--check");
  const typecheckOnly = Deno.args.includes("--typecheck");
  const words = Deno.args.filter((a) => a !== "--check" && a !== "--typecheck");
  const chosen = MUTANTS.filter((m) =>
    words.length === 0 || words.some((w) => m.name.includes(w) || m.claim.includes(w))
  );
  if (chosen.length === 0) {
    say(`no mutant matches ${words.join(" ")}`);
    return 2;
  }
  const t0 = performance.now();
  const dir = copyProject();
  let failures = 0;
  try {
    // Every edit must apply to the code as it is (checked before anything runs).
    for (const m of chosen) {
      const r = apply(dir, m);
      if (r instanceof Error) {
        say(`MUTATION NO LONGER APPLIES: '${m.name}': ${r.message}; update tools/mutant_list.ts`);
        failures++;
        continue;
      }
      restore(dir, r);
    }
    if (failures > 0) return 1;
    if (checkOnly) {
      say(`all ${chosen.length} mutants apply`);
      return 0;
    }
    if (typecheckOnly) return await typecheckEach(dir, chosen);
    // The tests must pass on the unchanged copy, or a "caught" mutant proves nothing.
    const files = [...new Set(chosen.flatMap((m) => m.tests))];
    const filters = chosen.map((m) => m.filter.replace(/^\/|\/$/g, ""));
    const base = await runTests(dir, files, `/${[...new Set(filters)].join("|")}/`);
    if (base.code !== 0) {
      say(`the tests fail on the unchanged project (exit ${base.code}); fix them first:`);
      console.error(base.output.slice(-4000));
      return 1;
    }
    say(`baseline: ${files.join(" ")} pass unchanged`);
    for (const [k, m] of chosen.entries()) {
      const r = apply(dir, m) as Map<string, string>;
      let run: TestRun;
      try {
        run = await runTests(dir, m.tests, m.filter);
      } finally {
        restore(dir, r);
      }
      const label = `[${k + 1}/${chosen.length}] ${m.name} (${m.claim})`;
      if (/Type checking failed|TS\d{4} \[ERROR\]/.test(run.output)) {
        say(`INVALID: ${label}: the mutant does not type-check:`);
        console.error(run.output.slice(0, 2000));
        failures++;
      } else if (run.code === 0) {
        say(`SURVIVED: ${label}: ${m.tests.join(" ")} --filter ${m.filter} still passes`);
        failures++;
      } else {
        say(`caught: ${label} (${firstFailure(run.output)})`);
      }
    }
  } finally {
    Deno.removeSync(dir, { recursive: true });
  }
  const secs = ((performance.now() - t0) / 1000).toFixed(0);
  say(
    failures === 0
      ? `all ${chosen.length} mutants caught (${secs} s)`
      : `${failures} of ${chosen.length} mutants not caught or not applicable (${secs} s)`,
  );
  return failures === 0 ? 0 : 1;
}

if (import.meta.main) Deno.exit(await main());
