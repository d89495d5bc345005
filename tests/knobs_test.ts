/**
 * Issue 14's rule for the knobs: every option is honoured or refused with one line. For every
 * command that measures or writes (table, scaling, readers, records, write, read), every backend
 * (native framings, library peers, program peers) and each of `--direct`, `--bs 64k` and
 * `--fsync each`, the command either works (exit 0) or exits 2 with exactly one line on stderr,
 * no stack trace, and nothing left behind (no temporary, probe or scratch files). The commands
 * that take none of them (info, framings, plot, version) refuse each in one line.
 * @module
 */
import assert from "node:assert/strict";
import { BACKENDS, FRAMINGS } from "../lib/backends/registry.ts";
import { REQUIRE_PEERS, runCli, runScript, tempDir } from "./_helpers.ts";

const DRIVER = new URL("./_knobs_driver.ts", import.meta.url).pathname;

const KNOBS: readonly (readonly string[])[] = [["--direct"], ["--bs", "64k"], ["--fsync", "each"]];

/** One result of tests/_knobs_driver.ts. */
interface Outcome {
  readonly args: string[];
  readonly code: number;
  readonly stderr: string;
  readonly added: string[];
  readonly crash: string;
}

/** A small run of `command` with `backend`, everything under `dir`. */
function commandLine(command: string, backend: string, dir: string): string[] {
  const out = ["--dir", dir, "--format", "csv"];
  switch (command) {
    case "table":
      return [
        ...["table", "--framing", backend, "--size", "256KiB", "--n", "1000"],
        ...["--no-warmup", "--sample", "128KiB", ...out],
      ];
    case "scaling":
      return ["scaling", "--framing", backend, "--datasets", "1,2", "--shape", "8x16x16", ...out];
    case "readers":
      return [
        ...["readers", "--framing", backend, "--procs", "1", "--records", "2"],
        ...["--length", "4096", "--mode", "shared", ...out],
      ];
    case "records":
      return ["records", "--framing", backend, "--shape", "4x16x16", ...out];
    case "write":
      return [
        "write",
        "--framing",
        backend,
        "--n",
        "100",
        "--frames",
        "3",
        `${dir}/out.${backend}`,
      ];
    default:
      return ["read", "--framing", backend, `${dir}/in.${backend}`];
  }
}

Deno.test("every command and backend honours --direct, --bs 64k and --fsync each or refuses in one line", async () => {
  // backends whose library or program is missing here are left out, saying so (CI has them all)
  const usable = BACKENDS.filter((b) => {
    // backends that go through MPI-IO run under a launcher only (tests/mpi_mpiio_test.ts)
    if (b.mpiIo !== undefined) return false;
    const why = b.unavailable();
    if (why === null) return true;
    if (REQUIRE_PEERS) throw new Error(`${b.name} is unavailable: ${why}`);
    console.log(`left out ${b.name}: ${why}`);
    return false;
  });
  using d = tempDir("sciobench-knobs-");
  using io = tempDir("sciobench-knobs-io-");
  // a file of each backend for read (a program peer's: python-gsd's gsd, f77-gfortran's f77)
  const inputs = `${d.path}/in`;
  Deno.mkdirSync(inputs);
  for (const b of usable) {
    const framing = b.kind === "program" ? b.fileFraming ?? "gsd" : b.name;
    const path = `${inputs}/in.${b.name}`;
    const w = await runCli(["write", "--framing", framing, "--n", "100", "--frames", "3", path]);
    assert.equal(w.code, 0, `write ${framing}: ${w.stderr}`);
  }
  const work = `${d.path}/work`;
  Deno.mkdirSync(work);
  const cases: { args: string[]; dir: string }[] = [];
  for (const command of ["table", "scaling", "readers", "records", "write", "read"]) {
    for (const b of usable) {
      for (const knob of KNOBS) {
        const base = commandLine(command, b.name, command === "read" ? inputs : work);
        // read writes nothing: its directory is the inputs', which must stay as it is
        cases.push({ args: [...base, ...knob], dir: command === "read" ? inputs : work });
      }
    }
  }
  for (const command of ["info", "framings", "plot", "version"]) {
    for (const knob of KNOBS) {
      const file = command === "info" || command === "plot" ? [`${inputs}/in.raw`] : [];
      cases.push({ args: [command, ...knob, ...file], dir: work });
    }
  }
  Deno.writeTextFileSync(`${io.path}/cases.json`, JSON.stringify(cases));
  const run = await runScript(DRIVER, [`${io.path}/cases.json`, `${io.path}/results.json`]);
  assert.equal(run.code, 0, run.stderr);
  // everything sciobench writes to stderr was captured per case: libraries wrote nothing
  assert.equal(run.stderr, "", "the libraries' own output on stderr");
  const outcomes = JSON.parse(Deno.readTextFileSync(`${io.path}/results.json`)) as Outcome[];
  assert.equal(outcomes.length, cases.length);
  const problems: string[] = [];
  const counts = { works: 0, refused: 0 };
  for (const o of outcomes) {
    const what = `sciobench ${o.args.join(" ")}`;
    const lines = o.stderr.split("\n").filter((l) => l.trim() !== "");
    if (o.crash !== "") problems.push(`${what}: threw ${o.crash}`);
    if (/^\s+at /m.test(o.stderr)) problems.push(`${what}: a stack trace: ${o.stderr}`);
    const target = o.args.find((a) => a.includes("/out."));
    const written = o.args[0] === "write" && o.code === 0 ? [target!.split("/").at(-1)] : [];
    // (the files of a store written are inside it)
    const added = o.added.filter((p) => !written.some((w) => p.startsWith(`${w}/`)));
    if (added.join() !== written.join()) {
      problems.push(`${what}: left ${added.join(", ")} behind`);
    }
    if (o.code === 0) counts.works++;
    else if (o.code === 2 && lines.length === 1 && lines[0]!.startsWith("sciobench: error: ")) {
      counts.refused++;
    } else problems.push(`${what}: exit ${o.code} with ${lines.length} lines: ${o.stderr}`);
  }
  assert.deepEqual(problems, []);
  // which worked: the native framings, with every knob where the command writes, with --direct
  // and --bs where it only reads (readers and read take no --fsync; netcdf classic cannot write
  // the readers' native-endian files); a peer never, for a peer cannot honour them
  // stores (zarr) write and read each member whole: --fsync each only, in the writing commands
  const native = FRAMINGS.filter((f) => f.store === undefined).map((f) => f.name);
  const stores = FRAMINGS.filter((f) => f.store !== undefined).map((f) => f.name);
  const expected = (args: readonly string[]): boolean => {
    const [command, , backend] = args;
    const fsync = args.includes("--fsync");
    if (stores.includes(backend!)) {
      return fsync && ["table", "scaling", "records", "write"].includes(command!);
    }
    if (!native.includes(backend!)) return false;
    if (command === "readers") return !fsync && backend !== "netcdf";
    if (command === "read") return !fsync;
    return ["table", "scaling", "records", "write"].includes(command!);
  };
  const wrong = outcomes.filter((o) => (o.code === 0) !== expected(o.args))
    .map((o) => `sciobench ${o.args.join(" ")}: exit ${o.code} ${o.stderr}`);
  assert.deepEqual(wrong, []);
  assert.equal(
    counts.works,
    4 * 3 * native.length + 2 * (native.length - 1) + 2 * native.length + 4 * stores.length,
  );
});
