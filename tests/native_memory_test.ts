/**
 * The native readers' memory: data past the end of a netCDF file costs no memory, and
 * `info` and `read` of files of many objects (netCDF variables, Fortran records) stay within a
 * bounded size per object. Each case runs the CLI as a child process under /usr/bin/time and
 * asserts its peak resident set.
 * @module
 */
import assert from "node:assert/strict";
import { MAX_INDEXED_OBJECTS } from "../lib/framings/kit.ts";
import { commandMissing, MAIN, peerTest, PERMISSIONS, runCli, tempDir } from "./_helpers.ts";

const TIME = "/usr/bin/time";

/** A run of `sciobench ARGS` with its peak resident set (KiB) and wall time (s). */
interface MeasuredRun {
  code: number;
  stdout: string;
  stderr: string;
  peakKiB: number;
  seconds: number;
}

/** Runs `sciobench ARGS` under /usr/bin/time and returns its output and peak RSS. */
async function measured(args: string[]): Promise<MeasuredRun> {
  const started = performance.now();
  const out = await new Deno.Command(TIME, {
    args: ["-f", "peak_kib=%M", Deno.execPath(), "run", "--quiet", ...PERMISSIONS, MAIN, ...args],
    stdout: "piped",
    stderr: "piped",
    env: { NO_COLOR: "1" },
  }).output();
  const seconds = (performance.now() - started) / 1000;
  const dec = new TextDecoder();
  const stderr = dec.decode(out.stderr);
  const m = /peak_kib=(\d+)\s*$/.exec(stderr);
  assert.ok(m, `no peak RSS in: ${stderr}`);
  return {
    code: out.code,
    stdout: dec.decode(out.stdout),
    stderr: stderr.slice(0, m.index),
    peakKiB: Number(m[1]),
    seconds,
  };
}

/** A netCDF name field: length and bytes padded to 4. */
function ncName(s: string): number[] {
  const b = [...new TextEncoder().encode(s)];
  return [...u32(b.length), ...b, ...new Array((4 - (b.length % 4)) % 4).fill(0)];
}

function u32(n: number): number[] {
  return [(n >>> 24) & 255, (n >>> 16) & 255, (n >>> 8) & 255, n & 255];
}

/**
 * A CDF-1 header alone (92 bytes): numrecs 178,956,970 with no record variable, and one fixed
 * float variable `x` of 268,435,455 elements (1 GiB less 4 bytes; 12 N bytes, as the table's
 * positions) that starts at the end of the file: all of its data lies past the end.
 */
function pastEndFile(): Uint8Array {
  const head = [
    0x43,
    0x44,
    0x46,
    1,
    ...u32(178_956_970),
    ...u32(0x0a),
    ...u32(2),
    ...ncName("r"),
    ...u32(0),
    ...ncName("n"),
    ...u32(268_435_455),
    ...u32(0),
    ...u32(0),
  ];
  const variable = (begin: number) => [
    ...u32(0x0b),
    ...u32(1),
    ...ncName("x"),
    ...u32(1),
    ...u32(1),
    ...u32(0),
    ...u32(0),
    ...u32(5),
    ...u32(268_435_455 * 4),
    ...u32(begin),
  ];
  const size = head.length + variable(0).length;
  return new Uint8Array([...head, ...variable(size)]);
}

/** Peak RSS allowed for a small run, KiB: the Deno runtime's own (about 90 MiB) and some slack. */
const SMALL_RUN_KIB = 250 * 1024;

peerTest(
  "netcdf: data past the end costs no memory in read and read --verify, and is named",
  () => commandMissing(TIME),
  async () => {
    using tmp = tempDir();
    const path = `${tmp.path}/past.nc`;
    Deno.writeFileSync(path, pastEndFile());
    const read = await measured(["read", "--format", "json", path]);
    assert.equal(read.code, 0, read.stderr);
    assert.match(
      read.stderr,
      /data of variable 'x' \[92, 1073741912\) lies past the end of the file \(92 bytes\): never written, read as zeros/,
    );
    const row = JSON.parse(read.stdout).rows[0];
    assert.equal(row.read_bytes, 1073741820);
    assert.ok(read.peakKiB < SMALL_RUN_KIB, `read peaked at ${read.peakKiB} KiB`);
    const verify = await measured(["read", "--verify", path]);
    assert.equal(verify.code, 2, verify.stderr);
    assert.match(
      verify.stderr,
      /--verify: .*past\.nc does not hold table frames: chunk 'x' of frame 0 \(\[92, 1073741912\)\) lies past the end of the file \(92 bytes\), never written/,
    );
    assert.ok(verify.peakKiB < SMALL_RUN_KIB, `read --verify peaked at ${verify.peakKiB} KiB`);
  },
);

/**
 * A CDF-1 file of `count` scalar int variables `v0`, `v1` ... (no dimensions, no attributes),
 * variable i holding i: about 40 bytes of header and 4 of data a variable.
 */
function manyVariablesFile(count: number): Uint8Array {
  const enc = new TextEncoder();
  const names = Array.from({ length: count }, (_, i) => enc.encode(`v${i}`));
  let header = 4 + 4 + 8 + 8 + 8;
  for (const n of names) header += 4 + Math.ceil(n.length / 4) * 4 + 4 + 8 + 12;
  const out = new Uint8Array(header + 4 * count);
  const view = new DataView(out.buffer);
  out.set([0x43, 0x44, 0x46, 1]);
  // numrecs 0, no dimensions, no global attributes (ABSENT = 0, 0), then the variable list
  let at = 24;
  view.setUint32(at, 0x0b);
  view.setUint32(at + 4, count);
  at += 8;
  names.forEach((n, i) => {
    view.setUint32(at, n.length);
    out.set(n, at + 4);
    at += 4 + Math.ceil(n.length / 4) * 4;
    at += 4 + 8; // no dimensions; ABSENT attribute list
    view.setUint32(at, 4); // NC_INT
    view.setUint32(at + 4, 4); // vsize
    view.setUint32(at + 8, header + 4 * i); // begin
    at += 12;
    view.setInt32(header + 4 * i, i);
  });
  return out;
}

/**
 * How the peak RSS of `sciobench ARGS FILE` grows with the objects of FILE: the peak on `big`
 * (`objects` objects) less the peak on `half` (half as many), per object added, bytes (the
 * runtime's own memory and the heap's fixed growth cancel out); and the big run's wall time.
 */
async function perObject(
  args: string[],
  big: string,
  half: string,
  objects: number,
): Promise<{ bytesPerObject: number; seconds: number; run: MeasuredRun }> {
  const base = await measured([...args, half]);
  assert.equal(base.code, 0, base.stderr);
  const run = await measured([...args, big]);
  assert.equal(run.code, 0, run.stderr);
  return {
    bytesPerObject: ((run.peakKiB - base.peakKiB) * 1024) / (objects / 2),
    seconds: run.seconds,
    run,
  };
}

peerTest(
  "netcdf: info and read of 200,000 variables take a bounded memory a variable",
  () => commandMissing(TIME),
  async () => {
    using tmp = tempDir();
    const big = `${tmp.path}/many.nc`;
    const small = `${tmp.path}/half.nc`;
    Deno.writeFileSync(big, manyVariablesFile(200_000));
    Deno.writeFileSync(small, manyVariablesFile(100_000));
    const info = await perObject(["info"], big, small, 200_000);
    assert.match(info.run.stdout, /\nv199999,int32,4,[0-9a-f]{8}\n/);
    assert.ok(info.bytesPerObject < 1200, `info: ${info.bytesPerObject.toFixed(0)} B a variable`);
    assert.ok(info.seconds < 60, `info took ${info.seconds} s`);
    const read = await perObject(["read", "--format", "csv"], big, small, 200_000);
    assert.ok(read.bytesPerObject < 1600, `read: ${read.bytesPerObject.toFixed(0)} B a variable`);
    assert.ok(read.seconds < 60, `read took ${read.seconds} s`);
  },
);

/** An f77 file of `count` records of one little-endian int32 each (12 bytes a record). */
function manyRecordsFile(count: number): Uint8Array {
  const words = new Int32Array(3 * count);
  for (let r = 0; r < count; r++) words.set([4, r, 4], 3 * r);
  return new Uint8Array(words.buffer);
}

peerTest(
  "f77: info (text and csv) and read of 1,000,000 records take a bounded memory a record",
  () => commandMissing(TIME),
  async () => {
    using tmp = tempDir();
    const big = `${tmp.path}/many.f77`;
    const small = `${tmp.path}/half.f77`;
    Deno.writeFileSync(big, manyRecordsFile(1_000_000));
    Deno.writeFileSync(small, manyRecordsFile(500_000));
    const args = ["--option", "dtype=int32"];
    const info = await perObject(["info", ...args], big, small, 1_000_000);
    assert.match(info.run.stdout, /\n999999,record\/1000000,int32,1,11999992,4,[0-9a-f]{8}\n/);
    assert.ok(info.bytesPerObject < 100, `info: ${info.bytesPerObject.toFixed(0)} B a record`);
    assert.ok(info.seconds < 90, `info took ${info.seconds} s`);
    // its rows (one per record) stream through the same output as every command's rows
    const csv = await perObject(["info", "--format", "csv", ...args], big, small, 1_000_000);
    assert.match(csv.run.stdout, /\n999999,record\/1000000,int32,1,11999992,4,[0-9a-f]{8}\n/);
    assert.ok(csv.bytesPerObject < 100, `info csv: ${csv.bytesPerObject.toFixed(0)} B a record`);
    assert.ok(csv.seconds < 90, `info --format csv took ${csv.seconds} s`);
    const read = await perObject(["read", "--format", "csv", ...args], big, small, 1_000_000);
    assert.ok(read.bytesPerObject < 100, `read: ${read.bytesPerObject.toFixed(0)} B a record`);
    assert.ok(read.seconds < 120, `read took ${read.seconds} s`);
  },
);

Deno.test("netcdf: a header declaring more variables than the stated limit is refused in one line", async () => {
  using tmp = tempDir();
  const path = `${tmp.path}/forged.nc`;
  const count = MAX_INDEXED_OBJECTS + 1;
  const head = new Uint8Array(32);
  const view = new DataView(head.buffer);
  head.set([0x43, 0x44, 0x46, 1]);
  view.setUint32(24, 0x0b);
  view.setUint32(28, count);
  Deno.writeFileSync(path, head);
  // room for that many 24-byte variables, as a sparse file (no disk used)
  Deno.truncateSync(path, 32 + 24 * count);
  const r = await runCli(["info", path]);
  assert.equal(r.code, 2, r.stderr);
  assert.equal(r.stderr.trimEnd().split("\n").length, 1, r.stderr);
  assert.match(
    r.stderr,
    /at byte 28: 16777217 variables: more than 16777216 \(the most sciobench indexes in one file\)/,
  );
});
