/**
 * The `hdf5-mpio` backend (parallel HDF5) under Open MPI (`mpirun.openmpi`) and MPICH
 * (`mpiexec.mpich`), 4 ranks, on the HDF5 built for each (libhdf5_openmpi, libhdf5_mpich): one
 * shared file (MPI_COMM_WORLD) or a file per rank (MPI_COMM_SELF), collective or independent,
 * chunked or contiguous datasets. Its files hold the records `raw` holds for the same records, as
 * the serial `hdf5` peer and h5dump read them, in the serial peer's layout; table and records
 * run, verify and clean up, with rows saying the layout, collective or not, and HDF5 on the MPI
 * library; the durable point H5Fflush is in the audit trail and the hints the MPI library reports
 * for HDF5's file are in the meta; a rank whose HDF5 write fails stops all four with HDF5's own
 * text in one line and no file left. Outside MPI it is refused in one line.
 * @module
 */
import assert from "node:assert/strict";
import { backendByName } from "../lib/backends/registry.ts";
import { commandMissing, REQUIRE_PEERS, tempDir } from "./_helpers.ts";
import {
  assertFailingRankStopsAll,
  assertListedUnavailable,
  assertRecordsIndependent,
  assertRefusedOutsideMpi,
  type JsonDoc,
  type Launcher,
  leftovers,
  mpiTest,
  type Row,
  runMpi,
  runMpiJson,
} from "./_mpi.ts";

const PROBE = new URL("./_mpi_raw_probe.ts", import.meta.url).pathname;

/** The HDF5 build each launcher's MPI needs. */
const BUILDS: Readonly<Record<string, string>> = {
  openmpi: "libhdf5_openmpi.so.103",
  mpich: "libhdf5_mpich.so.103",
};

/** Why `launcher`'s parallel HDF5 cannot be tested here (one line), or null. */
function buildMissing(launcher: Launcher): string | null {
  const soname = BUILDS[launcher.name]!;
  const out = new Deno.Command("/sbin/ldconfig", { args: ["-p"], stdout: "piped" }).outputSync();
  return new TextDecoder().decode(out.stdout).includes(soname)
    ? null
    : `${soname} is not installed (libhdf5-${launcher.name}-dev)`;
}

/** Skips (one line) or fails under SCIOBENCH_REQUIRE_PEERS=1 when `why` is set; true to go on. */
function present(why: string | null): boolean {
  if (why === null) return true;
  if (REQUIRE_PEERS) throw new Error(`required by SCIOBENCH_REQUIRE_PEERS=1: ${why}`);
  console.error(`skip: ${why}`);
  return false;
}

/** Small table cells: N = 32^2 (a frame of a 12 KiB and a 4 KiB chunk). */
const SMALL = ["--size", "256KiB", "--n", "32^2"];

/** The probe's configurations: layout, collective, byte order, records x record shape, datasets. */
const CONFIGS = [
  "shared:on:native:6x10x100:chunked",
  "shared:off:big:4x10x10:contiguous",
  "per-rank:on:little:5x20x30:contiguous",
  "per-rank:off:big:3x100x20:chunked",
];

/** Asserts `got` equals `want` value for value, naming the first that differs (no large diff). */
function sameValues(got: Float32Array, want: Float32Array, what: string): void {
  const n = Math.min(got.length, want.length);
  let at = 0;
  while (at < n && Object.is(got[at], want[at])) at++;
  if (at < n || got.length !== want.length) {
    assert.fail(
      `${what}: ${got.length} values against ${want.length}, the first differs at ${at} ` +
        `(${got[at]} against ${want[at]})`,
    );
  }
}

/** The values h5dump prints of dataset `name` of `path`, each as a float32. */
function h5dumpValues(path: string, name: string): Float32Array {
  const out = new Deno.Command("h5dump", {
    args: ["-d", name, "-y", "-w", "0", "-m", "%.9g", path],
    stdout: "piped",
    stderr: "piped",
  }).outputSync();
  const text = new TextDecoder().decode(out.stdout);
  assert.equal(out.code, 0, new TextDecoder().decode(out.stderr));
  const data = text.slice(text.indexOf("DATA {") + "DATA {".length, text.lastIndexOf("}"));
  const values = data.split(/[\s,}]+/).filter((v) => v !== "").map(Number);
  return Float32Array.from(values);
}

/** The h5dump header of `path` with its datasets' storage (-p -H). */
function h5dumpHeader(path: string): string {
  const out = new Deno.Command("h5dump", { args: ["-p", "-H", path], stdout: "piped" })
    .outputSync();
  assert.equal(out.code, 0);
  return new TextDecoder().decode(out.stdout);
}

mpiTest(
  "hdf5-mpio: shared and per-rank files, collective or not, chunked or contiguous, hold raw's records as h5dump and the hdf5 peer read them",
  async (launcher) => {
    if (!present(buildMissing(launcher) ?? commandMissing("h5dump"))) return;
    using tmp = tempDir();
    const r = await runMpi(launcher, ["hdf5-mpio", tmp.path, CONFIGS.join(",")], {
      script: PROBE,
    });
    assert.equal(r.code, 0, r.stderr);
    const hdf5 = backendByName("hdf5");
    const raw = backendByName("raw");
    for (const [tag, config] of CONFIGS.entries()) {
      const shared = config.startsWith("shared");
      const contiguous = config.endsWith("contiguous");
      for (const suffix of shared ? [""] : [".r0", ".r1", ".r2", ".r3"]) {
        const what = `${config}${suffix}`;
        const h5 = `${tmp.path}/${tag}.hdf5-mpio${suffix}`;
        const want = raw.openReader(`${tmp.path}/${tag}.raw${suffix}`);
        const got = hdf5.openReader(h5);
        try {
          const records = Number(config.split(":")[3]!.split("x")[0]) * (shared ? 4 : 1);
          assert.equal(want.frameCount, records, what);
          // raw's records, one after the other, as the one dataset holds them
          // (copies: a reader reuses its buffers)
          const chunks = Array.from({ length: records }, (_, f) => {
            const c = want.readFrame(f)[0]!;
            return { ...c, data: c.data.slice() };
          });
          const all = new Float32Array(
            chunks.flatMap((c) => [...new Float32Array(c.data.slice().buffer)]),
          );
          const [set, ...more] = got.datasets!();
          assert.equal(more.length, 0, what);
          assert.equal(set!.name, `/${chunks[0]!.name}`, what);
          assert.deepEqual(set!.shape, [records, ...chunks[0]!.shape], what);
          assert.equal(set!.storage, contiguous ? "contiguous" : "chunked", what);
          const region = new Uint8Array(all.byteLength);
          got.readRegion!(0, set!.shape.map(() => 0), set!.shape, region);
          sameValues(new Float32Array(region.buffer), all, `${what}: the hdf5 peer's values`);
          // a chunked file is the hdf5 peer's layout: its frames are the records (a contiguous
          // dataset cannot grow, and the peer reads frames of extendible datasets only)
          assert.equal(got.frameCount, contiguous ? 0 : records, what);
          for (let f = 0; f < got.frameCount; f++) {
            const c = got.readFrame(f)[0]!;
            sameValues(
              new Float32Array(c.data.slice().buffer),
              new Float32Array(chunks[f]!.data.slice().buffer),
              `${what}: frame ${f}`,
            );
          }
          // h5dump's values are raw's records, in order
          sameValues(h5dumpValues(h5, set!.name), all, `${what}: h5dump's values`);
        } finally {
          got.close();
          want.close();
        }
        const header = h5dumpHeader(h5);
        assert.match(header, contiguous ? /CONTIGUOUS/ : /CHUNKED \( 1, /, what);
        assert.match(header, config.includes(":big:") ? /H5T_IEEE_F32BE/ : /H5T_IEEE_F32LE/);
      }
    }
    assert.deepEqual(leftovers(tmp.path).filter((n) => n.startsWith(".")), []);
  },
);

/** The `hdf5-mpio` rows of `doc`: the aggregate, then one per rank. */
function h5Rows(doc: JsonDoc): Row[] {
  return (doc.rows as Row[]).filter((x) => x.framing === "hdf5-mpio");
}

/** The H5Fflush calls of `row`'s timed write phase, from its audit trail. */
function writeFlushes(row: Row): { call: string; path: string }[] {
  const audit = row.audit as unknown as {
    phases: { name: string; syncs: { call: string; path: string }[] }[];
  };
  const write = audit.phases.find((p) => p.name === "write")!;
  return write.syncs.filter((s) => s.call === "H5Fflush");
}

mpiTest(
  "hdf5-mpio: table --framing raw,hdf5-mpio --layout shared on 2 nodes runs, verifies, flushes, says how, cleans up",
  async (launcher) => {
    if (!present(buildMissing(launcher))) return;
    using tmp = tempDir();
    const doc = await runMpiJson(launcher, [
      ...["table", ...SMALL, "--framing", "raw,hdf5-mpio", "--layout", "shared", "--per-rank"],
      ...["--hint", "romio_cb_write=enable", "--audit", "--dir", tmp.path],
    ], { nodes: ["node-a", "node-a", "node-b", "node-b"] });
    const [all, ...ranks] = h5Rows(doc) as [Row, ...Row[]];
    assert.equal(ranks.length, 4);
    assert.equal(all.error, "");
    assert.equal(all.layout, "shared");
    assert.equal(all.collective, true);
    const mpi = launcher.name === "openmpi" ? "Open MPI v\\d" : "MPICH";
    assert.match(
      String(all.library),
      new RegExp(
        `^HDF5 1\\.\\d+\\.\\d+ \\(${BUILDS[launcher.name]!.replaceAll(".", "\\.")}\\) on ${mpi}`,
      ),
    );
    // one file, every rank's frames in it, read back verified across nodes
    assert.equal(new Set(ranks.flatMap((x) => [x.write_path, x.read_path])).size, 1);
    assert.match(String(ranks[0]!.write_path), /table\.hdf5-mpio\.shared$/);
    assert.equal(all.frames, 4 * Number(ranks[0]!.frames));
    assert.ok(Number(all.read_MiBps) > 0 && Number(all.random_MiBps) > 0);
    // the durable point: every rank's H5Fflush of the file inside its timed write
    for (const x of ranks) {
      const flushes = writeFlushes(x);
      assert.equal(flushes.length, 1, `rank ${x.rank}: ${JSON.stringify(x.audit)}`);
      assert.equal(flushes[0]!.path, x.write_path);
    }
    // the hints the MPI library reports for the file HDF5 opened
    const meta = doc.meta as unknown as {
      mpi_io: { opens: { layout: string; access: string; asked: Record<string, string> }[] };
    };
    const opens = meta.mpi_io.opens.filter((o) => o.asked.romio_cb_write === "enable");
    const kinds = opens.map((o) => `${o.layout} ${o.access}`);
    for (const kind of ["shared write", "shared read"]) assert.ok(kinds.includes(kind), kind);
    assert.deepEqual(leftovers(tmp.path), [], "scratch files of every rank removed");
  },
);

mpiTest(
  "hdf5-mpio: table per-rank and shared with --collective off, records per-rank, say so in every row",
  async (launcher) => {
    if (!present(buildMissing(launcher))) return;
    using tmp = tempDir();
    for (
      const [layout, collective] of [["per-rank", "on"], ["per-rank", "off"], ["shared", "off"]]
    ) {
      const table = await runMpiJson(launcher, [
        ...["table", ...SMALL, "--framing", "hdf5-mpio", "--layout", layout!],
        ...["--collective", collective!, "--reorder", "1", "--per-rank", "--dir", tmp.path],
      ]);
      const [all, ...ranks] = h5Rows(table) as [Row, ...Row[]];
      assert.equal(all.error, "", JSON.stringify(all));
      for (const x of [all, ...ranks]) {
        assert.equal(x.layout, layout);
        assert.equal(x.collective, collective === "on");
      }
      if (layout === "per-rank") {
        // --reorder 1: every rank reads the file of the next
        for (const x of ranks) {
          assert.match(String(x.read_path), new RegExp(`\\.r${(Number(x.rank) + 1) % 4}$`));
        }
      }
    }
    const contiguous = ["--option", "layout=contiguous"];
    await assertRecordsIndependent(launcher, "hdf5-mpio", contiguous, "per-rank", tmp.path);
    assert.deepEqual(leftovers(tmp.path), []);
  },
);

mpiTest(
  "hdf5-mpio: a rank whose HDF5 write fails stops all four with HDF5's text, no file left",
  async (launcher) => {
    if (!present(buildMissing(launcher))) return;
    // HDF5's own words for a write whose memory selection is not the file's
    await assertFailingRankStopsAll(
      launcher,
      SMALL,
      "hdf5-mpio",
      "hdf5-mpio-write",
      /rank 2 on \S+ failed in warm-up: hdf5-mpio: \S+table\.hdf5-mpio\.shared: H5Dwrite '[^']+' frame \d+ failed: .*different number of elements selected/,
    );
  },
);

mpiTest(
  "hdf5-mpio: without an HDF5 build for the MPI, framings says why and table refuses it in one line",
  async (launcher) => {
    using tmp = tempDir();
    const env = { SCIOBENCH_HDF5_MPI_LIB: `${tmp.path}/libhdf5_none.so` };
    const why = new RegExp(
      `no parallel HDF5 for this MPI library \\(${
        launcher.name === "openmpi" ? "Open MPI" : "MPICH"
      }[^)]*\\): SCIOBENCH_HDF5_MPI_LIB=\\S+libhdf5_none\\.so cannot be loaded: not found`,
    );
    const list = await runMpi(launcher, ["framings", "--format", "json"], { ranks: 1, env });
    assert.equal(list.code, 0, list.stderr);
    const doc = JSON.parse(list.stdout) as {
      backends: { name: string; available: boolean; unavailable?: string }[];
    };
    const h5 = doc.backends.find((b) => b.name === "hdf5-mpio")!;
    assert.equal(h5.available, false);
    assert.match(h5.unavailable!, why);
    const r = await runMpi(launcher, [
      ...["table", ...SMALL, "--framing", "raw,hdf5-mpio", "--dir", tmp.path],
    ], { ranks: 2, env });
    assert.equal(r.code, 2, r.stderr);
    const errors = r.stderr.split("\n").filter((l) => l.startsWith("sciobench: error:"));
    assert.ok(errors.length >= 1 && errors.every((l) => l === errors[0]), r.stderr);
    assert.match(errors[0]!, /--framing hdf5-mpio: no parallel HDF5 for this MPI library/);
    assert.deepEqual(leftovers(tmp.path), []);
  },
);

Deno.test("hdf5-mpio: outside MPI it is refused in one line and listed as unavailable", async () => {
  using tmp = tempDir();
  await assertRefusedOutsideMpi(["hdf5-mpio"], tmp.path);
  await assertListedUnavailable(["hdf5-mpio"]);
  assert.deepEqual(leftovers(tmp.path), []);
});
