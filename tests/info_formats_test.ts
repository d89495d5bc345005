/**
 * `info --format csv` and `--format jsonl`: the chunks as rows, the same chunks `--format json`
 * lists (shape's dimensions joined by x), and in jsonl the file's facts first, among the run's:
 * all that the json document holds but the chunks. A peer library's file goes through the
 * library child the same way.
 */
import assert from "node:assert/strict";
import { parse } from "npm:csv-parse@6.1.0/sync";
import { backendByName } from "../lib/backends/registry.ts";
import { INFO_COLUMN_NAMES } from "../lib/workloads/columns.ts";
import { peerTest, runCli, tempDir } from "./_helpers.ts";

/** A chunk as `info --format json` lists it. */
interface JsonChunk {
  frame: number;
  name: string;
  dtype: string;
  shape: number[];
  offset: number;
  bytes: number;
  crc32: string;
}

/** `info FILE` in `format`, which must succeed with nothing on stderr. */
async function info(format: string, path: string): Promise<string> {
  const r = await runCli(["info", "--format", format, path]);
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.stderr, "", `info --format ${format}: nothing on stderr`);
  return r.stdout;
}

/**
 * Checks that the csv and jsonl listings of `path` hold the chunks of its json listing, in
 * order, and that jsonl's facts are the json document but its chunks; returns the chunk count.
 */
async function assertSameListing(path: string, framing: string): Promise<number> {
  const doc = JSON.parse(await info("json", path)) as Record<string, unknown> & {
    chunks: JsonChunk[];
  };
  const { chunks, ...facts } = doc;
  assert.equal(facts.framing, framing);
  assert.ok(chunks.length > 0, `${path}: chunks listed`);
  const want = chunks.map((c) => ({ ...c, shape: c.shape.join("x") }));

  const [head, ...rest] = (await info("jsonl", path)).trimEnd().split("\n");
  // the last line: the facts known at the end of the run
  const end = JSON.parse(rest.pop()!) as { end: Record<string, unknown> };
  assert.deepEqual(Object.keys(end), ["end"]);
  assert.equal(typeof end.end.duration_s, "number");
  const lines = rest;
  const first = JSON.parse(head!) as {
    meta: { command: string; facts: Record<string, unknown>; options: { framing: string } };
    columns: string[];
  };
  assert.equal(first.meta.command, "info");
  assert.equal(first.meta.options.framing, framing);
  assert.deepEqual(first.columns, INFO_COLUMN_NAMES);
  assert.deepEqual(first.meta.facts, facts, "jsonl's facts: the json document but its chunks");
  assert.deepEqual(lines.map((l) => JSON.parse(l)), want, "jsonl: one object per chunk");

  const [header, ...rows] = parse(await info("csv", path)) as string[][];
  assert.deepEqual(header, INFO_COLUMN_NAMES);
  assert.deepEqual(
    rows,
    want.map((c) => INFO_COLUMN_NAMES.map((n) => String(c[n as keyof typeof c]))),
    "csv: one line per chunk",
  );
  return chunks.length;
}

Deno.test("info --format csv and jsonl list the chunks of --format json, jsonl its facts first", async () => {
  using d = tempDir();
  for (const framing of ["raw", "f77", "ieeeio", "gsd", "netcdf"]) {
    const path = `${d.path}/t.${framing}`;
    const w = await runCli(["write", "--framing", framing, "--n", "8", "--frames", "3", path]);
    assert.equal(w.code, 0, w.stderr);
    assert.ok(await assertSameListing(path, framing) >= 6, framing);
  }
  // the text listing stays info's own: its facts, then the chunks under their header
  const text = await info("table", `${d.path}/t.raw`);
  assert.match(text, /^path: .*t\.raw\nframing: raw\nframes: 3\n/);
  assert.match(
    text,
    /\nframe,name,dtype,shape,offset,bytes,crc32\n0,particles\/position,float32,8x3,16,96,/,
  );
  // --json is --format json: with another --format, one line and exit 2
  for (const format of ["csv", "jsonl"]) {
    const r = await runCli(["info", "--json", "--format", format, `${d.path}/t.raw`]);
    assert.equal(r.code, 2, r.stderr);
    assert.equal(
      r.stderr,
      `sciobench: error: info: --json and --format ${format} disagree; --json is --format json\n`,
    );
  }
});

peerTest(
  "info --format csv and jsonl of an HDF5 file come through the library child",
  () => backendByName("hdf5").unavailable(),
  async () => {
    using d = tempDir();
    const path = `${d.path}/lib.h5`;
    const w = await runCli(["write", "--framing", "hdf5", "--n", "4", "--frames", "3", path]);
    assert.equal(w.code, 0, w.stderr);
    assert.equal(await assertSameListing(path, "hdf5"), 6);
  },
);
