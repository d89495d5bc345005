/**
 * The Zarr framing (`zarr`), v2 and (with `--option version=3`) v3: a store is a directory holding a root group (`.zgroup`), one
 * array per chunk name of the frames (`particles/position` (frames, N, 3) float32, chunked one
 * frame per chunk) with its `.zarray` and `.zattrs`, each chunk a file of its own, and with
 * `consolidated=true` a `.zmetadata` holding all the metadata. The metadata is byte for byte
 * zarr-python 2.13's; compressed chunks (zlib, gzip through node:zlib) read back in zarr-python
 * as written, though their deflate bytes differ from zarr-python's (docs/formats.md says why).
 * In v3 the metadata is `zarr.json`, chunk keys `c/7/0/0`, and with `shard=K` a chunk file is a
 * shard of K frames (sharding_indexed, its index at the end). A zip file of a store's members
 * (zarr-python's ZipStore) is detected by its first bytes and read as that store. Pure: the engine's store sink and source (lib/backends/) do the files.
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

/** The signature of a zip file's first local header: a zip store (zarr-python's ZipStore). */
const ZIP_MAGIC: readonly number[] = [0x50, 0x4b, 0x03, 0x04];

/**
 * A Zarr framing named `name` whose writer defaults to Zarr `version` and `shard` frames per
 * shard file (0: none): `zarr` and its variant `zarr-v3`.
 */
function zarrFraming(name: string, description: string, version: 2 | 3, shard: number): Framing {
  const self: Framing = {
    name,
    description,
    orders: ["little", "big"],
    options: [
      {
        name: "version",
        type: "integer",
        default: version,
        choices: [2, 3],
        help: "Zarr version: 2 (.zarray, .zgroup) or 3 (zarr.json, chunk keys c/0/0/0)",
        workloads: WRITING_WORKLOADS,
      },
      {
        name: "separator",
        type: "string",
        choices: [".", "/"],
        help: "separator of chunk keys: '.' (0.0.0, DirectoryStore) or '/' (0/0/0, " +
          "NestedDirectoryStore); default '.' in v2, '/' in v3 (c/0/0/0)",
        workloads: WRITING_WORKLOADS,
      },
      {
        name: "shard",
        type: "integer",
        default: shard,
        min: 0,
        max: 1 << 20,
        help: "v3: frames per shard file (sharding_indexed, one inner chunk per frame, index at " +
          "the end); 0: one chunk file per frame",
        workloads: WRITING_WORKLOADS,
      },
      {
        name: "crc32c",
        type: "boolean",
        default: false,
        help: "v3: end each chunk (inner chunk of a shard) with its CRC-32C (the crc32c codec)",
        workloads: WRITING_WORKLOADS,
      },
      {
        name: "compressor",
        type: "string",
        default: "none",
        choices: ["none", ...ZARR_CODECS],
        help: "compressor of every chunk: none, zlib or gzip (numcodecs' ids; v3: none or gzip)",
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
    // a zip file (zarr-python's ZipStore) is read as the store it holds
    magic: [{ bytes: ZIP_MAGIC }],
    store: {
      markers: [".zgroup", ".zarray", ".zmetadata", "zarr.json"],
      openStore: openZarrStore,
      appendWriter: zarrAppendWriter,
      strays: zarrStrays,
    },
    sharedLayout: false,
    createWriter(options: WriterOptions = {}): FrameWriter {
      const endian = options.endian ?? "native";
      const compressor = optionOrDefault(self, options, "compressor") as string;
      const version = optionOrDefault(self, options, "version") as 2 | 3;
      const separator = optionOrDefault(self, options, "separator") as
        | DimensionSeparator
        | undefined;
      return new ZarrWriter({
        order: endian === "native" ? NATIVE_ORDER : endian,
        separator: separator ?? (version === 3 ? "/" : "."),
        version,
        shard: optionOrDefault(self, options, "shard") as number,
        crc32c: optionOrDefault(self, options, "crc32c") as boolean,
        compressor: compressor === "none" ? null : compressor as ZarrCodec,
        level: optionOrDefault(self, options, "level") as number,
        consolidated: optionOrDefault(self, options, "consolidated") as boolean,
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
  return self;
}

/** The Zarr framing (`zarr`): a directory store (v2 or v3), one chunk (or inner chunk) per frame. */
export const zarr: Framing = zarrFraming(
  "zarr",
  "Zarr v2/v3 directory store: one array per chunk name, one chunk (v3: or inner chunk of a " +
    "shard) per frame",
  2,
  0,
);

/**
 * `zarr-v3`: the `zarr` framing writing Zarr v3 with shards of 64 frames by default, so a table
 * (which takes no `--option`) compares it with v2 (`--framing zarr,zarr-v3`). It reads as `zarr`
 * does; a store it writes is detected as `zarr`.
 */
export const zarrV3: Framing = zarrFraming(
  "zarr-v3",
  "Zarr v3 directory store sharded: the zarr framing with version=3 and shard=64 as defaults",
  3,
  64,
);
