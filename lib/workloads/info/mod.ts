/**
 * What `sciobench info` lists of a file: its facts (framing, frame count, the format's own facts,
 * every netCDF variable and HDF5 dataset with the CRC-32 of its data) and every chunk of every
 * frame with its CRC-32, streamed as text or one JSON document (the command's own layouts), or
 * as facts and one row per chunk (csv, jsonl). Memory stays bounded however many variables and
 * chunks the file holds.
 * @module
 */
import { crc32 } from "node:zlib";
import { escapeControls, FormatError } from "../../core/errors.ts";
import type { DatasetInfo, FrameSource } from "../../backends/backend.ts";
import { csvField, jsonText } from "../../report/output.ts";
import type { Row } from "../../report/row.ts";
import { warn } from "../../core/diagnostics.ts";
import { storeBytes } from "../../io/store.ts";
import { BlockReader, type DatasetRow, wholeOf } from "../blocks.ts";
import { columnDocs, INFO_COLUMN_NAMES } from "../columns.ts";
import type { ColumnDoc } from "../../report/human.ts";

/** The columns of `info`'s rows (one per chunk), with units, in CSV order (from the schema). */
export const INFO_COLUMN_DOCS: readonly ColumnDoc[] = columnDocs(INFO_COLUMN_NAMES);

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
 * Lists `datasets` (those of `source`) to `visit` one by one, each read now for its CRC-32 (a file
 * of many shows them as they come), then says in one line through `note` which were not read
 * (storage never or partly written), however many.
 */
function forEachDataset(
  source: FrameSource,
  datasets: readonly DatasetInfo[],
  visit: (d: DatasetRow) => void,
  note: (text: string) => void,
): void {
  const reader = new BlockReader(source);
  datasets.forEach((d, i) => visit(datasetRow(source, reader, d, i)));
  // one line however many: the listing shows each one's stored_bytes
  const unwritten = datasets.filter((d) => d.unwritten);
  const first = unwritten[0];
  if (first) {
    const more = unwritten.length > 1 ? ` and ${unwritten.length - 1} more` : "";
    note(
      `${source.path}: dataset '${first.name}' (${first.unwritten})${more} not read: storage ` +
        `never or partly written, the data would be the fill value, not bytes of the file`,
    );
  }
}

/** A dataset as the JSON forms list it (`stored_bytes`, as the rows name columns). */
function datasetJson({ storedBytes, ...d }: DatasetRow): Record<string, unknown> {
  return { ...d, stored_bytes: storedBytes };
}

/** The facts `info` knows of a source at once: path, framing, frame count and file bytes. */
function firstFacts(source: FrameSource): Record<string, unknown> {
  return {
    path: source.path,
    framing: source.framing,
    frames: source.frameCount,
    "file_bytes": storeBytes(source.path),
  };
}

/**
 * The file's facts as `info --format json` holds them, but for the chunks: path, framing,
 * frames, file_bytes, the format's facts, and the netCDF variables and HDF5 datasets with their
 * CRC-32s where there are any (what `--format jsonl` puts first, and csv leaves out). Held whole,
 * unlike the streamed JSON document.
 */
export function infoFacts(
  source: FrameSource,
  note: (text: string) => void = warn,
): Record<string, unknown> {
  // asked in the order streamInfo asks them
  const facts: Record<string, unknown> = { ...firstFacts(source) };
  const datasets = source.datasets?.() ?? [];
  facts.format = source.describe?.() ?? {};
  const variables = listVariables(source);
  if (variables.length > 0) facts.variables = variables;
  const rows: Record<string, unknown>[] = [];
  forEachDataset(source, datasets, (d) => rows.push(datasetJson(d)), note);
  if (rows.length > 0) facts.datasets = rows;
  return facts;
}

/** One chunk as a row of `info`'s csv and jsonl output (the shape's dimensions joined by x). */
export function chunkRow(c: ChunkInfo): Row {
  return { ...c, shape: c.shape.join("x") };
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
  const out = new Batcher(emit);
  // What is known at once goes out at once; the rest (a walk of every group, variables' CRCs)
  // follows as it is computed.
  const first = firstFacts(source);
  if (json) out.add(jsonText(first, 1).slice(0, -2));
  else {
    out.add(Object.entries(first).map(([k, v]) => `${k}: ${escapeControls(String(v))}\n`).join(""));
  }
  out.flush();
  const datasets = source.datasets?.() ?? [];
  const facts = source.describe?.() ?? {};
  const eachDataset = (visit: (d: DatasetRow) => void) =>
    forEachDataset(source, datasets, visit, note);
  if (json) streamJson(out, source, facts, datasets.length > 0, eachDataset);
  else streamText(out, source, facts, datasets.length > 0, eachDataset);
  out.flush();
}

/** The JSON document of {@link streamInfo} after its first facts. */
function streamJson(
  out: Batcher,
  source: FrameSource,
  facts: Record<string, unknown>,
  hasDatasets: boolean,
  eachDataset: (visit: (d: DatasetRow) => void) => void,
): void {
  out.add(`,\n "format": `);
  addFactsJson(out, facts, 1);
  let listed = 0;
  forEachVariable(source, (v) => {
    out.add(`${listed++ === 0 ? ',\n "variables": [' : ","}\n  ${indented(v, 2)}`);
  });
  if (listed > 0) out.add("\n ]");
  if (hasDatasets) {
    out.add(`,\n "datasets": [`);
    let first = true;
    eachDataset((d) => {
      const text = jsonText(datasetJson(d), 1);
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
}

/** The text of {@link streamInfo} after its first facts. */
function streamText(
  out: Batcher,
  source: FrameSource,
  facts: Record<string, unknown>,
  hasDatasets: boolean,
  eachDataset: (visit: (d: DatasetRow) => void) => void,
): void {
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
  if (hasDatasets) out.add(`\n${DATASET_HEADER}\n`);
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
