/**
 * Every file tools/fuzz.ts saved under tests/testdata/fuzz/ (a mutant that once crashed, hung, or
 * gave an internal or multi-line error) read again: native framings in-process, libraries through
 * the library child; each must end in success or a one-line error that is not an internal error.
 * The library files are also read once through the CLI, which must answer in one line.
 */
import assert from "node:assert/strict";
import { readWhole } from "../lib/workloads/child.ts";
import { LibraryChild } from "../lib/workloads/isolate.ts";
import { backendByName } from "../lib/backends/registry.ts";
import { classifyError, classifyOutcome, targetOfFinding } from "../tools/fuzz.ts";
import { REQUIRE_PEERS, runCli } from "./_helpers.ts";

const DIR = new URL("./testdata/fuzz/", import.meta.url).pathname;
const files = [...Deno.readDirSync(DIR)].map((e) => e.name).filter((n) => !n.endsWith(".md"))
  .sort();

Deno.test("fuzz findings: native framings end in success or one line", () => {
  let n = 0;
  for (const name of files) {
    const target = targetOfFinding(name);
    assert.ok(target, `${name}: no fuzz target of that name`);
    if (backendByName(target.framing).kind !== "native") continue;
    n++;
    try {
      readWhole(`${DIR}${name}`, target.framing);
    } catch (e) {
      const { verdict, message } = classifyError(e);
      assert.equal(verdict, "error", `${name}: ${verdict}: ${message}`);
    }
  }
  assert.ok(n >= 0);
});

Deno.test("fuzz findings: libraries end in success, one line, or a contained crash", async () => {
  const library = files.filter((name) => {
    const b = backendByName(targetOfFinding(name)!.framing);
    if (b.unavailable() !== null) {
      if (REQUIRE_PEERS) throw new Error(`${name}: ${b.unavailable()}`);
      return false;
    }
    return b.kind === "peer";
  });
  let child: LibraryChild | undefined;
  try {
    for (const name of library) {
      if (!child || child.dead) {
        child = LibraryChild.start({ memoryBytes: 2 ** 30, cpuSeconds: 5, wallSeconds: 15 }, false);
      }
      const outcome = await child.request({
        op: "check",
        path: `${DIR}${name}`,
        framing: targetOfFinding(name)!.framing,
      });
      const { verdict, message } = classifyOutcome(outcome);
      assert.ok(!["internal", "multiline"].includes(verdict), `${name}: ${verdict}: ${message}`);
    }
  } finally {
    await child?.close();
  }
  // One of each library through the CLI: one line on stderr, exit 0 or 2.
  const seen = new Set<string>();
  for (const name of library) {
    const label = targetOfFinding(name)!.label;
    if (seen.has(label)) continue;
    seen.add(label);
    const r = await runCli(["info", `${DIR}${name}`]);
    assert.ok(r.code === 0 || r.code === 2, `${name}: exit ${r.code}: ${r.stderr}`);
    if (r.code === 2) assert.match(r.stderr, /^sciobench: error: [^\n]*\n$/);
  }
});
