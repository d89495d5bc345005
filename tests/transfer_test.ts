/**
 * `--bs` and `--direct` in the engine (lib/io/transfer.ts): every native framing writes the same
 * bytes with and without them, reads its frames back, and makes only the calls asked: under
 * O_DIRECT the open carries the flag and every offset and length is a multiple of the file
 * system's alignment; with `bs` every call is at most bs bytes and the data calls are exactly bs.
 * @module
 */
import assert from "node:assert/strict";
import { backendByName, FRAMINGS } from "../lib/backends/registry.ts";
import { nativeBackend } from "../lib/backends/engine.ts";
import { checkTransfer } from "../lib/backends/guard.ts";
import { writeFrames } from "../lib/backends/write.ts";
import type { Backend, SinkOptions } from "../lib/backends/backend.ts";
import type { Transfer } from "../lib/io/transfer.ts";
import {
  alignedBytes,
  BlockReader,
  BlockWriter,
  directRefused,
  openForTransfer,
  type TransferFile,
} from "../lib/io/transfer.ts";
import { FileHandle } from "../lib/io/file.ts";
import { directAlignment, O } from "../lib/sys/libc.ts";
import { TableFrames } from "../lib/workloads/table/mod.ts";
import { hdf5 } from "../lib/peers/hdf5/mod.ts";
import { UsageError } from "../lib/core/errors.ts";
import type { RowAudit } from "../lib/sys/audit.ts";
import { commandMissing, observeDuring, REQUIRE_PEERS, runCli, tempDir } from "./_helpers.ts";
import { DIRECT_REFUSED, isRead, parseStrace, straceSciobench } from "./_syscalls.ts";

/** One recorded call on a file. */
interface Call {
  readonly call: "open" | "read" | "write";
  readonly path: string;
  readonly flags: number;
  readonly offset: number;
  readonly bytes: number;
}

/** Records the calls made through lib/sys/libc.ts while `run` runs. */
async function recordCalls(run: () => Promise<void> | void): Promise<Call[]> {
  const calls: Call[] = [];
  const paths = new Map<number, string>();
  await observeDuring({
    open(fd, path, flags) {
      paths.set(fd, path);
      calls.push({ call: "open", path, flags, offset: 0, bytes: 0 });
    },
    read(fd, offset, bytes) {
      calls.push({ call: "read", path: paths.get(fd)!, flags: 0, offset, bytes });
    },
    write(fd, offset, bytes) {
      calls.push({ call: "write", path: paths.get(fd)!, flags: 0, offset, bytes });
    },
  }, run);
  return calls;
}

/** 28 kB frames: several per 64 KiB transfer, and frames across transfers. */
const SMALL = 1000;
/** 168 kB frames of 72 kB and 96 kB chunks: writes and reads larger than 64 KiB. */
const LARGE = 6000;
const FRAMES = 12;

function backend(name: string): Backend {
  return nativeBackend(FRAMINGS.find((f) => f.name === name)!);
}

async function write(b: Backend, path: string, n: number, transfer?: Transfer): Promise<void> {
  const frames = new TableFrames(n, 7);
  const sink: SinkOptions = { create: "truncate", fsync: "end", transfer };
  await writeFrames(b, path, sink, FRAMES, (i) => frames.frame(i));
}

function readAll(b: Backend, path: string, n: number, transfer?: Transfer): Uint8Array[] {
  const frames = new TableFrames(n, 7);
  const source = b.openReader(path, { layout: frames.layout, transfer });
  try {
    assert.equal(source.frameCount, FRAMES);
    const out: Uint8Array[] = [];
    // backwards and then forwards: buffered blocks, jumps and re-reads all happen
    for (const i of [...Array(FRAMES).keys()].reverse().concat([0, 1, 2])) {
      for (const c of source.readFrame(i)) out.push(c.data.slice());
    }
    return out;
  } finally {
    source.close();
  }
}

// the framings whose system calls --bs and --direct shape (a store's members are written whole)
const NAMES = FRAMINGS.filter((f) => f.store === undefined).map((f) => f.name);

const direct = { ignore: DIRECT_REFUSED !== null };

for (const name of NAMES) {
  Deno.test(`${name}: --bs 64k writes the same bytes in 64 KiB calls and reads in 64 KiB calls`, async () => {
    using d = tempDir();
    const b = backend(name);
    const plain = `${d.path}/plain.${name}`;
    const sized = `${d.path}/sized.${name}`;
    await write(b, plain, LARGE);
    const t: Transfer = { bs: 64 << 10, direct: false };
    const wrote = await recordCalls(() => write(b, sized, LARGE, t));
    assert.deepEqual(Deno.readFileSync(sized), Deno.readFileSync(plain));
    const writes = wrote.filter((c) => c.call === "write" && c.path === sized);
    assert.ok(writes.every((c) => c.bytes <= t.bs), `${name}: a write over 64 KiB`);
    const full = writes.filter((c) => c.bytes === t.bs).length;
    assert.ok(full >= Math.floor(Deno.statSync(sized).size / t.bs) - 1, `${name}: ${full} full`);
    let got: Uint8Array[] = [];
    const read = await recordCalls(() => {
      got = readAll(b, sized, LARGE, t);
    });
    assert.deepEqual(got, readAll(b, plain, LARGE));
    const reads = read.filter((c) => c.call === "read" && c.path === sized);
    const size = Deno.statSync(sized).size;
    for (const c of reads) {
      assert.ok(c.bytes === t.bs || c.offset + c.bytes === size, `${name}: read ${c.bytes}`);
    }
  });

  Deno.test(
    `${name}: --direct opens with O_DIRECT, aligned calls only, same bytes`,
    direct,
    async () => {
      using d = tempDir();
      const b = backend(name);
      const plain = `${d.path}/plain.${name}`;
      const direct = `${d.path}/direct.${name}`;
      await write(b, plain, SMALL);
      const align = directAlignment(plain).offset;
      const t: Transfer = { bs: 64 << 10, direct: true };
      const wrote = await recordCalls(() => write(b, direct, SMALL, t));
      const size = Deno.statSync(direct).size;
      assert.deepEqual(Deno.readFileSync(direct), Deno.readFileSync(plain));
      let got: Uint8Array[] = [];
      const read = await recordCalls(() => {
        got = readAll(b, direct, SMALL, t);
      });
      assert.deepEqual(got, readAll(b, plain, SMALL));
      const calls = [...wrote, ...read].filter((c) => c.path === direct);
      const opens = calls.filter((c) => c.call === "open");
      assert.equal(opens.length, 2);
      for (const o of opens) {
        assert.ok((o.flags & O.DIRECT) !== 0, `${name}: open without O_DIRECT`);
      }
      for (
        const c of calls.filter((c) => c.call !== "open")
      ) {
        assert.equal(c.offset % align, 0, `${name}: ${c.call} at ${c.offset}`);
        const eof = c.call === "read" && c.offset + c.bytes === size;
        assert.ok(c.bytes % align === 0 || eof, `${name}: ${c.call} of ${c.bytes} at ${c.offset}`);
        assert.ok(c.bytes <= t.bs);
      }
    },
  );
}

Deno.test(
  "BlockWriter rewrites partial blocks in place under O_DIRECT and cuts the padded tail",
  direct,
  () => {
    using d = tempDir();
    const path = `${d.path}/f`;
    const t = openForTransfer(path, "truncate", { bs: 8192, direct: true });
    const w = new BlockWriter(t, 8192);
    const expect = new Uint8Array(20000);
    const put = (offset: number, bytes: number, value: number) => {
      const data = new Uint8Array(bytes).fill(value);
      w.write(data, offset);
      expect.set(data, offset);
    };
    put(0, 19000, 1);
    w.flush(); // a sync point mid-block: the partial block goes out padded
    put(19000, 1000, 2); // continues it
    put(10, 3, 3); // rewrite inside the first block
    put(4090, 20, 4); // across a block boundary
    put(12000, 5, 5);
    w.finish();
    t.file.close();
    assert.deepEqual(Deno.readFileSync(path), expect);
  },
);

Deno.test(
  "BlockWriter gives the bytes of the writes made in order, for random runs and jumps",
  direct,
  () => {
    using d = tempDir();
    let seed = 12345;
    const rand = (n: number) => {
      seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
      return seed % n;
    };
    for (const [bs, direct] of [[4096, true], [65536, true], [1000, false]] as const) {
      const path = `${d.path}/r${bs}`;
      const t = openForTransfer(path, "truncate", { bs, direct });
      const w = new BlockWriter(t, bs);
      const expect = new Uint8Array(300_000);
      let end = 0;
      const cursors = [0, 150_000];
      for (let k = 0; k < 400; k++) {
        const s = rand(3);
        const bytes = 1 + rand(rand(2) === 0 ? 100 : 20_000);
        const offset = s < 2 ? cursors[s]! : rand(end + 1);
        if (offset + bytes > expect.length) continue;
        const data = new Uint8Array(bytes).fill(1 + rand(250));
        w.write(data, offset);
        expect.set(data, offset);
        if (s < 2) cursors[s] = offset + bytes;
        end = Math.max(end, offset + bytes);
        if (rand(50) === 0) w.flush();
      }
      w.finish();
      t.file.close();
      assert.deepEqual(Deno.readFileSync(path), expect.subarray(0, end), `bs ${bs}`);
    }
  },
);

/** `path` opened with O_DIRECT for 4096-byte blocks (any file system's alignment divides it). */
function blocks4k(path: string): TransferFile {
  return {
    file: FileHandle.open(path, "read", { direct: true }),
    align: 4096,
    memoryAlign: 4096,
    hugePages: false,
  };
}

Deno.test(
  "BlockReader serves small ranges from one transfer and splits large ones",
  direct,
  async () => {
    using d = tempDir();
    const path = `${d.path}/f`;
    const data = new Uint8Array(100_000).map((_, i) => i * 7);
    Deno.writeFileSync(path, data);
    const calls = await recordCalls(() => {
      const t = blocks4k(path);
      const r = new BlockReader(t, 16384);
      assert.deepEqual(r.view(10, 100), data.subarray(10, 110));
      assert.deepEqual(r.view(200, 1000), data.subarray(200, 1200));
      assert.deepEqual(r.view(16000, 50000), data.subarray(16000, 66000));
      assert.deepEqual(r.view(99_990, 100).length, 10);
      assert.deepEqual(r.read(5, 3), data.subarray(5, 8));
      t.file.close();
    });
    const reads = calls.filter((c) => c.call === "read");
    assert.deepEqual(reads.map((c) => c.bytes), [16384, 16384, 16384, 16384, 16384, 1696, 16384]);
    // without read-ahead (--direct alone): only the aligned blocks of each range, bs at most
    const exact = await recordCalls(() => {
      const t = blocks4k(path);
      const r = new BlockReader(t, 16384, false);
      assert.deepEqual(r.view(10, 100), data.subarray(10, 110));
      assert.deepEqual(r.view(100, 1000), data.subarray(100, 1100));
      assert.deepEqual(r.view(5000, 40000), data.subarray(5000, 45000));
      t.file.close();
    });
    const sizes = exact.filter((c) => c.call === "read").map((c) => c.bytes);
    assert.deepEqual(sizes, [4096, 16384, 16384, 8192]);
  },
);

Deno.test("alignedBytes starts on the boundary asked", () => {
  for (const align of [512, 4096]) {
    const b = alignedBytes(10000, align);
    assert.equal(b.length, 10000);
    assert.equal(Number(Deno.UnsafePointer.value(Deno.UnsafePointer.of(b))) % align, 0);
  }
});

Deno.test("peers refuse --direct and --bs with one line", () => {
  assert.throws(
    () => checkTransfer(hdf5, { bs: 4 << 20, direct: true }),
    (e: unknown) =>
      e instanceof UsageError && /--direct: hdf5 is a library peer/.test(e.message) &&
      !e.message.includes("\n"),
  );
  assert.throws(() => checkTransfer(hdf5, { bs: 65536, direct: false }), /--bs: hdf5/);
  checkTransfer(backend("raw"), { bs: 65536, direct: true });
});

Deno.test("the guard refuses --bs to a program peer's table cell before the program runs", async () => {
  const peer = backendByName("python-gsd");
  assert.ok(peer.measureTableCell, "python-gsd measures table cells in its own process");
  const cell = { size: 1 << 20, n: 32, repeat: 0, seed: 1, warmup: false };
  await assert.rejects(
    () => peer.measureTableCell!({ ...cell, transfer: { bs: 65536, direct: false } }),
    (e: unknown) => e instanceof UsageError && /--bs: python-gsd is a program peer/.test(e.message),
  );
});

Deno.test({
  name: "table --direct --bs 64k: strace and the audit trail see O_DIRECT and aligned 64 KiB calls",
  ignore: DIRECT_REFUSED !== null || (commandMissing("strace") !== null && !REQUIRE_PEERS),
  async fn() {
    using scratch = tempDir("sciobench-direct-");
    using trace = tempDir("sciobench-strace-");
    const framings = NAMES.join(",");
    const [out] = await straceSciobench([[
      "table",
      ...["--framing", framings, "--size", "1MiB", "--n", "1000", "--sample", "512KiB"],
      ...["--no-warmup", "--direct", "--bs", "64k", "--dir", scratch.path],
      ...["--format", "json", "--audit"],
    ]], trace.path);
    assert.equal(out!.code, 0, out!.stderr);
    const rows = JSON.parse(out!.stdout).rows as (
      & Record<
        string,
        unknown
      >
      & { audit: RowAudit }
    )[];
    const calls = parseStrace(trace.path, scratch.path);
    assert.deepEqual(rows.map((r) => r.framing), NAMES);
    for (const row of rows) {
      const what = `table ${row.framing}`;
      assert.equal(row.cache, "direct", what);
      assert.equal(row.bs_bytes, 65536, what);
      assert.equal(row.direct, true, what);
      const path = `${scratch.path}/`;
      const files = row.audit.phases.flatMap((p) => p.files).filter((f) =>
        f.path.startsWith(path) && f.path.endsWith(`/table.${row.framing}`)
      );
      assert.ok(files.length > 0, what);
      const file = files[0]!.path;
      for (const f of files.filter((f) => f.reads + f.writes > 0)) {
        assert.match(f.flags, /DIRECT/, `${what}: audit flags ${f.flags}`);
      }
      const mine = calls.filter((c) => c.path === file);
      const opens = mine.filter((c) => c.call === "openat" && c.flags.includes("O_DIRECT"));
      // the write's, the table's first open's, its untimed warm-up opens' and the timed open's
      assert.ok(opens.length >= 3, `${what}: write and read opens with O_DIRECT`);
      assert.ok(!mine.some((c) => c.call === "fadvise64"), `${what}: no cache drop`);
      const io = mine.filter((c) => isRead(c) || c.call === "pwrite64");
      for (const c of io) {
        assert.match(c.flags, /O_DIRECT/, `${what}: ${c.call} on a descriptor without O_DIRECT`);
        assert.equal(c.offset % 512, 0, `${what}: ${c.call} at ${c.offset}`);
        assert.equal(c.count % 512, 0, `${what}: ${c.call} of ${c.count}`);
        assert.ok(c.count <= 65536, `${what}: ${c.call} of ${c.count}`);
      }
      const writes = io.filter((c) => c.call === "pwrite64");
      const reads = io.filter(isRead);
      assert.ok(writes.filter((c) => c.count === 65536).length >= 15, `${what}: 64 KiB writes`);
      // the trail counted the same calls the kernel saw
      const sum = (k: "writes" | "reads") => files.reduce((a, f) => a + f[k], 0);
      assert.equal(sum("writes"), writes.length, `${what}: writes in trail and strace`);
      assert.equal(sum("reads"), reads.length, `${what}: reads in trail and strace`);
      const logged = files.flatMap((f) => f.readLog.filter((_, k) => k % 2 === 1));
      assert.ok(logged.every((n) => n <= 65536), `${what}: trail reads of at most 64 KiB`);
    }
  },
});

Deno.test("table refuses --direct for a peer in one line, exit 2, before writing", async () => {
  using d = tempDir();
  for (const framing of ["raw,hdf5", "python-gsd"]) {
    const r = await runCli([
      "table",
      "--framing",
      framing,
      "--size",
      "1MiB",
      "--direct",
      "--dir",
      d.path,
    ]);
    assert.equal(r.code, 2, r.stderr);
    const lines = r.stderr.trim().split("\n").filter((l) => l.startsWith("sciobench: error"));
    assert.equal(lines.length, 1, r.stderr);
    assert.match(lines[0]!, /--direct: (hdf5|python-gsd) is a (library|program) peer/);
  }
  assert.deepEqual([...Deno.readDirSync(d.path)], []);
});

Deno.test("table --bs 64k rows say bs_bytes and direct; without it bs_bytes is 0", async () => {
  using d = tempDir();
  const run = async (extra: string[]) => {
    const r = await runCli([
      ...["table", "--framing", "raw", "--size", "256KiB", "--n", "1000", "--no-warmup"],
      ...["--dir", d.path, "--format", "json", ...extra],
    ]);
    assert.equal(r.code, 0, r.stderr);
    return JSON.parse(r.stdout).rows[0] as Record<string, unknown>;
  };
  const sized = await run(["--transfer-size", "64k"]);
  assert.equal(sized.bs_bytes, 65536);
  assert.equal(sized.direct, false);
  assert.equal(sized.cache, "cold");
  const plain = await run([]);
  assert.equal(plain.bs_bytes, 0);
  assert.equal(plain.direct, false);
});

Deno.test("a file system that refuses O_DIRECT is named in one line that recommends another --dir", () => {
  const line = directRefused("/mnt/fs/table.raw");
  assert.match(
    line,
    /^--direct: the file system of \/mnt\/fs refuses O_DIRECT \(EINVAL\); give --dir/,
  );
  assert.ok(!line.includes("\n"));
});
