/**
 * The `loader` workload's measurement: random samples (frames) of one file read in batches as a
 * training loop reads them, epoch after epoch (a seeded shuffle of every frame, or draws with
 * replacement), cold at the first epoch and as the cache was left after; optionally a busy-wait
 * after each batch (a training step), and one row per epoch with its audit trail. With
 * `--readers K` above 1, K reader processes (./readers.ts) read the batches for the consumer.
 * @module
 */
import type { FrameSource, QueueSpec } from "../../backends/backend.ts";
import { UsageError } from "../../core/errors.ts";
import { residency } from "../../io/cache.ts";
import type { Progress } from "../../report/progress.ts";
import { latencyFields, LatencyHistogram } from "../../report/histogram.ts";
import type { Row } from "../../report/row.ts";
import { attachAudit, finishAudit, nextAudit, startAudit } from "../../sys/audit.ts";
import { clockGettime, statfs } from "../../sys/libc.ts";
import { type PhaseSample, startMeter } from "../../sys/meter.ts";
import {
  type ExpectedFrames,
  readVerified,
  readVerifiedFrames,
  Rng,
  shuffledOrder,
} from "../pattern.ts";
import { judgeCold, prepareCache, queueColumns, transferColumns } from "../transfer.ts";
import { type LoaderOpen, openLoader, vetLoader } from "./open.ts";
import type { LoaderFile, LoaderSettings, Sampling } from "./settings.ts";
import {
  type LoaderReaders,
  type ReaderEpoch,
  type ReaderLaunch,
  startReaders,
} from "./readers.ts";

export {
  type Access,
  ACCESSES,
  type LoaderFile,
  type LoaderSettings,
  type Sampling,
  SAMPLINGS,
} from "./settings.ts";

/** Batches of one epoch: ceil(frames / batch size). */
export function batchesPerEpoch(frames: number, batchSize: number): number {
  return Math.ceil(frames / batchSize);
}

/** The epochs a run reads: `epochs`, or with `batches` as many as those batches take. */
export function epochCount(frames: number, s: LoaderSettings): number {
  return s.batches === undefined
    ? s.epochs
    : Math.ceil(s.batches / batchesPerEpoch(frames, s.batchSize));
}

/**
 * The samples of epoch `epoch` (from 1) of a file of `frames` frames, in reading order: a seeded
 * permutation of every frame (shuffle), or `frames` seeded draws with replacement (random). The
 * same seed and epoch give the same order.
 */
export function epochOrder(
  frames: number,
  epoch: number,
  sampling: Sampling,
  seed: number,
): Uint32Array {
  const rng = new Rng(seed + epoch * 0x10001);
  // mutant: loader-shuffle-permutation
  if (sampling === "shuffle") return shuffledOrder(frames, frames, rng);
  const order = new Uint32Array(frames);
  for (let k = 0; k < frames; k++) order[k] = rng.below(frames);
  return order;
}

/**
 * The samples epoch `epoch` reads in order ({@link epochOrder}), cut short in the last epoch of a
 * run of `--batches`.
 */
export function epochSamples(frames: number, epoch: number, s: LoaderSettings): Uint32Array {
  const order = epochOrder(frames, epoch, s.sampling, s.seed);
  if (s.batches === undefined) return order;
  const left = s.batches - (epoch - 1) * batchesPerEpoch(frames, s.batchSize);
  return order.subarray(0, Math.min(order.length, left * s.batchSize));
}

/**
 * Reads the samples `indices` of `source` (verified against `expected` where given) and returns
 * their payload bytes. With `queue` (--iodepth, --engine), up to the depth's requests are in flight
 * through the native reader's queue, each sample verified as it completes; else one read at a time.
 */
export async function readBatch(
  source: FrameSource,
  indices: ArrayLike<number>,
  expected: ExpectedFrames | undefined,
  queue?: QueueSpec,
): Promise<number> {
  let bytes = 0;
  const count = (chunks: readonly { readonly data: Uint8Array }[]) => {
    for (const c of chunks) bytes += c.data.length;
  };
  // mutant: loader-queue
  if (queue !== undefined) {
    if (expected !== undefined) {
      await readVerifiedFrames(
        source,
        indices,
        expected,
        (_k, chunks) => {
          count(chunks);
          return undefined;
        },
        false,
        undefined,
        undefined,
        queue,
      );
    } else source.readFramesQueued!(indices, queue, (_i, chunks) => count(chunks));
    return bytes;
  }
  for (let k = 0; k < indices.length; k++) {
    const i = indices[k]!;
    count(expected ? readVerified(source, i, expected) : source.readFrame(i));
  }
  return bytes;
}

/** Spins on the monotonic clock for `ms` milliseconds (a training step's compute); ns spent. */
function busyWait(ms: number): number {
  const t0 = clockGettime();
  const end = t0 + ms * 1e6;
  let t = t0;
  while (t < end) t = clockGettime();
  return t - t0;
}

/** What one epoch read. */
interface EpochRead {
  /** Batches and samples read. */
  readonly batches: number;
  readonly samples: number;
  /** Payload bytes, and those of distinct frames (what a cold epoch fetched at least). */
  readonly bytes: number;
  readonly distinctBytes: number;
  /** Time spent reading batches, and in busy-waits, ns. */
  readonly loadNs: number;
  readonly computeNs: number;
  /** Each batch's wait, ns: its read time, or with reader processes the wait for it. */
  readonly latency: LatencyHistogram;
  /** The reader processes' own trails and costs of the epoch (`--readers` above 1). */
  readonly readers: readonly ReaderEpoch[];
}

/**
 * Reads `order`'s samples in batches, batch `b` (from 0) by `read` (its payload bytes), with a
 * busy-wait after each; `beat` after each batch. A batch's latency is the consumer's wait for it.
 */
async function readEpoch(
  file: LoaderFile,
  order: Uint32Array,
  s: LoaderSettings,
  read: (b: number, batch: Uint32Array) => Promise<number>,
  beat: (done: number) => void,
): Promise<EpochRead> {
  const latency = new LatencyHistogram();
  const seen = new Uint8Array(file.source.frameCount);
  let bytes = 0;
  let distinctBytes = 0;
  let loadNs = 0;
  let computeNs = 0;
  let batches = 0;
  for (let at = 0; at < order.length; at += s.batchSize) {
    const batch = order.subarray(at, Math.min(order.length, at + s.batchSize));
    const t0 = clockGettime();
    const got = await read(batches, batch);
    const dt = clockGettime() - t0;
    latency.record(dt);
    loadNs += dt;
    bytes += got;
    // the distinct frames' share of the bytes (all frames of a batch are alike in size only in
    // the table's files, so the batch's bytes are split evenly: an estimate for user files)
    let fresh = 0;
    for (let k = 0; k < batch.length; k++) {
      if (seen[batch[k]!] === 0) {
        seen[batch[k]!] = 1;
        fresh++;
      }
    }
    distinctBytes += (got * fresh) / batch.length;
    batches++;
    if (s.computeMs > 0) computeNs += busyWait(s.computeMs);
    beat(at + batch.length);
  }
  return {
    batches,
    samples: order.length,
    bytes,
    distinctBytes,
    loadNs,
    computeNs,
    latency,
    readers: [],
  };
}

/** Where an epoch's row stands: its number, the cache state and residency before it, the file system. */
interface EpochContext {
  readonly epoch: number;
  readonly cache: string;
  readonly before: number;
  readonly fsType: string;
}

/** The row of epoch `c.epoch`, which read `r` (measured as `m`); cold_ok unset. */
function epochRow(
  file: LoaderFile,
  s: LoaderSettings,
  c: EpochContext,
  r: EpochRead,
  m: PhaseSample,
): Row {
  const { epoch, cache, before } = c;
  const frames = file.source.frameCount;
  const loadS = r.loadNs / 1e9;
  const computeS = r.computeNs / 1e9;
  const { batch_iops: _perSecond, ...latency } = latencyFields("batch", r.latency, loadS);
  const sum = (f: (e: ReaderEpoch) => number) => r.readers.reduce((a, e) => a + f(e), 0);
  return {
    framing: file.source.framing,
    access: file.access,
    path: file.path,
    N: file.n ?? null,
    frames,
    file_bytes: file.fileBytes,
    epoch,
    sampling: s.sampling,
    cache,
    resident_before: before,
    batch_size: s.batchSize,
    readers: s.readers,
    batches: r.batches,
    samples: r.samples,
    bytes: r.bytes,
    wall_s: m.wallS,
    load_s: loadS,
    sample_rate: loadS > 0 ? r.samples / loadS : null,
    load_MiBps: loadS > 0 ? r.bytes / 2 ** 20 / loadS : null,
    ...latency,
    compute_ms: s.computeMs,
    compute_s: computeS,
    // mutant: loader-accel-util
    accel_util: s.computeMs > 0 ? computeS / (computeS + loadS) : null,
    user_s: m.userS + sum((e) => e.userS),
    sys_s: m.sysS + sum((e) => e.sysS),
    dev_read_bytes: m.devReadBytes + sum((e) => e.devReadBytes),
    cold_ok: "",
    cold_why: "",
    verified: file.expected !== undefined,
    ...transferColumns(s.transfer),
    ...queueColumns(s.queue),
    seed: s.seed,
    fs_type: c.fsType,
  };
}

/**
 * Opens the file (`open`; closed at the end) and reads it epoch after epoch as `s` says, handing
 * each epoch's row (with its audit trail, the first one's with the open) to `add`: the first
 * epoch after a cache drop (cold_ok judged from the drop's residency and the device bytes of the
 * distinct frames read), the later ones from whatever the cache holds (cache `as left`, cold_ok
 * empty); resident_before is the fraction cached before each epoch. A user's file read directly
 * is first looked up in a library child ({@link vetLoader}).
 */
export async function runLoader(
  open: LoaderOpen,
  s: LoaderSettings,
  add: (row: Row) => void,
  progress: Progress,
  launch: ReaderLaunch,
): Promise<void> {
  // once, before this process or any reader process opens the file
  await vetLoader(open);
  startAudit();
  try {
    const file = openLoader(open);
    try {
      await readEpochs(file, s, add, progress, () => startReaders(open, s, file, launch));
    } finally {
      file.source.close();
    }
  } finally {
    finishAudit();
  }
}

/**
 * The epochs of {@link runLoader}, on `file` open, each row's trail ended by {@link nextAudit};
 * with `--readers` above 1 the reader processes `start` makes read the batches.
 */
async function readEpochs(
  file: LoaderFile,
  s: LoaderSettings,
  add: (row: Row) => void,
  progress: Progress,
  start: () => Promise<LoaderReaders>,
): Promise<void> {
  const fs = statfs(file.path);
  if (s.queue !== undefined && !file.source.readFramesQueued) {
    throw new UsageError(
      `--iodepth/--engine: ${file.source.framing} is read through its library, one sample at a ` +
        "time; the queue is sciobench's native readers'",
    );
  }
  // the readers open the file before the first epoch's cache drop, as the consumer did
  const pool = s.readers > 1 ? await start() : undefined;
  let failed = true;
  try {
    await readEpochRows(file, s, add, progress, pool, fs);
    failed = false;
  } finally {
    await pool?.close(failed);
  }
  progress.clear();
}

/** Every epoch of {@link readEpochs}, read in-process or by `pool`; a row for each to `add`. */
async function readEpochRows(
  file: LoaderFile,
  s: LoaderSettings,
  add: (row: Row) => void,
  progress: Progress,
  pool: LoaderReaders | undefined,
  fs: { readonly type: number; readonly typeName: string },
): Promise<void> {
  const frames = file.source.frameCount;
  const epochs = epochCount(frames, s);
  const inProcess = (_b: number, batch: Uint32Array) =>
    readBatch(file.source, batch, file.expected, s.queue);
  for (let epoch = 1; epoch <= epochs; epoch++) {
    const order = epochSamples(frames, epoch, s);
    // O_DIRECT reads bypass the page cache: no drop, every epoch alike
    const cache = s.transfer?.direct ? "direct" : epoch === 1 ? "cold" : "as left";
    // mutant: loader-cold-drop
    const before = cache === "cold" || cache === "direct"
      ? prepareCache(file.path, cache).residentAfter
      : residency(file.path);
    progress.begin(`loader epoch ${epoch}`, { index: epoch, count: epochs });
    const meter = startMeter("epoch");
    const beat = (done: number) => progress.update(done / order.length, "read");
    let r: EpochRead;
    if (pool === undefined) r = await readEpoch(file, order, s, inProcess, beat);
    else {
      await pool.beginEpoch(order.length);
      r = await readEpoch(file, order, s, (b) => pool.batch(b), beat);
    }
    const m = meter.stop();
    // the readers' reports of the epoch follow their last batch: read after the epoch's clock
    if (pool !== undefined) r = { ...r, readers: await pool.endEpoch() };
    const row = epochRow(file, s, { epoch, cache, before, fsType: fs.typeName }, r, m);
    judgeCold(row, cache, {
      epoch: {
        fsType: fs.type,
        residentAfterDrop: before,
        readBytes: Math.round(r.distinctBytes),
        deviceReadBytes: Number(row.dev_read_bytes),
      },
    }, false);
    const trail = nextAudit();
    const phase = trail?.phases.find((p) => p.name === "epoch");
    for (const e of r.readers) if (e.phase) phase?.processes.push({ pid: e.pid, phase: e.phase });
    attachAudit(row, trail);
    add(row);
  }
}
