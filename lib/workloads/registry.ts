/**
 * The workloads: the built-in ones, and those beside them. A workload registered here becomes a
 * command of the CLI with its help, `--dry-run`, every output format, its chart (`--plot`,
 * `sciobench plot`) and MPI, with no other edit (as a backend registered with
 * lib/backends/registry.ts becomes a `--framing`).
 * @module
 */
import { UsageError } from "../core/errors.ts";
import type { FlagRecord, Workload } from "./workload.ts";
import { tableWorkload } from "./table/workload.ts";
import { scalingWorkload } from "./scaling/workload.ts";
import { recordsWorkload } from "./records/workload.ts";
import { readersWorkload } from "./readers/workload.ts";
import { writeWorkload } from "./write/workload.ts";
import { readWorkload } from "./read/workload.ts";
import { loaderWorkload } from "./loader/workload.ts";
import { infoWorkload } from "./info/workload.ts";

/** The built-in workloads, in the order `sciobench --help` lists their commands. */
export const BUILTIN_WORKLOADS: readonly Workload[] = [
  tableWorkload,
  scalingWorkload,
  recordsWorkload,
  readersWorkload,
  writeWorkload,
  readWorkload,
  loaderWorkload,
  infoWorkload,
] as unknown as readonly Workload[];

const registered: Workload[] = [];

/** Adds `workload` to the CLI's commands; UsageError when its name is taken. */
export function registerWorkload<V extends FlagRecord>(workload: Workload<V>): void {
  if (registered.some((w) => w.name === workload.name)) {
    throw new UsageError(`a workload named '${workload.name}' is registered already`);
  }
  registered.push(workload as unknown as Workload);
}

/** Every registered workload, in the order registered (the built-in ones are not among them). */
export function registeredWorkloads(): readonly Workload[] {
  return registered;
}

/** Every workload: the built-in ones, then the registered ones. */
export function allWorkloads(): readonly Workload[] {
  return [...BUILTIN_WORKLOADS, ...registered];
}
