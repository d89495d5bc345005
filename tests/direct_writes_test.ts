/**
 * `--direct` writes made as fio's (issue 14's write efficiency): every pwrite of the native
 * framings' writers, and every read-back of a partial block, from a page-aligned buffer at a file
 * offset and of a length that are multiples of a page, on a file system that would take 512-byte
 * alignment too (strace observer, the calls' raw arguments). A staging buffer 512 bytes past a
 * page made the table's 1 GiB write run at 0.2-0.35 of fio's on this machine.
 * @module
 */
import assert from "node:assert/strict";
import { commandMissing, REQUIRE_PEERS, tempDir } from "./_helpers.ts";
import { DIRECT_REFUSED, straceSciobench } from "./_syscalls.ts";

const NO_STRACE = DIRECT_REFUSED !== null || (commandMissing("strace") !== null && !REQUIRE_PEERS);
const PAGE = 4096;

/** A write-side call on a table file: pwrite64, or pread64 on a descriptor opened for writing. */
interface RawCall {
  readonly call: string;
  readonly path: string;
  readonly buffer: bigint;
  readonly count: number;
  readonly offset: number;
}

/** `openat(...) = FD</path>` with strace -y, and a raw call `pwrite64(0x16, 0x7f.., 0x400000, 0x0) = 0x..`. */
const OPEN = /^(\d+\.\d+) openat\(.*?, ([A-Z_|]+)(?:, \w+)?\) = (\d+)<([^>]*)>/;
const RAW =
  /^(\d+\.\d+) (pwrite64|pread64)\((0x[0-9a-f]+|\d+), (0x[0-9a-f]+|0), (0x[0-9a-f]+|0), (0x[0-9a-f]+|0)\) = (0x[0-9a-f]+|\d+)/;

/**
 * The pwrite64 calls, and the pread64 calls on descriptors opened O_RDWR, on files under `under`
 * from strace's per-thread files traced with `-e raw=pwrite64,pread64`, in time order.
 */
function writeSideCalls(traceDir: string, under: string): RawCall[] {
  const lines: { at: number; line: string }[] = [];
  for (const entry of Deno.readDirSync(traceDir)) {
    for (const line of Deno.readTextFileSync(`${traceDir}/${entry.name}`).split("\n")) {
      const at = Number(line.slice(0, line.indexOf(" ")));
      if (OPEN.test(line) || RAW.test(line)) lines.push({ at, line });
    }
  }
  lines.sort((a, b) => a.at - b.at);
  const open = new Map<number, { path: string; flags: string }>();
  const calls: RawCall[] = [];
  for (const { line } of lines) {
    const o = OPEN.exec(line);
    if (o) {
      open.set(Number(o[3]), { path: o[4]!, flags: o[2]! });
      continue;
    }
    const [, , call, fd, buf, count, offset] = RAW.exec(line)!;
    const f = open.get(Number(fd));
    if (f === undefined || !f.path.startsWith(under)) continue;
    if (call === "pread64" && !f.flags.includes("O_RDWR")) continue;
    assert.match(f.flags, /O_DIRECT/, `${call} on ${f.path} without O_DIRECT`);
    calls.push({
      call: call!,
      path: f.path,
      buffer: BigInt(buf!),
      count: Number(count),
      offset: Number(offset),
    });
  }
  return calls;
}

Deno.test({
  name: "table --direct: writes from page-aligned buffers at page offsets and lengths (strace)",
  ignore: NO_STRACE,
  async fn() {
    using scratch = tempDir("sciobench-dwrites-");
    using trace = tempDir("sciobench-strace-");
    const [out] = await straceSciobench(
      [[
        ...["table", "--framing", "raw,gsd", "--size", "16MiB", "--n", "1000"],
        ...["--sample", "1MiB", "--no-warmup", "--direct", "--dir", scratch.path],
        ...["--format", "json"],
      ]],
      trace.path,
      {},
      ["-e", "raw=pwrite64,pread64"],
    );
    assert.equal(out!.code, 0, out!.stderr);
    const calls = writeSideCalls(trace.path, scratch.path);
    for (const name of ["raw", "gsd"]) {
      const mine = calls.filter((c) => c.path.endsWith(`/table.${name}`));
      const writes = mine.filter((c) => c.call === "pwrite64");
      // the default --direct transfer: 4 MiB
      assert.ok(writes.some((c) => c.count === 4 << 20), `${name}: no 4 MiB pwrite`);
      // gsd's index outgrows its place (300 frames): copied, read back through the writer
      if (name === "gsd") {
        assert.ok(mine.some((c) => c.call === "pread64"), `${name}: no read-back`);
      }
      for (const c of mine) {
        const what = `${name}: ${c.call} of ${c.count} at ${c.offset} from 0x${
          c.buffer.toString(16)
        }`;
        assert.equal(Number(c.buffer % BigInt(PAGE)), 0, `${what}: buffer off a page`);
        assert.equal(c.offset % PAGE, 0, `${what}: offset off a page`);
        assert.equal(c.count % PAGE, 0, `${what}: length no multiple of a page`);
      }
    }
  },
});
