/**
 * `sciobench table` under mpirun (Open MPI) and mpiexec (MPICH) with 4 ranks: one output from
 * rank 0, aggregate bytes 4 x one rank's, --reorder reading another rank's file, per-rank rows,
 * one shared file (also with --bs and --direct), and one failing rank stopping all four with one
 * line and no files left.
 * @module
 */
import assert from "node:assert/strict";
import { tempDir } from "./_helpers.ts";
import { DIRECT_REFUSED } from "./_syscalls.ts";
import { type JsonDoc, leftovers, mpiTest, runMpi, runMpiJson } from "./_mpi.ts";
import { LINGER_GONE } from "./_linger_backend.ts";

const LINGER_SCRIPT = new URL("./_linger_backend.ts", import.meta.url).pathname;

type Row = Record<string, string | number>;

const SMALL = ["--size", "512KiB", "--n", "1024"];

mpiTest(
  "mpi table: rank 0 prints one document; bytes add up over 4 ranks; --reorder 1 reads the next rank's file",
  async (launcher) => {
    using tmp = tempDir();
    const r = await runMpi(launcher, [
      "table",
      ...[...SMALL, "--dir", tmp.path, "--reorder", "1", "--per-rank", "--format", "json"],
      "--audit",
    ]);
    assert.equal(r.code, 0, r.stderr);
    const doc = JSON.parse(r.stdout) as JsonDoc;
    assert.equal(doc.meta.ranks, 4);
    assert.equal(doc.meta.nodes, 1);
    assert.equal(doc.meta.ranks_per_node, 4);
    assert.match(String(doc.meta.mpi_library), launcher.name === "openmpi" ? /openmpi/ : /mpich/);
    assert.ok(doc.columns.includes("write_MiBps_max") && doc.columns.includes("read_s_min"));
    assert.equal(doc.rows.length, 5, "one aggregate row and one row per rank");
    const [all, ...ranks] = doc.rows as [Row, ...Row[]];
    assert.equal(all.rank, "all");
    assert.equal(all.ranks, 4);
    assert.deepEqual(ranks.map((x) => x.rank), [0, 1, 2, 3]);
    const one = Number(ranks[0]!.data_bytes);
    assert.ok(one > 0);
    assert.equal(all.data_bytes, 4 * one);
    assert.equal(all.read_bytes, 4 * Number(ranks[0]!.read_bytes));
    // the slowest rank sets the phase time, and the aggregate rate is all bytes over it
    const slowest = Math.max(...ranks.map((x) => Number(x.write_s)));
    assert.equal(all.write_s, slowest);
    assert.equal(all.write_s_max, slowest);
    const rate = Number(all.write_MiBps);
    assert.ok(Math.abs(rate - (4 * one) / 2 ** 20 / slowest) / rate < 1e-3, `${rate}`);
    assert.ok(Number(all.write_MiBps_min) <= Number(all.write_MiBps_max));
    // --reorder 1: rank r read the file rank r+1 wrote, and every rank wrote its own
    const written = ranks.map((x) => String(x.write_path));
    assert.equal(new Set(written).size, 4);
    for (const [i, x] of ranks.entries()) {
      assert.equal(x.read_path, written[(i + 1) % 4]);
      assert.notEqual(x.read_path, x.write_path);
      // the audit trail of the rank's read phase shows the file it really read
      const audit = x.audit as unknown as { phases: { name: string; files: { path: string }[] }[] };
      const read = audit.phases.find((ph) => ph.name === "read");
      assert.deepEqual(read?.files.map((f) => f.path), [written[(i + 1) % 4]]);
      assert.ok(String(x.host).length > 0);
    }
    assert.deepEqual(leftovers(tmp.path), [], "scratch files of every rank removed");
    assert.doesNotMatch(
      r.stderr,
      /sciobench: table .*\n.*sciobench: table /,
      "progress from rank 0 only",
    );
  },
);

mpiTest(
  "mpi table: CSV from rank 0 only, with the default --reorder 0 on one node",
  async (launcher) => {
    using tmp = tempDir();
    const r = await runMpi(launcher, ["table", ...SMALL, "--dir", tmp.path]);
    assert.equal(r.code, 0, r.stderr);
    const lines = r.stdout.trim().split("\n");
    assert.equal(lines.length, 2, r.stdout);
    const header = lines[0]!.split(",");
    const row = lines[1]!.split(",");
    const at = (c: string) => row[header.indexOf(c)];
    assert.equal(at("ranks"), "4");
    assert.equal(at("rank"), "all");
    assert.equal(at("write_path"), at("read_path"));
  },
);

mpiTest(
  "mpi table: 4 ranks named as 2 nodes (SCIOBENCH_MPI_NODE_NAME) read across nodes by default (--reorder 2)",
  async (launcher) => {
    using tmp = tempDir();
    const doc = await runMpiJson(
      launcher,
      ["table", ...SMALL, "--framing", "raw", "--per-rank", "--dir", tmp.path],
      { nodes: ["node-a", "node-a", "node-b", "node-b"] },
    );
    assert.equal(doc.meta.nodes, 2);
    assert.equal(doc.meta.ranks_per_node, 2);
    const options = doc.meta.options as unknown as { reorder: number };
    assert.equal(options.reorder, 2);
    const [all, ...ranks] = doc.rows as [Row, ...Row[]];
    assert.equal(all.host, "2 nodes");
    assert.deepEqual(ranks.map((x) => x.host), ["node-a", "node-a", "node-b", "node-b"]);
    for (const [i, x] of ranks.entries()) {
      // rank r reads the file rank r + 2 wrote: on the other node
      assert.equal(x.read_path, ranks[(i + 2) % 4]!.write_path);
      assert.notEqual(x.host, ranks[(i + 2) % 4]!.host);
    }
    assert.deepEqual(leftovers(tmp.path), []);
  },
);

mpiTest(
  "mpi table: one rank failing stops all four with one line naming it, and no files left",
  async (launcher) => {
    using tmp = tempDir();
    for (const phase of ["write", "read"]) {
      const r = await runMpi(launcher, ["table", ...SMALL, "--dir", tmp.path, "--reorder", "1"], {
        env: { SCIOBENCH_TEST_FAIL_RANK: "2", SCIOBENCH_TEST_FAIL_PHASE: phase },
      });
      assert.equal(r.code, 1, r.stderr);
      const errors = r.stderr.split("\n").filter((l) => l.startsWith("sciobench: error:"));
      assert.equal(errors.length, 1, r.stderr);
      assert.match(errors[0]!, new RegExp(`rank 2 on \\S+ failed in ${phase}: injected failure`));
      assert.deepEqual(leftovers(tmp.path), [], `no files left after a failure in ${phase}`);
    }
    // A failure outside any fence cannot be agreed on: that rank says so and MPI_Abort stops all.
    const r = await runMpi(launcher, ["table", ...SMALL, "--dir", tmp.path], {
      env: { SCIOBENCH_TEST_FAIL_RANK: "2", SCIOBENCH_TEST_FAIL_PHASE: "unfenced" },
    });
    assert.equal(r.code, 1, r.stderr);
    // (another rank may also report what the failed rank's cleanup did to it, before the abort)
    const errors = r.stderr.split("\n").filter((l) => l.startsWith("sciobench: error:"));
    assert.ok(errors.every((l) => /^sciobench: error: rank \d on \S+: /.test(l)), r.stderr);
    assert.ok(errors.some((l) => /rank 2 on \S+: injected failure in phase unfenced/.test(l)));
    assert.deepEqual(leftovers(tmp.path), [], "no files left after MPI_Abort");
  },
);

mpiTest(
  "mpi table: a command that is not rank-aware refuses to run under MPI, said once",
  async (launcher) => {
    using tmp = tempDir();
    const r = await runMpi(launcher, ["write", "--frames", "2", "--n", "16", `${tmp.path}/x.raw`]);
    assert.equal(r.code, 2, r.stderr);
    assert.equal(
      r.stderr.match(/sciobench: error: 'write' does not run under MPI/g)?.length,
      1,
      r.stderr,
    );
    assert.deepEqual(leftovers(tmp.path), []);
  },
);

mpiTest(
  "mpi table --layout shared: one file for all ranks, each rank its frames; a failing writer stops all",
  async (launcher) => {
    using tmp = tempDir();
    const doc = await runMpiJson(launcher, [
      ...["table", ...SMALL, "--framing", "gsd,netcdf", "--layout", "shared", "--reorder", "1"],
      ...["--per-rank", "--dir", tmp.path],
    ]);
    assert.equal(doc.rows.length, 2 * 5);
    for (let k = 0; k < doc.rows.length; k += 5) {
      const [all, ...ranks] = doc.rows.slice(k, k + 5) as [Row, ...Row[]];
      const frames = Number(ranks[0]!.frames);
      assert.equal(all.frames, 4 * frames);
      assert.equal(all.data_bytes, 4 * Number(ranks[0]!.data_bytes));
      // one file: every rank's paths name it, and its size is counted once
      assert.equal(new Set(ranks.flatMap((x) => [x.write_path, x.read_path])).size, 1);
      assert.match(String(ranks[0]!.write_path), /\.shared$/);
      assert.ok(Number(all.file_bytes) > Number(all.data_bytes));
      assert.deepEqual(ranks.slice(1).map((x) => x.file_bytes), [0, 0, 0]);
    }
    // --bs and --direct as a per-rank file takes them; the reads verify every rank's frames
    const direct = DIRECT_REFUSED === null;
    if (!direct) console.error(`skip part (--direct): ${DIRECT_REFUSED}`);
    const sized = await runMpiJson(launcher, [
      ...["table", ...SMALL, "--framing", "raw,gsd", "--layout", "shared", "--bs", "64k"],
      ...(direct ? ["--direct"] : []),
      ...["--dir", tmp.path],
    ]);
    assert.deepEqual(sized.rows.map((x) => x.framing), ["raw", "gsd"]);
    for (const row of sized.rows) {
      assert.equal(row.bs_bytes, 65536, JSON.stringify(row));
      assert.equal(row.direct, direct, JSON.stringify(row));
      assert.ok(Number(row.file_bytes) > Number(row.data_bytes), JSON.stringify(row));
    }
    assert.deepEqual(leftovers(tmp.path), []);
    const r = await runMpi(launcher, ["table", ...SMALL, "--layout", "shared", "--dir", tmp.path], {
      env: { SCIOBENCH_TEST_FAIL_RANK: "2", SCIOBENCH_TEST_FAIL_PHASE: "shared-write" },
    });
    assert.equal(r.code, 1, r.stderr);
    const errors = r.stderr.split("\n").filter((l) => l.startsWith("sciobench: error:"));
    assert.equal(errors.length, 1, r.stderr);
    assert.match(
      errors[0]!,
      /rank 2 on \S+ failed in (warm-up|write): injected failure in phase shared-write/,
    );
    assert.deepEqual(leftovers(tmp.path), []);
    const refused = await runMpi(launcher, [
      ...["table", ...SMALL, "--framing", "ieeeio", "--layout", "shared", "--dir", tmp.path],
    ]);
    assert.equal(refused.code, 2, refused.stderr);
    assert.equal(
      refused.stderr.match(
        /sciobench: error: --layout shared works for gsd, raw, netcdf, f77, mpiio(, [a-z0-9-]+)* only/g,
      )
        ?.length,
      1,
      refused.stderr,
    );
    assert.deepEqual(leftovers(tmp.path), []);
  },
);

mpiTest(
  "mpi table: no rank removes the shared warm-up directory while another still writes in it",
  async (launcher) => {
    using tmp = tempDir();
    const r = await runMpi(
      launcher,
      ["table", "--framing", "linger", "--size", "256KiB", "--n", "1024", "--dir", tmp.path],
      { script: LINGER_SCRIPT },
    );
    assert.equal(r.code, 0, r.stderr);
    assert.ok(!r.stderr.includes(LINGER_GONE), r.stderr);
    assert.deepEqual(leftovers(tmp.path), []);
  },
);
