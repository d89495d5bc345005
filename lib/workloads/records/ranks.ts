/**
 * Which records an MPI rank writes and reads back in a records run: its own seeded data, the file
 * it reads (`--reorder`: rank r reads rank (r + reorder) mod R's), and under `--layout shared` its
 * part of one file per target (records r x R .. (r + 1) x R - 1, or in `--segments` interleaved
 * blocks: lib/mpi/shared.ts). A single
 * process is rank 0 of 1: its own file, its own records.
 * @module
 */
import type { Frame } from "../../framings/types.ts";
import { world } from "../../mpi/world.ts";
import { type SharedPart, sharedPart } from "../../mpi/shared.ts";
import { RecordFrames } from "./frames.ts";
import type { RecordsOptions, RecordsTarget } from "./options.ts";

/** This rank's records and files in a records run. */
export class RecordsRanks {
  /** This rank. */
  readonly rank: number;
  /** Ranks of the run (1 without MPI). */
  readonly size: number;
  /** The rank whose file (or part of the shared file) this rank reads back. */
  readonly readRank: number;
  /** This rank's records, as it writes them. */
  readonly frames: RecordFrames;
  /** The records of `readRank`, as this rank checks them when read back. */
  readonly readFrames: RecordFrames;
  /** One file per target for every rank (`--layout shared` under MPI). */
  readonly shared: boolean;
  /** This rank's records in a shared file (its numbers of them, `--segments` blocks). */
  readonly part: SharedPart;
  /** Whether this rank sizes and removes the file it writes (all but a shared file's ranks 1..). */
  readonly writer: boolean;
  /**
   * Record `g` of a shared file as this rank writes it: its own records, and under `--direct` the
   * few bytes of its neighbours' records on the pages it owns whole, which are then theirs.
   */
  readonly sharedRecord: (g: number) => Frame;
  readonly #options: RecordsOptions;
  /** A third rank's records (a neighbour under --direct), the last one asked for. */
  #other: { rank: number; frames: RecordFrames } | undefined;

  /** The ranks of a run of `options` as this rank of the MPI world sees them. */
  constructor(options: RecordsOptions) {
    const w = world();
    this.#options = options;
    this.rank = w.rank;
    this.size = w.size;
    this.readRank = (w.rank + (options.reorder ?? 0)) % w.size;
    this.frames = new RecordFrames(options.shape, options.dtype, options.seed, w.rank);
    this.readFrames = this.readRank === w.rank
      ? this.frames
      : new RecordFrames(options.shape, options.dtype, options.seed, this.readRank);
    this.shared = options.layout === "shared" && w.size > 1;
    this.part = sharedPart(this.frames.records, this.shared ? (options.segments ?? 1) : 1);
    this.writer = !this.shared || w.rank === 0;
    // A shared file's record g: the layout follows from the records' shape alone, so every rank
    // lays out every rank's records with its own data and writes its own
    this.sharedRecord = options.transfer?.direct
      ? (g: number) => this.#framesOf(this.part.ownerOf(g)).frame(g)
      : (g: number) => this.frames.frame(g);
  }

  /** The records of `rank`. */
  #framesOf(rank: number): RecordFrames {
    if (rank === this.rank) return this.frames;
    if (rank === this.readRank) return this.readFrames;
    if (this.#other?.rank !== rank) {
      const { shape, dtype, seed } = this.#options;
      this.#other = { rank, frames: new RecordFrames(shape, dtype, seed, rank) };
    }
    return this.#other.frames;
  }

  /** The file of target `t` in `dir` that `rank` writes. */
  fileOf(dir: string, t: RecordsTarget, rank: number): string {
    return `${dir}/records.${t.backend.name}.${t.endian}${
      this.size === 1 ? "" : this.shared ? ".shared" : `.r${rank}`
    }`;
  }

  /** The number in its file of the read rank's record `r`. */
  readRecord(r: number): number {
    return this.shared ? this.part.frameOf(r, this.readRank) : r;
  }

  /** The number in its file of this rank's record `r`. */
  ownRecord(r: number): number {
    return this.shared ? this.part.frameOf(r) : r;
  }

  /** Records in a file read back: every rank's in a shared file, else this rank's. */
  get fileRecords(): number {
    return this.shared ? this.frames.records * this.size : this.frames.records;
  }
}
