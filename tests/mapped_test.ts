/**
 * lib/io/mapped.ts: the open's scan source gives the same bytes as pread whether the file is
 * cached (pread) or not (a mapping), across its 4 MiB windows, and after release; short reads
 * fail as the file handle's do; windows (in place when near, a copy when far) give the same bytes;
 * a mapped file is leased (no other process opens it for writing meanwhile) and a file open for
 * writing is never mapped.
 */
import assert from "node:assert/strict";
import { ShortReadError } from "../lib/core/errors.ts";
import { dropCache, residency } from "../lib/io/cache.ts";
import { FileHandle } from "../lib/io/file.ts";
import { MappedSource } from "../lib/io/mapped.ts";
import { cachedPages, preadUncached, releaseLease, takeReadLease } from "../lib/sys/libc.ts";
import { commandMissing, observeDuring, peerTest, tempDir } from "./_helpers.ts";

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
    const size = (16 << 20) + 200_000; // five windows
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

for (const cache of ["cold", "warm"] as const) {
  Deno.test(`mapped source (${cache}): windows give the file's bytes, near ones in place, far ones cached`, () => {
    using d = tempDir();
    const path = `${d.path}/window.bin`;
    const size = (16 << 20) + 300_000; // five windows
    const want = pattern(size);
    Deno.writeFileSync(path, want);
    if (cache === "cold") dropCache(path);
    const file = FileHandle.open(path, "read");
    try {
      const src = new MappedSource(file);
      // dense records (near: in place, 64 KiB or more a view) and sparse ones (far: 8 bytes read)
      for (const step of [12_345, 200_003]) {
        for (let off = 0; off + 8 <= size; off += step) {
          const view = src.window(off, 8);
          assert.ok(view !== undefined, `window at ${off}`);
          assert.ok(view.length >= 8, `${off}`);
          const n = Math.min(view.length, 100_000);
          assert.deepEqual(view.subarray(0, n), want.subarray(off, off + n), `${step} ${off}`);
        }
      }
      // ahead: a near window gives the rest of its window, and the file's bytes: of a cold file,
      // the mapping's (4 MiB from a multiple of 4 MiB, and 64 KiB more); of a cached one (read by
      // the scans above), the copy window (4 MiB and 64 KiB from the record's page)
      if (cache === "cold") dropCache(path);
      src.window(3 << 20, 8, true);
      // (in a cached file the first four near windows of a run are preads of 8 bytes)
      for (let k = 1; k <= 4; k++) src.window((3 << 20) + 1000 * k, 8, true);
      const aheadAt = (3 << 20) + 40_000;
      const ahead = src.window(aheadAt, 8, true)!;
      const from = cache === "cold" ? 0 : aheadAt - (aheadAt % 4096);
      assert.equal(ahead.length, from + (4 << 20) + 65536 - aheadAt);
      assert.ok(ahead.every((b, i) => b === want[aheadAt + i]), "the window ahead's bytes");
      // across the first window's end, and up to the end of the file
      const across = src.window((16 << 20) - 5, 10)!;
      assert.deepEqual(across.subarray(0, 10), want.subarray((16 << 20) - 5, (16 << 20) + 5));
      const last = src.window(size - 8, 8)!;
      assert.equal(last.length, 8);
      assert.deepEqual(last, want.subarray(size - 8));
      assert.equal(src.window(size - 4, 8), undefined);
      src.release();
      // after release: never the mapping (at most a copy of cached bytes), and read still works
      const after = src.window(1000, 8);
      if (after !== undefined) assert.deepEqual(after, want.subarray(1000, 1008));
      assert.deepEqual(src.read(100, 16), want.subarray(100, 116));
    } finally {
      file.close();
    }
  });
}

/** True when another process can open `path` for writing now (O_NONBLOCK: a lease refuses at once). */
async function writableByOthers(path: string): Promise<boolean> {
  const code =
    "import os,sys\ntry:\n  os.close(os.open(sys.argv[1], os.O_WRONLY | os.O_NONBLOCK))\n" +
    "except BlockingIOError:\n  sys.exit(3)";
  const out = await new Deno.Command("/usr/bin/python3", { args: ["-c", code, path] }).output();
  return out.code === 0;
}

peerTest(
  "mapped source: while it maps the file no other process can open it for writing or cut it",
  () => commandMissing("/usr/bin/python3"),
  async () => {
    using d = tempDir();
    const path = `${d.path}/leased.bin`;
    const want = pattern(1 << 20);
    Deno.writeFileSync(path, want);
    dropCache(path); // cold: the window is a mapping
    const file = FileHandle.open(path, "read");
    try {
      if (!takeReadLease(file.fd)) {
        console.log("skipped: this file system or user gets no leases (reads are preads there)");
        return;
      }
      releaseLease(file.fd);
      const src = new MappedSource(file);
      src.window(0, 8); // a scan's first read is a pread; the next (cold again) maps the file
      // the pread's readahead may still be in flight (its pages locked, not dropped): drop again
      // until none is cached, or the next read would rightly be a pread of cached pages
      for (let i = 0; i < 100 && dropCache(path).residentAfter > 0; i++) {
        await new Promise((r) => setTimeout(r, 10));
      }
      const view = src.window(4096, 8);
      assert.deepEqual(view?.subarray(0, 8), want.subarray(4096, 4104));
      assert.equal(await writableByOthers(path), false, "a read lease holds writers off");
      src.release();
      assert.equal(await writableByOthers(path), true, "released: writers go on");
    } finally {
      file.close();
    }
  },
);

Deno.test("mapped source: a file open for writing is never mapped (no lease): reads are preads", () => {
  using d = tempDir();
  const path = `${d.path}/written.bin`;
  const want = pattern(1 << 20);
  Deno.writeFileSync(path, want);
  dropCache(path);
  const writer = FileHandle.open(path, "update");
  const file = FileHandle.open(path, "read");
  try {
    const src = new MappedSource(file);
    // no mapping: a far window is a pread of just the bytes asked for, a near one of a cold
    // page nothing (the first read is a pread in any case: drop the page it cached)
    assert.deepEqual(src.window(0, 8), want.subarray(0, 8));
    dropCache(path);
    assert.equal(src.window(8, 8), undefined);
    for (let i = 0; i < 100; i++) {
      assert.deepEqual(src.read(i * 4000, 8), want.subarray(i * 4000, i * 4000 + 8));
    }
    src.release();
  } finally {
    file.close();
    writer.close();
  }
});

Deno.test("mapped source: a cold scan of records over 1 MiB apart preads them, never faults the file in", () => {
  using d = tempDir();
  const path = `${d.path}/sparse.bin`;
  const size = 48 << 20;
  const want = pattern(size);
  Deno.writeFileSync(path, want);
  dropCache(path);
  const file = FileHandle.open(path, "read");
  try {
    const src = new MappedSource(file);
    // the first read is a pread, not a page fault that reads ahead a whole readahead window
    assert.deepEqual(src.window(0, 8)?.subarray(0, 8), want.subarray(0, 8));
    const first = cachedPages(file.fd, 0, size);
    assert.ok(first === undefined || first < 32, `${first} pages cached by the first read`);
    // a Fortran file of 12 MiB records: the markers are all a scan reads
    for (const off of [0, 12 << 20, 24 << 20, 36 << 20, size - 8]) {
      assert.deepEqual(src.window(off, 8)?.subarray(0, 8), want.subarray(off, off + 8), `${off}`);
    }
    src.release();
    // through the mapping every window's readahead would fetch most of the file
    const resident = residency(path);
    assert.ok(resident < 0.5, `${(resident * 100).toFixed(0)}% of the file read by the scan`);
    // and the far markers' pages are not left cached (past the first window's readahead): a
    // cached page amid a cold file splits the readahead of the reads that follow
    if (preadUncached(file.fd, new Uint8Array(8), 0) === undefined) {
      console.log("  (this kernel cannot read uncached, before Linux 6.14: not checked)");
      return;
    }
    for (const off of [24 << 20, 36 << 20, size - 8]) {
      assert.equal(cachedPages(file.fd, off, 8), 0, `the page of the marker at ${off} is cached`);
    }
  } finally {
    file.close();
  }
});

Deno.test("mapped source: a scan of records over 1 MiB apart leaves a cached file's pages cached", () => {
  using d = tempDir();
  const path = `${d.path}/sparse-warm.bin`;
  const size = 48 << 20;
  const want = pattern(size);
  Deno.writeFileSync(path, want);
  const file = FileHandle.open(path, "read");
  try {
    const at = [0, 12 << 20, 24 << 20, 36 << 20, size - 8];
    for (const off of at) file.read(off, 8); // cached, as after a writer or an earlier reader
    const before = at.map((off) => cachedPages(file.fd, off, 8));
    if (before.some((n) => n !== 1)) {
      console.log(`  (cachestat cannot tell here (${before}): not checked)`);
      return;
    }
    const src = new MappedSource(file);
    for (const off of at) {
      assert.deepEqual(src.window(off, 8)?.subarray(0, 8), want.subarray(off, off + 8), `${off}`);
    }
    src.release();
    assert.deepEqual(at.map((off) => cachedPages(file.fd, off, 8)), before, "pages dropped");
  } finally {
    file.close();
  }
});

Deno.test("mapped source: a cached file's far windows are preads into one reused buffer; near ones too until a run of 5 maps it", () => {
  using d = tempDir();
  const path = `${d.path}/cached.bin`;
  const size = 8 << 20;
  const want = pattern(size);
  Deno.writeFileSync(path, want); // cached: just written
  const file = FileHandle.open(path, "read");
  try {
    const src = new MappedSource(file);
    // far (records over 64 KiB apart): each a pread of just the bytes asked for, into the same
    // array (no array made a record), valid until the next call
    const first = src.window(0, 8)!;
    assert.deepEqual(first, want.subarray(0, 8));
    for (let off = 200_000; off + 8 <= 4 << 20; off += 200_000) {
      const view = src.window(off, 8)!;
      assert.equal(view, first, `the window at ${off} is the first's array`);
      assert.deepEqual(view, want.subarray(off, off + 8), `${off}`);
    }
    const longer = src.window(4_400_000, 12)!;
    assert.equal(longer.buffer, first.buffer, "a longer far read: the same buffer");
    assert.deepEqual(longer, want.subarray(4_400_000, 4_400_012));
    // near (a marker detection, a header): preads too, for up to 4 in a row; the 5th maps the
    // file's window and reads in place (64 KiB or more)
    for (let k = 1; k <= 5; k++) {
      const off = 4_400_000 + 1000 * k;
      const view = src.window(off, 8)!;
      assert.deepEqual(view.subarray(0, 8), want.subarray(off, off + 8), `near ${k}`);
      if (k <= 4) assert.equal(view.length, 8, `near window ${k}: a pread`);
      else assert.ok(view.length >= 65536, `near window ${k}: in place (${view.length} bytes)`);
    }
    src.release();
  } finally {
    file.close();
  }
});

Deno.test("mapped source: a cached file's dense records are read from one copy window, a pread of 4 MiB and 64 KiB at a time, reused by the next source", async () => {
  using d = tempDir();
  const path = `${d.path}/dense.bin`;
  const size = (12 << 20) + 5000;
  const want = pattern(size);
  Deno.writeFileSync(path, want); // cached: just written
  const file = FileHandle.open(path, "read");
  const reads: [number, number][] = [];
  try {
    const src = new MappedSource(file);
    let buffer: ArrayBufferLike | undefined;
    await observeDuring({ read: (_fd, offset, bytes) => reads.push([offset, bytes]) }, () => {
      // a scan of records 12,345 bytes apart (as f77's and IEEEIO's opens of 32^2 files scan)
      for (let off = 0, k = 0; off + 8 <= size; off += 12_345, k++) {
        const view = src.window(off, 8, true)!;
        assert.deepEqual(view.subarray(0, 8), want.subarray(off, off + 8), `${off}`);
        if (k >= 5) {
          buffer ??= view.buffer;
          assert.equal(view.buffer, buffer, `the record at ${off}: the same buffer`);
          assert.ok(view.length >= 8 && off + view.length <= size);
          const end = off + view.length;
          assert.deepEqual(view.subarray(-100), want.subarray(end - 100, end), `to ${end}`);
        }
      }
    });
    const window = (4 << 20) + 65536;
    // the first four near records are small preads; then one read a window (the file handle's
    // first read of a file is two: 128 KiB, then the rest), each from the page of the first
    // record past the last window's bytes, the last one to the file's end
    const big: [number, number][] = [];
    for (const [offset, n] of reads.filter(([, n]) => n > 4096)) {
      const last = big.at(-1);
      if (last && last[0] + last[1] === offset && last[1] < window) last[1] += n;
      else big.push([offset, n]);
    }
    assert.equal(reads.filter(([, n]) => n <= 4096).length, 5, JSON.stringify(reads.slice(0, 8)));
    assert.equal(big.length, 3, JSON.stringify(big));
    for (const [k, [offset, n]] of big.entries()) {
      assert.equal(offset % 4096, 0, `window ${k} starts on a page`);
      const lastEnd = k > 0 ? big[k - 1]![0] + big[k - 1]![1] : 0;
      if (k > 0) assert.ok(offset >= lastEnd && offset < lastEnd + 12_345, `window ${k} follows`);
      assert.equal(n, Math.min(window, size - offset), `window ${k}'s length`);
    }
    src.release();
    // the copy window goes from a released source to the next (no new 4 MiB array an open)
    const next = new MappedSource(file);
    let view: Uint8Array | undefined;
    for (let off = 0; off <= 6 * 12_345; off += 12_345) view = next.window(off, 8, true);
    assert.equal(view!.buffer, buffer, "the next source's copy window is the same array");
    next.release();
  } finally {
    file.close();
  }
});

Deno.test("mapped source: the far reads' buffer (its address looked up once) goes from a released source to the next; its uncached reads read the right bytes", () => {
  using d = tempDir();
  const path = `${d.path}/sparse-sources.bin`;
  const size = 8 << 20;
  const want = pattern(size);
  Deno.writeFileSync(path, want);
  const file = FileHandle.open(path, "read");
  try {
    // records over 1 MiB apart: after the first read, reads that drop what they bring in
    // (preadUncached), into the buffer whose address the source was given with it
    const at = [0, 3 << 20, (6 << 20) + 5, size - 8];
    const scan = (src: MappedSource) =>
      at.map((off) => {
        const view = src.window(off, 8)!;
        assert.deepEqual(view, want.subarray(off, off + 8), `${off}`);
        return view.buffer;
      });
    const first = new MappedSource(file);
    const buffers = scan(first);
    assert.ok(buffers.every((b) => b === buffers[0]), "one buffer for every far read");
    first.release();
    const second = new MappedSource(file);
    // a source alive meanwhile has its own buffer
    const third = new MappedSource(file);
    assert.ok(scan(second).every((b) => b === buffers[0]), "the released source's buffer");
    assert.ok(scan(third).every((b) => b !== buffers[0]), "another buffer beside it");
    second.release();
    third.release();
    // a read after the release reads into a buffer of its own, not the next source's
    assert.deepEqual(first.window(size - 16, 8), want.subarray(size - 16, size - 8));
  } finally {
    file.close();
  }
});
