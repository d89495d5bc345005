/**
 * The Packman workload (shared/seeds/001_*.txt, 1990): 1..7 simultaneous reader processes of
 * a file of 10 records of 130000 doubles, all reading one shared file or each its own, every
 * reader checking `a(130000) == i` for record i. Record i holds a seeded pattern with i in its
 * last element.
 *
 * The readers are separate processes started by the caller's {@link ReaderLauncher} (the CLI
 * re-runs its own program). Each reader loads, prints `ready`, waits for one byte on stdin,
 * then reads and checks every record and prints one JSON line ({@link ReaderReport}). All are
 * released together, and the wall time of a run is measured from the first reader's start to
 * the last reader's end on CLOCK_MONOTONIC, which all processes share: program start-up is not
 * part of it. Under MPI the ranks are the readers instead (each reads in-process), released by
 * a barrier.
 * @module
 */
import { UsageError } from "../../core/errors.ts";
import { dropCache, residency } from "../../io/cache.ts";
import { removeStore, storeBytes } from "../../io/store.ts";
import { ColdReads } from "../transfer.ts";
import { withScratchDir } from "../../io/scratch.ts";
import { rankScratchShare } from "../../mpi/phase.ts";
import { world } from "../../mpi/world.ts";
import type { Row } from "../../report/row.ts";
import { statfs } from "../../sys/libc.ts";
import { attachAudit, audited, auditOf, beginPhase, endPhase } from "../../sys/audit.ts";
import { writePackmanFile } from "./packman.ts";
import { runReaderProcesses } from "./children.ts";
import {
  type CacheState,
  type ReadersMode,
  type ReadersOptions,
  readersRow,
  warmUp,
} from "./options.ts";
import { runOneRanked } from "./mpi.ts";
export {
  READERS_AGGREGATE,
  READERS_CHART,
  READERS_COLUMN_DOCS,
  READERS_COLUMNS,
  READERS_HUMAN_COLUMNS,
  READERS_KEYS,
} from "./columns.ts";
export {
  packmanLayout,
  packmanPattern,
  type PreparedReader,
  prepareReader,
  type ReaderReport,
  type ReaderSettings,
  writePackmanFile,
} from "./packman.ts";
export { type ReaderLauncher, runReaderProcesses } from "./children.ts";
export { type CacheState, type ReadersMode, type ReadersOptions } from "./options.ts";

/** One (cache, mode, procs) measurement: write the file(s), set the cache state, run the readers. */
async function runOne(
  o: ReadersOptions,
  dir: string,
  cache: CacheState,
  mode: ReadersMode,
  procs: number,
): Promise<Omit<Row, "slope_s_per_proc"> & { wall_s: number }> {
  // mutant: readers-file-count
  const nFiles = mode === "shared" ? 1 : procs;
  // A user's own file (--file) is read as it is: no write phase, and it is never removed.
  const files = o.file !== undefined
    ? [o.file]
    : Array.from({ length: nFiles }, (_, k) => `${dir}/${mode}-${k}.${o.backend.name}`);
  o.progress.update(0, "write");
  if (o.file === undefined) {
    for (const [k, path] of files.entries()) {
      writePackmanFile(o.backend, path, { ...o, fileIndex: mode === "shared" ? 0 : k });
    }
  }
  const fileBytes = storeBytes(files[0]!);
  let resident = 0;
  for (const path of files) {
    if (o.transfer?.direct) resident = Math.max(resident, residency(path));
    // mutant: readers-cold-drop
    else if (cache === "cold") resident = Math.max(resident, dropCache(path).residentAfter);
    else {
      warmUp(path);
      resident = Math.max(resident, residency(path));
    }
  }
  o.progress.update(0.5, "read");
  // The parent only waits in this phase: the readers record their own trails and report them.
  const phase = beginPhase("read");
  const reports = await runReaderProcesses(
    // mutant: readers-file-of-reader
    Array.from({ length: procs }, (_, k) => files[mode === "shared" ? 0 : k]!),
    o.launch,
    (k) => (mode === "shared" ? 0 : k),
  );
  for (const r of reports) {
    if (r.audit) phase?.processes.push({ pid: r.audit.pid, phase: r.audit });
  }
  endPhase();
  if (o.file === undefined) { for (const path of files) removeStore(path); }
  const t0 = Math.min(...reports.map((r) => r.t0Ns));
  const t1 = Math.max(...reports.map((r) => r.t1Ns));
  const spread = (Math.max(...reports.map((r) => r.t0Ns)) - t0) / 1e9;
  return readersRow(o, cache, mode, fileBytes, resident, reports, (t1 - t0) / 1e9, spread);
}

/**
 * Runs every (cache, mode, procs) combination in that nesting order, hands each row to `onRow`
 * and returns them all. `slope_s_per_proc` is the wall time added per added process since the previous row of
 * the same cache and mode (for the first row: wall time / procs), the seed's "cost per process".
 */
export async function runReaders(
  o: ReadersOptions,
  onRow: (row: Row) => void = () => {},
): Promise<Row[]> {
  const rows: Row[] = [];
  if (o.records < 1 || o.length < 1) {
    throw new UsageError("readers: --records and --length must be positive");
  }
  if (o.transfer && o.reader === "gfortran") {
    throw new UsageError(
      `--${o.transfer.direct ? "direct" : "bs"}: the gfortran reader is a program that makes its ` +
        "own system calls; use --reader sciobench",
    );
  }
  const w = world();
  const ranked = w.size > 1;
  const cold = new ColdReads(o.dir ?? ".", (text) => o.progress.note(text));
  await withScratchDir(o.dir, async (dir) => {
    const fs = statfs(dir);
    const fsType = fs.typeName;
    const count = (o.repeat ?? 1) * o.caches.length * o.modes.length *
      (ranked ? 1 : o.procs.length);
    let index = 0;
    for (let repeat = 1; repeat <= (o.repeat ?? 1); repeat++) {
      for (const cache of o.caches) {
        for (const mode of o.modes) {
          let prev: { procs: number; wall: number } | undefined;
          // under MPI the ranks are the readers: one run with as many readers as ranks
          for (const procs of ranked ? [w.size] : o.procs) {
            const again = (o.repeat ?? 1) > 1 ? ` repeat ${repeat}/${o.repeat}` : "";
            o.progress.begin(`${mode} ${cache} procs=${procs}${again}`, { index: ++index, count });
            const ran = ranked
              ? await runOneRanked(o, dir, cache, mode)
              : { row: await audited(() => runOne(o, dir, cache, mode, procs)), ranks: [] };
            const row = ran.row;
            const slope = prev === undefined
              ? row.wall_s / procs
              : (row.wall_s - prev.wall) / (procs - prev.procs);
            prev = { procs, wall: row.wall_s };
            o.progress.clear();
            const out = attachAudit({
              ...row,
              slope_s_per_proc: slope,
              fs_type: fsType,
              repeat,
              cold_ok: "",
              cold_why: "",
              stat: "run",
              error: "",
            }, auditOf(row));
            // a shared file is fetched from the device once, however many read it
            cold.judge(out, String(row.cache), {
              read: {
                fsType: fs.type,
                residentAfterDrop: Number(row.resident_before),
                // mutant: readers-cold-ok-shared-bytes
                readBytes: Number(row.reader_bytes) / (mode === "shared" ? Number(row.procs) : 1),
                deviceReadBytes: Number(row.read_dev_bytes),
              },
            }, false);
            rows.push(out);
            onRow(out);
            for (const r of ran.ranks) {
              const each = attachAudit(
                {
                  ...r,
                  fs_type: fsType,
                  repeat,
                  cold_ok: out.cold_ok,
                  cold_why: out.cold_why,
                  stat: "run",
                  error: "",
                },
                auditOf(r),
              );
              rows.push(each);
              onRow(each);
            }
          }
        }
      }
    }
  }, rankScratchShare());
  return rows;
}
