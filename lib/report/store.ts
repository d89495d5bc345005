/**
 * The results store: a plain directory of JSON lines files, one per run (`RUN_ID.jsonl`: the
 * meta with its `run_id`, the columns, then every row), written at the run's end the way `--out`
 * is (a temporary file beside it, fsynced, then linked under its name exclusively), so an
 * interrupted or failed run leaves nothing and two runs at once never write the same file.
 * `sciobench runs` lists it; `sciobench compare` takes its run ids, `latest` and `latest~K`.
 * @module
 */
import { IoError, UsageError } from "../core/errors.ts";
import { commitTemp, removeQuietly, removeStaleTemps, tempPathFor } from "../io/atomic.ts";
import { parseResults, type Results } from "./plot.ts";
import { jsonText } from "./formats/json.ts";
import type { Row } from "./row.ts";

/** The environment variable naming the store when `--store` is not given. */
export const STORE_ENV = "SCIOBENCH_STORE";

/** The store directory: `flag`, else $SCIOBENCH_STORE, else none. */
export function storeDir(flag: string | undefined): string | undefined {
  if (flag !== undefined && flag !== "") return flag;
  let env: string | undefined;
  try {
    env = Deno.env.get(STORE_ENV);
  } catch {
    // no permission to read the environment: no store
  }
  return env === undefined || env === "" ? undefined : env;
}

/**
 * A new run id: the UTC time to the millisecond, then 8 random hex digits (runs sort by time;
 * two runs started in the same millisecond still differ).
 */
export function newRunId(now = new Date()): string {
  const stamp = now.toISOString().replace(/[-:]/g, "").replace(".", "");
  const random = crypto.getRandomValues(new Uint8Array(4));
  return `${stamp}-${[...random].map((b) => b.toString(16).padStart(2, "0")).join("")}`;
}

/**
 * Makes sure the store `dir` is a directory before a run measures: created (with its parents)
 * when missing, as the user named it; UsageError when it is something else or cannot be made.
 */
export function checkStore(dir: string): void {
  let info: Deno.FileInfo;
  try {
    info = Deno.statSync(dir);
  } catch {
    try {
      Deno.mkdirSync(dir, { recursive: true });
      return;
    } catch (e) {
      throw new UsageError(
        `--store ${dir}: cannot create it (${e instanceof Error ? e.message : String(e)})`,
      );
    }
  }
  if (!info.isDirectory) throw new UsageError(`--store ${dir}: not a directory`);
}

/**
 * Writes one run to the store `dir` as `RUN_ID.jsonl` (meta with `run_id`, columns, rows) and
 * returns the id. Nothing appears under the name until the whole file is written and fsynced.
 */
export function storeRun(
  dir: string,
  meta: Readonly<Record<string, unknown>>,
  columns: readonly string[],
  rows: readonly Row[],
): string {
  const id = newRunId();
  const path = `${dir.replace(/\/+$/, "") || "/"}/${id}.jsonl`;
  const temp = tempPathFor(path);
  removeStaleTemps(path);
  const text =
    [jsonText({ meta: { ...meta, run_id: id }, columns }), ...rows.map((r) => jsonText(r))]
      .join("\n") + "\n";
  let file: Deno.FsFile | undefined;
  try {
    file = Deno.openSync(temp, { write: true, createNew: true });
    const bytes = new TextEncoder().encode(text);
    for (let done = 0; done < bytes.length;) done += file.writeSync(bytes.subarray(done));
    file.syncSync();
    file.close();
    file = undefined;
    commitTemp(temp, { path, exists: false });
  } catch (e) {
    file?.close();
    removeQuietly(temp);
    if (e instanceof IoError) throw e;
    throw new IoError(`cannot write to the store ${dir}: ${e instanceof Error ? e.message : e}`);
  }
  return id;
}

/** One run of the store, as `sciobench runs` lists it. */
export interface StoredRun {
  /** The run id (the file's name without `.jsonl`). */
  readonly id: string;
  /** The file. */
  readonly path: string;
  /** When it started (ISO 8601, from the meta). */
  readonly date: string;
  /** The command that ran. */
  readonly command: string;
  /** The host it ran on. */
  readonly host: string;
  /** The type of the `--dir` file system. */
  readonly fs: string;
  /** The sciobench version. */
  readonly version: string;
  /** One line: rows, cells failed, backends. */
  readonly summary: string;
  /** The `--dir` made absolute (meta `file_system.absolute_dir`), or "" when not recorded. */
  readonly absoluteDir: string;
  /** The run's duration (meta `duration_s`), seconds, or null when not recorded. */
  readonly seconds: number | null;
  /** Bytes the run planned to write and read (meta `planned_bytes`), or null when not recorded. */
  readonly plannedBytes: number | null;
}

/** The one-line summary of a run's rows: run rows, failed rows, and the backends measured. */
function summaryOf(rows: readonly Row[]): string {
  const runs = rows.filter((r) => r.stat === undefined || r.stat === "run" || r.stat === "");
  const failed = runs.filter((r) => r.error).length;
  const backends = [...new Set(runs.map((r) => r.framing).filter((f) => f !== undefined))];
  return [
    `${runs.length} rows`,
    ...(failed > 0 ? [`${failed} failed`] : []),
    ...(backends.length > 0 ? [backends.join(", ")] : []),
  ].join("; ");
}

function positive(v: unknown): number | null {
  return typeof v === "number" && Number.isFinite(v) && v > 0 ? v : null;
}

function text(v: unknown): string {
  return v === undefined || v === null ? "" : String(v);
}

/** The run of the store file `path` (id `id`) read back, or undefined when it is not results. */
function readRun(path: string, id: string): (StoredRun & { results: Results }) | undefined {
  try {
    const results = parseResults(Deno.readTextFileSync(path), path);
    const meta = results.meta;
    const fs = (meta.file_system ?? {}) as Record<string, unknown>;
    return {
      id,
      path,
      date: text(meta.date),
      command: text(meta.command),
      host: text(meta.hostname),
      fs: text(fs.type),
      version: text(meta.version),
      summary: summaryOf(results.rows),
      absoluteDir: text(fs.absolute_dir),
      seconds: positive(meta.duration_s),
      plannedBytes: positive(meta.planned_bytes),
      results,
    };
  } catch {
    return undefined;
  }
}

/**
 * Every run of the store `dir`, oldest first (by date, then id). UsageError when it does not
 * exist, IoError when it cannot be read.
 */
export function listRuns(dir: string): StoredRun[] {
  let entries: Deno.DirEntry[];
  try {
    entries = [...Deno.readDirSync(dir)];
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) {
      throw new UsageError(`--store ${dir}: no such directory (no run was stored there)`);
    }
    throw new IoError(`cannot read the store ${dir}: ${e instanceof Error ? e.message : e}`);
  }
  const runs: StoredRun[] = [];
  for (const e of entries) {
    if (!e.isFile || e.name.startsWith(".") || !e.name.endsWith(".jsonl")) continue;
    const run = readRun(`${dir}/${e.name}`, e.name.slice(0, -".jsonl".length));
    if (run !== undefined) {
      const { results: _, ...listed } = run;
      runs.push(listed);
    }
  }
  return runs.sort((a, b) =>
    a.date < b.date ? -1 : a.date > b.date ? 1 : a.id < b.id ? -1 : a.id > b.id ? 1 : 0
  );
}

/**
 * The store file a run reference names: a run id as `runs` lists it (or a unique prefix of a
 * dated one), `latest` (the newest run) or `latest~K` (the K-th before it); undefined when `ref`
 * is none of these. UsageError when the form is right but the store holds no such run.
 */
export function resolveRun(dir: string, ref: string): string | undefined {
  const latest = /^latest(?:~(\d+))?$/.exec(ref);
  const runs = listRuns(dir);
  const exact = runs.find((r) => r.id === ref);
  if (exact !== undefined) return exact.path;
  if (latest === null && !/^\d{8}T\d{9}Z/.test(ref)) return undefined;
  if (latest !== null) {
    const back = Number(latest[1] ?? 0);
    const run = runs[runs.length - 1 - back];
    if (run === undefined) {
      throw new UsageError(`${ref}: the store ${dir} holds ${runs.length} runs`);
    }
    return run.path;
  }
  const found = runs.filter((r) => r.id.startsWith(ref));
  if (found.length !== 1) {
    throw new UsageError(
      `${ref}: ${found.length === 0 ? "no run" : `${found.length} runs`} of that id in ${dir}`,
    );
  }
  return found[0]!.path;
}

/** A run's expected duration, from the store. */
export interface StoredEstimate {
  /** Seconds expected. */
  readonly seconds: number;
  /** The stored run it is scaled from. */
  readonly id: string;
}

/**
 * How long a run of `command` on `host` in `absoluteDir` that plans `bytes` (written plus read)
 * should take: the newest run of the store `dir` with the same command, host and directory,
 * its duration scaled by the bytes; undefined when the store holds none (or cannot be read: an
 * estimate never stops a run).
 */
export function estimateFromStore(
  dir: string,
  run: { command: string; host: string; absoluteDir: string; bytes: number },
): StoredEstimate | undefined {
  let runs: StoredRun[];
  try {
    runs = listRuns(dir);
  } catch {
    return undefined;
  }
  const last = runs.filter((r) =>
    r.command === run.command && r.host === run.host && r.absoluteDir === run.absoluteDir &&
    r.seconds !== null && r.plannedBytes !== null
  ).at(-1);
  if (last === undefined) return undefined;
  return { seconds: last.seconds! * run.bytes / last.plannedBytes!, id: last.id };
}
