/**
 * Shared test helpers: running the CLI as a user would, temporary directories, and tests that
 * need a real peer (python3-gsd, gfortran, ncdump, HDF5 ...), which skip with a message where
 * the peer is missing and fail instead when SCIOBENCH_REQUIRE_PEERS=1 (as CI sets it).
 * @module
 */

import { backendByName } from "../lib/backends/registry.ts";
import type { Row } from "../lib/report/row.ts";
import { Progress } from "../lib/report/progress.ts";
import { type IoObserver, observeIo } from "../lib/sys/libc.ts";
import { runTableCell } from "../lib/workloads/table/mod.ts";

/** The permission flags of the `sciobench` task; tests run the CLI with exactly these. */
export const PERMISSIONS = ["--allow-all"];

/** True when CI asks that every peer be present. */
export const REQUIRE_PEERS = Deno.env.get("SCIOBENCH_REQUIRE_PEERS") === "1";

/** Path of main.ts, the CLI entry. */
export const MAIN = new URL("../main.ts", import.meta.url).pathname;

/** Output of one CLI run. */
export interface CliResult {
  /** Exit code. */
  code: number;
  /** Standard output, decoded. */
  stdout: string;
  /** Standard error, decoded. */
  stderr: string;
}

/** How many tries a check of the machine's timing gets before it fails ({@link onAnyOfTries}). */
export const TIMING_TRIES = 3;

/**
 * Runs `attempt`, a check of how V8 or the kernel scheduled a run (a collection, a
 * deoptimization, page faults, a CPU-time ratio), up to `tries` times, and passes at the first try
 * that passes. On a busy machine one run's schedule can fall outside what the code decides (V8's
 * concurrent marker starved of a core); a code path that breaks the property fails every try.
 * Each failed try's first line goes to stderr; the last try's error is what fails.
 */
export async function onAnyOfTries(
  attempt: () => Promise<void>,
  tries = TIMING_TRIES,
): Promise<void> {
  for (let i = 1;; i++) {
    try {
      return await attempt();
    } catch (e) {
      if (i >= tries || !(e instanceof Error) || e.name !== "AssertionError") throw e;
      console.error(`timing check, try ${i} of ${tries}: ${e.message.split("\n")[0]}`);
    }
  }
}

/** Runs `sciobench ARGS` (deno run main.ts with the task's permissions) and collects its output. */
export function runCli(
  args: string[],
  options: { cwd?: string; env?: Record<string, string> } = {},
): Promise<CliResult> {
  return runScript(MAIN, args, options);
}

/** Starts `sciobench ARGS` with piped output, without waiting for it; the caller reads and waits. */
export function spawnCli(args: string[], env: Record<string, string> = {}): Deno.ChildProcess {
  return new Deno.Command(Deno.execPath(), {
    args: ["run", "--quiet", ...PERMISSIONS, MAIN, ...args],
    stdout: "piped",
    stderr: "piped",
    env: { NO_COLOR: "1", ...env },
  }).spawn();
}

/**
 * Runs `sciobench ARGS` under a file-size limit of `kib` KiB (RLIMIT_FSIZE via `ulimit -f`, with
 * SIGXFSZ ignored): writes past it fail with EFBIG, as on a full disk.
 */
export async function runCliLimited(
  args: string[],
  kib: number,
): Promise<CliResult & { signal: Deno.Signal | null }> {
  const out = await new Deno.Command("/bin/sh", {
    args: [
      "-c",
      `trap '' XFSZ; ulimit -f ${kib * 2}; exec "$@"`,
      "sh",
      ...[Deno.execPath(), "run", "--quiet", ...PERMISSIONS, MAIN, ...args],
    ],
    stdout: "piped",
    stderr: "piped",
    env: { NO_COLOR: "1" },
  }).output();
  const dec = new TextDecoder();
  return {
    code: out.code,
    signal: out.signal,
    stdout: dec.decode(out.stdout),
    stderr: dec.decode(out.stderr),
  };
}

/**
 * Runs the Deno program `script` with ARGS and the task's permissions (type-checked with
 * `check`), in `cwd`, and collects its output.
 */
export async function runScript(
  script: string,
  args: string[],
  options: { cwd?: string; env?: Record<string, string>; check?: boolean } = {},
): Promise<CliResult> {
  const out = await new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "--quiet",
      ...(options.check ? ["--check"] : []),
      ...PERMISSIONS,
      script,
      ...args,
    ],
    cwd: options.cwd,
    stdout: "piped",
    stderr: "piped",
    env: { NO_COLOR: "1", ...options.env },
  }).output();
  const dec = new TextDecoder();
  return { code: out.code, stdout: dec.decode(out.stdout), stderr: dec.decode(out.stderr) };
}

/** A new temporary directory, removed by the returned disposer (use with `using`). */
export function tempDir(prefix = "sciobench-test-"): { path: string } & Disposable {
  const path = Deno.makeTempDirSync({ prefix });
  return {
    path,
    [Symbol.dispose]() {
      Deno.removeSync(path, { recursive: true });
    },
  };
}

/** null when `cmd` is on PATH (or an absolute path that exists), else the reason it is missing. */
export function commandMissing(cmd: string): string | null {
  if (cmd.startsWith("/")) {
    try {
      Deno.statSync(cmd);
      return null;
    } catch {
      return `${cmd} is not installed`;
    }
  }
  for (const dir of (Deno.env.get("PATH") ?? "").split(":")) {
    try {
      if (Deno.statSync(`${dir}/${cmd}`).isFile) return null;
    } catch {
      // not in this directory
    }
  }
  return `${cmd} is not on PATH`;
}

/** The Python the interop tests run (Debian's, with its python3-* packages). */
export const PYTHON = "/usr/bin/python3";

/**
 * Why python3-zarr 2 cannot run (with `modules` importable, `zarr` by default), or null: the
 * skip reason of the zarr interop tests.
 */
export function pythonZarrMissing(modules = "zarr"): string | null {
  if (commandMissing(PYTHON) !== null) return `${PYTHON} is not installed`;
  const r = new Deno.Command(PYTHON, {
    args: ["-c", `import ${modules}; assert zarr.__version__.startswith('2.')`],
    stderr: "null",
    stdout: "null",
  }).outputSync();
  return r.success
    ? null
    : "python3-zarr 2 is not installed for /usr/bin/python3 (apt-get install python3-zarr)";
}

/**
 * Registers a test that needs a peer. `missing()` returns null when the peer is usable, else why
 * not. Without the peer the test is ignored with a message on stderr, unless SCIOBENCH_REQUIRE_PEERS=1,
 * when it fails with that message.
 */
export function peerTest(
  name: string,
  missing: () => string | null,
  fn: (t: Deno.TestContext) => void | Promise<void>,
): void {
  const why = missing();
  if (why !== null && !REQUIRE_PEERS) {
    console.error(`skip: ${name}: ${why} (set SCIOBENCH_REQUIRE_PEERS=1 to fail instead)`);
    Deno.test({ name: `${name} (skipped: ${why})`, ignore: true, fn });
    return;
  }
  Deno.test(name, async (t) => {
    if (why !== null) {
      throw new Error(`peer required by SCIOBENCH_REQUIRE_PEERS=1 is missing: ${why}`);
    }
    await fn(t);
  });
}

/**
 * For a loop over peers inside one test: true when the peer is usable (`why` is null); false, to
 * skip it with a message, when it is missing; throws when SCIOBENCH_REQUIRE_PEERS=1.
 */
export function peerUsable(name: string, why: string | null): boolean {
  if (why === null) return true;
  if (REQUIRE_PEERS) {
    throw new Error(`peer required by SCIOBENCH_REQUIRE_PEERS=1 is missing: ${name}: ${why}`);
  }
  console.error(`skip: ${name}: ${why} (set SCIOBENCH_REQUIRE_PEERS=1 to fail instead)`);
  return false;
}

/** Flips every bit of the byte at `offset` (bytes from the start) of the file at `path`. */
export function flipByte(path: string, offset: number): void {
  const f = Deno.openSync(path, { read: true, write: true });
  try {
    const b = new Uint8Array(1);
    f.seekSync(offset, Deno.SeekMode.Start);
    f.readSync(b);
    b[0]! ^= 0xff;
    f.seekSync(offset, Deno.SeekMode.Start);
    f.writeSync(b);
  } finally {
    f.close();
  }
}

/**
 * Runs one quiet table cell of `backend` (64 KiB of N = 64 frames, seed 1, no warm-up) in `dir`;
 * `afterWrite` sees the written file before it is read back.
 */
export function runSmallCell(
  backend: string,
  dir: string,
  afterWrite: (path: string) => void,
): Promise<Row> {
  return runTableCell(backendByName(backend), 64 * 1024, 64, 0, {
    backends: [],
    sizes: [],
    ns: [],
    dir,
    repeat: 1,
    seed: 1,
    warmup: false,
    progress: new Progress({ quiet: true }),
    afterWrite,
  });
}

/**
 * Runs `run` with `observer` (the calls it leaves out do nothing) seeing every I/O call made
 * through lib/sys/libc.ts, and removes it afterwards.
 */
export async function observeDuring(
  observer: Partial<IoObserver>,
  run: () => Promise<void> | void,
): Promise<void> {
  const none = () => {};
  observeIo({
    open: none,
    close: none,
    read: none,
    write: none,
    sync: none,
    resident: none,
    librarySync: none,
    ...observer,
  });
  try {
    await run();
  } finally {
    observeIo(undefined);
  }
}
