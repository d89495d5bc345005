/**
 * What a loader run reads and how (its settings, its open file), apart from the measurement
 * (./mod.ts), so that the reader processes (./readers.ts) and the open (./open.ts) share them.
 * @module
 */
import type { FrameSource, QueueSpec } from "../../backends/backend.ts";
import type { Transfer } from "../../io/transfer.ts";
import type { ExpectedFrames } from "../pattern.ts";

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
  /**
   * `--readers`: processes that read the batches, batch b by reader b mod K (1: the consumer
   * reads each batch itself when it needs it).
   */
  readonly readers: number;
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
