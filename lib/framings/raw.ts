/**
 * The raw framing: frames back to back, with a trailer index for random access. The reference
 * every other framing is compared with: no per-record headers, no conversion on native order.
 *
 * Layout (all integers little-endian):
 * - header, 16 bytes: magic `89 53 43 49 4F 52 41 57` ("\x89SCIORAW"), u32 version = 1,
 *   u32 flags (bit 0: data is big-endian);
 * - frame data: each frame's chunks in order, unpadded;
 * - trailer: magic "SCIOIDX1", u64 frame count, u32 layout count, u32 0; each layout: u32 chunk
 *   count, then per chunk u16 name length, u8 dtype code, u8 rank, rank x u64 dims, the UTF-8
 *   name; zero padding to a multiple of 8; then per frame 24 bytes: u64 offset, i64 step,
 *   u32 layout id, u32 0;
 * - footer, last 24 bytes: u64 trailer offset, u64 trailer length, magic "SCIOEND1".
 * @module
 */
import { FormatError, UsageError } from "../core/errors.ts";
import { copySwapped, NATIVE_ORDER } from "../bytes/byteswap.ts";
import {
  type ByteOrder,
  type ByteSource,
  type ChunkLayout,
  type ChunkRef,
  type DType,
  DTYPE_SIZE,
  DTYPES,
  type Frame,
  type FrameIndex,
  type FrameWriter,
  type Framing,
  type WriteOp,
  type WriterOptions,
} from "./types.ts";
import { checkChunkSize, chunkBytes } from "./kit.ts";

/** The 8 magic bytes that start a raw file. */
export const RAW_MAGIC = new Uint8Array([0x89, 0x53, 0x43, 0x49, 0x4f, 0x52, 0x41, 0x57]);
const IDX_MAGIC = "SCIOIDX1";
const END_MAGIC = "SCIOEND1";
const HEADER_BYTES = 16;
const FOOTER_BYTES = 24;
const FRAME_ENTRY_BYTES = 24;
const VERSION = 1;

const enc = new TextEncoder();
const dec = new TextDecoder("utf-8", { fatal: true });

export { chunkBytes } from "./kit.ts";

function layoutKey(chunks: readonly ChunkLayout[]): string {
  return chunks.map((c) => `${c.name}\u0000${c.dtype}\u0000${c.shape.join("x")}`).join("\u0001");
}

interface Layout {
  readonly chunks: readonly {
    name: string;
    dtype: DType;
    shape: readonly number[];
    rel: number;
    bytes: number;
  }[];
  readonly bytes: number;
}

class RawWriter implements FrameWriter {
  readonly #order: ByteOrder;
  #offset = HEADER_BYTES;
  readonly #layouts: Layout[] = [];
  readonly #layoutIds = new Map<string, number>();
  #frames = new Float64Array(1024 * 3);
  #count = 0;
  #scratch = new Uint8Array(0);

  constructor(order: ByteOrder) {
    this.#order = order;
  }

  /** A writer that continues after the frames of `index` (the header stays; the trailer is rewritten). */
  static continuing(index: RawIndex): RawWriter {
    const w = new RawWriter(index.order);
    const state = index.state();
    w.#offset = state.dataEnd;
    for (const l of state.layouts) {
      w.#layoutIds.set(layoutKey(l.chunks), w.#layouts.length);
      w.#layouts.push(l);
    }
    w.#frames = new Float64Array(Math.max(1024, state.frames.length) * 3);
    w.#frames.set(state.frames);
    w.#count = state.frames.length / 3;
    w.#appending = true;
    return w;
  }

  #appending = false;

  begin(): WriteOp[] {
    if (this.#appending) return [];
    return [{ kind: "write", offset: 0, data: rawHeader(this.#order) }];
  }

  writeFrame(frame: Frame): WriteOp[] {
    const key = layoutKey(frame.chunks);
    let id = this.#layoutIds.get(key);
    if (id === undefined) {
      let rel = 0;
      const chunks = frame.chunks.map((c) => {
        const bytes = checkChunkSize(c);
        const e = { name: c.name, dtype: c.dtype, shape: [...c.shape], rel, bytes };
        rel += bytes;
        return e;
      });
      id = this.#layouts.length;
      this.#layouts.push({ chunks, bytes: rel });
      this.#layoutIds.set(key, id);
    }
    const layout = this.#layouts[id]!;
    if (this.#count * 3 >= this.#frames.length) {
      const next = new Float64Array(this.#frames.length * 2);
      next.set(this.#frames);
      this.#frames = next;
    }
    this.#frames[this.#count * 3] = this.#offset;
    this.#frames[this.#count * 3 + 1] = frame.step;
    this.#frames[this.#count * 3 + 2] = id;
    this.#count++;
    const ops: WriteOp[] = [];
    const swap = this.#order !== NATIVE_ORDER;
    if (swap && this.#scratch.length < layout.bytes) this.#scratch = new Uint8Array(layout.bytes);
    frame.chunks.forEach((c, k) => {
      const bytes = layout.chunks[k]!.bytes;
      if (c.data.byteLength !== bytes) checkChunkSize(c);
      const src = chunkBytes(c);
      let data = src;
      if (swap && DTYPE_SIZE[c.dtype] > 1) {
        const rel = layout.chunks[k]!.rel;
        data = this.#scratch.subarray(rel, rel + bytes);
        copySwapped(src, data, DTYPE_SIZE[c.dtype]);
      }
      ops.push({ kind: "write", offset: this.#offset, data });
      this.#offset += bytes;
    });
    return ops;
  }

  finish(): WriteOp[] {
    const layouts = this.#layouts.map((l) => l.chunks);
    const t = rawTrailer(layouts, this.#frames, this.#count, this.#offset);
    return [{ kind: "write", offset: this.#offset, data: t }];
  }
}

/** Bytes of a raw file's header, before the first frame. */
export const RAW_HEADER_BYTES = HEADER_BYTES;

/** The 16-byte header of a raw file whose data is in byte order `order`. */
export function rawHeader(order: ByteOrder): Uint8Array {
  const h = new Uint8Array(HEADER_BYTES);
  h.set(RAW_MAGIC);
  const v = new DataView(h.buffer);
  v.setUint32(8, VERSION, true);
  v.setUint32(12, order === "big" ? 1 : 0, true);
  return h;
}

/**
 * The trailer of a raw file (its index, then the footer), written at byte `dataEnd`, the end of
 * the frame data: `layouts` are the distinct frame layouts, `frames` holds [offset, step, layout
 * index] for each of the first `count` frames.
 */
export function rawTrailer(
  layouts: readonly (readonly ChunkLayout[])[],
  frames: Float64Array,
  count: number,
  dataEnd: number,
): Uint8Array {
  let size = 24;
  const names = layouts.map((l) => l.map((c) => enc.encode(c.name)));
  for (const [i, l] of layouts.entries()) {
    size += 4;
    for (const [k, c] of l.entries()) size += 4 + 8 * c.shape.length + names[i]![k]!.length;
  }
  size = Math.ceil(size / 8) * 8;
  const tableAt = size;
  size += count * FRAME_ENTRY_BYTES + FOOTER_BYTES;
  const t = new Uint8Array(size);
  const v = new DataView(t.buffer);
  t.set(enc.encode(IDX_MAGIC), 0);
  v.setBigUint64(8, BigInt(count), true);
  v.setUint32(16, layouts.length, true);
  let p = 24;
  for (const [i, l] of layouts.entries()) {
    v.setUint32(p, l.length, true);
    p += 4;
    for (const [k, c] of l.entries()) {
      const name = names[i]![k]!;
      v.setUint16(p, name.length, true);
      v.setUint8(p + 2, DTYPES.indexOf(c.dtype) + 1);
      v.setUint8(p + 3, c.shape.length);
      p += 4;
      for (const d of c.shape) {
        v.setBigUint64(p, BigInt(d), true);
        p += 8;
      }
      t.set(name, p);
      p += name.length;
    }
  }
  p = tableAt;
  for (let i = 0; i < count; i++) {
    v.setBigUint64(p, BigInt(frames[i * 3]!), true);
    v.setBigInt64(p + 8, BigInt(frames[i * 3 + 1]!), true);
    v.setUint32(p + 16, frames[i * 3 + 2]!, true);
    p += FRAME_ENTRY_BYTES;
  }
  v.setBigUint64(p, BigInt(dataEnd), true);
  v.setBigUint64(p + 8, BigInt(size - FOOTER_BYTES), true);
  t.set(enc.encode(END_MAGIC), p + 16);
  return t;
}

/** UsageError when an explicit byte order contradicts the order of the file being appended to. */
export function checkAppendOrder(
  format: string,
  path: string,
  fileOrder: ByteOrder,
  requested: WriterOptions["endian"],
): void {
  const want = requested === undefined || requested === "native" ? undefined : requested;
  if (want !== undefined && want !== fileOrder) {
    throw new UsageError(
      `${format}: cannot append ${want}-endian data to ${path}, a ${fileOrder}-endian file`,
    );
  }
}

function ascii(b: Uint8Array): string {
  return String.fromCharCode(...b);
}

class RawIndex implements FrameIndex {
  readonly framing = "raw";
  readonly frameCount: number;
  readonly #layouts: Layout[];
  readonly #table: DataView;
  readonly #order: ByteOrder;
  readonly #dataEnd: number;

  /** Byte order of the file's data. */
  get order(): ByteOrder {
    return this.#order;
  }

  /** What a continuing writer needs: layouts, [offset, step, layout] per frame, end of data. */
  state(): { layouts: readonly Layout[]; frames: Float64Array; dataEnd: number } {
    const frames = new Float64Array(this.frameCount * 3);
    for (let i = 0; i < this.frameCount; i++) {
      const at = i * FRAME_ENTRY_BYTES;
      frames[i * 3] = Number(this.#table.getBigUint64(at, true));
      frames[i * 3 + 1] = Number(this.#table.getBigInt64(at + 8, true));
      frames[i * 3 + 2] = this.#table.getUint32(at + 16, true);
    }
    return { layouts: this.#layouts, frames, dataEnd: this.#dataEnd };
  }

  constructor(src: ByteSource) {
    const bad = (offset: number, problem: string): never => {
      throw new FormatError("raw", src.path, offset, problem);
    };
    if (src.size < HEADER_BYTES + FOOTER_BYTES) {
      bad(0, `file has ${src.size} bytes, a raw file has at least ${HEADER_BYTES + FOOTER_BYTES}`);
    }
    const h = src.read(0, HEADER_BYTES);
    if (!RAW_MAGIC.every((b, i) => h[i] === b)) bad(0, "not a raw sciobench file (wrong magic)");
    const hv = new DataView(h.buffer, h.byteOffset, h.byteLength);
    const version = hv.getUint32(8, true);
    if (version !== VERSION) bad(8, `unsupported version ${version}, expected ${VERSION}`);
    const flags = hv.getUint32(12, true);
    if (flags > 1) bad(12, `unknown flags 0x${flags.toString(16)}, expected 0 or 1`);
    this.#order = flags & 1 ? "big" : "little";

    const footAt = src.size - FOOTER_BYTES;
    const f = src.read(footAt, FOOTER_BYTES);
    const fv = new DataView(f.buffer, f.byteOffset, f.byteLength);
    if (ascii(f.subarray(16, 24)) !== END_MAGIC) {
      bad(
        footAt + 16,
        `no index footer '${END_MAGIC}': the file is truncated or its writer did not finish`,
      );
    }
    const tAt = Number(fv.getBigUint64(0, true));
    const tLen = Number(fv.getBigUint64(8, true));
    if (tAt < HEADER_BYTES || tAt + tLen !== footAt) {
      bad(
        footAt,
        `index at byte ${tAt} of length ${tLen} does not end at the footer (byte ${footAt})`,
      );
    }
    const t = src.read(tAt, tLen);
    const tv = new DataView(t.buffer, t.byteOffset, t.byteLength);
    if (ascii(t.subarray(0, 8)) !== IDX_MAGIC) bad(tAt, `index does not start with '${IDX_MAGIC}'`);
    const frames = Number(tv.getBigUint64(8, true));
    const nl = tv.getUint32(16, true);
    let p = 24;
    const need = (n: number) => {
      if (p + n > tLen) bad(tAt + p, "index ends inside a layout record");
    };
    this.#layouts = [];
    for (let i = 0; i < nl; i++) {
      need(4);
      const nc = tv.getUint32(p, true);
      p += 4;
      const chunks = [];
      let rel = 0;
      for (let k = 0; k < nc; k++) {
        need(4);
        const nameLen = tv.getUint16(p, true);
        const code = tv.getUint8(p + 2);
        const rank = tv.getUint8(p + 3);
        const dtype = DTYPES[code - 1];
        if (dtype === undefined) bad(tAt + p + 2, `unknown dtype code ${code}`);
        p += 4;
        need(8 * rank + nameLen);
        const shape: number[] = [];
        for (let r = 0; r < rank; r++, p += 8) shape.push(Number(tv.getBigUint64(p, true)));
        let name = "";
        try {
          name = dec.decode(t.subarray(p, p + nameLen));
        } catch {
          bad(tAt + p, "chunk name is not UTF-8");
        }
        p += nameLen;
        const bytes = shape.reduce((a, b) => a * b, 1) * DTYPE_SIZE[dtype!];
        chunks.push({ name, dtype: dtype!, shape, rel, bytes });
        rel += bytes;
      }
      this.#layouts.push({ chunks, bytes: rel });
    }
    p = Math.ceil(p / 8) * 8;
    if (p + frames * FRAME_ENTRY_BYTES !== tLen) {
      bad(tAt + p, `frame table of ${frames} entries does not fit the index (${tLen} bytes)`);
    }
    this.#table = new DataView(t.buffer, t.byteOffset + p, frames * FRAME_ENTRY_BYTES);
    for (let i = 0; i < frames; i++) {
      const at = i * FRAME_ENTRY_BYTES;
      const off = Number(this.#table.getBigUint64(at, true));
      const lid = this.#table.getUint32(at + 16, true);
      const l = this.#layouts[lid];
      if (l === undefined) bad(tAt + p + at + 16, `frame ${i} names layout ${lid} of ${nl}`);
      if (off < HEADER_BYTES || off + l!.bytes > tAt) {
        bad(
          tAt + p + at,
          `frame ${i} at byte ${off} (+${
            l!.bytes
          }) lies outside the data area [${HEADER_BYTES}, ${tAt})`,
        );
      }
    }
    this.frameCount = frames;
    this.#dataEnd = tAt;
  }

  chunks(frame: number): readonly ChunkRef[] {
    const at = frame * FRAME_ENTRY_BYTES;
    const off = Number(this.#table.getBigUint64(at, true));
    const l = this.#layouts[this.#table.getUint32(at + 16, true)]!;
    return l.chunks.map((c) => ({
      name: c.name,
      dtype: c.dtype,
      shape: c.shape,
      offset: off + c.rel,
      bytes: c.bytes,
      order: this.#order,
    }));
  }

  step(frame: number): number {
    return Number(this.#table.getBigInt64(frame * FRAME_ENTRY_BYTES + 8, true));
  }

  describe(): Record<string, unknown> {
    return { version: VERSION, byte_order: this.#order, layouts: this.#layouts.length };
  }
}

/** The raw framing (`raw`): frames back to back plus a trailer index; either byte order. */
export const raw: Framing = {
  name: "raw",
  description: "frames back to back with a trailer index (the reference framing)",
  orders: ["little", "big"],
  options: [],
  magic: [{ bytes: [...RAW_MAGIC] }],
  sharedLayout: true,
  createWriter(options: WriterOptions = {}): FrameWriter {
    const e = options.endian ?? "native";
    return new RawWriter(e === "native" ? NATIVE_ORDER : e);
  },
  openIndex(source: ByteSource): FrameIndex {
    return new RawIndex(source);
  },
  appendWriter(source: ByteSource, options: WriterOptions = {}): FrameWriter {
    const index = new RawIndex(source);
    checkAppendOrder("raw", source.path, index.order, options.endian);
    return RawWriter.continuing(index);
  },
};
