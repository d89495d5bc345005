/**
 * Runs many sciobench command lines in one process (lib/cli/main.ts runCli), one after another,
 * each with its own stderr captured and its exit code kept, and lists what each left in its
 * directory (then removes it, so the next starts clean). Used by tests/knobs_test.ts: spawning a
 * process per command line would take minutes. Reads the cases (JSON: [{ args, dir }]) from the
 * file named by the first argument and writes the results (JSON) to the second. Everything JS
 * writes to stderr is captured, so the process's own stderr shows only what libraries wrote
 * (C code writing to file descriptor 2).
 * @module
 */
import { runCli } from "../lib/cli/main.ts";

interface Case {
  readonly args: string[];
  readonly dir: string;
}

const decoder = new TextDecoder();
let captured = "";
Object.defineProperty(Deno.stderr, "writeSync", {
  value: (p: Uint8Array) => {
    captured += decoder.decode(p);
    return p.length;
  },
});
Object.defineProperty(Deno.stdout, "writeSync", { value: (p: Uint8Array) => p.length });
console.error = (...parts: unknown[]) => {
  captured += `${parts.map(String).join(" ")}\n`;
};

/** Every path under `dir`, relative to it. */
function listing(dir: string, under = ""): string[] {
  const out: string[] = [];
  for (const e of Deno.readDirSync(`${dir}/${under}`)) {
    const rel = under === "" ? e.name : `${under}/${e.name}`;
    out.push(rel);
    if (e.isDirectory) out.push(...listing(dir, rel));
  }
  return out;
}

const [casesPath, resultsPath] = Deno.args;
const cases = JSON.parse(Deno.readTextFileSync(casesPath!)) as Case[];
const results = [];
for (const c of cases) {
  const before = new Set(listing(c.dir));
  captured = "";
  let code: number;
  let crash = "";
  try {
    code = await runCli(c.args);
  } catch (e) {
    code = -1;
    crash = e instanceof Error ? `${e.stack}` : String(e);
  }
  const added = listing(c.dir).filter((p) => !before.has(p));
  for (const p of added.toSorted((a, b) => b.length - a.length)) {
    Deno.removeSync(`${c.dir}/${p}`, { recursive: true });
  }
  results.push({ args: c.args, code, stderr: captured, added, crash });
}
Deno.writeTextFileSync(resultsPath!, JSON.stringify(results));
