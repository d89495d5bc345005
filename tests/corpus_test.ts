/**
 * The conformance corpus: files made at test time by the formats' own tools (ncgen in
 * all four kinds with fill on and off, the HDF5 and HDF4 C libraries, python3-gsd, gfortran), plus classic
 * files with data never written and non-NUL header padding. Every file is described and read by
 * sciobench, and the variable list and each variable's CRC-32 must equal what the real library
 * reads (libnetcdf through tests/testdata/corpus/ncread.c, h5ls and h5dump, hdp, python3-gsd, a
 * gfortran reader). Most files go through the library API in-process (fast); one file of each
 * kind also goes through the real `info --json` and `read` commands.
 */
import assert from "node:assert/strict";
import { crc32 } from "node:zlib";
import { detectBackend } from "../lib/backends/registry.ts";
import { listChunks, listVariables } from "../lib/workloads/info/mod.ts";
import { listDatasets, planBlocks, readBlocks, referenceCrcs } from "../lib/workloads/blocks.ts";
import { commandMissing, peerTest, runCli, tempDir } from "./_helpers.ts";

const CORPUS = new URL("./testdata/corpus/", import.meta.url).pathname;

function run(cmd: string, args: string[], cwd?: string): string {
  const out = new Deno.Command(cmd, { args, cwd, stdout: "piped", stderr: "piped" }).outputSync();
  if (!out.success) {
    throw new Error(`${cmd} ${args.join(" ")}: ${new TextDecoder().decode(out.stderr)}`);
  }
  return new TextDecoder().decode(out.stdout);
}

function hex(n: number): string {
  return (n >>> 0).toString(16).padStart(8, "0");
}

function missingTools(): string | null {
  for (const t of ["ncgen", "gcc", "h5dump", "h5ls", "hdp", "gfortran", "/usr/bin/python3"]) {
    const why = commandMissing(t);
    if (why) return why;
  }
  return null;
}

/** What libnetcdf reads: name -> [xtype, bytes, crc native, crc big-endian]. */
function ncReference(reader: string, path: string): Map<string, [number, number, string, string]> {
  const out = new Map<string, [number, number, string, string]>();
  for (const line of run(reader, [path]).trim().split("\n")) {
    const [name, xtype, bytes, native, big] = line.split("\t");
    out.set(name!, [Number(xtype), Number(bytes), native!, big!]);
  }
  return out;
}

/** Opens a file as sciobench does (detection), reads every frame and every block, and returns its listings. */
function readAll(path: string) {
  const source = detectBackend(path).openReader(path);
  try {
    const variables = listVariables(source);
    const datasets = listDatasets(source);
    const chunks = listChunks(source);
    let frameBytes = 0;
    for (let f = 0; f < source.frameCount; f++) {
      for (const c of source.readFrame(f)) frameBytes += c.data.length;
    }
    let blockBytes = 0;
    if (source.frameCount === 0 && source.readRegion) {
      const plan = planBlocks(source, 1);
      const ref = referenceCrcs(source, [...plan.sequential, ...plan.random]);
      blockBytes = readBlocks(source, plan.random, ref);
    }
    return { framing: source.framing, variables, datasets, chunks, frameBytes, blockBytes };
  } finally {
    source.close();
  }
}

/** `info --json` of a file through the real command (a child process). */
async function infoJson(path: string) {
  const r = await runCli(["info", "--json", path]);
  assert.equal(r.code, 0, `${path}: ${r.stderr}`);
  const doc = JSON.parse(r.stdout) as {
    framing: string;
    variables?: { name: string; crc32: string }[];
    datasets?: { name: string; crc32: string | null }[];
  };
  return { framing: doc.framing, variables: doc.variables ?? [], datasets: doc.datasets ?? [] };
}

interface Tally {
  [kind: string]: { files: number; same: number };
}

function count(t: Tally, kind: string, same: boolean): void {
  t[kind] ??= { files: 0, same: 0 };
  t[kind].files++;
  if (same) t[kind].same++;
}

/** The many-variables CDL: 60 variables of every classic type over shared dimensions. */
function manyCdl(): string {
  const types = ["byte", "short", "int", "float", "double"];
  const vars: string[] = [];
  const data: string[] = [];
  for (let i = 0; i < 60; i++) {
    const t = types[i % types.length]!;
    const rec = i % 3 === 0;
    vars.push(`\t${t} v${i}(${rec ? "t, " : ""}n) ;`);
    const n = rec ? 8 : 4;
    data.push(` v${i} = ${Array.from({ length: n }, (_, k) => (i * 7 + k) % 100).join(", ")} ;`);
  }
  return `netcdf many {\ndimensions:\n\tt = UNLIMITED ;\n\tn = 4 ;\nvariables:\n${
    vars.join("\n")
  }\ndata:\n${data.join("\n")}\n}\n`;
}

peerTest(
  "corpus: every file the real tools make and read, sciobench reads with the same variables and data",
  missingTools,
  async () => {
    using tmp = tempDir();
    const dir = tmp.path;
    const tally: Tally = {};
    // Reference readers, built now against the installed libraries.
    const ncread = `${dir}/ncread`;
    run("gcc", [`${CORPUS}ncread.c`, "-lnetcdf", "-lz", "-o", ncread]);

    // ---- netCDF: ncgen in all kinds, fill on and off ----
    Deno.writeTextFileSync(`${dir}/many.cdl`, manyCdl());
    const cdls: [string, number[]][] = [
      [`${CORPUS}basic.cdl`, [1, 2, 5, 3]],
      [`${CORPUS}zero.cdl`, [1, 2, 5, 3]],
      [`${dir}/many.cdl`, [1, 2, 5, 3]],
      [`${CORPUS}ext.cdl`, [5, 3]],
      [`${CORPUS}netcdf4.cdl`, [3]],
    ];
    const ncFiles: string[] = [];
    for (const [cdl, kinds] of cdls) {
      const base = cdl.split("/").pop()!.replace(".cdl", "");
      for (const k of kinds) {
        for (const fill of ["", "-x"]) {
          const out = `${dir}/${base}.k${k}${fill}.nc`;
          run("ncgen", ["-k", String(k), ...(fill ? [fill] : []), "-o", out, cdl]);
          ncFiles.push(out);
        }
      }
    }
    // Classic files libnetcdf reads although they depart from the specification.
    const basic = Deno.readFileSync(`${dir}/basic.k1.nc`);
    const padded = basic.slice();
    const nameAt = new TextDecoder("latin1").decode(padded).indexOf("len\0");
    assert.ok(nameAt > 0);
    padded[nameAt + 3] = 0x20; // "len" + one padding byte, now a space
    Deno.writeFileSync(`${dir}/padding.nc`, padded);
    ncFiles.push(`${dir}/padding.nc`);
    const cut = basic.subarray(0, basic.length - 40); // the last records never written
    Deno.writeFileSync(`${dir}/unwritten.nc`, cut);
    ncFiles.push(`${dir}/unwritten.nc`);
    const zeroCut = Deno.readFileSync(`${dir}/zero.k2-x.nc`);
    Deno.writeFileSync(`${dir}/unwritten_fixed.nc`, zeroCut.subarray(0, zeroCut.length - 30));
    ncFiles.push(`${dir}/unwritten_fixed.nc`);

    for (const path of ncFiles) {
      const ref = ncReference(ncread, path);
      // libnetcdf 4.9.0 leaves one HDF5 datatype id open per user-defined type after nc_close:
      // files with user types are read in a child process (the CLI), so the count of open HDF5
      // ids other tests check stays 0 here.
      const userTypes = path.includes("/netcdf4.");
      const got = userTypes ? await infoJson(path) : readAll(path);
      const netcdf4 = got.framing === "netcdf4";
      const mine = new Map<string, string | null>(
        netcdf4
          ? got.datasets.map((d) => [d.name, d.crc32])
          : got.variables.map((v) => [v.name, v.crc32]),
      );
      assert.deepEqual([...mine.keys()].sort(), [...ref.keys()].sort(), `${path}: variables`);
      for (const [name, [xtype, , native, big]] of ref) {
        if (xtype > 11 || (netcdf4 && xtype === 2)) {
          // Strings, user types and netCDF-4 char are listed, not read as numbers.
          assert.equal(mine.get(name), null, `${path}: ${name} has no CRC`);
          continue;
        }
        assert.equal(mine.get(name), netcdf4 ? native : big, `${path}: CRC-32 of '${name}'`);
      }
      count(tally, netcdf4 ? "netCDF-4" : "netCDF classic", true);
    }

    // ---- HDF5: every layout, through the C library ----
    const mkh5 = `${dir}/mkh5`;
    run("gcc", [
      "-I/usr/include/hdf5/serial",
      `${CORPUS}make_hdf5.c`,
      "-lhdf5_serial",
      "-o",
      mkh5,
    ]);
    const h5 = `${dir}/layouts.h5`;
    run(mkh5, [h5]);
    const h5ls = run("h5ls", ["-r", h5]).trim().split("\n");
    const listed = h5ls.filter((l) => / Dataset /.test(l) && !/same as/.test(l))
      .map((l) => l.split(/\s+/)[0]!);
    const got = readAll(h5);
    assert.deepEqual(got.datasets.map((d) => d.name).sort(), listed.sort(), "HDF5 datasets");
    const byName = new Map(got.datasets.map((d) => [d.name, d]));
    assert.deepEqual(byName.get("/deflate_i32")?.filters, ["shuffle", "deflate"]);
    assert.deepEqual(byName.get("/chunked_f32")?.chunk, [64, 16]);
    assert.equal(byName.get("/compact_i16")?.storage, "compact");
    assert.equal(byName.get("/grp/compound")?.type, "compound");
    assert.ok(got.blockBytes > 0, "HDF5 blocks read");
    for (const d of got.datasets) {
      if (!d.dtype) continue;
      const bin = `${dir}/dump.bin`;
      run("h5dump", ["-d", d.name, "-b", "LE", "-o", bin, h5]);
      const want = d.bytes === 0 ? "00000000" : hex(crc32(Deno.readFileSync(bin)));
      assert.equal(d.crc32, want, `HDF5 ${d.name}: CRC-32 as h5dump -b`);
      count(tally, "HDF5 dataset", true);
    }

    // ---- GSD: chunk names of no schema, by python3-gsd ----
    const gsdFile = `${dir}/names.gsd`;
    run("/usr/bin/python3", [`${CORPUS}make_gsd.py`, gsdFile]);
    const gsdRef = JSON.parse(run("/usr/bin/python3", [
      "-c",
      `import sys, json, zlib, gsd.fl
f = gsd.fl.open(name=sys.argv[1], mode='rb')
out = []
for i in range(f.nframes):
    for n in f.find_matching_chunk_names(''):
        if f.chunk_exists(frame=i, name=n):
            out.append([i, n, format(zlib.crc32(f.read_chunk(frame=i, name=n).tobytes()), '08x')])
print(json.dumps(out))`,
      gsdFile,
    ])) as [number, string, string][];
    const gsdGot = readAll(gsdFile).chunks.map((c) => [c.frame, c.name, c.crc32]);
    const key = (x: (string | number)[]) => x.join(" ");
    assert.deepEqual(gsdGot.map(key).sort(), gsdRef.map(key).sort(), "gsd chunks");
    count(tally, "gsd", true);

    // ---- Fortran: mixed record lengths by gfortran, read back by gfortran ----
    run("gfortran", [`${CORPUS}mixed_records.f90`, "-o", `${dir}/mixed`]);
    run(`${dir}/mixed`, [], dir);
    const f77 = readAll(`${dir}/mixed.f77`).chunks;
    for (let r = 0; r < f77.length; r++) {
      const bin = Deno.readFileSync(`${dir}/record${r + 1}.bin`);
      assert.equal(f77[r]!.crc32, hex(crc32(bin)), `Fortran record ${r + 1}`);
    }
    assert.equal(f77.length, 6, "six records");
    count(tally, "Fortran", true);

    // ---- HDF4: scientific data sets of every number type, named and unnamed, by the C library ----
    const mkh4 = `${dir}/mkh4`;
    run("gcc", [
      "-I/usr/include/hdf",
      `${CORPUS}make_hdf4.c`,
      "-L/usr/lib",
      "-lmfhdf",
      "-ldf",
      "-o",
      mkh4,
    ]);
    const h4 = `${dir}/sds.hdf`;
    run(mkh4, [h4]);
    const sds = readAll(h4).chunks;
    const hdpNames = run("hdp", ["dumpsds", "-h", h4]).split("\n")
      .filter((l) => l.startsWith("Variable Name = ")).map((l) => l.slice(16).trim());
    assert.deepEqual(sds.map((c) => c.name), hdpNames.map((n) => n), "HDF4 data sets (hdp)");
    for (let i = 0; i < sds.length; i++) {
      const bin = `${dir}/sds${i}.bin`;
      run("hdp", ["dumpsds", "-i", String(i), "-d", "-b", "-o", bin, h4]);
      assert.equal(sds[i]!.crc32, hex(crc32(Deno.readFileSync(bin))), `HDF4 SDS ${i}: as hdp -b`);
      count(tally, "HDF4 SDS", true);
    }

    // ---- the real commands on one file of each kind ----
    const oneOfEach = [`${dir}/basic.k3.nc`, h5, `${dir}/padding.nc`, `${dir}/zero.k1.nc`, h4];
    const noUnlimited = `${dir}/netcdf4.k3.nc`; // netCDF-4 without an unlimited dimension
    const units: Record<string, string> = {};
    for (const path of [...oneOfEach, noUnlimited, gsdFile, `${dir}/mixed.f77`]) {
      const info = await runCli(["info", "--json", path]);
      assert.equal(info.code, 0, `${path}: ${info.stderr}`);
      JSON.parse(info.stdout);
      const read = await runCli(["read", "--format", "json", path]);
      assert.equal(read.code, 0, `${path}: ${read.stderr}`);
      const text = read.stdout;
      const row = JSON.parse(text.slice(text.indexOf("{"))) as Record<string, unknown>;
      const rows = (row.rows ?? [row]) as Record<string, unknown>[];
      const r = rows[0]!;
      units[path.split("/").pop()!] = String(r.unit);
      assert.ok(Number(r.read_bytes) > 0 && Number(r.random_bytes) > 0, `${path}: bytes timed`);
      assert.ok(Number(r.read_s) > 0 && Number(r.random_s) > 0, `${path}: phases timed`);
    }
    // Files without frames are timed by chunk or block, the others by frame.
    assert.equal(units["netcdf4.k3.nc"], "block");
    assert.equal(units["layouts.h5"], "chunk+block");
    assert.equal(units["basic.k3.nc"], "frame");
    assert.equal(units["sds.hdf"], "frame");
    const strict = await runCli(["info", "--strict", `${dir}/padding.nc`]);
    assert.equal(strict.code, 2);
    assert.match(strict.stderr, /padding after dimension 3 name is 0x20, not NUL/);
    console.log(`corpus: ${JSON.stringify(tally)}`);
  },
);
