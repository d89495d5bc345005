/**
 * The passes over memory on the table's read path, on a 64 MiB file in the page cache
 * read in 448 KiB frames (N = 128^2):
 * - the pread alone into a buffer whose address is 16 bytes past the file offset's place in its
 *   page (as an ordinary ArrayBuffer can be: the kernel's `rep movsb` copy runs at half speed) vs
 *   one at the file offset's page offset (as the engine places its read buffer);
 * - pread + verification (memcmp against the expected frame): what verifying every byte costs;
 * - the byte swap of a frame to native order: through the module's memory (copy in, swap, copy
 *   out) vs in place in a SwapBuffer the frame was read into (one pass);
 * - the raw and netCDF (big-endian, byte-swapped to native) engines' readFrame + verifyFrame, the
 *   table's read phase without the file system's variance.
 *
 *     deno bench -A bench/read_path_bench.ts
 * @module
 */
import { nativeBackend } from "../lib/backends/engine.ts";
import { netcdf } from "../lib/framings/netcdf/mod.ts";
import { raw } from "../lib/framings/raw.ts";
import { FileHandle } from "../lib/io/file.ts";
import { alignedBytes } from "../lib/io/transfer.ts";
import { SwapBuffer, swapInPlace } from "../lib/bytes/byteswap.ts";
import { bytesEqual } from "../lib/sys/libc.ts";
import { verifyFrame } from "../lib/workloads/pattern.ts";
import { TableFrames } from "../lib/workloads/table/mod.ts";

const dir = Deno.makeTempDirSync({ dir: ".", prefix: ".sciobench-bench-" });
globalThis.addEventListener("unload", () => Deno.removeSync(dir, { recursive: true }));
const N = 16384;
const FRAME = 28 * N; // 448 KiB
const FRAMES = 146; // ~64 MiB
const data = new TableFrames(N, 1);

function written(name: string, backend: ReturnType<typeof nativeBackend>): string {
  const path = `${dir}/bench.${name}`;
  const sink = backend.openWriter(path, { create: "truncate" });
  for (let i = 0; i < FRAMES; i++) sink.writeFrame(data.frame(i));
  sink.close();
  Deno.readFileSync(path); // warm: every case reads from the page cache
  return path;
}

const rawBackend = nativeBackend(raw);
const ncBackend = nativeBackend(netcdf);
const rawPath = written("raw", rawBackend);
const ncPath = written("nc", ncBackend);

// ---- pread alone, by buffer address ---------------------------------------------------------
const file = FileHandle.open(rawPath, "read");
const first = rawBackend.openReader(rawPath, { layout: data.layout });
const firstOffset = first.locate!(0)[0]!.offset;
first.close();
const page = alignedBytes(FRAME + 8192, 4096);
const matched = page.subarray(firstOffset % 4096, firstOffset % 4096 + FRAME);
const past16 = page.subarray(firstOffset % 4096 + 16, firstOffset % 4096 + 16 + FRAME);
/** The file's bytes, so each frame is compared with what it holds (memcmp runs to the end). */
const contents = Deno.readFileSync(rawPath);

Deno.bench({
  name: "pread, buffer 16 bytes past the source in its page",
  group: "pread 64 MiB in 448 KiB frames",
  baseline: true,
  fn() {
    for (let i = 0; i < FRAMES; i++) file.readInto(past16, firstOffset + i * FRAME);
  },
});
Deno.bench({
  name: "pread, buffer at the source's page offset",
  group: "pread 64 MiB in 448 KiB frames",
  fn() {
    for (let i = 0; i < FRAMES; i++) file.readInto(matched, firstOffset + i * FRAME);
  },
});
Deno.bench({
  name: "pread + memcmp of every byte (verify)",
  group: "pread 64 MiB in 448 KiB frames",
  fn() {
    for (let i = 0; i < FRAMES; i++) {
      file.readInto(matched, firstOffset + i * FRAME);
      const at = firstOffset + i * FRAME;
      if (!bytesEqual(matched, contents.subarray(at, at + FRAME))) throw new Error("differs");
    }
  },
});

// ---- byte swap of one frame to native order ------------------------------------------------
const swapBuffer = SwapBuffer.create()!;
const inModule = swapBuffer.view(0, FRAME);
const ordinary = new Uint8Array(FRAME);
Deno.bench({
  name: "swapInPlace: copy into the module's memory, swap, copy out",
  group: "byte swap 448 KiB of float32",
  baseline: true,
  fn() {
    swapInPlace(ordinary, 4);
  },
});
Deno.bench({
  name: "SwapBuffer.swap in place, one pass",
  group: "byte swap 448 KiB of float32",
  fn() {
    swapBuffer.swap(inModule, 4);
  },
});

// ---- the engines' readFrame + verifyFrame ---------------------------------------------------
for (
  const [label, backend, path] of [
    ["raw", rawBackend, rawPath],
    ["netcdf (big-endian, swapped)", ncBackend, ncPath],
  ] as const
) {
  const source = backend.openReader(path, { layout: data.layout });
  Deno.bench({
    name: `${label} readFrame`,
    group: `engine readFrame ${label}`,
    baseline: true,
    fn() {
      for (let i = 0; i < FRAMES; i++) source.readFrame(i);
    },
  });
  Deno.bench({
    name: `${label} readFrame + verifyFrame`,
    group: `engine readFrame ${label}`,
    fn() {
      for (let i = 0; i < FRAMES; i++) {
        verifyFrame(path, i, data.frame(i).chunks, source.readFrame(i));
      }
    },
  });
}
