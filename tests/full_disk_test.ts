/**
 * A library that fails on a full disk is one line that says the disk is full, whatever status
 * the library reports (netCDF: `Permission denied (status 13)`; HDF5: a long error stack).
 */
import assert from "node:assert/strict";
import { IoError } from "../lib/core/errors.ts";
import { backendByName } from "../lib/backends/registry.ts";
import { libraryFailure } from "../lib/peers/common.ts";
import { peerUsable, runCli, tempDir } from "./_helpers.ts";

/** The HDF5 error stack's summary on ENOSPC, as H5FD_sec2_write words it. */
const HDF5_ENOSPC = "H5Dwrite: can't write data (H5FD_sec2_write: file write failed: time = " +
  "Wed Dec  2 00:40:01 2026, filename = '/data/t.h5', file descriptor = 5, errno = 28, error " +
  "message = 'No space left on device', buf = 0x7f3a1c000b70, total write size = 1048576, bytes " +
  "this sub-write = 1048576, bytes actually written = 18446744073709551615, offset = 4096)";

Deno.test("libraryFailure: a full disk in the library's text is one short line; other texts lose their addresses", () => {
  using dir = tempDir();
  const full = libraryFailure("hdf5", `${dir.path}/t.h5`, "H5Dwrite", HDF5_ENOSPC);
  assert.ok(full instanceof IoError);
  assert.equal(full.exitCode, 1);
  assert.match(full.message, /^hdf5: .*t\.h5: H5Dwrite failed: no space left on the device/);
  assert.doesNotMatch(full.message, /0x7f|buf =/);
  const other = libraryFailure(
    "hdf5",
    `${dir.path}/t.h5`,
    "H5Dwrite",
    HDF5_ENOSPC.replace("errno = 28", "errno = 5").replace("No space left on device", "I/O error"),
  );
  assert.match(other.message, /errno = 5, error message = 'I\/O error'/);
  assert.doesNotMatch(other.message, /0x7f3a|buf =|time =|file descriptor/);
  assert.ok(other.message.length < 300, other.message);
});

/** Mounts a tmpfs of `kib` KiB at a new directory; null (with why) where mount is not allowed. */
function smallDisk(
  kib: number,
  files?: number,
): { path: string; why: null } | { path: string; why: string } {
  const dir = Deno.makeTempDirSync({ prefix: "sciobench-full-" });
  const inodes = files === undefined ? "" : `,nr_inodes=${files}`;
  const out = new Deno.Command("mount", {
    args: ["-t", "tmpfs", "-o", `size=${kib}k${inodes}`, "tmpfs", dir],
    stderr: "piped",
  }).outputSync();
  const why = out.code === 0 ? null : new TextDecoder().decode(out.stderr).trim() || "mount failed";
  return { path: dir, why };
}

// netcdf-lib is not written here: its abort after a failed nc_put_vara on a full disk ends the
// process with SIGSEGV (a separate bug of the peer's abort path). Each write runs in a process of
// its own (tests/_full_disk_driver.ts): a failed library keeps its handles open until exit.
Deno.test("full disk: netcdf4 and hdf5 writes say the disk is full in one line", () => {
  const driver = new URL("./_full_disk_driver.ts", import.meta.url).pathname;
  for (const name of ["netcdf4", "hdf5"]) {
    if (!peerUsable(name, backendByName(name).unavailable())) continue;
    // a disk of its own per library
    const disk = smallDisk(192);
    try {
      if (disk.why !== null) {
        console.error(`skip: full disk: cannot mount a small tmpfs here: ${disk.why}`);
        return;
      }
      const out = new Deno.Command(Deno.execPath(), {
        args: ["run", "--lock=deno.lock", "--allow-all", driver, `${disk.path}/t.${name}`, name],
        stdout: "piped",
        stderr: "piped",
      }).outputSync();
      const text = new TextDecoder().decode(out.stdout);
      assert.equal(out.code, 0, `${name}: ${text}${new TextDecoder().decode(out.stderr)}`);
      const error = JSON.parse(text) as { kind: string; message: string };
      assert.equal(error.kind, "IoError", `${name}: ${error.message}`);
      assert.match(error.message, /failed: no space left on the device \(\d+ KiB free on /, name);
      assert.doesNotMatch(error.message, /\n|0x[0-9a-f]{6}|Permission denied/, name);
    } finally {
      new Deno.Command("umount", { args: ["-l", disk.path] }).outputSync();
      Deno.removeSync(disk.path, { recursive: true });
    }
  }
});

/** Every file of the store `dir` (relative path, bytes), in path order. */
function storeFiles(dir: string, prefix = ""): [string, Uint8Array][] {
  const out: [string, Uint8Array][] = [];
  const names = [...Deno.readDirSync(`${dir}/${prefix}`)].map((e) => e.name).sort();
  for (const name of names) {
    const rel = prefix === "" ? name : `${prefix}/${name}`;
    if (Deno.statSync(`${dir}/${rel}`).isDirectory) out.push(...storeFiles(dir, rel));
    else out.push([rel, Deno.readFileSync(`${dir}/${rel}`)]);
  }
  return out;
}

Deno.test("full disk: a Zarr store's append that runs out of space leaves the store as it was", async () => {
  // room for the bytes (the free-space preflight's payload plus 64 MiB), not for the files: a
  // store of 3 frames takes 17 inodes, each frame appended 2 more
  const disk = smallDisk(80 << 10, 200);
  try {
    if (disk.why !== null) {
      console.error(`skip: full disk: cannot mount a small tmpfs here: ${disk.why}`);
      return;
    }
    const store = `${disk.path}/s.zarr`;
    const made = await runCli(["write", "--framing", "zarr", "--n", "16", "--frames", "3", store]);
    assert.equal(made.code, 0, made.stderr);
    const before = storeFiles(store);
    // the disk is full (ENOSPC) at the 90th frame or so
    const append = await runCli(["write", "--append", "--n", "16", "--frames", "300", store]);
    assert.equal(append.code, 1, append.stderr);
    assert.equal(append.stderr.trim().split("\n").length, 1, append.stderr);
    assert.match(append.stderr, /no space left/i);
    assert.deepEqual(storeFiles(store), before, "the store as it was, file for file");
    assert.deepEqual(
      [...Deno.readDirSync(disk.path)].map((e) => e.name),
      ["s.zarr"],
      "no journal or temporary file left beside it",
    );
    const read = await runCli(["read", "--verify", store]);
    assert.equal(read.code, 0, read.stderr);
  } finally {
    new Deno.Command("umount", { args: ["-l", disk.path] }).outputSync();
    Deno.removeSync(disk.path, { recursive: true });
  }
});
