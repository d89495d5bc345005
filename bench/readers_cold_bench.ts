/**
 * Packman's reader, cold: a Fortran file of 10 records of 1.3e6 doubles (104 MB, the
 * perf `readers` cell), dropped from the page cache, then opened and read record by record as
 * the readers workload does, three ways:
 * - plain preads: the open's far marker reads plain preads (each leaves its page cached amid the
 *   cold file) and every record one whole pread, the first too;
 * - engine: the engine's open and reads (lib/io/mapped.ts: marker reads that leave no page cached;
 *   lib/io/file.ts: the first large read starts with 128 KiB);
 * - floor: no marker reads at all, the records read as the engine reads them.
 * The device requests of each (from /sys/block/DEV/stat, when it can be found) are printed once
 * at the end: fewer and larger is what the kernel's readahead gives a read that lets it ramp up.
 *
 * Run: deno bench --allow-all bench/readers_cold_bench.ts (writes 104 MB in a temporary directory
 * under $TMPDIR; on tmpfs nothing is cold and the three are alike)
 * @module
 */
import { nativeBackend } from "../lib/backends/engine.ts";
import { f77 } from "../lib/framings/f77/mod.ts";
import { dropCache } from "../lib/io/cache.ts";
import { FileHandle } from "../lib/io/file.ts";
import { pread } from "../lib/sys/libc.ts";
import { packmanLayout, writePackmanFile } from "../lib/workloads/readers/mod.ts";
import { median } from "../tools/probes/common.ts";

const RECORDS = 10;
const LENGTH = 1_300_000;
const RECORD = LENGTH * 8 + 8;
const dir = Deno.makeTempDirSync({ prefix: "sciobench-readers-bench-" });
globalThis.addEventListener("unload", () => Deno.removeSync(dir, { recursive: true }));
const path = `${dir}/packman.f77`;
const backend = nativeBackend(f77);
writePackmanFile(backend, path, {
  records: RECORDS,
  length: LENGTH,
  seed: 1,
  fileIndex: 0,
  endian: "native",
  backendOptions: { marker: 4 },
});
const buf = new Uint8Array(LENGTH * 8);

/** The block device's stat file of the file's file system, or undefined. */
function deviceStat(): string | undefined {
  try {
    const dev = Deno.statSync(path).dev;
    const link = Deno.realPathSync(`/sys/dev/block/${Math.floor(dev / 256)}:${dev % 256}`);
    return `${link}/stat`;
  } catch {
    return undefined;
  }
}
const statFile = deviceStat();
const readRequests = () =>
  statFile ? Number(Deno.readTextFileSync(statFile).trim().split(/\s+/)[0]) : NaN;
const requests = new Map<string, number[]>();

/** The markers by plain preads, then each record one pread of its payload. */
function plainPreads(): void {
  const f = FileHandle.open(path, "read");
  try {
    const marker = new Uint8Array(8);
    for (let k = 1; k < RECORDS; k++) pread(f.fd, marker, k * RECORD - 4, path);
    for (let k = 0; k < RECORDS; k++) pread(f.fd, buf, k * RECORD + 4, path);
  } finally {
    f.close();
  }
}

/** The engine's open and reads, as a reader process makes them. */
function engine(): void {
  const source = backend.openReader(path, {
    layout: packmanLayout(LENGTH),
    backendOptions: { marker: 4 },
  });
  try {
    for (let k = 0; k < source.frameCount; k++) source.readFrame(k);
  } finally {
    source.close();
  }
}

/** Floor: no marker reads, the records as the engine reads them (the file handle's reads). */
function floor(): void {
  const f = FileHandle.open(path, "read");
  try {
    for (let k = 0; k < RECORDS; k++) f.readInto(buf, k * RECORD + 4);
  } finally {
    f.close();
  }
}

for (
  const [what, read] of [["plain preads", plainPreads], ["engine", engine], [
    "floor",
    floor,
  ]] as const
) {
  Deno.bench(`packman cold 10 x 10.4 MB: ${what}`, {
    group: "packman cold",
    baseline: read === plainPreads,
    n: 8,
    warmup: 1,
  }, (b) => {
    dropCache(path);
    const r0 = readRequests();
    b.start();
    read();
    b.end();
    requests.set(what, [...requests.get(what) ?? [], readRequests() - r0]);
  });
}

globalThis.addEventListener("unload", () => {
  if (!statFile) return;
  for (const [what, counts] of requests) {
    console.log(
      `packman cold ${what}: device read requests, median ${median(counts)} ` +
        `(the device's, other processes' included)`,
    );
  }
});
