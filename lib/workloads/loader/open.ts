/**
 * How the loader opens its file, said as data ({@link LoaderOpen}) so that each reader process
 * opens it as the consumer does: the file the loader wrote, or the user's (--file).
 * @module
 */
import { UsageError } from "../../core/errors.ts";
import { backendByName } from "../../backends/registry.ts";
import { parseOptionArgs } from "../../framings/options.ts";
import { storeBytes } from "../../io/store.ts";
import { isolates } from "../isolate.ts";
import { chooseBackend, openUserFile } from "../open.ts";
import { prepareVerified } from "../pattern.ts";
import { tablePatternOf } from "../read/mod.ts";
import { TableFrames } from "../table/mod.ts";
import type { LoaderFile } from "./settings.ts";

/** The file the loader wrote: the table's frames of `n` particles, seed `seed`, by `framing`. */
export interface WrittenFile {
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
export interface UserFile {
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

/** Opens the loader's file as `o` says (each reader process too); the caller closes its source. */
export function openLoader(o: LoaderOpen): LoaderFile {
  return o.kind === "written" ? openWritten(o) : openUser(o);
}

/** The file the loader wrote, opened for reading and checked against what it wrote. */
function openWritten(o: WrittenFile): LoaderFile {
  const backend = backendByName(o.framing);
  const backendOptions = parseOptionArgs([backend], o.options, "write").get(backend.name)!;
  const expected = new TableFrames(o.n, o.seed);
  const source = backend.openReader(o.path, { layout: expected.layout, backendOptions });
  try {
    prepareVerified(source, expected);
  } catch (e) {
    source.close();
    throw e;
  }
  return { path: o.path, source, expected, n: o.n, fileBytes: storeBytes(o.path) };
}

/** The user's file opened for the loader, checked to hold frames. */
function openUser(o: UserFile): LoaderFile {
  const { path, framing, options } = o;
  const backend = chooseBackend(path, framing);
  if (isolates(backend)) {
    // a library on a file sciobench did not write runs in a library child, which has no loader
    throw new UsageError(
      `loader: --file ${path}: ${backend.name} reads through its library, which 'loader' runs ` +
        "only on a file it writes (leave --file out); time your file with 'sciobench read'",
    );
  }
  const fileBytes = storeBytes(path);
  let expected: TableFrames | undefined;
  if (o.verify) {
    const probe = openUserFile(path, framing, options, "read");
    try {
      expected = tablePatternOf(probe, o.seed, fileBytes);
    } finally {
      probe.close();
    }
  }
  const source = openUserFile(path, framing, options, "read", { layout: expected?.layout });
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
  return { path, source, expected, n: expected?.n, fileBytes };
}
