/**
 * The GSD framing (General Simulation Data, glotzerlab/gsd, the HOOMD-blue trajectory format):
 * file layer 2.0 written exactly as gsd 2.7.0 writes it (byte-identical files), and file layers
 * 0.3, 1.x, 2.0 and 2.1 read with the validation of gsd 2.7's `gsd_open`.
 *
 * Layout (little-endian, see shared/specs/gsd.md): a 256-byte header; an index block of 32-byte
 * entries (frame, N, location, M, id, type, flags) sorted by (frame, id); a name list block of
 * NUL-terminated names (ids in order of first use); unaligned data chunks. The index and the name
 * list grow by doubling and relocating to the end of the file.
 *
 * The writer follows gsd 2.7: chunks under 8 MiB are gathered in a 16 MiB buffer that is written
 * at the end of the frame (or earlier when full), larger chunks are written at once; new names,
 * then the buffer, then the frame's index entries are written at `end_frame`; `sync` ops mark the
 * fsyncs of gsd 2.7 (file creation, new names, index relocation). The buffer is modelled by
 * offsets: its chunks are emitted as back-to-back write ops that reference the caller's arrays
 * (no copy; the I/O layer coalesces them into one write). On top of it the `hoomd` schema decides
 * which chunks a frame stores, as `gsd.hoomd` 2.7 `append` does (skipping data equal to frame 0's
 * or to the schema default); option `hoomd: false` writes every chunk as given. Appending
 * (`appendGsdWriter`) continues an existing 2.x file from the state gsd 2.7 has after opening it
 * for appending, with frame 0 read back as `append`'s reference.
 * @module
 */
import { UsageError } from "../../core/errors.ts";
import { checkAppendOrder } from "../raw.ts";
import {
  ALL_WORKLOADS,
  type ByteSource,
  type FrameWriter,
  type Framing,
  type OptionSpec,
  type ReaderOptions,
  type WriterOptions,
  WRITING_WORKLOADS,
} from "../types.ts";
import { GsdFileWriter } from "./file_writer.ts";
import {
  FORMAT,
  GSD_DEFAULT_APPLICATION,
  GSD_MAGIC,
  GSD_WHOLE_INDEX_BYTES,
  packVersion,
  versionString,
} from "./format.ts";
import { HoomdWriter, parseSchemaVersion, readResume, stringOption } from "./hoomd.ts";
import { GsdIndex } from "./index.ts";
import { optionOrDefault } from "../options.ts";

export {
  GSD_DEFAULT_APPLICATION,
  GSD_MAGIC,
  GSD_TYPE_CODE,
  GSD_WHOLE_INDEX_BYTES,
  GSD_WRITE_BUFFER_BYTES,
  packVersion,
} from "./format.ts";
export type { GsdHeader } from "./header.ts";
export { GsdIndex } from "./index.ts";

// ---------------------------------------------------------------------------------------------
// Framing
// ---------------------------------------------------------------------------------------------

/**
 * Creates a GSD writer. Options: `application` (default `sciobench <version>`), `schema`
 * (default `hoomd`), `schemaVersion` (`"1.4"` or `[1, 4]`, the default), `hoomd` (default true:
 * choose chunks as gsd.hoomd 2.7 does; false writes every chunk of every frame as given),
 * `endian` (`little` or `native`; GSD files are little-endian). With `fileCopies` (the consumer
 * applies `copy` ops) the index block is not kept in memory: it is copied in the file when it moves.
 */
export function createGsdWriter(options: WriterOptions = {}): FrameWriter {
  if (options.endian === "big") {
    throw new UsageError("gsd: GSD files are little-endian; --endian big is not possible");
  }
  const hoomd = optionOrDefault(gsd, options, "hoomd");
  if (typeof hoomd !== "boolean") throw new UsageError("gsd: option hoomd must be true or false");
  const file = new GsdFileWriter(
    stringOption(options, "application", String(optionOrDefault(gsd, {}, "application"))),
    stringOption(options, "schema", String(optionOrDefault(gsd, {}, "schema"))),
    parseSchemaVersion(optionOrDefault(gsd, options, "schemaVersion")),
    options.fileCopies === true,
  );
  return new HoomdWriter(file, hoomd, undefined, options.keepCopy);
}

/**
 * Creates a writer that appends frames to the GSD file read through `source`, as gsd 2.7 does
 * after `gsd.fl.open(path, 'ab')` (or `gsd.hoomd.open(path, 'rb+')`, since gsd.hoomd 2.7 refuses
 * 'ab'): nothing is written on open; frames go after the last byte; the index and the name list
 * fill their blocks in place and move to the end of the file when full, the header rewritten
 * as read but for their locations and sizes. Option `hoomd` (default: true when the file's
 * schema is `hoomd`) chooses chunks as gsd.hoomd 2.7 `append` does against the file's frame 0.
 * The file keeps its application, schema and versions; options naming others are refused, as
 * is `endian` big, and file layers before 2.0 (64-byte name slots).
 */
export function appendGsdWriter(source: ByteSource, options: WriterOptions = {}): FrameWriter {
  const index = openGsdIndex(source, options);
  const h = index.header;
  checkAppendOrder(FORMAT, source.path, "little", options.endian);
  if (h.gsdVersion < packVersion(2, 0)) {
    throw new UsageError(
      `gsd: cannot append to ${source.path}: it is GSD file layer ${
        versionString(h.gsdVersion)
      } (64-byte name slots); this writer appends to file layer 2.x only`,
    );
  }
  const keep = (key: string, value: string, fileValue: string) => {
    if (value !== fileValue) {
      throw new UsageError(
        `gsd: cannot append with ${key} '${value}' to ${source.path}, whose ${key} is '${fileValue}'`,
      );
    }
  };
  if (options.application !== undefined) {
    keep("application", stringOption(options, "application", ""), h.application);
  }
  if (options.schema !== undefined) keep("schema", stringOption(options, "schema", ""), h.schema);
  if (options.schemaVersion !== undefined) {
    keep(
      "schemaVersion",
      versionString(parseSchemaVersion(options.schemaVersion)),
      versionString(h.schemaVersion),
    );
  }
  const isHoomd = h.schema === "hoomd" && h.schemaVersion >= packVersion(1, 0) &&
    h.schemaVersion < packVersion(2, 0);
  const hoomd = options.hoomd ?? isHoomd;
  if (typeof hoomd !== "boolean") throw new UsageError("gsd: option hoomd must be true or false");
  if (hoomd && !isHoomd) {
    throw new UsageError(
      `gsd: ${source.path} has schema '${h.schema}' ${
        versionString(h.schemaVersion)
      }, not hoomd 1.x, so gsd.hoomd would not append to it; use option hoomd=false`,
    );
  }
  // every used entry checked before anything is appended (an open checks only the probed ones)
  index.verify();
  const file = GsdFileWriter.continuing(index, source, options.fileCopies === true);
  return new HoomdWriter(
    file,
    hoomd,
    hoomd ? readResume(index, source) : { frames: index.frameCount, reference: null, n0: 0 },
    options.keepCopy,
  );
}

/**
 * Opens a GSD file's layout; throws FormatError (with the byte offset) on a malformed file.
 * Option `wholeIndexBytes`: most index bytes read into memory at the first lookup; more are
 * mapped where the source can (default 1 MiB, bytes).
 */
export function openGsdIndex(source: ByteSource, options: ReaderOptions = {}): GsdIndex {
  const raw = options.wholeIndexBytes ?? GSD_WHOLE_INDEX_BYTES;
  const limit = typeof raw === "string" ? Number(raw) : raw;
  if (typeof limit !== "number" || !(limit >= 0)) {
    throw new UsageError("gsd: option wholeIndexBytes must be a number of bytes");
  }
  return new GsdIndex(source, limit);
}

/** The options of the `gsd` framing. */
export const GSD_OPTIONS: readonly OptionSpec[] = [
  {
    name: "application",
    type: "string",
    default: GSD_DEFAULT_APPLICATION,
    help: "application name stored in the header (an append must give the file's)",
    workloads: WRITING_WORKLOADS,
  },
  {
    name: "schema",
    type: "string",
    default: "hoomd",
    help: "schema name stored in the header (an append must give the file's)",
    workloads: WRITING_WORKLOADS,
  },
  {
    name: "schemaVersion",
    type: "string",
    default: "1.4",
    help: "schema version major.minor stored in the header",
    workloads: WRITING_WORKLOADS,
  },
  {
    name: "hoomd",
    type: "boolean",
    default: true,
    help: "store chunks as gsd.hoomd 2.7 does (skip data equal to frame 0's or the default)",
    workloads: WRITING_WORKLOADS,
  },
  {
    name: "wholeIndexBytes",
    type: "integer",
    default: GSD_WHOLE_INDEX_BYTES,
    min: 0,
    help: "most index bytes read into memory at the first lookup (more are mapped), bytes",
    workloads: ALL_WORKLOADS,
  },
];

/** The GSD framing (`gsd`): HOOMD-blue's trajectory format, byte-compatible with gsd 2.7. */
export const gsd: Framing = {
  name: FORMAT,
  description: "GSD (HOOMD-blue trajectories), file layer 2.0 as gsd 2.7 writes it",
  orders: ["little"],
  options: GSD_OPTIONS,
  magic: [{ bytes: [...GSD_MAGIC] }],
  sharedLayout: true,
  createWriter: createGsdWriter,
  appendWriter: appendGsdWriter,
  openIndex: openGsdIndex,
};
