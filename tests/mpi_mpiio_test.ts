/**
 * The `mpiio` backend under Open MPI (`mpirun.openmpi`) and MPICH (`mpiexec.mpich`), 4 ranks:
 * raw frames through MPI-IO into one shared file (MPI_COMM_WORLD) or a file per rank
 * (MPI_COMM_SELF), collective or independent calls. Its files are byte for byte `raw`'s (a
 * shared one is what `raw --layout shared` writes for the same frames); table and records run,
 * verify and clean up, with rows saying the layout, collective or not, and the MPI library; the
 * durable point MPI_File_sync is in the audit trail; a rank whose MPI-IO call fails stops all
 * four with the library's own text in one line and no file left; `--hint romio_cb_write=enable`
 * (cb_nodes=1) against `disable` changes which processes write the file, as strace sees it, and
 * the meta says what the library reports of the hints. Outside MPI, mpiio and the MPI-IO flags
 * are refused in one line.
 * @module
 */
import assert from "node:assert/strict";
import { MAIN, PERMISSIONS, runCli, tempDir } from "./_helpers.ts";
import {
  assertFailingRankStopsAll,
  assertListedUnavailable,
  assertOneSyncEach,
  assertRecordsIndependent,
  haveCommand,
  type JsonDoc,
  type Launcher,
  leftovers,
  mpiTest,
  type Row,
  runMpi,
  runMpiJson,
  sameBytes,
  SMALL,
} from "./_mpi.ts";

const PROBE = new URL("./_mpi_raw_probe.ts", import.meta.url).pathname;

/** The probe's configurations: layout, collective, byte order, records x record shape. */
const CONFIGS = [
  "shared:on:native:6x10x100", // records of 4000 bytes: gathered into calls
  "shared:off:big:3x100x200", // records of 80 KB: a call each, byte-swapped
  "shared:on:little:5x100x200",
  "per-rank:on:native:6x10x100",
  "per-rank:off:big:3x100x200",
];

mpiTest(
  "mpiio: shared and per-rank files, collective or not, any byte order, are raw's byte for byte",
  async (launcher) => {
    using tmp = tempDir();
    const r = await runMpi(launcher, ["mpiio", tmp.path, CONFIGS.join(",")], { script: PROBE });
    assert.equal(r.code, 0, r.stderr);
    for (const [tag, config] of CONFIGS.entries()) {
      const shared = config.startsWith("shared");
      for (const suffix of shared ? [""] : [".r0", ".r1", ".r2", ".r3"]) {
        const raw = Deno.readFileSync(`${tmp.path}/${tag}.raw${suffix}`);
        const mpiio = Deno.readFileSync(`${tmp.path}/${tag}.mpiio${suffix}`);
        assert.ok(raw.length > 16 + 4000, config);
        sameBytes(mpiio, raw, `${config}${suffix}: the mpiio file is raw's`);
      }
    }
    // only the copies are left: every scratch file went
    assert.deepEqual(leftovers(tmp.path).filter((n) => n.startsWith(".")), []);
  },
);

/** The `mpiio` rows of `doc`: the aggregate, then one per rank. */
function mpiioRows(doc: JsonDoc): Row[] {
  return (doc.rows as Row[]).filter((x) => x.framing === "mpiio");
}

mpiTest(
  "mpiio: table --framing raw,mpiio --layout shared on 2 nodes runs, verifies, says how, cleans up",
  async (launcher) => {
    using tmp = tempDir();
    const doc = await runMpiJson(launcher, [
      ...["table", ...SMALL, "--framing", "raw,mpiio", "--layout", "shared", "--per-rank"],
      ...["--audit", "--dir", tmp.path],
    ], { nodes: ["node-a", "node-a", "node-b", "node-b"] });
    assert.deepEqual(doc.rows.map((x) => `${x.framing} ${x.rank}`), [
      ...["raw all", "raw 0", "raw 1", "raw 2", "raw 3"],
      ...["mpiio all", "mpiio 0", "mpiio 1", "mpiio 2", "mpiio 3"],
    ]);
    for (const name of ["layout", "collective", "library"]) assert.ok(doc.columns.includes(name));
    const [all, ...ranks] = mpiioRows(doc) as [Row, ...Row[]];
    const raw = (doc.rows as Row[])[0]!;
    assert.equal(all.error, "");
    assert.equal(all.layout, "shared");
    assert.equal(all.collective, true);
    assert.equal(raw.collective, "", "raw has no notion of collective calls");
    assert.equal(raw.library, "");
    assert.match(String(all.library), launcher.name === "openmpi" ? /^Open MPI v\d/ : /^MPICH/);
    // one file, every rank's frames in it, read back verified across nodes (--reorder 2)
    assert.equal(new Set(ranks.flatMap((x) => [x.write_path, x.read_path])).size, 1);
    assert.match(String(ranks[0]!.write_path), /table\.mpiio\.shared$/);
    assert.equal(all.frames, 4 * Number(ranks[0]!.frames));
    assert.equal(all.file_bytes, raw.file_bytes, "the same frames make a file of raw's size");
    assert.ok(Number(all.read_MiBps) > 0 && Number(all.random_MiBps) > 0);
    // the durable point: every rank's MPI_File_sync of the file inside its timed write
    assertOneSyncEach(ranks, "MPI_File_sync");
    const meta = doc.meta as unknown as {
      options: { collective: string; hint: Record<string, string> };
      mpi_io: { library: string; opens: { layout: string; access: string }[] };
    };
    assert.equal(meta.options.collective, "on");
    assert.deepEqual(meta.options.hint, {});
    assert.equal(meta.mpi_io.library, all.library);
    const opens = meta.mpi_io.opens.map((o) => `${o.layout} ${o.access}`);
    for (const kind of ["shared write", "shared read"]) assert.ok(opens.includes(kind), kind);
    assert.deepEqual(leftovers(tmp.path), [], "scratch files of every rank removed");
  },
);

mpiTest(
  "mpiio: records per-rank and table shared with --collective off say so in every row",
  async (launcher) => {
    using tmp = tempDir();
    await assertRecordsIndependent(launcher, "mpiio", [], "per-rank", tmp.path);
    const table = await runMpiJson(launcher, [
      ...["table", ...SMALL, "--framing", "mpiio", "--layout", "shared", "--collective", "off"],
      ...["--dir", tmp.path],
    ]);
    assert.equal(table.rows.length, 1);
    assert.equal(table.rows[0]!.collective, false);
    assert.equal(table.rows[0]!.layout, "shared");
    assert.equal((table.meta.options as unknown as { collective: string }).collective, "off");
    assert.deepEqual(leftovers(tmp.path), []);
  },
);

mpiTest(
  "mpiio: a rank whose MPI-IO write fails stops all four with the library's text, no file left",
  async (launcher) => {
    // the library's own words for a write to a file it opened read-only
    await assertFailingRankStopsAll(
      launcher,
      SMALL,
      "mpiio",
      "mpiio-write",
      /rank 2 on \S+ failed in warm-up: \S+table\.mpiio\.shared: writing 1 byte at byte \d+: MPI_File_write_at: .*read.only/i,
    );
  },
);

/** Processes (by pid) strace saw writing a file whose path ends with `suffix`, and their calls. */
function writersOf(trace: string, suffix: string): Map<number, number> {
  const writers = new Map<number, number>();
  const re = /^(\d+)\s+(?:pwrite64|pwritev2?|write|writev)\(\d+<([^>]+)>/;
  for (const line of trace.split("\n")) {
    const m = re.exec(line);
    if (m && m[2]!.endsWith(suffix)) {
      writers.set(Number(m[1]), (writers.get(Number(m[1])) ?? 0) + 1);
    }
  }
  return writers;
}

/**
 * Runs sciobench `args` under `launcher` (4 ranks) under strace following every process; returns
 * the JSON document and the trace of the write calls.
 */
async function traced(
  launcher: Launcher,
  args: readonly string[],
  dir: string,
  env: Record<string, string>,
): Promise<{ doc: JsonDoc; trace: string }> {
  const log = `${dir}/strace.log`;
  const out = await new Deno.Command("strace", {
    args: [
      ...["-f", "--seccomp-bpf", "-e", "trace=pwrite64,pwritev,pwritev2,write,writev", "-y"],
      ...["-o", log, launcher.program, ...launcher.args(4), Deno.execPath(), "run", "--quiet"],
      ...[...PERMISSIONS, MAIN, ...args, "--format", "json"],
    ],
    stdout: "piped",
    stderr: "piped",
    env: { NO_COLOR: "1", ...env },
    signal: AbortSignal.timeout(120_000),
  }).output();
  const dec = new TextDecoder();
  assert.equal(out.code, 0, dec.decode(out.stderr));
  const trace = Deno.readTextFileSync(log);
  Deno.removeSync(log);
  return { doc: JSON.parse(dec.decode(out.stdout)) as JsonDoc, trace };
}

/** Open MPI's default I/O component (ompio) ignores ROMIO's hints: the test selects ROMIO's. */
const ROMIO_ENV: Readonly<Record<string, Record<string, string>>> = {
  openmpi: { OMPI_MCA_io: "romio321" },
  mpich: {},
};

mpiTest(
  "mpiio: --hint romio_cb_write=enable (cb_nodes=1) against disable changes which processes write, and the meta says so",
  async (launcher) => {
    if (!haveCommand("strace")) return;
    using tmp = tempDir();
    const base = [
      ...["table", "--size", "2MiB", "--n", "4096", "--framing", "mpiio", "--layout", "shared"],
      ...["--no-warmup", "--dir", tmp.path],
    ];
    const env = ROMIO_ENV[launcher.name]!;
    const on = await traced(
      launcher,
      [
        ...base,
        ...["--hint", "romio_cb_write=enable", "--hint", "cb_nodes=1"],
        ...["--hint", "sciobench_no_such_hint=1"],
      ],
      tmp.path,
      env,
    );
    const off = await traced(
      launcher,
      [...base, "--hint", "romio_cb_write=disable"],
      tmp.path,
      env,
    );
    const aggregated = writersOf(on.trace, "table.mpiio.shared");
    const independent = writersOf(off.trace, "table.mpiio.shared");
    // collective buffering on one node: one aggregator process writes the whole file
    assert.equal(aggregated.size, 1, JSON.stringify([...aggregated]));
    // without it every rank writes its own frames
    assert.equal(independent.size, 4, JSON.stringify([...independent]));
    for (const [run, value] of [[on, "enable"], [off, "disable"]] as const) {
      assert.equal(run.doc.rows[0]!.error, "");
      const meta = run.doc.meta as unknown as {
        mpi_io: {
          opens: {
            layout: string;
            access: string;
            status: Record<string, string>;
            reported: Record<string, string>;
          }[];
        };
      };
      const write = meta.mpi_io.opens.find((o) => o.layout === "shared" && o.access === "write")!;
      assert.equal(write.status.romio_cb_write, "reported", JSON.stringify(write));
      assert.equal(write.reported.romio_cb_write, value);
    }
    if (launcher.name === "mpich") {
      // ROMIO drops a key it does not know; Open MPI hands back what it was given
      const meta = on.doc.meta as unknown as {
        mpi_io: { opens: { status: Record<string, string> }[] };
      };
      assert.equal(meta.mpi_io.opens[0]!.status.sciobench_no_such_hint, "not reported");
    }
    assert.deepEqual(leftovers(tmp.path), []);
  },
);

Deno.test("mpiio: outside MPI it and the MPI-IO flags are refused in one line", async () => {
  using tmp = tempDir();
  const table = ["table", "--size", "64KiB", "--framing"];
  const records = ["records", "--shape", "2x10", "--framing"];
  const cases: [string[], RegExp][] = [
    [[...table, "mpiio"], /--framing mpiio: it runs only under an MPI launcher/],
    [[...records, "raw,mpiio"], /--framing mpiio: it runs only under an MPI launcher/],
    [
      [...table, "raw", "--hint", "romio_cb_write=enable"],
      /--hint: for backends that go through MPI-IO \(mpiio(, [a-z0-9-]+)*, under MPI\) only; none of raw does/,
    ],
    [
      [...records, "raw", "--collective", "off"],
      /--collective: for backends that go through MPI-IO/,
    ],
    [[...table, "raw", "--hint", "cb_nodes"], /bad --hint 'cb_nodes': expected KEY=VALUE/],
    [[...table, "raw", "--collective", "maybe"], /bad --collective 'maybe'/],
  ];
  for (const [args, message] of cases) {
    const r = await runCli([...args, "--dir", tmp.path]);
    assert.equal(r.code, 2, `${args.join(" ")}: ${r.stderr}`);
    const errors = r.stderr.trim().split("\n").filter((l) => l.includes("error"));
    assert.equal(errors.length, 1, r.stderr);
    assert.match(errors[0]!, message);
  }
  await assertListedUnavailable(["mpiio"]);
  assert.deepEqual(leftovers(tmp.path), []);
});
