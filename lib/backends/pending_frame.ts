/**
 * A frame read of the native source (native_source.ts) whose first read is in flight through
 * Linux native AIO: its completion is made on the reading thread when the frame is awaited or
 * when the next frame read comes, so that read can be submitted while this one is verified.
 * @module
 */

/**
 * A frame read whose first read is in flight (Linux native AIO) and whose completion (the reap,
 * the frame's other reads, its chunks) is made on this thread when it is asked: by `then` (an
 * await) or by `settle` (the next frame read, before it submits its own). `finish` runs once;
 * its error is the read's rejection.
 */
export class PendingFrame<T> implements PromiseLike<T> {
  #finish: (() => T) | undefined;
  #reap: (() => void) | undefined;
  #value: T | undefined;
  #error: unknown;
  #failed = false;

  /**
   * `finish` completes the frame; `reap` (a frame whose last read is the one in flight) waits for
   * that read alone, after which `finish` makes no read.
   */
  constructor(finish: () => T, reap?: () => void) {
    this.#finish = finish;
    this.#reap = reap;
  }

  /** True once the frame is complete (or failed). */
  get settled(): boolean {
    return this.#finish === undefined;
  }

  /**
   * Makes the frame's reads now (the next frame's may then be submitted): reaps its last read
   * when it has a `reap`, else completes it.
   */
  reapReads(): void {
    const reap = this.#reap;
    if (reap === undefined) return this.#complete();
    this.#reap = undefined;
    try {
      reap();
    } catch (e) {
      this.#finish = undefined;
      this.#error = e;
      this.#failed = true;
    }
  }

  /** Completes the frame now, on this thread, if it is not yet. */
  settle(): void {
    this.reapReads();
    this.#complete();
  }

  #complete(): void {
    const finish = this.#finish;
    if (finish === undefined) return;
    this.#finish = undefined;
    try {
      this.#value = finish();
    } catch (e) {
      this.#error = e;
      this.#failed = true;
    }
  }

  /** Completes the frame (see {@link settle}), then resolves with its chunks or rejects. */
  then<A = T, B = never>(
    onfulfilled?: ((value: T) => A | PromiseLike<A>) | null,
    onrejected?: ((reason: unknown) => B | PromiseLike<B>) | null,
  ): PromiseLike<A | B> {
    this.settle();
    const result = this.#failed ? Promise.reject(this.#error) : Promise.resolve(this.#value as T);
    return result.then(onfulfilled, onrejected);
  }
}
