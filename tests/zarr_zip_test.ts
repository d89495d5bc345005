/**
 * Zarr zip stores (zarr-python's ZipStore: a store's members as the entries of one zip file):
 * python3-zarr 2.13 writes them, stored and deflated, from its own arrays and from a store
 * sciobench wrote, and sciobench detects and reads them (values checked); a damaged archive is
 * one line and exit 2.
 * @module
 */
import assert from "node:assert/strict";
import { backendByName } from "../lib/backends/registry.ts";
import { peerTest, PYTHON, pythonZarrMissing, runCli, tempDir } from "./_helpers.ts";

async function python(script: string, args: string[]): Promise<void> {
  const out = await new Deno.Command(PYTHON, { args: ["-c", script, ...args], stderr: "piped" })
    .output();
  assert.ok(out.success, `python3 failed: ${new TextDecoder().decode(out.stderr)}`);
}

/**
 * Python: a ZipStore at argv[1] (argv[2]: "stored" or "deflated") holding arrays `a` (3, 5, 2)
 * <f4 and `b` (3, 4) >i8, one frame per chunk, of values 0, 1, 2 ... (`a`'s chunks zlib).
 */
const PY_ZIP = `
import sys, zipfile, numpy as np, zarr
mode = zipfile.ZIP_DEFLATED if sys.argv[2] == "deflated" else zipfile.ZIP_STORED
store = zarr.ZipStore(sys.argv[1], mode="w", compression=mode)
g = zarr.group(store=store)
g.create_dataset("a", shape=(3, 5, 2), chunks=(1, 5, 2), dtype="<f4",
                 compressor=zarr.Zlib(1))[...] = np.arange(30).reshape(3, 5, 2)
g.create_dataset("b", shape=(3, 4), chunks=(1, 4), dtype=">i8",
                 compressor=None)[...] = np.arange(12).reshape(3, 4)
store.close()
`;

/** Python: the directory store argv[1] copied into a ZipStore at argv[2] (argv[3]: compression). */
const PY_COPY = `
import sys, zipfile, zarr
mode = zipfile.ZIP_DEFLATED if sys.argv[3] == "deflated" else zipfile.ZIP_STORED
store = zarr.ZipStore(sys.argv[2], mode="w", compression=mode)
zarr.copy_store(zarr.DirectoryStore(sys.argv[1]), store)
store.close()
`;

peerTest("zarr zip: sciobench reads ZipStores python3-zarr writes", pythonZarrMissing, async () => {
  using tmp = tempDir();
  const zarr = backendByName("zarr");
  for (const compression of ["stored", "deflated"]) {
    const path = `${tmp.path}/py-${compression}.zip`;
    await python(PY_ZIP, [path, compression]);
    const source = zarr.openReader(path, {});
    try {
      assert.equal(source.frameCount, 3);
      for (let i = 0; i < 3; i++) {
        const [a, b] = source.readFrame(i);
        assert.equal(a!.name, "a");
        const av = new Float32Array(a!.data.buffer, a!.data.byteOffset, 10);
        assert.deepEqual([...av], Array.from({ length: 10 }, (_, k) => 10 * i + k));
        assert.equal(b!.name, "b");
        const bv = new BigInt64Array(b!.data.buffer, b!.data.byteOffset, 4);
        assert.deepEqual([...bv], Array.from({ length: 4 }, (_, k) => BigInt(4 * i + k)));
      }
    } finally {
      source.close();
    }
    // detected by its first bytes, listed by info
    const info = await runCli(["info", "--format", "json", path]);
    assert.equal(info.code, 0, info.stderr);
    const doc = JSON.parse(info.stdout);
    assert.equal(doc.framing, "zarr");
    assert.equal(doc.frames, 3);
  }
  // the same archive with a ZIP64 end of central directory (as zipfile writes past 65,535 entries)
  const zip64 = `${tmp.path}/py-zip64.zip`;
  Deno.writeFileSync(zip64, withZip64(Deno.readFileSync(`${tmp.path}/py-stored.zip`)));
  const r64 = await runCli(["info", "--format", "json", zip64]);
  assert.equal(r64.code, 0, r64.stderr);
  assert.equal(JSON.parse(r64.stdout).frames, 3);
  // a store sciobench wrote, zipped by zarr-python: the seed's frames verified
  const dir = `${tmp.path}/sb.zarr`;
  const w = await runCli([
    ...["write", "--framing", "zarr", "--n", "16", "--frames", "4", "--seed", "7"],
    ...["--option", "compressor=gzip", dir],
  ]);
  assert.equal(w.code, 0, w.stderr);
  for (const compression of ["stored", "deflated"]) {
    const path = `${tmp.path}/sb-${compression}.zip`;
    await python(PY_COPY, [dir, path, compression]);
    const r = await runCli(["read", "--verify", "--seed", "7", "--format", "csv", path]);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /\nzarr,[^\n]*,4,/);
  }
});

peerTest("zarr zip: a damaged archive is one line and exit 2", pythonZarrMissing, async () => {
  using tmp = tempDir();
  const path = `${tmp.path}/d.zip`;
  await python(PY_ZIP, [path, "stored"]);
  const good = Deno.readFileSync(path);
  const eocd = good.length - 22;
  assert.equal(new DataView(good.buffer).getUint32(eocd, true), 0x06054b50);
  const cases: [string, (b: Uint8Array) => Uint8Array][] = [
    ["cut short", (b) => b.slice(0, b.length - 30)],
    ["directory offset past the file", (b) => set32(b, eocd + 16, 0x7fffffff)],
    ["directory size past the file", (b) => set32(b, eocd + 12, 0xfffffff0)],
    ["entry count too large", (b) => set16(b, eocd + 10, 0xfffe)],
    ["first entry's local offset huge", (b) => {
      const dir = new DataView(b.buffer).getUint32(eocd + 16, true);
      return set32(b, dir + 42, 0xfffffff0);
    }],
  ];
  // deflated: an entry whose bytes differ from its CRC-32 (the CRC of every entry changed)
  const deflated = `${tmp.path}/z.zip`;
  await python(PY_ZIP, [deflated, "deflated"]);
  const zgood = Deno.readFileSync(deflated);
  const zview = new DataView(zgood.buffer);
  const zend = zgood.length - 22;
  cases.push(["deflated entries' CRC-32 wrong", () => {
    const b = zgood.slice();
    const v = new DataView(b.buffer);
    for (let p = zview.getUint32(zend + 16, true); p < zend;) {
      v.setUint32(p + 16, v.getUint32(p + 16, true) ^ 1, true);
      p += 46 + v.getUint16(p + 28, true) + v.getUint16(p + 30, true) + v.getUint16(p + 32, true);
    }
    return b;
  }]);
  for (const [what, damage] of cases) {
    Deno.writeFileSync(path, damage(good.slice()));
    for (const command of ["info", "read"]) {
      const r = await runCli([command, "--framing", "zarr", path]);
      assert.equal(r.code, 2, `${what}: ${command}: ${r.stderr}`);
      assert.match(r.stderr, /^sciobench: error: (zip|zarr): [^\n]*\n$/, `${what}: ${command}`);
    }
  }
});

function set32(b: Uint8Array, at: number, v: number): Uint8Array {
  new DataView(b.buffer).setUint32(at, v, true);
  return b;
}

function set16(b: Uint8Array, at: number, v: number): Uint8Array {
  new DataView(b.buffer).setUint16(at, v, true);
  return b;
}

/**
 * The zip archive `zip` (no comment) with a ZIP64 end of central directory record and locator
 * before its end record, whose count, size and offset fields then say "see ZIP64".
 */
function withZip64(zip: Uint8Array): Uint8Array {
  const eocd = zip.length - 22;
  const old = new DataView(zip.buffer, eocd, 22);
  assert.equal(old.getUint32(0, true), 0x06054b50);
  const count = old.getUint16(10, true);
  const out = new Uint8Array(eocd + 56 + 20 + 22);
  out.set(zip.subarray(0, eocd));
  const v = new DataView(out.buffer);
  v.setUint32(eocd, 0x06064b50, true);
  v.setBigUint64(eocd + 4, 44n, true);
  v.setUint16(eocd + 12, 45, true);
  v.setUint16(eocd + 14, 45, true);
  v.setBigUint64(eocd + 24, BigInt(count), true);
  v.setBigUint64(eocd + 32, BigInt(count), true);
  v.setBigUint64(eocd + 40, BigInt(old.getUint32(12, true)), true);
  v.setBigUint64(eocd + 48, BigInt(old.getUint32(16, true)), true);
  const loc = eocd + 56;
  v.setUint32(loc, 0x07064b50, true);
  v.setBigUint64(loc + 8, BigInt(eocd), true);
  v.setUint32(loc + 16, 1, true);
  const end = loc + 20;
  v.setUint32(end, 0x06054b50, true);
  v.setUint16(end + 8, 0xffff, true);
  v.setUint16(end + 10, 0xffff, true);
  v.setUint32(end + 12, 0xffffffff, true);
  v.setUint32(end + 16, 0xffffffff, true);
  return out;
}
