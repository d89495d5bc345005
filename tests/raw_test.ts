import assert from "node:assert/strict";
import { FormatError } from "../lib/core/errors.ts";
import { raw } from "../lib/framings/raw.ts";
import { type Frame, matchesMagic } from "../lib/framings/types.ts";
import { MemoryFile, memorySource } from "../lib/io/memory.ts";
import { TableFrames } from "../lib/workloads/table/mod.ts";

function encode(frames: Frame[], endian: "native" | "big" | "little" = "native"): Uint8Array {
  const w = raw.createWriter({ endian });
  const m = new MemoryFile();
  m.apply(w.begin());
  for (const f of frames) m.apply(w.writeFrame(f));
  m.apply(w.finish());
  return m.bytes().slice();
}

function tableFrames(n: number, count: number): Frame[] {
  const t = new TableFrames(n, 7);
  return Array.from({ length: count }, (_, i) => {
    const f = t.frame(i);
    return { step: f.step, chunks: f.chunks.map((c) => ({ ...c, data: c.data.slice() })) };
  });
}

Deno.test("raw: round trip of table frames, with offsets, steps and chunk layout", () => {
  const frames = tableFrames(5, 4);
  const bytes = encode(frames);
  assert.ok(matchesMagic(raw.magic, bytes));
  const idx = raw.openIndex(memorySource(bytes));
  assert.equal(idx.frameCount, 4);
  for (let i = 0; i < 4; i++) {
    const refs = idx.chunks(i);
    assert.deepEqual(refs.map((r) => [r.name, r.dtype, r.shape, r.bytes, r.order]), [
      ["particles/position", "float32", [5, 3], 60, "little"],
      ["particles/orientation", "float32", [5, 4], 80, "little"],
    ]);
    assert.equal(refs[0]!.offset, 16 + i * 140);
    const pos = new Float32Array(bytes.slice(refs[0]!.offset, refs[0]!.offset + 60).buffer);
    assert.deepEqual(pos, frames[i]!.chunks[0]!.data);
    assert.equal(idx.step?.(i), 10 * i);
  }
});

Deno.test("raw: big-endian data is stored swapped and flagged", () => {
  const f: Frame = {
    step: 3,
    chunks: [{ name: "x", dtype: "float64", shape: [2], data: new Float64Array([1, -2]) }],
  };
  const bytes = encode([f], "big");
  assert.equal(bytes[12], 1, "flag bit 0 = big-endian");
  const idx = raw.openIndex(memorySource(bytes));
  const r = idx.chunks(0)[0]!;
  assert.equal(r.order, "big");
  assert.equal(new DataView(bytes.buffer, r.offset).getFloat64(0, false), 1);
  assert.equal(new DataView(bytes.buffer, r.offset + 8).getFloat64(0, false), -2);
});

Deno.test("raw: frames with different layouts and an empty file", () => {
  const a: Frame = {
    step: 0,
    chunks: [{ name: "a", dtype: "int16", shape: [3], data: new Int16Array([1, 2, 3]) }],
  };
  const b: Frame = {
    step: 1,
    chunks: [{ name: "b", dtype: "uint64", shape: [1, 2], data: new BigUint64Array([5n, 6n]) }],
  };
  const idx = raw.openIndex(memorySource(encode([a, b, a])));
  assert.deepEqual(idx.chunks(1).map((r) => [r.name, r.dtype, r.shape]), [["b", "uint64", [1, 2]]]);
  assert.equal(idx.chunks(2)[0]!.offset, 16 + 6 + 16);
  assert.equal(raw.openIndex(memorySource(encode([]))).frameCount, 0);
});

Deno.test("raw: a chunk whose data does not match its shape is refused", () => {
  const w = raw.createWriter();
  w.begin();
  assert.throws(
    () =>
      w.writeFrame({
        step: 0,
        chunks: [{ name: "x", dtype: "float32", shape: [4], data: new Float32Array(3) }],
      }),
    /needs 16 bytes, data has 12/,
  );
});

function expectFormatError(bytes: Uint8Array, pattern: RegExp, offset?: number): void {
  assert.throws(() => raw.openIndex(memorySource(bytes, "bad.raw")), (e: unknown) => {
    assert.ok(e instanceof FormatError, String(e));
    assert.match(e.message, pattern);
    assert.match(e.message, /bad\.raw/);
    if (offset !== undefined) assert.equal(e.offset, offset);
    return true;
  });
}

Deno.test("raw: malformed files give a FormatError with the offset", () => {
  const good = encode(tableFrames(3, 3));
  // wrong magic
  const magic = good.slice();
  magic[1] = 0;
  expectFormatError(magic, /wrong magic/, 0);
  assert.ok(!matchesMagic(raw.magic, magic));
  // truncated: the footer is gone
  expectFormatError(good.slice(0, good.length - 5), /truncated/);
  expectFormatError(good.slice(0, 20), /at least 40/);
  // index past end of file: the footer points beyond the file
  const past = good.slice();
  const dv = new DataView(past.buffer);
  dv.setBigUint64(past.length - 24, BigInt(past.length * 2), true);
  expectFormatError(past, /does not end at the footer/, past.length - 24);
  // a frame offset past the data area
  const frame = good.slice();
  const fv = new DataView(frame.buffer);
  const tAt = Number(fv.getBigUint64(frame.length - 24, true));
  const tLen = Number(fv.getBigUint64(frame.length - 16, true));
  const firstEntry = tAt + tLen - 3 * 24;
  fv.setBigUint64(firstEntry, BigInt(frame.length), true);
  expectFormatError(frame, /frame 0 at byte .* outside the data area/, firstEntry);
  // unknown version
  const ver = good.slice();
  ver[8] = 9;
  expectFormatError(ver, /unsupported version 9/, 8);
});
