/**
 * The audit trail: what the process asked the kernel to do while a row was measured, recorded
 * from inside lib/sys/libc.ts (every open, pread, pwrite, fsync, fdatasync and posix_fadvise of
 * sciobench goes through it), split into the measured phases and the untimed stretches between
 * them. Each phase keeps counters (calls, bytes, backward read offsets per file), the sync and
 * fadvise calls with their time from the phase's start and to its end, the open flags and paths,
 * the clock and CPU readings its numbers were computed from, and the kernel's own per-process
 * I/O counters (/proc/self/io), which also count what C libraries (HDF5, netCDF, HDF4) do.
 *
 * Recording is cheap: a map lookup and a few additions per call, no allocation per read or write.
 * @module
 */
import {
  clockGettime,
  type IoObserver,
  type LibrarySync,
  type MetaCall,
  O,
  observeIo,
} from "./libc.ts";

/**
 * One fsync, fdatasync or posix_fadvise call, or a library's durable point (MPI_File_sync),
 * placed in time within its phase.
 */
export interface AuditSync {
  /** `fsync`, `fdatasync`, `fadvise`, or a library's own (`MPI_File_sync`). */
  readonly call: "fsync" | "fdatasync" | "fadvise" | LibrarySync;
  /** The file it was made on. */
  readonly path: string;
  /** For fadvise: the advice (`DONTNEED`, `WILLNEED`, ...). */
  readonly advice?: string;
  /** Seconds from the phase's start to the call's return. */
  readonly atS: number;
  /** Seconds from the call's return to the phase's end (set when the phase ends). */
  toEndS: number;
  /** Writes to and reads of the file made in this phase before the call. */
  readonly writesBefore: number;
  readonly readsBefore: number;
}

/** A page-cache residency measurement (mmap + mincore) of a file. */
export interface AuditResidency {
  /** The file measured. */
  readonly path: string;
  /** Fraction of its pages resident, 0..1. */
  readonly fraction: number;
}

/** What one phase did to one file. */
export interface AuditFile {
  /** Path as opened. */
  readonly path: string;
  /**
   * Names of the open flags the file was opened with (`RDONLY`, `RDWR|CREAT|TRUNC`, ...); empty
   * for a file only a library opened (its syncs are recorded, its calls only in procIo).
   */
  flags: string;
  /** Number of times the file was opened in this phase. */
  opens: number;
  /** pread calls and bytes returned. */
  reads: number;
  readBytes: number;
  /** pwrite calls and bytes written. */
  writes: number;
  writeBytes: number;
  /** Reads that started before the end of the previous read of the same descriptor. */
  readBackwards: number;
  /** Reads that started after the end of the previous read (a skip forward). */
  readSkips: number;
  /** Offset of the first read in this phase, -1 when none. */
  firstReadOffset: number;
  /** The first {@link READ_LOG_READS} reads as flat pairs: offset, bytes, offset, bytes, ... */
  readonly readLog: number[];
  /** fsync, fdatasync and fadvise calls on it. */
  syncs: number;
  /** The read requests a queue made of it (`--iodepth`, `--engine`), when one did. */
  queued?: AuditRequests;
  /** The write requests a queue made of it (`--iodepth`, `--engine`), when one did. */
  queuedWrites?: AuditRequests;
}

/** The read (or write) requests of a queue on one file in one phase (lib/sys/queue.ts). */
export interface AuditRequests {
  /** Requests completed. */
  requests: number;
  /** Most requests in flight at once (each counted when it was submitted). */
  maxInFlight: number;
  /**
   * The first {@link READ_LOG_READS} requests as flat quadruples: offset, bytes, and their
   * submission and completion, ns after the phase's start.
   */
  readonly log: number[];
}

/** Readings a phase's numbers were computed from (the meter's raw values). */
export interface AuditReadings {
  /** CLOCK_MONOTONIC at start and end, ns. */
  readonly monotonicNs: readonly [number, number];
  /** times(): user and system ticks of the process at start and end. */
  readonly userTicks: readonly [number, number];
  readonly sysTicks: readonly [number, number];
  /** sysconf(_SC_CLK_TCK). */
  readonly clkTck: number;
  /** getrusage: user and system µs, blocks read and written (512 B) at start and end. */
  readonly userUs: readonly [number, number];
  readonly sysUs: readonly [number, number];
  readonly inBlocks: readonly [number, number];
  readonly outBlocks: readonly [number, number];
  /** getrusage: minor page faults of the process (pages first touched) at start and end. */
  readonly minorFaults: readonly [number, number];
}

/** The kernel's per-process I/O counters over a phase (/proc/self/io deltas). */
export interface ProcIo {
  /** Bytes returned by read-type system calls (any file, pipe or socket). */
  readonly rchar: number;
  /** Bytes passed to write-type system calls. */
  readonly wchar: number;
  /** Read-type and write-type system calls. */
  readonly syscr: number;
  readonly syscw: number;
  /** Bytes the process caused to be fetched from / sent to storage. */
  readonly readBytes: number;
  readonly writeBytes: number;
}

/**
 * What a phase did to names rather than data: files and directories created, opened and synced,
 * and the time its metadata calls took (open, close, mkdir, rename, unlink, and fsync of a
 * directory), apart from its data calls (pread, pwrite, fsync of a file).
 */
export interface AuditMeta {
  /** Opens of regular files with O_CREAT (a file made, or truncated in its place). */
  filesCreated: number;
  /** mkdir calls. */
  dirsCreated: number;
  /** Opens of regular files (every open; a file opened twice counts twice). */
  filesOpened: number;
  /** Opens of directories (O_DIRECTORY: to fsync them). */
  dirsOpened: number;
  /** fsync and fdatasync calls on files. */
  filesSynced: number;
  /** fsync calls on directories. */
  dirsSynced: number;
  /** rename and unlink calls. */
  renames: number;
  unlinks: number;
  /** Nanoseconds spent in the metadata calls. */
  metaNs: number;
}

/** A child process's own trail of a phase (readers), as it reported it. */
export interface AuditProcess {
  /** The child's process id. */
  readonly pid: number;
  /** Under MPI, the rank that read (its own process, maybe on another node). */
  readonly rank?: number;
  /** Under MPI, that rank's host. */
  readonly host?: string;
  /** Its phase. */
  readonly phase: AuditPhase;
}

/** One phase: measured (`timed`) or an untimed stretch between measured phases. */
export interface AuditPhase {
  /** `write`, `open`, `read`, `random`, ... or `untimed` between them. */
  readonly name: string;
  /** True for a phase whose clock and CPU readings make a row's numbers. */
  readonly timed: boolean;
  /** Process that recorded it. */
  readonly pid: number;
  /** CLOCK_MONOTONIC at start and end, ns (shared by all processes of the machine). */
  startNs: number;
  endNs: number;
  /** Totals over all files. */
  reads: number;
  readBytes: number;
  writes: number;
  writeBytes: number;
  readBackwards: number;
  /** fsync/fdatasync/fadvise calls in order. */
  readonly syncs: AuditSync[];
  /** Residency measurements in order (after each cache drop). */
  readonly residency: AuditResidency[];
  /** Files touched (opened, read, written or synced). */
  readonly files: AuditFile[];
  /** Child processes that did this phase's work and reported their own trail. */
  readonly processes: AuditProcess[];
  /** The meter's readings (timed phases). */
  readings?: AuditReadings;
  /** /proc/self/io deltas over the phase, when readable. */
  procIo?: ProcIo;
  /** Its calls on names (absent in a trail a child of an older version reported). */
  meta?: AuditMeta;
}

/** The trail of one result row. */
export interface RowAudit {
  /** Process that measured the row. */
  readonly pid: number;
  /** Phases in order. */
  readonly phases: AuditPhase[];
}

/** Reads per file and phase whose offset and size are kept in order (a small, bounded log). */
export const READ_LOG_READS = 128;

const ADVICE = ["NORMAL", "RANDOM", "SEQUENTIAL", "WILLNEED", "DONTNEED", "NOREUSE"];

/** Names of open flags, `|`-joined (O_CLOEXEC left out: sciobench sets it on every open). */
export function flagNames(flags: number): string {
  const acc = flags & 3;
  const names = [acc === 0 ? "RDONLY" : acc === 1 ? "WRONLY" : "RDWR"];
  for (const k of ["CREAT", "EXCL", "TRUNC", "APPEND", "DSYNC", "DIRECT"] as const) {
    if (flags & O[k]) names.push(k);
  }
  return names.join("|");
}

interface FdState {
  path: string;
  flags: number;
  /** Phase the cached counters belong to. */
  phase: AuditPhase | undefined;
  file: AuditFile | undefined;
  lastReadEnd: number;
}

function readProcIo(): number[] | undefined {
  try {
    const text = Deno.readTextFileSync("/proc/self/io");
    const v: number[] = [];
    for (const line of text.split("\n")) {
      const i = line.indexOf(":");
      if (i > 0) v.push(Number(line.slice(i + 1)));
    }
    return v.length >= 6 ? v : undefined;
  } catch {
    return undefined;
  }
}

function newPhase(name: string, timed: boolean): AuditPhase {
  return {
    name,
    timed,
    pid: Deno.pid,
    startNs: clockGettime(),
    endNs: 0,
    reads: 0,
    readBytes: 0,
    writes: 0,
    writeBytes: 0,
    readBackwards: 0,
    syncs: [],
    residency: [],
    files: [],
    processes: [],
    meta: noAuditMeta(),
  };
}

/** Metadata counters of nothing done yet (every count 0, 0 ns). */
export function noAuditMeta(): AuditMeta {
  return {
    filesCreated: 0,
    dirsCreated: 0,
    filesOpened: 0,
    dirsOpened: 0,
    filesSynced: 0,
    dirsSynced: 0,
    renames: 0,
    unlinks: 0,
    metaNs: 0,
  };
}

function isEmpty(p: AuditPhase): boolean {
  return p.files.length === 0 && p.processes.length === 0 && p.readings === undefined;
}

/** Records every libc I/O call into the current phase of a row's trail. */
class Recorder implements IoObserver {
  readonly #fds = new Map<number, FdState>();
  #trail: AuditPhase[] = [];
  #phase: AuditPhase = newPhase("untimed", false);
  #io: number[] | undefined;

  /** A recorder that knows the descriptors `before` had open (their counters start afresh). */
  constructor(before?: Recorder) {
    for (const [fd, s] of before === undefined ? [] : before.#fds) {
      this.#fds.set(fd, {
        path: s.path,
        flags: s.flags,
        phase: undefined,
        file: undefined,
        lastReadEnd: -1,
      });
    }
  }

  /** The descriptor's state with `file` set to its counters in the current phase (no allocation). */
  #state(fd: number): FdState | undefined {
    const s = this.#fds.get(fd);
    if (s === undefined) return undefined;
    if (s.phase !== this.#phase || s.file === undefined) {
      s.phase = this.#phase;
      s.lastReadEnd = -1;
      s.file = this.#fileOf(s.path, s.flags);
    }
    return s;
  }

  #fileOf(path: string, flags: number | undefined): AuditFile {
    let f = this.#phase.files.find((x) => x.path === path);
    if (f === undefined) {
      f = {
        path,
        flags: flags === undefined ? "" : flagNames(flags),
        opens: 0,
        reads: 0,
        readBytes: 0,
        writes: 0,
        writeBytes: 0,
        readBackwards: 0,
        readSkips: 0,
        firstReadOffset: -1,
        readLog: [],
        syncs: 0,
      };
      this.#phase.files.push(f);
    }
    return f;
  }

  open(fd: number, path: string, flags: number): void {
    const f = this.#fileOf(path, flags);
    f.opens++;
    f.flags = flagNames(flags);
    this.#fds.set(fd, { path, flags, phase: this.#phase, file: f, lastReadEnd: -1 });
  }

  close(fd: number): void {
    this.#fds.delete(fd);
  }

  read(fd: number, offset: number, bytes: number): void {
    const p = this.#phase;
    p.reads++;
    p.readBytes += bytes;
    const s = this.#state(fd);
    if (s === undefined) return;
    const f = s.file!;
    f.reads++;
    f.readBytes += bytes;
    if (f.firstReadOffset < 0) f.firstReadOffset = offset;
    if (f.readLog.length < 2 * READ_LOG_READS) f.readLog.push(offset, bytes);
    if (s.lastReadEnd >= 0) {
      if (offset < s.lastReadEnd) {
        f.readBackwards++;
        p.readBackwards++;
      } else if (offset > s.lastReadEnd) f.readSkips++;
    }
    s.lastReadEnd = offset + bytes;
  }

  request(
    fd: number,
    offset: number,
    bytes: number,
    submittedNs: number,
    completedNs: number,
    inFlight: number,
    write = false,
  ): void {
    const f = this.#state(fd)?.file;
    if (f === undefined) return;
    const empty = (): AuditRequests => ({ requests: 0, maxInFlight: 0, log: [] });
    const q = write ? (f.queuedWrites ??= empty()) : (f.queued ??= empty());
    q.requests++;
    if (inFlight > q.maxInFlight) q.maxInFlight = inFlight;
    if (q.log.length < 4 * READ_LOG_READS) {
      const t0 = this.#phase.startNs;
      q.log.push(offset, bytes, submittedNs - t0, completedNs - t0);
    }
  }

  write(fd: number, _offset: number, bytes: number): void {
    const p = this.#phase;
    p.writes++;
    p.writeBytes += bytes;
    const s = this.#state(fd);
    if (s === undefined) return;
    s.file!.writes++;
    s.file!.writeBytes += bytes;
  }

  meta(call: MetaCall, fd: number, _path: string, ns: number): void {
    const m = this.#phase.meta!;
    const directory = ((this.#fds.get(fd)?.flags ?? 0) & O.DIRECTORY) !== 0;
    if (call === "open") {
      const flags = this.#fds.get(fd)?.flags ?? 0;
      if (directory) m.dirsOpened++;
      else {
        m.filesOpened++;
        if (flags & O.CREAT) m.filesCreated++;
      }
    } else if (call === "mkdir") m.dirsCreated++;
    else if (call === "rename") m.renames++;
    else if (call === "unlink") m.unlinks++;
    // a file's fsync is a data call (counted in sync); a directory's is about its names
    if (call === "fsync" && !directory) return;
    m.metaNs += ns;
  }

  sync(fd: number, call: "fsync" | "fdatasync" | "fadvise", advice: number): void {
    if (call !== "fadvise") {
      const directory = ((this.#fds.get(fd)?.flags ?? 0) & O.DIRECTORY) !== 0;
      if (directory) this.#phase.meta!.dirsSynced++;
      else this.#phase.meta!.filesSynced++;
    }
    const f = this.#state(fd)?.file;
    const path = f?.path ?? `fd ${fd}`;
    if (f) f.syncs++;
    const atS = (clockGettime() - this.#phase.startNs) / 1e9;
    const before = { writesBefore: f?.writes ?? 0, readsBefore: f?.reads ?? 0 };
    this.#phase.syncs.push(
      call === "fadvise"
        ? { call, path, advice: ADVICE[advice] ?? String(advice), atS, toEndS: 0, ...before }
        : { call, path, atS, toEndS: 0, ...before },
    );
  }

  librarySync(path: string, call: LibrarySync): void {
    const f = this.#fileOf(path, undefined);
    f.syncs++;
    const atS = (clockGettime() - this.#phase.startNs) / 1e9;
    this.#phase.syncs.push({
      call,
      path,
      atS,
      toEndS: 0,
      writesBefore: f.writes,
      readsBefore: f.reads,
    });
  }

  resident(fd: number, fraction: number): void {
    const path = this.#state(fd)?.file?.path ?? `fd ${fd}`;
    this.#phase.residency.push({ path, fraction });
  }

  /** Ends the current phase (kept unless it is an empty untimed stretch) and starts `name`. */
  switchTo(name: string, timed: boolean): AuditPhase {
    this.#end();
    this.#phase = newPhase(name, timed);
    this.#io = readProcIo();
    return this.#phase;
  }

  #end(): void {
    const p = this.#phase;
    if (p.endNs === 0) p.endNs = clockGettime();
    for (const s of p.syncs) s.toEndS = (p.endNs - p.startNs) / 1e9 - s.atS;
    const io = readProcIo();
    const io0 = this.#io;
    if (io && io0) {
      p.procIo = {
        rchar: io[0]! - io0[0]!,
        wchar: io[1]! - io0[1]!,
        syscr: io[2]! - io0[2]!,
        syscw: io[3]! - io0[3]!,
        readBytes: io[4]! - io0[4]!,
        writeBytes: io[5]! - io0[5]!,
      };
    }
    if (!(p.name === "untimed" && isEmpty(p))) this.#trail.push(p);
  }

  /** Ends the trail: the phases recorded since the recorder was made. */
  finish(): AuditPhase[] {
    this.#end();
    const out = this.#trail;
    this.#trail = [];
    this.#phase = newPhase("untimed", false);
    return out;
  }
}

let recorder: Recorder | undefined;

/**
 * Takes a throwaway recorder through what the phases of a cell do to one (a descriptor opened in
 * one phase and read, written and queued in the next ones), once, at load: V8 then has type
 * feedback for each branch before it optimizes the per-call bookkeeping. Otherwise the first
 * timed read phase was the first to read a file opened in an earlier phase, reached a branch no
 * warm-up had, and V8 dropped the optimized read loop in the middle of it.
 */
function exerciseRecorder(): void {
  const r = new Recorder();
  r.switchTo("untimed", false);
  r.open(-1, "", 0);
  r.write(-1, 0, 1);
  for (const timed of [true, false, true]) {
    r.switchTo("exercise", timed);
    r.read(-1, 0, 1);
    r.read(-1, 1, 1);
    r.request(-1, 0, 1, 0, 1, 1);
    r.request(-1, 0, 1, 0, 1, 1, true);
    r.write(-1, 0, 1);
  }
  r.close(-1);
  r.finish();
}
// mutant: audit-exercise
exerciseRecorder();

/** The environment variable that prints each phase's start on stderr (`1`). */
export const TRACE_PHASES_ENV = "SCIOBENCH_TRACE_PHASES";

/**
 * Whether each phase's start (and each untimed stretch's) is printed on stderr as it begins, with
 * its CLOCK_MONOTONIC time in seconds, to line a run up with another trace of the process (V8's
 * `--trace-gc`, strace, `perf record -k mono`).
 */
const TRACE_PHASES = Deno.env.get(TRACE_PHASES_ENV) === "1";

/**
 * Starts recording a row's trail (replacing one not finished). Every libc call is recorded from
 * now on into an untimed stretch until {@link beginPhase}.
 */
export function startAudit(): void {
  recorder = new Recorder();
  observeIo(recorder);
  switchPhase(recorder, "untimed", false);
}

/**
 * Ends the current row's trail and returns it, and starts the next row's, which knows the files
 * open now (rows that read one file opened once: loader's epochs); undefined, and nothing
 * started, when no trail is recorded.
 */
export function nextAudit(): RowAudit | undefined {
  const r = recorder;
  if (r === undefined) return undefined;
  const out = { pid: Deno.pid, phases: r.finish() };
  recorder = new Recorder(r);
  observeIo(recorder);
  switchPhase(recorder, "untimed", false);
  return out;
}

/** Starts phase `name` (ends the current one); no-op when no trail is recorded. */
export function beginPhase(name: string, timed = true): AuditPhase | undefined {
  return recorder && switchPhase(recorder, name, timed);
}

/** Ends the current phase and starts an untimed stretch; no-op when no trail is recorded. */
export function endPhase(): void {
  if (recorder) switchPhase(recorder, "untimed", false);
}

/** Says `what` on stderr, with the time, beside the phases' starts ({@link TRACE_PHASES_ENV}). */
export function traceNote(what: string): void {
  if (!TRACE_PHASES) return;
  console.error(`sciobench: trace: ${what} at ${(clockGettime() / 1e9).toFixed(6)} s`);
}

/** `r`'s next phase, said on stderr with {@link TRACE_PHASES_ENV}. */
function switchPhase(r: Recorder, name: string, timed: boolean): AuditPhase {
  if (TRACE_PHASES) {
    const at = (clockGettime() / 1e9).toFixed(6);
    console.error(`sciobench: trace: phase ${name}${timed ? " (timed)" : ""} at ${at} s`);
  }
  return r.switchTo(name, timed);
}

/** Stops recording and returns the trail (undefined when none was started). */
export function finishAudit(): RowAudit | undefined {
  const r = recorder;
  if (r === undefined) return undefined;
  recorder = undefined;
  observeIo(undefined);
  return { pid: Deno.pid, phases: r.finish() };
}

const ROW_AUDITS = new WeakMap<object, RowAudit>();

/**
 * Runs `measure` while recording a trail, and attaches the trail to the row it returns (unless
 * the row already carries one: another program's own, such as the python3-gsd peer's).
 */
export async function audited<T extends object>(measure: () => Promise<T>): Promise<T> {
  startAudit();
  try {
    const row = await measure();
    const trail = finishAudit();
    return auditOf(row) ? row : attachAudit(row, trail);
  } finally {
    finishAudit();
  }
}

/** Attaches a trail to the result row it explains. */
export function attachAudit<T extends object>(row: T, audit: RowAudit | undefined): T {
  if (audit) ROW_AUDITS.set(row, audit);
  return row;
}

/** The trail attached to a row, if any. */
export function auditOf(row: object): RowAudit | undefined {
  return ROW_AUDITS.get(row);
}

function mib(bytes: number): string {
  return `${(bytes / 2 ** 20).toPrecision(3)} MiB`;
}

/**
 * One line per row: each phase with its calls, bytes, backward reads, files and processes, and
 * its sync/fadvise calls with their time from the phase's start and to its end, e.g.
 * `write: 3 writes 1.00 MiB 1 file, fsync +0.0101s/-0.0000s; untimed: fdatasync, fadvise
 * DONTNEED; read: 10 reads 1.00 MiB 0 back`.
 */
export function auditSummary(audit: RowAudit): string {
  if (audit.phases.length === 0) {
    return "nothing recorded: the work ran outside sciobench's libc layer (another program)";
  }
  return audit.phases.map((p) => {
    const parts: string[] = [];
    let reads = p.reads, readBytes = p.readBytes, back = p.readBackwards, writes = p.writes;
    let writeBytes = p.writeBytes;
    const files = new Set(p.files.map((f) => f.path));
    for (const c of p.processes) {
      reads += c.phase.reads;
      readBytes += c.phase.readBytes;
      back += c.phase.readBackwards;
      writes += c.phase.writes;
      writeBytes += c.phase.writeBytes;
      for (const f of c.phase.files) files.add(f.path);
    }
    if (reads > 0) parts.push(`${reads} reads ${mib(readBytes)} ${back} back`);
    if (writes > 0) parts.push(`${writes} writes ${mib(writeBytes)}`);
    if (files.size > 0) parts.push(`${files.size} file${files.size === 1 ? "" : "s"}`);
    if (p.processes.length > 0) parts.push(`${p.processes.length} processes`);
    for (const s of p.syncs) {
      const what = s.advice ? `${s.call} ${s.advice}` : s.call;
      parts.push(p.timed ? `${what} +${s.atS.toFixed(4)}s/-${s.toEndS.toFixed(4)}s` : what);
    }
    return `${p.name}: ${parts.join(", ") || "no calls"}`;
  }).join("; ");
}
