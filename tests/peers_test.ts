/**
 * Tests of the library peers (lib/peers): round trips through HDF5, netCDF-4, netCDF classic
 * through libnetcdf, and HDF4; interop with each library's own tools (h5dump, ncdump, hdp);
 * typed errors carrying the library's message with handles closed; detection by magic; and
 * the rule that only lib/sys, lib/peers and lib/mpi load shared libraries.
 * @module
 */
import assert from "node:assert/strict";
import { crc32 } from "node:zlib";
import { listDatasets } from "../lib/workloads/blocks.ts";
import { FormatError, IoError } from "../lib/core/errors.ts";
import { netcdf } from "../lib/framings/netcdf/mod.ts";
import { type Frame, matchesMagic } from "../lib/framings/types.ts";
import { MemoryFile } from "../lib/io/memory.ts";
import type { Backend, ReadChunk } from "../lib/backends/backend.ts";
import { loadLibrary } from "../lib/peers/common.ts";
import { hdf4, HDF4_ENV, HDF4_PAIRS, hdf4Libraries } from "../lib/peers/hdf4/mod.ts";
import {
  hdf5,
  HDF5_SONAMES,
  hdf5OpenObjects,
  hdf5SuperblockVersion,
} from "../lib/peers/hdf5/mod.ts";
import { PEERS } from "../lib/peers/mod.ts";
import { backendByName } from "../lib/backends/registry.ts";
import { netcdf4, netcdfLib } from "../lib/peers/netcdf4/mod.ts";
import { commandMissing, peerTest, peerUsable, runCli, tempDir } from "./_helpers.ts";

// ---- data ----------------------------------------------------------------------------------

/** Table-style frames: position N x 3 and orientation N x 4 float32, values exact in float32. */
function tableFrames(n: number, count: number): Frame[] {
  const frames: Frame[] = [];
  for (let f = 0; f < count; f++) {
    const pos = new Float32Array(n * 3).map((_, i) => f * 1000 + i * 0.5);
    const ori = new Float32Array(n * 4).map((_, i) => -(f * 1000 + i) - 0.25);
    frames.push({
      step: 10 * f,
      chunks: [
        { name: "particles/position", dtype: "float32", shape: [n, 3], data: pos },
        { name: "particles/orientation", dtype: "float32", shape: [n, 4], data: ori },
      ],
    });
  }
  return frames;
}

/** IOspeed-style frames: one float64 cube per frame. */
function cubeFrames(side: number, count: number): Frame[] {
  const frames: Frame[] = [];
  for (let f = 0; f < count; f++) {
    const data = new Float64Array(side ** 3).map((_, i) => i + f * 1e6 + 0.125);
    frames.push({
      step: f,
      chunks: [{ name: "data", dtype: "float64", shape: [side, side, side], data }],
    });
  }
  return frames;
}

function write(
  backend: Backend,
  path: string,
  frames: readonly Frame[],
  endian?: "big" | "native" | "little",
  extra?: Record<string, unknown>,
): void {
  const sink = backend.openWriter(path, {
    create: "new",
    endian,
    fsync: "end",
    backendOptions: extra,
  });
  try {
    for (const f of frames) sink.writeFrame(f);
    sink.close();
  } catch (e) {
    sink.abort();
    throw e;
  }
}

function bytes(c: { data: ArrayBufferView }): Uint8Array {
  return new Uint8Array(c.data.buffer, c.data.byteOffset, c.data.byteLength);
}

function assertFramesEqual(got: readonly ReadChunk[], want: Frame, frame: number): void {
  assert.equal(got.length, want.chunks.length, `frame ${frame}: chunk count`);
  want.chunks.forEach((w, k) => {
    const g = got[k]!;
    assert.equal(g.name, w.name, `frame ${frame} chunk ${k}: name`);
    assert.equal(g.dtype, w.dtype, `frame ${frame} chunk ${k}: dtype`);
    assert.deepEqual([...g.shape], [...w.shape], `frame ${frame} chunk ${k}: shape`);
    assert.deepEqual(g.data, bytes(w), `frame ${frame} chunk ${k} '${w.name}': data`);
  });
}

function readBack(backend: Backend, path: string, frames: readonly Frame[]): void {
  // as the commands open it: the registry's backend, behind the engine's frame-range check
  const src = backendByName(backend.name).openReader(path);
  try {
    assert.equal(src.framing, backend.name);
    assert.equal(src.frameCount, frames.length);
    // Out of order, to show random access.
    for (const f of [...frames.keys()].reverse()) {
      assertFramesEqual(src.readFrame(f), frames[f]!, f);
    }
    assert.throws(() => src.readFrame(frames.length), RangeError);
  } finally {
    src.close();
  }
}

/** Every number in `text` (h5dump -y, ncdump and hdp data sections). */
function numbers(text: string): number[] {
  return [...text.matchAll(/-?\d+(?:\.\d+)?(?:e[-+]?\d+)?/gi)].map((m) => Number(m[0]));
}

async function run(cmd: string, args: string[]): Promise<string> {
  const out = await new Deno.Command(cmd, { args, stdout: "piped", stderr: "piped" }).output();
  const text = new TextDecoder().decode(out.stdout);
  assert.equal(
    out.code,
    0,
    `${cmd} ${args.join(" ")} failed: ${new TextDecoder().decode(out.stderr)}`,
  );
  return text;
}

/** The values of a chunk over all frames, as a tool prints them. */
function allValues(frames: readonly Frame[], chunk: number): number[] {
  return frames.flatMap((f) => [...(f.chunks[chunk]!.data as Float32Array)]);
}

function missing(...whys: (string | null)[]): () => string | null {
  return () => whys.find((w) => w !== null) ?? null;
}

const hdf5Missing = () => hdf5.unavailable();
const netcdfMissing = () => netcdf4.unavailable();
const hdf4Missing = () => hdf4.unavailable();

// ---- registration and detection ------------------------------------------------------------

Deno.test("peers: registered in PEERS as peer backends with distinct names", () => {
  const names = PEERS.map((p) => p.name);
  for (const n of ["hdf5", "netcdf4", "netcdf-lib", "hdf4"]) {
    assert.ok(names.includes(n), `${n} registered`);
  }
  assert.equal(new Set(names).size, names.length);
  for (const p of PEERS) {
    const program = p.name.startsWith("python-gsd") || p.name.startsWith("zarr-python") ||
      p.name === "f77-gfortran";
    assert.equal(p.kind, program ? "program" : "peer", p.name);
  }
});

Deno.test("peers: detection by magic splits HDF5 files by superblock version, HDF4 by 0e031301", () => {
  const sig = [0x89, 0x48, 0x44, 0x46, 0x0d, 0x0a, 0x1a, 0x0a];
  const v0 = new Uint8Array(64);
  v0.set(sig);
  const v2 = v0.slice();
  v2[8] = 2;
  assert.equal(hdf5SuperblockVersion(v0), 0);
  assert.ok(hdf5.detect!(v0, 64) && !netcdf4.detect!(v0, 64));
  assert.ok(netcdf4.detect!(v2, 64) && !hdf5.detect!(v2, 64));
  // A user block moves the signature to 512 (or 1024, 2048 ...).
  const ub = new Uint8Array(2048);
  ub.set(sig, 1024);
  assert.equal(hdf5SuperblockVersion(ub), 0);
  assert.ok(hdf5.detect!(ub, ub.length));
  const shifted = new Uint8Array(1024);
  shifted.set(sig, 700); // not at a power-of-two offset: not HDF5
  assert.ok(!hdf5.detect!(shifted, 1024) && !netcdf4.detect!(shifted, 1024));
  assert.ok(matchesMagic(hdf4.magic, new Uint8Array([0x0e, 0x03, 0x13, 0x01, 0])));
  assert.ok(!matchesMagic(hdf4.magic, new Uint8Array([0x0e, 0x03, 0x13, 0x02])));
  assert.ok(
    netcdfLib.magic.length === 0 && netcdfLib.detect === undefined,
    "classic files go to the native netcdf framing",
  );
});

Deno.test("peers: only lib/sys, lib/peers and lib/mpi (the MPI library) load shared libraries", () => {
  const root = new URL("../lib/", import.meta.url).pathname;
  const offenders: string[] = [];
  const walk = (dir: string) => {
    for (const e of Deno.readDirSync(dir)) {
      const p = `${dir}/${e.name}`;
      if (e.isDirectory) walk(p);
      else if (e.name.endsWith(".ts")) {
        const rel = p.slice(root.length).replace(/^\/+/, "");
        const text = Deno.readTextFileSync(p);
        const loads = /Deno\s*\.\s*dlopen\s*\(|\bdlopen(Global|Pinned)\s*\(/.test(text);
        const allowed = ["sys/", "peers/", "mpi/"].some((d) => rel.startsWith(d));
        if (loads && !allowed) offenders.push(rel);
      }
    }
  };
  walk(root.replace(/\/$/, ""));
  assert.deepEqual(offenders, []);
  // And the check itself sees the loaders that exist.
  assert.match(Deno.readTextFileSync(`${root}/peers/hdf5/bindings.ts`), /loadLibrary\(/);
  assert.match(Deno.readTextFileSync(`${root}/peers/common.ts`), /Deno\.dlopen\(/);
  assert.match(Deno.readTextFileSync(`${root}/mpi/library.ts`), /Deno\.dlopen\(/);
});

// ---- discovery -----------------------------------------------------------------------------

Deno.test("peers: library discovery reports sonames tried and the variable to set", () => {
  const r = loadLibrary("Nothing", ["libsciobench-none.so.1"], "SCIOBENCH_TEST_NONE_LIB", {
    nothing: { parameters: [], result: "void" },
  });
  assert.equal(r.ok, false);
  if (!r.ok) {
    assert.match(
      r.reason,
      /^Nothing library not found \(tried libsciobench-none\.so\.1; set SCIOBENCH_TEST_NONE_LIB/,
    );
    assert.ok(!r.reason.includes("\n"), "one line");
  }
});

peerTest("peers: an environment variable finds a library the sonames miss", hdf5Missing, () => {
  const real = `/usr/lib/x86_64-linux-gnu/${HDF5_SONAMES[0]}`;
  const path = exists(real) ? real : HDF5_SONAMES[0]!;
  Deno.env.set("SCIOBENCH_TEST_HDF5_LIB", path);
  try {
    const r = loadLibrary("HDF5", ["libsciobench-none.so.1"], "SCIOBENCH_TEST_HDF5_LIB", {
      H5open: { parameters: [], result: "i32" },
    });
    assert.equal(r.ok, true, r.ok ? "" : r.reason);
    if (r.ok) assert.equal(r.path, path);
  } finally {
    Deno.env.delete("SCIOBENCH_TEST_HDF5_LIB");
  }
});

// ---- HDF5 ----------------------------------------------------------------------------------

peerTest("hdf5: table frames round trip, big-endian and native", hdf5Missing, () => {
  using dir = tempDir();
  const frames = tableFrames(5, 4);
  for (const endian of ["big", "native"] as const) {
    const path = `${dir.path}/t-${endian}.h5`;
    write(hdf5, path, frames, endian);
    readBack(hdf5, path, frames);
    const d = hdf5.openReader(path);
    try {
      const sets = d.describe!().datasets as { name: string; fileType: string; shape: number[] }[];
      assert.deepEqual(
        sets.map((s) => s.name),
        ["particles/position", "particles/orientation"],
        "creation order",
      );
      assert.equal(sets[0]!.fileType, endian === "big" ? "H5T_IEEE_F32BE" : "H5T_IEEE_F32LE");
      assert.deepEqual(sets[1]!.shape, [4, 5, 4]);
    } finally {
      d.close();
    }
  }
  assert.equal(hdf5OpenObjects(), 0, "every HDF5 handle closed");
});

peerTest("hdf5: float64 64^3 datasets round trip", hdf5Missing, () => {
  using dir = tempDir();
  const frames = cubeFrames(64, 3);
  const path = `${dir.path}/cube.h5`;
  write(hdf5, path, frames, "native");
  readBack(hdf5, path, frames);
  assert.ok(Deno.statSync(path).size >= 3 * 64 ** 3 * 8);
});

peerTest(
  "hdf5: h5dump reads the values, types and extendible shape we wrote",
  missing(hdf5Missing(), commandMissing("h5dump")),
  async () => {
    using dir = tempDir();
    const frames = tableFrames(3, 3);
    const path = `${dir.path}/dump.h5`;
    write(hdf5, path, frames, "big");
    const pos = await run("h5dump", ["-y", "-w", "0", "-d", "/particles/position", path]);
    assert.match(pos, /DATATYPE\s+H5T_IEEE_F32BE/);
    assert.match(pos, /DATASPACE\s+SIMPLE \{ \( 3, 3, 3 \) \/ \( H5S_UNLIMITED, 3, 3 \) \}/);
    assert.deepEqual(numbers(pos.slice(pos.indexOf("DATA {"))), allValues(frames, 0));
    const ori = await run("h5dump", ["-y", "-w", "0", "-d", "/particles/orientation", path]);
    assert.deepEqual(numbers(ori.slice(ori.indexOf("DATA {"))), allValues(frames, 1));
    const props = await run("h5dump", ["-p", "-H", "-d", "/particles/position", path]);
    assert.match(props, /CHUNKED \( 1, 3, 3 \)/, "one frame per HDF5 chunk");
  },
);

peerTest(
  "hdf5: a text file is a FormatError with HDF5's reason; no handle left open",
  hdf5Missing,
  () => {
    using dir = tempDir();
    const path = `${dir.path}/text.h5`;
    Deno.writeTextFileSync(path, "not an HDF5 file\n".repeat(100));
    assert.throws(() => hdf5.openReader(path), (e: unknown) => {
      assert.ok(e instanceof FormatError);
      assert.match(
        e.message,
        /^hdf5: .*text\.h5: the HDF5 library cannot open it: H5Fopen: .*signature not found/,
      );
      assert.ok(!e.message.includes("\n"));
      return true;
    });
    assert.throws(
      () => hdf5.openReader(`${dir.path}/absent.h5`),
      (e: unknown) => e instanceof IoError && /no such file/.test(e.message),
    );
    assert.equal(hdf5OpenObjects(), 0);
  },
);

peerTest(
  "hdf5: a failing library call is an IoError with the stack summary; abort removes the file",
  hdf5Missing,
  () => {
    using dir = tempDir();
    const path = `${dir.path}/bad.h5`;
    const sink = hdf5.openWriter(path, { create: "new" });
    // Two chunks with one name: the second H5Dcreate2 fails inside the library.
    const chunk = {
      name: "x",
      dtype: "float32",
      shape: [2, 3],
      data: new Float32Array(6),
    } as const;
    assert.throws(() => sink.writeFrame({ step: 0, chunks: [chunk, chunk] }), (e: unknown) => {
      assert.ok(e instanceof IoError);
      assert.match(
        e.message,
        /^hdf5: .*bad\.h5: H5Dcreate2 'x' failed: H5Dcreate2: unable to create dataset \(.*already exists/,
      );
      assert.ok(!e.message.includes("\n"));
      return true;
    });
    sink.abort();
    assert.ok(!exists(path), "partial file removed");
    assert.equal(hdf5OpenObjects(), 0, "dataset, space, property and file ids all closed");
  },
);

peerTest("hdf5: datasets at the root keep write order, not name order", hdf5Missing, () => {
  using dir = tempDir();
  const frames: Frame[] = [0, 1].map((f) => ({
    step: f,
    chunks: [
      { name: "zeta", dtype: "int32", shape: [3], data: Int32Array.of(f, -f, 7) },
      { name: "alpha", dtype: "uint16", shape: [2, 2], data: Uint16Array.of(1, 2, 3, 65535 - f) },
      { name: "mid", dtype: "float64", shape: [1], data: Float64Array.of(f / 3) },
    ],
  }));
  write(hdf5, `${dir.path}/order.h5`, frames, "big");
  readBack(hdf5, `${dir.path}/order.h5`, frames);
});

Deno.test("peers: a chunk whose data is shorter than its shape never reaches the library", () => {
  using dir = tempDir();
  for (const b of [hdf5, netcdf4, netcdfLib, hdf4]) {
    if (!peerUsable(b.name, b.unavailable())) continue;
    const path = `${dir.path}/short-${b.name}`;
    const sink = b.openWriter(path, { create: "new" });
    const frame: Frame = {
      step: 0,
      chunks: [{ name: "x", dtype: "float64", shape: [4, 4], data: new Float64Array(3) }],
    };
    assert.throws(
      () => sink.writeFrame(frame),
      (e: unknown) =>
        e instanceof IoError && /has 24 bytes; float64\[4x4\] needs 128/.test(e.message),
    );
    sink.abort();
    assert.ok(!exists(path), `${b.name}: partial file removed`);
  }
});

// ---- netCDF --------------------------------------------------------------------------------

peerTest("netcdf4: table frames round trip, big-endian and native", netcdfMissing, () => {
  using dir = tempDir();
  const frames = tableFrames(5, 4);
  for (const endian of ["big", "native"] as const) {
    const path = `${dir.path}/t-${endian}.nc`;
    write(netcdf4, path, frames, endian);
    readBack(netcdf4, path, frames);
    const head = Deno.readFileSync(path).subarray(0, 4096);
    assert.ok(
      netcdf4.detect!(head, head.length) && !hdf5.detect!(head, head.length),
      "superblock v2",
    );
    const d = netcdf4.openReader(path);
    try {
      const facts = d.describe!();
      assert.equal(facts.format, "netCDF-4");
      const vars = facts.variables as { endian: string; dims: string[] }[];
      assert.equal(vars[0]!.endian, endian === "big" ? "big" : "little");
      assert.deepEqual(vars[0]!.dims, ["record", "n5", "n3"]);
    } finally {
      d.close();
    }
  }
});

peerTest("netcdf4: float64 64^3 datasets round trip", netcdfMissing, () => {
  using dir = tempDir();
  const frames = cubeFrames(64, 3);
  write(netcdf4, `${dir.path}/cube.nc`, frames, "big");
  readBack(netcdf4, `${dir.path}/cube.nc`, frames);
});

peerTest(
  "netcdf4: the hdf5 peer reads netCDF-4 variables and skips dimension scales",
  missing(netcdfMissing(), hdf5Missing()),
  () => {
    using dir = tempDir();
    const frames = tableFrames(4, 2);
    const path = `${dir.path}/both.nc`;
    write(netcdf4, path, frames, "big");
    const src = hdf5.openReader(path);
    try {
      assert.equal(src.frameCount, 2);
      const got = src.readFrame(1);
      assert.deepEqual(got.map((c) => c.name), ["particles_position", "particles_orientation"]);
      assert.deepEqual(got[0]!.data, bytes(frames[1]!.chunks[0]!));
      assert.ok((src.describe!().skipped as string[]).some((s) => s.startsWith("record")));
    } finally {
      src.close();
    }
    assert.equal(hdf5OpenObjects(), 0);
  },
);

peerTest(
  "netcdf4: ncdump reads the values, endianness and chunking we wrote",
  missing(netcdfMissing(), commandMissing("ncdump")),
  async () => {
    using dir = tempDir();
    const frames = tableFrames(3, 3);
    const path = `${dir.path}/dump.nc`;
    write(netcdf4, path, frames, "big");
    const text = await run("ncdump", ["-s", path]);
    assert.match(text, /record = UNLIMITED ; \/\/ \(3 currently\)/);
    assert.match(text, /particles_position:chunk_name = "particles\/position"/);
    assert.match(text, /particles_position:_Endianness = "big"/);
    assert.match(text, /particles_position:_ChunkSizes = 1, 3, 3/);
    assert.match(text, /:_Format = "netCDF-4"/);
    const data = text.slice(text.indexOf("data:"));
    const pos = data.slice(
      data.indexOf("particles_position ="),
      data.indexOf(";", data.indexOf("particles_position =")),
    );
    assert.deepEqual(numbers(pos.slice(pos.indexOf("="))), allValues(frames, 0));
    const ori = data.slice(
      data.indexOf("particles_orientation ="),
      data.indexOf(";", data.indexOf("particles_orientation =")),
    );
    assert.deepEqual(numbers(ori.slice(ori.indexOf("="))), allValues(frames, 1));
  },
);

peerTest(
  "netcdf4: reads a file ncgen made (foreign writer)",
  missing(netcdfMissing(), commandMissing("ncgen")),
  async () => {
    using dir = tempDir();
    const cdl = `${dir.path}/f.cdl`;
    Deno.writeTextFileSync(
      cdl,
      "netcdf f {\ndimensions:\n time = UNLIMITED ; n = 2 ;\nvariables:\n double x(time, n) ;\n int fixed(n) ;\n" +
        "data:\n x = 1.5, 2.5, 3.5, 4.5, 5.5, 6.5 ;\n fixed = 7, 8 ;\n}\n",
    );
    await run("ncgen", ["-k", "nc4", "-o", `${dir.path}/f.nc`, cdl]);
    const src = netcdf4.openReader(`${dir.path}/f.nc`);
    try {
      assert.equal(src.frameCount, 3);
      const c = src.readFrame(2);
      assert.equal(c.length, 1, "the fixed variable is not a frame chunk");
      assert.equal(c[0]!.name, "x");
      assert.deepEqual([...new Float64Array(c[0]!.data.slice().buffer)], [5.5, 6.5]);
    } finally {
      src.close();
    }
  },
);

peerTest("netcdf-lib: table frames round trip in CDF-1, CDF-2 and CDF-5", netcdfMissing, () => {
  using dir = tempDir();
  const frames = tableFrames(5, 3);
  for (const variant of [1, 2, 5]) {
    const path = `${dir.path}/t${variant}.nc`;
    write(netcdfLib, path, frames, "big", { variant });
    assert.equal(Deno.readFileSync(path)[3], variant, "version byte");
    readBack(netcdfLib, path, frames);
  }
  assert.throws(
    () => netcdfLib.openWriter(`${dir.path}/x.nc`, { create: "new", endian: "little" }),
    /always big-endian/,
  );
  assert.ok(!exists(`${dir.path}/x.nc`));
});

peerTest("netcdf-lib: float64 64^3 datasets round trip", netcdfMissing, () => {
  using dir = tempDir();
  const frames = cubeFrames(64, 3);
  write(netcdfLib, `${dir.path}/cube.nc`, frames);
  readBack(netcdfLib, `${dir.path}/cube.nc`, frames);
});

peerTest(
  "netcdf-lib: libnetcdf writes the same bytes as the native netcdf framing",
  netcdfMissing,
  () => {
    using dir = tempDir();
    for (const frames of [tableFrames(7, 3), cubeFrames(8, 2)]) {
      const path = `${dir.path}/lib-${frames[0]!.chunks.length}.nc`;
      write(netcdfLib, path, frames);
      const mem = new MemoryFile();
      const w = netcdf.createWriter({});
      mem.apply(w.begin());
      for (const f of frames) mem.apply(w.writeFrame(f));
      mem.apply(w.finish());
      const ours = mem.bytes();
      const lib = Deno.readFileSync(path);
      assert.equal(ours.length, lib.length, "file size");
      assert.deepEqual(ours, lib, "identical files");
      // And each reads the other's file.
      const src = netcdfLib.openReader(path);
      try {
        assertFramesEqual(
          src.readFrame(frames.length - 1),
          frames[frames.length - 1]!,
          frames.length - 1,
        );
      } finally {
        src.close();
      }
    }
  },
);

peerTest(
  "netcdf-lib: ncdump reads the values of a classic file we wrote",
  missing(netcdfMissing(), commandMissing("ncdump")),
  async () => {
    using dir = tempDir();
    const frames = tableFrames(2, 3);
    const path = `${dir.path}/c.nc`;
    write(netcdfLib, path, frames, "big", { variant: 2 });
    const text = await run("ncdump", ["-s", "-v", "particles_orientation", path]);
    assert.match(text, /:_Format = "64-bit offset"/);
    const data = text.slice(text.indexOf("particles_orientation =", text.indexOf("data:")));
    assert.deepEqual(
      numbers(data.slice(data.indexOf("="), data.indexOf(";"))),
      allValues(frames, 1),
    );
  },
);

/** A netCDF-4 file whose record variables hold 4, 2 and 0 of the 4 records (one in a group). */
const SHORT_RECORDS_CDL = `netcdf short {
dimensions:
  time = UNLIMITED ;
  x = 3 ;
variables:
  float a(time, x) ;
  int b(time) ;
  short c(time, x) ;
  double d(time) ;
    d:_FillValue = -1. ;
data:
  a = 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12 ;
  b = 1, 2 ;
group: g {
  variables:
    int e(time) ;
  }
}
`;

peerTest(
  "netcdf4: record variables written for fewer records, or never, list libnetcdf's fill values",
  missing(netcdfMissing(), commandMissing("ncgen"), commandMissing("ncdump")),
  async () => {
    using dir = tempDir();
    const cdl = `${dir.path}/short.cdl`;
    const path = `${dir.path}/short.nc`;
    Deno.writeTextFileSync(cdl, SHORT_RECORDS_CDL);
    await run("ncgen", ["-k", "nc4", "-o", path, cdl]);
    const header = await run("ncdump", ["-h", path]);
    const records = Number(/time = UNLIMITED ; \/\/ \((\d+) currently\)/.exec(header)![1]);
    assert.equal(records, 4);
    // ncdump prints a fill value as _: the variable's _FillValue, else netCDF's default fill
    const fill: Record<string, number> = {
      a: 9.96921e36,
      b: -2147483647,
      c: -32767,
      d: -1,
      e: -2147483647,
    };
    const arrays: Record<
      string,
      (n: number) => Float32Array | Int32Array | Int16Array | Float64Array
    > = {
      a: (n) => new Float32Array(n),
      b: (n) => new Int32Array(n),
      c: (n) => new Int16Array(n),
      d: (n) => new Float64Array(n),
      e: (n) => new Int32Array(n),
    };
    const src = netcdf4.openReader(path);
    try {
      const listed = new Map(listDatasets(src).map((d) => [d.name, d]));
      for (
        const [name, shape] of [["a", [4, 3]], ["b", [4]], ["c", [4, 3]], ["d", [4]], ["g/e", [
          4,
        ]]] as const
      ) {
        const short = name.split("/").pop()!;
        const text = await run("ncdump", [
          "-p",
          "9,17",
          "-v",
          short,
          ...(name.includes("/") ? ["-g", "g"] : []),
          path,
        ]);
        const data = text.slice(text.indexOf(`${short} =`, text.indexOf("data:")));
        const values = data.slice(data.indexOf("=") + 1, data.indexOf(";")).split(",").map((v) =>
          v.trim() === "_" ? fill[short]! : Number(v)
        );
        assert.equal(values.length, shape.reduce((x, y) => x * y, 1), `${name}: ncdump's values`);
        const want = arrays[short]!(values.length);
        want.set(values);
        const got = listed.get(name);
        assert.ok(got, `${name} listed`);
        assert.deepEqual(got.shape, shape, `${name}: shape`);
        assert.equal(got.bytes, want.byteLength, `${name}: bytes`);
        assert.equal(
          got.crc32,
          (crc32(new Uint8Array(want.buffer)) >>> 0).toString(16).padStart(8, "0"),
          `${name}: CRC-32 of ncdump's values`,
        );
      }
    } finally {
      src.close();
    }
  },
);

peerTest("netcdf: a text file is a FormatError carrying nc_strerror's text", netcdfMissing, () => {
  using dir = tempDir();
  const path = `${dir.path}/text.nc`;
  Deno.writeTextFileSync(path, "hello\n".repeat(50));
  for (const b of [netcdf4, netcdfLib]) {
    assert.throws(() => b.openReader(path), (e: unknown) => {
      assert.ok(e instanceof FormatError);
      assert.match(
        e.message,
        new RegExp(
          `^${b.name}: .*text\\.nc: the netCDF library cannot open it: NetCDF: Unknown file format \\(status -51\\)$`,
        ),
      );
      return true;
    });
  }
});

peerTest(
  "netcdf: library write errors are IoErrors with the library text; abort removes the file",
  netcdfMissing,
  () => {
    using dir = tempDir();
    const path = `${dir.path}/i64.nc`;
    const sink = netcdfLib.openWriter(path, { create: "new" });
    const frame: Frame = {
      step: 0,
      chunks: [{ name: "n", dtype: "int64", shape: [2], data: new BigInt64Array(2) }],
    };
    assert.throws(() => sink.writeFrame(frame), (e: unknown) => {
      assert.ok(e instanceof IoError);
      assert.match(
        e.message,
        /^netcdf-lib: .*i64\.nc: nc_def_var 'n' failed: NetCDF: .+ \(status -\d+\)$/,
      );
      return true;
    });
    sink.abort();
    assert.ok(!exists(path));
  },
);

// ---- HDF4 ----------------------------------------------------------------------------------

peerTest("hdf4: table frames round trip, big-endian and little-endian", hdf4Missing, () => {
  using dir = tempDir();
  const frames = tableFrames(5, 4);
  for (const endian of ["big", "native"] as const) {
    const path = `${dir.path}/t-${endian}.hdf`;
    write(hdf4, path, frames, endian);
    const head = Deno.readFileSync(path).subarray(0, 16);
    assert.ok(matchesMagic(hdf4.magic, head));
    readBack(hdf4, path, frames);
    const src = hdf4.openReader(path);
    try {
      const facts = src.describe!();
      assert.equal(facts.datasets, 8);
      assert.equal(facts.chunks_per_frame, 2);
      assert.equal(
        (facts.sds as { endian: string }[])[0]!.endian,
        endian === "big" ? "big" : "little",
      );
    } finally {
      src.close();
    }
  }
});

peerTest(
  "hdf4: IOspeed's 64^3 float64 datasets round trip, one SDS per dataset",
  hdf4Missing,
  () => {
    using dir = tempDir();
    const frames = cubeFrames(64, 3);
    const path = `${dir.path}/speed.hdf`;
    write(hdf4, path, frames, "big");
    readBack(hdf4, path, frames);
    // IOspeed's file for 3 datasets measured 6,295,405 bytes: data plus a few KB of metadata.
    const size = Deno.statSync(path).size;
    assert.ok(size > 3 * 2_097_152 && size < 3 * 2_097_152 + 16_384, `size ${size}`);
  },
);

peerTest(
  "hdf4: hdp lists the data sets and dumps the values we wrote",
  missing(hdf4Missing(), commandMissing("hdp")),
  async () => {
    using dir = tempDir();
    const frames = tableFrames(3, 2);
    const path = `${dir.path}/dump.hdf`;
    write(hdf4, path, frames, "big");
    const header = await run("hdp", ["dumpsds", "-h", path]);
    const names = [...header.matchAll(/Variable Name = (.*)/g)].map((m) => m[1]!.trim());
    assert.deepEqual(names, [
      "particles/position",
      "particles/orientation",
      "particles/position",
      "particles/orientation",
    ]);
    assert.match(header, /Type= 32-bit floating point/);
    // SDS index 2 is frame 1's position, 3 its orientation.
    const pos = await run("hdp", ["dumpsds", "-i", "2", "-d", path]);
    assert.deepEqual(numbers(pos), [...(frames[1]!.chunks[0]!.data as Float32Array)]);
    const ori = await run("hdp", ["dumpsds", "-i", "3", "-d", path]);
    assert.deepEqual(numbers(ori), [...(frames[1]!.chunks[1]!.data as Float32Array)]);
  },
);

peerTest(
  'hdf4: a file of unnamed datasets (IOspeed\'s "DataSet") reads one dataset per frame',
  hdf4Missing,
  () => {
    using dir = tempDir();
    const frames = cubeFrames(4, 5).map((f) => ({
      step: f.step,
      chunks: [{ ...f.chunks[0]!, name: "DataSet" }],
    }));
    const path = `${dir.path}/ds.hdf`;
    write(hdf4, path, frames);
    readBack(hdf4, path, frames);
  },
);

peerTest(
  "hdf4: a text file is a FormatError with HDF4's message; create new refuses an existing file",
  hdf4Missing,
  () => {
    using dir = tempDir();
    const path = `${dir.path}/text.hdf`;
    Deno.writeTextFileSync(path, "plain text\n".repeat(20));
    assert.throws(() => hdf4.openReader(path), (e: unknown) => {
      assert.ok(e instanceof FormatError);
      assert.match(
        e.message,
        /^hdf4: .*text\.hdf: the HDF4 library cannot open it: .+ \(HDF4 error \d+\)$/,
      );
      return true;
    });
    for (const b of [hdf4, hdf5, netcdf4, netcdfLib]) {
      if (!peerUsable(b.name, b.unavailable())) continue;
      assert.throws(
        () => b.openWriter(path, { create: "new" }),
        (e: unknown) => e instanceof IoError && /already exists/.test(e.message),
      );
      assert.equal(
        Deno.readTextFileSync(path),
        "plain text\n".repeat(20),
        `${b.name} left the file alone`,
      );
    }
  },
);

peerTest(
  "peers: HDF4 and netCDF-C work side by side in one process",
  missing(hdf4Missing(), netcdfMissing()),
  () => {
    using dir = tempDir();
    const frames = tableFrames(3, 2);
    write(hdf4, `${dir.path}/a.hdf`, frames);
    write(netcdf4, `${dir.path}/a.nc`, frames);
    write(netcdfLib, `${dir.path}/b.nc`, frames);
    readBack(hdf4, `${dir.path}/a.hdf`, frames);
    readBack(netcdf4, `${dir.path}/a.nc`, frames);
    readBack(netcdfLib, `${dir.path}/b.nc`, frames);
  },
);

// ---- through the CLI ----------------------------------------------------------------------

peerTest(
  "cli: info recognises HDF5, netCDF-4 and HDF4 files by magic and reads them through the library",
  missing(hdf5Missing(), netcdfMissing(), hdf4Missing()),
  async () => {
    using dir = tempDir();
    const frames = tableFrames(4, 2);
    const cases = [[hdf5, "a.h5"], [netcdf4, "b.nc"], [hdf4, "c.hdf"]] as const;
    for (const [b, name] of cases) write(b, `${dir.path}/${name}`, frames, "big");
    for (const [b, name] of cases) {
      const r = await runCli(["info", "--json", `${dir.path}/${name}`]);
      assert.equal(r.code, 0, r.stderr);
      const doc = JSON.parse(r.stdout) as {
        framing: string;
        frames: number;
        chunks: { name: string; bytes: number; offset: number }[];
      };
      assert.equal(doc.framing, b.name);
      assert.equal(doc.frames, 2);
      assert.equal(doc.chunks.length, 4);
      assert.deepEqual(doc.chunks.map((c) => c.bytes), [48, 64, 48, 64]);
      assert.ok(doc.chunks.every((c) => c.offset === -1), "library formats hide offsets");
    }
    const bad = `${dir.path}/bad.h5`;
    const head = new Uint8Array(600).fill(0x78);
    head.set([0x89, 0x48, 0x44, 0x46, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 0]);
    Deno.writeFileSync(bad, head);
    const r = await runCli(["info", bad]);
    assert.equal(r.code, 2);
    assert.match(
      r.stderr,
      /^sciobench: error: hdf5: .*bad\.h5: the HDF5 library cannot open it: H5Fopen: /m,
    );
    assert.ok(!/\n\s+at /.test(r.stderr), "no stack trace");
  },
);

peerTest(
  "cli: records runs the netCDF seed's table with the peers in both byte orders",
  missing(hdf5Missing(), netcdfMissing()),
  async () => {
    using dir = tempDir();
    const r = await runCli([
      "records",
      "--framing",
      "netcdf,netcdf-lib,netcdf4,hdf5",
      "--endian",
      "big,native",
      "--shape",
      "4x6x5",
      "--dir",
      dir.path,
    ]);
    assert.equal(r.code, 0, r.stderr);
    const rows = r.stdout.trim().split("\n").slice(1).map((l) => l.split(","));
    const keys = rows.map((c) => `${c[0]}/${c[1]}/${c[2]}`);
    for (
      const k of ["netcdf-lib/big", "netcdf4/big", "netcdf4/native", "hdf5/big", "hdf5/native"]
    ) {
      assert.ok(
        keys.includes(`${k}/write`) && keys.includes(`${k}/read`),
        `${k} measured: ${keys.join(" ")}`,
      );
    }
    assert.ok(rows.every((c) => c[4] === String(4 * 6 * 5 * 4)), "payload bytes");
  },
);

peerTest("cli: scaling writes IOspeed's HDF section through HDF4", hdf4Missing, async () => {
  using dir = tempDir();
  const r = await runCli([
    "scaling",
    "--framing",
    "hdf4",
    "--datasets",
    "1,2",
    "--shape",
    "8x8x8",
    "--dir",
    dir.path,
  ]);
  assert.equal(r.code, 0, r.stderr);
  const rows = r.stdout.trim().split("\n").slice(1).map((l) => l.split(","));
  assert.deepEqual(rows.map((c) => [c[0], c[1], c[2]]), [["hdf4", "1", "4096"], [
    "hdf4",
    "2",
    "8192",
  ]]);
  const seed = await runCli([
    "scaling",
    "--framing",
    "hdf4",
    "--datasets",
    "2",
    "--shape",
    "8x8x8",
    "--dir",
    dir.path,
    "--format",
    "seed",
  ]);
  assert.equal(seed.code, 0, seed.stderr);
  assert.match(seed.stdout, /-+HDF-+\nWrite {2}2:\*\*\n/);
  assert.match(seed.stderr, /Write {2}2 datasets:\*\*/);
});

function exists(path: string): boolean {
  try {
    Deno.statSync(path);
    return true;
  } catch {
    return false;
  }
}

peerTest(
  "hdf4: the pair loaded is the one SCIOBENCH_HDF4_LIBS names, else the first pair that exists",
  hdf4Missing,
  () => {
    const env = Deno.env.get(HDF4_ENV);
    const loaded = hdf4Libraries();
    assert.ok(loaded);
    if (env) assert.deepEqual([...loaded], env.split(":"), `${HDF4_ENV}=${env} is what loads`);
    else {
      // Present is what the dynamic linker finds: a path or a soname it can open.
      const present = (p: string) => {
        try {
          Deno.dlopen(p, {}).close();
          return true;
        } catch {
          return false;
        }
      };
      const first = HDF4_PAIRS.find(([df, mf]) => present(df) && present(mf))!;
      assert.deepEqual([...loaded], [...first], "the first HDF4 pair present on this system");
    }
  },
);
