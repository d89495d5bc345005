/**
 * lib/io/mapped.ts: the open's scan source gives the same bytes as pread whether the file is
 * cached (pread) or not (a mapping), across its 16 MiB windows, and after release; short reads
 * fail as the file handle's do.
 */
import assert from "node:assert/strict";
import { ShortReadError } from "../lib/errors.ts";
import { dropCache } from "../lib/io/cache.ts";
import { FileHandle } from "../lib/io/file.ts";
import { MappedSource } from "../lib/io/mapped.ts";
import { tempDir } from "./_helpers.ts";

/** `bytes` bytes whose value at i is a hash of i, so a read from the wrong offset shows. */
function pattern(bytes: number): Uint8Array {
  const out = new Uint8Array(bytes);
  for (let i = 0; i < bytes; i++) out[i] = (Math.imul(i, 2654435761) >>> 24) & 0xff;
  return out;
}

for (const cache of ["cold", "warm"] as const) {
  Deno.test(`mapped source (${cache}): a scan of small reads gives the file's bytes`, () => {
    using d = tempDir();
    const path = `${d.path}/scan.bin`;
    const size = (16 << 20) + 200_000; // two windows
    const want = pattern(size);
    Deno.writeFileSync(path, want);
    if (cache === "cold") dropCache(path);
    const file = FileHandle.open(path, "read");
    try {
      const src = new MappedSource(file);
      // a scan: a small read every 28 KiB, one across the window's end, then one at the end
      const at = [] as number[];
      for (let off = 0; off + 8 <= size; off += 28_679) at.push(off);
      at.push((16 << 20) - 3, size - 8, 5);
      for (const off of at) {
        assert.deepEqual(src.read(off, 8), want.subarray(off, off + 8), `${off}`);
      }
      assert.equal(src.read(size, 0).length, 0);
      assert.throws(() => src.read(size - 4, 8), ShortReadError);
      src.release();
      assert.deepEqual(src.read(100, 16), want.subarray(100, 116));
      // what it hands out is a copy: the caller may keep it
      const kept = src.read(0, 4);
      assert.deepEqual(kept, want.subarray(0, 4));
    } finally {
      file.close();
    }
  });
}

Deno.test("mapped source: an empty file reads nothing and refuses bytes", () => {
  using d = tempDir();
  const path = `${d.path}/empty.bin`;
  Deno.writeFileSync(path, new Uint8Array(0));
  const file = FileHandle.open(path, "read");
  try {
    const src = new MappedSource(file);
    assert.equal(src.read(0, 0).length, 0);
    for (let i = 0; i < 70; i++) assert.throws(() => src.read(0, 4), ShortReadError);
    src.release();
  } finally {
    file.close();
  }
});
