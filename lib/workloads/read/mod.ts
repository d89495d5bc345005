/**
 * The `read` workload's measurement: time reading an existing file (open, sequential read, random
 * read; cold: a cache drop before each phase, none with O_DIRECT or warm), one row with its audit
 * trail.
 * @module
 */
import { FormatError, UsageError } from "../../core/errors.ts";
import { type CacheDrop, dropCache, residency } from "../../io/cache.ts";
import { storeBytes } from "../../io/store.ts";
import type { Transfer } from "../../io/transfer.ts";
import {
  cacheState,
  coldEvidence,
  judgeCold,
  prepareCache,
  queueColumns,
  readOverlap,
  settleHeapUntimed,
  transferColumns,
} from "../transfer.ts";
import type { Row } from "../../report/row.ts";
import { Progress } from "../../report/progress.ts";
import { attachAudit, finishAudit, startAudit } from "../../sys/audit.ts";
import { type PhaseSample, startMeter } from "../../sys/meter.ts";
import { clockGettime, recordPreadLatency, statfs } from "../../sys/libc.ts";
import { callLatencyFields, latencyFields, LatencyHistogram } from "../../report/histogram.ts";
import {
  prepareVerified,
  readVerified,
  readVerifiedFrames,
  Rng,
  shuffledOrder,
  verifyStoredFrame,
} from "../pattern.ts";
import { TableFrames } from "../table/mod.ts";
import { WARM_UP_FRAMES, WARM_UP_N, WARM_UP_ROUNDS } from "../table/warm_up.ts";
import { type Block, planBlocks, readBlocks, referenceCrcs } from "../blocks.ts";
import type { FrameSource, QueueSpec } from "../../backends/backend.ts";
import type { ColumnDoc } from "../../report/human.ts";
import { columnDocs, READ_COLUMN_NAMES } from "../columns.ts";
import { openUserFile } from "../open.ts";
import { backendByName } from "../../backends/registry.ts";
import { writeFrames } from "../../backends/write.ts";
import { withScratchDir } from "../../io/scratch.ts";

/** The columns of `read`'s row, with units, in CSV order (from the schema). */
export const READ_COLUMN_DOCS: readonly ColumnDoc[] = columnDocs(READ_COLUMN_NAMES);

/**
 * What one timed phase of `read` read: bytes, pieces (frames or blocks), and each piece's read
 * latency.
 */
interface PhaseRead {
  /** Payload bytes. */
  readonly bytes: number;
  /** Frames or blocks read. */
  readonly pieces: number;
  /** Each piece's read latency, ns. */
  readonly latency: LatencyHistogram;
}

/** The two timed phases of `read`: what each reads, in pieces (frames or blocks), and bytes. */
interface Phases {
  /** `frame`, or for files without frames `chunk`, `block` or `chunk+block`. */
  readonly unit: string;
  sequential(): Promise<PhaseRead>;
  random(): Promise<PhaseRead>;
}

function framePhases(
  source: FrameSource,
  seed: number,
  sample: number,
  fileBytes: number,
  progress: Progress,
  pattern: TableFrames | undefined,
  beat: () => void,
  overlap: boolean,
  queue: QueueSpec | undefined,
): Phases {
  // with --verify each frame is read and compared as stored (no swap to native), else decoded
  const read = (i: number, latency: LatencyHistogram): readonly { readonly data: Uint8Array }[] => {
    if (pattern) return readVerified(source, i, pattern, latency);
    const t0 = clockGettime();
    const got = source.readFrame(i);
    latency.record(clockGettime() - t0);
    return got;
  };
  let frames = 0;
  /**
   * With --verify --direct: frame k verified while frame k + 1's read is in flight (native AIO,
   * lib/backends/overlap.ts); `order` is known in advance, so no frame is read past it.
   */
  const verified = async (order: ArrayLike<number>, phase: string): Promise<PhaseRead> => {
    let bytes = 0;
    const latency = new LatencyHistogram();
    await readVerifiedFrames(
      source,
      order,
      pattern!,
      (k, chunks) => {
        for (const c of chunks) bytes += c.data.length;
        if ((k & 63) !== 0) return undefined;
        progress.update(k / order.length, phase);
        beat();
      },
      overlap,
      undefined,
      latency,
    );
    return { bytes, pieces: order.length, latency };
  };
  const locate = source.locate?.bind(source);
  const overlapped = pattern !== undefined && overlap && locate !== undefined;
  /**
   * With --iodepth / --engine: up to the depth's requests in flight (lib/sys/queue.ts), every
   * frame verified (--verify) as it completes while the next requests are in flight; each
   * request's latency recorded.
   */
  const queued = (order: ArrayLike<number>, phase: string): PhaseRead => {
    let bytes = 0;
    const latency = new LatencyHistogram();
    const each = (k: number, chunks: readonly { readonly data: Uint8Array }[]): void => {
      for (const c of chunks) bytes += c.data.length;
      if ((k & 63) !== 0) return;
      progress.update(k / order.length, phase);
      beat();
    };
    if (pattern) {
      source.readFramesStoredQueued!(order, queue!, (i, got, k) => {
        verifyStoredFrame(source.path, i, pattern, got);
        each(k, got);
      }, latency);
    } else source.readFramesQueued!(order, queue!, (_i, got, k) => each(k, got), latency);
    return { bytes, pieces: order.length, latency };
  };
  const inQueue = queue !== undefined && locate !== undefined;
  return {
    unit: "frame",
    async sequential() {
      if (overlapped || inQueue) {
        // the frames the loop below would read, from the index (its reads stop at them)
        for (let bytes = 0; frames < source.frameCount && bytes < sample; frames++) {
          for (const r of locate(frames)) bytes += r.bytes;
        }
        const order = Uint32Array.from({ length: frames }, (_, i) => i);
        return inQueue ? queued(order, "read") : await verified(order, "read");
      }
      let bytes = 0;
      const latency = new LatencyHistogram();
      while (frames < source.frameCount && bytes < sample) {
        for (const c of read(frames, latency)) bytes += c.data.length;
        frames++;
        if ((frames & 63) === 0) {
          progress.update(bytes / Math.min(sample, fileBytes), "read");
          beat();
        }
      }
      return { bytes, pieces: frames, latency };
    },
    async random() {
      const order = shuffledOrder(source.frameCount, frames, new Rng(seed + 1));
      if (inQueue) return queued(order, "random");
      if (overlapped) return await verified(order, "random");
      let bytes = 0;
      const latency = new LatencyHistogram();
      for (let k = 0; k < order.length; k++) {
        const i = order[k]!;
        for (const c of read(i, latency)) bytes += c.data.length;
        if ((k & 63) === 0) {
          progress.update(k / order.length, "random");
          beat();
        }
      }
      return { bytes, pieces: order.length, latency };
    },
  };
}

/**
 * Phases for a file without frames: each numeric dataset whole in file order, then seeded
 * random chunks or blocks; both checked against CRC-32s of a first read made now, and the cache
 * step (`drop`) made again after it (the caller makes it before each timed phase).
 */
function blockPhases(
  source: FrameSource,
  seed: number,
  sample: number,
  progress: Progress,
  beat: () => void,
  drop: () => CacheDrop,
): Phases {
  const plan = planBlocks(source, seed + 1, sample);
  if (plan.sequential.length === 0) {
    // A row of 0 bytes (or of fill values no device delivered) would measure nothing.
    const unwritten = (source.datasets?.() ?? []).filter((d) => d.unwritten);
    const first = unwritten[0];
    throw new FormatError(
      source.framing,
      source.path,
      -1,
      first
        ? `nothing stored to read: dataset '${first.name}' is not read (${first.unwritten})` +
          (unwritten.length > 1 ? ` and ${unwritten.length - 1} more are not written either` : "")
        : "no numeric data to read (see 'sciobench info')",
    );
  }
  const reference = referenceCrcs(source, [...plan.sequential, ...plan.random]);
  drop();
  const run = (blocks: readonly Block[], phase: string): PhaseRead => {
    const latency = new LatencyHistogram();
    const bytes = readBlocks(source, blocks, reference, (k) => {
      if ((k & 63) === 0) {
        progress.update(k / blocks.length, phase);
        beat();
      }
    }, latency);
    return { bytes, pieces: blocks.length, latency };
  };
  return {
    unit: plan.unit,
    sequential: () => Promise.resolve(run(plan.sequential, "read")),
    random: () => Promise.resolve(run(plan.random, "random")),
  };
}

/** What `read` measures, besides the file and its framing. */
export interface ReadSettings {
  /** Seed of the random order (and of --verify's pattern). */
  readonly seed: number;
  /** Check the data against the table pattern. */
  readonly verify: boolean;
  /** Bytes to read in each phase (Infinity: every frame). */
  readonly sample: number;
  /** `--bs` / `--direct` (native framings). With O_DIRECT no cache drop is made. */
  readonly transfer?: Transfer;
  /** `--allow-external`: HDF5 external raw-data files outside the file's directory are read. */
  readonly allowExternal?: boolean;
  /**
   * `--cache`: cold (the default: a drop before each phase) or warm (the file read through once
   * before the open, no drop at all).
   */
  readonly cache?: "cold" | "warm";
  /** `--iodepth` / `--engine` (native framings): undefined, one read at a time as always. */
  readonly queue?: QueueSpec;
}

/**
 * FormatError (exit 2, one line) when `source` holds nothing to read: no frame and no dataset.
 * (A row of zeros would claim a measurement.)
 */
function refuseEmpty(source: FrameSource): void {
  if (source.frameCount > 0 || (source.datasets?.().length ?? 0) > 0) return;
  source.close();
  throw new FormatError(
    source.framing,
    source.path,
    -1,
    "the file holds no frames (and no datasets): there is nothing to read or time",
  );
}

/** Share of frame 0's 4-byte words that must equal the table pattern's for --verify to apply. */
const OWN_DATA_FRACTION = 0.5;

/**
 * The table pattern `source` was written with (`sciobench write --seed seed`): N from frame 0's
 * positions (12 N bytes), and frame 0 must mostly equal the pattern's (at least
 * {@link OWN_DATA_FRACTION} of its words, so a damaged frame is still verified and reported).
 * Data sciobench did not write (a hoomd file of gsd, another seed) is refused in one line (exit 2):
 * a comparison with a pattern it never held would claim corruption.
 */
export function tablePatternOf(source: FrameSource, seed: number, fileBytes: number): TableFrames {
  const path = source.path;
  // data the file does not hold was never written: no table frame to build and compare
  const located = source.frameCount > 0 && source.locate ? source.locate(0) : [];
  // (a store's chunk is at an offset of its own member file, and may be compressed)
  const past = located.find((c) =>
    c.member === undefined && c.offset >= 0 && c.offset + c.bytes > fileBytes
  );
  if (past !== undefined) {
    throw new UsageError(
      `--verify: ${path} does not hold table frames: chunk '${past.name}' of frame 0 ` +
        `([${past.offset}, ${past.offset + past.bytes})) lies past the end of the file ` +
        `(${fileBytes} bytes), never written`,
    );
  }
  const chunks = source.frameCount > 0 ? source.readFrame(0) : [];
  const first = chunks.find((c) => c.name.endsWith("position")) ?? chunks[0];
  const n = first ? first.data.length / 12 : 0;
  const refuse = (why: string) =>
    new UsageError(
      `--verify: ${path} ${why}; --verify checks the frames 'sciobench write --seed ${seed}' ` +
        "writes: give the --seed it was written with, or read it without --verify (the " +
        "format's own checks still run)",
    );
  if (!Number.isInteger(n) || n <= 0) throw refuse("does not hold the table's frames");
  const pattern = new TableFrames(n, seed);
  let same = 0;
  let words = 0;
  for (const want of pattern.frame(0).chunks) {
    const got = chunks.find((c) => c.name === want.name) ??
      chunks.find((c) => c.name.endsWith(want.name.slice(want.name.indexOf("/") + 1)));
    const w = new Uint8Array(want.data.buffer, want.data.byteOffset, want.data.byteLength);
    words += w.length >>> 2;
    if (got === undefined || got.data.length !== w.length) continue;
    const a = new Int32Array(w.slice().buffer);
    const b = new Int32Array(got.data.slice().buffer, 0, a.length);
    for (let i = 0; i < a.length; i++) if (a[i] === b[i]) same++;
  }
  if (same < OWN_DATA_FRACTION * words) {
    throw refuse(
      `was not written by sciobench with seed ${seed} (frame 0 matches ${
        Math.round((100 * same) / Math.max(1, words))
      }% of that data)`,
    );
  }
  return pattern;
}

/**
 * The page-cache step before each phase of a read in cache state `cache`: cold drops `path`;
 * warm reads it through at the first step and then only measures what is cached (no drop
 * before any phase); direct (O_DIRECT reads bypass the cache) only measures.
 */
function cacheStep(path: string, cache: "cold" | "warm" | "direct"): () => CacheDrop {
  let warmed = false;
  return () => {
    if (cache === "warm" && !warmed) {
      warmed = true;
      return prepareCache(path, "warm");
    }
    if (cache === "warm") return { seconds: 0, residentAfter: residency(path) };
    // O_DIRECT reads bypass the page cache: no drop is made, what is cached is only measured
    // mutant: read-direct-drop
    return cache === "direct" ? { seconds: 0, residentAfter: residency(path) } : dropCache(path);
  };
}

/** A file opened for `read`'s timed phases. */
interface OpenedRead {
  /** The open file. */
  readonly source: FrameSource;
  /** What the open measured. */
  readonly open: PhaseSample;
  /** The table pattern the frames are checked against (--verify). */
  readonly pattern: TableFrames | undefined;
  /** The page cache after the first cache step (before the open). */
  readonly first: CacheDrop;
}

/**
 * The untimed steps and the timed open before `read`'s phases: the first cache step (`drop`),
 * with --verify an untimed probe of the table pattern (and the step again), the open (timed),
 * the expected bytes made, and the step again: an open that scans the file (f77, IEEEIO)
 * cached it.
 */
function openForRead(
  path: string,
  framing: string,
  optionItems: readonly string[] | undefined,
  settings: ReadSettings,
  drop: () => CacheDrop,
  fileBytes: number,
): OpenedRead {
  const { transfer, allowExternal } = settings;
  // mutant: read-cold-drop
  const drop1 = drop();
  // With --verify the frames are the table's: N follows from the first chunk (12 N bytes of
  // positions), so formats without types (Fortran records) are read with the table's layout.
  let pattern: TableFrames | undefined;
  if (settings.verify) {
    const probe = openUserFile(path, framing, optionItems, "read", { transfer, allowExternal });
    try {
      refuseEmpty(probe);
      pattern = tablePatternOf(probe, settings.seed, fileBytes);
    } finally {
      probe.close();
    }
    drop();
  }
  const om = startMeter("open");
  const source = openUserFile(path, framing, optionItems, "read", {
    layout: pattern?.layout,
    transfer,
    allowExternal,
  });
  const o = om.stop();
  refuseEmpty(source);
  try {
    // --verify: the expected bytes in the file's byte order (big-endian netCDF: a swapped copy
    // of a frame) are made before the reads are timed, as the native arrays are
    // mutant: read-expected-untimed
    if (pattern) prepareVerified(source, pattern);
    drop();
  } catch (e) {
    source.close();
    throw e;
  }
  return { source, open: o, pattern, first: drop1 };
}

/** What `read`'s two timed phases measured. */
interface TimedPhases {
  /** The sequential phase's sample. */
  readonly read: PhaseSample;
  /** Its payload bytes, pieces (frames, or blocks) and their latencies. */
  readonly sequential: PhaseRead;
  /** The random phase's sample. */
  readonly random: PhaseSample;
  /** Its payload bytes, pieces and their latencies. */
  readonly shuffled: PhaseRead;
  /** The sequential phase's pread calls' latencies, ns. */
  readonly readCalls: LatencyHistogram;
  /** The random phase's pread calls' latencies, ns. */
  readonly randomCalls: LatencyHistogram;
}

/** Times `phases`: the sequential read, the cache step (`drop`), the random read. */
async function timePhases(phases: Phases, drop: () => CacheDrop): Promise<TimedPhases> {
  const readCalls = new LatencyHistogram();
  const randomCalls = new LatencyHistogram();
  const before = recordPreadLatency(readCalls);
  try {
    const rm = startMeter("read");
    const sequential = await phases.sequential();
    const read = rm.stop();
    recordPreadLatency(undefined);
    drop();
    recordPreadLatency(randomCalls);
    const xm = startMeter("random");
    const shuffled = await phases.random();
    const random = xm.stop();
    return { read, sequential, random, shuffled, readCalls, randomCalls };
  } finally {
    recordPreadLatency(before);
  }
}

/** The row of a read of `opened` (a file of `fileBytes`) whose phases took `t`; cold_ok unset. */
function readRow(
  path: string,
  opened: OpenedRead,
  fileBytes: number,
  t: TimedPhases,
  unit: string,
  verify: boolean,
  cache: string,
  transfer: Transfer | undefined,
  queue: QueueSpec | undefined,
): Row {
  const { source, open: o } = opened;
  const { read: r, random: x } = t;
  const { bytes, pieces: frames } = t.sequential;
  const { bytes: randomBytes, pieces: units } = t.shuffled;
  const mib = 2 ** 20;
  return {
    framing: source.framing,
    path,
    frames: source.frameCount,
    file_bytes: fileBytes,
    open_ms: o.wallS * 1000,
    read_MiBps: bytes / mib / r.wallS,
    random_MiBps: randomBytes / mib / x.wallS,
    random_ms: units ? (x.wallS / units) * 1000 : 0,
    read_frames: frames,
    read_bytes: bytes,
    random_bytes: randomBytes,
    read_s: r.wallS,
    random_s: x.wallS,
    read_user_s: r.userS,
    read_sys_s: r.sysS,
    read_dev_bytes: r.devReadBytes,
    random_dev_bytes: x.devReadBytes,
    resident_after_drop: opened.first.residentAfter,
    fs_type: statfs(path).typeName,
    verified: verify || unit !== "frame",
    unit,
    random_units: units,
    open_dev_bytes: o.devReadBytes,
    cache,
    cold_ok: "",
    open_cold_ok: "",
    read_cold_ok: "",
    random_cold_ok: "",
    cold_why: "",
    ...transferColumns(transfer),
    ...queueColumns(queue),
    ...latencyFields("read", t.sequential.latency, r.wallS),
    ...latencyFields("random", t.shuffled.latency, x.wallS),
    ...callLatencyFields("read", t.readCalls),
    ...callLatencyFields("random", t.randomCalls),
  };
}

/**
 * The untimed warm-up before `read` opens its file: a native framing writes a tiny file of table
 * frames in a scratch directory of the temporary directory and reads it back through the phases'
 * own code (the same transfer, engine, depth and verification), so that V8 has compiled and
 * optimized the read path before it is timed. The user's file is not touched. A failure (a
 * temporary directory refusing O_DIRECT) is left alone: the timed phases run as they would.
 */
async function warmUpRead(framing: string, settings: ReadSettings): Promise<void> {
  const backend = backendByName(framing);
  if (backend.kind !== "native") return;
  const frames = new TableFrames(WARM_UP_N, settings.seed, 0);
  const pattern = settings.verify ? frames : undefined;
  const overlap = settings.verify && readOverlap(settings.transfer, undefined).mode !== "none";
  const quiet = new Progress({ quiet: true });
  try {
    await withScratchDir(Deno.env.get("TMPDIR") ?? "/tmp", async (dir) => {
      const path = `${dir}/warm-up.${backend.name}`;
      const transfer = settings.transfer;
      await writeFrames(
        backend,
        path,
        { create: "truncate", fsync: "none", transfer },
        WARM_UP_FRAMES,
        (i) => frames.frame(i),
      );
      const source = backend.openReader(path, { layout: frames.layout, transfer });
      try {
        if (pattern) prepareVerified(source, pattern);
        const bytes = storeBytes(path);
        for (let r = 0; r < WARM_UP_ROUNDS; r++) {
          const phases = framePhases(
            source,
            settings.seed,
            Infinity,
            bytes,
            quiet,
            pattern,
            () => {},
            overlap,
            settings.queue,
          );
          await phases.sequential();
          await phases.random();
        }
      } finally {
        source.close();
      }
    });
  } catch {
    // the timed phases run unwarmed; their own failures, if any, are reported there
  }
}

/**
 * Measures reading `path` with the backend named `framing` and its `--option` items (open,
 * sequential, random; cold unless `settings.cache` is warm) and returns the row with its audit
 * trail; `beat` is called every 64 frames (progress for a watching parent process), and
 * `progress` shows the phases (the caller begins and labels it).
 */
export async function measureRead(
  path: string,
  framing: string,
  optionItems: readonly string[] | undefined,
  settings: ReadSettings,
  beat: () => void = () => {},
  progress: Progress = new Progress({ quiet: true }),
): Promise<Row> {
  const { seed, sample, transfer } = settings;
  // --verify --direct: frame k verified while frame k + 1's read is in flight (native AIO)
  // mutant: read-verify-direct-aio
  const overlap = settings.verify && readOverlap(transfer, undefined).mode !== "none";
  const fileBytes = storeBytes(path);
  const cache = cacheState(transfer, settings.cache);
  const drop = cacheStep(path, cache);
  // mutant: read-warm-up
  await warmUpRead(framing, settings);
  // V8's first major collection, here rather than in a timed phase
  // mutant: read-heap-settle
  await settleHeapUntimed();
  startAudit();
  try {
    const opened = openForRead(path, framing, optionItems, settings, drop, fileBytes);
    const { source, pattern } = opened;
    try {
      // A file without frames (HDF5 datasets, netCDF-4 without an unlimited dimension) is read
      // by dataset and block instead (lib/workloads/blocks.ts).
      const phases = source.frameCount === 0 && source.datasets && source.readRegion
        ? blockPhases(source, seed, sample, progress, beat, drop)
        : framePhases(
          source,
          seed,
          sample,
          fileBytes,
          progress,
          pattern,
          beat,
          overlap,
          settings.queue,
        );
      // the queue's buffers made and touched untimed
      if (settings.queue && phases.unit === "frame") source.reserveQueued?.(settings.queue);
      const timed = await timePhases(phases, drop);
      progress.clear();
      const row = readRow(
        path,
        opened,
        fileBytes,
        timed,
        phases.unit,
        settings.verify,
        cache,
        transfer,
        settings.queue,
      );
      attachAudit(row, finishAudit());
      judgeCold(row, cache, coldEvidence(row, statfs(path).type));
      return row;
    } finally {
      source.close();
    }
  } finally {
    finishAudit();
  }
}
