/**
 * One table cell measured in-process: write all frames with fsync, drop the file from the page
 * cache, time the open, drop again, read a sample in order, drop again, read it in a seeded random
 * order; every frame read is checked against what was written.
 * @module
 */
import { VerifyError } from "../../core/errors.ts";
import { signalPoint, withScratchDir } from "../../io/scratch.ts";
import { removeStore, storeBytes } from "../../io/store.ts";
import { writeFrames } from "../../backends/write.ts";
import type { Backend, FrameSource, QueueSpec } from "../../backends/backend.ts";
import { fencedPhase, injectedFailure, rankScratchShare } from "../../mpi/phase.ts";
import { planSharedFile, sharedPart, writeSharedFrames } from "../../mpi/shared.ts";
import { world } from "../../mpi/world.ts";
import type { Row } from "../../report/row.ts";
import { Progress } from "../../report/progress.ts";
import { callLatencyFields, latencyFields, LatencyHistogram } from "../../report/histogram.ts";
import { startMeter, warmUpOpens } from "../../sys/meter.ts";
import { beginPhase, endPhase } from "../../sys/audit.ts";
import { recordPreadLatency, statfs } from "../../sys/libc.ts";
import { mpiIoColumns, mpiIoSettings, ownFrames, sharedFraming } from "../cells.ts";
import {
  cacheState,
  prepareCache,
  queueColumns,
  readOverlap,
  transferColumns,
} from "../transfer.ts";
import {
  prepareVerified,
  readVerifiedFrames,
  Rng,
  shuffledOrder,
  type VerifyTime,
} from "../pattern.ts";
import { type BesidePhase, type PhaseBeside, type TableOptions, tableSizing } from "./options.ts";
import { TableFrames } from "./frames.ts";

/** Runs `ours` with `beside`'s matching phase just before or just after it (none: ours alone). */
async function pairedPhase<T>(
  beside: PhaseBeside | undefined,
  phase: BesidePhase,
  ours: () => Promise<T>,
): Promise<T> {
  if (beside?.first) await beside.run(phase);
  const result = await ours();
  if (beside !== undefined && !beside.first) await beside.run(phase);
  return result;
}

async function readPhase(
  source: FrameSource,
  order: ArrayLike<number>,
  frames: TableFrames,
  progress: Progress,
  phase: string,
  overlap: boolean,
  queue: QueueSpec | undefined,
) {
  // the expected bytes in the file's byte order exist before the clock starts, as the native
  // arrays raw is compared with do (big-endian netCDF: a swapped copy of a frame)
  // mutant: table-expected-untimed
  prepareVerified(source, frames);
  const meter = startMeter(phase);
  const { spent, latency, calls } = await readAsPhase(
    source,
    order,
    frames,
    progress,
    phase,
    overlap,
    queue,
  );
  return { ...meter.stop(), verifyS: spent.seconds, latency, calls };
}

/**
 * The progress of the untimed warm-ups' reads: quiet, and a Progress all the same, so that its
 * calls are compiled with the rest (left undefined, the first timed read phase met them first,
 * and V8 dropped the optimized read loop there: frames read 3 times slower).
 */
export const UNTIMED_PROGRESS = new Progress({ quiet: true });

/**
 * The reads of a read phase, timed by the caller or not: the frames `order` lists, each verified
 * against `frames` (the time it took in `spent`), each frame's latency and each pread call's
 * recorded, progress every 64 frames. The untimed warm-ups run this same code (with
 * {@link UNTIMED_PROGRESS}), so that V8 has optimized the phases' own closures and branches, not
 * similar ones.
 */
export async function readAsPhase(
  source: FrameSource,
  order: ArrayLike<number>,
  frames: TableFrames,
  progress: Progress,
  phase: string,
  overlap: boolean,
  queue: QueueSpec | undefined,
): Promise<{ spent: VerifyTime; latency: LatencyHistogram; calls: LatencyHistogram }> {
  const spent: VerifyTime = { seconds: 0 };
  const latency = new LatencyHistogram();
  const calls = new LatencyHistogram();
  const n = order.length;
  // --overlap: the read of frame k + 1 is in flight while frame k is verified (native framings)
  const after = (k: number) => {
    if ((k & 63) !== 0) return undefined;
    progress.update(k / n, phase);
    return signalPoint();
  };
  const before = recordPreadLatency(calls);
  try {
    // mutant: table-verified-reads
    await readVerifiedFrames(source, order, frames, after, overlap, spent, latency, queue);
  } finally {
    recordPreadLatency(before);
  }
  return { spent, latency, calls };
}

/** The name of a cell's untimed warm-up (`--warmup`) in the audit trail. */
export const WARM_UP_CELL_PHASE = "cell warm-up";

/** Reads the frames `order` of `source`, verified against `frames`, untimed, then closes it. */
async function readBack(
  source: FrameSource,
  order: Uint32Array,
  frames: TableFrames,
  overlap: boolean,
  queue: QueueSpec | undefined,
): Promise<void> {
  try {
    prepareVerified(source, frames);
    // mutant: table-warm-up-progress
    await readAsPhase(source, order, frames, UNTIMED_PROGRESS, "read", overlap, queue);
  } finally {
    source.close();
  }
}

/**
 * Measures one cell (backend, size, N, repeat 1..K) and returns this rank's row. Under MPI every
 * phase is fenced (lib/mpi/phase.ts), each rank writes its own file in a scratch directory shared
 * by all ranks, and reads the file of rank (rank + reorder) mod ranks.
 *
 * Long (about 200 lines) on purpose: it is the cell's protocol read top to bottom, the phases
 * (warm-up, write, first open, drop, open, drop, read, drop, random) in the order they run, each
 * fenced under MPI, then the row of what they measured; spread over functions, the order of the
 * phases and drops that the numbers depend on would no longer be visible in one place.
 */
export async function runTableCell(
  backend: Backend,
  size: number,
  n: number,
  repeat: number,
  options: TableOptions,
): Promise<Row> {
  const w = world();
  const sizing = tableSizing(size, n, options.sampleBytes);
  const readRank = (w.rank + (options.reorder ?? 0)) % w.size;
  const frames = new TableFrames(n, options.seed, w.rank);
  const readFrames = readRank === w.rank ? frames : new TableFrames(n, options.seed, readRank);
  const p = options.progress;
  const cache = cacheState(options.transfer, options.cache);
  // --layout shared: one file, rank r's frames at part.frameOf(i) (r x frames + i, or in
  // --segments interleaved blocks)
  const shared = options.layout === "shared" && w.size > 1;
  const layout = shared ? "shared" : "per-rank";
  // a backend that goes through MPI-IO writes the shared file itself, collectively
  const part = sharedPart(sizing.frames, shared ? options.segments : 1);
  const writeIo = mpiIoSettings(
    backend,
    options.mpiIo,
    layout,
    shared ? part : ownFrames(sizing.frames),
  );
  const readIo = mpiIoSettings(backend, options.mpiIo, layout);
  const nativeShared = shared && writeIo === undefined;
  // the read rank's local frame i, in this rank's file or the shared one
  const readFrame = (i: number) => shared ? part.frameOf(i, readRank) : i;
  let other: { rank: number; frames: TableFrames } | undefined;
  const framesOf = (rank: number): TableFrames => {
    if (rank === w.rank) return frames;
    if (rank === readRank) return readFrames;
    if (other?.rank !== rank) other = { rank, frames: new TableFrames(n, options.seed, rank) };
    return other.frames;
  };
  const globalFrame = (g: number) => framesOf(part.ownerOf(g)).frame(g);
  return await withScratchDir(options.dir, async (dir) => {
    const fs = statfs(dir);
    injectedFailure("unfenced", w.rank); // test hook: a failure no other rank hears of
    const fileOf = (rank: number) =>
      w.size === 1
        ? `${dir}/table.${backend.name}`
        : `${dir}/table.${backend.name}.${shared ? "shared" : `r${rank}`}`;
    const path = fileOf(w.rank);
    const readPath = fileOf(readRank);
    const fsync = options.fsync ?? "end";
    // --iodepth / --engine: native framings write a file of their own at depth, each transfer a
    // request (a shared file's ranks write their parts one at a time)
    const writeQueue = backend.transfer && !shared ? options.queue : undefined;
    const sink = {
      create: "truncate",
      endian: options.endian,
      // mutant: table-write-fsync
      fsync,
      transfer: options.transfer,
      mpiIo: writeIo,
      // mutant: table-write-depth
      queue: writeQueue,
    } as const;
    // the shared file fsyncs at its end or not at all (the command refuses --fsync each)
    const sharedSink = {
      endian: options.endian,
      fsync: fsync !== "none",
      transfer: options.transfer,
    };
    const plan = nativeShared
      ? await fencedPhase(
        "plan",
        () =>
          planSharedFile(
            sharedFraming(backend),
            sharedSink,
            part,
            globalFrame,
          ),
      )
      : undefined;
    const write = (phase: string): Promise<number> => {
      const progress = (i: number) => {
        if ((i & 63) === 0) p.update(i / sizing.frames, phase);
      };
      if (plan) {
        return writeSharedFrames(
          sharedFraming(backend),
          path,
          sharedSink,
          plan,
          globalFrame,
          progress,
        );
      }
      // through MPI-IO into a shared file: this rank's frames, numbered in the file
      return writeFrames(
        backend,
        path,
        sink,
        sizing.frames,
        (i) => frames.frame(shared ? part.frameOf(i) : i),
        progress,
      );
    };
    const writer = !shared || w.rank === 0;
    if (options.warmup) {
      // Untimed, shown apart in the audit trail: the whole file written, then read back in order
      // and verified, then removed. Without the read, a process's first read phase at full size
      // ran 1.3-3 times slower than its later ones (user time 4 times), whatever backend came
      // first; a read of a few hundred frames did not remove that, a whole pass does.
      beginPhase(WARM_UP_CELL_PHASE, false);
      try {
        await fencedPhase("warm-up", () => write("warm-up"));
        // mutant: table-cell-warm-up-read
        await fencedPhase("warm-up read", () =>
          readBack(
            backend.openReader(path, {
              layout: frames.layout,
              transfer: options.transfer,
              mpiIo: readIo,
            }),
            Uint32Array.from({ length: sizing.frames }, (_, i) => shared ? part.frameOf(i) : i),
            frames,
            readOverlap(options.transfer, options.overlap).mode !== "none",
            backend.transfer ? options.queue : undefined,
          ));
        // (a shared file is removed once every rank has read its part)
        await fencedPhase("warm-up", () => {
          if (writer) removeStore(path);
        });
      } finally {
        endPhase();
      }
    }
    const { w: wr, syncS, fileBytes } = await pairedPhase(
      options.beside,
      "write",
      () =>
        fencedPhase("write", async () => {
          const wm = startMeter("write");
          const syncS = await write("write");
          // mutant: table-write-stop
          const w = wm.stop();
          // a shared file is counted once, on rank 0, so the sum over ranks is its size
          return { w, syncS, fileBytes: writer ? storeBytes(path) : 0 };
        }),
    );
    options.afterWrite?.(path);

    // The first open of the file in the process, closed at once, before the drop: V8 compiles a
    // function at its first call (most of a first gsd open's time; python3-gsd's gsd_open is C,
    // compiled ahead of time); it is kept as open_first_ms. Untimed opens follow (V8 optimises
    // after some calls), so the open timed below is the reader's optimised code, as the
    // python3-gsd peer's is (lib/peers/python_gsd/program.ts does the same).
    const reader = { layout: readFrames.layout, transfer: options.transfer, mpiIo: readIo };
    const openClose = () => backend.openReader(readPath, reader).close();
    const first = await fencedPhase("first open", () => {
      const fm = startMeter("first open");
      openClose();
      const m = fm.stop();
      // mutant: table-warm-up-opens
      // (opens of a shared MPI-IO file are collective: every rank opens as often)
      warmUpOpens(openClose, shared && readIo !== undefined);
      return m;
    });
    const drop1 = await fencedPhase("drop", () => prepareCache(readPath, cache));
    const { o, source } = await fencedPhase("open", () => {
      const om = startMeter("open");
      const source = backend.openReader(readPath, reader);
      const o = om.stop();
      const written = shared ? sizing.frames * w.size : sizing.frames;
      if (source.frameCount !== written) {
        source.close();
        throw new VerifyError(
          `${readPath}: ${source.frameCount} frames read back, ${written} written`,
        );
      }
      return { o, source };
    });
    // Opening f77 and IEEEIO files scans every record marker, which caches the file: a cold read
    // phase starts from a second drop (untimed), so it reads from the device like the others.
    const dropOpen = cache === "cold"
      // mutant: table-drop-after-open
      ? await fencedPhase("drop", () => prepareCache(readPath, cache))
      : undefined;
    try {
      const seq = Uint32Array.from({ length: sizing.readFrames }, (_, i) => readFrame(i));
      const overlap = readOverlap(options.transfer, options.overlap).mode !== "none";
      // --iodepth / --engine: native framings only (a peer makes its own calls)
      const queue = backend.transfer ? options.queue : undefined;
      // the queue's buffers made and touched untimed
      if (queue) source.reserveQueued?.(queue);
      const r = await pairedPhase(
        options.beside,
        "read",
        // mutant: table-sequential-order
        () =>
          fencedPhase("read", () => readPhase(source, seq, readFrames, p, "read", overlap, queue)),
      );
      const drop2 = await fencedPhase("drop", () => prepareCache(readPath, cache));
      const order = shuffledOrder(
        sizing.frames,
        sizing.readFrames,
        new Rng(options.seed + repeat),
      ).map(readFrame);
      const x = await pairedPhase(
        options.beside,
        "random",
        () =>
          // mutant: table-random-order
          fencedPhase("random", () =>
            readPhase(source, order, readFrames, p, "random", overlap, queue)),
      );
      p.clear();
      const mib = 2 ** 20;
      return {
        framing: backend.name,
        size_bytes: size,
        N: n,
        open_ms: o.wallS * 1000,
        write_MiBps: sizing.dataBytes / mib / wr.wallS,
        read_MiBps: sizing.readBytes / mib / r.wallS,
        random_MiBps: sizing.readBytes / mib / x.wallS,
        random_ms: (x.wallS / sizing.readFrames) * 1000,
        frames: sizing.frames,
        file_bytes: fileBytes,
        repeat,
        write_s: wr.wallS,
        write_user_s: wr.userS,
        write_sys_s: wr.sysS,
        read_user_s: r.userS,
        read_sys_s: r.sysS,
        write_dev_bytes: wr.devWriteBytes,
        // mutant: table-read-dev-bytes
        read_dev_bytes: r.devReadBytes,
        // mutant: table-resident-after-drop
        resident_after_drop: drop1.residentAfter,
        fs_type: fs.typeName,
        data_bytes: sizing.dataBytes,
        read_frames: sizing.readFrames,
        read_bytes: sizing.readBytes,
        read_s: r.wallS,
        random_s: x.wallS,
        random_user_s: x.userS,
        random_sys_s: x.sysS,
        random_dev_bytes: x.devReadBytes,
        drop_s: drop1.seconds + (dropOpen?.seconds ?? 0) + drop2.seconds,
        write_user_ticks: wr.userTicks,
        write_sys_ticks: wr.sysTicks,
        clk_tck: wr.clkTck,
        seed: options.seed,
        write_sync_s: syncS,
        read_user_ticks: r.userTicks,
        read_sys_ticks: r.sysTicks,
        random_user_ticks: x.userTicks,
        random_sys_ticks: x.sysTicks,
        cache,
        fsync,
        ...transferColumns(options.transfer),
        ...queueColumns(backend.transfer ? options.queue : undefined),
        open_dev_bytes: o.devReadBytes,
        open_first_ms: first.wallS * 1000,
        read_verify_s: r.verifyS,
        random_verify_s: x.verifyS,
        ...latencyFields("read", r.latency, r.wallS),
        ...latencyFields("random", x.latency, x.wallS),
        ...callLatencyFields("read", r.calls),
        ...callLatencyFields("random", x.calls),
        ...(w.size > 1
          ? {
            "write_path": path,
            "read_path": readPath,
            ...mpiIoColumns(backend, options.mpiIo, layout, options.segments),
          }
          : {}),
        stat: "run",
        error: "",
      };
    } finally {
      source.close();
    }
  }, rankScratchShare());
}

/** What `--baseline fio` needs of a cell before it is measured. */
