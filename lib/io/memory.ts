/**
 * In-memory files: apply an encoder's write ops to a growing byte array, and read it back as a
 * {@link ByteSource}. Used by tests, benchmarks and `encode`-only paths; no file I/O.
 * @module
 */
import { ShortReadError } from "../core/errors.ts";
import type { ByteSource, WriteOp } from "./types.ts";

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
