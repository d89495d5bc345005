/**
 * `sciobench readers`: the readers workload (lib/workloads/readers/), and its hidden reader
 * process `sciobench readers _reader FILE ...`: this same program run again, never a shell.
 * @module
 */
import { UsageError } from "../core/errors.ts";
import { parseCount, parseSeed } from "../core/values.ts";
import { parseSize } from "../core/sizes.ts";
import { usableBackend } from "../backends/registry.ts";
import { DEFAULT_DIRECT_BS } from "../io/transfer.ts";
import { prepareReader } from "../workloads/readers/mod.ts";
import { readersWorkload } from "../workloads/readers/workload.ts";
import { backendOptionArgs, parseEndian, parseQueue } from "../workloads/settings.ts";
import { parseFlags } from "./parse_flags.ts";
import { type WorkloadCommand, workloadCommand } from "./workload_command.ts";

/** The hidden reader process: `sciobench readers _reader FILE --framing F ...`. */
async function runReaderChild(args: string[]): Promise<void> {
  const { values, positionals } = parseFlags("_reader", args, true);
  if (positionals.length !== 1) throw new UsageError("readers _reader: give exactly one FILE");
  const backend = usableBackend(values.framing);
  const reader = prepareReader(positionals[0]!, {
    framing: backend.name,
    records: parseCount(values.records, "--records"),
    length: parseCount(values.length, "--length"),
    seed: parseSeed(values.seed),
    fileIndex: parseSeed(values["file-index"], "--file-index"),
    endian: values.endian === undefined ? undefined : parseEndian(values.endian),
    backendOptions: backendOptionArgs(backend, values.option, "readers"),
    transfer: values.bs === undefined && !values.direct ? undefined : {
      bs: values.bs === undefined ? DEFAULT_DIRECT_BS : parseSize(values.bs, "--bs"),
      direct: values.direct,
      readAhead: values.bs !== undefined,
    },
    queue: parseQueue(values, [backend]),
  });
  if (!values["no-wait"]) {
    console.log("ready");
    await Deno.stdin.read(new Uint8Array(1)); // one byte (or end of input) releases the read
  }
  console.log(JSON.stringify(reader.run()));
}

const readersWorkloadCommand = workloadCommand(readersWorkload);

/** The `readers` command: its workload, and the hidden reader process `readers _reader`. */
export const readersCommand: WorkloadCommand = {
  name: readersWorkloadCommand.name,
  summary: readersWorkloadCommand.summary,
  rankAware: readersWorkloadCommand.rankAware,
  get help(): string {
    return readersWorkloadCommand.help;
  },
  run: (args) =>
    args[0] === "_reader" ? runReaderChild(args.slice(1)) : readersWorkloadCommand.run(args),
};
