/**
 * `--segments S` under Open MPI and MPICH, 4 ranks, `--layout shared`: each rank's frames are S
 * blocks, block s of rank r at frame (s x 4 + r) x block of the file, as IOR's `-s` places its
 * segments. The shared file written by `raw` (the native writer) and by `mpiio` (MPI-IO) is read
 * back here with the raw framing: which rank wrote each frame is told by its data (each rank's
 * table frames are seeded by its rank), and the order is the interleaved one; the two files are
 * byte for byte the same; every rank verifies its reads (`--reorder 1`: another rank's frames,
 * through the same mapping); `--segments 1` makes the calls of a run without it; a count that
 * does not divide the frames per rank, a file per rank, one process, and a backend that writes
 * each rank's frames as one block are refused in one line.
 * @module
 */
import assert from "node:assert/strict";
import { Buffer } from "node:buffer";
import { MAIN, PERMISSIONS, runCli, tempDir } from "./_helpers.ts";
import {
  haveCommand,
  type JsonDoc,
  type Launcher,
  leftovers,
  mpiTest,
  runMpi,
  runMpiJson,
} from "./_mpi.ts";
import { backendByName } from "../lib/backends/registry.ts";
import { TableFrames } from "../lib/workloads/table/frames.ts";
import { RecordFrames } from "../lib/workloads/records/frames.ts";
import { chunkBytes } from "../lib/framings/kit.ts";

type Row = Record<string, string | number | boolean>;

const PROBE = new URL("./_mpi_segments_probe.ts", import.meta.url).pathname;

/** N = 1024: frames of 28 KiB; 224 KiB makes 8 frames a rank. */
const N = 1024;
const SIZE = 224 * 1024;
const FRAMES = 8;
const SMALL = ["--size", "224KiB", "--n", String(N)];

/**
 * The rank whose seeded data each frame of the raw file `path` holds (the probe's seed, 5),
 * read with the raw framing; fails on a frame no rank wrote.
 */
function writersOf(path: string): number[] {
  const source = backendByName("raw").openReader(path);
  try {
    const ranks = [0, 1, 2, 3].map((r) => new TableFrames(N, 5, r));
    const out: number[] = [];
    for (let g = 0; g < source.frameCount; g++) {
      const got = Buffer.concat(source.readFrame(g).map((c) => chunkBytes(c)));
      const r = ranks.findIndex((f) =>
        got.equals(Buffer.concat(f.frame(g).chunks.map((c) => chunkBytes(c))))
      );
      assert.ok(r >= 0, `${path}: frame ${g} is no rank's`);
      out.push(r);
    }
    return out;
  } finally {
    source.close();
  }
}

/** The writer of each of 4 x FRAMES frames when each rank's frames are `segments` blocks. */
function interleaved(segments: number): number[] {
  const block = FRAMES / segments;
  return Array.from({ length: 4 * FRAMES }, (_, g) => Math.floor(g / block) % 4);
}

/** Runs the probe: one table cell of `backend` with `segments`, the file kept as `tag`. */
async function probe(
  launcher: Launcher,
  dir: string,
  backend: string,
  segments: string,
  tag: string,
): Promise<Row[]> {
  const r = await runMpi(launcher, [dir, backend, segments, tag, String(SIZE), String(N)], {
    script: PROBE,
  });
  assert.equal(r.code, 0, r.stderr);
  const rows = r.stdout.trim().split("\n").map((l) => JSON.parse(l) as Row);
  assert.equal(rows.length, 4, r.stdout);
  for (const x of rows) {
    // every rank read rank + 1's frames back through the mapping, each one verified
    assert.equal(x.error, "", `${backend} --segments ${segments}: ${JSON.stringify(x)}`);
    assert.equal(x.frames, FRAMES);
    assert.equal(x.segments, segments === "-" ? 1 : Number(segments));
  }
  return rows;
}

mpiTest(
  "segments: raw and mpiio shared files interleave the ranks' blocks as IOR's -s, byte for byte",
  async (launcher) => {
    using tmp = tempDir();
    for (const segments of ["2", "4"]) {
      await probe(launcher, tmp.path, "raw", segments, `raw.${segments}`);
      await probe(launcher, tmp.path, "mpiio", segments, `mpiio.${segments}`);
      const want = interleaved(Number(segments));
      assert.deepEqual(writersOf(`${tmp.path}/raw.${segments}`), want, `raw -s ${segments}`);
      assert.deepEqual(writersOf(`${tmp.path}/mpiio.${segments}`), want, `mpiio -s ${segments}`);
      assert.ok(
        Buffer.from(Deno.readFileSync(`${tmp.path}/mpiio.${segments}`)).equals(
          Deno.readFileSync(`${tmp.path}/raw.${segments}`),
        ),
        `--segments ${segments}: the mpiio file is raw's`,
      );
    }
    // one segment, or none asked: each rank's frames one block, in rank order
    await probe(launcher, tmp.path, "mpiio", "-", "mpiio.none");
    await probe(launcher, tmp.path, "raw", "1", "raw.one");
    assert.deepEqual(writersOf(`${tmp.path}/mpiio.none`), interleaved(1));
    assert.deepEqual(writersOf(`${tmp.path}/raw.one`), interleaved(1));
    assert.notDeepEqual(interleaved(2), interleaved(1));
    const kept = ["mpiio.2", "mpiio.4", "mpiio.none", "raw.2", "raw.4", "raw.one"];
    assert.deepEqual(leftovers(tmp.path).sort(), kept, "only the kept copies are left");
  },
);

mpiTest(
  "segments: records of raw and mpiio interleave the ranks' blocks in the shared file",
  async (launcher) => {
    using tmp = tempDir();
    for (const backend of ["raw", "mpiio"]) {
      const r = await runMpi(launcher, [tmp.path, `records:${backend}`, "2", backend, "50", "8"], {
        script: PROBE,
      });
      assert.equal(r.code, 0, r.stderr);
      const runs = r.stdout.trim().split("\n").map((l) => JSON.parse(l) as Row);
      assert.equal(runs.length, 4 * 2, r.stdout);
      for (const x of runs) assert.equal(x.error, "", JSON.stringify(x));
      // record g's data is its writer's (seeded by rank), stamped g
      const source = backendByName("raw").openReader(`${tmp.path}/${backend}`);
      try {
        const ranks = [0, 1, 2, 3].map((k) => new RecordFrames([8, 50], "float32", 5, k));
        const writers = Array.from({ length: source.frameCount }, (_, g) => {
          const got = Buffer.from(chunkBytes(source.readFrame(g)[0]!));
          return ranks.findIndex((f) => got.equals(chunkBytes(f.frame(g).chunks[0]!)));
        });
        assert.deepEqual(writers, interleaved(2), backend);
      } finally {
        source.close();
      }
    }
  },
);

/** Each rank's write and read calls on its files, as the audit trail counts them. */
function callsOf(doc: JsonDoc): string[] {
  return (doc.rows as Row[]).filter((x) => x.rank !== "all").map((x) => {
    const audit = x.audit as unknown as {
      phases: {
        name: string;
        files: { writes: number; writeBytes: number; readLog: number[] }[];
      }[];
    };
    // (the untimed backend warm-up logs its reads on whichever rank it first runs on)
    const cell = audit.phases.filter((p) => p.name !== "backend warm-up");
    return JSON.stringify(
      cell.map((p) => [p.name, p.files.map((f) => [f.writes, f.writeBytes, f.readLog])]),
    );
  });
}

mpiTest(
  "segments: table rows and meta say it; --segments 1 makes the calls of a run without it",
  async (launcher) => {
    using tmp = tempDir();
    const base = [
      ...["table", ...SMALL, "--framing", "raw", "--layout", "shared", "--per-rank", "--audit"],
      ...["--reorder", "1", "--dir", tmp.path],
    ];
    const none = await runMpiJson(launcher, base);
    const one = await runMpiJson(launcher, [...base, "--segments", "1"]);
    assert.deepEqual(callsOf(one), callsOf(none));
    assert.equal(callsOf(none).length, 4);
    const two = await runMpiJson(launcher, [
      ...["table", ...SMALL, "--framing", "raw,mpiio", "--layout", "shared", "--segments", "2"],
      ...["--dir", tmp.path],
    ]);
    assert.ok(two.columns.includes("segments"));
    assert.deepEqual(two.rows.map((x) => [x.framing, x.segments, x.error]), [
      ["raw", 2, ""],
      ["mpiio", 2, ""],
    ]);
    assert.equal((two.meta.options as unknown as { segments: number }).segments, 2);
    assert.equal(none.rows[0]!.segments, 1);
    assert.deepEqual(leftovers(tmp.path), []);
  },
);

/** The one error line of a refused run under `launcher`, after asserting exit 2. */
async function refusal(launcher: Launcher, args: readonly string[]): Promise<string> {
  const r = await runMpi(launcher, args);
  assert.equal(r.code, 2, r.stderr);
  const lines = r.stderr.split("\n").filter((l) => l.startsWith("sciobench: error:"));
  assert.ok(lines.length >= 1, r.stderr);
  // every rank refuses the same way, each in one line
  assert.equal(new Set(lines).size, 1, r.stderr);
  return lines[0]!;
}

mpiTest("segments: refused in one line where it cannot apply", async (launcher) => {
  using tmp = tempDir();
  const table = ["table", ...SMALL, "--dir", tmp.path];
  assert.match(
    await refusal(launcher, [
      ...table,
      "--framing",
      "raw",
      "--layout",
      "shared",
      "--segments",
      "3",
    ]),
    /--segments 3: each rank writes 8 frames, not a multiple of 3; give a --segments that divides/,
  );
  assert.match(
    await refusal(launcher, [...table, "--framing", "raw", "--segments", "2"]),
    /--segments 2: interleaves the ranks' frames in one shared file; .*--layout shared/,
  );
  assert.match(
    await refusal(launcher, [
      ...["records", "--shape", "6x10", "--framing", "mpiio", "--layout", "shared"],
      ...["--segments", "4", "--dir", tmp.path],
    ]),
    /--segments 4: each rank writes 6 frames, not a multiple of 4/,
  );
  // a backend that writes each rank's frames as one block (its capability says so); one whose
  // library is not built for this MPI is left out before (no usable backend)
  let refused = 0;
  for (const name of ["hdf5-mpio", "pnetcdf", "netcdf4-par"]) {
    const r = await runMpi(launcher, [
      ...table,
      ...["--framing", name, "--layout", "shared", "--segments", "2"],
    ]);
    assert.equal(r.code, 2, `${name}: ${r.stderr}`);
    if (/no usable backend left/.test(r.stderr)) continue;
    refused++;
    assert.match(
      r.stderr,
      new RegExp(`--segments 2: ${name} writes each rank's frames as one block; use --segments 1`),
    );
  }
  assert.ok(refused > 0, "no MPI-IO library backend to refuse --segments 2 here");
  assert.deepEqual(leftovers(tmp.path), []);
});

/** Open MPI's default I/O component (ompio) splits calls its own way: the test selects ROMIO. */
const ROMIO_ENV: Readonly<Record<string, Record<string, string>>> = {
  openmpi: { OMPI_MCA_io: "romio321" },
  mpich: {},
};

/**
 * The byte counts of the pwrite64 calls every process made on a file ending `suffix` while
 * sciobench `args` ran under `launcher` (4 ranks) and strace; asserts the run's rows have no error.
 */
async function writeSizes(
  launcher: Launcher,
  args: readonly string[],
  dir: string,
  suffix: string,
): Promise<number[]> {
  const log = `${dir}/strace.log`;
  const out = await new Deno.Command("strace", {
    args: [
      ...["-f", "--seccomp-bpf", "-e", "trace=pwrite64", "-y", "-o", log],
      ...[launcher.program, ...launcher.args(4), Deno.execPath(), "run", "--quiet"],
      ...[...PERMISSIONS, MAIN, ...args, "--format", "json"],
    ],
    stdout: "piped",
    stderr: "piped",
    env: { NO_COLOR: "1", ...ROMIO_ENV[launcher.name] },
    signal: AbortSignal.timeout(120_000),
  }).output();
  const dec = new TextDecoder();
  assert.equal(out.code, 0, dec.decode(out.stderr));
  for (const x of (JSON.parse(dec.decode(out.stdout)) as JsonDoc).rows) assert.equal(x.error, "");
  const sizes: number[] = [];
  // the length asked (a call another process interrupts ends its line `<unfinished ...>`)
  const re = /^\d+\s+pwrite64\(\d+<([^>]+)>, .*, (\d+), \d+(?:\)| <unfinished)/;
  for (const line of Deno.readTextFileSync(log).split("\n")) {
    const m = re.exec(line);
    if (m && m[1]!.endsWith(suffix)) sizes.push(Number(m[2]));
  }
  Deno.removeSync(log);
  return sizes;
}

mpiTest("mpiio: --bs is the size of each MPI-IO call (IOR's -t)", async (launcher) => {
  if (!haveCommand("strace")) return;
  using tmp = tempDir();
  // independent calls: ROMIO hands each contiguous call to the file system as it is
  const base = [
    ...["table", ...SMALL, "--framing", "mpiio", "--layout", "shared", "--collective", "off"],
    ...["--segments", "2", "--no-warmup", "--dir", tmp.path],
  ];
  const bs = await writeSizes(launcher, [...base, "--bs", "8KiB"], tmp.path, ".mpiio.shared");
  // the frames' bytes, 8 frames of 28 KiB a rank, in calls of 8 KiB: 28 a rank (the header
  // and index are rank 0's own calls, smaller)
  assert.equal(bs.filter((n) => n === 8192).length, 4 * 28, JSON.stringify(bs));
  assert.ok(bs.every((n) => n <= 8192), JSON.stringify(bs));
  // without --bs a rank's frames of a segment go out gathered, in one call
  const whole = await writeSizes(launcher, base, tmp.path, ".mpiio.shared");
  assert.equal(whole.filter((n) => n === 4 * 28672).length, 4 * 2, JSON.stringify(whole));
  // collective calls of bs bytes, written and read back verified
  const doc = await runMpiJson(launcher, [
    ...["table", ...SMALL, "--framing", "mpiio", "--layout", "shared", "--bs", "12KiB"],
    ...["--reorder", "1", "--dir", tmp.path],
  ]);
  assert.deepEqual(doc.rows.map((x) => [x.error, x.bs_bytes]), [["", 12288]]);
  assert.deepEqual(leftovers(tmp.path), []);
});

Deno.test("segments: one process refuses --segments above 1 in one line", async () => {
  const r = await runCli(["table", ...SMALL, "--framing", "raw", "--segments", "2"]);
  assert.equal(r.code, 2, r.stderr);
  assert.match(r.stderr, /^sciobench: error: --segments 2: interleaves the ranks' frames/);
  assert.equal(r.stderr.trim().split("\n").length, 1, r.stderr);
});
