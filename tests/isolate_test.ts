/**
 * Libraries on files sciobench did not write run in a child process with limits: a crash, abort,
 * CPU hang or memory blowup of the library is one line naming the file and the library, exit 2
 * (the child's failures are injected with SCIOBENCH_CHILD_FAULT); EPIPE and a full disk on stdout;
 * control characters in paths stay on one line.
 */
import assert from "node:assert/strict";
import { hdf5 } from "../lib/peers/hdf5/mod.ts";
import { peerTest, PERMISSIONS, runCli, runCliLimited, tempDir } from "./_helpers.ts";

const MAIN = new URL("../main.ts", import.meta.url).pathname;

function oneErrorLine(stderr: string): string {
  const lines = stderr.trimEnd().split("\n");
  assert.equal(lines.length, 1, `expected one line on stderr, got:\n${stderr}`);
  assert.match(lines[0]!, /^sciobench: error: /);
  return lines[0]!;
}

async function hdf5File(dir: string): Promise<string> {
  const path = `${dir}/lib.h5`;
  const w = await runCli(["write", "--framing", "hdf5", "--n", "4", "--frames", "3", path]);
  assert.equal(w.code, 0, w.stderr);
  return path;
}

peerTest(
  "info and read of an HDF5 file go through the library child",
  () => hdf5.unavailable(),
  async () => {
    using d = tempDir();
    const path = await hdf5File(d.path);
    const info = await runCli(["info", path]);
    assert.equal(info.code, 0, info.stderr);
    assert.match(info.stdout, /^frames: 3$/m);
    assert.match(info.stdout, /^2,particles\/orientation,float32,4x4,-1,64,[0-9a-f]{8}$/m);
    const json = await runCli(["info", "--json", path]);
    assert.equal(json.code, 0, json.stderr);
    assert.equal(JSON.parse(json.stdout).chunks.length, 6);
    const read = await runCli(["read", "--verify", path]);
    assert.equal(read.code, 0, read.stderr);
    assert.match(read.stdout, /\nhdf5,.*lib\.h5,3,/);
  },
);

peerTest(
  "a library crash, abort, CPU hang or blowup is one line and exit 2",
  () => hdf5.unavailable(),
  async (t) => {
    using d = tempDir();
    const path = await hdf5File(d.path);
    const cases: [string, Record<string, string>, RegExp][] = [
      [
        "segv",
        {},
        /the HDF5 library crashed \(SIGSEGV\) reading '.*lib\.h5'; the file is probably damaged$/,
      ],
      ["abort", {}, /the HDF5 library crashed \(SIGABRT\) reading '.*lib\.h5'/],
      [
        "spin",
        { SCIOBENCH_LIBRARY_SECONDS: "1" },
        /the HDF5 library used more than 1 s of CPU time without progress reading '.*lib\.h5' and was stopped \(limit SCIOBENCH_LIBRARY_SECONDS; raise it with SCIOBENCH_LIBRARY_SECONDS=SECONDS\)$/,
      ],
      [
        "grow",
        { SCIOBENCH_LIBRARY_MEMORY: "256MiB" },
        /the HDF5 library used \d+ bytes of memory reading '.*lib\.h5' and was stopped \(limit 268435456 bytes plus 268435456 for the runtime; raise it with SCIOBENCH_LIBRARY_MEMORY=SIZE\)$/,
      ],
    ];
    for (const [fault, env, want] of cases) {
      await t.step(fault, async () => {
        for (const command of ["info", "read"]) {
          const r = await runCli([command, path], {
            env: { SCIOBENCH_CHILD_FAULT: fault, ...env },
          });
          assert.equal(r.code, 2, `${command} ${fault}: ${r.stderr}`);
          assert.match(oneErrorLine(r.stderr), want);
        }
      });
    }
  },
);

peerTest(
  "the memory limit is on what the library uses, not on what it reserves",
  () => hdf5.unavailable(),
  async () => {
    using d = tempDir();
    const path = await hdf5File(d.path);
    // 64 GiB of address space reserved and never touched, under a limit of 256 MiB.
    for (const command of ["info", "read"]) {
      const r = await runCli([command, path], {
        env: { SCIOBENCH_CHILD_FAULT: "reserve", SCIOBENCH_LIBRARY_MEMORY: "256MiB" },
      });
      assert.equal(r.code, 0, `${command}: ${r.stderr}`);
      assert.doesNotMatch(r.stderr, /damaged/);
    }
  },
);

Deno.test("info | head -1: a closed pipe on stdout ends quietly", async () => {
  using d = tempDir();
  const path = `${d.path}/many.raw`;
  const w = await runCli(["write", "--framing", "raw", "--n", "2", "--frames", "4000", path]);
  assert.equal(w.code, 0, w.stderr);
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "--quiet", ...PERMISSIONS, MAIN, "info", path],
    stdout: "piped",
    stderr: "piped",
    env: { NO_COLOR: "1" },
  }).spawn();
  const reader = child.stdout.getReader();
  await reader.read(); // the first piece, then the reader goes away as `head -1` does
  await reader.cancel();
  const status = await child.status;
  const stderr = new TextDecoder().decode(
    new Uint8Array(await new Response(child.stderr).arrayBuffer()),
  );
  assert.equal(stderr, "");
  assert.equal(status.code, 0);
});

Deno.test("a full disk on stdout is one line and exit 1", async () => {
  using d = tempDir();
  const path = `${d.path}/few.raw`;
  const w = await runCli(["write", "--framing", "raw", "--n", "2", "--frames", "3", path]);
  assert.equal(w.code, 0, w.stderr);
  for (const args of [["info", path], ["read", path], ["framings"]]) {
    const out = await new Deno.Command("/bin/sh", {
      args: [
        "-c",
        `exec "$@" > /dev/full`,
        "sh",
        Deno.execPath(),
        "run",
        "--quiet",
        ...PERMISSIONS,
        MAIN,
        ...args,
      ],
      stdout: "piped",
      stderr: "piped",
      env: { NO_COLOR: "1" },
    }).output();
    const stderr = new TextDecoder().decode(out.stderr);
    assert.equal(out.code, 1, `${args[0]}: ${stderr}`);
    assert.match(
      oneErrorLine(stderr),
      /cannot write to standard output: no space left on device \(ENOSPC\)/,
    );
  }
});

Deno.test("a path with a newline stays on one line in an error", async () => {
  using d = tempDir();
  const r = await runCli(["info", `${d.path}/two\nlines.raw`]);
  assert.equal(r.code, 1);
  assert.match(oneErrorLine(r.stderr), /two\\nlines\.raw/);
});

const HOSTILE = new URL("./testdata/hdf5/", import.meta.url).pathname;

peerTest(
  "an HDF5 group holding a hard link to itself is listed once",
  () => hdf5.unavailable(),
  async () => {
    const r = await runCli(["info", `${HOSTILE}selflink.h5`]);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /particles\/loop \(a link to a group already listed\)/);
    assert.equal(r.stdout.match(/^0,particles\/position,/gm)?.length, 1);
  },
);

peerTest(
  "a sparse {1e9, ...} HDF5 dataset is refused in one line before it is read",
  () => hdf5.unavailable(),
  async () => {
    const r = await runCli(["info", `${HOSTILE}sparse.h5`]);
    assert.equal(r.code, 2, r.stderr);
    assert.match(oneErrorLine(r.stderr), /reports 1000000000 frames in a file of \d+ bytes/);
  },
);

peerTest(
  "a forged frame size is refused against the memory limit before any allocation",
  () => hdf5.unavailable(),
  async () => {
    using d = tempDir();
    const path = await hdf5File(d.path);
    const r = await runCli(["info", path], { env: { SCIOBENCH_LIBRARY_MEMORY: "1MiB" } });
    assert.equal(r.code, 0, r.stderr); // 64-byte frames fit
    const big = `${d.path}/big.h5`;
    const w = await runCli(["write", "--framing", "hdf5", "--n", "100000", "--frames", "1", big]);
    assert.equal(w.code, 0, w.stderr);
    const refused = await runCli(["info", big], { env: { SCIOBENCH_LIBRARY_MEMORY: "1MiB" } });
    assert.equal(refused.code, 2, refused.stderr);
    assert.match(
      oneErrorLine(refused.stderr),
      /one frame of 'particles\/position' needs 1200000 bytes, more than the memory limit of 1048576 bytes \(raise it with SCIOBENCH_LIBRARY_MEMORY=SIZE/,
    );
  },
);

for (const framing of ["hdf5", "netcdf4"]) {
  peerTest(
    `${framing}: a write that hits a full disk exits with one line, no SIGSEGV at exit`,
    () => hdf5.unavailable(),
    async () => {
      using d = tempDir();
      // RLIMIT_FSIZE at 100 KiB (SIGXFSZ ignored) fails the writes as a full disk does.
      const out = await runCliLimited([
        "write",
        "--framing",
        framing,
        "--n",
        "1024",
        "--frames",
        "20",
        `${d.path}/full.${framing}`,
      ], 100);
      const stderr = out.stderr;
      assert.equal(out.signal, null, stderr);
      assert.equal(out.code, 1, stderr);
      oneErrorLine(stderr);
    },
  );
}
