/**
 * How `sciobench write` changes FILE safely: a new or replaced FILE is written to a temporary
 * name beside it and renamed over it when complete (by a library child for a library framing);
 * `--append` adds frames under an undo journal. Writers lock FILE; SIGINT and SIGTERM leave it
 * as it was (or complete), with one line.
 * @module
 */
import { detectBackend, detectStoreBackend, usableBackend } from "../../backends/registry.ts";
import type { Backend, FrameSource, FsyncPolicy } from "../../backends/backend.ts";
import { IoError, SciobenchError, UsageError } from "../../core/errors.ts";
import type { EndianOption } from "../../framings/types.ts";
import type { ChunkLayout } from "../../framings/types.ts";
import type { OptionValues } from "../../framings/options.ts";
import {
  checkOutputTarget,
  checkStoreTarget,
  commitTemp,
  commitTempStore,
  removeStaleTemps,
  tempPathFor,
} from "../../io/atomic.ts";
import { hasMember, isDirectory, removeStore, syncStore } from "../../io/store.ts";
import { FileHandle } from "../../io/file.ts";
import { onInterrupt } from "../../io/interrupt.ts";
import { reportRollBack, rollBack, undoInterruptedAppend } from "../../io/journal.ts";
import { lockFile } from "../../io/lock.ts";
import type { Transfer } from "../../io/transfer.ts";
import { diskFullNote } from "../../peers/common.ts";
import { warn } from "../../core/diagnostics.ts";
import type { RowAudit } from "../../sys/audit.ts";
import type { PhaseSample } from "../../sys/meter.ts";
import type { FlagValues } from "../../cli/flags.ts";
import {
  type ChildOutcome,
  failureMessage,
  isolates,
  LibraryChild,
  libraryLimits,
  relayToTerminal,
} from "../isolate.ts";
import { requireFile } from "../open.ts";
import { backendOptionArgs, parseFsync, parseTransfer } from "../settings.ts";
import { BYTES_PER_PARTICLE, type TableFrames } from "../table/mod.ts";
import { measureWrite, type WriteJob, type WriteResult } from "./mod.ts";

/** A checked write: FILE, the frames to write, and the flags that say how. */
export interface WritePlan {
  /** FILE as given. */
  readonly path: string;
  /** The directory FILE is in (its free space checked; `--direct` probed there). */
  readonly dir: string;
  /** Particles per frame. */
  readonly n: number;
  /** Frames to write. */
  readonly count: number;
  /** Data seed. */
  readonly seed: number;
  /** Byte order asked for, if any. */
  readonly endian?: EndianOption;
  /** The table's frames of N particles and this seed. */
  readonly frames: TableFrames;
  /** The flags as parsed. */
  readonly values: FlagValues<"write">;
}

/** The backend's settings, checked before FILE is touched. */
interface Settled {
  /** The backend that writes. */
  readonly backend: Backend;
  /** Its `--option` values. */
  readonly backendOptions: OptionValues;
  /** `--fsync`. */
  readonly fsync: FsyncPolicy;
  /** `--bs` / `--direct`. */
  readonly transfer: Transfer | undefined;
}

/** FILE written: the backend and its settings, the first frame's index, what was measured. */
export interface Written extends Settled {
  /** Index of the first frame written (the frames FILE held before, with --append). */
  readonly first: number;
  /** Wall and CPU time, device bytes of the write phase. */
  readonly sample: PhaseSample;
  /** The calls the write made, for --audit. */
  readonly audit: RowAudit | undefined;
}

/** Whether FILE is complete: a signal after that says so instead of undoing anything. */
export interface WriteState {
  /** True once FILE holds every frame (renamed into place, or the append committed). */
  complete: boolean;
}

/** The backend's --option, --fsync, --bs and --direct, checked before FILE is touched. */
function settle(backend: Backend, p: WritePlan): Settled {
  return {
    backend,
    backendOptions: backendOptionArgs(backend, p.values.option, "write"),
    fsync: parseFsync(p.values.fsync, [backend]),
    transfer: parseTransfer(p.values, [backend], p.dir),
  };
}

/** What a write needs besides the backend and its file (a library child gets it as JSON). */
function jobOf(p: WritePlan, s: Settled, first: number): WriteJob {
  return {
    n: p.n,
    count: p.count,
    seed: p.seed,
    first,
    endian: p.endian,
    fsync: s.fsync,
    transfer: s.transfer,
    options: p.values.option ?? [],
  };
}

/**
 * Writes the plan's frames to FILE: added to it (`--append`), else as a new file that replaces
 * it when complete. `state.complete` turns true once FILE is complete.
 */
export async function writeFile(p: WritePlan, state: WriteState): Promise<Written> {
  return p.values.append ? await appendFrames(p, state) : await replaceFile(p, state);
}

/** The frames FILE holds, its layout checked against the frames to append. */
function framesHeld(path: string, p: WritePlan, s: Settled): number {
  const existing = s.backend.openReader(path, {
    layout: p.frames.layout,
    backendOptions: s.backendOptions,
  });
  try {
    const first = existing.frameCount;
    checkSameLayout(existing, p.frames.layout);
    return first;
  } finally {
    existing.close();
  }
}

/** Appends the frames after frame `first` of FILE, then disarms `undo` (armed by the caller). */
async function measureAppend(
  path: string,
  p: WritePlan,
  s: Settled,
  first: number,
  state: WriteState,
  undo: () => void,
): Promise<Written> {
  try {
    const r = await measureWrite(s.backend, path, "append", s.backendOptions, jobOf(p, s, first));
    state.complete = true;
    return { ...s, first, sample: r.sample, audit: r.audit };
  } finally {
    undo();
  }
}

/**
 * Appends the frames to FILE under its lock: an interrupted append of an earlier run rolled
 * back first, the framing detected (or `--framing`), the layout checked against the frames it
 * holds, and an undo of this append if a signal comes before it is complete.
 */
async function appendFrames(p: WritePlan, state: WriteState): Promise<Written> {
  const { path, values } = p;
  if (isDirectory(path)) return await appendToStore(p, state);
  requireFile(path, false);
  const lock = await lockFile(path, values.wait);
  try {
    reportRollBack(path, rollBack(path));
    const backend = values.framing === undefined
      ? detectBackend(path)
      : usableBackend(values.framing);
    const s = settle(backend, p);
    if (backend.kind === "peer") {
      // Before the library opens the file (HDF5 would also trip over the lock held here).
      throw new UsageError(`peer '${backend.name}' cannot append to an existing file`);
    }
    const first = framesHeld(path, p, s);
    const sizeBefore = Deno.statSync(path).size;
    const undo = onInterrupt(() =>
      undoInterruptedAppend(path, sizeBefore) === "complete"
        ? `${path} is complete`
        : `${path} was left as it was`
    );
    return await measureAppend(path, p, s, first, state, undo);
  } finally {
    lock.release();
  }
}

/**
 * Appends the frames to the store FILE (a directory) under its lock: an interrupted append of an
 * earlier run rolled back first, its framing detected from its metadata files (or `--framing`),
 * the layout checked, and an undo of this append if a signal comes before it is complete.
 */
async function appendToStore(p: WritePlan, state: WriteState): Promise<Written> {
  const { path, values } = p;
  const backend = values.framing === undefined
    ? detectStoreBackend(path)
    : usableBackend(values.framing);
  const store = backend.store;
  if (store === undefined || backend.kind === "peer") {
    throw new UsageError(
      `${backend.name} cannot append to ${path}: it is a directory, not a store ${backend.name} ` +
        "writes",
    );
  }
  const lock = await lockFile(path, values.wait);
  try {
    if (store.undo(path)) {
      warn(`${path}: an interrupted append was rolled back; the store is as it was before it`);
    }
    const s = settle(backend, p);
    const first = framesHeld(path, p, s);
    const undo = onInterrupt(() =>
      store.undo(path) ? `${path} was left as it was` : `${path} is complete`
    );
    return await measureAppend(path, p, s, first, state, undo);
  } finally {
    lock.release();
  }
}

/**
 * Writes a new FILE (or, with --force, its replacement) to a temporary name beside it, fsyncs
 * it and renames it into place; an existing FILE is locked meanwhile, and stays as it was after
 * any failure or signal (the temporary file removed).
 */
async function replaceFile(p: WritePlan, state: WriteState): Promise<Written> {
  const { path, values } = p;
  const s = settle(usableBackend(values.framing!), p);
  const { fsync } = s;
  const store = s.backend.store;
  const target = store === undefined
    ? checkOutputTarget(path, values.force)
    : checkStoreTarget(path, values.force, (dir) => store.markers.some((m) => hasMember(dir, m)));
  const lock = target.exists ? await lockFile(target.path, values.wait) : undefined;
  try {
    removeStaleTemps(target.path);
    const temp = tempPathFor(target.path);
    const removeTemp = () => {
      try {
        removeStore(temp);
      } catch {
        // never made, or gone
      }
    };
    const undo = onInterrupt(() => {
      removeTemp();
      return target.exists ? `${path} was left as it was` : `${path} was not written`;
    });
    try {
      const job = jobOf(p, s, 0);
      // A library on a user's path runs in a child; this process owns the temporary file.
      const r = isolates(s.backend)
        ? await writeInChild(s.backend.name, temp, path, target.exists, job)
        : await measureWrite(s.backend, temp, "new", s.backendOptions, job);
      // --fsync none: the timing held no fsync, but FILE never appears unsynced
      // mutant: write-cli-fsync-none
      if (fsync === "none" && store === undefined) syncFile(temp);
      else if (fsync === "none") syncStore(temp);
      if (store === undefined) commitTemp(temp, target);
      else commitTempStore(temp, target);
      state.complete = true;
      return { ...s, first: 0, sample: r.sample, audit: r.audit };
    } catch (e) {
      removeTemp();
      throw e;
    } finally {
      undo();
    }
  } finally {
    lock?.release();
  }
}

/** Bytes free beside a failed library write below which the failure is the disk being full. */
const FULL_DISK_MARGIN = 1 << 20;

/**
 * Writes `job`'s frames to `temp` with the library of peer `framing` in a library child and
 * returns what it measured. A crash, hang or error of the library is one line naming FILE
 * (`path`) and what became of it (`existed`: left as it was, else not written); a failure with
 * the disk nearly full (less than a frame and 1 MiB free) says so instead of the library's
 * words. The caller removes `temp` after any failure; a signal kills the child first.
 */
async function writeInChild(
  framing: string,
  temp: string,
  path: string,
  existed: boolean,
  job: WriteJob,
): Promise<WriteResult> {
  // The read limits, widened for a write of known size: memory for a few frames, and silence
  // for the final fsync at 1 MiB/s (the child beats at every frame, not inside close).
  const base = libraryLimits();
  const frameBytes = job.n * BYTES_PER_PARTICLE;
  const child = LibraryChild.start({
    ...base,
    memoryBytes: Math.max(base.memoryBytes, 8 * frameBytes),
    wallSeconds: base.wallSeconds + Math.ceil((frameBytes * job.count) / 2 ** 20),
  });
  const stop = onInterrupt(() => {
    child.kill();
  });
  let outcome: ChildOutcome;
  let result: WriteResult | undefined;
  try {
    outcome = await child.request({
      op: "write",
      path: temp,
      framing,
      options: job.options,
      settings: { ...job },
    }, (m) => {
      if (m.t === "row") result = m.row as unknown as WriteResult;
      else relayToTerminal(m);
    });
  } finally {
    stop();
    await child.close();
  }
  if (outcome.kind === "ok" && result !== undefined) return result;
  const fate = existed ? `${path} was left as it was` : `${path} was not written`;
  const full = diskFullNote(temp, frameBytes + FULL_DISK_MARGIN);
  if (full !== undefined) throw new IoError(`${path}: ${full}; ${fate}`);
  if (outcome.kind === "error") {
    throw new SciobenchError(`${outcome.message} (writing ${path}; ${fate})`, outcome.exitCode);
  }
  if (outcome.kind === "ok") {
    throw new IoError(`${path}: the library child sent no result; ${fate}`);
  }
  throw new IoError(`${failureMessage(outcome, framing, path, child.limits, "writing")}; ${fate}`);
}

/** fsyncs `path` (a complete file written with --fsync none, before it is renamed into place). */
function syncFile(path: string): void {
  const f = FileHandle.open(path, "read");
  try {
    f.sync();
  } finally {
    f.close();
  }
}

/**
 * UsageError when the frames to append (`layout`) differ in a chunk's type or shape from the
 * frames `source` already holds (its first and last frame are compared, chunks by name).
 */
function checkSameLayout(source: FrameSource, layout: readonly ChunkLayout[]): void {
  if (source.frameCount === 0 || !source.locate) return;
  for (const frame of new Set([0, source.frameCount - 1])) {
    for (const ref of source.locate(frame)) {
      const want = layout.find((c) => c.name === ref.name);
      if (!want) continue;
      if (want.dtype !== ref.dtype || want.shape.join("x") !== ref.shape.join("x")) {
        throw new UsageError(
          `${source.path} holds ${ref.name} as ${ref.shape.join("x")} ${ref.dtype} in frame ` +
            `${frame}; appending ${want.shape.join("x")} ${want.dtype} would mix layouts ` +
            `(give the file's --n)`,
        );
      }
    }
  }
}
