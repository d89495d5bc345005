/**
 * The gsd reader at 10^6 frames: the open does gsd_open's work and no more (a few small reads,
 * no per-frame memory), the first lookup maps the index and checks every entry by reads, and
 * what stays resident per frame is a few bytes, not an index copy.
 * @module
 */
import assert from "node:assert/strict";
import { nativeBackend } from "../lib/backends/engine.ts";
import { FormatError } from "../lib/core/errors.ts";
import { gsd, GSD_WHOLE_INDEX_BYTES } from "../lib/framings/gsd/mod.ts";
import { useEntryScanner } from "../lib/framings/gsd/entries_wasm.ts";
import { memorySource } from "../lib/io/memory.ts";
import { writeFrames } from "../lib/backends/write.ts";
import { finishAudit, startAudit } from "../lib/sys/audit.ts";
import { startMeter } from "../lib/sys/meter.ts";
import { TableFrames } from "../lib/workloads/table/mod.ts";
import { tempDir } from "./_helpers.ts";

const FRAMES = 1_000_000;
const SLOTS = 1 << 20;
const NAMES_AT = 256;
const INDEX_AT = NAMES_AT + 64;
const DATA_AT = INDEX_AT + SLOTS * 32;

/** A gsd 2.0 file of FRAMES frames, each one uint32 chunk `x` holding its frame number. */
function bigFile(): Uint8Array {
  const b = new Uint8Array(DATA_AT + 4 * FRAMES);
  const v = new DataView(b.buffer);
  b.set([0xdf, 0x65, 0xdf, 0x65, 0xdf, 0x65, 0xdf, 0x65]);
  v.setUint32(8, INDEX_AT, true);
  v.setUint32(16, SLOTS, true);
  v.setUint32(24, NAMES_AT, true);
  v.setUint32(32, 1, true); // one 64-byte name segment
  v.setUint32(40, 0x10004, true);
  v.setUint32(44, 0x20000, true);
  b[NAMES_AT] = 0x78; // "x\0"
  const w = new Uint32Array(b.buffer, INDEX_AT, FRAMES * 8);
  const data = new Uint32Array(b.buffer, DATA_AT, FRAMES);
  for (let f = 0, q = 0; f < FRAMES; f++, q += 8) {
    w[q] = f; // frame
    w[q + 2] = 1; // N
    w[q + 4] = DATA_AT + 4 * f; // location
    w[q + 6] = 1; // M
    w[q + 7] = 3 << 16; // id 0, type uint32
    data[f] = f;
  }
  return b;
}

/** Memory this process's JavaScript holds: the heap and the typed arrays' buffers, bytes. */
function held(): number {
  const m = Deno.memoryUsage();
  return m.heapUsed + m.external;
}

Deno.test("gsd index of 10^6 frames: a few reads at open, no per-frame memory, every entry checked", () => {
  using d = tempDir();
  const path = `${d.path}/big.gsd`;
  const bytes = bigFile();
  Deno.writeFileSync(path, bytes);
  const backend = nativeBackend(gsd);
  const before = held();
  const source = backend.openReader(path);
  try {
    // gsd_open's work: the header and name list (the first 5376 bytes), 4 KiB around slot 0
    // and each probe until the search's range is 2048 slots, then that range (64 KiB) in one
    // read: 11 reads, not the 32 MiB index
    assert.equal(source.frameCount, FRAMES);
    const opened = source.bytesRead ?? Infinity;
    assert.ok(opened <= 5376 + 10 * 4096 + 65536, `open read ${opened} bytes`);
    assert.ok(held() - before < 1 << 20, `open: memory grew ${held() - before} bytes`);
    // lookups: the index is mapped, checked by reads; frames read back anywhere
    for (const f of [0, 1, 499_999, 999_998, 999_999, 123_457]) {
      const [chunk] = source.readFrame(f);
      assert.equal(new Uint32Array(chunk!.data.slice().buffer)[0], f);
    }
    const grew = held() - before;
    // the columns: 4 bytes a frame, 10 an entry (14 MB); a copy of the index would be 32 an
    // entry, and the whole index block read at open besides, 32 a slot (64 MB)
    assert.ok(grew < 20 * FRAMES, `memory grew ${grew} bytes for ${FRAMES} frames`);
  } finally {
    source.close();
  }
  // an entry gsd_open never probes, deep in the index, fails the first lookup, not the open
  const bad = 700_001;
  bytes[INDEX_AT + bad * 32 + 31] = 1;
  Deno.writeFileSync(path, bytes);
  const broken = backend.openReader(path);
  try {
    assert.equal(broken.frameCount, FRAMES);
    assert.throws(
      () => broken.readFrame(0),
      (e) =>
        e instanceof FormatError && e.offset === INDEX_AT + bad * 32 + 31 &&
        /index entry 700001 \(frame 700001, chunk id 0\): flags 0x1/.test(e.message),
    );
  } finally {
    broken.close();
  }
});

Deno.test("gsd open of a table file: the system calls of gsd_open's work, counted in the audit trail", async () => {
  // the table's index at N = 32^2 and 64 MiB: 2341 frames of 3 entries in 8192 slots (256 KiB);
  // N = 1 gives the same index in a small file
  using d = tempDir();
  const path = `${d.path}/table.gsd`;
  const frames = new TableFrames(1, 1);
  const backend = nativeBackend(gsd);
  await writeFrames(backend, path, { create: "new", fsync: "none" }, 2341, (i) => frames.frame(i));
  startAudit();
  const m = startMeter("open");
  const source = backend.openReader(path, { layout: frames.layout });
  m.stop();
  const trail = finishAudit();
  try {
    assert.equal(source.frameCount, 2341);
    const open = trail!.phases.find((p) => p.timed && p.name === "open")!;
    assert.equal(open.files.length, 1);
    const [file] = open.files;
    // gsd 2.7's gsd_open: open, lseek, the header, the name list, the index mapped and searched.
    // Ours: one open, the header with the name list (one read of the file's first 5376 bytes),
    // slot 0 and 2 probes (4 KiB each), then the search's last 2048 slots (64 KiB) in one read
    assert.equal(file!.opens, 1, "one open");
    assert.equal(open.reads, 5, `reads ${JSON.stringify(file!.readLog)}`);
    assert.equal(open.writes, 0);
    assert.equal(open.syncs.length, 0);
    assert.ok(open.readBytes <= 5376 + 3 * 4096 + 65536, `read ${open.readBytes} bytes`);
  } finally {
    source.close();
  }
});

Deno.test("gsd index: frames far apart and many blocks, the WebAssembly and JavaScript checks alike", () => {
  // entries at frames 0..2999, 30000, 50000..52999 (gaps wider than the module's 16384 frame
  // starts, blocks of 2048 entries), and two chunks in the last frame; each holds its frame
  const frames = [
    ...Array.from({ length: 3000 }, (_, f) => f),
    30000,
    ...Array.from({ length: 3000 }, (_, f) => 50000 + f),
    53000,
  ];
  const slots = 1 << 16, namesAt = 256, indexAt = namesAt + 64, dataAt = indexAt + slots * 32;
  const b = new Uint8Array(dataAt + 4 * (frames.length + 1));
  const v = new DataView(b.buffer);
  b.set([0xdf, 0x65, 0xdf, 0x65, 0xdf, 0x65, 0xdf, 0x65]);
  v.setUint32(8, indexAt, true);
  v.setUint32(16, slots, true);
  v.setUint32(24, namesAt, true);
  v.setUint32(32, 1, true);
  v.setUint32(44, 0x20000, true);
  b.set([0x78, 0, 0x79, 0], namesAt); // "x", "y"
  const entries = [...frames.map((f) => [f, 0]), [53000, 1]];
  entries.forEach(([f, id], e) => {
    const q = indexAt + e * 32;
    v.setUint32(q, f!, true);
    v.setUint32(q + 8, 1, true); // N
    v.setUint32(q + 16, dataAt + 4 * e, true);
    v.setUint32(q + 24, 1, true); // M
    v.setUint32(q + 28, (3 << 16) | id!, true);
    v.setUint32(dataAt + 4 * e, f!, true);
  });
  const looks: unknown[] = [];
  for (const wasm of [true, false]) {
    const was = useEntryScanner(wasm);
    try {
      for (const wholeIndexBytes of [GSD_WHOLE_INDEX_BYTES, 100 * 32]) {
        const index = gsd.openIndex(memorySource(b), { wholeIndexBytes });
        assert.equal(index.frameCount, 53001);
        const look = [0, 1, 2047, 2048, 2999, 3000, 29999, 30000, 30001, 46384, 49999, 50000, 53000]
          .map((f) => index.chunks(f).map((c) => [c.name, v.getUint32(c.offset, true)]));
        assert.deepEqual(look.slice(0, 5), [0, 1, 2047, 2048, 2999].map((f) => [["x", f]]));
        assert.deepEqual(look[6], []);
        assert.deepEqual(look[7], [["x", 30000]]);
        assert.deepEqual(look[12], [["x", 53000], ["y", 53000]]);
        looks.push(look);
      }
    } finally {
      useEntryScanner(was);
    }
  }
  for (const look of looks) assert.deepEqual(look, looks[0]);
});
