/**
 * The engine that turns a pure framing into a {@link Backend}: its writes go through the native
 * sink (lib/backends/native_sink.ts), its reads through the native source
 * (lib/backends/native_source.ts), behind the checks every backend shares.
 * @module
 */
import type { Framing } from "../framings/types.ts";
import { UsageError } from "../core/errors.ts";
import { checkOptions } from "../framings/options.ts";
import type { Transfer } from "../io/transfer.ts";
import type { Backend, FrameSource } from "./backend.ts";
import { NativeSink } from "./native_sink.ts";
import { NativeSource } from "./native_source.ts";

/**
 * UsageError (one line, exit 2) when `transfer` (`--bs`, `--direct`) is asked of a backend that
 * cannot honour it: peers make their own system calls inside a library or program.
 */
export function checkTransfer(backend: Backend, transfer: Transfer | undefined): void {
  if (transfer === undefined || backend.transfer) return;
  const flag = transfer.direct ? "--direct" : "--bs";
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
function rangeChecked(source: FrameSource): FrameSource {
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

const ENGINE_RUN = new WeakSet<Backend>();

/**
 * `backend` as the registry runs it, with the checks every backend shares made here once: its
 * `backendOptions` against the options it declares (UsageError) before it opens a file, and every
 * frame number its readers are asked for against the range, before the backend's own `readFrame`
 * or `locate` (native framings and peers need neither check of their own). Idempotent.
 */
export function engineBackend(backend: Backend): Backend {
  if (ENGINE_RUN.has(backend)) return backend;
  const run: Backend = {
    ...backend,
    openWriter: (path, options) => {
      checkOptions(backend, options.backendOptions);
      return backend.openWriter(path, options);
    },
    openReader: (path, options) => {
      checkOptions(backend, options?.backendOptions);
      return rangeChecked(backend.openReader(path, options));
    },
  };
  ENGINE_RUN.add(run);
  return run;
}

/** A {@link Backend} that stores frames with `framing`, through the FFI file layer. */
export function nativeBackend(framing: Framing): Backend {
  return engineBackend({
    name: framing.name,
    description: framing.description,
    kind: "native",
    orders: framing.orders,
    options: framing.options,
    magic: framing.magic,
    transfer: true,
    unavailable: () => null,
    detect: framing.detect?.bind(framing),
    openWriter: (path, options) => new NativeSink(framing, path, options),
    openReader: (path, options = {}) => new NativeSource(framing, path, options),
  });
}
