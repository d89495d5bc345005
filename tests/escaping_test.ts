/**
 * Bytes from a file reach the terminal escaped: warnings, info lines, tables and CSV all go
 * through escapeControls (lib/core/errors.ts); CSV fields are quoted, JSON keeps the names exact.
 */
import assert from "node:assert/strict";
import { escapeControls } from "../lib/core/errors.ts";
import { csvField } from "../lib/report/output.ts";
import { humanValue } from "../lib/report/human.ts";
import { runCli, tempDir } from "./_helpers.ts";

/** A variable name that would print a fake error line and colour the terminal. */
const HOSTILE = "v\n\x1b[31msciobench: error: fake,\x9b2J\x1b[0m";

/** A CDF-1 file: dimension x (1), an int variable `name` whose stored vsize (99) is wrong. */
function hostileNetcdf(name: string): Uint8Array {
  const out: number[] = [];
  const u32 = (n: number) => out.push(n >>> 24, (n >>> 16) & 255, (n >>> 8) & 255, n & 255);
  const str = (s: string) => {
    const b = new TextEncoder().encode(s);
    u32(b.length);
    out.push(...b);
    while (out.length % 4) out.push(0);
  };
  out.push(0x43, 0x44, 0x46, 1);
  u32(0); // numrecs
  u32(0x0a), u32(1), str("x"), u32(1); // dimensions
  u32(0), u32(0); // no global attributes
  u32(0x0b), u32(1), str(name), u32(1), u32(0), u32(0), u32(0); // one variable on x
  u32(4), u32(99); // NC_INT, a wrong vsize: the reader warns, naming the variable
  u32(out.length + 4); // begin: right after the header
  u32(42);
  return Uint8Array.from(out);
}

function assertNoRawControls(text: string, what: string): void {
  // deno-lint-ignore no-control-regex
  assert.doesNotMatch(text, /[\x00-\x09\x0b-\x1f\x7f-\x9f]/, `${what}: ${JSON.stringify(text)}`);
  assert.doesNotMatch(text, /^sciobench: error: fake/m, what);
}

Deno.test("escaping: a variable name from a file reaches warnings, info, tables and CSV escaped", async () => {
  using dir = tempDir();
  const file = `${dir.path}/h\x1b[2J.nc`;
  Deno.writeFileSync(file, hostileNetcdf(HOSTILE));
  const info = await runCli(["info", file]);
  assert.equal(info.code, 0, info.stderr);
  assertNoRawControls(info.stderr, "info stderr");
  assertNoRawControls(info.stdout, "info stdout");
  assert.match(info.stderr, /variable 'v\\n\\x1b\[31msciobench: error: fake,\\x9b2J\\x1b\[0m'/);
  // the name holds a comma: one quoted CSV field, so the columns stay where they are
  assert.match(info.stdout, /^0,"v\\n\\x1b\[31msciobench: error: fake,\\x9b2J\\x1b\[0m",int32,/m);
  for (const format of ["csv", "table"]) {
    const read = await runCli(["read", "--format", format, file]);
    assert.equal(read.code, 0, read.stderr);
    assertNoRawControls(read.stdout, `read --format ${format} stdout`);
    assertNoRawControls(read.stderr, `read --format ${format} stderr`);
    assert.match(read.stdout, /h\\x1b\[2J\.nc/);
  }
  // JSON keeps the exact name (JSON.stringify escapes the controls)
  const json = await runCli(["info", "--format", "json", file]);
  assert.equal(json.code, 0, json.stderr);
  assertNoRawControls(json.stdout, "info --format json");
  const doc = JSON.parse(json.stdout) as { chunks: { name: string }[] };
  assert.equal(doc.chunks[0]!.name, HOSTILE);
});

Deno.test("escaping: one function for CSV fields and table cells", () => {
  assert.equal(escapeControls("a\x1bb\x9bc\nd"), "a\\x1bb\\x9bc\\nd");
  assert.equal(csvField("plain"), "plain");
  assert.equal(csvField('a,"b"'), '"a,""b"""');
  assert.equal(csvField("x\ny"), "x\\ny");
  assert.equal(humanValue("text", "p\x1b[2J"), "p\\x1b[2J");
});
