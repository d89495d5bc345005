/**
 * A library that fails on a full disk is one line that says the disk is full, whatever status
 * the library reports (netCDF: `Permission denied (status 13)`; HDF5: a long error stack).
 */
import assert from "node:assert/strict";
import { IoError } from "../lib/core/errors.ts";
import { backendByName } from "../lib/backends/registry.ts";
import { libraryFailure } from "../lib/peers/common.ts";
import { peerUsable, tempDir } from "./_helpers.ts";

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
function smallDisk(kib: number): { path: string; why: null } | { path: string; why: string } {
  const dir = Deno.makeTempDirSync({ prefix: "sciobench-full-" });
  const out = new Deno.Command("mount", {
    args: ["-t", "tmpfs", "-o", `size=${kib}k`, "tmpfs", dir],
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
