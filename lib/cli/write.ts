/**
 * `sciobench write`: writes the table workload's seeded frames to a file and keeps it.
 * @module
 */
import { detectBackend, usableBackend } from "../backends/registry.ts";
import {
  checkOutputTarget,
  commitTemp,
  removeQuietly,
  removeStaleTemps,
  tempPathFor,
} from "../io/atomic.ts";
import { onInterrupt } from "../io/interrupt.ts";
import { reportRollBack, rollBack, undoInterruptedAppend } from "../io/journal.ts";
import { type FileLock, lockFile } from "../io/lock.ts";
import type { Backend, FrameSource } from "../backends/backend.ts";
import type { ChunkLayout } from "../framings/types.ts";
import { requireFile } from "../workloads/open.ts";
import { IoError, SciobenchError, UsageError } from "../core/errors.ts";
import type { Transfer } from "../io/transfer.ts";
import { FileHandle } from "../io/file.ts";
import { statfs } from "../sys/libc.ts";
import { attachAudit, type RowAudit } from "../sys/audit.ts";
import type { PhaseSample } from "../sys/meter.ts";
import { transferColumns } from "../workloads/transfer.ts";
import {
  measureWrite,
  WRITE_COLUMN_DOCS as COLUMNS,
  type WriteJob,
  type WriteResult,
} from "../workloads/write.ts";
import { BYTES_PER_PARTICLE, TableFrames } from "../workloads/table/mod.ts";
import { parseCount, parseSeed } from "../core/values.ts";
import { parseSize } from "../core/sizes.ts";
import type { Command } from "./command.ts";
import { checkFreeSpace, checkMemory } from "../workloads/checks.ts";
import { parseFlags } from "./parse_flags.ts";
import { commandHelp } from "./help.ts";
import { checkOutputFormat, checkOutputsApart, checkPlotPath, openResults } from "./output.ts";
import {
  backendOptionArgs,
  parseEndian,
  parseFsync,
  parseTransfer,
} from "../workloads/settings.ts";
import type { FsyncPolicy } from "../backends/backend.ts";
import type { OptionValues } from "../framings/options.ts";
import { columnHelp } from "../report/human.ts";
import {
  type ChildOutcome,
  failureMessage,
  isolates,
  LibraryChild,
  libraryLimits,
  relayToTerminal,
} from "./isolate.ts";
import { diskFullNote } from "../peers/common.ts";

const HELP = () =>
  commandHelp("write", {
    title: "write the table's frames to FILE and keep it",
    usage: "--framing NAME --n N (--frames K | --size SIZE) [options] FILE",
    intro:
      `Writes K frames of position (N x 3 float32) and orientation (N x 4 float32), the same seeded data
'sciobench table' uses (frame i has step 10 i and element [0][0] = i), fsyncs, and prints one
row with the write's timing (in the --format asked). An existing FILE is never replaced unless
--force is given. With --append the frames are added to an existing FILE (raw, f77, ieeeio,
gsd, netcdf), numbered on from its last frame, in its byte order; if anything fails, FILE is put
back as it was. A new or replaced FILE is written to .FILE.sciobench-tmp-PID beside it and
renamed over FILE when complete; a library framing (hdf5, netcdf4, netcdf-lib, hdf4) writes it
in a child process, so a crash of the library is one line and leaves FILE as it was. Writers
lock FILE: a second writer gets one line and exit 1 (or --wait). SIGINT and SIGTERM leave FILE
as it was and exit 130 and 143.`,
    after: `Columns (CSV order):
${columnHelp(COLUMNS)}`,
  });

/** The `write` subcommand. */
export const writeCommand: Command = {
  name: "write",
  summary: "write the table's frames to a file and keep it",
  get help(): string {
    return HELP();
  },
  async run(args: string[]): Promise<void> {
    const { values, positionals } = parseFlags("write", args, true);
    if (values.append && values.force) {
      throw new UsageError(
        "write: --append adds to FILE and --force replaces it; give one of them",
      );
    }
    if (values.framing === undefined && !values.append) {
      throw new UsageError("write: --framing is required");
    }
    if (values.n === undefined) throw new UsageError("write: --n is required");
    if (values.frames === undefined && values.size === undefined) {
      throw new UsageError("write: --frames is required (or --size: frames of that many bytes)");
    }
    if (values.frames !== undefined && values.size !== undefined) {
      throw new UsageError("write: give --frames K or --size SIZE, not both");
    }
    if (positionals.length !== 1) {
      throw new UsageError("write: give exactly one FILE (see 'sciobench write --help')");
    }
    const path = positionals[0]!;
    const n = parseCount(values.n, "--n");
    // --size as the table sizes its files: ceil(size / 28 N) frames
    const count = values.frames !== undefined
      ? parseCount(values.frames, "--frames")
      : Math.max(1, Math.ceil(parseSize(values.size!, "--size") / (BYTES_PER_PARTICLE * n)));
    const seed = parseSeed(values.seed);
    // Bounds before anything is allocated or created: one frame in memory, all of them on disk.
    checkMemory(4 * BYTES_PER_PARTICLE * n, `a frame of N = ${n} particles`, "use a smaller --n");
    const dir = path.includes("/") ? path.slice(0, path.lastIndexOf("/")) || "/" : ".";
    try {
      checkFreeSpace(
        statfs(dir),
        dir,
        BYTES_PER_PARTICLE * n * count,
        `${count} frames of N = ${n}`,
        "use a smaller --n or fewer --frames",
      );
    } catch (e) {
      if (!(e instanceof UsageError)) {
        throw new IoError(
          `${path}: cannot write there: ${e instanceof Error ? e.message : String(e)}`,
        );
      }
      throw e;
    }
    const endian = values.endian === undefined ? undefined : parseEndian(values.endian);
    checkOutputFormat(values, false);
    if (values.append && values.direct) {
      throw new UsageError(
        "write: --append cannot use --direct (its undo journal reads through the page cache); " +
          "append without --direct, or write a new file with it",
      );
    }
    if (values.append && values.fsync === "none") {
      throw new UsageError(
        "write: --append always fsyncs (its undo journal needs the data on disk before the " +
          "file's index or header points to it); use --fsync end or each",
      );
    }
    checkPlotPath("write", undefined, values.plot, values.force);
    checkOutputsApart(values, [["FILE", path]]);
    const frames = new TableFrames(n, seed);
    // Everything is checked before any file is created, truncated or changed.
    if (values.out !== undefined) {
      checkOutputTarget(values.out, values.force, "--out");
    }
    let backend: Backend;
    let backendOptions: OptionValues;
    let first = 0;
    let lock: FileLock | undefined;
    let m: PhaseSample;
    let fsync: FsyncPolicy = "end";
    let transfer: Transfer | undefined;
    let audit: RowAudit | undefined;
    /** The backend's --option, --fsync, --bs and --direct, checked before FILE is touched. */
    const settle = (): void => {
      backendOptions = backendOptionArgs(backend, values.option, "write");
      fsync = parseFsync(values.fsync, [backend]);
      transfer = parseTransfer(values, [backend], dir);
    };
    /** What a write needs besides the backend and its file (a library child gets it as JSON). */
    const job = (): WriteJob => ({
      n,
      count,
      seed,
      first,
      endian,
      fsync,
      transfer,
      options: values.option ?? [],
    });
    /** Writes the frames to `file` (the target or its temporary name), measured. */
    const timedWrite = async (file: string, create: "new" | "append"): Promise<PhaseSample> => {
      const r = await measureWrite(backend, file, create, backendOptions, job());
      audit = r.audit;
      return r.sample;
    };
    // A signal between the steps below (after the file is complete, before the row is out) still
    // gets one line and the signal's exit code, never the default action's silent death.
    let complete = false;
    const whole = onInterrupt(() => complete ? `${path} is complete` : undefined);
    try {
      await writeAndReport();
    } finally {
      whole();
    }
    async function writeAndReport(): Promise<void> {
      try {
        if (values.append) {
          requireFile(path, false);
          lock = await lockFile(path, values.wait);
          reportRollBack(path, rollBack(path));
          backend = values.framing === undefined
            ? detectBackend(path)
            : usableBackend(values.framing);
          settle();
          if (backend.kind === "peer") {
            // Before the library opens the file (HDF5 would also trip over the lock held here).
            throw new UsageError(`peer '${backend.name}' cannot append to an existing file`);
          }
          const existing = backend.openReader(path, { layout: frames.layout, backendOptions });
          try {
            first = existing.frameCount;
            checkSameLayout(existing, frames.layout);
          } finally {
            existing.close();
          }
          const sizeBefore = Deno.statSync(path).size;
          const undo = onInterrupt(() =>
            undoInterruptedAppend(path, sizeBefore) === "complete"
              ? `${path} is complete`
              : `${path} was left as it was`
          );
          try {
            m = await timedWrite(path, "append");
            complete = true;
          } finally {
            undo();
          }
        } else {
          backend = usableBackend(values.framing!);
          settle();
          const target = checkOutputTarget(path, values.force);
          if (target.exists) lock = await lockFile(target.path, values.wait);
          removeStaleTemps(target.path);
          const temp = tempPathFor(target.path);
          const undo = onInterrupt(() => {
            removeQuietly(temp);
            return target.exists ? `${path} was left as it was` : `${path} was not written`;
          });
          try {
            if (isolates(backend)) {
              // A library on a user's path runs in a child; this process owns the temporary file.
              const r = await writeInChild(backend.name, temp, path, target.exists, job());
              m = r.sample;
              audit = r.audit;
            } else m = await timedWrite(temp, "new");
            // --fsync none: the timing held no fsync, but FILE never appears unsynced
            // mutant: write-cli-fsync-none
            if (fsync === "none") syncFile(temp);
            commitTemp(temp, target);
            complete = true;
          } catch (e) {
            removeQuietly(temp);
            throw e;
          } finally {
            undo();
          }
        }
      } finally {
        lock?.release();
      }
      const dataBytes = count * BYTES_PER_PARTICLE * n;
      const out = openResults({
        command: "write",
        args,
        columns: COLUMNS,
        human: COLUMNS.map((c) => c.name),
        options: {
          framing: backend.name,
          n,
          frames: count,
          seed,
          endian,
          option: backendOptions,
          fsync,
          bs: transfer?.bs ?? null,
          direct: transfer?.direct ?? false,
        },
      }, values);
      out.add(attachAudit({
        framing: backend.name,
        path,
        N: n,
        frames: count,
        file_bytes: Deno.statSync(path).size,
        data_bytes: dataBytes,
        write_s: m.wallS,
        write_MiBps: dataBytes / 2 ** 20 / m.wallS,
        write_user_s: m.userS,
        write_sys_s: m.sysS,
        write_dev_bytes: m.devWriteBytes,
        seed,
        first_frame: first,
        fsync,
        ...transferColumns(transfer),
      }, audit));
      await out.finish();
    }
  },
};

/** Bytes free beside a failed library write below which the failure is the disk being full. */
const FULL_DISK_MARGIN = 1 << 20;

/**
 * Writes `job`'s frames to `temp` with the library of peer `framing` in a library child and
 * returns what it measured. A crash, hang or error of the library is one line naming FILE
 * (`path`) and what became of it (`existed`: left as it was, else not written); a failure with
 * the disk nearly full (less than a frame and 1 MiB free) says so instead of the library's
 * words. The caller removes `temp` after any failure; a signal kills the child first.
 */
async function writeInChild(
  framing: string,
  temp: string,
  path: string,
  existed: boolean,
  job: WriteJob,
): Promise<WriteResult> {
  // The read limits, widened for a write of known size: memory for a few frames, and silence
  // for the final fsync at 1 MiB/s (the child beats at every frame, not inside close).
  const base = libraryLimits();
  const frameBytes = job.n * BYTES_PER_PARTICLE;
  const child = LibraryChild.start({
    ...base,
    memoryBytes: Math.max(base.memoryBytes, 8 * frameBytes),
    wallSeconds: base.wallSeconds + Math.ceil((frameBytes * job.count) / 2 ** 20),
  });
  const stop = onInterrupt(() => {
    child.kill();
  });
  let outcome: ChildOutcome;
  let result: WriteResult | undefined;
  try {
    outcome = await child.request({
      op: "write",
      path: temp,
      framing,
      options: job.options,
      settings: { ...job },
    }, (m) => {
      if (m.t === "row") result = m.row as unknown as WriteResult;
      else relayToTerminal(m);
    });
  } finally {
    stop();
    await child.close();
  }
  if (outcome.kind === "ok" && result !== undefined) return result;
  const fate = existed ? `${path} was left as it was` : `${path} was not written`;
  const full = diskFullNote(temp, frameBytes + FULL_DISK_MARGIN);
  if (full !== undefined) throw new IoError(`${path}: ${full}; ${fate}`);
  if (outcome.kind === "error") {
    throw new SciobenchError(`${outcome.message} (writing ${path}; ${fate})`, outcome.exitCode);
  }
  if (outcome.kind === "ok") {
    throw new IoError(`${path}: the library child sent no result; ${fate}`);
  }
  throw new IoError(`${failureMessage(outcome, framing, path, child.limits, "writing")}; ${fate}`);
}

/** fsyncs `path` (a complete file written with --fsync none, before it is renamed into place). */
function syncFile(path: string): void {
  const f = FileHandle.open(path, "read");
  try {
    f.sync();
  } finally {
    f.close();
  }
}

/**
 * UsageError when the frames to append (`layout`) differ in a chunk's type or shape from the
 * frames `source` already holds (its first and last frame are compared, chunks by name).
 */
function checkSameLayout(source: FrameSource, layout: readonly ChunkLayout[]): void {
  if (source.frameCount === 0 || !source.locate) return;
  for (const frame of new Set([0, source.frameCount - 1])) {
    for (const ref of source.locate(frame)) {
      const want = layout.find((c) => c.name === ref.name);
      if (!want) continue;
      if (want.dtype !== ref.dtype || want.shape.join("x") !== ref.shape.join("x")) {
        throw new UsageError(
          `${source.path} holds ${ref.name} as ${ref.shape.join("x")} ${ref.dtype} in frame ` +
            `${frame}; appending ${want.shape.join("x")} ${want.dtype} would mix layouts ` +
            `(give the file's --n)`,
        );
      }
    }
  }
}
