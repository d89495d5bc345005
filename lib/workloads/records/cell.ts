/**
 * One records cell, a (target, repeat): write every record (open, each record, fsync, close:
 * timed), drop the file from the page cache, read every record back and check it (open, each
 * record, close: timed), each phase fenced under MPI; a phase the backend cannot do is a row that
 * says why, and the sweep goes on.
 * @module
 */
import { VerifyError } from "../../core/errors.ts";
import { dropCache, residency } from "../../io/cache.ts";
import { LatencyHistogram } from "../../report/histogram.ts";
import { removeStore, storeBytes } from "../../io/store.ts";
import { signalPoint } from "../../io/scratch.ts";
import { fencedPhase } from "../../mpi/phase.ts";
import { planSharedFile, writeSharedFrames } from "../../mpi/shared.ts";
import { writeFrames } from "../../backends/write.ts";
import type { FrameSource, FsyncPolicy, QueueSpec } from "../../backends/backend.ts";
import { nativeReads, readFramesOverlapped } from "../../backends/overlap.ts";
import type { StatFs } from "../../sys/libc.ts";
import { attachAudit, finishAudit, startAudit } from "../../sys/audit.ts";
import { startMeter } from "../../sys/meter.ts";
import { cellError, EMPTY_SAMPLE, mpiIoSettings, ownFrames, sharedFraming } from "../cells.ts";
import type { ColdReads } from "../transfer.ts";
import { verifyFrame } from "../pattern.ts";
import type { RecordsOptions, RecordsRun, RecordsTarget } from "./options.ts";
import type { RecordsRanks } from "./ranks.ts";
import type { RecordFrames } from "./frames.ts";

/** What every cell of a records run shares. */
export interface RecordsCellContext {
  /** The run's options. */
  readonly options: RecordsOptions;
  /** This rank's records and files. */
  readonly ranks: RecordsRanks;
  /** When the write phase fsyncs. */
  readonly fsync: FsyncPolicy;
  /** Payload bytes of this rank's records (records x record bytes). */
  readonly bytes: number;
  /** The judge of cold reads (`cold_ok`), with its one stderr line. */
  readonly cold: ColdReads;
  /** Whether record r + 1's read is in flight while record r is checked (native AIO). */
  readonly overlap: boolean;
  /** The scratch directory's file system. */
  readonly fs: StatFs;
  /** Takes each phase as it is measured. */
  readonly emit: (run: RecordsRun) => void;
}

/** One cell to measure: the target, the repeat, its place in the run, the scratch directory. */
export interface RecordsCell {
  /** Backend and byte order. */
  readonly t: RecordsTarget;
  /** 1-based repeat. */
  readonly repeat: number;
  /** The target's place in this repeat, from 1 (the order alternates: backendOrder). */
  readonly order: number;
  /** 1-based place among the run's cells (the progress line's). */
  readonly index: number;
  /** The scratch directory. */
  readonly dir: string;
}

/** What a cell has done when a phase fails: the phase, and the file's size once written. */
interface CellState {
  phase: "write" | "read";
  fileBytes: number;
}

/**
 * Measures one cell: its write phase, then its read phase, each emitted as measured, then removes
 * its file (fenced: every rank has read before files go). A phase that fails with a cell error
 * (not under MPI, where the ranks meet in every phase) is emitted as a row that says why.
 */
export async function runRecordsCell(ctx: RecordsCellContext, cell: RecordsCell): Promise<void> {
  const { options, ranks } = ctx;
  const { t, repeat, dir } = cell;
  const p = options.progress;
  const path = ranks.fileOf(dir, t, ranks.rank);
  const readPath = ranks.fileOf(dir, t, ranks.readRank);
  const again = options.repeat > 1 ? ` repeat ${repeat}/${options.repeat}` : "";
  p?.begin(`${t.backend.name} ${t.endian}${again}`, {
    index: cell.index,
    count: options.repeat * options.targets.length,
    phaseBytes: { write: ctx.bytes, read: ctx.bytes },
  });
  const state: CellState = { phase: "write", fileBytes: 0 };
  try {
    ctx.emit(await writePhase(ctx, cell, path, state));
    state.phase = "read";
    ctx.emit(await readPhase(ctx, cell, readPath, state.fileBytes));
  } catch (e) {
    // A target the backend cannot hold: the failed phase's row says why and the sweep goes on
    // (not under MPI, where the ranks meet in every phase).
    const why = cellError(e);
    if (why === null || ranks.size > 1) throw e;
    finishAudit();
    ctx.emit({
      framing: t.backend.name,
      endian: t.endian,
      phase: state.phase,
      repeat,
      order: cell.order,
      bytes: ctx.bytes,
      fileBytes: state.fileBytes,
      residentAfterDrop: 0,
      fsync: ctx.fsync,
      sample: EMPTY_SAMPLE,
      error: why,
      // the requests the failed phase made (a shared file's writes: one at a time)
      queue: state.phase === "write" && ranks.shared ? undefined : options.queue,
    });
    p?.clear();
    try {
      removeStore(path);
    } catch {
      // nothing was written
    }
    return;
  }
  p?.clear();
  // fenced: every rank has read (--reorder reads another rank's file) before files go,
  // and no rank is still removing when rank 0 removes the scratch directory
  await fencedPhase("remove", () => ranks.writer ? removeStore(path) : undefined);
}

/** The write phase: open, every record, fsync, close; `state.fileBytes` is set once sized. */
async function writePhase(
  ctx: RecordsCellContext,
  cell: RecordsCell,
  path: string,
  state: CellState,
): Promise<RecordsRun> {
  const { options, ranks, fsync } = ctx;
  const { t } = cell;
  const p = options.progress;
  const transfer = options.transfer;
  const frames = ranks.frames;
  const backendOptions = options.backendOptions?.get(t.backend.name);
  // a backend that goes through MPI-IO writes a shared file itself, each rank its own records
  const part = ranks.part;
  const mpiIo = ranks.shared
    ? mpiIoSettings(t.backend, options.mpiIo, "shared", part)
    : mpiIoSettings(t.backend, options.mpiIo, "per-rank", ownFrames(frames.records));
  // writes at depth into a file of this rank's own (a shared file's ranks write their parts)
  const queue = ranks.shared ? undefined : options.queue;
  const sink = {
    create: "truncate",
    ...{ endian: t.endian, fsync, backendOptions, transfer, mpiIo, queue },
  } as const;
  // the shared file fsyncs at its end or not at all (the command refuses --fsync each)
  const sharedSink = { endian: t.endian, fsync: fsync !== "none", backendOptions, transfer };
  const progress = (r: number) => {
    if ((r & 15) === 0) p?.update(r / frames.records, "write");
  };
  const plan = ranks.shared && mpiIo === undefined
    ? await fencedPhase(
      "plan",
      () =>
        planSharedFile(
          sharedFraming(t.backend),
          sharedSink,
          part,
          ranks.sharedRecord,
        ),
    )
    : undefined;
  startAudit();
  const latency = new LatencyHistogram();
  const written = await fencedPhase("write", async () => {
    const wm = startMeter("write");
    if (plan) {
      await writeSharedFrames(
        sharedFraming(t.backend),
        path,
        sharedSink,
        plan,
        ranks.sharedRecord,
        progress,
        latency,
      );
    } else {
      await writeFrames(
        t.backend,
        path,
        sink,
        frames.records,
        // through MPI-IO into a shared file: this rank's records, numbered in the file
        (r) => frames.frame(ranks.ownRecord(r)),
        progress,
        latency,
      );
    }
    const ws = wm.stop();
    // a shared file is counted once, on rank 0, so the sum over ranks is its size
    return { ws, fileBytes: ranks.writer ? storeBytes(path) : 0 };
  });
  state.fileBytes = written.fileBytes;
  options.afterWrite?.(path, t.backend.name);
  return attachAudit({
    framing: t.backend.name,
    endian: t.endian,
    phase: "write",
    repeat: cell.repeat,
    order: cell.order,
    bytes: ctx.bytes,
    fileBytes: written.fileBytes,
    residentAfterDrop: 0,
    fsync,
    sample: written.ws,
    latency,
    ...(queue ? { queue } : {}),
  }, finishAudit());
}

/** The read phase from a cold cache: drop, then open, every record (verified), close. */
async function readPhase(
  ctx: RecordsCellContext,
  cell: RecordsCell,
  readPath: string,
  fileBytes: number,
): Promise<RecordsRun> {
  const { options, ranks, cold, overlap } = ctx;
  const { t } = cell;
  let queued: QueueSpec | undefined;
  const p = options.progress;
  const transfer = options.transfer;
  const { frames, readFrames } = ranks;
  startAudit();
  // O_DIRECT reads bypass the page cache: no drop, only the residency measured
  const drop = await fencedPhase(
    "drop",
    () =>
      transfer?.direct
        ? { seconds: 0, residentAfter: residency(readPath) }
        // mutant: records-cold-drop
        : dropCache(readPath),
  );
  const latency = new LatencyHistogram();
  const rs = await fencedPhase("read", async () => {
    const rm = startMeter("read");
    const mpiIo = mpiIoSettings(t.backend, options.mpiIo, ranks.shared ? "shared" : "per-rank");
    const source = t.backend.openReader(readPath, { layout: readFrames.layout, transfer, mpiIo });
    try {
      const total = ranks.fileRecords;
      if (source.frameCount !== total) {
        throw new VerifyError(
          `${readPath}: ${source.frameCount} records read back, ${total} written`,
        );
      }
      const order = Uint32Array.from({ length: frames.records }, (_, r) => ranks.readRecord(r));
      if (options.queue !== undefined && source.readFramesQueued) {
        // --iodepth / --engine: up to the depth's requests in flight, each record verified as it
        // completes while the next are in flight; each request's latency recorded
        readRecordsQueued(source, order, options.queue, readFrames, latency, (r) => {
          if ((r & 15) === 0) p?.update(r / frames.records, "read");
        });
        queued = options.queue;
        return rm.stop();
      }
      // with --direct, record r + 1's read is in flight while record r is verified
      // (native AIO, lib/backends/overlap.ts); else one after the other
      await readFramesOverlapped(
        order,
        nativeReads(source),
        (g, chunks, r) => {
          verifyFrame(readPath, g, readFrames.frame(g).chunks, chunks);
          if ((r & 15) !== 0) return undefined;
          p?.update(r / frames.records, "read");
          // mutant: records-direct-aio
          return signalPoint();
        },
        overlap,
        latency,
      );
    } finally {
      source.close();
    }
    return rm.stop();
  });
  const measured: RecordsRun = {
    framing: t.backend.name,
    endian: t.endian,
    phase: "read",
    repeat: cell.repeat,
    order: cell.order,
    bytes: ctx.bytes,
    fileBytes,
    // mutant: records-resident-after-drop
    residentAfterDrop: drop.residentAfter,
    fsync: ctx.fsync,
    sample: rs,
    latency,
    ...(queued ? { queue: queued } : {}),
  };
  const judged: { cold_ok?: boolean | ""; cold_why?: string } = {};
  // mutant: records-cold-ok-judge
  cold.judge(judged, transfer?.direct ? "direct" : "cold", {
    read: {
      fsType: ctx.fs.type,
      residentAfterDrop: measured.residentAfterDrop,
      readBytes: ctx.bytes,
      deviceReadBytes: rs.devReadBytes,
    },
  }, false);
  return attachAudit({
    ...measured,
    ...(typeof judged.cold_ok === "boolean"
      ? { coldOk: judged.cold_ok, coldWhy: judged.cold_why ?? "" }
      : {}),
  }, finishAudit());
}

/**
 * Reads the records `order` lists through `source.readFramesQueued` with up to `queue.depth`
 * requests in flight through `queue.engine`, verifies each as it completes (every byte, as the
 * reads one at a time do) and calls `progress` with its place in `order`; each request's latency
 * goes to `latency`, ns.
 */
function readRecordsQueued(
  source: FrameSource,
  order: Uint32Array,
  queue: QueueSpec,
  expected: RecordFrames,
  latency: LatencyHistogram,
  progress: (r: number) => void,
): void {
  source.readFramesQueued!(
    order,
    // mutant: records-iodepth
    queue,
    (g, chunks, r) => {
      verifyFrame(source.path, g, expected.frame(g).chunks, chunks);
      progress(r);
    },
    latency,
  );
}
