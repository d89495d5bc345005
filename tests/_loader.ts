/**
 * The loader tests' shared steps: the workload run in this process, and a file of the table's
 * frames to read.
 * @module
 */
import { backendByName } from "../lib/backends/registry.ts";
import type { FlagValues } from "../lib/cli/flags.ts";
import { Progress } from "../lib/report/progress.ts";
import type { Row } from "../lib/report/row.ts";
import { loaderWorkload } from "../lib/workloads/loader/workload.ts";
import { measureWrite } from "../lib/workloads/write/mod.ts";

/** Runs `loader` in this process with `flags` (the parser's defaults added) and returns its rows. */
export async function loaderRows(flags: Record<string, string | boolean>): Promise<Row[]> {
  const values = {
    seed: "1",
    "samples-per-batch": "8",
    sample: "shuffle",
    verify: false,
    ...flags,
  } as unknown as FlagValues<"loader">;
  const planned = await loaderWorkload.plan(values, [], { format: "csv" }, []);
  const rows: Row[] = [];
  const progress = new Progress({ quiet: true });
  await planned.run((row) => rows.push(row), progress);
  return rows;
}

/** Writes the table's frames (N = 64, seed 1) to `path` with `framing`: `frames` frames. */
export async function writeTableFile(framing: string, path: string, frames: number): Promise<void> {
  await measureWrite(backendByName(framing), path, "new", {}, {
    n: 64,
    count: frames,
    seed: 1,
    first: 0,
    fsync: "end",
    options: [],
  });
}
