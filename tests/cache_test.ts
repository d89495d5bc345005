import assert from "node:assert/strict";
import { dropCache, residency } from "../lib/io/cache.ts";
import { FileHandle } from "../lib/io/file.ts";
import { getrusage, statfs } from "../lib/sys/libc.ts";
import { tempDir } from "./_helpers.ts";

Deno.test("dropCache evicts a file: residency falls to ~0 and a read goes to the device", () => {
  using d = tempDir();
  const path = `${d.path}/cold`;
  const size = 8 << 20;
  const f = FileHandle.open(path, "new");
  f.writeAt(new Uint8Array(size).fill(0x5a), 0);
  f.close();
  Deno.readFileSync(path);
  if (statfs(d.path).inMemory) {
    // tmpfs pages are the file itself: they cannot be dropped, and a cold read is impossible.
    const drop = dropCache(path);
    assert.equal(drop.residentAfter, 1, "a tmpfs file stays resident");
    return;
  }
  assert.ok(residency(path) > 0.9, "the file is cached before the drop");
  const drop = dropCache(path);
  assert.ok(drop.residentAfter < 0.05, `resident after drop: ${drop.residentAfter}`);
  assert.ok(drop.seconds >= 0);
  const before = getrusage().inBlocks;
  const buf = new Uint8Array(size);
  const r = FileHandle.open(path, "read");
  assert.equal(r.readInto(buf, 0), size);
  r.close();
  const devBytes = (getrusage().inBlocks - before) * 512;
  assert.ok(devBytes >= size * 0.9, `device reads after the drop: ${devBytes} bytes of ${size}`);
  assert.equal(buf[size - 1], 0x5a);
  // and a warm read costs no device bytes
  const before2 = getrusage().inBlocks;
  const r2 = FileHandle.open(path, "read");
  r2.readInto(buf, 0);
  r2.close();
  assert.ok(
    (getrusage().inBlocks - before2) * 512 < size / 4,
    "a warm read is served from the cache",
  );
});
