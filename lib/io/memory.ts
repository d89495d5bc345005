/**
 * In-memory files: apply an encoder's write ops to a growing byte array, and read it back as a
 * {@link ByteSource}. Used by tests, benchmarks and `encode`-only paths; no file I/O.
 * @module
 */
import { FormatError, ShortReadError } from "../core/errors.ts";
import type { ByteSource, StoreMembers, WriteOp } from "./types.ts";

/** A growable in-memory file that write ops (`copy` ops too) are applied to. */
export class MemoryFile {
  #buf = new Uint8Array(1 << 16);
  #size = 0;
  /** Count of `sync` ops seen (the places the format's library would fsync). */
  syncs = 0;

  /** Current file size in bytes. */
  get size(): number {
    return this.#size;
  }

  /** Applies write ops in order. */
  apply(ops: readonly WriteOp[]): void {
    for (const op of ops) {
      if (op.kind === "sync") {
        this.syncs++;
        continue;
      }
      const length = op.kind === "copy" ? op.length : op.data.length;
      const end = op.offset + length;
      if (end > this.#buf.length) {
        let cap = this.#buf.length;
        while (cap < end) cap *= 2;
        const next = new Uint8Array(cap);
        next.set(this.#buf.subarray(0, this.#size));
        this.#buf = next;
      }
      if (op.kind === "copy") this.#buf.copyWithin(op.offset, op.from, op.from + length);
      else this.#buf.set(op.data, op.offset);
      if (end > this.#size) this.#size = end;
    }
  }

  /** The file's bytes (a view; copy it if the file is written again). */
  bytes(): Uint8Array {
    return this.#buf.subarray(0, this.#size);
  }
}

/** A {@link ByteSource} over bytes in memory; reads past the end throw ShortReadError (a FormatError). */
export function memorySource(bytes: Uint8Array, path = "<memory>", format = "read"): ByteSource {
  return {
    path,
    size: bytes.length,
    read(offset: number, length: number): Uint8Array {
      if (offset < 0 || length < 0 || offset + length > bytes.length) {
        throw new ShortReadError(
          format,
          path,
          offset,
          `need ${length} bytes but the file ends at byte ${bytes.length}`,
        );
      }
      return bytes.subarray(offset, offset + length);
    },
    window(offset: number, length: number): Uint8Array | undefined {
      if (offset < 0 || length < 0 || offset + length > bytes.length) return undefined;
      return bytes.subarray(offset);
    },
  };
}

/**
 * An in-memory store (a directory of member files, as a Zarr store is): the write ops of a store
 * framing are applied to it (each the whole content of a member), and it reads back as the
 * {@link StoreMembers} a store decoder takes. Used by tests and the fuzzer; no file I/O.
 */
export class MemoryStore implements StoreMembers {
  /** Path shown in error messages. */
  readonly path: string;
  /** The members' contents by name (relative to the root, `/` between directories). */
  readonly files = new Map<string, Uint8Array>();
  /** Count of `sync` ops seen. */
  syncs = 0;

  constructor(path = "<memory>") {
    this.path = path;
  }

  /** Applies write ops in order: each write (with a member) replaces that member's content. */
  apply(ops: readonly WriteOp[]): void {
    for (const op of ops) {
      if (op.kind === "sync") this.syncs++;
      else if (op.kind === "write" && op.member !== undefined && op.offset === 0) {
        this.files.set(op.member, op.data.slice());
      } else throw new RangeError(`a store takes whole members, not a ${op.kind} op`);
    }
  }

  read(name: string, limit: number): Uint8Array | undefined {
    const bytes = this.files.get(name);
    if (bytes !== undefined && bytes.length > limit) {
      throw new FormatError("store", `${this.path}/${name}`, -1, `holds more than ${limit} bytes`);
    }
    return bytes;
  }

  sizeOf(name: string): number | undefined {
    return this.files.get(name)?.length;
  }

  readAt(name: string, offset: number, length: number): Uint8Array | undefined {
    return this.files.get(name)?.slice(offset, offset + length);
  }

  list(dir: string, limit: number): readonly string[] | undefined {
    const prefix = dir === "" ? "" : `${dir}/`;
    const names = new Set<string>();
    for (const key of this.files.keys()) {
      if (key.startsWith(prefix)) names.add(key.slice(prefix.length).split("/")[0]!);
    }
    if (names.size === 0 && dir !== "") return undefined;
    if (names.size > limit) {
      throw new FormatError("store", `${this.path}/${dir}`, -1, `holds more than ${limit} entries`);
    }
    return [...names].sort();
  }
}
