/**
 * Capabilities: every registered backend declares what it can do (dtypes, byte orders, fsync
 * policies, transfer, shared layout, limits, the library it loads), the checks read those
 * declarations and never a backend's name, and the one guard refuses a toy backend with a
 * capability off in one line naming the backend and the capability.
 */
import assert from "node:assert/strict";
import { FSYNC_POLICIES } from "../lib/backends/backend.ts";
import type { Backend } from "../lib/backends/backend.ts";
import {
  checkMpiIoLayout,
  checkSharedLayout,
  exceededDatasetLimit,
  libraryName,
  recordFileBytes,
  refuseUnstorable,
  unstorableReason,
  writesSharedFile,
} from "../lib/backends/capabilities.ts";
import { mpiIoProblem, NO_MPI_LAUNCHER } from "../lib/backends/mpi_io.ts";
import { checkTransfer, engineBackend } from "../lib/backends/guard.ts";
import { backendByName, BACKENDS } from "../lib/backends/registry.ts";
import { UsageError } from "../lib/core/errors.ts";
import { checkOptions, withWriteDefaults } from "../lib/framings/options.ts";
import { DTYPES } from "../lib/framings/types.ts";
import type { Transfer } from "../lib/io/transfer.ts";
import "./_toy_backends.ts";
import { toyPeer } from "./_toy_backends.ts";
import { PERMISSIONS, tempDir } from "./_helpers.ts";

const BS: Transfer = { bs: 65536, direct: false, readAhead: true };
const DIRECT: Transfer = { bs: 1 << 20, direct: true };

/** Asserts `run` throws a one-line UsageError (exit 2) whose message matches `pattern`. */
function refused(run: () => unknown, pattern: RegExp): void {
  assert.throws(run, (e: unknown) => {
    assert.ok(e instanceof UsageError, String(e));
    assert.equal(e.exitCode, 2);
    assert.ok(!e.message.includes("\n"), e.message);
    assert.match(e.message, pattern);
    return true;
  });
}

/** True when `run` throws a UsageError; false when it returns. */
function throwsUsage(run: () => unknown): boolean {
  try {
    run();
    return false;
  } catch (e) {
    assert.ok(e instanceof UsageError, String(e));
    return true;
  }
}

Deno.test("capabilities: every registered backend declares them, and the checks read them", () => {
  for (const b of BACKENDS) {
    assert.ok(b.orders.length > 0, b.name);
    assert.ok(b.orders.every((o) => o === "little" || o === "big"), b.name);
    assert.ok(b.fsyncPolicies.length > 0, b.name);
    assert.ok(b.fsyncPolicies.every((p) => FSYNC_POLICIES.includes(p)), b.name);
    assert.equal(typeof b.transfer, "boolean", b.name);
    assert.equal(typeof b.sharedLayout, "boolean", b.name);
    assert.equal(checkTransfer(b, undefined), undefined);
    // --bs alone is also the MPI-IO call size of a backend that declares mpiIo.bs (mpiio)
    const callSize = b.transfer || (b.mpiIo?.bs ?? false);
    assert.equal(throwsUsage(() => checkTransfer(b, BS)), !callSize, b.name);
    assert.equal(throwsUsage(() => checkTransfer(b, DIRECT)), !b.transfer, b.name);
    const shares = b.sharedLayout || (b.mpiIo?.layouts.includes("shared") ?? false);
    assert.equal(writesSharedFile(b), shares, b.name);
    assert.equal(throwsUsage(() => checkSharedLayout(b)), !shares, b.name);
    for (const layout of ["shared", "per-rank"] as const) {
      const writes = b.mpiIo === undefined || b.mpiIo.layouts.includes(layout);
      assert.equal(throwsUsage(() => checkMpiIoLayout(b, layout)), !writes, `${b.name} ${layout}`);
    }
    // outside MPI (these tests), a backend that goes through MPI-IO is unavailable, saying why
    assert.equal(mpiIoProblem(b), b.mpiIo === undefined ? null : NO_MPI_LAUNCHER, b.name);
    if (b.mpiIo !== undefined) assert.equal(b.unavailable(), NO_MPI_LAUNCHER, b.name);
    for (const t of DTYPES) {
      const stores = b.dtypes === undefined || b.dtypes.only.includes(t);
      assert.equal(unstorableReason(b, t) === null, stores, `${b.name} ${t}`);
      assert.equal(throwsUsage(() => refuseUnstorable(b, t)), !stores, `${b.name} ${t}`);
      if (!stores) assert.match(unstorableReason(b, t)!, new RegExp(`^${b.name}\\b`));
    }
    assert.equal(libraryName(b), b.library?.displayName ?? b.name);
    const max = b.limits?.datasets?.max;
    assert.equal(exceededDatasetLimit(b, 1), undefined, b.name);
    if (max !== undefined) assert.equal(exceededDatasetLimit(b, max + 1)?.max, max, b.name);
    assert.ok(recordFileBytes(b, 800, {}) >= 800, b.name);
  }
});

Deno.test("capabilities: the built-in backends declare what the name-based checks decided", () => {
  const names = (ok: (b: Backend) => boolean) => BACKENDS.filter(ok).map((b) => b.name).sort();
  const builtIn = (b: Backend) => !b.name.startsWith("toy");
  assert.deepEqual(names((b) => builtIn(b) && b.sharedLayout), ["f77", "gsd", "netcdf", "raw"]);
  assert.deepEqual(names((b) => builtIn(b) && b.mpiIo !== undefined), [
    "hdf5-mpio",
    "mpiio",
    "netcdf4-par",
    "pnetcdf",
  ]);
  assert.deepEqual(backendByName("mpiio").mpiIo, {
    layouts: ["shared", "per-rank"],
    collective: true,
    segments: true,
    bs: true,
  });
  const h5 = backendByName("hdf5-mpio").mpiIo!;
  assert.deepEqual([h5.layouts, h5.collective], [["shared", "per-rank"], true]);
  // it names its own library in rows and says why it cannot run on an MPI without its build
  assert.equal(typeof h5.problem, "function");
  assert.equal(typeof h5.library, "function");
  refused(
    () =>
      checkMpiIoLayout(
        { name: "x", mpiIo: { layouts: ["shared"], collective: true, segments: false, bs: false } },
        "per-rank",
      ),
    /^--layout per-rank: x writes shared files only$/,
  );
  assert.deepEqual(
    names((b) => builtIn(b) && b.transfer),
    ["f77", "gsd", "ieeeio", "netcdf", "raw"],
  );
  const storable = (name: string) =>
    DTYPES.filter((t) => unstorableReason(backendByName(name), t) === null);
  assert.deepEqual(storable("netcdf-lib"), ["int8", "int16", "int32", "float32", "float64"]);
  assert.deepEqual(storable("f77-gfortran"), ["float64"]);
  assert.deepEqual(storable("hdf4").filter((t) => t.endsWith("64")), ["float64"]);
  assert.deepEqual(storable("netcdf"), [...DTYPES]);
  refused(
    () => refuseUnstorable(backendByName("netcdf-lib"), "uint16"),
    /^--type uint16: netcdf-lib \(netCDF classic through libnetcdf\) cannot store uint16: it holds int8, int16, int32, float32, float64; the native netcdf framing writes CDF-5 for it$/,
  );
  refused(
    () => refuseUnstorable(backendByName("f77-gfortran"), "float32"),
    /^--type float32: f77-gfortran writes float64 only \(IOspeed's REAL\*8 array\)$/,
  );
  refused(
    () => refuseUnstorable(backendByName("hdf4"), "int64"),
    /^--type int64: hdf4 \(SD interface\) cannot store int64: it has no 64-bit integers$/,
  );
  refused(
    () => checkSharedLayout(backendByName("ieeeio")),
    /^--layout shared works for gsd, raw, netcdf, f77(, [a-z0-9-]+)* only; 'ieeeio' cannot place frames at offsets known in advance \(use --layout per-rank\)$/,
  );
  assert.equal(libraryName(backendByName("hdf5")), "HDF5");
  assert.equal(libraryName(backendByName("hdf4")), "HDF4");
  assert.equal(libraryName(backendByName("netcdf4")), "netCDF");
  assert.equal(libraryName(backendByName("netcdf-lib")), "netCDF");
  assert.equal(libraryName(backendByName("f77")), "f77");
  const hdf4 = backendByName("hdf4");
  assert.equal(exceededDatasetLimit(hdf4, 9361), undefined);
  assert.deepEqual(exceededDatasetLimit(hdf4, 9362), { max: 9361, failure: "error 62" });
  // f77: the payload and two markers (4 bytes by default, as declared), per subrecord
  const f77 = backendByName("f77");
  assert.equal(recordFileBytes(f77, 800, {}), 808);
  assert.equal(recordFileBytes(f77, 800, { marker: 8 }), 816);
  assert.equal(recordFileBytes(f77, 800, { subrecordLimit: 400 }), 816);
  assert.equal(recordFileBytes(backendByName("raw"), 800, {}), 800);
});

Deno.test("guard: a toy backend with a capability off is refused in one line naming both", () => {
  using tmp = tempDir();
  const peer = backendByName("toy-peer");
  const path = `${tmp.path}/refused.toy-peer`;
  refused(
    () => peer.openWriter(path, { create: "new", transfer: BS }),
    /^--bs: toy-peer is a library peer that makes its own system calls and cannot do transfers of a chosen size; /,
  );
  refused(
    () => peer.openReader(path, { transfer: DIRECT }),
    /^--direct: toy-peer is a library peer that makes its own system calls and cannot do direct I\/O; /,
  );
  assert.throws(() => Deno.statSync(path), Deno.errors.NotFound, "nothing written");
  refused(
    () => peer.openWriter(path, { create: "new", backendOptions: { indnt: 2 } }),
    /^unknown option 'indnt' for toy-peer; did you mean 'indent'\?/,
  );
  refused(() => refuseUnstorable(peer, "uint64"), /^--type uint64: toy-peer cannot store uint64: /);
  refused(
    () => checkSharedLayout(peer),
    /^--layout shared works for .* only; 'toy-peer' cannot place frames/,
  );
  assert.equal(libraryName(peer), "TOY");
  assert.equal(exceededDatasetLimit(peer, 1001)?.failure, "toy error");
  // the same toy with transfer on passes the guard
  const native = backendByName("toy");
  const sink = native.openWriter(`${tmp.path}/ok.toy`, { create: "new", transfer: BS });
  sink.close();
});

Deno.test("guard: writers of new files get the declared defaults, appends and readers do not", () => {
  const seen: (Readonly<Record<string, unknown>> | undefined)[] = [];
  const spy = engineBackend({
    ...toyPeer,
    name: "spy",
    openWriter(_path, options) {
      seen.push(options.backendOptions);
      throw new UsageError("spy");
    },
    openReader(_path, options) {
      seen.push(options?.backendOptions);
      throw new UsageError("spy");
    },
  });
  assert.throws(() => spy.openWriter("x", { create: "new" }), /spy/);
  assert.throws(
    () => spy.openWriter("x", { create: "truncate", backendOptions: { indent: 2 } }),
    /spy/,
  );
  assert.throws(() => spy.openWriter("x", { create: "append" }), /spy/);
  assert.throws(() => spy.openReader("x", {}), /spy/);
  assert.deepEqual(seen, [{ indent: 0 }, { indent: 2 }, {}, undefined]);
  // the validator: values checked and handed back; the defaults only of what writers honour
  const f77 = backendByName("f77");
  assert.deepEqual(checkOptions(f77, { marker: 8, names: undefined }), { marker: 8 });
  assert.deepEqual(withWriteDefaults(f77, {}), { marker: 4 });
  assert.deepEqual(withWriteDefaults(backendByName("gsd"), { hoomd: false }).hoomd, false);
});

Deno.test("capabilities: the table's plan warns of a toy's dataset limit, as it does of HDF4's", async () => {
  const out = await new Deno.Command(Deno.execPath(), {
    args: [
      ...[
        "run",
        "--quiet",
        ...PERMISSIONS,
        new URL("./_toy_backends.ts", import.meta.url).pathname,
      ],
      ...["table", "--framing", "toy-peer,toy", "--size", "64KiB", "--n", "1", "--dry-run"],
    ],
    stdout: "piped",
    stderr: "piped",
    env: { NO_COLOR: "1" },
  }).output();
  const text = new TextDecoder().decode(out.stdout) + new TextDecoder().decode(out.stderr);
  assert.equal(out.code, 0, text);
  const warnings = text.split("\n").filter((l) => l.startsWith("warning: "));
  assert.deepEqual(warnings, [
    "warning: toy-peer at size 64 KiB, N 1: 4682 datasets (2 per frame) exceed TOY's limit of " +
    "1000 per file; that cell will fail (toy error) and the sweep goes on",
  ]);
});
