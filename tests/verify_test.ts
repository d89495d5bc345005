import assert from "node:assert/strict";
import { copySwapped, NATIVE_ORDER } from "../lib/bytes/byteswap.ts";
import { VerifyError } from "../lib/core/errors.ts";
import { backendByName } from "../lib/backends/registry.ts";
import type { FrameSource, SourceOptions } from "../lib/backends/backend.ts";
import { chunkBytes } from "../lib/framings/kit.ts";
import { DTYPE_SIZE } from "../lib/framings/types.ts";
import {
  type ExpectedFrames,
  prepareVerified,
  readVerified,
  verifyFrame,
} from "../lib/workloads/pattern.ts";
import { TableFrames } from "../lib/workloads/table/mod.ts";
import type { ByteOrder } from "../lib/bytes/byteswap.ts";
import { auditOf, type AuditPhase, finishAudit, startAudit } from "../lib/sys/audit.ts";
import { clockGettime } from "../lib/sys/libc.ts";
import { measureRead } from "../lib/workloads/read/mod.ts";
import { flipByte, runCli, runSmallCell, tempDir } from "./_helpers.ts";

/** Writes the first `frames` frames of `data` with `backend` to `path` (`endian`: its order). */
function writeTable(
  backend: string,
  path: string,
  frames: number,
  data: TableFrames,
  endian?: ByteOrder,
) {
  const sink = backendByName(backend).openWriter(path, {
    create: "truncate",
    ...(endian ? { endian } : {}),
  });
  for (let i = 0; i < frames; i++) sink.writeFrame(data.frame(i));
  sink.close();
}

/** Flips the bits of byte `offset` of `path` in place (again: back as it was). */

Deno.test("TableFrames.bytesIn: big-endian bytes are the native frame swapped, stamp included", () => {
  const data = new TableFrames(5, 7);
  for (const i of [0, 3, 1, 250, 3]) {
    const big = data.bytesIn(i, "big");
    const chunks = data.frame(i).chunks;
    assert.equal(big.length, chunks.length);
    chunks.forEach((c, k) => {
      const want = new Uint8Array(c.data.byteLength);
      copySwapped(chunkBytes(c), want, DTYPE_SIZE[c.dtype]);
      assert.deepEqual(big[k], want, `frame ${i} chunk ${c.name}`);
    });
    assert.deepEqual(data.bytesIn(i, "little"), chunks.map(chunkBytes));
  }
});

Deno.test("netcdf readFrameStored: the file's big-endian bytes; readFrame still decodes to native", () => {
  using d = tempDir();
  const path = `${d.path}/t.nc`;
  const data = new TableFrames(16, 3);
  writeTable("netcdf", path, 4, data);
  const file = Deno.readFileSync(path);
  for (const options of [{}, { transfer: { bs: 4096, direct: false } }] as SourceOptions[]) {
    const source = backendByName("netcdf").openReader(path, options);
    try {
      for (const i of [2, 0, 3]) {
        const stored = source.readFrameStored!(i);
        const refs = source.locate!(i);
        stored.forEach((s, k) => {
          assert.equal(s.order, "big");
          assert.equal(s.offset, refs[k]!.offset);
          assert.deepEqual(s.data, file.subarray(s.offset, s.offset + s.data.length));
        });
        const decoded = source.readFrame(i);
        const want = data.frame(i).chunks;
        decoded.forEach((c, k) => assert.deepEqual(c.data, chunkBytes(want[k]!)));
        verifyFrame(path, i, want, decoded);
        readVerified(source, i, data);
      }
      assert.throws(() => source.readFrameStored!(4), RangeError);
    } finally {
      source.close();
    }
  }
});

Deno.test("readVerified: every flipped byte of a big-endian netcdf frame fails with its file offset", () => {
  using d = tempDir();
  const path = `${d.path}/t.nc`;
  const data = new TableFrames(4, 11);
  writeTable("netcdf", path, 3, data);
  const source = backendByName("netcdf").openReader(path);
  try {
    const frame = 1;
    for (const ref of source.locate!(frame)) {
      for (let at = 0; at < ref.bytes; at++) {
        flipByte(path, ref.offset + at);
        assert.throws(
          () => readVerified(source, frame, data),
          (e: unknown) => {
            assert.ok(e instanceof VerifyError, String(e));
            assert.ok(
              e.message.includes(
                `frame 1: chunk '${ref.name}' differs from what was written at byte ${at} of the ` +
                  `chunk (file byte ${ref.offset + at}, stored big-endian: read `,
              ),
              e.message,
            );
            return true;
          },
        );
        flipByte(path, ref.offset + at);
      }
    }
    for (let i = 0; i < 3; i++) readVerified(source, i, data);
  } finally {
    source.close();
  }
});

Deno.test("readVerified: a source without readFrameStored is verified through readFrame", () => {
  using d = tempDir();
  const path = `${d.path}/t.raw`;
  const data = new TableFrames(8, 2);
  writeTable("raw", path, 2, data);
  const inner = backendByName("raw").openReader(path);
  const decodedOnly: FrameSource = {
    path,
    framing: "raw",
    frameCount: inner.frameCount,
    warnings: [],
    readFrame: (i) => inner.readFrame(i),
    close: () => inner.close(),
  };
  try {
    readVerified(decodedOnly, 1, data);
    flipByte(path, 16 + 28 * 8 + 9);
    assert.throws(
      () => readVerified(decodedOnly, 1, data),
      /frame 1: chunk 'particles\/position' differs from what was written at byte 9 of the chunk \(read/,
    );
  } finally {
    decodedOnly.close();
  }
});

Deno.test("table --framing netcdf: a byte flipped in the file fails the read with its file offset", async () => {
  using d = tempDir();
  let offset = -1;
  await assert.rejects(
    () =>
      runSmallCell("netcdf", d.path, (path) => {
        const source = backendByName("netcdf").openReader(path);
        offset = source.locate!(3)[1]!.offset + 6;
        source.close();
        flipByte(path, offset);
      }),
    (e: unknown) => {
      assert.ok(e instanceof VerifyError, String(e));
      assert.match(
        e.message,
        new RegExp(
          `frame 3: chunk 'particles/orientation' differs .* at byte 6 of the chunk ` +
            `\\(file byte ${offset}, stored big-endian: read 0x`,
        ),
      );
      return true;
    },
  );
});

Deno.test("read --verify of a netcdf file names the file offset of a flipped byte", async () => {
  using d = tempDir();
  const path = `${d.path}/t.nc`;
  const w = ["write", "--framing", "netcdf", "--n", "16", "--frames", "4", "--seed", "3", path];
  assert.equal((await runCli(w)).code, 0);
  const ok = await runCli(["read", "--verify", "--seed", "3", path]);
  assert.equal(ok.code, 0, ok.stderr);
  const source = backendByName("netcdf").openReader(path);
  const offset = source.locate!(2)[0]!.offset + 100;
  source.close();
  flipByte(path, offset);
  const bad = await runCli(["read", "--verify", "--seed", "3", path]);
  assert.equal(bad.code, 1);
  assert.match(
    bad.stderr,
    new RegExp(`frame 2: chunk 'particles/position' differs .* at byte 100 .*file byte ${offset}`),
  );
});

Deno.test("prepareVerified: the expected bytes in a non-native stored order are made, once; none for native files", () => {
  using d = tempDir();
  const data = new TableFrames(8, 5);
  const asked: string[] = [];
  const counting: ExpectedFrames = {
    frame: (i) => data.frame(i),
    bytesIn: (i, order) => {
      asked.push(`${i}:${order}`);
      return data.bytesIn(i, order);
    },
  };
  const cases: [string, string, ByteOrder | undefined, string[]][] = [
    ["netcdf", "t.nc", undefined, ["0:big"]],
    ["raw", "big.raw", "big", ["0:big"]],
    ["raw", "native.raw", undefined, []],
    ["gsd", "t.gsd", undefined, []],
  ];
  for (const [backend, name, endian, want] of cases) {
    const path = `${d.path}/${name}`;
    writeTable(backend, path, 2, data, endian);
    const source = backendByName(backend).openReader(path, { layout: data.layout });
    try {
      asked.length = 0;
      prepareVerified(source, counting);
      assert.deepEqual(asked, want, `${backend} ${name}`);
      // the bytes made are the ones the verified reads then compare with
      for (const i of [1, 0]) readVerified(source, i, data);
    } finally {
      source.close();
    }
  }
  // a source without readFrameStored compares through readFrame: nothing to make
  const path = `${d.path}/t.nc`;
  const inner = backendByName("netcdf").openReader(path);
  asked.length = 0;
  prepareVerified({
    path,
    framing: "netcdf",
    frameCount: inner.frameCount,
    warnings: [],
    storedOrder: "big",
    readFrame: (i) => inner.readFrame(i),
    close: () => inner.close(),
  }, counting);
  inner.close();
  assert.deepEqual(asked, []);
});

/**
 * Runs `run` (a measurement that returns its audit trail's phases) with every TableFrames's first
 * request for bytes in a non-native order (which builds the swapped copies) timed, and returns
 * those times and the timed phases, CLOCK_MONOTONIC ns.
 */
async function swappedBuilds(
  run: () => Promise<readonly AuditPhase[]>,
): Promise<{ builds: number[]; timed: AuditPhase[] }> {
  const original = TableFrames.prototype.bytesIn;
  const seen = new WeakSet<TableFrames>();
  const builds: number[] = [];
  TableFrames.prototype.bytesIn = function (this: TableFrames, i: number, order: ByteOrder) {
    if (order !== NATIVE_ORDER && !seen.has(this)) {
      seen.add(this);
      builds.push(clockGettime());
    }
    return original.call(this, i, order);
  };
  let phases: readonly AuditPhase[];
  try {
    phases = await run();
  } finally {
    TableFrames.prototype.bytesIn = original;
  }
  return { builds, timed: phases.filter((p) => p.timed) };
}

/** Asserts that each build lies outside every timed phase, and that `phases` were timed. */
function assertBuiltUntimed(
  got: Awaited<ReturnType<typeof swappedBuilds>>,
  phases: readonly string[],
): void {
  assert.ok(got.builds.length > 0, "no swapped expected bytes were made");
  for (const name of phases) assert.ok(got.timed.some((p) => p.name === name), name);
  for (const t of got.builds) {
    for (const p of got.timed) {
      assert.ok(
        t < p.startNs || t > p.endNs,
        `the big-endian expected bytes were made inside the timed '${p.name}' phase`,
      );
    }
  }
}

Deno.test("table --framing netcdf: the big-endian expected bytes are made before the timed reads", async () => {
  using d = tempDir();
  const got = await swappedBuilds(async () => {
    startAudit();
    try {
      await runSmallCell("netcdf", d.path, () => {});
      return finishAudit()?.phases ?? [];
    } finally {
      finishAudit();
    }
  });
  assertBuiltUntimed(got, ["write", "open", "read", "random"]);
});

Deno.test("read --verify of a netcdf file: the big-endian expected bytes are made before the timed reads", async () => {
  using d = tempDir();
  const path = `${d.path}/t.nc`;
  writeTable("netcdf", path, 4, new TableFrames(16, 3));
  const got = await swappedBuilds(async () => {
    const row = await measureRead(path, "netcdf", undefined, {
      seed: 3,
      verify: true,
      sample: Infinity,
    });
    assert.equal(row.frames, 4);
    return auditOf(row)?.phases ?? [];
  });
  assertBuiltUntimed(got, ["open", "read", "random"]);
});
