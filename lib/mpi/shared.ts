/**
 * One shared file written by every rank (`--layout shared`): each rank writes its own frames at
 * offsets known in advance, rank 0 the header, name lists and index. It works for the native
 * framings whose layout follows from the frame sizes alone (raw, f77, netcdf, gsd): every rank
 * runs the framing's pure writer (lib/framings) over every frame in order, so all ranks compute
 * the same positioned writes, and applies only those of its own frames (rank 0 also those of
 * `begin` and `finish`). The file is then byte for byte what one process writing all the frames
 * in that order would have written.
 * @module
 */
import { IoError, UsageError } from "../core/errors.ts";
import type { EndianOption, Frame, FrameWriter, Framing, WriteOp } from "../framings/types.ts";
import { FileHandle, WriteBatcher } from "../io/file.ts";
import { signalPoint } from "../io/scratch.ts";
import { injectedFailure, PeerRankFailed } from "./phase.ts";
import { type World, world } from "./world.ts";

/** The framings `--layout shared` supports. */
export const SHARED_LAYOUT_FRAMINGS: readonly string[] = ["raw", "f77", "netcdf", "gsd"];

/** UsageError (one line) unless the framing or peer `name` can be one file shared by ranks. */
export function checkSharedLayout(name: string): void {
  if (!SHARED_LAYOUT_FRAMINGS.includes(name)) {
    throw new UsageError(
      `--layout shared works for ${SHARED_LAYOUT_FRAMINGS.join(", ")} only; '${name}' ` +
        `cannot place frames at offsets known in advance (use --layout per-rank)`,
    );
  }
}

/** How the shared file is written: the framing's options, byte order, and the final fsync. */
export interface SharedWriteOptions {
  /** Byte order of the data (default native). */
  readonly endian?: EndianOption;
  /** fsync before close (default true). */
  readonly fsync?: boolean;
  /** The framing's own options (marker width, netCDF variant ...). */
  readonly backendOptions?: Readonly<Record<string, unknown>>;
}

/** The frames of one rank in a shared file: global indices first .. first + count - 1 of total. */
export interface SharedPart {
  /** Global index of this rank's first frame. */
  readonly first: number;
  /** Frames this rank writes. */
  readonly count: number;
  /** Frames in the file (all ranks). */
  readonly total: number;
}

/** Rank r's frames when every rank writes `perRank` frames: r x perRank .. */
export function sharedPart(perRank: number, w: World = world()): SharedPart {
  return { first: w.rank * perRank, count: perRank, total: perRank * w.size };
}

/**
 * Which bytes of which op each rank writes. In one process the ops apply in order and a later op
 * wins where two overlap (GSD zero-fills a relocated index block whose slots later frames fill);
 * ranks run concurrently, so each rank writes, of its own ops, only the bytes no later op
 * overwrites: the bytes each rank writes are then disjoint from every other rank's, and the
 * file ends up as the serial writer's whatever the order the ranks run in.
 */
export interface SharedPlan {
  /** This rank's part. */
  readonly part: SharedPart;
  /** Surviving [start, end) pieces of this rank's ops (by op number) that do not survive whole. */
  readonly pieces: ReadonlyMap<number, readonly (readonly [number, number])[]>;
  /** Number of ops in the whole file's stream (a check that both passes saw the same stream). */
  readonly ops: number;
}

/** Sorted, disjoint, merged byte ranges; `subtract` and `add` walk it with a binary search. */
class Ranges {
  readonly #starts: number[] = [];
  readonly #ends: number[] = [];

  /** Index of the first range whose end is after `at`. */
  #first(at: number): number {
    let lo = 0, hi = this.#ends.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (this.#ends[mid]! <= at) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  /** The parts of [start, end) not in the set. */
  subtract(start: number, end: number): [number, number][] {
    const out: [number, number][] = [];
    let at = start;
    for (let i = this.#first(start); i < this.#starts.length && this.#starts[i]! < end; i++) {
      if (this.#starts[i]! > at) out.push([at, this.#starts[i]!]);
      at = Math.max(at, this.#ends[i]!);
    }
    if (at < end) out.push([at, end]);
    return out;
  }

  /** Adds [start, end), merging with touching ranges. */
  add(start: number, end: number): void {
    const i = this.#first(start - 1);
    let s = start, e = end, n = 0;
    while (i + n < this.#starts.length && this.#starts[i + n]! <= end) {
      s = Math.min(s, this.#starts[i + n]!);
      e = Math.max(e, this.#ends[i + n]!);
      n++;
    }
    this.#starts.splice(i, n, s);
    this.#ends.splice(i, n, e);
  }
}

function ownerOf(g: number, part: SharedPart): number {
  return Math.floor(g / part.count);
}

/**
 * Plans this rank's writes (outside any timing): runs the writer over every frame once,
 * recording each op's byte range, then finds, from the last op back, what each of this rank's
 * ops leaves standing.
 */
export function planSharedFile(
  framing: Framing,
  options: SharedWriteOptions,
  part: SharedPart,
  frameAt: (g: number) => Frame,
  w: World = world(),
): SharedPlan {
  const writer = newWriter(framing, options);
  const starts: number[] = [];
  const ends: number[] = [];
  const owners: number[] = [];
  const record = (ops: readonly WriteOp[], owner: number) => {
    for (const op of ops) {
      if (op.kind !== "write" || op.data.length === 0) continue;
      starts.push(op.offset);
      ends.push(op.offset + op.data.length);
      owners.push(owner);
    }
  };
  record(writer.begin(), 0);
  for (let g = 0; g < part.total; g++) record(writer.writeFrame(frameAt(g)), ownerOf(g, part));
  record(writer.finish(), 0);
  const covered = new Ranges();
  const pieces = new Map<number, [number, number][]>();
  for (let k = starts.length - 1; k >= 0; k--) {
    const s = starts[k]!, e = ends[k]!;
    if (owners[k] === w.rank) {
      const left = covered.subtract(s, e);
      if (left.length !== 1 || left[0]![0] !== s || left[0]![1] !== e) pieces.set(k, left);
    }
    covered.add(s, e);
  }
  return { part, pieces, ops: starts.length };
}

function newWriter(framing: Framing, options: SharedWriteOptions): FrameWriter {
  checkSharedLayout(framing.name);
  return framing.createWriter({ ...options.backendOptions, endian: options.endian ?? "native" });
}

/** Applies this rank's share of `ops` (numbered from `seq`); returns the next op number. */
function apply(
  ops: readonly WriteOp[],
  seq: number,
  mine: boolean,
  plan: SharedPlan,
  batch: WriteBatcher | undefined,
  file: FileHandle | undefined,
): number {
  for (const op of ops) {
    if (op.kind === "sync") {
      if (mine) {
        batch!.flush();
        file!.sync();
      }
      continue;
    }
    if (op.kind === "copy") {
      // writers here are made without fileCopies (a copy would read other ranks' bytes)
      throw new Error("a shared file cannot apply copy ops");
    }
    if (op.data.length === 0) continue;
    if (mine) {
      const pieces = plan.pieces.get(seq);
      if (pieces === undefined) batch!.write(op.data, op.offset);
      else {
        for (const [s, e] of pieces) {
          batch!.write(op.data.subarray(s - op.offset, e - op.offset), s);
        }
      }
    }
    seq++;
  }
  return seq;
}

/**
 * Writes this rank's part of the shared file `path` (a collective: every rank calls it with the
 * same arguments but its own plan). `frameAt(g)` gives global frame g (any rank's data, as every
 * rank encodes every frame); `beforeFrame(i)` is called before each of this rank's frames.
 * Returns the seconds spent completing the file (rank 0's index and header, fsync, close).
 * A rank that fails stops the others here with {@link PeerRankFailed}, never a hang.
 */
export async function writeSharedFrames(
  framing: Framing,
  path: string,
  options: SharedWriteOptions,
  plan: SharedPlan,
  frameAt: (g: number) => Frame,
  beforeFrame?: (i: number) => void,
): Promise<number> {
  const w = world();
  const part = plan.part;
  let file: FileHandle | undefined;
  let batch: WriteBatcher | undefined;
  let writer: FrameWriter | undefined;
  let seq = 0;
  let failure: unknown;
  try {
    const created = newWriter(framing, options);
    writer = created;
    if (w.rank === 0) {
      file = FileHandle.open(path, "truncate");
      batch = new WriteBatcher(file);
    }
    seq = apply(created.begin(), seq, w.rank === 0, plan, batch, file);
  } catch (e) {
    failure = e;
  }
  w.barrier(); // rank 0 has created the file
  try {
    if (failure === undefined && writer) {
      if (!file) {
        file = FileHandle.open(path, "update");
        batch = new WriteBatcher(file);
      }
      const end = part.first + part.count;
      for (let g = 0; g < part.total; g++) {
        const mine = g >= part.first && g < end;
        if (mine) beforeFrame?.(g - part.first);
        seq = apply(writer.writeFrame(frameAt(g)), seq, mine, plan, batch, file);
        if (mine && g === part.first) injectedFailure("shared-write", w.rank);
        const y = signalPoint();
        if (y) await y;
      }
      batch!.flush();
    }
  } catch (e) {
    failure ??= e;
  }
  // Every rank's frames are in the file (or some rank failed) before rank 0 completes it.
  const [ok] = w.allreduce([failure === undefined ? 1 : 0], "min");
  if (failure !== undefined || ok !== 1) {
    try {
      file?.close();
    } catch {
      // the first failure is the one to report
    }
    if (failure !== undefined) throw failure;
    throw new PeerRankFailed(`${path}: another rank failed while writing the shared file`);
  }
  const t0 = performance.now();
  seq = apply(writer!.finish(), seq, w.rank === 0, plan, batch, file);
  if (seq !== plan.ops) {
    throw new IoError(`${path}: the writer made ${seq} writes, the plan ${plan.ops}`);
  }
  batch!.flush();
  if (options.fsync ?? true) file!.sync();
  file!.close();
  return (performance.now() - t0) / 1000;
}
