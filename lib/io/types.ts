/**
 * What the file plumbing and the pure framings exchange: positioned writes an encoder produces
 * and the I/O layer applies, and random access to a file's bytes the I/O layer hands a decoder.
 * @module
 */

/** One positioned write or a durability point produced by an encoder. */
export type WriteOp =
  | {
    /** Write `data` at byte `offset` of the file. */
    readonly kind: "write";
    /** Absolute byte offset (0 for a member of a store). */
    readonly offset: number;
    /** Bytes to write; valid only until the encoder is called again. */
    readonly data: Uint8Array;
    /**
     * Set by a framing whose files are directories (stores, Framing.store): the member file of
     * the store, a path relative to its root with `/` between directories (`particles/position/0.0.0`),
     * that `data` is the whole content of. Its directories are made as needed.
     */
    readonly member?: string;
  }
  | {
    /**
     * Copy `length` bytes of the file from byte `from` to byte `offset` (ranges that do not
     * overlap; the bytes at `from` are what earlier ops wrote). Only a writer created with the
     * writer option `fileCopies` emits it (gsd: its index block, which it then need not keep in
     * memory).
     */
    readonly kind: "copy";
    /** Absolute byte offset of the bytes copied. */
    readonly from: number;
    /** Absolute byte offset they are copied to. */
    readonly offset: number;
    /** Bytes copied. */
    readonly length: number;
  }
  | {
    /**
     * The format's own library would fsync here (e.g. gsd 2.7 after relocating its index). In a
     * store: every member written and every directory made so far is durable before what
     * follows (chunks before the metadata that makes them visible).
     */
    readonly kind: "sync";
  };

/** Synchronous random access to a file's bytes, provided by the I/O layer to decoders. */
export interface ByteSource {
  /** Path shown in error messages. */
  readonly path: string;
  /** File size in bytes. */
  readonly size: number;
  /** Reads exactly `length` bytes at `offset`; throws a FormatError naming the offset when the file is shorter. */
  read(offset: number, length: number): Uint8Array;
  /**
   * Optional, for a scan of many small records: the bytes from `offset` in place, at least
   * `length` of them (more when the source has them at hand, as a mapping does); undefined when
   * it has not (then use `read`). Valid only until the next call on the source: read it at once
   * and keep nothing of it. Bytes read in place are no read of the source's: report them with
   * `readInPlace`. `ahead`: the caller reads records close together from here on (a scan of
   * small records), so a window near the last may give all the bytes the source has at hand.
   */
  window?(offset: number, length: number, ahead?: boolean): Uint8Array | undefined;
  /** Optional: the caller read `bytes` bytes in place from windows (for a count of bytes read). */
  readInPlace?(bytes: number): void;
  /**
   * Reads into `buf` from byte `offset` until it is full or the file ends; returns the byte
   * count. Optional: lets a decoder that streams a large block reuse one buffer.
   */
  readInto?(buf: Uint8Array, offset: number): number;
}

/**
 * Read access to the members of a store (a directory of files, such as a Zarr store), provided
 * by the I/O layer to a framing's store decoder. Member names are relative to the store's root,
 * with `/` between directories; a name that would leave the store (`..`, an absolute path, an
 * empty part) is refused with a FormatError.
 */
export interface StoreMembers {
  /** Path of the store's root directory, for messages. */
  readonly path: string;
  /**
   * The whole content of member `name`, or undefined when there is no such file. FormatError
   * when it holds more than `limit` bytes (a metadata file is read whole only up to a limit).
   */
  read(name: string, limit: number): Uint8Array | undefined;
  /**
   * The names of the entries of directory `dir` of the store (`""`: its root), sorted; undefined
   * when there is no such directory. FormatError when it holds more than `limit` entries.
   */
  list(dir: string, limit: number): readonly string[] | undefined;
  /** Bytes of member `name`, or undefined when there is no such file. */
  sizeOf(name: string): number | undefined;
  /**
   * `length` bytes of member `name` from byte `offset` (fewer when the file ends first), or
   * undefined when there is no such file. The caller checks the range against {@link sizeOf}.
   */
  readAt(name: string, offset: number, length: number): Uint8Array | undefined;
}
