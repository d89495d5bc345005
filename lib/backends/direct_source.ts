/**
 * Reading a library format's frames without its library: the index of each frame's chunks a
 * backend's library reports once (Capabilities.frameChunks: HDF5's chunk index), read through the
 * native source (lib/backends/native_source.ts) as a native framing's frames are, so `--iodepth`,
 * `--engine`, `--bs` and `--direct` and the verification of stored bytes apply unchanged.
 * @module
 */
import { UsageError } from "../core/errors.ts";
import type { Backend, FrameSource, SourceOptions } from "./backend.ts";
import { directReadRefusal } from "./capabilities.ts";
import { rangeChecked } from "./guard.ts";
import { NativeSource } from "./native_source.ts";

/**
 * Opens `path`, a file of `backend`, for reading its frames directly: the library reports where
 * each frame's chunks lie (and is closed), then the file is opened as a native framing's is and
 * read with sciobench's own reads (`options.transfer`: `--bs`, `--direct`), every frame number
 * checked against the range first. UsageError when the backend cannot (see
 * {@link directReadRefusal}) or the file's frames are filtered.
 */
export function openDirectSource(
  backend: Backend,
  path: string,
  options: SourceOptions,
): FrameSource {
  const why = directReadRefusal(backend);
  if (why !== null) throw new UsageError(`--access direct: ${why}`);
  const index = backend.frameChunks!(path);
  return rangeChecked(
    new NativeSource({ name: backend.name, openIndex: () => index }, path, options),
  );
}
