/**
 * `sciobench loader`: the loader workload (lib/workloads/loader/), and its hidden reader process
 * `sciobench loader _reader` (`--readers K`): this same program run again, never a shell.
 * @module
 */
import { UsageError } from "../core/errors.ts";
import { runLoaderReader } from "../workloads/loader/reader.ts";
import { LOADER_READER_COMMAND } from "../workloads/loader/readers.ts";
import { loaderWorkload } from "../workloads/loader/workload.ts";
import { type WorkloadCommand, workloadCommand } from "./workload_command.ts";

const loaderWorkloadCommand = workloadCommand(loaderWorkload);

/** The hidden reader process: `sciobench loader _reader`, its job on stdin. */
async function runReaderChild(args: string[]): Promise<void> {
  if (args.length > 0) {
    throw new UsageError(`loader ${LOADER_READER_COMMAND}: takes its job on stdin, no arguments`);
  }
  await runLoaderReader();
}

/** The `loader` command: its workload, and the hidden reader process `loader _reader`. */
export const loaderCommand: WorkloadCommand = {
  name: loaderWorkloadCommand.name,
  summary: loaderWorkloadCommand.summary,
  rankAware: loaderWorkloadCommand.rankAware,
  get help(): string {
    return loaderWorkloadCommand.help;
  },
  run: (args) =>
    args[0] === LOADER_READER_COMMAND
      ? runReaderChild(args.slice(1))
      : loaderWorkloadCommand.run(args),
};
