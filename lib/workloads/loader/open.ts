/**
 * How the loader opens its file, said as data ({@link LoaderOpen}) so that each reader process
 * opens it as the consumer does: the file the loader wrote, or the user's (--file), read as its
 * access path says (its native reader or library, or directly at the chunks' addresses).
 * @module
 */
import { UsageError } from "../../core/errors.ts";
import type { Backend, FrameSource } from "../../backends/backend.ts";
import { openDirectSource } from "../../backends/direct_source.ts";
import { backendByName } from "../../backends/registry.ts";
import { parseOptionArgs } from "../../framings/options.ts";
import type { ChunkLayout } from "../../framings/types.ts";
import { storeBytes } from "../../io/store.ts";
import type { Transfer } from "../../io/transfer.ts";
import { isolates, relayToTerminal, runIsolated } from "../isolate.ts";
import { chooseBackend, openUserFile } from "../open.ts";
import { prepareVerified } from "../pattern.ts";
import { tablePatternOf } from "../read/mod.ts";
import { TableFrames } from "../table/mod.ts";
import type { Access, LoaderFile } from "./settings.ts";

/** How the loader's file is read, whichever file it is. */
export interface ReadAs {
  /** The read path: the format's own reader (native, library) or direct. */
  readonly access: Access;
  /** `--bs` / `--direct` of the reads (native framings and direct); undefined: none. */
  readonly transfer?: Transfer;
}

/** The file the loader wrote: the table's frames of `n` particles, seed `seed`, by `framing`. */
export interface WrittenFile extends ReadAs {
  readonly kind: "written";
  /** The file. */
  readonly path: string;
  /** The backend that wrote it (its name). */
  readonly framing: string;
  /** Its `--option` values, as given. */
  readonly options: readonly string[] | undefined;
  /** Particles per frame. */
  readonly n: number;
  /** Seed of the data. */
  readonly seed: number;
}

/** The user's file (--file): its framing detected or given, checked against the seed with --verify. */
export interface UserFile extends ReadAs {
  readonly kind: "user";
  /** The file. */
  readonly path: string;
  /** `--framing`, or undefined: detected from the file's first bytes. */
  readonly framing: string | undefined;
  /** Its `--option` values, as given. */
  readonly options: readonly string[] | undefined;
  /** `--verify`: the data must be what 'sciobench write --seed S' writes. */
  readonly verify: boolean;
  /** Seed of the data (--verify). */
  readonly seed: number;
}

/** How the loader's file is opened (JSON: a reader process is told it). */
export type LoaderOpen = WrittenFile | UserFile;

/**
 * Before the loader opens a user's file (--file) for `--access direct`: the library's lookup of
 * its chunks (Backend.frameChunks) runs first in a library child, with its limits, so a damaged
 * or hostile file is one line and exit 2; once it ends ok, the same lookup on the same bytes in
 * this process and in each reader process is safe. Nothing to do for any other file or access.
 */
export async function vetLoader(o: LoaderOpen): Promise<void> {
  if (o.kind !== "user" || o.access !== "direct") return;
  const backend = chooseBackend(o.path, o.framing);
  // mutant: loader-chunks-vetted
  if (!isolates(backend)) return;
  await runIsolated({ op: "chunks", path: o.path, framing: backend.name }, relayToTerminal);
}

/** Opens the loader's file as `o` says (each reader process too); the caller closes its source. */
export function openLoader(o: LoaderOpen): LoaderFile {
  return o.kind === "written" ? openWritten(o) : openUser(o);
}

/**
 * Opens `path`, a file of `backend`, as `how.access` reads it: through the backend's reader
 * (`open`), or directly (the library asked where the chunks lie, then sciobench's reads, with
 * `how.transfer`).
 */
function openAs(
  backend: Backend,
  path: string,
  how: ReadAs,
  layout: readonly ChunkLayout[] | undefined,
  open: (layout: readonly ChunkLayout[] | undefined) => FrameSource,
): FrameSource {
  const { access, transfer } = how;
  // mutant: loader-direct-path
  if (access === "direct") return openDirectSource(backend, path, { layout, transfer });
  return open(layout);
}

/** The file the loader wrote, opened for reading as `o` says and checked against what it wrote. */
function openWritten(o: WrittenFile): LoaderFile {
  const backend = backendByName(o.framing);
  const backendOptions = parseOptionArgs([backend], o.options, "write").get(backend.name)!;
  const expected = new TableFrames(o.n, o.seed);
  const source = openAs(
    backend,
    o.path,
    o,
    expected.layout,
    (layout) => backend.openReader(o.path, { layout, backendOptions, transfer: o.transfer }),
  );
  try {
    prepareVerified(source, expected);
  } catch (e) {
    source.close();
    throw e;
  }
  return {
    path: o.path,
    source,
    access: o.access,
    expected,
    n: o.n,
    fileBytes: storeBytes(o.path),
  };
}

/** The user's file opened for the loader as `o` says, checked to hold frames. */
function openUser(o: UserFile): LoaderFile {
  const { path, framing, options } = o;
  const backend = chooseBackend(path, framing);
  if (o.access === "library" && isolates(backend)) {
    // a library on a file sciobench did not write runs in a library child, which has no loader
    throw new UsageError(
      `loader: --file ${path}: ${backend.name} reads through its library, which 'loader' runs ` +
        "only on a file it writes (leave --file out); time your file with 'sciobench read'",
    );
  }
  const fileBytes = storeBytes(path);
  const open = (layout: readonly ChunkLayout[] | undefined) =>
    openAs(
      backend,
      path,
      o,
      layout,
      (layout) => openUserFile(path, framing, options, "read", { layout, transfer: o.transfer }),
    );
  let expected: TableFrames | undefined;
  if (o.verify) {
    const probe = open(undefined);
    try {
      expected = tablePatternOf(probe, o.seed, fileBytes);
    } finally {
      probe.close();
    }
  }
  const source = open(expected?.layout);
  try {
    if (source.frameCount === 0) {
      throw new UsageError(
        `loader: ${path} holds no frames (${source.framing}); a sample is one frame`,
      );
    }
    if (expected) prepareVerified(source, expected);
  } catch (e) {
    source.close();
    throw e;
  }
  return { path, source, access: o.access, expected, n: expected?.n, fileBytes };
}
