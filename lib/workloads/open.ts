/**
 * Opening a user's file for reading: by the framing named with --framing, or detected from the
 * file's first bytes; notes from the decoder go to stderr.
 * @module
 */
import {
  BACKENDS,
  detectBackend,
  detectStoreBackend,
  usableBackend,
} from "../backends/registry.ts";
import type { Backend, FrameSource } from "../backends/backend.ts";
import type { ChunkLayout, Workload as OptionScope } from "../framings/types.ts";
import type { Transfer } from "../io/transfer.ts";
import { parseOptionArgs } from "../framings/options.ts";
import { warn } from "../core/diagnostics.ts";
import { requireFile as requireRegularFile } from "../io/file.ts";
import { recoverInterruptedAppend } from "../io/journal.ts";
import { isDirectory } from "../io/store.ts";
import { UsageError } from "../core/errors.ts";

/**
 * Checks that `path` names an existing regular file (see lib/io/file.ts); unless `recover` is
 * false, rolls back an append to it that was killed (its journal is beside it).
 */
export function requireFile(path: string, recover = true): void {
  requireRegularFile(path);
  if (recover) recoverInterruptedAppend(path);
}

/**
 * The backend that reads `path`: the one named by `framing`, or the one detected from its first
 * bytes (no library reads the file for that). Checks that `path` is a regular file first, or a
 * directory that is a store (of the named backend, or of one that declares its member names).
 */
export function chooseBackend(path: string, framing: string | undefined): Backend {
  if (isDirectory(path)) {
    const backend = framing === undefined ? detectStoreBackend(path) : usableBackend(framing);
    if (backend.store === undefined) {
      const stores = BACKENDS.filter((b) => b.store !== undefined).map((b) => b.name);
      throw new UsageError(
        `${path} is a directory; ${backend.name} reads files (a directory is read as a store ` +
          `of ${stores.join(" or ")}: name one with --framing, or leave --framing out)`,
      );
    }
    backend.store.recover(path);
    return backend;
  }
  requireFile(path);
  return framing === undefined ? detectBackend(path) : usableBackend(framing);
}

/**
 * Opens `path` with `framing` (or the detected one), its `--option` items checked against the
 * backend's declared options for `workload`, the frames' `layout`, the `transfer` (`--bs`,
 * `--direct`) and `allowExternal` (`--allow-external`) when given, and passes the decoder's warnings to `onWarning` (default: a line on
 * stderr).
 */
export function openUserFile(
  path: string,
  framing: string | undefined,
  optionItems: readonly string[] | undefined,
  workload: OptionScope,
  reading: { layout?: readonly ChunkLayout[]; transfer?: Transfer; allowExternal?: boolean } = {},
  onWarning: (text: string) => void = warn,
): FrameSource {
  const backend = chooseBackend(path, framing);
  const backendOptions = parseOptionArgs([backend], optionItems, workload).get(backend.name)!;
  const source = backend.openReader(path, { backendOptions, ...reading });
  for (const w of source.warnings) onWarning(`${path}: ${w}`);
  return source;
}
