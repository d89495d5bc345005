/**
 * A `readers` run under MPI: every rank is one reader, in-process, released by a barrier; rank 0
 * gathers the reports and builds the row.
 * @module
 */
import { dropCache, residency } from "../../io/cache.ts";
import { removeStore, storeBytes } from "../../io/store.ts";
import { fencedPhase } from "../../mpi/phase.ts";
import { world } from "../../mpi/world.ts";
import type { Row } from "../../report/row.ts";
import { clockGettime } from "../../sys/libc.ts";
import {
  attachAudit,
  beginPhase,
  endPhase,
  finishAudit,
  type RowAudit,
  startAudit,
} from "../../sys/audit.ts";
import { prepareReader, type ReaderReport, writePackmanFile } from "./packman.ts";
import {
  type CacheState,
  type ReadersMode,
  type ReadersOptions,
  readersRow,
  warmUp,
} from "./options.ts";

/** What one rank of a ranked run sends rank 0: its report, times since the release, its trail. */
interface RankReport {
  readonly report: ReaderReport;
  /** Seconds from the releasing barrier to this rank's end and to its start. */
  readonly sinceReleaseS: number;
  readonly startS: number;
  /** Fraction of its file cached when it started. */
  readonly resident: number;
  /** The file it read. */
  readonly path: string;
  /** Its trail: the write (when it wrote), the untimed stretch, its read. */
  readonly audit: RowAudit;
}

/** A ranked run's aggregate row and, on rank 0 with `perRank`, one row per rank. */
interface RankedRun {
  readonly row: Omit<Row, "slope_s_per_proc"> & { wall_s: number };
  readonly ranks: Row[];
}

/**
 * One (cache, mode) run under MPI: every rank is one reader, in-process, of the shared file
 * (rank 0 writes it) or of its own; a barrier releases them. The wall time runs from the barrier
 * to the last rank's end (each rank's time since its barrier, the largest); rank 0 gets every
 * report and trail (MPI_Gatherv) and builds the row, whose trail lists each rank's read as one
 * process (other ranks return a row of their own report only), and with `perRank` one row per
 * rank with its host and its own trail.
 *
 * Just over 100 lines: the ranked run's fenced phases (write, drop, prepare, read, remove) in the
 * order they run, then the gathering of the ranks' reports at rank 0.
 */
export async function runOneRanked(
  o: ReadersOptions,
  dir: string,
  cache: CacheState,
  mode: ReadersMode,
): Promise<RankedRun> {
  const w = world();
  const fileIndex = mode === "shared" ? 0 : w.rank;
  const path = `${dir}/${mode}-${fileIndex}.${o.backend.name}`;
  const writer = mode === "separate" || w.rank === 0;
  o.progress.update(0, "write");
  startAudit();
  await fencedPhase("write", () => {
    beginPhase("write", false);
    if (writer) writePackmanFile(o.backend, path, { ...o, fileIndex });
    endPhase();
  });
  // cold: the writer drops its file; warm: every rank reads it once (its node's cache); with
  // O_DIRECT neither
  const dropped = await fencedPhase("drop", () => {
    if (o.transfer?.direct) return undefined;
    if (cache === "warm") warmUp(path);
    return cache === "cold" && writer ? dropCache(path).residentAfter : undefined;
  });
  const { resident, reader, fileBytes } = await fencedPhase("prepare", () => {
    // (after every drop: a shared file's readers see what its writer's drop left)
    const resident = dropped ?? residency(path);
    const reader = prepareReader(path, {
      framing: o.backend.name,
      records: o.records,
      length: o.length,
      seed: o.seed,
      fileIndex,
      endian: o.endian,
      backendOptions: o.readerOptions ?? o.backendOptions,
      transfer: o.transfer,
      queue: o.queue,
    });
    return { resident, reader, fileBytes: storeBytes(path) };
  });
  // the reader records its own trail of the read
  const before = finishAudit();
  o.progress.update(0.5, "read");
  const timed = await fencedPhase("read", () => {
    const releasedNs = clockGettime();
    const report = reader.run();
    return {
      report,
      sinceReleaseS: (report.t1Ns - releasedNs) / 1e9,
      startS: (report.t0Ns - releasedNs) / 1e9,
    };
  });
  // every rank has read before the files go, and no rank is still removing when rank 0 removes
  // the scratch directory
  await fencedPhase("remove", () => {
    if (writer) removeStore(path);
  });
  const audit: RowAudit = {
    pid: Deno.pid,
    phases: [...before?.phases ?? [], ...timed.report.audit ? [timed.report.audit] : []],
  };
  const mine: RankReport = { ...timed, resident, path, audit };
  const texts = w.gatherStrings(JSON.stringify(mine));
  const all = w.rank === 0 ? texts.map((t) => JSON.parse(t) as RankReport) : [mine];
  const row = readersRow(
    o,
    cache,
    mode,
    fileBytes,
    Math.max(...all.map((a) => a.resident)),
    all.map((a) => a.report),
    Math.max(...all.map((a) => a.sinceReleaseS)),
    Math.max(...all.map((a) => a.startS)),
  );
  if (w.rank !== 0) return { row, ranks: [] };
  const perRank = !o.perRank ? [] : all.map((a, rank) =>
    attachAudit({
      // (each reader's warnings were noted with the aggregate row)
      ...readersRow(
        o,
        cache,
        mode,
        fileBytes,
        a.resident,
        [{ ...a.report, warnings: [] }],
        a.sinceReleaseS,
        a.startS,
      ),
      procs: w.size,
      ranks: w.size,
      rank,
      host: w.hosts[rank] ?? "",
      read_path: a.path,
    }, a.audit)
  );
  const paths = new Set(all.map((a) => a.path));
  return {
    row: attachAudit({
      ...row,
      ranks: w.size,
      rank: "all",
      host: hostsLabel(w.hosts),
      read_path: paths.size === 1 ? path : "",
    }, ranksAudit(all, w.hosts)),
    ranks: perRank,
  };
}

/** `N nodes` for the aggregate row's host column. */
function hostsLabel(hosts: readonly string[]): string {
  const n = new Set(hosts).size;
  return `${n} node${n === 1 ? "" : "s"}`;
}

/**
 * The aggregate row's trail: one read phase, from the first rank's start to the last rank's end,
 * with each rank's read as one process (rank and host in the process entry).
 */
function ranksAudit(all: readonly RankReport[], hosts: readonly string[]): RowAudit | undefined {
  startAudit();
  const phase = beginPhase("read");
  endPhase();
  const audit = finishAudit();
  if (phase === undefined || audit === undefined) return undefined;
  phase.startNs = Math.min(...all.map((a) => a.report.t0Ns));
  phase.endNs = Math.max(...all.map((a) => a.report.t1Ns));
  for (const [rank, a] of all.entries()) {
    const read = a.report.audit;
    if (read) phase.processes.push({ pid: a.audit.pid, rank, host: hosts[rank], phase: read });
  }
  return { pid: audit.pid, phases: [phase] };
}
