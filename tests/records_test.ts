import assert from "node:assert/strict";
import { backendByName } from "../lib/backends/registry.ts";
import type { Backend } from "../lib/backends/backend.ts";
import {
  RecordFrames,
  RECORDS_COLUMNS,
  recordsTargets,
  runRecords,
} from "../lib/workloads/records/mod.ts";
import { runCli, tempDir } from "./_helpers.ts";

function assertOneLineError(stderr: string, pattern: RegExp): void {
  const lines = stderr.trim().split("\n");
  assert.equal(lines.length, 1, `one line on stderr, got:\n${stderr}`);
  assert.match(lines[0]!, /^sciobench: error: /);
  assert.match(lines[0]!, pattern);
  assert.doesNotMatch(stderr, /\bat .*\.ts:\d+/, "no stack trace");
}

function csvRows(stdout: string): Record<string, string>[] {
  const [head, ...lines] = stdout.trim().split("\n");
  const keys = head!.split(",");
  return lines.map((l) => Object.fromEntries(l.split(",").map((v, i) => [keys[i]!, v])));
}

function leftovers(dir: string): string[] {
  return [...Deno.readDirSync(dir)].map((e) => e.name);
}

Deno.test("records: CSV rows per framing, endian, phase and repeat, plus summary rows (--trials is --repeat)", async () => {
  using d = tempDir();
  const r = await runCli([
    "records",
    "--shape",
    "6x30x50",
    "--framing",
    "netcdf,raw",
    "--endian",
    "big,native",
    "--trials",
    "2",
    "--dir",
    d.path,
  ]);
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.stdout.split("\n")[0], RECORDS_COLUMNS.join(","));
  assert.ok(
    r.stdout.startsWith("framing,endian,phase,shape,bytes,wall_s,cpu_s,user_s,sys_s,MiBps"),
  );
  const rows = csvRows(r.stdout);
  const key = (x: Record<string, string>) =>
    `${x.framing}/${x.endian}/${x.phase}/${x.stat === "run" ? x.repeat : x.stat}`;
  const cells = [
    "netcdf/big/write",
    "netcdf/big/read",
    "raw/big/write",
    "raw/big/read",
    "raw/native/write",
    "raw/native/read",
  ];
  // netcdf is big-endian only: 6 cells x 2 repeats, the targets' order alternating between
  // repeats (a target's write and read stay together), then 5 summary rows per cell.
  const reversed = [4, 5, 2, 3, 0, 1].map((i) => cells[i]!);
  assert.deepEqual(rows.map(key), [
    ...cells.map((c) => `${c}/1`),
    ...reversed.map((c) => `${c}/2`),
    ...cells.flatMap((c) => ["mean", "median", "stddev", "min", "max"].map((s) => `${c}/${s}`)),
  ]);
  for (const row of rows.filter((x) => x.stat === "run")) {
    assert.equal(row.shape, "6x30x50");
    assert.equal(row.bytes, String(6 * 30 * 50 * 4));
    assert.ok(Number(row.wall_s) > 0 && Number(row.MiBps) > 0, key(row));
    assert.ok(
      Math.abs(Number(row.cpu_s) - Number(row.user_s) - Number(row.sys_s)) < 1e-5,
      key(row),
    );
  }
  assert.match(r.stderr, /netcdf writes big-endian data only; skipping --endian native/);
  assert.deepEqual(leftovers(d.path), [], "scratch files removed");
});

Deno.test("records: --format seed prints the seed's average lines; float64", async () => {
  using d = tempDir();
  const r = await runCli([
    "records",
    "--shape",
    "3x4x5",
    "--type",
    "float64",
    "--framing",
    "netcdf",
    "--format",
    "seed",
    "--dir",
    d.path,
  ]);
  assert.equal(r.code, 0, r.stderr);
  assert.match(
    r.stdout,
    /^About to write netcdf file \(big-endian\), record by record: x 3 y 4 z 5\.\.\.\navg CPU time = +\d+\.\d\d secs\.\navg User Time = \d+\.\d\d secs\.\n\nAbout to read netcdf file \(big-endian\)\.\.\.\navg CPU time = +\d+\.\d\d secs\.\n/,
  );
});

Deno.test("records: bad options are one-line usage errors (exit 2)", async () => {
  for (
    const [args, pattern] of [
      [["--shape", "100"], /records x record shape/],
      [["--type", "char"], /bad --type 'char'/],
      [["--endian", "middle"], /bad --endian 'middle'/],
      [["--framing", "nope"], /unknown backend 'nope'/],
    ] as const
  ) {
    const r = await runCli(["records", ...args]);
    assert.equal(r.code, 2, `${args.join(" ")}: ${r.stderr}`);
    assertOneLineError(r.stderr, pattern);
  }
});

Deno.test("records: malformed netCDF files via the CLI exit 2 with one line naming the offset", async () => {
  using d = tempDir();
  const demo = Deno.readFileSync(new URL("./testdata/netcdf/demo1.nc", import.meta.url));
  const cases: [string, Uint8Array, RegExp][] = [
    [
      "magic.nc",
      (() => {
        const b = demo.slice();
        b[3] = 9;
        return b;
      })(),
      /netcdf: .*magic\.nc at byte 3: unknown version byte 9/,
    ],
    [
      "tag.nc",
      (() => {
        const b = demo.slice();
        b[11] = 0x0b;
        return b;
      })(),
      /netcdf: .*tag\.nc at byte 8: bad tag 0x0000000b/,
    ],
    [
      "begin.nc",
      (() => {
        const b = demo.slice();
        new DataView(b.buffer).setUint32(0x70, 9999);
        return b;
      })(),
      /netcdf: .*begin\.nc at byte 240: record data at byte 240 overlaps fixed variable 'xc'/,
    ],
  ];
  for (const [name, bytes, pattern] of cases) {
    const path = `${d.path}/${name}`;
    Deno.writeFileSync(path, bytes);
    for (const cmd of ["info", "read"]) {
      const r = await runCli([cmd, path]);
      assert.equal(r.code, 2, `${cmd} ${name}: ${r.stderr}`);
      assertOneLineError(r.stderr, pattern);
    }
  }
});

Deno.test("records: recordsTargets pairs backends with the byte orders they can write", () => {
  const netcdf = backendByName("netcdf");
  const raw = backendByName("raw");
  const notes: string[] = [];
  const t = recordsTargets([netcdf, raw], ["big", "native"], (s) => notes.push(s));
  assert.deepEqual(t.map((x) => `${x.backend.name}/${x.endian}`), [
    "netcdf/big",
    "raw/big",
    "raw/native",
  ]);
  assert.equal(notes.length, 1);
  // Only native asked: netcdf is still measured, in its own order, with a note.
  const n2: string[] = [];
  const t2 = recordsTargets([netcdf], ["native"], (s) => n2.push(s));
  assert.deepEqual(t2.map((x) => `${x.backend.name}/${x.endian}`), ["netcdf/big"]);
  assert.match(n2[0]!, /measuring --endian big instead of native/);
  // native and little are the same order here: measured once.
  assert.deepEqual(recordsTargets([raw], ["native", "little"]).map((x) => x.endian), ["native"]);
});

Deno.test("records: RecordFrames stamps element 0 with the record number", () => {
  const f = new RecordFrames([4, 2, 3], "float64", 1);
  assert.equal(f.records, 4);
  assert.deepEqual(f.recordShape, [2, 3]);
  assert.equal(f.recordBytes, 48);
  const c = f.frame(3).chunks[0]!;
  assert.equal(c.data[0], 3);
  assert.deepEqual(f.layout, [{ name: "data", dtype: "float64", shape: [2, 3] }]);
});

Deno.test("records: a backend that reads back wrong data fails verification", async () => {
  using d = tempDir();
  const raw = backendByName("raw");
  // Wrap raw so the reader flips one byte of record 2.
  const broken: Backend = {
    ...raw,
    openReader(path, options) {
      const s = raw.openReader(path, options);
      return {
        ...s,
        path: s.path,
        framing: s.framing,
        frameCount: s.frameCount,
        warnings: s.warnings,
        readFrame(frame: number) {
          const got = s.readFrame(frame);
          if (frame === 2) got[0]!.data[5]! ^= 1;
          return got;
        },
        close: () => s.close(),
      };
    },
  };
  // The failed phase's run carries the verification error (the sweep goes on past it).
  const runs = await runRecords({
    targets: [{ backend: broken, endian: "native" }],
    shape: [4, 3, 5],
    dtype: "float32",
    repeat: 1,
    seed: 1,
    dir: d.path,
  });
  assert.deepEqual(runs.map((r) => [r.phase, r.error === undefined]), [
    ["write", true],
    ["read", false],
  ]);
  assert.match(runs[1]!.error!, /frame 2: chunk 'data' differs .* at byte 5/);
  assert.deepEqual(leftovers(d.path), []);
});

Deno.test("records --framing: the backends named are measured in one byte order; the bare command keeps the seed's", async () => {
  const orders = async (...args: string[]) => {
    const r = await runCli(["records", "--quick", "--dry-run", "--format", "json", ...args]);
    assert.equal(r.code, 0, r.stderr);
    const plan = JSON.parse(r.stdout) as { backends: { name: string; endian: string }[] };
    return Object.fromEntries(plan.backends.map((b) => [b.name, b.endian]));
  };
  assert.deepEqual(await orders("--framing", "hdf5,netcdf4"), {
    hdf5: "native",
    netcdf4: "native",
  });
  assert.deepEqual(await orders("--framing", "hdf5,netcdf-lib"), {
    hdf5: "big",
    "netcdf-lib": "big",
  });
  assert.deepEqual(await orders("--framing", "hdf5,netcdf4", "--endian", "big"), {
    hdf5: "big",
    netcdf4: "big",
  });
  const bare = await orders();
  assert.equal(bare.hdf5, "big");
  assert.equal(bare.netcdf4, "native");
});
