/**
 * What a workload command is about to do, before it does it: `--dry-run` prints the resolved plan
 * (every parameter after defaults, the backends that run and those skipped with the reason, the
 * bytes to write, the files to create, warnings about cells known to exceed a library's limit)
 * and exits without writing data, once the run's own checks passed (the same calls, made first:
 * `--dir`, free space, `--bs`/`--direct`); a real run prints the plan's one-line summary as its
 * first stderr line.
 * @module
 */
import { escapeControls, UsageError } from "../core/errors.ts";
import { warn } from "../core/diagnostics.ts";
import { world } from "../mpi/world.ts";
import { rowFormats } from "../report/formats/mod.ts";
import { formatSize } from "../report/units.ts";
import type { RunPlan, SkippedBackend } from "../workloads/workload.ts";
import { estimateFromStore, type StoredEstimate } from "../report/store.ts";
import { fileSystemMeta } from "./meta.ts";

/**
 * The one-line summary a run prints first on stderr: bytes and files, and with `estimate` how
 * long it should take. No constant rate makes that estimate (rates vary with the disk and the
 * load many times over): only a stored run of the same command on the same host and directory,
 * scaled by the bytes; the progress line gives the ETA from what the run measures.
 */
export function planSummary(plan: RunPlan, estimate?: StoredEstimate): string {
  const files = plan.files.reduce((a, f) => a + f.count, 0);
  const expected = estimate === undefined
    ? ""
    : `; about ${
      formatSeconds(estimate.seconds)
    } (stored run ${estimate.id} here, scaled by bytes)`;
  return `plan: ${plan.command} will write ${formatSize(plan.writeBytes)} in ${files} scratch file${
    files === 1 ? "" : "s"
  } and read ${formatSize(plan.readBytes)}${expected}`;
}

/** The host name the JSON meta records (`hostname`), "" where it cannot be read. */
function hostName(): string {
  try {
    return Deno.hostname();
  } catch {
    return "";
  }
}

/** Seconds as people read a duration: 0.4 s, 12 s, 3 min 20 s, 2 h 5 min. */
function formatSeconds(s: number): string {
  if (s < 10) return `${s.toPrecision(2).replace(/\.0$/, "")} s`;
  if (s < 120) return `${Math.round(s)} s`;
  if (s < 7200) return `${Math.floor(s / 60)} min ${Math.round(s % 60)} s`;
  return `${Math.floor(s / 3600)} h ${Math.round((s % 3600) / 60)} min`;
}

/** The plan as a JSON-ready object (snake_case keys, as the rows use). */
export function planJson(plan: RunPlan): Record<string, unknown> {
  return {
    command: plan.command,
    parameters: plan.parameters,
    backends: plan.backends,
    skipped: plan.skipped,
    files: plan.files,
    write_bytes: plan.writeBytes,
    read_bytes: plan.readBytes,
    warnings: plan.warnings,
  };
}

/** The plan as text, one fact per line. */
export function planText(plan: RunPlan): string {
  const lines = [`sciobench ${plan.command}: plan (nothing written)`, "parameters:"];
  for (const [k, v] of Object.entries(plan.parameters)) {
    const text = Array.isArray(v)
      ? v.join(", ")
      : typeof v === "object" && v !== null
      ? Object.entries(v).map(([name, x]) => `${name}=${String(x)}`).join(", ")
      : String(v);
    lines.push(`  ${k}: ${text}`);
  }
  lines.push("runs:");
  for (const b of plan.backends) lines.push(`  ${b.name}${b.endian ? ` (${b.endian})` : ""}`);
  if (plan.skipped.length > 0) {
    lines.push("skipped:");
    for (const s of plan.skipped) lines.push(`  ${s.name}: ${s.reason}`);
  }
  lines.push("files (scratch directory, removed at the end):");
  for (const f of plan.files) lines.push(`  ${f.name} x ${f.count}, ${formatSize(f.bytes)} each`);
  lines.push(`write: ${formatSize(plan.writeBytes)} (${plan.writeBytes} bytes)`);
  lines.push(`read: ${formatSize(plan.readBytes)} (${plan.readBytes} bytes)`);
  for (const w of plan.warnings) lines.push(`warning: ${w}`);
  // paths and library messages among them: each line stays one line
  return lines.map(escapeControls).join("\n") + "\n";
}

/**
 * Prints the plan to stdout in `format`'s notation where the format has one (lib/report/formats:
 * `json` prints one document), else as text.
 */
export function printPlan(plan: RunPlan, format: string): void {
  const print = rowFormats().find((f) => f.name === format)?.plan;
  const text = print ? print(planJson(plan)) : planText(plan);
  const bytes = new TextEncoder().encode(text);
  let done = 0;
  while (done < bytes.length) done += Deno.stdout.writeSync(bytes.subarray(done));
}

/**
 * With `--dry-run`, prints the plan (text, or JSON with `--format json`: {@link printPlan}; under
 * MPI on rank 0) and returns true.
 * Otherwise refuses a plan with no backend left to run (notes the skipped ones; UsageError) and
 * returns false.
 */
export function dryRun(plan: RunPlan, values: { "dry-run": boolean; format?: string }): boolean {
  if (values["dry-run"]) {
    // under MPI every rank plans alike: the plan is printed once
    if (world().rank === 0) printPlan(plan, values.format ?? "table");
    return true;
  }
  if (plan.backends.length === 0) {
    noteSkipped(plan.skipped);
    throw new UsageError("no usable backend left to measure");
  }
  return false;
}

/**
 * Prints a run's first stderr lines (rank 0 only): the plan's one-line summary (with an estimate
 * from the results store `store` where it holds a run of the same command here, see
 * {@link planSummary}; `dir` is the scratch parent), the backends skipped, then `notes` and the
 * plan's warnings.
 */
export function announcePlan(
  plan: RunPlan,
  notes: readonly string[] = [],
  store?: string,
  dir?: string,
): void {
  const estimate = store === undefined || world().rank !== 0
    ? undefined
    : estimateFromStore(store, {
      command: plan.command,
      host: hostName(),
      absoluteDir: String(fileSystemMeta(dir).absolute_dir ?? ""),
      bytes: plan.writeBytes + plan.readBytes,
    });
  warn(planSummary(plan, estimate));
  noteSkipped(plan.skipped);
  for (const n of notes) warn(n);
  for (const w of plan.warnings) warn(`warning: ${w}`);
}

/** Notes every skipped backend on stderr, one line each. */
export function noteSkipped(skipped: readonly SkippedBackend[]): void {
  for (const s of skipped) warn(`skipping: ${s.reason}`);
}
