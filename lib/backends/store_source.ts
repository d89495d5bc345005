/**
 * The store source: reads the frames of a store framing (a directory of member files, such as a
 * Zarr store, or the same members in one zip file) through a store reader (lib/io/store.ts,
 * lib/io/zip.ts). A frame's chunks are member files of
 * their own: each is opened, read whole into the frame's reused buffer (or, when encoded, into
 * a scratch buffer and decoded by the framing's index) and closed; a member that does not exist
 * holds the format's fill value. Byte-swapped to native for `readFrame`, as stored for
 * `readFrameStored`.
 * @module
 */
import { NATIVE_ORDER, swapInPlace } from "../bytes/byteswap.ts";
import type { ByteOrder, ChunkRef, FrameIndex, Framing } from "../framings/types.ts";
import { DTYPE_SIZE } from "../framings/types.ts";
import { FormatError } from "../core/errors.ts";
import { giveBackSpareBuffer, takeSpareBuffer } from "../io/buffers.ts";
import { isDirectory, StoreReader } from "../io/store.ts";
import { ZipStoreReader } from "../io/zip.ts";
import type { FrameSource, ReadChunk, SourceOptions, StoredChunk } from "./backend.ts";

/** Alignment of each chunk in the frame buffer, bytes (a cache line; typed-array views). */
const LINE = 64;

/** A {@link FrameSource} over a store written by a store framing. */
export class StoreSource implements FrameSource {
  readonly path: string;
  readonly framing: string;
  readonly frameCount: number;
  readonly warnings: readonly string[];
  readonly departures: readonly string[];
  readonly storedOrder: ByteOrder | undefined;
  readonly #reader: StoreReader | ZipStoreReader;
  readonly #index: FrameIndex;
  /** The frame buffer (a spare buffer, given back at close), made at the first read. */
  #buf: Uint8Array | null = null;
  /** Where encoded member files are read before they are decoded. */
  #scratch = new Uint8Array(0);

  constructor(framing: Framing, path: string, options: SourceOptions) {
    this.path = path;
    this.framing = framing.name;
    // a directory, or a regular file holding the store as a zip archive (zarr-python's ZipStore)
    this.#reader = isDirectory(path) ? new StoreReader(path) : new ZipStoreReader(path);
    try {
      this.#index = framing.store!.openStore(this.#reader, {
        ...options.backendOptions,
        endian: options.endian,
        layout: options.layout,
      });
    } catch (e) {
      if (this.#reader instanceof ZipStoreReader) this.#reader.close();
      throw e;
    }
    this.frameCount = this.#index.frameCount;
    this.warnings = this.#index.warnings ?? [];
    this.departures = this.#index.departures ?? [];
    this.storedOrder = this.#index.order;
  }

  /** Bytes read from the store's files so far (metadata and chunks). */
  get bytesRead(): number {
    return this.#reader.bytesRead;
  }

  /** A frame buffer of at least `bytes` bytes (the one kept, or a larger spare). */
  #buffer(bytes: number): Uint8Array {
    if (this.#buf === null || this.#buf.length < bytes) {
      if (this.#buf !== null) giveBackSpareBuffer(this.#buf);
      this.#buf = takeSpareBuffer(Math.max(bytes, 1 << 16));
    }
    return this.#buf;
  }

  /** Reads member `ref` into `into` (its stored bytes, decoded when encoded). */
  #readChunk(ref: ChunkRef, into: Uint8Array): void {
    const member = ref.member!;
    const index = this.#index;
    if (ref.codec !== undefined) {
      if (this.#scratch.length < into.length + 4096) {
        this.#scratch = new Uint8Array(into.length + 4096);
      }
      const n = ref.storedBytes;
      if (n === 0) index.decodeChunk!(ref, undefined, into);
      else if (n === undefined) {
        index.decodeChunk!(ref, this.#reader.readMember(member, this.#scratch), into);
      } else {
        if (this.#scratch.length < n) this.#scratch = new Uint8Array(n);
        const got = this.#reader.readMemberInto(member, this.#scratch.subarray(0, n), ref.offset);
        index.decodeChunk!(
          ref,
          got === undefined ? undefined : this.#scratch.subarray(0, got),
          into,
        );
      }
      return;
    }
    const n = this.#reader.readMemberInto(member, into, ref.offset);
    if (n === undefined) {
      if (!index.decodeChunk) {
        throw new FormatError(this.framing, `${this.path}/${member}`, -1, "chunk file is missing");
      }
      index.decodeChunk(ref, undefined, into);
    } else if (n < into.length) {
      throw new FormatError(
        this.framing,
        `${this.path}/${member}`,
        ref.offset + n,
        `file ends at byte ${ref.offset + n}, inside a chunk that runs to byte ${
          ref.offset + into.length
        }`,
      );
    }
  }

  /** The chunks of `frame` as stored, in the frame buffer. */
  #frame(frame: number): { ref: ChunkRef; data: Uint8Array }[] {
    const refs = this.#index.chunks(frame);
    let total = 0;
    for (const r of refs) total += Math.ceil(r.bytes / LINE) * LINE;
    const buf = this.#buffer(total);
    let at = 0;
    return refs.map((ref) => {
      const data = buf.subarray(at, at + ref.bytes);
      at += Math.ceil(ref.bytes / LINE) * LINE;
      this.#readChunk(ref, data);
      return { ref, data };
    });
  }

  readFrame(frame: number): readonly ReadChunk[] {
    return this.#frame(frame).map(({ ref, data }) => {
      const width = DTYPE_SIZE[ref.dtype];
      if (ref.order !== NATIVE_ORDER && width > 1) swapInPlace(data, width);
      return { name: ref.name, dtype: ref.dtype, shape: ref.shape, data };
    });
  }

  readFrameStored(frame: number): readonly StoredChunk[] {
    return this.#frame(frame).map(({ ref, data }) => ({
      name: ref.name,
      dtype: ref.dtype,
      shape: ref.shape,
      order: ref.order,
      offset: ref.offset,
      data,
    }));
  }

  locate(frame: number): readonly ChunkRef[] {
    return this.#index.chunks(frame);
  }

  describe(): Record<string, unknown> {
    return this.#index.describe?.() ?? {};
  }

  close(): void {
    if (this.#reader instanceof ZipStoreReader) this.#reader.close();
    if (this.#buf !== null) giveBackSpareBuffer(this.#buf);
    this.#buf = null;
  }
}
