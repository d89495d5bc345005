/**
 * The Zarr v2 framing (`zarr`): a store is a directory holding a root group (`.zgroup`), one
 * array per chunk name of the frames (`particles/position` (frames, N, 3) float32, chunked one
 * frame per chunk) with its `.zarray` and `.zattrs`, each chunk a file of its own, and with
 * `consolidated=true` a `.zmetadata` holding all the metadata. The metadata is byte for byte
 * zarr-python 2.13's; compressed chunks (zlib, gzip through node:zlib) read back in zarr-python
 * as written, though their deflate bytes differ from zarr-python's (docs/formats.md says why).
 * Pure: the engine's store sink and source (lib/backends/) do the files.
 * @module
 */
import { FormatError } from "../../core/errors.ts";
import { NATIVE_ORDER } from "../../bytes/byteswap.ts";
import type { ByteSource, FrameIndex, FrameWriter, Framing, WriterOptions } from "../types.ts";
import { WRITING_WORKLOADS } from "../types.ts";
import { optionOrDefault } from "../options.ts";
import { type DimensionSeparator, ZARR_CODECS, type ZarrCodec } from "./metadata.ts";
import { openZarrStore } from "./index.ts";
import { ZarrWriter } from "./writer.ts";
import { zarrAppendWriter, zarrStrays } from "./append.ts";

export { PyFloat, type PyJson, pythonJson } from "./json.ts";

/** The Zarr v2 framing (`zarr`): a directory store, one file per chunk, one chunk per frame. */
export const zarr: Framing = {
  name: "zarr",
  description: "Zarr v2 directory store: one array per chunk name, one chunk file per frame",
  orders: ["little", "big"],
  options: [
    {
      name: "separator",
      type: "string",
      default: ".",
      choices: [".", "/"],
      help:
        "separator of chunk keys: '.' (0.0.0, DirectoryStore) or '/' (0/0/0, NestedDirectoryStore)",
      workloads: WRITING_WORKLOADS,
    },
    {
      name: "compressor",
      type: "string",
      default: "none",
      choices: ["none", ...ZARR_CODECS],
      help: "compressor of every chunk: none, zlib or gzip (numcodecs' ids)",
      workloads: WRITING_WORKLOADS,
    },
    {
      name: "level",
      type: "integer",
      default: 1,
      min: 0,
      max: 9,
      help: "compression level of zlib and gzip, as numcodecs takes it",
      workloads: WRITING_WORKLOADS,
    },
    {
      name: "consolidated",
      type: "boolean",
      default: false,
      help: "also write .zmetadata, all the metadata in one file (zarr.consolidate_metadata)",
      workloads: WRITING_WORKLOADS,
    },
  ],
  magic: [],
  store: {
    markers: [".zgroup", ".zarray", ".zmetadata", "zarr.json"],
    openStore: openZarrStore,
    appendWriter: zarrAppendWriter,
    strays: zarrStrays,
  },
  sharedLayout: false,
  createWriter(options: WriterOptions = {}): FrameWriter {
    const endian = options.endian ?? "native";
    const compressor = optionOrDefault(zarr, options, "compressor") as string;
    return new ZarrWriter({
      order: endian === "native" ? NATIVE_ORDER : endian,
      separator: optionOrDefault(zarr, options, "separator") as DimensionSeparator,
      compressor: compressor === "none" ? null : compressor as ZarrCodec,
      level: optionOrDefault(zarr, options, "level") as number,
      consolidated: optionOrDefault(zarr, options, "consolidated") as boolean,
    });
  },
  openIndex(source: ByteSource): FrameIndex {
    throw new FormatError(
      "zarr",
      source.path,
      -1,
      "a Zarr store is a directory of files; give the store's directory",
    );
  },
};
