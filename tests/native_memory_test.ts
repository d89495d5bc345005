/**
 * The native readers' memory (issue 29): data past the end of a netCDF file costs no memory, and
 * `info` and `read` of files of many objects (netCDF variables, Fortran records) stay within a
 * bounded size per object. Each case runs the CLI as a child process under /usr/bin/time and
 * asserts its peak resident set.
 * @module
 */
import assert from "node:assert/strict";
import { commandMissing, MAIN, peerTest, PERMISSIONS, tempDir } from "./_helpers.ts";

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
