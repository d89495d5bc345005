/**
 * `sciobench info`: a file's framing, frame count and every chunk with its CRC-32.
 * @module
 */
import { crc32 } from "node:zlib";
import { UsageError } from "../errors.ts";
import type { FrameSource } from "../backends/backend.ts";
import { parseArgs } from "./args.ts";
import type { Command } from "./command.ts";
import { backendOptionsHelp } from "./common.ts";
import { openUserFile } from "./open.ts";

const HELP = `sciobench info: what a file holds

Usage: sciobench info [options] FILE

Prints the framing, the frame count, format facts, for netCDF files every variable with the
CRC-32 of all its data (records in order), and for every chunk (a named array; formats
without names get generated names such as record/3): frame, name, dtype, shape, offset, bytes and
crc32 (CRC-32 of the chunk's bytes as stored, hex). For peer formats read through a library
(HDF5, netCDF-4, HDF4) the offset is -1 and the CRC is of the data in native byte order.

Options:
  --framing F         the file's framing (default: detected from its first bytes)
  --option KEY=VALUE  framing-specific reader setting, repeatable
  --json              one JSON document instead of text`;

/** One chunk as `info` lists it. */
export interface ChunkInfo {
  /** Frame index. */
  frame: number;
  /** Chunk name. */
  name: string;
  /** Element type. */
  dtype: string;
  /** Shape, slowest dimension first. */
  shape: readonly number[];
  /** Byte offset of the data in the file (-1 when the library hides it). */
  offset: number;
  /** Stored bytes. */
  bytes: number;
  /** CRC-32 of the stored bytes, 8 hex digits. */
  crc32: string;
}

function hex(n: number): string {
  return (n >>> 0).toString(16).padStart(8, "0");
}

/** CRC-32 of the stored bytes of `pieces`, read through the source (no byte swapping). */
function storedCrc(source: FrameSource, pieces: readonly (readonly [number, number])[]): number {
  let crc = 0;
  source.readStored!(pieces, (bytes) => crc = crc32(bytes, crc));
  return crc;
}

/** One whole stored variable (netCDF) as `info` lists it. */
export interface VariableInfo {
  /** Variable name. */
  name: string;
  /** Element type. */
  dtype: string;
  /** Data bytes over all records (padding excluded). */
  bytes: number;
  /** CRC-32 of those bytes in storage order, 8 hex digits. */
  crc32: string;
}

/** CRC-32 of every whole variable a source reports (netCDF); empty for other formats. */
export function listVariables(source: FrameSource): VariableInfo[] {
  const vars = source.readStored ? source.variables?.() ?? [] : [];
  return vars.map((v) => ({
    name: v.name,
    dtype: v.dtype,
    bytes: v.pieces.reduce((a, [, len]) => a + len, 0),
    crc32: hex(storedCrc(source, v.pieces)),
  }));
}

/** Lists every chunk of every frame of an open source with its CRC-32. */
export function listChunks(source: FrameSource): ChunkInfo[] {
  const out: ChunkInfo[] = [];
  const locate = source.locate?.bind(source);
  if (locate && source.readStored) {
    for (let f = 0; f < source.frameCount; f++) {
      for (const r of locate(f)) {
        out.push({
          frame: f,
          name: r.name,
          dtype: r.dtype,
          shape: r.shape,
          offset: r.offset,
          bytes: r.bytes,
          crc32: hex(storedCrc(source, r.pieces ?? [[r.offset, r.bytes]])),
        });
      }
    }
    return out;
  }
  for (let f = 0; f < source.frameCount; f++) {
    for (const c of source.readFrame(f)) {
      out.push({
        frame: f,
        name: c.name,
        dtype: c.dtype,
        shape: c.shape,
        offset: -1,
        bytes: c.data.length,
        crc32: hex(crc32(c.data)),
      });
    }
  }
  return out;
}

/** The `info` subcommand. */
export const infoCommand: Command = {
  name: "info",
  summary: "list a file's framing, frames and chunks with CRC-32",
  get help(): string {
    return HELP + backendOptionsHelp("info");
  },
  run(args: string[]): Promise<void> {
    const { values, positionals } = parseArgs("info", args, {
      allowPositionals: true,
      options: {
        framing: { type: "string" },
        option: { type: "string", multiple: true },
        json: { type: "boolean", default: false },
        help: { type: "boolean", short: "h", default: false },
      },
    });
    if (positionals.length !== 1) {
      throw new UsageError("info: give exactly one FILE (see 'sciobench info --help')");
    }
    const path = positionals[0]!;
    const source = openUserFile(path, values.framing, values.option, "info");
    try {
      const chunks = listChunks(source);
      const variables = listVariables(source);
      const facts = source.describe?.() ?? {};
      const fileBytes = Deno.statSync(path).size;
      let text: string;
      if (values.json) {
        text = JSON.stringify(
          {
            path,
            framing: source.framing,
            frames: source.frameCount,
            file_bytes: fileBytes,
            format: facts,
            ...(variables.length > 0 ? { variables } : {}),
            chunks,
          },
          null,
          1,
        ) + "\n";
      } else {
        const lines = [
          `path: ${path}`,
          `framing: ${source.framing}`,
          `frames: ${source.frameCount}`,
          `file_bytes: ${fileBytes}`,
          ...Object.entries(facts).map(([k, v]) =>
            `${k}: ${typeof v === "string" ? v : JSON.stringify(v)}`
          ),
          ...(variables.length > 0
            ? [
              "",
              "variable,dtype,bytes,crc32",
              ...variables.map((v) => `${v.name},${v.dtype},${v.bytes},${v.crc32}`),
            ]
            : []),
          "",
          "frame,name,dtype,shape,offset,bytes,crc32",
          ...chunks.map((c) =>
            `${c.frame},${c.name},${c.dtype},${c.shape.join("x")},${c.offset},${c.bytes},${c.crc32}`
          ),
        ];
        text = lines.join("\n") + "\n";
      }
      const b = new TextEncoder().encode(text);
      for (let done = 0; done < b.length;) done += Deno.stdout.writeSync(b.subarray(done));
    } finally {
      source.close();
    }
    return Promise.resolve();
  },
};
