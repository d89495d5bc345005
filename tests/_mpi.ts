/**
 * Helpers for tests under an MPI launcher: Open MPI's `mpirun.openmpi` and MPICH's
 * `mpiexec.mpich` with 4 ranks. The deno binary is launched directly (MPICH's
 * Hydra passes its PMI file descriptor, which the npx wrapper does not forward). A test whose
 * launcher is missing skips with a message, and fails under SCIOBENCH_REQUIRE_PEERS=1.
 * @module
 */
import assert from "node:assert/strict";
import { type CliResult, commandMissing, peerTest, PERMISSIONS, tempDir } from "./_helpers.ts";

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
    timeoutS?: number;
  } = {},
): Promise<CliResult> {
  const argv = [Deno.execPath(), "run", "--quiet", ...PERMISSIONS, options.script ?? MAIN, ...args];
  const nodes = options.nodes;
  const out = await new Deno.Command(launcher.program, {
    args: nodes
      ? launcher.mpmd(argv, nodes.map((name) => ({ SCIOBENCH_MPI_NODE_NAME: name })))
      : [...launcher.args(options.ranks ?? 4), ...argv],
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
