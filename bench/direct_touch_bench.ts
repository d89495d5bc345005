/**
 * What touching a frame costs the O_DIRECT read after it, and gsd's native decode against raw's
 * under `read --direct`: a 448 KiB O_DIRECT pread into a huge-page buffer when nothing read the
 * frame before it, against when the frame before was copied out (what a decoder that copies its
 * frames adds to the next read); and a `read --direct` readFrame of raw and of gsd, whose 8-byte
 * step chunk sits 4 bytes off alignment (a decoder that copied the whole frame for that one chunk
 * would pay the copy every frame). Each case reads the next 448 KiB frame of a 64 MiB raw file
 * (N = 128^2), in 2 MiB transparent huge pages.
 *
 *     deno bench -A bench/direct_touch_bench.ts
 * @module
 */
import { nativeBackend } from "../lib/backends/engine.ts";
import { FRAMINGS } from "../lib/backends/registry.ts";
import { FileHandle } from "../lib/io/file.ts";
import { alignedBytes, probeDirect, type Transfer } from "../lib/io/transfer.ts";
import { TableFrames } from "../lib/workloads/table/mod.ts";
import { UsageError } from "../lib/core/errors.ts";

const FRAME = 28 * 128 * 128;
const FILE_BYTES = 64 << 20;
const dir = Deno.makeTempDirSync({ dir: ".", prefix: ".sciobench-bench-" });
globalThis.addEventListener("unload", () => Deno.removeSync(dir, { recursive: true }));

let direct = true;
try {
  probeDirect(dir, 4 << 20);
} catch (e) {
  if (!(e instanceof UsageError)) throw e;
  console.error(`direct_touch_bench: skipped, ${e.message}`);
  direct = false;
}

const data = new TableFrames(128 * 128, 1);
const frames = Math.floor(FILE_BYTES / FRAME);
const paths: Record<string, string> = {};
for (const name of ["raw", "gsd"]) {
  const backend = nativeBackend(FRAMINGS.find((f) => f.name === name)!);
  const path = `${dir}/touch.${name}`;
  const sink = backend.openWriter(path, { create: "truncate" });
  for (let i = 0; i < frames; i++) sink.writeFrame(data.frame(i));
  sink.close();
  paths[name] = path;
}

if (direct) {
  const file = FileHandle.open(paths.raw!, "read", { direct: true });
  const buf = alignedBytes(4 << 20, 4096, true).subarray(0, FRAME);
  const out = new Uint8Array(FRAME);
  let k = 0;
  const next = () => {
    const offset = 4096 + (k++ % (frames - 1)) * FRAME;
    return file.preadOnce(buf, offset);
  };
  Deno.bench({
    name: "O_DIRECT 448 KiB pread, the frame before untouched",
    group: "touch",
    baseline: true,
    fn: () => {
      next();
    },
  });
  Deno.bench({
    name: "O_DIRECT 448 KiB pread, the frame before copied out",
    group: "touch",
    fn: () => {
      next();
      out.set(buf);
    },
  });

  const transfer: Transfer = { bs: 4 << 20, direct: true, readAhead: false };
  for (const name of ["raw", "gsd"]) {
    const source = nativeBackend(FRAMINGS.find((f) => f.name === name)!)
      .openReader(paths[name]!, { layout: data.layout, transfer });
    let i = 0;
    Deno.bench({
      name: `read --direct ${name}: readFrame (native), 448 KiB`,
      group: "decode",
      baseline: name === "raw",
      fn: () => {
        source.readFrame(i++ % frames);
      },
    });
  }
}
