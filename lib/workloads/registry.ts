/**
 * The workloads beside the built-in ones: a workload registered here becomes a command of the CLI
 * with its help, `--dry-run`, every output format and MPI, with no other edit (as a backend
 * registered with lib/backends/registry.ts becomes a `--framing`).
 * @module
 */
import { UsageError } from "../core/errors.ts";
import type { FlagRecord, Workload } from "./workload.ts";

const registered: Workload[] = [];

/** Adds `workload` to the CLI's commands; UsageError when its name is taken. */
export function registerWorkload<V extends FlagRecord>(workload: Workload<V>): void {
  if (registered.some((w) => w.name === workload.name)) {
    throw new UsageError(`a workload named '${workload.name}' is registered already`);
  }
  registered.push(workload as unknown as Workload);
}

/** Every registered workload, in the order registered. */
export function registeredWorkloads(): readonly Workload[] {
  return registered;
}
