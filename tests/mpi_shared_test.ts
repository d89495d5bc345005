/**
 * `--layout shared` files: 4 ranks write one file per framing (raw, f77, netcdf, gsd), each its
 * own frames, rank 0 the header and index. The file is byte for byte what one process writes
 * with the same frames, also with --bs 64k and --direct (each rank's calls bs bytes of its own
 * blocks), the same backend reads every rank's frames back, and python3-gsd, ncdump and a
 * gfortran program read it.
 * @module
 */
import assert from "node:assert/strict";
import { backendByName } from "../lib/backends/registry.ts";
import { verifyFrame } from "../lib/workloads/pattern.ts";
import { RecordFrames } from "../lib/workloads/records/mod.ts";
import { TableFrames } from "../lib/workloads/table/mod.ts";
import { commandMissing, REQUIRE_PEERS, tempDir } from "./_helpers.ts";
import { mpiTest, runMpi, sameBytes } from "./_mpi.ts";
import { PROBE_MODES, type ProbeCalls } from "./_mpi_shared_probe.ts";
import { DIRECT_REFUSED } from "./_syscalls.ts";
import { O } from "../lib/sys/libc.ts";

const PROBE = new URL("./_mpi_shared_probe.ts", import.meta.url).pathname;
const N = 10;
const PER_RANK = 120; // 480 frames: GSD relocates its index block several times
const TOTAL = 4 * PER_RANK;

async function run(
  cmd: string,
  args: string[],
  cwd: string,
): Promise<{ code: number; out: string }> {
  const o = await new Deno.Command(cmd, { args, cwd, stdout: "piped", stderr: "piped" }).output();
  const dec = new TextDecoder();
  return { code: o.code, out: dec.decode(o.stdout) + dec.decode(o.stderr) };
}

/** Runs `check` when `tool` is installed; else skips with a note (fails under REQUIRE_PEERS). */
async function withTool(tool: string, check: () => Promise<void>): Promise<void> {
  const why = commandMissing(tool);
  if (why === null) return await check();
  if (REQUIRE_PEERS) {
    throw new Error(`peer required by SCIOBENCH_REQUIRE_PEERS=1 is missing: ${why}`);
  }
  console.error(`skip part: ${why}`);
}

const FORTRAN = `      program rdtable
      real*4 p(${3 * N}), o(${4 * N})
      integer i
      open(1, file='shared.f77', form='unformatted', status='old')
      do i = 0, ${TOTAL - 1}
        read(1) p
        read(1) o
        if (p(1) .ne. real(i) .or. o(1) .ne. real(i)) then
          print *, 'bad frame', i, p(1), o(1)
          stop 1
        end if
      end do
      print *, 'frames', ${TOTAL}
      end
`;

mpiTest(
  "mpi shared layout: 4 ranks write one raw, f77, netcdf and gsd file as one process would",
  async (launcher) => {
    using tmp = tempDir();
    const r = await runMpi(
      launcher,
      [tmp.path, "raw,f77,netcdf,gsd", String(N), String(PER_RANK)],
      {
        script: PROBE,
      },
    );
    assert.equal(r.code, 0, r.stderr);
    const owners = [0, 1, 2, 3].map((rank) => new TableFrames(N, 1, rank));
    for (const name of ["raw", "f77", "netcdf", "gsd"]) {
      const shared = Deno.readFileSync(`${tmp.path}/shared.${name}`);
      const serial = Deno.readFileSync(`${tmp.path}/serial.${name}`);
      assert.ok(shared.length > 28 * N * TOTAL);
      assert.deepEqual(shared, serial, `${name}: the shared file is the one-process file`);
      const source = backendByName(name).openReader(`${tmp.path}/shared.${name}`, {
        layout: owners[0]!.layout,
      });
      try {
        assert.equal(source.frameCount, TOTAL);
        for (const g of [0, PER_RANK - 1, PER_RANK, 2 * PER_RANK + 7, TOTAL - 1]) {
          const owner = owners[Math.floor(g / PER_RANK)]!;
          verifyFrame(source.path, g, owner.frame(g).chunks, source.readFrame(g));
        }
      } finally {
        source.close();
      }
    }
    await withTool("ncdump", async () => {
      const h = await run("ncdump", ["-h", "shared.netcdf"], tmp.path);
      assert.equal(h.code, 0, h.out);
      assert.match(h.out, new RegExp(`UNLIMITED ; // \\(${TOTAL} currently\\)`));
    });
    await withTool("/usr/bin/python3", async () => {
      const py = await run("/usr/bin/python3", [
        "-c",
        "import gsd.hoomd, sys; t = gsd.hoomd.open(sys.argv[1], 'rb'); " +
        "print(len(t), *[float(t[g].particles.position[0][0]) for g in map(int, sys.argv[2:])])",
        "shared.gsd",
        ...["0", String(PER_RANK), String(TOTAL - 1)],
      ], tmp.path);
      assert.equal(py.code, 0, py.out);
      assert.equal(py.out.trim(), `${TOTAL} 0.0 ${PER_RANK}.0 ${TOTAL - 1}.0`);
    });
    await withTool("gfortran", async () => {
      Deno.writeTextFileSync(`${tmp.path}/rdtable.f`, FORTRAN);
      const c = await run("gfortran", ["-o", "rdtable", "rdtable.f"], tmp.path);
      assert.equal(c.code, 0, c.out);
      const f = await run(`${tmp.path}/rdtable`, [], tmp.path);
      assert.equal(f.code, 0, f.out);
      assert.match(f.out, new RegExp(`frames\\s+${TOTAL}`));
    });
  },
);

/** Frames of 2,800 bytes: rank boundaries fall inside 4 KiB blocks and 64 KiB transfers. */
const TRANSFER_N = 100;
/** The modes of the probe with a transfer; `direct` and `direct64k` where O_DIRECT works. */
const TRANSFER_MODES = DIRECT_REFUSED === null ? ["bs64k", "direct", "direct64k"] : ["bs64k"];

/** The [start, end) ranges `writes` cover, widened to multiples of `align`. */
function covered(writes: readonly [number, number][], align: number): [number, number][] {
  return writes.map(([o, n]) => [o - (o % align), Math.ceil((o + n) / align) * align]);
}

mpiTest(
  "mpi shared layout --bs 64k and --direct: the one-process file, each rank's calls bs bytes of its own blocks",
  async (launcher) => {
    if (DIRECT_REFUSED !== null) console.error(`skip part (--direct): ${DIRECT_REFUSED}`);
    using tmp = tempDir();
    const names = ["raw", "f77", "netcdf", "gsd"];
    const r = await runMpi(
      launcher,
      [tmp.path, names.join(","), String(TRANSFER_N), String(PER_RANK), TRANSFER_MODES.join(",")],
      { script: PROBE },
    );
    assert.equal(r.code, 0, r.stderr);
    const owners = [0, 1, 2, 3].map((rank) => new TableFrames(TRANSFER_N, 1, rank));
    for (const name of names) {
      const serial = Deno.readFileSync(`${tmp.path}/serial.${name}`);
      for (const mode of TRANSFER_MODES) {
        const what = `${name} ${mode}`;
        const transfer = PROBE_MODES[mode]!;
        const path = `${tmp.path}/shared.${mode}.${name}`;
        sameBytes(Deno.readFileSync(path), serial, `${what}: the one-process file`);
        // each rank: opens with O_DIRECT when asked, calls of at most bs bytes, full ones bs
        // (under O_DIRECT at page offsets and lengths); the ranks' calls never share a block
        const align = transfer.direct ? 4096 : 1;
        const blocks: [number, number, number][] = [];
        for (const rank of [0, 1, 2, 3]) {
          const calls: ProbeCalls = JSON.parse(
            Deno.readTextFileSync(`${tmp.path}/calls.${mode}.${name}.r${rank}.json`),
          );
          assert.equal(calls.flags.length, 1, `${what} rank ${rank}: one open`);
          assert.equal((calls.flags[0]! & O.DIRECT) !== 0, transfer.direct, `${what}: O_DIRECT`);
          const sizes = calls.writes.map(([, n]) => n);
          assert.ok(sizes.length > 0, `${what} rank ${rank} wrote nothing`);
          assert.ok(sizes.every((n) => n <= transfer.bs), `${what} rank ${rank}: ${sizes}`);
          const bytes = sizes.reduce((a, n) => a + n, 0);
          const full = sizes.filter((n) => n === transfer.bs).length;
          // whole transfers but for the end of each run (data, and gsd's index)
          assert.ok(full >= Math.floor(bytes / transfer.bs) - 2, `${what} rank ${rank}: ${sizes}`);
          for (const [o, n] of calls.writes) {
            assert.equal(o % align, 0, `${what} rank ${rank}: a write at ${o}`);
            assert.equal(n % align, 0, `${what} rank ${rank}: a write of ${n}`);
          }
          for (const [s, e] of covered(calls.writes, align)) blocks.push([s, e, rank]);
        }
        for (const [s, e, rank] of blocks) {
          for (const [s2, e2, rank2] of blocks) {
            if (rank < rank2 && s < e2 && s2 < e) {
              assert.fail(
                `${what}: ranks ${rank} and ${rank2} both write [${s}, ${e}), [${s2}, ${e2})`,
              );
            }
          }
        }
        // read back through the native source with the same transfers
        const source = backendByName(name).openReader(path, {
          layout: owners[0]!.layout,
          transfer,
        });
        try {
          assert.equal(source.frameCount, TOTAL);
          for (const g of [0, PER_RANK - 1, PER_RANK, 2 * PER_RANK + 7, TOTAL - 1]) {
            const owner = owners[Math.floor(g / PER_RANK)]!;
            verifyFrame(source.path, g, owner.frame(g).chunks, source.readFrame(g));
          }
        } finally {
          source.close();
        }
      }
    }
  },
);

const RECORDS_PROBE = new URL("./_mpi_records_probe.ts", import.meta.url).pathname;
const RECORDS_PER_RANK = 6;
const RECORDS = 4 * RECORDS_PER_RANK;

const RECORDS_FORTRAN = `      program rdrec
      real*4 a(1000)
      integer i
      open(1, file='shared.f77', form='unformatted', status='old')
      do i = 0, ${RECORDS - 1}
        read(1) a
        if (a(1) .ne. real(i)) then
          print *, 'bad record', i, a(1)
          stop 1
        end if
      end do
      print *, 'records', ${RECORDS}
      end
`;

mpiTest(
  "mpi records --layout shared: one raw, f77, netcdf and gsd file per target, as one process writes it",
  async (launcher) => {
    using tmp = tempDir();
    const r = await runMpi(
      launcher,
      [tmp.path, "raw,f77,netcdf,gsd", String(RECORDS_PER_RANK)],
      { script: RECORDS_PROBE },
    );
    assert.equal(r.code, 0, r.stderr);
    const owners = [0, 1, 2, 3].map((rank) =>
      new RecordFrames([RECORDS_PER_RANK, 10, 100], "float32", 7, rank)
    );
    for (const name of ["raw", "f77", "netcdf", "gsd"]) {
      const shared = Deno.readFileSync(`${tmp.path}/shared.${name}`);
      const serial = Deno.readFileSync(`${tmp.path}/serial.${name}`);
      assert.ok(shared.length >= 4000 * RECORDS, name);
      assert.deepEqual(shared, serial, `${name}: the shared file is the one-process file`);
      const source = backendByName(name).openReader(`${tmp.path}/shared.${name}`, {
        layout: owners[0]!.layout,
        endian: name === "netcdf" ? "big" : "native",
      });
      try {
        assert.equal(source.frameCount, RECORDS);
        for (const g of [0, RECORDS_PER_RANK - 1, RECORDS_PER_RANK, RECORDS - 1]) {
          const owner = owners[Math.floor(g / RECORDS_PER_RANK)]!;
          verifyFrame(source.path, g, owner.frame(g).chunks, source.readFrame(g));
        }
      } finally {
        source.close();
      }
    }
    // the scratch directory went; only the copies are left
    assert.deepEqual(
      [...Deno.readDirSync(tmp.path)].map((e) => e.name).filter((n) => n.startsWith(".")),
      [],
    );
    await withTool("ncdump", async () => {
      const h = await run("ncdump", ["-h", "shared.netcdf"], tmp.path);
      assert.equal(h.code, 0, h.out);
      assert.match(h.out, new RegExp(`UNLIMITED ; // \\(${RECORDS} currently\\)`));
    });
    await withTool("/usr/bin/python3", async () => {
      const py = await run("/usr/bin/python3", [
        "-c",
        "import gsd.fl, sys; f = gsd.fl.open(sys.argv[1], 'rb'); " +
        "print(f.nframes, *[float(f.read_chunk(frame=g, name='data').flat[0]) " +
        "for g in map(int, sys.argv[2:])])",
        "shared.gsd",
        ...["0", String(RECORDS_PER_RANK), String(RECORDS - 1)],
      ], tmp.path);
      assert.equal(py.code, 0, py.out);
      assert.equal(py.out.trim(), `${RECORDS} 0.0 ${RECORDS_PER_RANK}.0 ${RECORDS - 1}.0`);
    });
    await withTool("gfortran", async () => {
      Deno.writeTextFileSync(`${tmp.path}/rdrec.f`, RECORDS_FORTRAN);
      const c = await run("gfortran", ["-o", "rdrec", "rdrec.f"], tmp.path);
      assert.equal(c.code, 0, c.out);
      const f = await run(`${tmp.path}/rdrec`, [], tmp.path);
      assert.equal(f.code, 0, f.out);
      assert.match(f.out, new RegExp(`records\\s+${RECORDS}`));
    });
  },
);
