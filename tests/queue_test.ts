/**
 * The kernel request queues of lib/sys/queue.ts across uses: a queue closed with nothing in
 * flight is kept and handed to the next opener of the same engine and depth (io_destroy, which
 * waits for an RCU grace period, is not paid by every phase), and reads through it as a new one.
 * @module
 */
import assert from "node:assert/strict";
import { type EngineName, openReadQueue, type ReadQueue } from "../lib/sys/queue.ts";
import { close, O, open as openPath } from "../lib/sys/libc.ts";
import { tempDir } from "./_helpers.ts";

function open(engine: EngineName, depth: number, path: string): ReadQueue {
  const q = openReadQueue(engine, depth, path);
  if (typeof q === "string") throw new Error(`${engine}: ${q}`);
  return q;
}

for (const engine of ["libaio", "io_uring"] as EngineName[]) {
  Deno.test(`queue: ${engine} closed is kept for its engine and depth and reads as new`, () => {
    using d = tempDir("sciobench-queue-");
    const path = `${d.path}/bytes`;
    const data = Uint8Array.from({ length: 8192 }, (_, i) => (i * 7) & 255);
    Deno.writeFileSync(path, data);
    const first = open(engine, 4, path);
    first.close();
    const again = open(engine, 4, path);
    assert.equal(again, first, "the same queue again");
    const other = open(engine, 2, path);
    assert.notEqual(other, first, "another depth, another queue");
    other.close();
    const fd = openPath(path, O.RDONLY);
    try {
      const bufs = [new Uint8Array(4096), new Uint8Array(4096)];
      bufs.forEach((b, k) => again.prepare(k, fd, b, 4096 * k));
      assert.equal(again.submit(), 2);
      let got = 0;
      while (got < 2) got += again.reap(1);
      assert.deepEqual(bufs[0], data.subarray(0, 4096));
      assert.deepEqual(bufs[1], data.subarray(4096));
    } finally {
      again.close();
      close(fd);
    }
  });
}
