/**
 * Two toy workloads (`toy`, and `toyfile` that takes a FILE argument), registered on import with
 * registerWorkload and nothing else. tests/workloads_test.ts uses them to show that a new
 * workload is a command with its help, `--dry-run`, every output format, its chart (`--plot` and
 * `sciobench plot`), MPI and its positional arguments, with no other edit. Run as a program, this
 * module is the sciobench CLI with the toys registered (as a plugin would be).
 * @module
 */
import { runCli } from "../lib/cli/main.ts";
import { UsageError } from "../lib/core/errors.ts";
import { rankRows } from "../lib/mpi/aggregate.ts";
import { col } from "../lib/report/human.ts";
import { registerWorkload } from "../lib/workloads/registry.ts";
import type { Workload } from "../lib/workloads/workload.ts";

/** How the toy's rows aggregate over MPI ranks: counts summed, times the slowest rank's. */
const TOY_AGGREGATE = { sum: ["bytes"], max: ["wall_s"], rates: [] };

/** `toy`: one row per step, `value` = seed x step, `bytes` = 8 x step; nothing is written. */
export const toyWorkload: Workload = {
  name: "toy",
  summary: "a toy workload of tests/_toy_workload.ts",
  help: {
    title: "a toy workload: one row per step, nothing written",
    intro: "Makes --steps rows; each says its step, seed x step and 8 x step bytes.",
    after: "Its chart: value against step.",
  },
  flags: ["seed", { name: "steps", type: "string", value: "K", default: "3", help: "rows made" }],
  columns: [
    col("step", "", "count", "the row's step, 1..K"),
    col("value", "", "number", "seed times step"),
    col("bytes", "bytes", "count", "8 times step"),
    col("wall_s", "s", "number", "always 0"),
  ],
  keys: ["step"],
  aggregate: TOY_AGGREGATE,
  human: ["step", "value", "bytes"],
  chart: {
    title: "value per step",
    mark: "line",
    x: { column: "step", title: "step", integer: true },
    yTitle: "value (seed × step)",
    measures: [{ name: "value", columns: ["value"] }],
    series: { columns: [], title: "toy" },
    width: 300,
    height: 160,
  },
  plan(values) {
    const steps = Number(values["steps"]);
    if (!Number.isSafeInteger(steps) || steps <= 0) {
      throw new UsageError(`bad --steps '${String(values["steps"])}': a positive integer`);
    }
    const seed = Number(values["seed"]);
    return {
      plan: {
        command: "toy",
        parameters: { steps, seed },
        backends: [{ name: "toy" }], // nothing on disk: the toy itself runs
        skipped: [],
        files: [],
        writeBytes: 0,
        readBytes: 0,
        warnings: [],
      },
      options: { steps, seed },
      run(add) {
        for (let step = 1; step <= steps; step++) {
          const row = { step, value: seed * step, bytes: 8 * step, "wall_s": 0 };
          for (const r of rankRows(row, TOY_AGGREGATE, Boolean(values["per-rank"]))) add(r);
        }
        return Promise.resolve();
      },
    };
  },
};

registerWorkload(toyWorkload);

/** `toyfile FILE`: one row, FILE's size in bytes; nothing is written. */
export const toyFileWorkload: Workload = {
  name: "toyfile",
  summary: "a toy workload of tests/_toy_workload.ts that reads FILE",
  help: {
    title: "a toy workload on FILE: one row, its size",
    intro: "Says how many bytes FILE holds.",
  },
  flags: [],
  positionals: ["FILE"],
  columns: [col("path", "", "text", "FILE"), col("bytes", "bytes", "count", "FILE's size")],
  keys: ["path"],
  human: ["path", "bytes"],
  inputs: (_values, [path]) => [["FILE", path!]],
  plan(_values, _args, _output, [path]) {
    const bytes = Deno.statSync(path!).size;
    return {
      plan: {
        command: "toyfile",
        parameters: { file: path },
        backends: [{ name: "toyfile" }],
        skipped: [],
        files: [],
        writeBytes: 0,
        readBytes: bytes,
        warnings: [],
      },
      options: { file: path },
      run(add) {
        add({ path: path!, bytes });
        return Promise.resolve();
      },
    };
  },
};

registerWorkload(toyFileWorkload);

if (import.meta.main) {
  Deno.env.set("SCIOBENCH_SELF", new URL(import.meta.url).pathname);
  Deno.exit(await runCli(Deno.args));
}
