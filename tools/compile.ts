/**
 * `deno task compile [--target TRIPLE] [--output PATH]`: `deno compile` of release.ts (main.ts
 * carrying the charting packages, which main.ts alone loads only when drawing) with exactly the
 * permissions of deno.json's `sciobench` task and the runtime's lock file (deno.run.lock, so
 * the executable holds no package that only development uses). When Deno cannot fetch its base
 * runtime (denort, downloaded from dl.deno.land on first use per target), prints one line saying
 * what to do instead and exits 1; any other failure prints deno's own message.
 * @module
 */
import { parseArgs } from "node:util";

const ROOT = new URL("..", import.meta.url).pathname.replace(/\/$/, "");

/** The `--allow-*` flags of deno.json's `sciobench` task (the product's permission set). */
export function taskPermissions(denoJsonText: string): string[] {
  const tasks = (JSON.parse(denoJsonText) as { tasks: Record<string, string> }).tasks;
  const run = tasks.sciobench;
  if (run === undefined) throw new Error("deno.json has no 'sciobench' task");
  return run.split(/\s+/).filter((w) => w.startsWith("--allow-"));
}

/** True when deno compile's error output says it could not get the base runtime. */
export function runtimeFetchFailed(stderr: string): boolean {
  return /Setting up base binary|denort|dl\.deno\.land/.test(stderr) &&
    !/DENORT_BIN/.test(stderr);
}

/** The one line printed instead of deno's error when the base runtime cannot be fetched. */
export function fetchFailureLine(target: string, permissions: readonly string[]): string {
  return `compile: cannot fetch Deno's base runtime (denort) for ${target} from dl.deno.land; ` +
    `instead run sciobench from source with 'npx -y deno@${Deno.version.deno} task sciobench ` +
    `COMMAND' (deno run ${permissions.join(" ")} main.ts), download a release executable ` +
    `(README, "One file to copy to a cluster"), or set DENORT_BIN to a denort ${Deno.version.deno} binary`;
}

async function main(): Promise<number> {
  const { values } = parseArgs({
    args: Deno.args,
    options: {
      target: { type: "string", default: Deno.build.target },
      output: { type: "string", default: "sciobench" },
    },
    strict: true,
  });
  const permissions = taskPermissions(Deno.readTextFileSync(`${ROOT}/deno.json`));
  const out = await new Deno.Command(Deno.execPath(), {
    args: [
      "compile",
      // only the runtime's npm packages (deno.run.lock), none that only development uses
      `--lock=${ROOT}/deno.run.lock`,
      ...permissions,
      "--target",
      values.target,
      "--output",
      values.output,
      `${ROOT}/release.ts`,
    ],
    stdout: "inherit",
    stderr: "piped",
  }).output();
  const stderr = new TextDecoder().decode(out.stderr);
  if (out.success) {
    Deno.stderr.writeSync(out.stderr);
    return 0;
  }
  if (runtimeFetchFailed(stderr)) {
    console.error(fetchFailureLine(values.target, permissions));
  } else {
    Deno.stderr.writeSync(out.stderr);
  }
  return 1;
}

if (import.meta.main) Deno.exit(await main());
