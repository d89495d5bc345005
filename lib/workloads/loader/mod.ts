/**
 * The `loader` workload's measurement: random samples (frames) of one file read in batches as a
 * training loop reads them, epoch after epoch (a seeded shuffle of every frame, or draws with
 * replacement), cold at the first epoch and as the cache was left after; optionally a busy-wait
 * after each batch (a training step), and one row per epoch with its audit trail.
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
import type { Transfer } from "../../io/transfer.ts";

/** How samples are drawn: every frame once per epoch, or with replacement. */
export type Sampling = "shuffle" | "random";

/** The samplings `--sample` takes. */
export const SAMPLINGS: readonly Sampling[] = ["shuffle", "random"];

/**
 * How a sample's bytes are read: `native` (sciobench's reads, through the format's own index),
 * `library` (through the format's library, one sample at a time), `direct` (an HDF5 file's
 * chunks with sciobench's reads, at the addresses the library reported at the open).
 */
export type Access = "native" | "library" | "direct";

/** The read paths `--access` takes (a library format's files: library, direct, or both). */
export const ACCESSES: readonly Access[] = ["library", "direct"];

/** What one loader run reads, besides its file. */
export interface LoaderSettings {
  /** Seed of every epoch's order. */
  readonly seed: number;
  /** Samples (frames) per batch. */
  readonly batchSize: number;
  /** Epochs to read (with `batches`: the most epochs those batches take). */
  readonly epochs: number;
  /** Batches to read in all (`--batches`), instead of whole epochs; undefined: every batch. */
  readonly batches?: number;
  /** How samples are drawn. */
  readonly sampling: Sampling;
  /** Busy-wait after each batch, milliseconds (0: none). */
  readonly computeMs: number;
  /** `--iodepth` / `--engine`: a batch's reads up to the depth in flight; undefined: one at a time. */
  readonly queue?: QueueSpec;
  /**
   * `--bs` / `--direct`: the size of each read and O_DIRECT, as the file was opened with them
   * (every epoch's cache is then `direct`: no drop); undefined: whole-frame preads, page cache.
   */
  readonly transfer?: Transfer;
}

/** The file a run reads and what is known of its data. */
export interface LoaderFile {
  /** The file. */
  readonly path: string;
  /** Its frames, open. */
  readonly source: FrameSource;
  /** How `source` reads a sample. */
  readonly access: Access;
  /** The frames it must hold (a file the loader wrote, or --file --verify); else undefined. */
  readonly expected: ExpectedFrames | undefined;
  /** Particles per frame, where known. */
  readonly n: number | undefined;
  /** File size, bytes. */
  readonly fileBytes: number;
}

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
  /** Each batch's read time, ns. */
  readonly latency: LatencyHistogram;
}

/** Reads `order`'s samples in batches, with a busy-wait after each; `beat` after each batch. */
async function readEpoch(
  file: LoaderFile,
  order: Uint32Array,
  s: LoaderSettings,
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
    const got = await readBatch(file.source, batch, file.expected, s.queue);
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
  return { batches, samples: order.length, bytes, distinctBytes, loadNs, computeNs, latency };
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
    user_s: m.userS,
    sys_s: m.sysS,
    dev_read_bytes: m.devReadBytes,
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
 * empty); resident_before is the fraction cached before each epoch.
 */
export async function runLoader(
  open: () => LoaderFile,
  s: LoaderSettings,
  add: (row: Row) => void,
  progress: Progress,
): Promise<void> {
  startAudit();
  try {
    const file = open();
    try {
      await readEpochs(file, s, add, progress);
    } finally {
      file.source.close();
    }
  } finally {
    finishAudit();
  }
}

/** The epochs of {@link runLoader}, on `file` open, each row's trail ended by {@link nextAudit}. */
async function readEpochs(
  file: LoaderFile,
  s: LoaderSettings,
  add: (row: Row) => void,
  progress: Progress,
): Promise<void> {
  const frames = file.source.frameCount;
  const epochs = epochCount(frames, s);
  const perEpoch = batchesPerEpoch(frames, s.batchSize);
  const fs = statfs(file.path);
  if (s.queue !== undefined && !file.source.readFramesQueued) {
    throw new UsageError(
      `--iodepth/--engine: ${file.source.framing} is read through its library, one sample at a ` +
        "time; the queue is sciobench's native readers'",
    );
  }
  for (let epoch = 1; epoch <= epochs; epoch++) {
    let order = epochOrder(frames, epoch, s.sampling, s.seed);
    if (s.batches !== undefined) {
      const left = s.batches - (epoch - 1) * perEpoch;
      order = order.subarray(0, Math.min(order.length, left * s.batchSize));
    }
    // O_DIRECT reads bypass the page cache: no drop, every epoch alike
    const cache = s.transfer?.direct ? "direct" : epoch === 1 ? "cold" : "as left";
    // mutant: loader-cold-drop
    const before = cache === "cold" || cache === "direct"
      ? prepareCache(file.path, cache).residentAfter
      : residency(file.path);
    progress.begin(`loader epoch ${epoch}`, { index: epoch, count: epochs });
    const meter = startMeter("epoch");
    const r = await readEpoch(
      file,
      order,
      s,
      (done) => progress.update(done / order.length, "read"),
    );
    const m = meter.stop();
    const row = epochRow(file, s, { epoch, cache, before, fsType: fs.typeName }, r, m);
    judgeCold(row, cache, {
      epoch: {
        fsType: fs.type,
        residentAfterDrop: before,
        readBytes: Math.round(r.distinctBytes),
        deviceReadBytes: m.devReadBytes,
      },
    }, false);
    attachAudit(row, nextAudit());
    add(row);
  }
  progress.clear();
}
