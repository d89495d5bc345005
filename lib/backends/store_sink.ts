/**
 * The store sink: applies a store framing's write ops (each the whole content of a member file,
 * lib/io/types.ts) through a store writer (lib/io/store.ts). Its `sync` ops, and with `--fsync
 * each` the end of every frame, make every file written and every directory made so far durable,
 * so the chunks are on disk before the metadata that makes them visible; `close` syncs once more
 * after the metadata (unless `--fsync none`). A failed or aborted write removes the store whole.
 *
 * An append (`create: "append"`) continues the store through the framing's store append writer
 * under a store journal (lib/io/store.ts): the journal exists before the first new chunk file;
 * the chunks are synced (files, then directories) before any metadata changes; each member the
 * store already has is saved in the journal and then replaced atomically (a temporary renamed
 * over it); the directories are synced and the journal removed last. A failed or aborted append
 * puts the store back as it was (saved members restored, the new chunk files removed).
 * @module
 */
import type { FrameWriter, Framing, WriteOp } from "../framings/types.ts";
import { UsageError } from "../core/errors.ts";
import {
  hasMember,
  recoverInterruptedStoreAppend,
  rollBackStore,
  StoreJournal,
  StoreReader,
  StoreWriter,
} from "../io/store.ts";
import type { FrameSink, FsyncPolicy, SinkOptions } from "./backend.ts";
import type { Frame } from "../framings/types.ts";

/** A {@link FrameSink} that writes a new store (a directory of member files) with a store framing. */
export class StoreSink implements FrameSink {
  readonly path: string;
  readonly #framing: Framing;
  readonly #writer: FrameWriter;
  readonly #store: StoreWriter;
  readonly #fsync: FsyncPolicy;
  /** Appending: the undo journal beside the store. */
  readonly #journal: StoreJournal | undefined;
  #open = true;

  constructor(framing: Framing, path: string, options: SinkOptions) {
    this.path = path;
    this.#framing = framing;
    this.#fsync = options.fsync ?? "end";
    if (options.create === "append") {
      const append = framing.store?.appendWriter;
      if (append === undefined) {
        throw new UsageError(`framing '${framing.name}' cannot append to an existing store`);
      }
      // an append is always made durable (its journal's promise)
      this.#fsync = this.#fsync === "none" ? "end" : this.#fsync;
      this.#writer = append.call(framing.store, new StoreReader(path), {
        ...options.backendOptions,
        endian: options.endian ?? "native",
      });
      this.#store = new StoreWriter(path, { mode: "append", syncs: true });
      this.#journal = StoreJournal.begin(path);
      try {
        this.#apply(this.#writer.begin());
      } catch (e) {
        this.abort();
        throw e;
      }
      return;
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
    const journal = this.#journal;
    if (journal !== undefined) {
      // the old content of every member these ops replace is durable in the journal first
      const replaced = ops.flatMap((op) =>
        op.kind === "write" && op.member !== undefined && !journal.has(op.member) &&
          hasMember(this.path, op.member)
          ? [op.member]
          : []
      );
      // mutant: store-journal-saves
      journal.save(replaced);
    }
    for (const op of ops) {
      if (op.kind === "sync") {
        if (this.#fsync !== "none") this.#store.sync();
      } else if (op.kind === "write" && op.member !== undefined && op.offset === 0) {
        if (journal?.has(op.member)) this.#store.replace(op.member, op.data);
        else this.#store.write(op.member, op.data);
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
    this.#journal?.commit();
  }

  abort(): void {
    if (!this.#open) return;
    this.#open = false;
    if (this.#journal === undefined) return this.#store.abort();
    this.#store.close();
    this.#journal.rollBack(this.#framing.store?.strays?.bind(this.#framing.store));
  }
}

/**
 * Rolls back the killed append to the store at `path` of store framing `framing`, if its journal
 * is there (one line on stderr); IoError when an append holds the store's lock.
 */
export function recoverStoreAppend(framing: Framing, path: string): void {
  recoverInterruptedStoreAppend(path, framing.store?.strays?.bind(framing.store));
}

/**
 * Rolls back an append to the store at `path` that a signal interrupted, by a writer holding its
 * lock: true when there was a journal (the store is as it was), false when the append never
 * began or was committed.
 */
export function undoStoreAppend(framing: Framing, path: string): boolean {
  return rollBackStore(path, framing.store?.strays?.bind(framing.store));
}
