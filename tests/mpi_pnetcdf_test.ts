/**
 * The `pnetcdf` backend, 4 ranks. Under Open MPI (`mpirun.openmpi`), which Debian's PnetCDF is
 * built for: shared files (MPI_COMM_WORLD) and files per rank (MPI_COMM_SELF), collective or
 * independent puts, CDF-1, CDF-2 and CDF-5, are byte for byte what the native `netcdf` framing
 * (and, per rank, the serial `netcdf-lib` peer) writes for the same frames, and ncdump reads
 * them; table and records run, verify and clean up, rows saying the layout, collective or not,
 * and PnetCDF's version; the durable point ncmpi_sync is in the audit trail; a rank whose
 * PnetCDF call fails stops all four with the library's own text and no file left. Under MPICH
 * (`mpiexec.mpich`): pnetcdf is skipped in one line saying the library is built for Open MPI.
 * Outside MPI, pnetcdf and netcdf4-par are refused in one line and listed as unavailable.
 * @module
 */
import assert from "node:assert/strict";
import { peerTest, tempDir } from "./_helpers.ts";
import { libraryFile, linkedMpi, neededLibraries } from "../lib/peers/mpi_linked.ts";
import {
  assertBuiltForOpenMpi,
  assertFailingRankStopsAll,
  assertListedUnavailable,
  assertOneSyncEach,
  assertRecordsIndependent,
  assertRefusedOutsideMpi,
  haveCommand,
  type JsonDoc,
  leftovers,
  mpiTest,
  mpiTestUnder,
  ncdump,
  type Row,
  runMpi,
  runMpiJson,
  sameBytes,
  SMALL,
} from "./_mpi.ts";

const PROBE = new URL("./_mpi_pnetcdf_probe.ts", import.meta.url).pathname;

/** The probe's configurations (see tests/_mpi_pnetcdf_probe.ts). */
const CONFIGS = [
  "shared:on:2:float32:6x10x100",
  "shared:off:5:float64:3x100x200",
  "per-rank:on:1:int16:5x7x3",
  "per-rank:off:2:float32:3x100x200",
  "frames:shared:on:2",
  "frames:shared:off:1",
  "frames:per-rank:on:5",
];

/** The copies each configuration leaves: [pnetcdf's, the files it must equal]. */
function copies(tag: number, config: string): [string, string[]][] {
  const ranks = ["r0", "r1", "r2", "r3"];
  if (config.startsWith("frames:shared")) return [[`${tag}.pnetcdf`, [`${tag}.netcdf`]]];
  if (config.startsWith("frames:")) {
    return ranks.map((r) => [`${tag}.${r}.pnetcdf`, [`${tag}.${r}.netcdf`]]);
  }
  if (config.startsWith("shared")) return [[`${tag}.pnetcdf`, [`${tag}.netcdf`]]];
  return ranks.map((
    r,
  ) => [`${tag}.pnetcdf.${r}`, [`${tag}.netcdf.${r}`, `${tag}.netcdf-lib.${r}`]]);
}

mpiTest(
  "pnetcdf: shared and per-rank files, collective or not, CDF-1/2/5, are netcdf's and netcdf-lib's byte for byte; ncdump reads them",
  async (launcher) => {
    if (launcher.name === "mpich") {
      return await assertBuiltForOpenMpi(launcher, "pnetcdf", "libpnetcdf");
    }
    using tmp = tempDir();
    const r = await runMpi(launcher, [tmp.path, CONFIGS.join(",")], { script: PROBE });
    assert.equal(r.code, 0, r.stderr);
    for (const [tag, config] of CONFIGS.entries()) {
      for (const [mine, others] of copies(tag, config)) {
        const got = Deno.readFileSync(`${tmp.path}/${mine}`);
        assert.ok(got.length > 100, `${config}: ${mine} holds records`);
        for (const other of others) {
          sameBytes(
            got,
            Deno.readFileSync(`${tmp.path}/${other}`),
            `${config}: ${mine} is ${other}`,
          );
        }
      }
    }
    if (haveCommand("ncdump")) {
      const shared = ncdump(`${tmp.path}/4.pnetcdf`);
      assert.match(shared, /record = UNLIMITED ; \/\/ \(12 currently\)/);
      assert.match(shared, /particles_position:chunk_name = "particles\/position"/);
      // frame 11 (rank 3's last) is there, in native values: 50 ids from 550
      assert.match(shared, /\b550, 551, 552\b/);
      assert.match(ncdump(`${tmp.path}/1.pnetcdf`), /double data\(record, n100, n200\)/);
    }
    assert.deepEqual(leftovers(tmp.path).filter((n) => n.startsWith(".")), []);
  },
);

/** The `pnetcdf` rows of `doc`: the aggregate, then one per rank. */
function pnetcdfRows(doc: JsonDoc): Row[] {
  return (doc.rows as Row[]).filter((x) => x.framing === "pnetcdf");
}

mpiTestUnder(
  "pnetcdf: table --framing netcdf,pnetcdf --layout shared on 2 nodes runs, verifies, says how, syncs, cleans up",
  "openmpi",
  async (launcher) => {
    using tmp = tempDir();
    const doc = await runMpiJson(launcher, [
      ...["table", ...SMALL, "--framing", "netcdf,pnetcdf", "--layout", "shared", "--per-rank"],
      ...["--audit", "--dir", tmp.path],
    ], { nodes: ["node-a", "node-a", "node-b", "node-b"] });
    assert.deepEqual(doc.rows.map((x) => `${x.framing} ${x.rank}`), [
      ...["netcdf all", "netcdf 0", "netcdf 1", "netcdf 2", "netcdf 3"],
      ...["pnetcdf all", "pnetcdf 0", "pnetcdf 1", "pnetcdf 2", "pnetcdf 3"],
    ]);
    const [all, ...ranks] = pnetcdfRows(doc) as [Row, ...Row[]];
    const netcdf = (doc.rows as Row[])[0]!;
    assert.equal(all.error, "");
    assert.equal(all.layout, "shared");
    assert.equal(all.collective, true);
    assert.match(String(all.library), /^PnetCDF 1\.\d+\.\d+ on Open MPI v\d/);
    assert.equal(new Set(ranks.flatMap((x) => [x.write_path, x.read_path])).size, 1);
    assert.match(String(ranks[0]!.write_path), /table\.pnetcdf\.shared$/);
    assert.equal(all.file_bytes, netcdf.file_bytes, "the same frames make netcdf's file");
    assert.ok(Number(all.read_MiBps) > 0 && Number(all.random_MiBps) > 0);
    // the durable point: every rank's ncmpi_sync of the file inside its timed write
    assertOneSyncEach(ranks, "ncmpi_sync");
    const meta = doc.meta as unknown as {
      mpi_io: { opens: { layout: string; access: string; reported: Record<string, string> }[] };
    };
    const opens = meta.mpi_io.opens.map((o) => `${o.layout} ${o.access}`);
    for (const kind of ["shared write", "shared read"]) assert.ok(opens.includes(kind), kind);
    // what PnetCDF runs the file with (ncmpi_inq_file_info): its own hints among the MPI-IO ones
    assert.ok("nc_var_align_size" in meta.mpi_io.opens[0]!.reported, JSON.stringify(meta));
    assert.deepEqual(leftovers(tmp.path), [], "scratch files of every rank removed");
  },
);

mpiTestUnder(
  "pnetcdf: records per-rank and table shared with --collective off and a hint say so",
  "openmpi",
  async (launcher) => {
    using tmp = tempDir();
    await assertRecordsIndependent(launcher, "pnetcdf", [], "per-rank", tmp.path);
    const table = await runMpiJson(launcher, [
      ...["table", ...SMALL, "--framing", "pnetcdf", "--layout", "shared", "--collective", "off"],
      ...["--hint", "nc_header_align_size=1024", "--dir", tmp.path],
    ]);
    assert.equal(table.rows.length, 1);
    assert.equal(table.rows[0]!.error, "");
    assert.equal(table.rows[0]!.collective, false);
    const meta = table.meta as unknown as {
      mpi_io: { opens: { access: string; status: Record<string, string> }[] };
    };
    const write = meta.mpi_io.opens.find((o) => o.access === "write")!;
    assert.equal(write.status.nc_header_align_size, "reported", JSON.stringify(write));
    assert.deepEqual(leftovers(tmp.path), []);
  },
);

mpiTestUnder(
  "pnetcdf: a rank whose PnetCDF put fails stops all four with the library's text, no file left",
  "openmpi",
  async (launcher) => {
    await assertFailingRankStopsAll(
      launcher,
      SMALL,
      "pnetcdf",
      "pnetcdf-write",
      /rank 2 on \S+ failed in warm-up: pnetcdf: \S+table\.pnetcdf\.shared: ncmpi_put_vara_\w+ '[^']+' record \d+ failed: Operation not allowed in (collective|independent) data mode/,
    );
  },
);

Deno.test("pnetcdf, netcdf4-par: outside MPI refused in one line, listed as unavailable", async () => {
  using tmp = tempDir();
  await assertRefusedOutsideMpi(["pnetcdf", "netcdf4-par"], tmp.path);
  await assertListedUnavailable(["pnetcdf", "netcdf4-par"]);
  assert.deepEqual(leftovers(tmp.path), []);
});

peerTest(
  "mpi_linked: a library's MPI is read from its DT_NEEDED entries before it is loaded",
  () =>
    ["libpnetcdf.so.0d", "libmpichfort.so.12"].map((n) =>
      libraryFile(n) === undefined ? `${n} is not installed` : null
    ).find((why) => why !== null) ?? null,
  () => {
    const pnetcdf = libraryFile("libpnetcdf.so.0d")!;
    assert.ok(neededLibraries(pnetcdf).includes("libmpi.so.40"), pnetcdf);
    assert.equal(linkedMpi(pnetcdf), "openmpi");
    // MPICH's Fortran bindings link libmpich.so.12
    assert.equal(linkedMpi(libraryFile("libmpichfort.so.12")!), "mpich");
    // a library without MPI (the serial netCDF-C), and a file that is not ELF
    const serial = libraryFile("libnetcdf.so.19");
    if (serial !== undefined) assert.equal(linkedMpi(serial), undefined);
    using tmp = tempDir();
    Deno.writeTextFileSync(`${tmp.path}/x.so`, "not an ELF file");
    assert.deepEqual(neededLibraries(`${tmp.path}/x.so`), []);
  },
);
