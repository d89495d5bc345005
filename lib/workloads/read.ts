/**
 * The `read` workload's measurement: time reading an existing file cold (open, sequential read,
 * random read; a cache drop before each phase, none with O_DIRECT), one row with its audit trail.
 * @module
 */
import { FormatError, UsageError } from "../core/errors.ts";
import { type CacheDrop, type ColdEvidence, dropCache, residency } from "../io/cache.ts";
import type { Transfer } from "../io/transfer.ts";
import { cacheState, judgeCold, readOverlap, transferColumns } from "./transfer.ts";
import type { Row } from "../report/row.ts";
import { Progress } from "../report/progress.ts";
import { attachAudit, finishAudit, startAudit } from "../sys/audit.ts";
import { startMeter } from "../sys/meter.ts";
import { statfs } from "../sys/libc.ts";
import {
  prepareVerified,
  readVerified,
  readVerifiedFrames,
  Rng,
  shuffledOrder,
} from "./pattern.ts";
import { TableFrames } from "./table/mod.ts";
import { type Block, planBlocks, readBlocks, referenceCrcs } from "./blocks.ts";
import type { FrameSource } from "../backends/backend.ts";
import type { ColumnDoc } from "../report/human.ts";
import { columnDocs, READ_COLUMN_NAMES } from "./columns.ts";
import { openUserFile } from "./open.ts";

/** The columns of `read`'s row, with units, in CSV order (from the schema). */
export const READ_COLUMN_DOCS: readonly ColumnDoc[] = columnDocs(READ_COLUMN_NAMES);

/** The two timed phases of `read`: what each reads, in pieces (frames or blocks), and bytes. */
interface Phases {
  /** `frame`, or for files without frames `chunk`, `block` or `chunk+block`. */
  readonly unit: string;
  sequential(): Promise<{ bytes: number; pieces: number }>;
  random(): Promise<{ bytes: number; pieces: number }>;
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
): Phases {
  // with --verify each frame is read and compared as stored (no swap to native), else decoded
  const read = (i: number): readonly { readonly data: Uint8Array }[] =>
    pattern ? readVerified(source, i, pattern) : source.readFrame(i);
  let frames = 0;
  /**
   * With --verify --direct: frame k verified while frame k + 1's read is in flight (native AIO,
   * lib/backends/overlap.ts); `order` is known in advance, so no frame is read past it.
   */
  const verified = async (order: ArrayLike<number>, phase: string) => {
    let bytes = 0;
    await readVerifiedFrames(source, order, pattern!, (k, chunks) => {
      for (const c of chunks) bytes += c.data.length;
      if ((k & 63) !== 0) return undefined;
      progress.update(k / order.length, phase);
      beat();
    }, overlap);
    return { bytes, pieces: order.length };
  };
  const locate = source.locate?.bind(source);
  const overlapped = pattern !== undefined && overlap && locate !== undefined;
  return {
    unit: "frame",
    async sequential() {
      if (overlapped) {
        // the frames the loop below would read, from the index (its reads stop at them)
        for (let bytes = 0; frames < source.frameCount && bytes < sample; frames++) {
          for (const r of locate(frames)) bytes += r.bytes;
        }
        return await verified(Uint32Array.from({ length: frames }, (_, i) => i), "read");
      }
      let bytes = 0;
      while (frames < source.frameCount && bytes < sample) {
        for (const c of read(frames)) bytes += c.data.length;
        frames++;
        if ((frames & 63) === 0) {
          progress.update(bytes / Math.min(sample, fileBytes), "read");
          beat();
        }
      }
      return { bytes, pieces: frames };
    },
    async random() {
      const order = shuffledOrder(source.frameCount, frames, new Rng(seed + 1));
      if (overlapped) return await verified(order, "random");
      let bytes = 0;
      for (let k = 0; k < order.length; k++) {
        const i = order[k]!;
        for (const c of read(i)) bytes += c.data.length;
        if ((k & 63) === 0) {
          progress.update(k / order.length, "random");
          beat();
        }
      }
      return { bytes, pieces: order.length };
    },
  };
}

/**
 * Phases for a file without frames: each numeric dataset whole in file order, then seeded
 * random chunks or blocks; both checked against CRC-32s of a first read made now (the caller
 * drops the cache before each timed phase).
 */
function blockPhases(
  source: FrameSource,
  seed: number,
  sample: number,
  progress: Progress,
  beat: () => void,
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
  dropCache(source.path);
  const run = (blocks: readonly Block[], phase: string) => ({
    bytes: readBlocks(source, blocks, reference, (k) => {
      if ((k & 63) === 0) {
        progress.update(k / blocks.length, phase);
        beat();
      }
    }),
    pieces: blocks.length,
  });
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
function tablePatternOf(source: FrameSource, seed: number, fileBytes: number): TableFrames {
  const path = source.path;
  // data the file does not hold was never written: no table frame to build and compare
  const located = source.frameCount > 0 && source.locate ? source.locate(0) : [];
  const past = located.find((c) => c.offset >= 0 && c.offset + c.bytes > fileBytes);
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

/** What a read row shows about its cold reads, for `cold_ok` ({@link judgeCold}). */
export function coldEvidence(row: Row, fsType: number): ColdEvidence {
  return {
    fsType,
    residentAfterDrop: Number(row.resident_after_drop),
    readBytes: Number(row.read_bytes) + Number(row.random_bytes),
    deviceReadBytes: Number(row.read_dev_bytes) + Number(row.random_dev_bytes),
  };
}

/**
 * Measures reading `path` with the backend named `framing` and its `--option` items (open,
 * sequential, random; cold) and returns the row with its audit trail; `beat` is called every 64
 * frames (progress for a watching parent process).
 */
export async function measureRead(
  path: string,
  framing: string,
  optionItems: readonly string[] | undefined,
  settings: ReadSettings,
  beat: () => void = () => {},
): Promise<Row> {
  const { seed, sample, transfer, allowExternal } = settings;
  // --verify --direct: frame k verified while frame k + 1's read is in flight (native AIO)
  // mutant: read-verify-direct-aio
  const overlap = settings.verify && readOverlap(transfer, undefined).mode !== "none";
  const fileBytes = Deno.statSync(path).size;
  const cache = cacheState(transfer, "cold");
  // O_DIRECT reads bypass the page cache: no drop is made, what is cached is only measured
  const drop = (): CacheDrop =>
    // mutant: read-direct-drop
    cache === "direct" ? { seconds: 0, residentAfter: residency(path) } : dropCache(path);
  startAudit();
  try {
    // mutant: read-cold-drop
    const drop1 = drop();
    // With --verify the frames are the table's: N follows from the first chunk (12 N bytes of
    // positions), so formats without types (Fortran records) are read with the table's layout.
    let pattern: TableFrames | undefined;
    if (settings.verify) {
      const probe = openUserFile(path, framing, optionItems, "read", { transfer, allowExternal });
      try {
        refuseEmpty(probe);
        pattern = tablePatternOf(probe, seed, fileBytes);
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
    // --verify: the expected bytes in the file's byte order (big-endian netCDF: a swapped copy of
    // a frame) are made before the reads are timed, as the native arrays are
    // mutant: read-expected-untimed
    if (pattern) prepareVerified(source, pattern);
    // an open that scans the file (f77, IEEEIO) cached it: the read starts from a second drop
    drop();
    try {
      // One file, one row: an updating line on a terminal, nothing in logs.
      const progress = new Progress({ quiet: !Deno.stderr.isTerminal() });
      progress.begin(`read ${path}`);
      // A file without frames (HDF5 datasets, netCDF-4 without an unlimited dimension) is read
      // by dataset and block instead (lib/workloads/blocks.ts).
      const phases = source.frameCount === 0 && source.datasets && source.readRegion
        ? blockPhases(source, seed, sample, progress, beat)
        : framePhases(source, seed, sample, fileBytes, progress, pattern, beat, overlap);
      const rm = startMeter("read");
      const { bytes, pieces } = await phases.sequential();
      const r = rm.stop();
      drop();
      const xm = startMeter("random");
      const { bytes: randomBytes, pieces: units } = await phases.random();
      const x = xm.stop();
      progress.clear();
      const frames = pieces;
      const mib = 2 ** 20;
      const row: Row = attachAudit({
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
        resident_after_drop: drop1.residentAfter,
        fs_type: statfs(path).typeName,
        verified: settings.verify || phases.unit !== "frame",
        unit: phases.unit,
        random_units: units,
        open_dev_bytes: o.devReadBytes,
        cache,
        cold_ok: "",
        ...transferColumns(transfer),
      }, finishAudit());
      judgeCold(row, cache, coldEvidence(row, statfs(path).type));
      return row;
    } finally {
      source.close();
    }
  } finally {
    finishAudit();
  }
}
