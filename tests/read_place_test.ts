/**
 * Where a verified read's bytes sit in memory (for the read's efficiency): the table's expected
 * arrays and, through the page cache, each frame's largest chunk start on a 64-byte cache line,
 * where the verification's memcmp runs at full speed; the chunks keep their typed-array alignment.
 * @module
 */
import assert from "node:assert/strict";
import { FRAMINGS } from "../lib/backends/registry.ts";
import { nativeBackend } from "../lib/backends/engine.ts";
import { writeFrames } from "../lib/backends/write.ts";
import { TableFrames } from "../lib/workloads/table/mod.ts";
import { readVerified, verifyFrame, verifyStoredFrame } from "../lib/workloads/pattern.ts";
import { DTYPE_SIZE } from "../lib/framings/types.ts";
import { DIRECT_REFUSED } from "./_syscalls.ts";
import { tempDir } from "./_helpers.ts";

function address(a: ArrayBufferView): number {
  return Number(Deno.UnsafePointer.value(Deno.UnsafePointer.of(a)));
}

Deno.test("table frames: the expected arrays start on a cache line", () => {
  for (const n of [100, 128 * 128, 1000 * 1000]) {
    for (const c of new TableFrames(n, 7).frame(3).chunks) {
      assert.equal(address(c.data) % 64, 0, `N=${n} ${c.name}`);
    }
  }
});

Deno.test("buffered reads: raw's and gsd's largest chunk on a cache line, every chunk aligned", async () => {
  using d = tempDir();
  for (const n of [128 * 128, 1000]) {
    const frames = new TableFrames(n, 3);
    for (const name of ["raw", "gsd"]) {
      const b = nativeBackend(FRAMINGS.find((f) => f.name === name)!);
      const path = `${d.path}/a.${name}`;
      await writeFrames(b, path, { create: "truncate", fsync: "none" }, 5, (i) => frames.frame(i));
      const source = b.openReader(path, { layout: frames.layout });
      try {
        for (const i of [0, 3, 1, 4]) {
          const got = source.readFrameStored!(i);
          verifyStoredFrame(path, i, frames, got);
          const largest = got.reduce((a, c) => (c.data.length > a.data.length ? c : a));
          assert.equal(address(largest.data) % 64, 0, `${name} N=${n} frame ${i}: largest`);
          for (const c of got) assert.equal(address(c.data) % 4, 0, `${name} frame ${i} ${c.name}`);
        }
      } finally {
        source.close();
      }
    }
  }
});

Deno.test("read buffers: a closed source's buffer serves the next source's reads (no new pages touched an open)", async () => {
  using d = tempDir();
  const n = 256 * 256;
  const frames = new TableFrames(n, 5);
  for (const name of ["raw", "netcdf", "f77"]) {
    const b = nativeBackend(FRAMINGS.find((f) => f.name === name)!);
    const path = `${d.path}/b.${name}`;
    await writeFrames(b, path, { create: "truncate", fsync: "none" }, 3, (i) => frames.frame(i));
    const buffers: ArrayBufferLike[] = [];
    for (let open = 0; open < 3; open++) {
      const source = b.openReader(path, { layout: frames.layout });
      try {
        for (const i of [2, 0, 1]) {
          const got = readVerified(source, i, frames);
          if (i === 1) {
            buffers.push(got.reduce((a, c) => (c.data.length > a.data.length ? c : a)).data.buffer);
          }
        }
      } finally {
        source.close();
      }
    }
    assert.equal(buffers[1], buffers[0], `${name}: the second open reads into the first's buffer`);
    assert.equal(buffers[2], buffers[0], `${name}: and the third`);
  }
});

Deno.test({
  name:
    "direct reads: a frame decoded to native is a view of the block reader's buffer, only a misaligned chunk copied",
  ignore: DIRECT_REFUSED !== null,
  async fn() {
    using d = tempDir();
    const n = 128 * 128;
    const frames = new TableFrames(n, 9);
    const transfer = { bs: 4 << 20, direct: true, readAhead: false };
    for (const name of ["raw", "gsd"]) {
      const b = nativeBackend(FRAMINGS.find((f) => f.name === name)!);
      const path = `${d.path}/c.${name}`;
      await writeFrames(b, path, { create: "truncate", fsync: "none" }, 4, (i) => frames.frame(i));
      const source = b.openReader(path, { layout: frames.layout, transfer });
      try {
        for (const i of [0, 3, 1]) {
          const native = source.readFrame(i);
          verifyFrame(path, i, frames.frame(i).chunks, native);
          for (const c of native) {
            assert.equal(address(c.data) % DTYPE_SIZE[c.dtype], 0, `${name} ${i} ${c.name}`);
          }
          const largest = native.reduce((a, c) => (c.data.length > a.data.length ? c : a));
          const big = native.filter((c) => c.data.length >= 4096).map((c) => c.data.buffer);
          // read again as stored: the same bytes, in the same buffer (no copy of the frame)
          const stored = source.readFrameStored!(i);
          const same = stored.find((c) => c.name === largest.name)!;
          assert.equal(largest.data.buffer, same.data.buffer, `${name} frame ${i}: not copied`);
          assert.ok(big.every((x) => x === same.data.buffer), `${name} frame ${i}: big chunks`);
        }
      } finally {
        source.close();
      }
    }
  },
});
