/**
 * fio as the machine's baseline (`table --baseline fio`): for one table cell, fio writes a file
 * of the same size in the same directory, then reads a sample of it in order and at random, with
 * the same transfer size, direct flag, fsync policy and cache state as sciobench's own phases,
 * each of its phases just before or just after the matching one of ours (FioSession).
 * Its bandwidths become the row's `fio_*` columns and ours / fio its `efficiency_*` columns. fio
 * is handed plain byte counts (its own `kb_base` never matters) and `--output-format=json`.
 * @module
 */
import { IoError } from "../core/errors.ts";
import type { FsyncPolicy } from "../backends/backend.ts";
import { onInterrupt } from "../io/interrupt.ts";
import { readProc } from "../sys/libc.ts";
import { removeQuietly } from "../io/atomic.ts";
import type { EngineName } from "../sys/queue.ts";

/** One cell for fio to measure. */
export interface FioCell {
  /** The file fio writes and reads (in the cell's scratch directory; removed afterwards). */
  readonly path: string;
  /** Bytes of the file: the cell's data bytes. */
  readonly fileBytes: number;
  /** Bytes each read phase reads (the cell's sample). */
  readonly readBytes: number;
  /** Bytes of each write call (fio's bs when it writes). */
  readonly blockBytes: number;
  /** Bytes of each read call (read and randread; fio's bs there), as ours: one frame by default. */
  readonly readBlockBytes: number;
  /** O_DIRECT (fio's direct=1). */
  readonly direct: boolean;
  /** end: end_fsync=1; each: fsync=1 (after every block) and end_fsync=1; none: neither. */
  readonly fsync: FsyncPolicy;
  /** Seed of fio's random offsets. */
  readonly seed: number;
  /** Cold reads: fio's invalidate=1 (posix_fadvise DONTNEED before it reads); warm: 0. */
  readonly cold: boolean;
  /**
   * fio's buffers in reserved huge pages (mem=shmhuge), as ours are with O_DIRECT
   * ({@link fioHugePagesRefused} says when fio can have them); else malloc, fio's default.
   */
  readonly hugePages?: boolean;
  /**
   * The I/O engine of fio's writes and reads, as ours (`--engine`; default psync) and how many
   * requests it keeps in flight (`--iodepth`; default 1): the writes and reads of both driven the
   * same way.
   */
  readonly engine?: EngineName;
  readonly iodepth?: number;
}

/** fio's bandwidth in each phase, MiB/s (2^20 bytes), and its block sizes. */
export interface FioResult {
  readonly writeMiBps: number;
  readonly readMiBps: number;
  readonly randomMiBps: number;
  /** fio's block size when it wrote, bytes. */
  readonly writeBlockBytes: number;
  /** fio's block size when it read (in order and at random), bytes. */
  readonly readBlockBytes: number;
  /** fio's buffers were reserved huge pages (mem=shmhuge); false: malloc, 4 KiB pages. */
  readonly hugePages: boolean;
}

/** The phases fio runs, in order. */
export type FioPhase = "write" | "read" | "random";

/**
 * The fio command line of `phase` for `cell`: its writes and reads through the cell's engine at
 * its depth, as sciobench's (psync at depth 1, pwrite and pread, by default).
 */
export function fioArgs(cell: FioCell, phase: FioPhase): string[] {
  // fio writes whole blocks only: its file is fileBytes rounded down to the write block. Its reads
  // are given that size, else fio finds the file short and lays it out anew before it reads
  // (unlink, buffered writes, fsync): a file in another state than its write left, which ours is not
  // mutant: fio-read-size
  const size = phase === "write" ? cell.fileBytes : fioWrittenBytes(cell);
  const args = [
    `--name=sciobench-${phase}`,
    `--filename=${cell.path}`,
    `--rw=${phase === "write" ? "write" : phase === "read" ? "read" : "randread"}`,
    `--bs=${phase === "write" ? cell.blockBytes : cell.readBlockBytes}`,
    `--size=${size}`,
    // mutant: fio-same-engine
    `--ioengine=${cell.engine ?? "psync"}`,
    `--direct=${cell.direct ? 1 : 0}`,
    "--output-format=json",
    // fio advises POSIX_FADV_SEQUENTIAL/RANDOM before it reads (fadvise_hint=1, its default);
    // sciobench's reads give no access hint, so fio gives none either: the same calls on both sides
    // mutant: fio-fadvise-hint
    "--fadvise_hint=0",
  ];
  // mutant: fio-huge-pages
  if (cell.hugePages) args.push("--mem=shmhuge");
  if (phase === "write") {
    // sciobench does not preallocate; the fsync policy's calls are inside fio's timing too
    args.push("--fallocate=none", "--create_on_open=1");
    if (cell.fsync === "each") args.push("--fsync=1");
    // mutant: fio-end-fsync
    if (cell.fsync !== "none") args.push("--end_fsync=1");
  } else {
    // the caller drops the file first (fdatasync + fadvise DONTNEED, as before our reads); fio's
    // invalidate=1 drops it again (posix_fadvise DONTNEED) before its first read. Warm: neither.
    args.push(`--io_size=${Math.min(cell.readBytes, size)}`, `--invalidate=${cell.cold ? 1 : 0}`);
    // fio's random map (its default) reads each block once, as our random order reads each
    // frame once: without it (norandommap) repeats come from the page cache
    if (phase === "random") args.push(`--randseed=${cell.seed}`);
  }
  // mutant: fio-write-depth
  if ((cell.iodepth ?? 1) > 1) args.push(`--iodepth=${cell.iodepth}`);
  return args;
}

/**
 * Bytes of the file fio's write phase leaves for `cell`: `fileBytes` rounded down to a multiple of
 * the write block (fio writes whole blocks only; the rest, under one block, is not written).
 */
export function fioWrittenBytes(cell: FioCell): number {
  return Math.floor(cell.fileBytes / cell.blockBytes) * cell.blockBytes;
}

/** Bandwidth in bytes/s of fio's JSON report for `phase`; IoError when it has none. */
export function fioBandwidth(json: string, phase: FioPhase): number {
  let bw: unknown;
  try {
    const doc = JSON.parse(json.slice(json.indexOf("{")));
    bw = doc.jobs?.[0]?.[phase === "write" ? "write" : "read"]?.bw_bytes;
  } catch {
    bw = undefined;
  }
  if (typeof bw !== "number" || !(bw > 0)) {
    throw new IoError(`fio ${phase}: no bandwidth in its JSON report: ${json.slice(0, 200)}`);
  }
  return bw;
}

/** The facts {@link fioHugePagesRefused} judges by (read from /proc; given by tests). */
export interface HugePageFacts {
  /** Free reserved huge pages (/proc/meminfo HugePages_Free). */
  readonly free: number;
  /** Bytes of a reserved huge page (/proc/meminfo Hugepagesize). */
  readonly pageBytes: number;
  /** The process may lock shared memory in huge pages: CAP_IPC_LOCK, or in hugetlb_shm_group. */
  readonly allowed: boolean;
}

/** This machine's {@link HugePageFacts} (no huge pages, not allowed, where /proc says nothing). */
export function hugePageFacts(): HugePageFacts {
  const meminfo = readProc("/proc/meminfo");
  const free = Number(/^HugePages_Free:\s+(\d+)/m.exec(meminfo)?.[1] ?? 0);
  const pageBytes = Number(/^Hugepagesize:\s+(\d+) kB/m.exec(meminfo)?.[1] ?? 0) * 1024;
  const status = readProc("/proc/self/status");
  const capEff = BigInt(`0x${/^CapEff:\s+([0-9a-f]+)/m.exec(status)?.[1] ?? "0"}`);
  const group = readProc("/proc/sys/vm/hugetlb_shm_group").trim();
  const groups = (/^Groups:\s*(.*)$/m.exec(status)?.[1] ?? "").split(/\s+/);
  const gid = /^Gid:\s+(\d+)/m.exec(status)?.[1];
  const allowed = (capEff & (1n << 14n)) !== 0n || // CAP_IPC_LOCK
    (group !== "" && (groups.includes(group) || gid === group));
  return { free, pageBytes, allowed };
}

/**
 * null when fio can take its buffers for `blockBytes`-byte calls from reserved huge pages
 * (mem=shmhuge: free pages for the block and its alignment, and the right to lock them), else
 * the one-line reason it cannot (fio then uses malloc, 4 KiB pages).
 */
export function fioHugePagesRefused(
  blockBytes: number,
  facts: HugePageFacts = hugePageFacts(),
): string | null {
  if (facts.pageBytes <= 0 || facts.free <= 0) {
    return "no huge pages are reserved (vm.nr_hugepages)";
  }
  // fio's buffer: the largest block plus a page of alignment, rounded up to huge pages
  const need = Math.ceil((blockBytes + 4096) / facts.pageBytes);
  if (facts.free < need) {
    return `${facts.free} reserved huge pages are free, fio needs ${need} (vm.nr_hugepages)`;
  }
  if (!facts.allowed) {
    return "locking huge pages needs CAP_IPC_LOCK or the group vm.hugetlb_shm_group";
  }
  return null;
}

/** null when `fio` is on PATH, else the one-line reason it cannot be the baseline. */
export function fioUnavailable(): string | null {
  const path = Deno.env.get("PATH") ?? "";
  for (const dir of path.split(":")) {
    if (dir === "") continue;
    try {
      const st = Deno.statSync(`${dir}/fio`);
      if (st.isFile && ((st.mode ?? 0o111) & 0o111) !== 0) return null;
    } catch {
      // not here
    }
  }
  return "fio is not installed (not on PATH)";
}

/** Runs fio once for `phase`; the file is removed and fio killed if SIGINT or SIGTERM arrives. */
async function runPhase(cell: FioCell, phase: FioPhase): Promise<number> {
  const child = new Deno.Command("fio", {
    args: fioArgs(cell, phase),
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const forget = onInterrupt(() => {
    try {
      child.kill("SIGKILL");
    } catch {
      // already ended
    }
    removeQuietly(cell.path);
  });
  try {
    const out = await child.output();
    const text = new TextDecoder().decode(out.stdout);
    if (!out.success) {
      const why = new TextDecoder().decode(out.stderr).trim().split("\n")[0] ?? "";
      throw new IoError(`fio ${phase} of ${cell.path} failed (exit ${out.code}): ${why}`);
    }
    return fioBandwidth(text, phase);
  } finally {
    forget();
  }
}

/**
 * fio's phases of one cell, run one at a time beside sciobench's own (`table --baseline fio`):
 * `run("write")`, then `run("read")` and `run("random")`, each read after `prepare` (which drops
 * or warms the file as the cell's own read phases were). A failure is kept, later phases are
 * skipped, and fio's file is removed; disposing removes it in any case.
 */
export class FioSession {
  #cell: FioCell;
  readonly #prepare: (path: string) => void;
  #alignReads: ((path: string) => number) | undefined;
  readonly #bytesPerSecond: Partial<Record<FioPhase, number>> = {};
  #failure: string | undefined;

  /**
   * A session for `cell`; nothing runs until `run`. `alignReads` (with O_DIRECT) gives the
   * alignment of fio's written file, bytes: its read block is rounded up to it before it reads.
   */
  constructor(
    cell: FioCell,
    prepare: (path: string) => void,
    alignReads?: (path: string) => number,
  ) {
    this.#cell = cell;
    this.#prepare = prepare;
    this.#alignReads = alignReads;
  }

  /** Runs fio's `phase` (its write must come first); never throws, a failure is kept. */
  async run(phase: FioPhase): Promise<void> {
    if (this.#failure !== undefined) return;
    try {
      if (phase !== "write") {
        if (this.#alignReads !== undefined) {
          const align = Math.max(this.#alignReads(this.#cell.path), 1);
          const readBlockBytes = Math.ceil(this.#cell.readBlockBytes / align) * align;
          this.#cell = { ...this.#cell, readBlockBytes };
          this.#alignReads = undefined;
        }
        this.#prepare(this.#cell.path);
      }
      this.#bytesPerSecond[phase] = await runPhase(this.#cell, phase);
    } catch (e) {
      this.#failure = e instanceof Error ? e.message : String(e);
      removeQuietly(this.#cell.path);
    }
  }

  /** fio's rate in each phase, MiB/s; or why there is none (a failed or missing phase). */
  result(): FioResult | string {
    if (this.#failure !== undefined) return this.#failure;
    const { write, read, random } = this.#bytesPerSecond;
    if (write === undefined || read === undefined || random === undefined) {
      return "fio did not run every phase";
    }
    const mib = 2 ** 20;
    return {
      writeMiBps: write / mib,
      readMiBps: read / mib,
      randomMiBps: random / mib,
      writeBlockBytes: this.#cell.blockBytes,
      readBlockBytes: this.#cell.readBlockBytes,
      hugePages: this.#cell.hugePages ?? false,
    };
  }

  /** Removes fio's file. */
  [Symbol.dispose](): void {
    removeQuietly(this.#cell.path);
  }
}
