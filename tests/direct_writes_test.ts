/**
 * `--direct` writes made as fio's (for the write's efficiency): every pwrite of the native
 * framings' writers, and every read-back of a partial block, from a page-aligned buffer at a file
 * offset and of a length that are multiples of a page, on a file system that would take 512-byte
 * alignment too (strace observer, the calls' raw arguments). A staging buffer 512 bytes past a
 * page splits each call's pages between two and cuts the write's rate (docs/measurement.md, "Transfer size and direct I/O").
 * @module
 */
import assert from "node:assert/strict";
import { commandMissing, REQUIRE_PEERS, tempDir } from "./_helpers.ts";
import { DIRECT_REFUSED, type RawIoCall, rawIoCalls, straceSciobench } from "./_syscalls.ts";

const NO_STRACE = DIRECT_REFUSED !== null || (commandMissing("strace") !== null && !REQUIRE_PEERS);
const PAGE = 4096;

/** The write side of {@link rawIoCalls}: pwrite64, and pread64 on descriptors opened O_RDWR. */
function writeSideCalls(traceDir: string, under: string): RawIoCall[] {
  const calls = rawIoCalls(traceDir, under)
    .filter((c) => c.call === "pwrite64" || c.flags.includes("O_RDWR"));
  for (const c of calls) {
    assert.match(c.flags, /O_DIRECT/, `${c.call} on ${c.path} without O_DIRECT`);
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
