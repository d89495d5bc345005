/**
 * FFI overhead per call: trivial calls into libc (through lib/sys/libc.ts), libnetcdf, HDF5 and
 * HDF4 (through lib/peers), next to a JavaScript-only baseline; and the per-frame cost of
 * reading one small table frame (100 particles) through each peer library against the same
 * frame read through the native engine. Peers that are not installed are skipped.
 *
 *     deno bench --allow-all bench/ffi_bench.ts
 * @module
 */
import type { Frame } from "../lib/framings/types.ts";
import { backendByName } from "../lib/backends/registry.ts";
import type { Backend, FrameSource } from "../lib/backends/backend.ts";
import { hdf4, hdf4ErrorValueCall } from "../lib/peers/hdf4/mod.ts";
import { hdf5, hdf5LibversionCall } from "../lib/peers/hdf5/mod.ts";
import { netcdf4, netcdfLib, netcdfLibversCall } from "../lib/peers/netcdf4/mod.ts";
import { beginPhase, endPhase, finishAudit, startAudit } from "../lib/sys/audit.ts";
import { bytesEqual, clockGettime, close, O, open, pread, times } from "../lib/sys/libc.ts";

// ---- trivial calls ---------------------------------------------------------------------------

const a = new Uint8Array(16);
const b = new Uint8Array(16);
let sink = 0;

Deno.bench("JS baseline: performance.now()", { group: "call", baseline: true }, () => {
  sink += performance.now();
});

Deno.bench("libc memcmp 16 B (bytesEqual: i32 result, fast path)", { group: "call" }, () => {
  sink += bytesEqual(a, b) ? 1 : 0;
});

Deno.bench("libc clock_gettime (vDSO, buffer out-param)", { group: "call" }, () => {
  sink += clockGettime();
});

Deno.bench("libc times (system call, i64 result)", { group: "call" }, () => {
  sink += times().user;
});

Deno.bench("netCDF nc_inq_libvers (pointer result)", {
  group: "call",
  ignore: netcdf4.unavailable() !== null,
}, () => {
  sink += netcdfLibversCall() === null ? 0 : 1;
});

Deno.bench("HDF5 H5get_libversion (3 buffers, i32 result)", {
  group: "call",
  ignore: hdf5.unavailable() !== null,
}, () => {
  sink += hdf5LibversionCall();
});

Deno.bench("HDF4 HEvalue (i32 argument, i16 result)", {
  group: "call",
  ignore: hdf4.unavailable() !== null,
}, () => {
  sink += hdf4ErrorValueCall();
});

// ---- one small frame read ----------------------------------------------------------------

const N = 100;
const dir = Deno.makeTempDirSync({ prefix: "sciobench-ffi-bench-" });

function tableFrames(count: number): Frame[] {
  return Array.from({ length: count }, (_, f) => ({
    step: 10 * f,
    chunks: [
      {
        name: "particles/position",
        dtype: "float32",
        shape: [N, 3],
        data: new Float32Array(N * 3).fill(f),
      },
      {
        name: "particles/orientation",
        dtype: "float32",
        shape: [N, 4],
        data: new Float32Array(N * 4).fill(-f),
      },
    ],
  }));
}

/** Writes 10 frames with `backend` and opens the file for reading, or null when unavailable. */
function prepared(backend: Backend, endian: "big" | "native"): FrameSource | null {
  if (backend.unavailable() !== null) return null;
  const path = `${dir}/${backend.name}-${endian}`;
  const w = backend.openWriter(path, { create: "truncate", endian, fsync: "none" });
  for (const f of tableFrames(10)) w.writeFrame(f);
  w.close();
  return backend.openReader(path);
}

function nativeBackend(name: string): Backend | null {
  try {
    return backendByName(name);
  } catch {
    return null;
  }
}

const readers: [string, FrameSource | null, boolean][] = [];
const raw = nativeBackend("raw");
const native = nativeBackend("netcdf");
readers.push(["raw (native engine)", raw ? prepared(raw, "native") : null, true]);
readers.push([
  "netcdf (native engine, big-endian)",
  native ? prepared(native, "big") : null,
  false,
]);
readers.push(["netcdf-lib (libnetcdf, classic)", prepared(netcdfLib, "big"), false]);
readers.push(["netcdf4 (libnetcdf, native)", prepared(netcdf4, "native"), false]);
readers.push(["hdf5 (native)", prepared(hdf5, "native"), false]);
readers.push(["hdf5 (big-endian)", prepared(hdf5, "big"), false]);
readers.push(["hdf4 (little-endian)", prepared(hdf4, "native"), false]);

for (const [label, src, baseline] of readers) {
  let frame = 0;
  Deno.bench(`read one 100-particle frame: ${label}`, {
    group: "frame",
    baseline,
    ignore: src === null,
  }, () => {
    const chunks = src!.readFrame(frame);
    sink += chunks.length;
    frame = (frame + 1) % src!.frameCount;
  });
}

globalThis.addEventListener("unload", () => {
  for (const [, src] of readers) src?.close();
  Deno.removeSync(dir, { recursive: true });
  if (sink === 0.5) console.log(sink);
});

// ---- the audit trail's cost per pread ---------------------------------------------------------
// 4096 preads of 4 KiB from a cached file, with and without a row's audit trail recording
// (lib/sys/audit.ts: a map lookup and a few additions per call; starting and finishing the trail,
// two /proc/self/io reads, are inside the audited iteration).
const auditDir = Deno.makeTempDirSync({ dir: ".", prefix: ".sciobench-bench-" });
globalThis.addEventListener("unload", () => Deno.removeSync(auditDir, { recursive: true }));
const auditPath = `${auditDir}/audit.bin`;
Deno.writeFileSync(auditPath, new Uint8Array(4096 * 4096));
const block = new Uint8Array(4096);
const preads = () => {
  const fd = open(auditPath, O.RDONLY);
  for (let i = 0; i < 4096; i++) sink += pread(fd, block, i * 4096, auditPath);
  close(fd, auditPath);
};
Deno.bench("4096 x pread 4 KiB, cached, no audit trail", { group: "audit", baseline: true }, () => {
  preads();
});
Deno.bench("4096 x pread 4 KiB, cached, audit trail recording", { group: "audit" }, () => {
  startAudit();
  beginPhase("read");
  preads();
  endPhase();
  sink += finishAudit()!.phases.length;
});
