/**
 * `sciobench info`: a file's framing, frame count and every chunk with its CRC-32.
 * @module
 */
import { crc32 } from "node:zlib";
import { escapeControls, FormatError, UsageError } from "../core/errors.ts";
import type { FrameSource } from "../backends/backend.ts";
import { parseChoice } from "../core/values.ts";
import type { Command } from "./command.ts";
import { parseFlags } from "./parse_flags.ts";
import { commandHelp } from "./help.ts";
import { csvField, jsonText, writeStdout } from "../report/output.ts";
import { warn } from "../core/diagnostics.ts";
import { isolates, relayToTerminal, runIsolated } from "./isolate.ts";
import { chooseBackend, openUserFile } from "../workloads/open.ts";
import type { DatasetInfo } from "../backends/backend.ts";
import { BlockReader, type DatasetRow, wholeOf } from "../workloads/blocks.ts";

const HELP = () =>
  commandHelp("info", {
    title: "what a file holds",
    usage: "[options] FILE",
    intro:
      `Prints the framing, the frame count, format facts, for netCDF files every variable with the
CRC-32 of all its data (records in order), and for every chunk (a named array; formats
without names get generated names such as record/3): frame, name, dtype, shape, offset, bytes and
crc32 (CRC-32 of the chunk's bytes as stored, hex). For peer formats read through a library
(HDF5, netCDF-4, HDF4) the offset is -1 and the CRC is of the data in native byte order.`,
    after:
      `An HDF5 dataset whose storage was never (or only partly) written is listed with its stored bytes
and no CRC, and a note on stderr: its data would be the fill value, not bytes of the file.`,
  });

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

/**
 * Calls `visit` for every whole variable a source reports (netCDF) with the CRC-32 of its data,
 * one at a time (none listed in advance); no call for other formats.
 */
export function forEachVariable(source: FrameSource, visit: (v: VariableInfo) => void): void {
  if (!source.readStored || !source.variables) return;
  for (const v of source.variables()) {
    let bytes = 0;
    for (const [, len] of v.pieces) bytes += len;
    visit({ name: v.name, dtype: v.dtype, bytes, crc32: hex(storedCrc(source, v.pieces)) });
  }
}

/** CRC-32 of every whole variable a source reports (netCDF); empty for other formats. */
export function listVariables(source: FrameSource): VariableInfo[] {
  const out: VariableInfo[] = [];
  forEachVariable(source, (v) => out.push(v));
  return out;
}

/** Calls `visit` for every chunk of every frame of an open source, with its CRC-32, in order. */
export function forEachChunk(source: FrameSource, visit: (chunk: ChunkInfo) => void): void {
  const locate = source.locate?.bind(source);
  if (locate && source.readStored) {
    for (let f = 0; f < source.frameCount; f++) {
      for (const r of locate(f)) {
        visit({
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
    return;
  }
  for (let f = 0; f < source.frameCount; f++) {
    for (const c of source.readFrame(f)) {
      visit({
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
}

/** Lists every chunk of every frame of an open source with its CRC-32. */
export function listChunks(source: FrameSource): ChunkInfo[] {
  const out: ChunkInfo[] = [];
  forEachChunk(source, (c) => out.push(c));
  return out;
}

const DATASET_HEADER = "dataset,type,shape,storage,chunk,filters,offset,stored_bytes,bytes,crc32";

/** One dataset as a line of `info`'s text dataset list (shape `null` for a NULL dataspace). */
function datasetLine(d: DatasetRow): string {
  return [
    csvField(d.name),
    csvField(d.type),
    d.space === "null" ? "null" : d.shape.join("x"),
    d.storage,
    d.chunk?.join("x") ?? "",
    d.filters?.join("+") ?? "",
    d.offset,
    d.storedBytes,
    d.bytes,
    d.crc32 ?? "",
  ].join(",");
}

/** The text form of `info`'s dataset list (empty when the source lists none). */
export function datasetLines(datasets: readonly DatasetRow[]): string[] {
  if (datasets.length === 0) return [];
  return ["", DATASET_HEADER, ...datasets.map(datasetLine)];
}

/**
 * A dataset with its data's size and CRC-32, read now: a NULL dataspace has 0 bytes and no CRC,
 * a dataset never written (`unwritten`) or not numeric has bytes -1 and no CRC.
 */
function datasetRow(
  source: FrameSource,
  reader: BlockReader,
  d: DatasetInfo,
  index: number,
): DatasetRow {
  if (d.space === "null") return { ...d, bytes: 0, crc32: null };
  if (!d.dtype || !source.readRegion) return { ...d, bytes: -1, crc32: null };
  let crc = 0;
  let bytes = 0;
  for (const b of wholeOf(d, index, source.path)) {
    crc = crc32(reader.read(b), crc);
    bytes += b.bytes;
  }
  return { ...d, bytes, crc32: hex(crc) };
}

/** Longest `info` holds back text it has, milliseconds (so a slow listing shows as it goes). */
const FLUSH_MS = 500;

/**
 * Text that reaches `emit` in pieces of about 64 KiB, or what there is after {@link FLUSH_MS},
 * so a file of a million chunks streams in bounded memory and few writes, and a slow one shows
 * its lines as they come.
 */
class Batcher {
  #parts: string[] = [];
  #size = 0;
  #last = performance.now();
  constructor(private readonly emit: (text: string) => void) {}
  add(text: string): void {
    this.#parts.push(text);
    this.#size += text.length;
    if (this.#size >= 1 << 16 || performance.now() - this.#last >= FLUSH_MS) this.flush();
  }
  flush(): void {
    this.#last = performance.now();
    if (this.#size === 0) return;
    const text = this.#parts.join("");
    this.#parts = [];
    this.#size = 0;
    this.emit(text);
  }
}

/** `value` as JSON with a 1-space indent, its lines after the first indented `depth` spaces. */
function indented(value: unknown, depth: number): string {
  return jsonText(value, 1).replaceAll("\n", `\n${" ".repeat(depth)}`);
}

/**
 * Adds `facts` (a format's facts) to `out` as {@link indented} JSON at nesting `depth`, each
 * array fact element by element: a list of a million variables is never one string.
 */
function addFactsJson(out: Batcher, facts: Record<string, unknown>, depth: number): void {
  const pad = " ".repeat(depth);
  const entries = Object.entries(facts).filter(([, v]) => v !== undefined);
  if (entries.length === 0) return out.add("{}");
  out.add("{");
  entries.forEach(([key, value], k) => {
    out.add(`${k > 0 ? "," : ""}\n${pad} ${JSON.stringify(key)}: `);
    if (!Array.isArray(value) || value.length === 0) return out.add(indented(value, depth + 1));
    out.add("[");
    value.forEach((el, i) => out.add(`${i > 0 ? "," : ""}\n${pad}  ${indented(el, depth + 2)}`));
    out.add(`\n${pad} ]`);
  });
  out.add(`\n${pad}}`);
}

/**
 * Streams `info`'s output for an open source to `emit` (text or, with `json`, one JSON document),
 * variable by variable and chunk by chunk: memory stays bounded however many variables and
 * chunks the file holds.
 */
export function streamInfo(
  source: FrameSource,
  json: boolean,
  emit: (text: string) => void,
  note: (text: string) => void = warn,
): void {
  const path = source.path;
  const fileBytes = Deno.statSync(path).size;
  const out = new Batcher(emit);
  // What is known at once goes out at once; the rest (a walk of every group, variables' CRCs)
  // follows as it is computed.
  const first = {
    path,
    framing: source.framing,
    frames: source.frameCount,
    "file_bytes": fileBytes,
  };
  if (json) out.add(jsonText(first, 1).slice(0, -2));
  else {
    out.add(Object.entries(first).map(([k, v]) => `${k}: ${escapeControls(String(v))}\n`).join(""));
  }
  out.flush();
  const datasets = source.datasets?.() ?? [];
  const facts = source.describe?.() ?? {};
  // Datasets stream one by one (each is read for its CRC): a file of many shows them as they come.
  const reader = new BlockReader(source);
  const eachDataset = (visit: (d: DatasetRow) => void) => {
    for (let i = 0; i < datasets.length; i++) visit(datasetRow(source, reader, d(i), i));
    // One line however many: the listing shows each one's stored_bytes.
    const unwritten = datasets.filter((d) => d.unwritten);
    const first = unwritten[0];
    if (first) {
      const more = unwritten.length > 1 ? ` and ${unwritten.length - 1} more` : "";
      note(
        `${path}: dataset '${first.name}' (${first.unwritten})${more} not read: storage never ` +
          `or partly written, the data would be the fill value, not bytes of the file`,
      );
    }
  };
  const d = (i: number) => datasets[i]!;
  if (json) {
    out.add(`,\n "format": `);
    addFactsJson(out, facts, 1);
    let listed = 0;
    forEachVariable(source, (v) => {
      out.add(`${listed++ === 0 ? ',\n "variables": [' : ","}\n  ${indented(v, 2)}`);
    });
    if (listed > 0) out.add("\n ]");
    if (datasets.length > 0) {
      out.add(`,\n "datasets": [`);
      let first = true;
      eachDataset(({ storedBytes, ...d }) => {
        const text = jsonText({ ...d, stored_bytes: storedBytes }, 1);
        out.add(`${first ? "\n" : ",\n"}${text.replace(/^/gm, "  ")}`);
        first = false;
      });
      out.add("\n ]");
    }
    out.add(`,\n "chunks": [`);
    let first = true;
    forEachChunk(source, (c) => {
      out.add(`${first ? "\n" : ",\n"}${jsonText(c, 1).replace(/^/gm, "  ")}`);
      first = false;
    });
    out.add(first ? "]\n}\n" : "\n ]\n}\n");
  } else {
    // names and facts come from the file: escaped (one line each) and quoted as CSV fields
    for (const [k, v] of Object.entries(facts)) {
      const key = escapeControls(k);
      if (typeof v === "string") out.add(`${key}: ${escapeControls(v)}\n`);
      else if (!Array.isArray(v) || v.length === 0) {
        out.add(`${key}: ${escapeControls(JSON.stringify(v))}\n`);
      } else {
        // element by element: the same text as JSON.stringify(v), never one string
        v.forEach((el, i) =>
          out.add(`${i === 0 ? `${key}: [` : ","}${escapeControls(JSON.stringify(el))}`)
        );
        out.add("]\n");
      }
    }
    let listed = 0;
    forEachVariable(source, (v) => {
      if (listed++ === 0) out.add("\nvariable,dtype,bytes,crc32\n");
      out.add(`${csvField(v.name)},${csvField(v.dtype)},${v.bytes},${v.crc32}\n`);
    });
    if (datasets.length > 0) out.add(`\n${DATASET_HEADER}\n`);
    eachDataset((d) => out.add(datasetLine(d) + "\n"));
    out.add("\nframe,name,dtype,shape,offset,bytes,crc32\n");
    forEachChunk(source, (c) => {
      out.add(
        `${c.frame},${csvField(c.name)},${csvField(c.dtype)},${
          c.shape.join("x")
        },${c.offset},${c.bytes},${c.crc32}\n`,
      );
    });
  }
  out.flush();
}

/**
 * `info --strict`: every departure from the format specification that the source's decoder
 * recorded, one line each on stderr, then FormatError (exit 2); nothing when there is none.
 */
export function checkStrict(source: FrameSource): void {
  const departures = source.departures ?? [];
  if (departures.length === 0) return;
  for (const d of departures) warn(`${source.path}: --strict: ${d}`);
  throw new FormatError(
    source.framing,
    source.path,
    -1,
    `--strict: ${departures.length} departure(s) from the format specification (listed above)`,
  );
}

/** The `info` subcommand. */
export const infoCommand: Command = {
  name: "info",
  summary: "list a file's framing, frames and chunks with CRC-32",
  get help(): string {
    return HELP();
  },
  async run(args: string[]): Promise<void> {
    const { values, positionals } = parseFlags("info", args, true);
    const format = parseChoice(values.format ?? "table", ["table", "json"], "--format");
    if (values.json && values.format !== undefined && format !== "json") {
      throw new UsageError(`info: --json and --format ${format} disagree; --json is --format json`);
    }
    if (positionals.length !== 1) {
      throw new UsageError("info: give exactly one FILE (see 'sciobench info --help')");
    }
    const path = positionals[0]!;
    const json = values.json || format === "json";
    const backend = chooseBackend(path, values.framing);
    if (isolates(backend)) {
      await runIsolated(
        {
          op: "info",
          path,
          framing: backend.name,
          options: values.option,
          settings: { json, allowExternal: values["allow-external"] },
        },
        relayToTerminal,
      );
      return;
    }
    const source = openUserFile(path, backend.name, values.option, "info", {
      allowExternal: values["allow-external"],
    });
    try {
      if (values.strict) checkStrict(source);
      streamInfo(source, json, writeStdout);
    } finally {
      source.close();
    }
  },
};
