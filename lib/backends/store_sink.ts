/**
 * The store sink: applies a store framing's write ops (each the whole content of a member file,
 * lib/io/types.ts) through a store writer (lib/io/store.ts). Its `sync` ops, and with `--fsync
 * each` the end of every frame, make every file written and every directory made so far durable,
 * so the chunks are on disk before the metadata that makes them visible; `close` syncs once more
 * after the metadata (unless `--fsync none`). A failed or aborted write removes the store whole.
 * @module
 */
import type { FrameWriter, Framing, WriteOp } from "../framings/types.ts";
import { UsageError } from "../core/errors.ts";
import { StoreWriter } from "../io/store.ts";
import type { FrameSink, FsyncPolicy, SinkOptions } from "./backend.ts";
import type { Frame } from "../framings/types.ts";

/** A {@link FrameSink} that writes a new store (a directory of member files) with a store framing. */
export class StoreSink implements FrameSink {
  readonly path: string;
  readonly #framing: Framing;
  readonly #writer: FrameWriter;
  readonly #store: StoreWriter;
  readonly #fsync: FsyncPolicy;
  #open = true;

  constructor(framing: Framing, path: string, options: SinkOptions) {
    this.path = path;
    this.#framing = framing;
    this.#fsync = options.fsync ?? "end";
    if (options.create === "append") {
      throw new UsageError(`framing '${framing.name}' cannot append to an existing store`);
    }
    // Options are checked (the encoder is built) before the store is created.
    this.#writer = framing.createWriter({
      ...options.backendOptions,
      endian: options.endian ?? "native",
    });
    this.#store = new StoreWriter(path, {
      mode: options.create === "new" ? "new" : "truncate",
      syncs: this.#fsync !== "none",
    });
    try {
      this.#apply(this.#writer.begin());
    } catch (e) {
      this.abort();
      throw e;
    }
  }

  #apply(ops: readonly WriteOp[]): void {
    for (const op of ops) {
      if (op.kind === "sync") {
        if (this.#fsync !== "none") this.#store.sync();
      } else if (op.kind === "write" && op.member !== undefined && op.offset === 0) {
        this.#store.write(op.member, op.data);
      } else {
        throw new Error(
          `${this.path}: framing '${this.#framing.name}' made a ${op.kind} op that is not the ` +
            "whole content of a member of its store",
        );
      }
    }
  }

  writeFrame(frame: Frame): void {
    this.#apply(this.#writer.writeFrame(frame));
    if (this.#fsync === "each") this.#store.sync();
  }

  close(): void {
    if (!this.#open) return;
    this.#apply(this.#writer.finish());
    if (this.#fsync !== "none") this.#store.sync();
    this.#open = false;
    this.#store.close();
  }

  abort(): void {
    if (!this.#open) return;
    this.#open = false;
    this.#store.abort();
  }
}
