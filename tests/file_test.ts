import assert from "node:assert/strict";
import { FormatError, IoError } from "../lib/core/errors.ts";
import { FileHandle, RAMP_BYTES, WriteBatcher } from "../lib/io/file.ts";
import { observeIo } from "../lib/sys/libc.ts";
import { withScratchDir } from "../lib/io/scratch.ts";
import { tempDir } from "./_helpers.ts";

Deno.test("WriteBatcher coalesces small appends, passes big writes through, and keeps write order", () => {
  using d = tempDir();
  const path = `${d.path}/b`;
  const f = FileHandle.open(path, "new");
  const b = new WriteBatcher(f, 64, 16);
  const expect = new Uint8Array(200);
  const put = (offset: number, bytes: number[]) => {
    b.write(new Uint8Array(bytes), offset);
    expect.set(bytes, offset);
  };
  put(0, [1, 2, 3, 4]);
  put(4, [5, 6]);
  assert.equal(f.size, 0, "small appends wait in the buffer");
  put(0, [9]); // a rewrite of an earlier byte: the buffer is flushed first, then this lands on top
  assert.equal(f.size, 6);
  put(6, Array.from({ length: 40 }, (_, i) => i)); // >= direct threshold: written at once
  assert.equal(f.size, 46);
  put(46, [7, 7, 7]);
  b.flush();
  f.close();
  assert.deepEqual(Deno.readFileSync(path), expect.subarray(0, 49));
});

Deno.test("FileHandle: 'new' refuses an existing file, read past the end is a FormatError", () => {
  using d = tempDir();
  const path = `${d.path}/x`;
  Deno.writeTextFileSync(path, "keep me");
  assert.throws(
    () => FileHandle.open(path, "new"),
    (e: unknown) => e instanceof IoError && /refusing to overwrite/.test(e.message),
  );
  assert.equal(Deno.readTextFileSync(path), "keep me");
  const r = FileHandle.open(path, "read");
  assert.equal(r.size, 7);
  assert.deepEqual(r.read(0, 4), new TextEncoder().encode("keep"));
  assert.throws(() => r.read(5, 4), (e: unknown) => e instanceof FormatError && e.offset === 7);
  r.close();
  r.close();
  assert.throws(() => FileHandle.open(`${d.path}/missing`, "read"), /no such file/);
});

Deno.test("withScratchDir removes its directory after success and after an error", async () => {
  using d = tempDir();
  let seen = "";
  const v = await withScratchDir(d.path, (dir) => {
    seen = dir;
    Deno.writeTextFileSync(`${dir}/f`, "x");
    return 42;
  });
  assert.equal(v, 42);
  assert.throws(() => Deno.statSync(seen), Deno.errors.NotFound);
  await assert.rejects(() =>
    withScratchDir(d.path, (dir) => {
      seen = dir;
      Deno.writeTextFileSync(`${dir}/f`, "x");
      throw new Error("boom");
    }), /boom/);
  assert.throws(() => Deno.statSync(seen), Deno.errors.NotFound);
  assert.deepEqual([...Deno.readDirSync(d.path)], []);
  await assert.rejects(() => withScratchDir(`${d.path}/none`, () => 1), IoError);
});

Deno.test("WriteBatcher keeps two interleaved streams (data and index) in buffers until flushed", () => {
  using d = tempDir();
  const path = `${d.path}/s`;
  const f = FileHandle.open(path, "new");
  const b = new WriteBatcher(f, 1024, 64, 2);
  const expect = new Uint8Array(2000);
  for (let i = 0; i < 10; i++) {
    const data = new Uint8Array(20).fill(i + 1);
    const index = new Uint8Array(4).fill(100 + i);
    b.write(data, 100 + 20 * i);
    b.write(index, 1000 + 4 * i);
    expect.set(data, 100 + 20 * i);
    expect.set(index, 1000 + 4 * i);
  }
  assert.equal(f.size, 0, "both streams are still queued");
  b.write(new Uint8Array([7]), 50); // a third stream: the oldest (data) is written out
  assert.equal(f.size, 300);
  expect[50] = 7;
  b.write(new Uint8Array([9, 9]), 1002); // overlaps the queued index: everything is flushed first
  expect.set([9, 9], 1002);
  assert.equal(f.size, 1040);
  b.flush();
  f.close();
  assert.deepEqual(Deno.readFileSync(path), expect.subarray(0, 1040));
});

Deno.test("FileHandle: its first read of 1 MiB or more is a 128 KiB pread then the rest, later ones whole", async () => {
  using d = tempDir();
  const path = `${d.path}/ramp`;
  const want = new Uint8Array(5 << 20).map((_, i) => (i * 7) & 0xff);
  Deno.writeFileSync(path, want);
  for (const async of [false, true]) {
    const reads: [number, number][] = [];
    observeIo({
      open() {},
      close() {},
      read: (_fd, offset, bytes) => void reads.push([offset, bytes]),
      write() {},
      sync() {},
      resident() {},
      librarySync() {},
    });
    const f = FileHandle.open(path, "read");
    try {
      const buf = new Uint8Array(2 << 20);
      const read = (at: number) => async ? f.readIntoAsync(buf, at) : f.readInto(buf, at);
      f.read(0, 8); // small reads (a scan's) do not count
      assert.equal(await read(4), 2 << 20);
      assert.deepEqual(buf, want.subarray(4, 4 + (2 << 20)), "the bytes of the split read");
      assert.equal(await read(3 << 20), 2 << 20);
    } finally {
      f.close();
      observeIo(undefined);
    }
    assert.deepEqual(reads, [
      [0, 8],
      [4, RAMP_BYTES],
      [4 + RAMP_BYTES, (2 << 20) - RAMP_BYTES],
      [3 << 20, 2 << 20],
    ], async ? "readIntoAsync" : "readInto");
  }
});
