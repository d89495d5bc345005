/**
 * Helpers for tests under an MPI launcher: Open MPI's `mpirun.openmpi` and MPICH's
 * `mpiexec.mpich` with 4 ranks. The deno binary is launched directly (MPICH's
 * Hydra passes its PMI file descriptor, which the npx wrapper does not forward). A test whose
 * launcher is missing skips with a message, and fails under SCIOBENCH_REQUIRE_PEERS=1.
 * @module
 */
import assert from "node:assert/strict";
import {
  type CliResult,
  commandMissing,
  peerTest,
  PERMISSIONS,
  REQUIRE_PEERS,
  runCli,
  tempDir,
} from "./_helpers.ts";

/** One MPI launcher and how to start N ranks with it. */
export interface Launcher {
  /** Short name for test titles: openmpi or mpich. */
  readonly name: string;
  /** The launcher program. */
  readonly program: string;
  /** Arguments before the program to run, for `ranks` ranks. */
  args(ranks: number): string[];
  /** Arguments running `argv` once per entry of `envs`, that rank with those variables (MPMD). */
  mpmd(argv: readonly string[], envs: readonly Record<string, string>[]): string[];
}

/** `contexts` joined by `:`, the MPMD separator of both launchers. */
function contexts(parts: string[][]): string[] {
  return parts.flatMap((p, i) => (i === 0 ? p : [":", ...p]));
}

/** Both launchers Debian installs side by side. */
export const LAUNCHERS: readonly Launcher[] = [
  {
    name: "openmpi",
    program: "mpirun.openmpi",
    args: (n) => ["--allow-run-as-root", "--oversubscribe", "-np", String(n)],
    mpmd: (argv, envs) => [
      ...["--allow-run-as-root", "--oversubscribe"],
      ...contexts(envs.map((env) => [
        ...["-np", "1"],
        ...Object.entries(env).flatMap(([k, v]) => ["-x", `${k}=${v}`]),
        ...argv,
      ])),
    ],
  },
  {
    name: "mpich",
    program: "mpiexec.mpich",
    args: (n) => ["-n", String(n)],
    mpmd: (argv, envs) =>
      contexts(envs.map((env) => [
        ...["-n", "1"],
        ...Object.entries(env).flatMap(([k, v]) => ["-env", k, v]),
        ...argv,
      ])),
  },
];

const MAIN = new URL("../main.ts", import.meta.url).pathname;

/**
 * Runs `script` (a Deno program, main.ts by default) with `args` under `launcher` with `ranks`
 * ranks; stopped after `timeoutS` seconds so a deadlock fails the test instead of hanging it.
 */
export async function runMpi(
  launcher: Launcher,
  args: readonly string[],
  options: {
    ranks?: number;
    script?: string;
    cwd?: string;
    env?: Record<string, string>;
    /** Each rank's SCIOBENCH_MPI_NODE_NAME (one rank per entry): ranks that look like nodes. */
    nodes?: readonly string[];
    /** Each rank's own variables (one rank per entry): a rank unlike the others. */
    rankEnvs?: readonly Record<string, string>[];
    timeoutS?: number;
  } = {},
): Promise<CliResult> {
  const argv = [Deno.execPath(), "run", "--quiet", ...PERMISSIONS, options.script ?? MAIN, ...args];
  const envs = options.rankEnvs ??
    options.nodes?.map((name) => ({ SCIOBENCH_MPI_NODE_NAME: name }));
  const out = await new Deno.Command(launcher.program, {
    args: envs ? launcher.mpmd(argv, envs) : [...launcher.args(options.ranks ?? 4), ...argv],
    cwd: options.cwd,
    stdout: "piped",
    stderr: "piped",
    env: { NO_COLOR: "1", ...options.env },
    signal: AbortSignal.timeout((options.timeoutS ?? 120) * 1000),
  }).output();
  const dec = new TextDecoder();
  return { code: out.code, stdout: dec.decode(out.stdout), stderr: dec.decode(out.stderr) };
}

/** Registers `fn` once per launcher; skipped (or failed under REQUIRE_PEERS) without it. */
export function mpiTest(name: string, fn: (launcher: Launcher) => Promise<void>): void {
  for (const launcher of LAUNCHERS) {
    peerTest(
      `${name} [${launcher.name}]`,
      () => commandMissing(launcher.program),
      () => fn(launcher),
    );
  }
}

/**
 * Registers `fn` under one launcher (`openmpi` or `mpich`) alone, for a library built for that
 * MPI only; skipped (or failed under REQUIRE_PEERS) without it.
 */
export function mpiTestUnder(
  name: string,
  launcherName: string,
  fn: (launcher: Launcher) => Promise<void>,
): void {
  const launcher = LAUNCHERS.find((l) => l.name === launcherName)!;
  peerTest(
    `${name} [${launcher.name}]`,
    () => commandMissing(launcher.program),
    () => fn(launcher),
  );
}

/** Names of the entries left in `dir` (a scratch parent must end empty). */
export function leftovers(dir: string): string[] {
  return [...Deno.readDirSync(dir)].map((e) => e.name);
}

/**
 * Runs a `table` of `framing` on a shared file under `launcher` (`--collective` on, then off)
 * with the hidden hook failing rank 2's write in `phase`, and asserts that the run fails with
 * one error line, matching `error` (the library's own words), and leaves no file behind.
 */
export async function assertFailingRankStopsAll(
  launcher: Launcher,
  size: readonly string[],
  framing: string,
  phase: string,
  error: RegExp,
): Promise<void> {
  using tmp = tempDir();
  for (const collective of ["on", "off"]) {
    const r = await runMpi(launcher, [
      ...["table", ...size, "--framing", framing, "--layout", "shared"],
      ...["--collective", collective, "--dir", tmp.path],
    ], {
      env: { SCIOBENCH_TEST_FAIL_RANK: "2", SCIOBENCH_TEST_FAIL_PHASE: phase },
      timeoutS: 90,
    });
    assert.equal(r.code, 1, r.stderr);
    const errors = r.stderr.split("\n").filter((l) => l.startsWith("sciobench: error:"));
    assert.equal(errors.length, 1, r.stderr);
    assert.match(errors[0]!, error);
    assert.deepEqual(leftovers(tmp.path), [], `no file left (--collective ${collective})`);
  }
}

/** A `--format json` document: run facts, columns and rows. */
export interface JsonDoc {
  meta: Record<string, string | number>;
  columns: string[];
  rows: Record<string, string | number>[];
}

/** Runs sciobench `args` (with `--format json`) under `launcher`; asserts exit 0 and one document. */
export async function runMpiJson(
  launcher: Launcher,
  args: readonly string[],
  options: { nodes?: readonly string[] } = {},
): Promise<JsonDoc> {
  const r = await runMpi(launcher, [...args, "--format", "json"], options);
  assert.equal(r.code, 0, r.stderr);
  return JSON.parse(r.stdout) as JsonDoc;
}

/** A row of a `--format json` document as the MPI tests read it. */
export type Row = Record<string, string | number | boolean>;

/** Small table cells: N = 4096 gives frames of two chunks (48 KiB and 64 KiB). */
export const SMALL = ["--size", "512KiB", "--n", "4096"];

/**
 * Runs `records --shape 6x100x200 --framing FRAMING --collective off` (with `args` before its
 * `--reorder 1 --per-rank --dir DIR`) under `launcher` and asserts its rows, a write and a read
 * row each aggregate and ranks, went without error and say `layout` and collective off.
 */
export async function assertRecordsIndependent(
  launcher: Launcher,
  framing: string,
  args: readonly string[],
  layout: "shared" | "per-rank",
  dir: string,
): Promise<void> {
  const records = await runMpiJson(launcher, [
    ...["records", "--shape", "6x100x200", "--framing", framing, "--collective", "off"],
    ...args,
    ...["--reorder", "1", "--per-rank", "--dir", dir],
  ]);
  assert.equal(records.rows.length, 2 * 5, "a write and a read row, each aggregate and ranks");
  for (const x of records.rows as Row[]) {
    assert.equal(x.error, "", JSON.stringify(x));
    assert.equal(x.layout, layout);
    assert.equal(x.collective, false);
  }
}

/** Asserts every rank's audited write holds one `call` (the durable point) of its own file. */
export function assertOneSyncEach(ranks: readonly Row[], call: string): void {
  for (const x of ranks) {
    const audit = x.audit as unknown as {
      phases: { name: string; syncs: { call: string; path: string; atS: number }[] }[];
    };
    const write = audit.phases.find((p) => p.name === "write")!;
    const syncs = write.syncs.filter((s) => s.call === call);
    assert.equal(syncs.length, 1, `rank ${x.rank}: ${JSON.stringify(write.syncs)}`);
    assert.equal(syncs[0]!.path, x.write_path);
    assert.ok(syncs[0]!.atS >= 0);
  }
}

/**
 * Under MPICH: `table --framing raw,NAME --layout shared` runs raw and skips `name` in one line
 * saying its library (`library`, a pattern of its file name) is built for Open MPI.
 */
export async function assertBuiltForOpenMpi(
  launcher: Launcher,
  name: string,
  library: string,
): Promise<void> {
  using tmp = tempDir();
  const r = await runMpi(launcher, [
    ...["table", ...SMALL, "--framing", `raw,${name}`, "--layout", "shared"],
    ...["--dir", tmp.path, "--format", "json"],
  ]);
  assert.equal(r.code, 0, r.stderr);
  const lines = r.stderr.split("\n").filter((l) => l.includes(name));
  assert.equal(lines.length, 1, r.stderr);
  assert.match(
    lines[0]!,
    new RegExp(
      `skipping: backend '${name}' is unavailable: \\S+${library}\\S* is built for Open MPI and ` +
        "this run's MPI is MPICH",
    ),
  );
  const doc = JSON.parse(r.stdout) as JsonDoc;
  assert.deepEqual([...new Set(doc.rows.map((x) => x.framing))], ["raw"]);
  assert.deepEqual(leftovers(tmp.path), []);
}

/** ncdump's output for `args`, or fails with its stderr. */
export function ncdump(...args: string[]): string {
  const out = new Deno.Command("ncdump", { args, stdout: "piped", stderr: "piped" }).outputSync();
  const dec = new TextDecoder();
  assert.equal(out.code, 0, dec.decode(out.stderr));
  return dec.decode(out.stdout);
}

/** Skips (or fails under SCIOBENCH_REQUIRE_PEERS=1) without `cmd`; true when it is there. */
export function haveCommand(cmd: string): boolean {
  const why = commandMissing(cmd);
  if (why === null) return true;
  if (REQUIRE_PEERS) throw new Error(`required by SCIOBENCH_REQUIRE_PEERS=1: ${why}`);
  console.error(`skip: ${why}`);
  return false;
}

/**
 * What a probe keeps of every file its `records` run writes (its `afterWrite`): a copy
 * `DIR/TAG.BACKEND` of a shared file (rank 0's) or `DIR/TAG.BACKEND.rRANK` of a rank's own.
 */
export function keepCopies(
  dir: string,
  tag: number,
  layout: "shared" | "per-rank",
  rank: number,
): (path: string, backend: string) => void {
  return (path, backend) => {
    if (layout === "shared" && rank === 0) Deno.copyFileSync(path, `${dir}/${tag}.${backend}`);
    if (layout === "per-rank") Deno.copyFileSync(path, `${dir}/${tag}.${backend}.r${rank}`);
  };
}

/**
 * Asserts `got` is `want` byte for byte, naming the first byte that differs (a diff of two files
 * would take the test's memory).
 */
export function sameBytes(got: Uint8Array, want: Uint8Array, what: string): void {
  const n = Math.min(got.length, want.length);
  let at = 0;
  while (at < n && got[at] === want[at]) at++;
  if (at < n || got.length !== want.length) {
    assert.fail(`${what}: ${got.length} bytes against ${want.length}, the first differs at ${at}`);
  }
}

/**
 * Outside MPI: `table` and `records` with `--framing raw,NAME` are refused in one line (exit 2),
 * for each of `names`, and nothing is left in `dir`.
 */
export async function assertRefusedOutsideMpi(
  names: readonly string[],
  dir: string,
): Promise<void> {
  for (const name of names) {
    for (const args of [["table", "--size", "64KiB"], ["records", "--shape", "2x10"]]) {
      const r = await runCli([...args, "--framing", `raw,${name}`, "--dir", dir]);
      assert.equal(r.code, 2, r.stderr);
      const errors = r.stderr.trim().split("\n").filter((l) => l.includes("error"));
      assert.equal(errors.length, 1, r.stderr);
      assert.match(errors[0]!, new RegExp(`--framing ${name}: it runs only under an MPI launcher`));
    }
  }
}

/** Outside MPI: `framings` lists each of `names` as unavailable, saying it needs a launcher. */
export async function assertListedUnavailable(names: readonly string[]): Promise<void> {
  const list = await runCli(["framings", "--format", "json"]);
  assert.equal(list.code, 0, list.stderr);
  const doc = JSON.parse(list.stdout) as {
    backends: { name: string; available: boolean; unavailable?: string }[];
  };
  for (const name of names) {
    const b = doc.backends.find((x) => x.name === name)!;
    assert.equal(b.available, false);
    assert.match(b.unavailable!, /runs only under an MPI launcher \(mpirun, mpiexec, srun\)/);
  }
}
