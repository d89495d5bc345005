/**
 * The one guard every registered backend runs behind: it checks a writer's and a reader's
 * `backendOptions` against the options the backend declares and hands a writer of a new file
 * the declared defaults filled in, refuses `--bs` / `--direct` to a backend without the
 * `transfer` capability (lib/backends/backend.ts) capability, and checks every frame number a reader is asked for
 * against the range. The backends themselves make none of these checks.
 * @module
 */
import { UsageError } from "../core/errors.ts";
import { checkOptions, withWriteDefaults } from "../framings/options.ts";
import type { Transfer } from "../io/transfer.ts";
import type { Backend, FrameSource } from "./backend.ts";
import { mpiIoProblem } from "./mpi_io.ts";

/**
 * UsageError (one line, exit 2) when `transfer` (`--bs`, `--direct`) is asked of a backend that
 * cannot honour it: peers make their own system calls inside a library or program.
 */
export function checkTransfer(backend: Backend, transfer: Transfer | undefined): void {
  if (transfer === undefined || backend.transfer) return;
  // --bs alone: the bytes of each MPI-IO call of a backend that takes it
  if (!transfer.direct && backend.mpiIo?.bs) return;
  const flag = transfer.direct ? "--direct" : "--bs";
  if (backend.store !== undefined) {
    throw new UsageError(
      `${flag}: ${backend.name} writes a store of many small files, each written and read whole ` +
        `in one call, and cannot do ${
          transfer.direct ? "direct I/O" : "transfers of a chosen size"
        }; run it without ${flag}`,
    );
  }
  const kind = backend.kind === "program" ? "a program peer" : "a library peer";
  throw new UsageError(
    `${flag}: ${backend.name} is ${kind} that makes its own system calls and cannot do ${
      transfer.direct ? "direct I/O" : "transfers of a chosen size"
    }; run it without ${flag}, or measure native framings (raw, f77, ieeeio, gsd, netcdf)`,
  );
}

/**
 * RangeError unless `frame` is a frame of a source of `frameCount` frames (an integer in
 * [0, frameCount)): the one frame-range check, made here before any backend reads a frame.
 */
function checkFrame(frame: number, frameCount: number): void {
  if (!(Number.isInteger(frame) && frame >= 0 && frame < frameCount)) {
    throw new RangeError(`frame ${frame} out of range [0, ${frameCount})`);
  }
}

/**
 * Puts the frame-range check in front of a just-opened source's frame reads (`readFrame`,
 * `readFrameStored`, their async forms) and `locate`: the source is the caller's alone, so the
 * methods are replaced on it (its other members, private fields and counters stay its own).
 */
export function rangeChecked(source: FrameSource): FrameSource {
  const checked = <T>(read: (frame: number) => T) => (frame: number): T => {
    checkFrame(frame, source.frameCount);
    return read.call(source, frame);
  };
  source.readFrame = checked(source.readFrame);
  if (source.readFrameStored) source.readFrameStored = checked(source.readFrameStored);
  if (source.readFrameAsync) source.readFrameAsync = checked(source.readFrameAsync);
  if (source.readFrameStoredAsync) {
    source.readFrameStoredAsync = checked(source.readFrameStoredAsync);
  }
  if (source.locate) source.locate = checked(source.locate);
  return source;
}

const GUARDED = new WeakSet<Backend>();

/**
 * `backend` as the registry runs it, behind the checks every backend shares, made here once
 * before the backend opens a file or measures a table cell in its own process: unavailable
 * without an MPI launcher when it declares the `mpiIo` capability (lib/backends/mpi_io.ts),
 * `transfer` against the `transfer` capability (lib/backends/backend.ts), and its
 * `backendOptions` against the options it declares (UsageError); a writer of a new file gets
 * them with the declared defaults filled in (an append takes the file's). Every frame number
 * its readers are asked for is checked against the range before the backend's own `readFrame`
 * or `locate`. Idempotent.
 */
export function engineBackend(backend: Backend): Backend {
  if (GUARDED.has(backend)) return backend;
  const run: Backend = {
    ...backend,
    // a backend that does its I/O through MPI-IO runs only under an MPI launcher
    unavailable: () => mpiIoProblem(backend) ?? backend.unavailable(),
    openWriter: (path, options) => {
      checkTransfer(backend, options.transfer);
      const given = checkOptions(backend, options.backendOptions);
      const backendOptions = options.create === "append"
        ? given
        : withWriteDefaults(backend, given);
      return backend.openWriter(path, { ...options, backendOptions });
    },
    openReader: (path, options) => {
      checkTransfer(backend, options?.transfer);
      checkOptions(backend, options?.backendOptions);
      return rangeChecked(backend.openReader(path, options));
    },
  };
  const measure = backend.measureTableCell;
  if (measure !== undefined) {
    run.measureTableCell = async (cell) => {
      checkTransfer(backend, cell.transfer);
      return await measure.call(backend, cell);
    };
  }
  GUARDED.add(run);
  return run;
}
