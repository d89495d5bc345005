/**
 * The loader's reader processes (`--readers K` above 1), as the worker processes of PyTorch's
 * DataLoader, which DLIO's `read_threads` are: each opens the file itself and reads whole batches,
 * batch b of an epoch by reader b mod K, each reader up to {@link LOADER_PREFETCH} batches ahead
 * of the consumer (DataLoader's prefetch_factor). The consumer takes the batches in order; a
 * batch's latency is its wait for it.
 *
 * The readers are this program again (`sciobench loader _reader`, lib/workloads/loader/reader.ts),
 * as the readers workload's are. The protocol, one line each: the consumer sends the job (JSON),
 * then `e` to start an epoch and `c` for each batch a reader may read; a reader answers `ready`
 * once its file is open, one `batch` per batch read and verified, one `epoch` (its CPU, device
 * bytes and audit trail) after its last batch of the epoch, or `error` when it failed.
 * @module
 */
import { SciobenchError, UsageError, VerifyError } from "../../core/errors.ts";
import type { AuditPhase } from "../../sys/audit.ts";
import { childError, killChild, LineReader } from "../lines.ts";
import type { LoaderFile, LoaderSettings } from "./settings.ts";
import type { LoaderOpen } from "./open.ts";

/** Batches each reader process may read ahead of the consumer: PyTorch DataLoader's default. */
export const LOADER_PREFETCH = 2;

/** Most reader processes `--readers` starts. */
export const MAX_LOADER_READERS = 64;

/** The hidden subcommand of `sciobench loader` that is one reader process. */
export const LOADER_READER_COMMAND = "_reader";

/** Starts one reader process (`sciobench loader _reader`) with stdin, stdout and stderr piped. */
export type ReaderLaunch = () => Deno.ChildProcess;

/** What a reader process is told: the file, the run's settings and which reader it is (from 0). */
export interface ReaderJob {
  readonly open: LoaderOpen;
  readonly settings: LoaderSettings;
  readonly reader: number;
}

/** One epoch of one reader process, as it reported it. */
export interface ReaderEpoch {
  /** Its process id. */
  readonly pid: number;
  /** Its user and system CPU in the epoch, seconds. */
  readonly userS: number;
  readonly sysS: number;
  /** Bytes it fetched from the device in the epoch. */
  readonly devReadBytes: number;
  /** Its trail of the epoch. */
  readonly phase?: AuditPhase;
}

/** A line a reader process writes. */
export type ReaderMessage =
  | { readonly t: "ready"; readonly frames: number }
  | { readonly t: "batch"; readonly b: number; readonly bytes: number }
  | ({ readonly t: "epoch" } & ReaderEpoch)
  | {
    readonly t: "error";
    /** What failed: a sample's check (VerifyError), a bad input (UsageError), or else. */
    readonly kind: "verify" | "usage" | "other";
    readonly message: string;
    readonly exitCode: number;
  };

/**
 * The batches (of an epoch of `batches`, from 0) reader `k` of `readers` reads, in order: those
 * with b mod `readers` = k, as DataLoader hands its workers the batches in turn.
 */
export function readerBatches(batches: number, k: number, readers: number): number[] {
  const mine: number[] = [];
  // mutant: loader-reader-batches
  for (let b = k; b < batches; b += readers) mine.push(b);
  return mine;
}

const encoder = new TextEncoder();

/** The error a reader reported, of its class where the consumer tells them apart. */
function readerError(
  m: { kind: string; message: string; exitCode: number },
  who: string,
): SciobenchError {
  const text = `${who}: ${m.message}`;
  if (m.kind === "verify") return new VerifyError(text);
  if (m.kind === "usage") return new UsageError(text);
  return new SciobenchError(text, m.exitCode === 2 ? 2 : 1);
}

/** The running reader processes of one loader run. */
export class LoaderReaders {
  readonly #children: readonly Deno.ChildProcess[];
  readonly #out: readonly LineReader[];
  readonly #in: readonly WritableStreamDefaultWriter<Uint8Array>[];
  readonly #stderr: readonly Promise<string>[];
  readonly #batchSize: number;
  /** Batches each reader has yet to be allowed in the epoch. */
  readonly #owed: number[];

  /** The readers `children` (started), reading batches of `batchSize` samples. */
  constructor(children: readonly Deno.ChildProcess[], batchSize: number) {
    this.#children = children;
    this.#out = children.map((c) => new LineReader(c.stdout));
    this.#in = children.map((c) => c.stdin.getWriter());
    this.#stderr = children.map((c) => new Response(c.stderr).text());
    this.#batchSize = batchSize;
    this.#owed = children.map(() => 0);
  }

  /** How many readers there are. */
  get count(): number {
    return this.#children.length;
  }

  /** Sends `text` to reader `k`. */
  async send(k: number, text: string): Promise<void> {
    await this.#in[k]!.write(encoder.encode(text));
  }

  /** The next message of reader `k`; its failure (a message, or its end) thrown. */
  async next(k: number): Promise<ReaderMessage> {
    const who = `reader ${k + 1} of ${this.count}`;
    const line = await this.#out[k]!.line();
    if (line === null) {
      const { code } = await this.#children[k]!.status;
      throw new SciobenchError(
        `${who}: ${childError(await this.#stderr[k]!, code)}`,
        code === 2 ? 2 : 1,
      );
    }
    const m = JSON.parse(line) as ReaderMessage;
    if (m.t === "error") throw readerError(m, who);
    return m;
  }

  /** Starts an epoch of `samples` samples: each reader may read its first batches. */
  async beginEpoch(samples: number): Promise<void> {
    const batches = Math.ceil(samples / this.#batchSize);
    await Promise.all(this.#children.map((_, k) => {
      const mine = readerBatches(batches, k, this.count).length;
      const now = Math.min(LOADER_PREFETCH, mine);
      this.#owed[k] = mine - now;
      return this.send(k, "e\n" + "c\n".repeat(now));
    }));
  }

  /**
   * Waits for batch `b` of the epoch from its reader, lets that reader read one more, and
   * returns the batch's payload bytes.
   */
  async batch(b: number): Promise<number> {
    const k = b % this.count;
    const m = await this.next(k);
    if (m.t !== "batch" || m.b !== b) {
      throw new SciobenchError(
        `reader ${k + 1} of ${this.count} sent ${JSON.stringify(m)}, expected batch ${b}`,
        1,
      );
    }
    if (this.#owed[k]! > 0) {
      this.#owed[k]!--;
      await this.send(k, "c\n");
    }
    return m.bytes;
  }

  /** Each reader's report of the epoch (after its last batch). */
  async endEpoch(): Promise<ReaderEpoch[]> {
    return await Promise.all(this.#children.map(async (_, k) => {
      const m = await this.next(k);
      if (m.t !== "epoch") {
        throw new SciobenchError(
          `reader ${k + 1} of ${this.count} sent ${JSON.stringify(m)}, expected its epoch`,
          1,
        );
      }
      const { pid, userS, sysS, devReadBytes, phase } = m;
      return { pid, userS, sysS, devReadBytes, phase };
    }));
  }

  /**
   * Ends the readers and waits for every one: told the run is over (their input closed), or
   * after a failure stopped (SIGTERM). None outlives the run.
   */
  async close(failed: boolean): Promise<void> {
    if (failed) this.#children.forEach(killChild);
    await Promise.allSettled(this.#in.map((w) => w.close()));
    const statuses = await Promise.all(this.#children.map((c) => c.status));
    await Promise.allSettled(this.#out.map((o) => o.cancel()));
    const stderr = await Promise.all(this.#stderr);
    if (failed) return;
    for (const [k, { code }] of statuses.entries()) {
      if (code !== 0) {
        throw new SciobenchError(
          `reader ${k + 1} of ${this.count}: ${childError(stderr[k]!, code)}`,
          code === 2 ? 2 : 1,
        );
      }
    }
  }
}

/**
 * Starts `s.readers` reader processes of `open` with `launch` and waits until each has opened
 * the file (the same frames as the consumer's `file`). A reader that fails to start fails the
 * run with its own message; none is left running.
 */
export async function startReaders(
  open: LoaderOpen,
  s: LoaderSettings,
  file: LoaderFile,
  launch: ReaderLaunch,
): Promise<LoaderReaders> {
  const children: Deno.ChildProcess[] = [];
  try {
    for (let k = 0; k < s.readers; k++) children.push(launch());
  } catch (e) {
    children.forEach(killChild);
    await Promise.allSettled(children.map((c) => c.status));
    throw e;
  }
  const pool = new LoaderReaders(children, s.batchSize);
  try {
    await Promise.all(children.map(async (_, k) => {
      const job: ReaderJob = { open, settings: s, reader: k };
      await pool.send(k, JSON.stringify(job) + "\n");
      const m = await pool.next(k);
      if (m.t !== "ready" || m.frames !== file.source.frameCount) {
        throw new SciobenchError(
          `reader ${k + 1} of ${s.readers} sent ${JSON.stringify(m)}, expected ready with ` +
            `${file.source.frameCount} frames`,
          1,
        );
      }
    }));
  } catch (e) {
    await pool.close(true);
    throw e;
  }
  return pool;
}
