/**
 * The `netcdf4-par` backend, 4 ranks. Under Open MPI (`mpirun.openmpi`), which Debian's
 * libnetcdf_mpi is built for: shared files (MPI_COMM_WORLD) and files per rank (MPI_COMM_SELF),
 * collective or independent access, any byte order, hold the serial `netcdf4` peer's variables
 * (chunked one record per chunk, the byte order asked) and the serial peer, loaded in the same
 * process beside the parallel library, reads every frame back byte for byte; ncdump reads them;
 * table and records run, verify and clean up, rows saying the layout, collective or not and the
 * library; the durable point nc_sync is in the audit trail; a rank whose call fails stops all four
 * with the library's text and no file left. Under MPICH (`mpiexec.mpich`): netcdf4-par is skipped
 * in one line saying the library is built for Open MPI.
 * @module
 */
import assert from "node:assert/strict";
import { tempDir } from "./_helpers.ts";
import {
  assertBuiltForOpenMpi,
  assertFailingRankStopsAll,
  assertOneSyncEach,
  assertRecordsIndependent,
  haveCommand,
  leftovers,
  mpiTest,
  mpiTestUnder,
  ncdump,
  type Row,
  runMpi,
  runMpiJson,
  SMALL,
} from "./_mpi.ts";

const PROBE = new URL("./_mpi_pnetcdf_probe.ts", import.meta.url).pathname;

/** The probe's netcdf4-par configurations (see tests/_mpi_pnetcdf_probe.ts). */
const CONFIGS = [
  "par:shared:on:native",
  "par:shared:off:big",
  "par:per-rank:off:little",
  "par:per-rank:on:big",
];

mpiTest(
  "netcdf4-par: shared and per-rank files, collective or not, any byte order: the serial netcdf4 peer and ncdump read them",
  async (launcher) => {
    if (launcher.name === "mpich") {
      return await assertBuiltForOpenMpi(launcher, "netcdf4-par", "libnetcdf_mpi");
    }
    using tmp = tempDir();
    const r = await runMpi(launcher, [tmp.path, CONFIGS.join(",")], { script: PROBE });
    assert.equal(r.code, 0, r.stderr);
    for (const [tag, config] of CONFIGS.entries()) {
      const shared = config.includes(":shared:");
      for (const suffix of shared ? [""] : [".r0", ".r1", ".r2", ".r3"]) {
        const file = `${tmp.path}/${tag}.netcdf4-par${suffix}`;
        // every frame the ranks wrote, read back by the serial peer byte for byte
        assert.equal(Deno.readTextFileSync(`${file}.serial`), shared ? "12" : "3", config);
        if (!haveCommand("ncdump")) continue;
        const header = ncdump("-hs", file);
        assert.match(header, /record = UNLIMITED ; \/\/ \((12|3) currently\)/);
        assert.match(header, /particles_position:_ChunkSizes = 1, 50, 3 ;/);
        assert.match(header, /particles_position:chunk_name = "particles\/position"/);
        const endian = config.endsWith(":big") ? "big" : "little";
        assert.match(header, new RegExp(`ids:_Endianness = "${endian}"`), config);
      }
    }
    if (haveCommand("ncdump")) {
      // frame 11 (rank 3's last) is there: 50 ids from 550
      assert.match(ncdump("-v", "ids", `${tmp.path}/1.netcdf4-par`), /\b550, 551, 552\b/);
    }
  },
);

mpiTestUnder(
  "netcdf4-par: table --framing netcdf4,netcdf4-par --layout per-rank, then shared on 2 nodes: run, verify, say how, sync, clean up",
  "openmpi",
  async (launcher) => {
    using tmp = tempDir();
    // the serial and the parallel libnetcdf in one process, each on its own HDF5
    const both = await runMpiJson(launcher, [
      ...["table", ...SMALL, "--framing", "netcdf4,netcdf4-par", "--dir", tmp.path],
    ]);
    assert.deepEqual(both.rows.map((x) => `${x.framing} ${x.error}`), [
      "netcdf4 ",
      "netcdf4-par ",
    ]);
    assert.equal(both.rows[1]!.layout, "per-rank");
    const doc = await runMpiJson(launcher, [
      ...["table", ...SMALL, "--framing", "netcdf4-par", "--layout", "shared", "--per-rank"],
      ...["--audit", "--dir", tmp.path],
    ], { nodes: ["node-a", "node-a", "node-b", "node-b"] });
    const [all, ...ranks] = doc.rows as [Row, ...Row[]];
    assert.equal(all.error, "");
    assert.equal(all.layout, "shared");
    assert.equal(all.collective, true);
    assert.match(String(all.library), /^netCDF-C 4\.\d+\.\d+ \(parallel HDF5\) on Open MPI v\d/);
    assert.equal(new Set(ranks.flatMap((x) => [x.write_path, x.read_path])).size, 1);
    assert.match(String(ranks[0]!.write_path), /table\.netcdf4-par\.shared$/);
    assert.ok(Number(all.read_MiBps) > 0 && Number(all.random_MiBps) > 0);
    assertOneSyncEach(ranks, "nc_sync");
    assert.deepEqual(leftovers(tmp.path), [], "scratch files of every rank removed");
  },
);

mpiTestUnder(
  "netcdf4-par: records shared and table per-rank with --collective off say so in every row",
  "openmpi",
  async (launcher) => {
    using tmp = tempDir();
    await assertRecordsIndependent(
      launcher,
      "netcdf4-par",
      ["--layout", "shared"],
      "shared",
      tmp.path,
    );
    const table = await runMpiJson(launcher, [
      ...["table", ...SMALL, "--framing", "netcdf4-par", "--collective", "off"],
      ...["--dir", tmp.path],
    ]);
    assert.equal(table.rows.length, 1);
    assert.equal(table.rows[0]!.error, "");
    assert.equal(table.rows[0]!.layout, "per-rank");
    assert.equal(table.rows[0]!.collective, false);
    assert.deepEqual(leftovers(tmp.path), []);
  },
);

mpiTestUnder(
  "netcdf4-par: a rank whose put fails stops all four with the library's text, no file left",
  "openmpi",
  async (launcher) => {
    await assertFailingRankStopsAll(
      launcher,
      SMALL,
      "netcdf4-par",
      "netcdf4-par-write",
      /rank 2 on \S+ failed in warm-up: netcdf4-par: \S+table\.netcdf4-par\.shared: nc_put_vara '[^']+' record \d+ failed: NetCDF: Variable not found/,
    );
  },
);
