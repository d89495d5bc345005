/**
 * `info` streams: a file of 200,000 one-byte Fortran records is listed in pieces of bounded size,
 * and listing it does not grow the heap by the whole listing (as collecting every chunk before
 * printing would, with the record count).
 */
import assert from "node:assert/strict";
import { streamInfo } from "../lib/workloads/info/mod.ts";
import { openUserFile } from "../lib/workloads/open.ts";
import { tempDir } from "./_helpers.ts";

Deno.test("info streams a file of 200,000 records in bounded pieces and memory", () => {
  using d = tempDir();
  const path = `${d.path}/tiny.f77`;
  const n = 200_000;
  const bytes = new Uint8Array(9 * n);
  const view = new DataView(bytes.buffer);
  for (let i = 0; i < n; i++) {
    view.setUint32(9 * i, 1, true);
    bytes[9 * i + 4] = 7;
    view.setUint32(9 * i + 5, 1, true);
  }
  Deno.writeFileSync(path, bytes);
  const source = openUserFile(path, "f77", ["marker=4"], "info");
  try {
    let pieces = 0;
    let largest = 0;
    let lines = 0;
    let peak = 0;
    const before = Deno.memoryUsage().heapUsed;
    streamInfo(source, false, (text) => {
      pieces++;
      largest = Math.max(largest, text.length);
      for (let i = text.indexOf("\n"); i >= 0; i = text.indexOf("\n", i + 1)) lines++;
      peak = Math.max(peak, Deno.memoryUsage().heapUsed - before);
    });
    assert.ok(lines > n, `${lines} lines`);
    assert.ok(pieces > 50, `${pieces} pieces`);
    assert.ok(largest < 256 * 1024, `largest piece ${largest} characters`);
    // The whole listing is about 9 MB of text and 200,000 objects: far more than this.
    assert.ok(peak < 48 * 2 ** 20, `heap grew by ${peak} bytes while listing`);
  } finally {
    source.close();
  }
});
