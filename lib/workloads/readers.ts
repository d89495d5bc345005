/**
 * The Packman workload (shared/seeds/001_*.txt, 1990): 1..7 simultaneous reader processes of
 * a file of 10 records of 130000 doubles, all reading one shared file or each its own, every
 * reader checking `a(130000) == i` for record i. Record i holds a seeded pattern with i in its
 * last element.
 *
 * The readers are separate processes started by the caller's {@link ReaderLauncher} (the CLI
 * re-runs its own program). Each reader loads, prints `ready`, waits for one byte on stdin,
 * then reads and checks every record and prints one JSON line ({@link ReaderReport}). All are
 * released together, and the wall time of a run is measured from the first reader's start to
 * the last reader's end on CLOCK_MONOTONIC, which all processes share: program start-up is not
 * part of it. Under MPI the ranks are the readers instead (each reads in-process), released by
 * a barrier.
 * @module
 */
import { SciobenchError, UsageError, VerifyError } from "../core/errors.ts";
import { usableBackend } from "../backends/registry.ts";
import type { OptionValues } from "../framings/options.ts";
import type { ChunkLayout, EndianOption } from "../framings/types.ts";
import { dropCache, residency } from "../io/cache.ts";
import type { Transfer } from "../io/transfer.ts";
import { checkTransfer } from "../backends/engine.ts";
import { coldOkDoc, ColdReads, TRANSFER_COLUMN_DOCS, transferColumns } from "./transfer.ts";
import { FileHandle } from "../io/file.ts";
import { withScratchDir } from "../io/scratch.ts";
import type { AggregateSpec } from "../mpi/aggregate.ts";
import { fencedPhase, rankScratchShare } from "../mpi/phase.ts";
import { world } from "../mpi/world.ts";
import type { Backend } from "../backends/backend.ts";
import type { Row } from "../report/row.ts";
import { col, type ColumnDoc, STAT_COLUMNS } from "../report/human.ts";
import type { Progress } from "../report/progress.ts";
import { bytesEqual, clockGettime, statfs } from "../sys/libc.ts";
import {
  attachAudit,
  audited,
  auditOf,
  type AuditPhase,
  beginPhase,
  endPhase,
  finishAudit,
  type RowAudit,
  startAudit,
} from "../sys/audit.ts";
import { startMeter } from "../sys/meter.ts";
import { fillRandom, Rng } from "./pattern.ts";

/** The columns of `sciobench readers` with units, in CSV order. */
export const READERS_COLUMN_DOCS: readonly ColumnDoc[] = [
  col("mode", "", "text", "shared (all readers read one file) or separate (one file each)"),
  col("procs", "processes", "count", "reader processes started at once"),
  col("file_bytes", "bytes", "size", "size of each file"),
  col("wall_s", "s", "number", "first reader's start to last reader's end (CLOCK_MONOTONIC)"),
  col("mean_s", "s", "number", "mean time of one reader, open to close"),
  col("max_s", "s", "number", "slowest reader"),
  col("min_s", "s", "number", "fastest reader"),
  col("aggregate_MiBps", "MiB/s", "number", "procs x file_bytes / 2^20 / wall_s"),
  col("user_s", "s", "number", "user CPU summed over readers"),
  col("sys_s", "s", "number", "system CPU summed over readers"),
  col("dev_read_bytes", "bytes", "count", "bytes the readers fetched from the device"),
  col(
    "slope_s_per_proc",
    "s/process",
    "number",
    "wall time added per added process since the previous row of the same mode (first row: " +
      "wall_s / procs), the seed's cost per process",
  ),
  col(
    "cache",
    "",
    "text",
    "cold or warm page cache when the readers start; direct: O_DIRECT reads, no drop",
  ),
  col("framing", "", "text", "native framing of the files"),
  col("records", "records", "count", "records per file"),
  col("length", "doubles", "count", "doubles per record"),
  col("reader_bytes", "bytes", "count", "payload read, summed over readers"),
  col("start_spread_s", "s", "number", "last reader's start minus the first's"),
  col("resident_before", "0..1", "fraction", "fraction of the file(s) cached at the start"),
  col("fs_type", "", "text", "file system of --dir"),
  col("reader", "", "text", "the program that read: sciobench, or gfortran (Packman's rd)"),
  col("repeat", "", "count", "1..K in run rows; in summary rows the number of runs summarised"),
  coldOkDoc(
    "dev_read_bytes against the bytes of the distinct files: reader_bytes / procs when shared; " +
      "resident_before is the residency after the drop",
  ),
  ...TRANSFER_COLUMN_DOCS,
  ...STAT_COLUMNS,
];

/**
 * Under MPI the readers' row is built from every rank's report (mean_s, min_s and max_s are
 * already over readers), so no column is combined again: rank columns only.
 */
export const READERS_AGGREGATE: AggregateSpec = { sum: [], max: [], rates: [] };

/** CSV columns of `sciobench readers`, the list first. */
export const READERS_COLUMNS: readonly string[] = READERS_COLUMN_DOCS.map((c) => c.name);

/** The columns that name a readers cell. */
export const READERS_KEYS = [
  "mode",
  "procs",
  "cache",
  "framing",
  "records",
  "length",
  "fs_type",
  "reader",
] as const;

/** The columns the human table shows. */
export const READERS_HUMAN_COLUMNS: readonly string[] = [
  "reader",
  "cache",
  "mode",
  "procs",
  "stat",
  "repeat",
  "file_bytes",
  "wall_s",
  "mean_s",
  "aggregate_MiBps",
  "slope_s_per_proc",
  "error",
];

/** The two ways of sharing data between readers. */
export type ReadersMode = "shared" | "separate";

/** Page-cache state the readers start from. */
export type CacheState = "cold" | "warm";

/** Name of the single chunk of every frame (Fortran's array `a`). */
const CHUNK = "a";

/** The layout of one frame of a Packman file: `length` doubles. */
export function packmanLayout(length: number): ChunkLayout[] {
  return [{ name: CHUNK, dtype: "float64", shape: [length] }];
}

/**
 * The seeded pattern of file `fileIndex`: `length` doubles in [0, 1); record i (1-based) is
 * this pattern with element `length` set to i.
 */
export function packmanPattern(length: number, seed: number, fileIndex: number): Float64Array {
  return fillRandom(new Float64Array(length), new Rng(seed * 1000003 + 7919 * (fileIndex + 1)));
}

/** Writes a Packman file with `backend`: `records` records of the pattern, record i ending in i. */
export function writePackmanFile(
  backend: Backend,
  path: string,
  o: {
    records: number;
    length: number;
    seed: number;
    fileIndex: number;
    endian: EndianOption;
    backendOptions: OptionValues;
    /** fsync before close returns (default true). */
    fsync?: boolean;
    /** `--bs` / `--direct`. */
    transfer?: Transfer;
  },
): void {
  const a = packmanPattern(o.length, o.seed, o.fileIndex);
  const sink = backend.openWriter(path, {
    create: "truncate",
    endian: o.endian,
    fsync: o.fsync ?? true ? "end" : "none",
    backendOptions: o.backendOptions,
    transfer: o.transfer,
  });
  try {
    for (let i = 1; i <= o.records; i++) {
      a[o.length - 1] = i;
      sink.writeFrame({
        step: i,
        chunks: [{ name: CHUNK, dtype: "float64", shape: [o.length], data: a }],
      });
    }
    sink.close();
  } catch (e) {
    sink.abort();
    throw e;
  }
}

/** What one reader process measured; printed by the reader as one JSON line. */
export interface ReaderReport {
  /** File the reader read. */
  readonly path: string;
  /** Bytes the reader read from the file (markers and headers included). */
  readonly bytes: number;
  /** Records read and checked. */
  readonly records: number;
  /** CLOCK_MONOTONIC at the start and end of the read (open to close), nanoseconds. */
  readonly t0Ns: number;
  readonly t1Ns: number;
  /** Wall time of the read, seconds. */
  readonly wallS: number;
  /** CPU of the read, seconds (getrusage of the reader process). */
  readonly userS: number;
  readonly sysS: number;
  /** Bytes the reader read from devices (ru_inblock x 512). */
  readonly devReadBytes: number;
  /** Notes from the decoder (e.g. ambiguous marker detection). */
  readonly warnings: readonly string[];
  /** The reader's own audit trail of its read (calls, offsets, its file), from lib/sys/audit.ts. */
  readonly audit?: AuditPhase;
}

/** Settings of one reader. */
export interface ReaderSettings {
  /** Backend name (a native framing or a peer). */
  readonly framing: string;
  readonly records: number;
  readonly length: number;
  readonly seed: number;
  /** Which file's pattern to expect (0 for the shared file). */
  readonly fileIndex: number;
  /** Byte order the file was written in, for formats that cannot tell (Fortran records). */
  readonly endian?: EndianOption;
  /** The backend's options (f77: marker), as it declares them. */
  readonly backendOptions: OptionValues;
  /** `--bs` / `--direct` of the reads. */
  readonly transfer?: Transfer;
}

/** Prepared state of a reader: the expected pattern is computed before the timed read. */
export interface PreparedReader {
  /** Reads and checks every record; times it. */
  run(): ReaderReport;
}

/**
 * Keeps first-use costs out of the timed read, as a compiled Fortran reader has none: touches the
 * buffers (page faults), binds the libc calls (memcmp, clocks, getrusage), and writes and reads
 * a two-record file of the same backend in the directory of `path` (compiles the decoder, loads a peer's
 * library). The file under test is not read, so a cold cache stays cold.
 */
function warmUpReader(
  backend: Backend,
  path: string,
  s: ReaderSettings,
  expected: Uint8Array,
): void {
  const buf = new Uint8Array(expected.length).fill(1);
  bytesEqual(buf, expected, buf.length);
  startMeter().stop();
  clockGettime();
  // Beside the file, under a name that is not the file's: a reader process opens only its file.
  const warm = `${path.slice(0, path.lastIndexOf("/") + 1)}.sciobench-warm-${Deno.pid}`;
  try {
    writePackmanFile(backend, warm, {
      records: 2,
      length: 2,
      seed: s.seed,
      fileIndex: s.fileIndex,
      endian: s.endian ?? "native",
      backendOptions: s.backendOptions,
      fsync: false,
      transfer: s.transfer,
    });
    const source = backend.openReader(warm, {
      layout: packmanLayout(2),
      endian: s.endian,
      backendOptions: s.backendOptions,
      transfer: s.transfer,
    });
    try {
      for (let f = 0; f < source.frameCount; f++) source.readFrame(f);
    } finally {
      source.close();
    }
  } finally {
    try {
      Deno.removeSync(warm);
    } catch {
      // never written
    }
  }
}

/** Computes what a reader of `path` expects, so that `run()` only reads and checks. */
export function prepareReader(path: string, s: ReaderSettings): PreparedReader {
  const backend = usableBackend(s.framing);
  const expected = packmanPattern(s.length, s.seed, s.fileIndex);
  const expectedBytes = new Uint8Array(expected.buffer);
  const recordBytes = s.length * 8;
  const fileBytes = Deno.statSync(path).size; // a missing file fails here, before `ready`
  warmUpReader(backend, path, s, expectedBytes);
  return {
    run(): ReaderReport {
      startAudit();
      const meter = startMeter("read");
      const t0Ns = clockGettime();
      // mutant: readers-read-twice
      const source = backend.openReader(path, {
        layout: packmanLayout(s.length),
        endian: s.endian,
        backendOptions: s.backendOptions,
        transfer: s.transfer,
      });
      let warnings: readonly string[] = [];
      try {
        warnings = source.warnings;
        if (source.frameCount !== s.records) {
          throw new VerifyError(`${path}: ${source.frameCount} records, expected ${s.records}`);
        }
        for (let f = 0; f < s.records; f++) {
          const chunks = source.readFrame(f);
          // the record's array; gsd frames also hold its schema's configuration/step
          const chunk = chunks.find((c) => c.name === CHUNK) ??
            (chunks.length === 1 ? chunks[0] : undefined);
          if (
            chunk === undefined || chunk.dtype !== "float64" || chunk.data.length !== recordBytes
          ) {
            throw new VerifyError(
              `${path}: record ${
                f + 1
              } is not one array of ${s.length} doubles (${chunks.length} chunks, ${
                chunk?.data.length ?? 0
              } bytes)`,
            );
          }
          const bytes = chunk.data;
          const data = new Float64Array(bytes.buffer, bytes.byteOffset, s.length);
          // The seed's check, with its message: record i must hold i in its last element.
          const last = data[s.length - 1]!;
          if (last !== f + 1) {
            throw new VerifyError(
              `${path}: i=${f + 1} bad value = ${last} (a(${s.length}) of record ${f + 1})`,
            );
          }
          if (!bytesEqual(bytes, expectedBytes, recordBytes - 8)) {
            let k = 0;
            while (k < s.length - 1 && data[k] === expected[k]) k++;
            throw new VerifyError(
              `${path}: record ${f + 1}: a(${k + 1}) = ${data[k]}, expected ${
                expected[k]
              } (the seeded pattern)`,
            );
          }
        }
      } finally {
        source.close();
      }
      const t1Ns = clockGettime();
      const m = meter.stop();
      const audit = finishAudit()?.phases.find((p) => p.name === "read");
      return {
        path,
        bytes: source.bytesRead ?? fileBytes,
        records: s.records,
        t0Ns,
        t1Ns,
        wallS: (t1Ns - t0Ns) / 1e9,
        userS: m.userS,
        sysS: m.sysS,
        devReadBytes: m.devReadBytes,
        warnings,
        audit,
      };
    },
  };
}

/** Starts one reader process for `path`; returns the process with stdin, stdout and stderr piped. */
export type ReaderLauncher = (path: string, fileIndex: number) => Deno.ChildProcess;

/** Options of a `readers` run. */
export interface ReadersOptions {
  readonly backend: Backend;
  readonly procs: readonly number[];
  readonly modes: readonly ReadersMode[];
  readonly caches: readonly CacheState[];
  readonly records: number;
  readonly length: number;
  readonly seed: number;
  readonly endian: EndianOption;
  /** The backend's options (f77: marker, subrecordLimit), for writer and readers. */
  readonly backendOptions: OptionValues;
  readonly dir?: string;
  readonly progress: Progress;
  readonly launch: ReaderLauncher;
  /** The readers' backend options (under MPI each rank reads in-process with these). */
  readonly readerOptions?: OptionValues;
  /** Which program reads (`sciobench`, `gfortran`): the rows' `reader` column. */
  readonly reader?: string;
  /** A user's existing file to read instead of writing one (shared mode only). */
  readonly file?: string;
  /** Repeats of every (cache, mode, procs) cell (default 1). */
  readonly repeat?: number;
  /**
   * `--bs` / `--direct` of the writer and the readers (native framings; the launcher passes them
   * to reader processes). With O_DIRECT no cache drop is made and the rows say cache=direct.
   */
  readonly transfer?: Transfer;
  /** Under MPI, one row per rank (with its host and audit trail) after each aggregate row. */
  readonly perRank?: boolean;
}

const decoder = new TextDecoder();

/** Reads a child's stdout: the `ready` line first, then the rest. */
class LineReader {
  readonly #r: ReadableStreamDefaultReader<Uint8Array>;
  #text = "";
  #done = false;

  constructor(stream: ReadableStream<Uint8Array>) {
    this.#r = stream.getReader();
  }

  /** The next line, or null at end of stream. */
  async line(): Promise<string | null> {
    for (;;) {
      const nl = this.#text.indexOf("\n");
      if (nl >= 0) {
        const line = this.#text.slice(0, nl);
        this.#text = this.#text.slice(nl + 1);
        return line;
      }
      if (this.#done) {
        const rest = this.#text;
        this.#text = "";
        return rest === "" ? null : rest;
      }
      const { value, done } = await this.#r.read();
      if (done) this.#done = true;
      else this.#text += decoder.decode(value, { stream: true });
    }
  }

  /** Everything left until end of stream. */
  async rest(): Promise<string> {
    const lines: string[] = [];
    for (let l = await this.line(); l !== null; l = await this.line()) lines.push(l);
    return lines.join("\n");
  }
}

/** The one-line error a failed reader printed (`sciobench: error: ...`), else its last stderr line. */
function childError(stderr: string, code: number): string {
  const lines = stderr.split("\n").map((l) => l.trim()).filter((l) => l !== "");
  const err = lines.findLast((l) => l.startsWith("sciobench: error: "));
  if (err !== undefined) return err.slice("sciobench: error: ".length);
  return lines.at(-1) ?? `exited with code ${code} and no message`;
}

function kill(c: Deno.ChildProcess): void {
  try {
    c.kill("SIGTERM");
  } catch {
    // already exited
  }
}

/**
 * Starts one reader per entry of `files` at once, releases them together when all are ready, and
 * returns their reports. A failed reader fails the run with its own message and exit code.
 */
export async function runReaderProcesses(
  files: readonly string[],
  launch: ReaderLauncher,
  fileIndex: (k: number) => number,
): Promise<ReaderReport[]> {
  const n = files.length;
  const children: Deno.ChildProcess[] = [];
  try {
    for (let k = 0; k < n; k++) children.push(launch(files[k]!, fileIndex(k)));
  } catch (e) {
    children.forEach(kill);
    throw e;
  }
  const stderr = children.map((c) => new Response(c.stderr).text());
  const outs = children.map((c) => new LineReader(c.stdout));
  const fail = async (k: number, code: number): Promise<never> => {
    const msg = childError(await stderr[k]!, code);
    throw new SciobenchError(`reader ${k + 1} of ${n} (${files[k]}): ${msg}`, code === 2 ? 2 : 1);
  };
  let released = false;
  try {
    const ready = await Promise.all(outs.map((o) => o.line()));
    const notReady = ready.findIndex((l) => l !== "ready");
    if (notReady >= 0) {
      children.forEach(kill);
      const st = await children[notReady]!.status;
      await fail(notReady, st.code === 0 ? 1 : st.code);
    }
    const go = new Uint8Array([0x67]);
    await Promise.all(children.map(async (c) => {
      const w = c.stdin.getWriter();
      await w.write(go);
      await w.close();
    }));
    released = true;
    const statuses = await Promise.all(children.map((c) => c.status));
    const texts = await Promise.all(outs.map((o) => o.rest()));
    for (let k = 0; k < n; k++) if (statuses[k]!.code !== 0) await fail(k, statuses[k]!.code);
    return texts.map((t, k) => {
      try {
        return JSON.parse(t.trim().split("\n").at(-1)!) as ReaderReport;
      } catch {
        throw new SciobenchError(
          `reader ${k + 1} of ${n} (${files[k]}) printed no report: ${t.slice(0, 200)}`,
          1,
        );
      }
    });
  } finally {
    if (!released) children.forEach(kill);
    // Let every child finish so none outlives the run (kill above covers failures before release).
    await Promise.allSettled(children.map((c) => c.status));
    await Promise.allSettled(stderr);
  }
}

function warmUp(path: string): void {
  const f = FileHandle.open(path, "read");
  try {
    const buf = new Uint8Array(1 << 20);
    for (let off = 0; off < f.size; off += buf.length) f.readInto(buf, off);
  } finally {
    f.close();
  }
}

/** One (cache, mode, procs) measurement: write the file(s), set the cache state, run the readers. */
async function runOne(
  o: ReadersOptions,
  dir: string,
  cache: CacheState,
  mode: ReadersMode,
  procs: number,
): Promise<Omit<Row, "slope_s_per_proc"> & { wall_s: number }> {
  // mutant: readers-file-count
  const nFiles = mode === "shared" ? 1 : procs;
  // A user's own file (--file) is read as it is: no write phase, and it is never removed.
  const files = o.file !== undefined
    ? [o.file]
    : Array.from({ length: nFiles }, (_, k) => `${dir}/${mode}-${k}.${o.backend.name}`);
  o.progress.update(0, "write");
  if (o.file === undefined) {
    for (const [k, path] of files.entries()) {
      writePackmanFile(o.backend, path, { ...o, fileIndex: mode === "shared" ? 0 : k });
    }
  }
  const fileBytes = Deno.statSync(files[0]!).size;
  let resident = 0;
  for (const path of files) {
    if (o.transfer?.direct) resident = Math.max(resident, residency(path));
    // mutant: readers-cold-drop
    else if (cache === "cold") resident = Math.max(resident, dropCache(path).residentAfter);
    else {
      warmUp(path);
      resident = Math.max(resident, residency(path));
    }
  }
  o.progress.update(0.5, "read");
  // The parent only waits in this phase: the readers record their own trails and report them.
  const phase = beginPhase("read");
  const reports = await runReaderProcesses(
    // mutant: readers-file-of-reader
    Array.from({ length: procs }, (_, k) => files[mode === "shared" ? 0 : k]!),
    o.launch,
    (k) => (mode === "shared" ? 0 : k),
  );
  for (const r of reports) {
    if (r.audit) phase?.processes.push({ pid: r.audit.pid, phase: r.audit });
  }
  endPhase();
  if (o.file === undefined) { for (const path of files) Deno.removeSync(path); }
  const t0 = Math.min(...reports.map((r) => r.t0Ns));
  const t1 = Math.max(...reports.map((r) => r.t1Ns));
  const spread = (Math.max(...reports.map((r) => r.t0Ns)) - t0) / 1e9;
  return readersRow(o, cache, mode, fileBytes, resident, reports, (t1 - t0) / 1e9, spread);
}

/**
 * The row of one (cache, mode, procs) run from its readers' reports: `wall` seconds from the
 * first start to the last end, `spread` seconds between the first and the last start.
 */
function readersRow(
  o: ReadersOptions,
  cache: CacheState,
  mode: ReadersMode,
  fileBytes: number,
  resident: number,
  reports: readonly ReaderReport[],
  wall: number,
  spread: number,
): Omit<Row, "slope_s_per_proc"> & { wall_s: number } {
  for (const [k, r] of reports.entries()) {
    for (const w of r.warnings) o.progress.note(`reader ${k + 1}: ${w}`);
  }
  const procs = reports.length;
  const walls = reports.map((r) => r.wallS);
  const sum = (f: (r: ReaderReport) => number) => reports.reduce((a, r) => a + f(r), 0);
  return {
    mode,
    procs,
    file_bytes: fileBytes,
    wall_s: wall,
    mean_s: sum((r) => r.wallS) / procs,
    max_s: Math.max(...walls),
    min_s: Math.min(...walls),
    aggregate_MiBps: (procs * fileBytes) / 2 ** 20 / wall,
    user_s: sum((r) => r.userS),
    sys_s: sum((r) => r.sysS),
    dev_read_bytes: sum((r) => r.devReadBytes),
    cache: o.transfer?.direct ? "direct" : cache,
    framing: o.backend.name,
    reader: o.reader ?? "sciobench",
    records: o.records,
    length: o.length,
    reader_bytes: sum((r) => r.bytes),
    start_spread_s: spread,
    resident_before: resident,
    ...transferColumns(o.transfer),
  };
}

/** What one rank of a ranked run sends rank 0: its report, times since the release, its trail. */
interface RankReport {
  readonly report: ReaderReport;
  /** Seconds from the releasing barrier to this rank's end and to its start. */
  readonly sinceReleaseS: number;
  readonly startS: number;
  /** Fraction of its file cached when it started. */
  readonly resident: number;
  /** The file it read. */
  readonly path: string;
  /** Its trail: the write (when it wrote), the untimed stretch, its read. */
  readonly audit: RowAudit;
}

/** A ranked run's aggregate row and, on rank 0 with `perRank`, one row per rank. */
interface RankedRun {
  readonly row: Omit<Row, "slope_s_per_proc"> & { wall_s: number };
  readonly ranks: Row[];
}

/**
 * One (cache, mode) run under MPI: every rank is one reader, in-process, of the shared file
 * (rank 0 writes it) or of its own; a barrier releases them. The wall time runs from the barrier
 * to the last rank's end (each rank's time since its barrier, the largest); rank 0 gets every
 * report and trail (MPI_Gatherv) and builds the row, whose trail lists each rank's read as one
 * process (other ranks return a row of their own report only), and with `perRank` one row per
 * rank with its host and its own trail.
 */
async function runOneRanked(
  o: ReadersOptions,
  dir: string,
  cache: CacheState,
  mode: ReadersMode,
): Promise<RankedRun> {
  const w = world();
  const fileIndex = mode === "shared" ? 0 : w.rank;
  const path = `${dir}/${mode}-${fileIndex}.${o.backend.name}`;
  const writer = mode === "separate" || w.rank === 0;
  o.progress.update(0, "write");
  startAudit();
  await fencedPhase("write", () => {
    beginPhase("write", false);
    if (writer) writePackmanFile(o.backend, path, { ...o, fileIndex });
    endPhase();
  });
  // cold: the writer drops its file; warm: every rank reads it once (its node's cache); with
  // O_DIRECT neither
  const dropped = await fencedPhase("drop", () => {
    if (o.transfer?.direct) return undefined;
    if (cache === "warm") warmUp(path);
    return cache === "cold" && writer ? dropCache(path).residentAfter : undefined;
  });
  const { resident, reader, fileBytes } = await fencedPhase("prepare", () => {
    // (after every drop: a shared file's readers see what its writer's drop left)
    const resident = dropped ?? residency(path);
    const reader = prepareReader(path, {
      framing: o.backend.name,
      records: o.records,
      length: o.length,
      seed: o.seed,
      fileIndex,
      endian: o.endian,
      backendOptions: o.readerOptions ?? o.backendOptions,
      transfer: o.transfer,
    });
    return { resident, reader, fileBytes: Deno.statSync(path).size };
  });
  // the reader records its own trail of the read
  const before = finishAudit();
  o.progress.update(0.5, "read");
  const timed = await fencedPhase("read", () => {
    const releasedNs = clockGettime();
    const report = reader.run();
    return {
      report,
      sinceReleaseS: (report.t1Ns - releasedNs) / 1e9,
      startS: (report.t0Ns - releasedNs) / 1e9,
    };
  });
  // every rank has read before the files go, and no rank is still removing when rank 0 removes
  // the scratch directory
  await fencedPhase("remove", () => {
    if (writer) Deno.removeSync(path);
  });
  const audit: RowAudit = {
    pid: Deno.pid,
    phases: [...before?.phases ?? [], ...timed.report.audit ? [timed.report.audit] : []],
  };
  const mine: RankReport = { ...timed, resident, path, audit };
  const texts = w.gatherStrings(JSON.stringify(mine));
  const all = w.rank === 0 ? texts.map((t) => JSON.parse(t) as RankReport) : [mine];
  const row = readersRow(
    o,
    cache,
    mode,
    fileBytes,
    Math.max(...all.map((a) => a.resident)),
    all.map((a) => a.report),
    Math.max(...all.map((a) => a.sinceReleaseS)),
    Math.max(...all.map((a) => a.startS)),
  );
  if (w.rank !== 0) return { row, ranks: [] };
  const perRank = !o.perRank ? [] : all.map((a, rank) =>
    attachAudit({
      // (each reader's warnings were noted with the aggregate row)
      ...readersRow(
        o,
        cache,
        mode,
        fileBytes,
        a.resident,
        [{ ...a.report, warnings: [] }],
        a.sinceReleaseS,
        a.startS,
      ),
      procs: w.size,
      ranks: w.size,
      rank,
      host: w.hosts[rank] ?? "",
      read_path: a.path,
    }, a.audit)
  );
  const paths = new Set(all.map((a) => a.path));
  return {
    row: attachAudit({
      ...row,
      ranks: w.size,
      rank: "all",
      host: hostsLabel(w.hosts),
      read_path: paths.size === 1 ? path : "",
    }, ranksAudit(all, w.hosts)),
    ranks: perRank,
  };
}

/** `N nodes` for the aggregate row's host column. */
function hostsLabel(hosts: readonly string[]): string {
  const n = new Set(hosts).size;
  return `${n} node${n === 1 ? "" : "s"}`;
}

/**
 * The aggregate row's trail: one read phase, from the first rank's start to the last rank's end,
 * with each rank's read as one process (rank and host in the process entry).
 */
function ranksAudit(all: readonly RankReport[], hosts: readonly string[]): RowAudit | undefined {
  startAudit();
  const phase = beginPhase("read");
  endPhase();
  const audit = finishAudit();
  if (phase === undefined || audit === undefined) return undefined;
  phase.startNs = Math.min(...all.map((a) => a.report.t0Ns));
  phase.endNs = Math.max(...all.map((a) => a.report.t1Ns));
  for (const [rank, a] of all.entries()) {
    const read = a.report.audit;
    if (read) phase.processes.push({ pid: a.audit.pid, rank, host: hosts[rank], phase: read });
  }
  return { pid: audit.pid, phases: [phase] };
}

/**
 * Runs every (cache, mode, procs) combination in that nesting order, hands each row to `onRow`
 * and returns them all. `slope_s_per_proc` is the wall time added per added process since the previous row of
 * the same cache and mode (for the first row: wall time / procs), the seed's "cost per process".
 */
export async function runReaders(
  o: ReadersOptions,
  onRow: (row: Row) => void = () => {},
): Promise<Row[]> {
  const rows: Row[] = [];
  if (o.records < 1 || o.length < 1) {
    throw new UsageError("readers: --records and --length must be positive");
  }
  checkTransfer(o.backend, o.transfer);
  if (o.transfer && o.reader === "gfortran") {
    throw new UsageError(
      `--${o.transfer.direct ? "direct" : "bs"}: the gfortran reader is a program that makes its ` +
        "own system calls; use --reader sciobench",
    );
  }
  const w = world();
  const ranked = w.size > 1;
  const cold = new ColdReads(o.dir ?? ".", (text) => o.progress.note(text));
  await withScratchDir(o.dir, async (dir) => {
    const fs = statfs(dir);
    const fsType = fs.typeName;
    const count = (o.repeat ?? 1) * o.caches.length * o.modes.length *
      (ranked ? 1 : o.procs.length);
    let index = 0;
    for (let repeat = 1; repeat <= (o.repeat ?? 1); repeat++) {
      for (const cache of o.caches) {
        for (const mode of o.modes) {
          let prev: { procs: number; wall: number } | undefined;
          // under MPI the ranks are the readers: one run with as many readers as ranks
          for (const procs of ranked ? [w.size] : o.procs) {
            const again = (o.repeat ?? 1) > 1 ? ` repeat ${repeat}/${o.repeat}` : "";
            o.progress.begin(`${mode} ${cache} procs=${procs}${again}`, { index: ++index, count });
            const ran = ranked
              ? await runOneRanked(o, dir, cache, mode)
              : { row: await audited(() => runOne(o, dir, cache, mode, procs)), ranks: [] };
            const row = ran.row;
            const slope = prev === undefined
              ? row.wall_s / procs
              : (row.wall_s - prev.wall) / (procs - prev.procs);
            prev = { procs, wall: row.wall_s };
            o.progress.clear();
            const out = attachAudit({
              ...row,
              slope_s_per_proc: slope,
              fs_type: fsType,
              repeat,
              cold_ok: "",
              stat: "run",
              error: "",
            }, auditOf(row));
            // a shared file is fetched from the device once, however many read it
            cold.judge(out, String(row.cache), {
              fsType: fs.type,
              residentAfterDrop: Number(row.resident_before),
              // mutant: readers-cold-ok-shared-bytes
              readBytes: Number(row.reader_bytes) / (mode === "shared" ? Number(row.procs) : 1),
              deviceReadBytes: Number(row.dev_read_bytes),
            });
            rows.push(out);
            onRow(out);
            for (const r of ran.ranks) {
              const each = attachAudit(
                { ...r, fs_type: fsType, repeat, cold_ok: out.cold_ok, stat: "run", error: "" },
                auditOf(r),
              );
              rows.push(each);
              onRow(each);
            }
          }
        }
      }
    }
  }, rankScratchShare());
  return rows;
}
