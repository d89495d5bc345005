/**
 * `records`, `scaling` and `readers` under mpirun (Open MPI) and mpiexec (MPICH) with 4 ranks:
 * one document from rank 0, bytes summed over ranks, the ranks as readers, per-rank rows and
 * audit trails, --layout shared (also with --direct), one failing rank stopping all, no files
 * left.
 * @module
 */
import assert from "node:assert/strict";
import { tempDir } from "./_helpers.ts";
import { DIRECT_REFUSED } from "./_syscalls.ts";
import { type JsonDoc, leftovers, mpiTest, runMpi, runMpiJson } from "./_mpi.ts";

type Row = Record<string, string | number>;

mpiTest(
  "mpi records: each rank writes and reads its own file (--reorder 1: the next rank's); bytes add up",
  async (launcher) => {
    using tmp = tempDir();
    const doc = await runMpiJson(launcher, [
      ...["records", "--shape", "8x10x100", "--framing", "raw,netcdf", "--endian", "big"],
      ...["--reorder", "1", "--per-rank", "--audit", "--dir", tmp.path],
    ]);
    assert.equal(doc.meta.ranks, 4);
    // per framing and phase: the aggregate row, then one row per rank
    assert.equal(doc.rows.length, 2 * 2 * 5);
    const one = 8 * 10 * 100 * 4;
    for (let k = 0; k < doc.rows.length; k += 5) {
      const [all, ...ranks] = doc.rows.slice(k, k + 5) as [Row, ...Row[]];
      assert.equal(all.rank, "all");
      assert.equal(all.bytes, 4 * one);
      assert.deepEqual(ranks.map((x) => [x.rank, x.bytes]), [[0, one], [1, one], [2, one], [
        3,
        one,
      ]]);
      assert.equal(all.wall_s, Math.max(...ranks.map((x) => Number(x.wall_s))));
      // the audit trail of each rank's phase names the file it touched: its own for the write,
      // with --reorder 1 the next rank's for the read
      for (const x of ranks) {
        const audit = x.audit as unknown as {
          phases: { name: string; files: { path: string }[] }[];
        };
        const phase = audit.phases.find((ph) => ph.name === x.phase);
        const owner = x.phase === "write" ? Number(x.rank) : (Number(x.rank) + 1) % 4;
        assert.deepEqual(
          phase?.files.map((f) => f.path.replace(/^.*\//, "")),
          [`records.${x.framing}.big.r${owner}`],
          `rank ${x.rank} ${x.phase}`,
        );
      }
    }
    assert.deepEqual(leftovers(tmp.path), []);
  },
);

mpiTest("mpi scaling: 4 ranks write their datasets; bytes are 4 x one rank's", async (launcher) => {
  using tmp = tempDir();
  const r = await runMpi(launcher, [
    ...["scaling", "--datasets", "2,3", "--shape", "8x8x8", "--framing", "f77,ieeeio"],
    ...["--dir", tmp.path, "--format", "json"],
  ]);
  assert.equal(r.code, 0, r.stderr);
  const doc = JSON.parse(r.stdout) as JsonDoc;
  assert.equal(doc.rows.length, 4);
  for (const row of doc.rows) {
    assert.equal(row.ranks, 4);
    assert.equal(row.bytes, 4 * Number(row.datasets) * 8 * 8 * 8 * 8);
  }
  // one progress line per cell, from rank 0 only (IOspeed's stars come with --format seed)
  assert.equal(
    (r.stderr.match(/sciobench: cell \d\/4 \w+ datasets=2\n/g) ?? []).length,
    2,
    "progress from rank 0 only",
  );
  assert.deepEqual(leftovers(tmp.path), []);
});

mpiTest(
  "mpi readers: the 4 ranks are the readers, of one shared file or one each; --per-rank rows and audit trails",
  async (launcher) => {
    using tmp = tempDir();
    const doc = await runMpiJson(launcher, [
      ...["readers", "--records", "4", "--length", "500", "--mode", "shared,separate"],
      ...["--per-rank", "--audit", "--dir", tmp.path],
    ]);
    // per mode: the aggregate row, then one row per rank
    assert.deepEqual(doc.rows.map((x) => [x.mode, x.rank]), [
      ...[["shared", "all"], ["shared", 0], ["shared", 1], ["shared", 2], ["shared", 3]],
      ...[["separate", "all"], ["separate", 0], ["separate", 1], ["separate", 2], ["separate", 3]],
    ]);
    type Phase = {
      name: string;
      files: { path: string; reads: number }[];
      processes: { rank: number; host: string; phase: Phase }[];
    };
    const trail = (x: Row) => (x.audit as unknown as { phases: Phase[] }).phases;
    const name = (path: string) => path.replace(/^.*\//, "");
    for (let k = 0; k < doc.rows.length; k += 5) {
      const [all, ...ranks] = doc.rows.slice(k, k + 5) as [Row, ...Row[]];
      const mode = String(all.mode);
      assert.equal(all.procs, 4);
      assert.equal(all.ranks, 4);
      // every reader read the whole file (markers included)
      assert.ok(Number(all.reader_bytes) >= 4 * Number(all.file_bytes), JSON.stringify(all));
      assert.ok(Number(all.max_s) <= Number(all.wall_s) + 1e-6);
      assert.equal(all.reader_bytes, ranks.reduce((s, x) => s + Number(x.reader_bytes), 0));
      assert.equal(all.wall_s, Math.max(...ranks.map((x) => Number(x.wall_s))));
      // the aggregate trail: one read phase with each rank's read as a process
      const read = trail(all).find((p) => p.name === "read")!;
      assert.deepEqual(read.processes.map((p) => p.rank), [0, 1, 2, 3]);
      for (const [rank, x] of ranks.entries()) {
        const file = mode === "shared" ? "shared-0.f77" : `separate-${rank}.f77`;
        assert.equal(name(String(x.read_path)), file);
        assert.ok(String(x.host).length > 0);
        assert.equal(read.processes[rank]!.host, x.host);
        assert.deepEqual(read.processes[rank]!.phase.files.map((f) => name(f.path)), [file]);
        // each rank's own trail: its write (rank 0 alone writes the shared file), then its read
        const phases = trail(x);
        const wrote = phases.find((p) => p.name === "write")!.files.map((f) => name(f.path));
        assert.deepEqual(wrote, mode === "separate" || rank === 0 ? [file] : []);
        const own = phases.find((p) => p.name === "read")!;
        assert.deepEqual(own.files.map((f) => name(f.path)), [file]);
        assert.ok(own.files[0]!.reads >= 1);
      }
    }
    assert.deepEqual(leftovers(tmp.path), []);
  },
);

mpiTest(
  "mpi records --layout shared: one file per target, bytes add up, counted once; refusals in one line",
  async (launcher) => {
    using tmp = tempDir();
    const doc = await runMpiJson(launcher, [
      ...["records", "--shape", "8x10x100", "--framing", "f77,gsd", "--layout", "shared"],
      ...["--reorder", "1", "--per-rank", "--dir", tmp.path],
    ]);
    assert.equal((doc.meta.options as unknown as { layout: string }).layout, "shared");
    assert.equal(doc.rows.length, 2 * 2 * 5);
    const one = 8 * 10 * 100 * 4;
    for (let k = 0; k < doc.rows.length; k += 5) {
      const [all, ...ranks] = doc.rows.slice(k, k + 5) as [Row, ...Row[]];
      assert.equal(all.bytes, 4 * one);
      // the one shared file: its size on rank 0's row, the sum over ranks
      assert.ok(Number(all.file_bytes) > 4 * one, JSON.stringify(all));
      assert.deepEqual(ranks.map((x) => x.file_bytes), [all.file_bytes, 0, 0, 0]);
    }
    assert.deepEqual(leftovers(tmp.path), []);
    // --direct (or --bs where O_DIRECT is refused) as a per-rank file takes it; records verified
    const direct = DIRECT_REFUSED === null;
    if (!direct) console.error(`skip part (--direct): ${DIRECT_REFUSED}`);
    const sized = await runMpiJson(launcher, [
      ...["records", "--shape", "8x10x100", "--framing", "raw,netcdf", "--layout", "shared"],
      ...(direct ? ["--direct"] : ["--bs", "64k"]),
      ...["--dir", tmp.path],
    ]);
    assert.equal(sized.rows.length, 2 * 2);
    for (const row of sized.rows) {
      assert.equal(row.direct, direct, JSON.stringify(row));
      assert.equal(row.bytes, 4 * one, JSON.stringify(row));
    }
    assert.deepEqual(leftovers(tmp.path), []);
    for (
      const [command, framing, why] of [
        [
          "records",
          "ieeeio",
          /--layout shared works for gsd, raw, netcdf, f77, mpiio(, [a-z0-9-]+)* only; 'ieeeio'/,
        ],
        [
          "records",
          "hdf5",
          /--layout shared works for gsd, raw, netcdf, f77, mpiio(, [a-z0-9-]+)* only; 'hdf5'/,
        ],
        ["scaling", "f77", /scaling --layout shared is not offered: IOspeed times/],
      ] as const
    ) {
      const r = await runMpi(launcher, [
        ...[command, "--framing", framing, "--layout", "shared", "--dir", tmp.path],
        ...(command === "records" ? ["--shape", "2x4"] : ["--datasets", "1", "--shape", "4"]),
      ]);
      assert.equal(r.code, 2, r.stderr);
      const errors = r.stderr.split("\n").filter((l) => l.startsWith("sciobench: error:"));
      assert.equal(errors.length, 1, r.stderr);
      assert.match(errors[0]!, why);
    }
    assert.deepEqual(leftovers(tmp.path), []);
  },
);

mpiTest(
  "mpi records and readers: one rank failing stops all four with one line naming it, no files left",
  async (launcher) => {
    using tmp = tempDir();
    for (
      const args of [
        ["records", "--shape", "4x10x10", "--framing", "raw", "--reorder", "1"],
        ["readers", "--records", "2", "--length", "100", "--mode", "separate"],
      ]
    ) {
      const r = await runMpi(launcher, [...args, "--dir", tmp.path], {
        env: { SCIOBENCH_TEST_FAIL_RANK: "1", SCIOBENCH_TEST_FAIL_PHASE: "read" },
      });
      assert.equal(r.code, 1, r.stderr);
      const errors = r.stderr.split("\n").filter((l) => l.startsWith("sciobench: error:"));
      assert.equal(errors.length, 1, r.stderr);
      assert.match(errors[0]!, /rank 1 on \S+ failed in read: injected failure/);
      assert.deepEqual(leftovers(tmp.path), [], `${args[0]}: no files left`);
    }
  },
);
