/**
 * The columns every workload row carries about its system calls (`--bs`, `--direct`), the
 * page-cache preparation that `--direct` makes unnecessary, and whether each cold read phase can
 * be trusted (`PHASE_cold_ok`, `cold_ok`, `cold_why`, with the one stderr line that says why not
 * and what to use instead, and the human table's mark of the numbers not from the device).
 * @module
 */
import {
  type CacheDrop,
  type ColdEvidence,
  type ColdReason,
  coldVerdict,
  dropCache,
  readThrough,
  residency,
} from "../io/cache.ts";
import type { Transfer } from "../io/transfer.ts";
import type { QueueSpec } from "../backends/backend.ts";
import { aioUnavailable } from "../sys/libc.ts";
import { traceNote } from "../sys/audit.ts";
import { settleHeap } from "../core/heap.ts";
import { world } from "../mpi/world.ts";
import type { ColumnDoc, HumanMark } from "../report/human.ts";
import { columnDocs, TRANSFER_COLUMN_NAMES } from "./columns.ts";
import type { Row } from "../report/row.ts";

/** `bs_bytes`, `direct` and `huge_pages`, with units (from the schema). */
export const TRANSFER_COLUMN_DOCS: readonly ColumnDoc[] = columnDocs(TRANSFER_COLUMN_NAMES);

/**
 * How a read phase's frame reads go beside the verification of the frame before: `aio` (O_DIRECT
 * files: frame k + 1's pread submitted through Linux native AIO while frame k is verified), `thread`
 * (buffered files with --overlap: that pread on another thread), `none` (read, verify, read on).
 */
export type ReadOverlap = "aio" | "thread" | "none";

/**
 * The {@link ReadOverlap} of native framings' verified reads with `transfer`, given `--overlap`
 * (true), `--no-overlap` (false) or neither (undefined): with O_DIRECT overlapped through native
 * AIO unless `--no-overlap`, else only with `--overlap` (another thread). Where AIO is unavailable
 * (io_setup refused) O_DIRECT reads are serial, and `note` is the one line that says so.
 */
export function readOverlap(
  transfer: Transfer | undefined,
  overlap: boolean | undefined,
): { readonly mode: ReadOverlap; readonly note?: string } {
  if (overlap === false) return { mode: "none" };
  if (!transfer?.direct) return { mode: overlap ? "thread" : "none" };
  const why = aioUnavailable();
  // mutant: direct-aio-default
  if (why === undefined) return { mode: "aio" };
  return {
    mode: "none",
    note: `--direct: Linux native AIO is unavailable here (${why}); each frame is read, then ` +
      `verified, then the next read (no overlap)`,
  };
}

/** The values of {@link TRANSFER_COLUMN_DOCS} for a run with `transfer`. */
export function transferColumns(
  transfer: Transfer | undefined,
): { bs_bytes: number; direct: boolean; huge_pages: boolean } {
  // JSON booleans; CSV writes them as true and false
  const direct = transfer?.direct ?? false;
  return {
    bs_bytes: transfer?.bs ?? 0,
    direct,
    huge_pages: direct && (transfer?.hugePages ?? true),
  };
}

/**
 * The values of the `engine` and `iodepth` columns for reads with `queue` (`--iodepth`,
 * `--engine`): psync at depth 1 without them.
 */
export function queueColumns(
  queue: QueueSpec | undefined,
): { engine: string; iodepth: number } {
  return { engine: queue?.engine ?? "psync", iodepth: queue?.depth ?? 1 };
}

/**
 * The page-cache state a read phase starts from: `direct` when the reads bypass the cache
 * (O_DIRECT, no drop needed or made), else the `cache` asked (default cold).
 */
export function cacheState(
  transfer: Transfer | undefined,
  cache: "cold" | "warm" | undefined,
): "cold" | "warm" | "direct" {
  return transfer?.direct ? "direct" : cache ?? "cold";
}

/**
 * Drops `path` from the page cache (cold), reads it through once (warm), or (direct: the reads
 * bypass the cache) only measures the residency; returns it.
 */
export function prepareCache(path: string, cache: "cold" | "warm" | "direct"): CacheDrop {
  // mutant: table-cold-drop
  if (cache === "cold") return dropCache(path);
  if (cache === "direct") return { seconds: 0, residentAfter: residency(path) };
  const t0 = performance.now();
  readThrough(path);
  return { seconds: (performance.now() - t0) / 1000, residentAfter: residency(path) };
}

/** The evidence of a row's cold read phases, by phase name (`open`, `read`, `random`). */
export type PhasesEvidence = Readonly<Record<string, ColdEvidence>>;

/**
 * What a `table` or `read` row shows about each of its cold read phases (`PHASE_cold_ok`): the
 * residency after the drop and the file system (`fsType`, statfs f_type) for all three, and for
 * the read and the random phase the bytes each read (`random_bytes`, or in `table`, whose random
 * phase reads the same frames, `read_bytes`) against those it fetched from the device; the open's
 * reads are not counted (its device bytes are not judged).
 */
export function coldEvidence(row: Row, fsType: number): PhasesEvidence {
  const residentAfterDrop = Number(row.resident_after_drop);
  const phase = (readBytes: number, deviceReadBytes: number) => ({
    fsType,
    residentAfterDrop,
    readBytes,
    deviceReadBytes,
  });
  return {
    open: phase(0, Number(row.open_dev_bytes)),
    read: phase(Number(row.read_bytes), Number(row.read_dev_bytes)),
    random: phase(Number(row.random_bytes ?? row.read_bytes), Number(row.random_dev_bytes)),
  };
}

/**
 * Sets a row's cold verdicts for reads measured with page cache state `cache`: each phase of
 * `phases` judged on its own ({@link coldVerdict}) into `PHASE_cold_ok` (when `perPhase`: rows of
 * one phase, as records' and readers', have `cold_ok` alone), `cold_ok` their AND, and
 * `cold_why` the failing phases with their reasons (`random: device bytes`); empty when warm or
 * direct (nothing to trust). Returns why cold reads cannot be trusted in one line, or null.
 */
export function judgeCold(
  row: Row,
  cache: string,
  phases: PhasesEvidence,
  perPhase = true,
): string | null {
  const names = Object.keys(phases);
  if (cache !== "cold") {
    if (perPhase) { for (const p of names) row[`${p}_cold_ok`] = ""; }
    row.cold_ok = "";
    row.cold_why = "";
    return null;
  }
  const why: string[] = [];
  let text: string | null = null;
  for (const p of names) {
    const verdict = coldVerdict(phases[p]!);
    if (perPhase) row[`${p}_cold_ok`] = verdict === null;
    if (verdict === null) continue;
    why.push(`${p}: ${verdict.reason}`);
    text ??= perPhase ? `the ${p} phase: ${verdict.text}` : verdict.text;
  }
  row.cold_ok = why.length === 0;
  row.cold_why = why.join("; ");
  return text;
}

/** What each {@link ColdReason} means, for the human table's footnote. */
const REASON_TEXT: Readonly<Record<ColdReason, string>> = {
  "fs type": "the file system keeps the file where a cache drop cannot reach (tmpfs, NFS, ...)",
  resident: "the cache drop left the file in the page cache",
  "device bytes": "the phase fetched under half its bytes from the device (a cache served them)",
};

/**
 * The human table's mark of a row whose numbers are not from the device (`cold_ok` false): the
 * rate and time columns of each failing phase (`PHASE_MiBps`, `PHASE_ms`, `PHASE_s`; a row of
 * one phase: its MiB/s columns) and its `cache`, with a footnote naming the phases and why.
 */
export function coldMark(row: Row): HumanMark | undefined {
  if (row.cold_ok !== false) return undefined;
  const why = String(row.cold_why ?? "");
  const failed = why.split("; ").map((w) => w.split(": ")[0]!).filter((p) => p !== "");
  const perPhase = failed.some((p) => `${p}_cold_ok` in row);
  const columns = perPhase
    ? failed.flatMap((p) => [`${p}_MiBps`, `${p}_ms`, `${p}_s`])
    : ["MiBps", "aggregate_MiBps", "wall_s"];
  const byReason = new Map<ColdReason, string[]>();
  for (const w of why.split("; ")) {
    const [phase = "", reason = ""] = w.split(": ");
    if (!Object.hasOwn(REASON_TEXT, reason)) continue;
    const r = reason as ColdReason;
    byReason.set(r, [...(byReason.get(r) ?? []), phase]);
  }
  const because = [...byReason].map(([r, ps]) => `${ps.join(", ")}: ${REASON_TEXT[r]}`);
  return {
    columns: [...columns, "cache"],
    note: `not from the device (cold_ok false): ${because.join("; ") || "cold_why unknown"}`,
  };
}

/**
 * The one stderr line of a run whose cold reads cannot be trusted (files in `dir`), with what to
 * do instead: --direct, or under MPI --reorder so each rank reads a file another node wrote.
 */
export function coldWarning(dir: string, why: string): string {
  const instead = world().size > 1
    ? "use --direct, or --reorder K so each rank reads a file another node wrote"
    : "use --direct (O_DIRECT reads bypass the page cache)";
  return `cold reads in ${dir} cannot be trusted: ${why}; cold_ok=false in these rows; ${instead}`;
}

/**
 * Judges the cold reads of a run row by row ({@link judgeCold}) and says once, on rank 0, why
 * they cannot be trusted ({@link coldWarning}, files in `dir`) through `note`.
 */
export class ColdReads {
  readonly #dir: string;
  readonly #note: (text: string) => void;
  #warned = false;

  constructor(dir: string, note: (text: string) => void) {
    this.#dir = dir;
    this.#note = note;
  }

  /**
   * Sets `row`'s cold verdicts from each phase's evidence (read with page cache state `cache`;
   * {@link judgeCold}).
   */
  judge(row: Row, cache: string, phases: PhasesEvidence, perPhase = true): void {
    const why = judgeCold(row, cache, phases, perPhase);
    if (why === null || this.#warned || world().rank !== 0) return;
    this.#warned = true;
    this.#note(coldWarning(this.#dir, why));
  }
}

/**
 * Brings V8's first major collection forward into the untimed steps before a workload's first
 * timed phase ({@link settleHeap}), and says in the phase trace whether one ran
 * (`heap settled: collected`).
 */
export async function settleHeapUntimed(): Promise<void> {
  traceNote(`heap settled: ${(await settleHeap()).collected ? "collected" : "not collected"}`);
}
