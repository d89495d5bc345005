/**
 * A command made from a workload (lib/workloads/workload.ts): its flags parsed against the flag
 * table, its help generated, `--dry-run`, the plan's first stderr line, every output format and
 * `--plot` handled here, the same for every workload.
 * @module
 */
import type { FlagRecord, Workload } from "../workloads/workload.ts";
import { registeredWorkloads } from "../workloads/registry.ts";
import { Progress } from "../report/progress.ts";
import type { Command } from "./command.ts";
import {
  COMMAND_NAMES,
  type CommandName,
  flagsOf,
  type FlagSpec,
  registeredFlags,
} from "./flags.ts";
import { rowFormatsHelp } from "../report/formats/mod.ts";
import { commandHelp, optionsText } from "./help.ts";
import { parseFlagList } from "./parse_flags.ts";
import {
  checkOutputFormat,
  checkOutputsApart,
  checkPlotPath,
  measureInto,
  openAtFirstRow,
  openResults,
} from "./output.ts";
import { UsageError } from "../core/errors.ts";
import { warn } from "../core/diagnostics.ts";
import { rankColumnDocs } from "../workloads/columns.ts";
import { storeDir } from "../report/store.ts";
import { announcePlan, dryRun } from "./plan.ts";

/** A command of the CLI made from a workload, with whether it runs as one rank of many. */
export interface WorkloadCommand extends Command {
  /** True when the workload runs under MPI (it says how rows aggregate over ranks). */
  readonly rankAware: boolean;
}

/** True when `name` is a command of the flag table (a built-in workload). */
function isBuiltIn(name: string): name is CommandName {
  return (COMMAND_NAMES as readonly string[]).includes(name);
}

/**
 * The flags `workload` takes: the table's for a built-in one, else the registered rule; its
 * `--format` help names the formats of lib/report/formats/mod.ts with its seed layout.
 */
function flagsOfWorkload(workload: Workload): [string, FlagSpec][] {
  const flags = isBuiltIn(workload.name) ? flagsOf(workload.name) : registeredFlags(workload.flags);
  return flags.map(([name, flag]): [string, FlagSpec] =>
    name === "format"
      ? [name, { ...flag, aboutOf: () => rowFormatsHelp(workload.seedLayout) }]
      : [name, flag]
  );
}

/**
 * UsageError unless `given` holds one value for each of the workload's `positionals` (its
 * usage line's names, such as FILE).
 */
function checkPositionals(
  command: string,
  positionals: readonly string[],
  given: readonly string[],
): void {
  if (given.length === positionals.length) return;
  // none declared: the parser refuses every positional argument before this
  const what = positionals.length === 1 ? `exactly one ${positionals[0]}` : positionals.join(" ");
  throw new UsageError(`${command}: give ${what} (see 'sciobench ${command} --help')`);
}

/** The usage line of `workload` after its name: its own, or `[options]` and its positionals. */
function usageOf(workload: Workload): string {
  return workload.help.usage ?? ["[options]", ...(workload.positionals ?? [])].join(" ");
}

/** The command that runs `workload`. */
export function workloadCommand<V extends FlagRecord>(workload: Workload<V>): WorkloadCommand {
  const w = workload as unknown as Workload;
  return {
    name: w.name,
    summary: w.summary,
    rankAware: w.aggregate !== undefined,
    get help(): string {
      return commandHelp(
        w.name,
        { ...w.help, usage: usageOf(w) },
        optionsText(
          w.name,
          flagsOfWorkload(w),
        ),
      );
    },
    async run(args: string[]): Promise<void> {
      const names = w.positionals ?? [];
      const { values, positionals } = parseFlagList(
        w.name,
        flagsOfWorkload(w),
        args,
        names.length > 0,
      );
      checkPositionals(w.name, names, positionals);
      const flags = values as {
        "dry-run"?: boolean;
        format?: string;
        out?: string;
        force?: boolean;
        audit?: boolean;
        plot?: string;
        store?: string;
      };
      const output = { ...flags, format: w.outputFormat ? w.outputFormat(values) : flags.format };
      // the output flags are checked first: an --out that is an input is refused before the
      // plan reads (or rolls back) that input
      const inputs = w.inputs?.(values, positionals) ?? [];
      checkOutputsApart(output, inputs);
      const format = checkOutputFormat(output, w.seedLayout !== undefined);
      checkPlotPath(w.name, w.chart, output.plot, output.force);
      // the plan is printed only once every check of the run has passed
      const planned = await w.plan(values, args, { format }, positionals);
      if (planned.plan === undefined && output["dry-run"]) {
        throw new UsageError(`${w.name}: --dry-run: this workload makes no plan to print`);
      }
      const dry = { "dry-run": output["dry-run"] ?? false, format: output.format };
      if (planned.plan !== undefined && dryRun(planned.plan, dry)) return;
      planned.begin?.();
      const progress = planned.progress ?? new Progress();
      if (planned.plan !== undefined) {
        announcePlan(planned.plan, planned.notes, storeDir(output.store), planned.dir);
      } else for (const note of planned.notes ?? []) warn(note);
      if (planned.ownOutput) {
        try {
          await planned.run(() => {
            throw new Error(`${w.name}: a run that prints its own output added a row`);
          }, progress);
        } finally {
          progress.clear();
        }
        return;
      }
      // the run's duration counts from here, also where the output opens at the first row
      const startMs = performance.now();
      const open = () =>
        openResults({
          command: w.name,
          args,
          columns: planned.columns ??
            (w.aggregate === undefined ? w.columns : rankColumnDocs(w.columns, w.aggregate)),
          human: w.human,
          keys: w.keys,
          chart: w.chart,
          seed: planned.seed,
          options: planned.options,
          facts: planned.facts,
          dir: planned.dir,
          inputs,
          startMs,
          plannedBytes: planned.plan && planned.plan.writeBytes + planned.plan.readBytes,
        }, output);
      const results = planned.openAtFirstRow ? openAtFirstRow(open) : open();
      await measureInto(results, progress, () => planned.run((row) => results.add(row), progress));
    },
  };
}

/** The commands of the workloads registered with lib/workloads/registry.ts. */
export function registeredCommands(): WorkloadCommand[] {
  return registeredWorkloads().map((w) => workloadCommand(w));
}
