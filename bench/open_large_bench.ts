/**
 * Opening a file of a few large records (the table's files at N = 1024^2 hold 6 records in 84
 * MiB, so an open's fixed costs are most of it): f77's and IEEEIO's open against raw's of
 * table files at N = 512^2 (3 frames: records of 3 and 4 MiB, over 1 MiB apart as at 1024^2),
 * each after a read-through of the file, as the table's warm open comes after one (the CPU's
 * caches then hold none of the open's code or data). Printed first: the calling thread's CPU time
 * of each open in interleaved rounds (robust to the load of a shared machine), and what a record
 * adds beyond raw's open (the table's `open ... per record over raw`). Then, what a record's
 * uncached read of a cached page saves by being given its buffer's address (lib/sys/libc.ts
 * addressOfBuffer) against looking it up at every read.
 *
 * Run: deno bench --allow-all bench/open_large_bench.ts (writes 3 x 21 MiB in a temporary
 * directory)
 * @module
 */
import { nativeBackend } from "../lib/backends/engine.ts";
import { writeFrames } from "../lib/backends/write.ts";
import { f77 } from "../lib/framings/f77/mod.ts";
import { ieeeio } from "../lib/framings/ieeeio/mod.ts";
import { raw } from "../lib/framings/raw.ts";
import { FileHandle } from "../lib/io/file.ts";
import { addressOfBuffer, CLOCK, clockGettime, preadUncached } from "../lib/sys/libc.ts";
import { TableFrames } from "../lib/workloads/table/mod.ts";
import { median } from "../tools/probes/common.ts";

const N = 512 * 512;
const FRAMES = 3;
const dir = Deno.makeTempDirSync({ prefix: "sciobench-open-large-bench-" });
globalThis.addEventListener("unload", () => Deno.removeSync(dir, { recursive: true }));
const frames = new TableFrames(N, 1);
const layout = frames.layout;
const records = FRAMES * layout.length;
const framings = [raw, f77, ieeeio];
const paths = new Map<string, string>();
for (const framing of framings) {
  const path = `${dir}/open.${framing.name}`;
  await writeFrames(
    nativeBackend(framing),
    path,
    { create: "new", fsync: "none" },
    FRAMES,
    (i) => frames.frame(i),
  );
  paths.set(framing.name, path);
}

const through = new Uint8Array(4 << 20);
/** Reads the file through a 4 MiB buffer, as the table's warm cache preparation does. */
function readThrough(path: string): void {
  const file = FileHandle.open(path, "read");
  try {
    for (let at = 0; at < file.size; at += through.length) file.readInto(through, at);
  } finally {
    file.close();
  }
}

const opens = new Map(framings.map((framing) => {
  const backend = nativeBackend(framing);
  const path = paths.get(framing.name)!;
  return [framing.name, () => backend.openReader(path, { layout }).close()];
}));
for (const open of opens.values()) for (let k = 0; k < 30; k++) open(); // compiled, as the table's

// Thread CPU time of each open after a read-through, in rounds (raw, f77, ieeeio; reversed every
// other round), medians and per record beyond raw's open in the same round.
{
  const ROUNDS = 41;
  const cpu = new Map<string, number[]>(framings.map((f) => [f.name, []]));
  for (let r = 0; r < ROUNDS; r++) {
    for (const framing of r % 2 === 0 ? framings : [...framings].reverse()) {
      readThrough(paths.get(framing.name)!);
      const c0 = clockGettime(CLOCK.THREAD_CPUTIME);
      opens.get(framing.name)!();
      cpu.get(framing.name)!.push((clockGettime(CLOCK.THREAD_CPUTIME) - c0) / 1000);
    }
  }
  const rawCpu = cpu.get("raw")!;
  for (const [name, v] of cpu) {
    const over = name === "raw"
      ? ""
      : `; a record over raw's open: ${
        median(v.map((us, i) => (us - rawCpu[i]!) / records)).toFixed(2)
      } us`;
    console.log(
      `${name} 512^2 ${records} records, open after a read-through: ${
        median(v).toFixed(1)
      } us thread CPU${over}`,
    );
  }
}

for (const framing of framings) {
  const group = "open of records over 1 MiB apart, after a read-through";
  Deno.bench(`${framing.name} 512^2: the engine's open`, {
    group,
    baseline: framing === raw,
  }, (b) => {
    readThrough(paths.get(framing.name)!);
    b.start();
    opens.get(framing.name)!();
    b.end();
  });
}

{
  // an 8-byte uncached read at each record boundary of the f77 file, cached (its far markers)
  const path = paths.get("f77")!;
  const file = FileHandle.open(path, "read");
  const at: number[] = [];
  for (let r = 0, end = 0; r < records; r++) {
    end += 8 + [12, 16][r % 2]! * N;
    at.push(end - 4);
  }
  const buf = new Uint8Array(4096);
  const view = buf.subarray(0, 4);
  const address = addressOfBuffer(buf);
  const group = "uncached reads of a record's marker, after a read-through";
  for (const given of [false, true]) {
    Deno.bench(`${records} reads, the buffer's address ${given ? "given" : "looked up each"}`, {
      group,
      baseline: !given,
    }, (b) => {
      readThrough(path);
      b.start();
      for (const offset of at) {
        // looked up: the address found at every read (Deno.UnsafePointer.of)
        const a = given ? address : BigInt(Deno.UnsafePointer.value(Deno.UnsafePointer.of(view)));
        preadUncached(file.fd, view, offset, path, a);
      }
      b.end();
    });
  }
  globalThis.addEventListener("unload", () => file.close());
}
